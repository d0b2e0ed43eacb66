"""``calcheck search``: the worst law of a family for one guarantee, or the quick sweep."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .arguments import (
    RecordGiven,
    add_alpha_argument,
    add_budget_argument,
    add_jobs_argument,
    add_n_argument,
    add_n_bins_argument,
    add_out_argument,
    add_progress_argument,
    add_seed_argument,
    add_study_argument,
    given_on_command_line,
)

__all__ = ["add_search_arguments", "cmd_search"]

#: Files of ``search --power``, ``--rate`` and ``--all`` in ``<out>/search`` (and the index).
SEARCH_FILES = ("index.json", "sweep.md", "power.md", "power.json", "rates.md")


def _key_value(text: str) -> tuple[str, float | int]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{key} must be a number, got {value!r}") from None
    return key, int(number) if number.is_integer() and "." not in value else number


def add_search_arguments(s: argparse.ArgumentParser) -> None:
    """Arguments of ``calcheck search``."""
    _add_target_arguments(s)
    _add_size_arguments(s)
    _add_mode_arguments(s)


def _add_target_arguments(s: argparse.ArgumentParser) -> None:
    """What a single search looks at: the target, the law family, the grid and alpha."""
    from calcheck.simulations.laws.families import FAMILIES

    s.add_argument(
        "target",
        nargs="?",
        help="a guarantee id (its stated bound), GUARANTEE.times_F (the bound times F) or a "
        "catalog control that changes the bound, e.g. gr21.thm3.control.wrong_bound",
    )
    s.add_argument("--family", choices=sorted(FAMILIES), help="law family to search")
    s.add_argument(
        "--family-opt",
        action="append",
        type=_key_value,
        default=[],
        metavar="KEY=VALUE",
        help="family option, repeatable (e.g. k=2)",
    )
    add_n_argument(s, "sample size n")
    add_n_bins_argument(s)
    s.add_argument(
        "--grid",
        action="append",
        type=_key_value,
        default=[],
        metavar="KEY=VALUE",
        help="other grid parameters of the guarantee (e.g. points_per_bin=50, n1=1000)",
    )
    add_alpha_argument(s, "miscoverage alpha in (0, 1)", default=0.1)


def _add_size_arguments(s: argparse.ArgumentParser) -> None:
    """How much a search spends and what it maximises."""
    from ..search.driver import CRITERIA

    add_budget_argument(
        s,
        "quick: 50 candidate laws of differential evolution and 48 of line-search "
        "refinement per parameter (240 for 5 parameters) x 200 replicates, fresh re-check on "
        "4000; full: 300 + 96 per parameter x 1000, re-check on 20000",
    )
    s.add_argument(
        "--evaluations",
        type=int,
        metavar="N",
        help="about N evaluations in all (differential evolution and refinement, shared as "
        "in --budget; at least 10), in place of the budget's",
    )
    s.add_argument(
        "--reps",
        type=int,
        metavar="R",
        help="replicates per evaluation (at least 1; whole blocks of 100), in place of the "
        "budget's; the fresh re-check keeps the budget's",
    )
    add_progress_argument(
        s, "progress bar of the evaluations (default: when standard error is a terminal)"
    )
    s.add_argument(
        "--criterion",
        choices=CRITERIA,
        default="failure",
        action=RecordGiven,
        help="what is maximised: failure (counterexamples with a narrow basin, e.g. "
        "gpr20.cor3), tightness or mean_ratio (worst cases where the whole error "
        "distribution grows, e.g. eta -> 1/2 in Hoeffding steps)",
    )


def _add_mode_arguments(s: argparse.ArgumentParser) -> None:
    """Seeds, workers, the folder, and the searches other than a single one."""
    add_seed_argument(s, default=0, help="root seed of the search (CRN)")
    add_jobs_argument(s, "parallel workers (default: every CPU this process may use; same results)")
    add_out_argument(s, help="results folder (search/ inside it)")
    add_study_argument(
        s,
        "TOML study file with a [search] table (one search per grid cell and alpha)",
        metavar="FILE",
    )
    s.add_argument(
        "--all",
        action="store_true",
        help="the quick sweep: every searchable guarantee and its wrong-bound controls "
        "(a table; about 16 minutes with --jobs 2 on two cores)",
    )
    s.add_argument(
        "--power",
        action="store_true",
        help="the search's own power: the searches of the power table (scaled bounds whose "
        "worst constant eta is known) from --seeds root seeds; writes search/power.md/.json",
    )
    s.add_argument(  # recorded: given without --power, it is refused (not ignored)
        "--seeds",
        type=int,
        default=20,
        action=RecordGiven,
        help="root seeds of --power (default: %(default)s)",
    )
    s.add_argument(
        "--rate",
        nargs="+",
        metavar="CHECK",
        help="worst constants of rate claims: search the law needing the largest sample for "
        "each rate check (klm19.thm53, klm19.thm54, klm19.lem43, klm19.lem43.vc, "
        "nch14.cor32, or 'all'); writes search/rates.md",
    )


def _sized(args, budget, family):
    """The budget named ``budget`` with ``--evaluations`` and ``--reps`` in place of its own."""
    from calcheck.simulations.search import get_search_budget

    return get_search_budget(budget).sized(
        evaluations=args.evaluations, reps=args.reps, dim=family.dim
    )


def _check_sizes(args) -> None:
    """``--evaluations`` and ``--reps``: integers of a search's least size (one line if not)."""
    from calcheck.simulations.search_budget import MIN_EVALUATIONS

    for flag, value, least in (
        ("--evaluations", args.evaluations, MIN_EVALUATIONS),
        ("--reps", args.reps, 1),
    ):
        if value is not None and value < least:
            raise ValueError(
                f"{flag} must be an integer >= {least}, got {value}"
                + (" (the least search: a population of 5 over 2 generations)" if least > 1 else "")
            )


def _announce(estimate) -> None:
    print(f"calcheck: {estimate.line()}", file=sys.stderr, flush=True)


def _single(args) -> int:
    from calcheck.simulations.laws.families import get_family

    from ..search.driver import search
    from ..search.report import check_search_folder, save_search

    if args.target is None or args.family is None:
        print("calcheck search: give a TARGET and --family (or --all)", file=sys.stderr)
        return 2
    grid = dict(args.grid)
    for key, value in (("n", args.n), ("n_bins", args.n_bins)):
        if value is not None:
            if key in grid:
                print(f"calcheck search: {key} given twice", file=sys.stderr)
                return 2
            grid[key] = value
    family = get_family(args.family, **dict(args.family_opt))
    check_search_folder(args.out, [(args.target, family, grid, args.alpha, args.seed)])
    result = search(
        args.target,
        family,
        grid=grid,
        alpha=args.alpha,
        budget=_sized(args, args.budget, family),
        criterion=args.criterion,
        seed=args.seed,
        n_jobs=args.jobs,
        progress=args.progress,
        on_estimate=_announce,
    )
    entry = save_search(result, family, args.out)
    print(result.summary())
    print(f"stored: {Path(args.out) / 'search' / entry['name']}.json (.png)")
    _render(args.out)
    # a deliberately wrong bound: success means the search found a violating law
    return 0 if _expected(result) else 1


def _sweep(args) -> int:
    from calcheck.simulations.files import atomic_write_text, read_back

    from ..search.report import KNOWN_FALSE, sweep, sweep_table

    def progress(target, done, total, result):
        v = result.search.fresh
        print(
            f"calcheck: {target} done ({done} of {total}): {v.outcome}, failure "
            f"{v.failure_rate:.4f}",
            file=sys.stderr,
            flush=True,
        )

    done = sweep(out_dir=args.out, seed=args.seed, n_jobs=args.jobs, progress=progress)
    run = Path(args.out) / "results.json"
    with read_back(run, "a run's results"):
        table = sweep_table(done, json.loads(run.read_text()) if run.is_file() else None)
    path = Path(args.out) / "search" / "sweep.md"
    atomic_write_text(path, table + "\n")
    print(table)
    print(f"\nstored: {path}")
    _render(args.out)
    bad = [
        r.target
        for _, r, _ in done
        if r is not None
        and (r.found and r.target not in KNOWN_FALSE if r.bound == "stated" else not r.found)
    ] + [row[0] for row, r, why in done if r is None and why.startswith("error")]
    if bad:
        print("unexpected: " + ", ".join(bad), file=sys.stderr)
    return 1 if bad else 0


def _power(args) -> int:
    from calcheck.simulations.files import atomic_write_text

    from ..search.power import POWER_ROWS, power_table, search_power

    if args.seeds < 1:
        print(f"calcheck search: --seeds must be >= 1, got {args.seeds}", file=sys.stderr)
        return 2
    results = []
    for i, (target, fam, opts, grid, alpha, criterion) in enumerate(POWER_ROWS):

        def progress(done, total, record, target=target):
            print(
                f"calcheck: {target}: seed {done}/{total}: {record['outcome']}, fresh failure "
                f"{record['failure']:.4f}",
                file=sys.stderr,
            )

        from calcheck.simulations.laws.families import get_family

        results.append(
            search_power(
                target,
                get_family(fam, **opts),
                grid=grid,
                alpha=alpha,
                criterion=criterion,
                seeds=args.seeds,
                first_seed=args.seed,
                budget=args.budget,
                n_jobs=args.jobs,
                progress=progress,
            )
        )
        print(f"calcheck: power row {i + 1} of {len(POWER_ROWS)} done", file=sys.stderr)
    table = power_table(results)
    folder = Path(args.out) / "search"
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write_text(folder / "power.md", table + "\n")
    atomic_write_text(
        folder / "power.json", json.dumps([r.to_dict() for r in results], indent=1) + "\n"
    )
    print(table)
    print(f"\nstored: {folder / 'power.md'} (.json)")
    return 0


#: Budgets of ``--rate`` (differential evolution, replicates, fresh re-measurement).
RATE_BUDGETS = {
    "quick": {"population": 8, "generations": 6, "reps": 300, "fresh_reps": 2000},
    "full": {"population": 30, "generations": 30, "reps": 400, "fresh_reps": 20000},
}


def _rates(args) -> int:
    from calcheck.simulations.files import atomic_write_text

    from ..catalog import rate_targets
    from ..search.rates import markdown_table, rate_worst_law

    known = sorted(rate_targets())
    checks = known if args.rate == ["all"] else list(args.rate)
    unknown = [c for c in checks if c not in known]
    if unknown:
        print(
            f"calcheck search: --rate takes {', '.join(known)} or all; got {unknown}",
            file=sys.stderr,
        )
        return 2
    results = []
    for check in checks:
        result = rate_worst_law(
            check,
            seed=args.seed,
            fresh_seed=args.seed + 1,
            n_jobs=args.jobs,
            **RATE_BUDGETS[args.budget],
        )
        print(result.summary(), flush=True)
        results.append(result)
    table = markdown_table(results)
    folder = Path(args.out) / "search"
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write_text(folder / "rates.md", table + "\n")
    print(table)
    print(f"\nstored: {folder / 'rates.md'}")
    return 0


def _render(out) -> None:
    from ..report.output_folder import render_folder_report

    page = render_folder_report(out)
    if page is not None:
        print(f"report: {page}")


def _expected(result) -> bool:
    """A stated bound should hold on the law found; a wrong one should be found violated."""
    return result.found if result.bound != "stated" else not result.found


def _study_replacements(args) -> dict:
    """What the command line replaces in a study file: dotted key -> (value, the flag as typed).

    An option the command line gave wins over the file's key (:func:`_study` says so in one
    line); one it did not give leaves the file's value (or the file's default). ``--alpha``
    replaces the file's ``alphas``, ``--n``, ``--n-bins`` and ``--grid KEY=VALUE`` one grid
    list each, ``--family-opt KEY=VALUE`` one of the ``[search]`` table's ``options``.
    """
    # each replaces the [search] key of its name; --evaluations and --reps have no default
    given = [d for d in ("budget", "criterion", "seed") if given_on_command_line(args, d)]
    given += [d for d in ("evaluations", "reps") if getattr(args, d) is not None]
    out = {f"search.{d}": (getattr(args, d), f"--{d} {getattr(args, d)}") for d in given}
    if given_on_command_line(args, "alpha"):
        out["alphas"] = ([args.alpha], f"--alpha {args.alpha}")
    grid = [(k, v, f"--grid {k}={v}") for k, v in args.grid]
    grid += [(k, v, f"--{k.replace('_', '-')} {v}") for k, v in _size_options(args)]
    for key, value, flag in grid:
        if f"grid.{key}" in out:
            raise ValueError(f"grid {key} is given twice ({out[f'grid.{key}'][1]} and {flag})")
        out[f"grid.{key}"] = ([value], flag)
    for key, value in args.family_opt:
        out[f"search.options.{key}"] = (value, f"--family-opt {key}={value}")
    return out


def _size_options(args) -> list:
    """``--n`` and ``--n-bins`` where given: (grid key, value)."""
    return [(k, v) for k, v in (("n", args.n), ("n_bins", args.n_bins)) if v is not None]


def _say_replaced(flags: dict):
    """``on_replace`` of the study loaders: one line per key of the file a flag replaces."""

    def said(key, file_value):
        shown = key.removeprefix("search.")
        print(
            f"calcheck: {flags[key]} overrides the study file's {shown} = "
            f"{_toml_value(file_value)}",
            file=sys.stderr,
            flush=True,
        )

    return said


def _toml_value(value) -> str:
    """A study file's value as the override line shows it (``failure``, ``[500, 2000]``)."""
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return str(value).lower() if isinstance(value, bool) else str(value)


def _study(args) -> int:
    from calcheck.simulations.laws.families import get_family
    from calcheck.simulations.search import get_search_budget

    from ..search.driver import resolve_target, search
    from ..search.report import check_search_folder, save_search
    from ..study.files import load_search_study

    replace = _study_replacements(args)
    runs = load_search_study(
        args.study,
        {key: value for key, (value, _) in replace.items()},
        on_replace=_say_replaced({key: flag for key, (_, flag) in replace.items()}),
    )
    families = [get_family(kw["family"], **kw["family_options"]) for kw in runs]
    pairs = list(zip(runs, families, strict=True))
    check_search_folder(
        args.out, [(kw["target"], f, kw["grid"], kw["alpha"], kw["seed"]) for kw, f in pairs]
    )
    results = []
    for i, (kw, family) in enumerate(pairs):
        guarantee, _ = resolve_target(kw["target"])
        budget = get_search_budget(kw["budget"]).sized(
            evaluations=kw["evaluations"], reps=kw["reps"], dim=family.dim
        )
        result = search(
            kw["target"],
            family,
            grid=kw["grid"],
            alpha=kw["alpha"],
            budget=budget,
            criterion=kw["criterion"],
            seed=kw["seed"],
            n_jobs=args.jobs,
            progress=args.progress,
            on_estimate=_announce,
        )
        save_search(result, family, args.out)
        print(result.summary())
        print(f"calcheck: search {i + 1} of {len(runs)} done ({guarantee})", file=sys.stderr)
        results.append(result)
    _render(args.out)
    return 0 if all(_expected(r) for r in results) else 1


def cmd_search(args) -> int:
    """Run one search (or the sweep), store it under ``<out>/search`` and re-render the report."""
    single = args.target is not None or args.family is not None
    given = sum(
        (single, bool(args.all), args.study is not None, bool(args.power), args.rate is not None)
    )
    if given > 1:
        print(
            "calcheck search: give TARGET --family, --study, --all, --power or --rate, one of them",
            file=sys.stderr,
        )
        return 2
    if given_on_command_line(args, "seeds") and not args.power:
        raise ValueError(
            f"--seeds {args.seeds} is the number of root seeds of --power, which is not given; "
            "for the root seed of this search give --seed"
        )
    from calcheck.simulations.files import writable_folder

    _check_sizes(args)
    whole_sweep = any((args.all, args.power, args.rate is not None))  # flags, no values
    if (args.evaluations is not None or args.reps is not None) and whole_sweep:
        raise ValueError(
            "--evaluations and --reps size a single search or a --study's; --all, --power "
            "and --rate keep their own budgets (give --budget)"
        )

    # before any work: a file where the folders go, no permission, a folder where a file
    # goes, a damaged file that the report (not drawn by --power and --rate) reads back
    out = writable_folder(args.out, "--out", files=("report.html",))
    writable_folder(out / "search", "--out", files=SEARCH_FILES)
    if args.power:
        return _power(args)
    if args.rate is not None:
        return _rates(args)
    from ..report.output_folder import check_read_back

    check_read_back(out)
    if args.study is not None:
        return _study(args)
    if args.all:
        if args.target is not None or args.family is not None:
            print("calcheck search: --all takes no TARGET or --family", file=sys.stderr)
            return 2
        return _sweep(args)
    return _single(args)
