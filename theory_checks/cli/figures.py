"""``calcheck figures``: regenerate paper figures, judge their findings, compare with the record.

Optional packages a figure needs (``REQUIRES`` in its module) are checked before any work.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from calcheck.simulations.files import json_text, writable_folder

from .arguments import add_jobs_argument, add_out_argument, add_seed_argument

__all__ = ["add_figures_arguments", "cmd_figures"]


def _at_least_one(text):
    v = int(text)
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return v


def add_figures_arguments(s: argparse.ArgumentParser) -> None:
    """The arguments of ``calcheck figures``."""
    s.add_argument("ids", nargs="*", help="figure ids or prefixes, e.g. gr21 (default: all)")
    s.add_argument("--list", action="store_true", help="print figure -> module -> caption")
    add_out_argument(s, default="calcheck-results/figures")
    s.add_argument("--reps", type=_at_least_one, default=100, help="repetitions (paper: 100)")
    add_seed_argument(s, default=2021, help="root seed of the figures' draws")
    add_jobs_argument(
        s,
        "worker processes that first fit the figures' models in parallel (gr22's "
        "twelve networks; default: every CPU this process may use); the figures are the "
        "same for any --jobs",
    )
    s.add_argument(
        "--record-findings",
        action="store_true",
        help="record the findings' statuses as the expected ones (developers)",
    )
    s.add_argument(
        "--data",
        metavar="ROOT",
        help="data folder holding credit.csv, cifar_logits/ and cifar10_vgg16_probs/ "
        "(default: $CALCHECK_DATA, else ../shared/data)",
    )


def cmd_figures(args) -> int:
    """Regenerate the selected figures, their findings and the HTML page."""
    from calcheck.figures.registry import get_figure, select_figures

    from ..report.output_folder import render_folder_report

    if args.list:
        return _list_figures()
    ids = select_figures(args.ids)
    _check_requirements({i: get_figure(i) for i in ids})
    if args.data is not None and not Path(args.data).is_dir():
        raise ValueError(
            f"--data must be the data folder (holding credit.csv, cifar_logits/, ...), "
            f"got {args.data!r}"
        )
    out = writable_folder(args.out, "--out")
    entries = _regenerate(args, ids, out)
    results = out.parent / "results.json"
    page = render_folder_report(
        out.parent,
        page=out.parent / "report.html" if results.is_file() else out / "index.html",
        figures_index=out / "index.json",
    )
    _print_findings(entries)
    print(f"figures in {out}; report: {page}")
    return _compare_with_record(entries, record=args.record_findings)


def _list_figures() -> int:
    """``--list``: each figure, its module and its caption (and those not available)."""
    from calcheck.figures.registry import figure_modules, get_figure, unavailable

    for fig_id, module in figure_modules().items():
        print(f"{fig_id:12s} {module}")
        print(f"{'':12s} {get_figure(fig_id).CAPTION}")
    for fig_id, why in unavailable().items():
        print(f"{fig_id:12s} not available: {why}")
    return 0


def _regenerate(args, ids, out: Path) -> list:
    """Regenerate the figures ``ids`` into ``out``, saying how far it got on stderr."""
    from tqdm.auto import tqdm

    from calcheck.figures.registry import regenerate

    why = getattr(args, "jobs_chosen", None)
    # the first progress line names the workers (an error before it stays the only line)
    workers = [f"; {args.jobs} worker(s) fit the models ({why + '; ' if why else ''}--jobs N)"]

    def first(line: str) -> str:
        return line + (workers.pop() if workers else "")

    def task_progress(key, seconds, done, total):
        # model fits before the figures (--jobs): one line each, they take up to a minute
        line = f"{key} fitted ({done} of {total}), {seconds:.0f} s"
        tqdm.write(f"calcheck: {first(line)}", file=sys.stderr)

    # the run's rule: a bar on a terminal, otherwise one line per figure on stderr
    with tqdm(total=len(ids), unit="figure", disable=not sys.stderr.isatty()) as bar:

        def progress(entry, done, total):
            bar.update(1)
            if bar.disable:
                line = f"{entry['id']} done ({done} of {total}), {entry['seconds']:.0f} s"
                print(f"calcheck: {first(line)}", file=sys.stderr, flush=True)

        return regenerate(
            ids,
            out,
            reps=args.reps,
            seed=args.seed,
            data_root=args.data,
            command="calcheck figures",
            on_figure=progress,
            jobs=args.jobs,
            on_task=task_progress,
        )


def _print_findings(entries) -> None:
    """One line per figure (its time, files and findings that hold), then each finding."""
    from calcheck.figures.findings import status

    for e in entries:
        found = e["findings"]
        judged = [f for f in found if status(f) in ("holds", "does not hold")]
        held = sum(status(f) == "holds" for f in judged)
        extra = f", findings {held}/{len(judged)} hold" if judged else ""
        print(f"{e['id']:12s} {e['seconds']:7.1f} s  {', '.join(e['files'])}{extra}")
        for f in found:
            tag = status(f).upper() if status(f) == "does not hold" else status(f)
            why = f" ({f['explanation']})" if f.get("explanation") else ""
            print(f"    [{tag}] {f['claim']}: {json_text(f['value'])}{why}")


def _compare_with_record(entries, record: bool) -> int:
    """Record the findings' statuses (``record``) or name those that changed (exit 1)."""
    from calcheck.figures import findings
    from calcheck.figures.findings import changed_statuses, record_statuses

    if record:
        print(f"finding statuses recorded in {record_statuses(entries)}")
        return 0
    changes = changed_statuses(entries)
    for fig_id, claim, before, now in changes:
        print(f"CHANGED {fig_id}: {claim}: recorded {before!r}, now {now!r}")
    if changes:
        print(
            f"{len(changes)} finding(s) changed status from the record ({findings.RECORD}): a "
            "regression, or a fix to record with --record-findings"
        )
    return 1 if changes else 0


def _check_requirements(modules: dict) -> None:
    """Refuse, before any work, figures whose optional packages are not installed.

    A figure module lists them as ``REQUIRES = {import name: pip name}``; one line names
    the figures, the packages and the install command (a missing one used to stop the
    command with ModuleNotFoundError after the first figures had run).
    """
    import importlib

    missing: dict[str, list[str]] = {}
    for fig_id, module in modules.items():
        for name, pip_name in getattr(module, "REQUIRES", {}).items():
            try:
                importlib.import_module(name)
            except ImportError:
                missing.setdefault(pip_name, []).append(fig_id)
    if missing:
        # one figure "needs", several "need"; one package "is", several "are"
        needs = "; ".join(
            f"{', '.join(ids)} {'needs' if len(ids) == 1 else 'need'} {pkg}"
            for pkg, ids in missing.items()
        )
        absent = "which is" if len(missing) == 1 else "which are"
        figures = {fig_id for ids in missing.values() for fig_id in ids}
        leave = "that figure" if len(figures) == 1 else "those figures"
        raise ValueError(
            f"{needs}, {absent} not installed: python -m pip install "
            f"{' '.join(missing)} (or leave {leave} out)"
        )
