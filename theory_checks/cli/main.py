"""Command-line interface ``calcheck`` (also ``python -m calcheck``).

Sub-commands: ``list``, ``bound``, ``run``, ``plan``, ``bench``. The CLI is the only part of
calcheck that prints; the library logs.
"""

from __future__ import annotations

import argparse
import dataclasses
import errno
import importlib
import logging
import os
import sys
from pathlib import Path

from .arguments import (
    DefaultsHelp,
    add_alpha_argument,
    add_json_argument,
    add_n_argument,
    add_n_bins_argument,
    add_seed_argument,
    resolve_jobs,
)
from .signals import (
    Interrupted,
    interrupted_status,
    interruption_behind,
    received_signal,
    stop_on_signals,
)

# Each command's module, and what it imports (the catalog, scipy.stats: about a second), is
# loaded when that command runs (see SUBCOMMANDS): a refused argument is answered at once.

__all__ = ["main"]


def _print_methods(as_json: bool) -> int:
    from calcheck.simulations.files import json_text

    from ..catalog.method_table import method_table

    rows = method_table()
    if as_json:
        print(json_text({"methods": rows}, indent=1))
        return 0
    print("Methods x events a guarantee of your own can name (calcheck.define_guarantee)")
    print("and the keywords the bound is called with; * = exact coverage at constant eta")
    for r in rows:
        star = "*" if r["exact_coverage"] else " "
        data = ""
        if r.get("data"):
            data = f"; data {', '.join(r['data'])}" + (" (radius per bin)" if r["per_bin"] else "")
        print(
            f"  {r['method']:15s} {r['event']:12s}{star} {r['quantifier']:11s} "
            f"bound({', '.join(r['supplies'])}){data}  grid {', '.join(r['grid'])}; "
            f"laws {', '.join(r['families'])}"
        )
    print("\nData keywords (arrays per replicate, for a bound that asks for them):")
    from ..checks.methods import DATA_KEYWORDS

    for name, meaning in DATA_KEYWORDS.items():
        print(f"  {name}: {meaning}")
    print("\nOr a calibrator object of your own (fit(scores, labels), predict(scores)): the")
    print("events of 'scaling_binning', bound(alpha, n, n_bins) and the data keywords, on")
    print("binary laws, read on the level sets of its outputs")
    print("(calcheck.simulations.experiments.calibrator). A multiclass one (predict_proba,")
    print("n_classes >= 3): top-label events conditional, marginal, ece, ece_mean and the")
    print("class-wise cw_*, bound(alpha, n, n_bins, n_classes) and the data keywords per")
    print("top-label level set, on top_label laws (calcheck.theory_checks.user.calibrators).")
    return 0


def _cmd_list(args) -> int:
    from calcheck.bounds import registry
    from calcheck.simulations.files import json_text

    from ..catalog import all_checks, refused, studiable

    if args.methods:
        return _print_methods(args.json)
    if args.laws:
        return _print_laws(args.json)
    if args.study_schema:
        from ..study.files import schema_markdown

        print(schema_markdown())
        return 0
    checks = all_checks("quick")
    covered = {}
    for c in checks:
        covered.setdefault(c.guarantee, []).append(c.id)
    if args.json:
        out = {
            "guarantees": [
                {
                    "id": g.id,
                    "paper": g.paper,
                    "label": g.label,
                    "quantifier": g.quantifier,
                    "statement": g.statement,
                    "hypotheses": list(g.hypotheses),
                    "parameters": list(g.parameters),
                    "variant_of": g.variant_of,
                    "checks": covered.get(g.id, []),
                }
                for g in registry.all_guarantees()
            ],
            "checks": [
                {
                    "id": c.id,
                    "guarantee": c.guarantee,
                    "expect": c.expect,
                    "event": c.metric,
                    "bound": c.bound_mode,
                    "experiments": sorted(c.law_specs()),
                    "description": c.description,
                }
                for c in checks
            ],
            "studiable": sorted(studiable()),
            "refused": refused(),
        }
        print(json_text(out, indent=1))
        return 0
    print("Guarantees")
    for g in registry.all_guarantees():
        print(f"  {g.id:34s} {g.quantifier:11s} {g.label}")
        print(f"  {'':34s} {g.statement}")
    print("\nChecks (controls are negative controls the suite must flag as violated)")
    for c in checks:
        kind = "control" if c.is_control else "check  "
        print(f"  {c.id:50s} {kind} {c.description}")
    print("\nGuarantees a study file cannot check on a law of your own")
    for gid, why in sorted(refused().items()):
        print(f"  {gid:34s} {why}")
    return 0


def _parse_value(text: str):
    """``3`` -> 3, ``0.1`` -> 0.1, ``1,2,3`` -> array (per-bin arguments such as counts)."""
    import numpy as np

    def one(t):
        try:
            return int(t)
        except ValueError:
            return float(t)

    parts = [one(t) for t in text.split(",")]
    return np.array(parts) if len(parts) > 1 or text.endswith(",") else parts[0]


def _cmd_bound(args) -> int:
    import inspect

    import numpy as np

    from calcheck.bounds import registry
    from calcheck.simulations.files import json_text

    g = registry.get(args.id)
    flags = {"n": "--n", "n_bins": "--n-bins", "alpha": "--alpha", "delta": "--delta"}
    kwargs = {"n": args.n, "n_bins": args.n_bins, "alpha": args.alpha, "delta": args.delta}
    unused = [flags[k] for k, v in kwargs.items() if v is not None and k not in g.parameters]
    if unused:
        raise ValueError(
            f"{g.id} does not take {', '.join(unused)}; its parameters are {list(g.parameters)}"
        )
    for item in args.params:
        name, sep, text = item.partition("=")
        if not sep or name not in g.parameters:
            raise ValueError(
                f"parameter {item!r} is not NAME=VALUE with NAME one of "
                f"{list(g.parameters)} ({g.id})"
            )
        if kwargs.get(name) is not None:
            given = flags.get(name, name + "=")
            raise ValueError(f"{name} is given twice ({given} and {item!r}); give it once")
        try:
            kwargs[name] = _parse_value(text)
        except ValueError:
            raise ValueError(
                f"parameter {name} needs a number or a comma list, got {text!r}"
            ) from None
    sig = inspect.signature(g.function).parameters
    missing = [
        p
        for p in g.parameters
        if kwargs.get(p) is None and sig[p].default is inspect.Parameter.empty
    ]
    if missing:
        m = missing[0]
        raise ValueError(f"{g.id} needs {flags.get(m, m + '=VALUE')}")
    value = g(**{k: v for k, v in kwargs.items() if v is not None})
    # Say what the value was computed on, defaults included.
    given = {k: v for k, v in kwargs.items() if k in g.parameters and v is not None}
    used = {
        p: (v.tolist() if isinstance(v, np.ndarray) else v)
        for p in g.parameters
        for v in [given.get(p, sig[p].default)]
    }
    out = value.tolist() if isinstance(value, np.ndarray) else value
    if args.json:
        informative = bool(np.all(np.asarray(value) < 1))
        print(
            json_text(
                {
                    "id": g.id,
                    "label": g.label,
                    "quantifier": g.quantifier,
                    "arguments": used,
                    "value": out,
                    "informative": informative,
                }
            )
        )
    else:
        print(" ".join(f"{v:.6g}" for v in np.ravel(value)))
        if not np.all(np.asarray(value) < 1):  # (on stderr: stdout stays the numbers alone)
            print(
                "calcheck: note: a value >= 1 says nothing about an error in [0, 1] (vacuous "
                "there); --json gives informative: false",
                file=sys.stderr,
            )
    return 0


def _cmd_bench(args) -> int:
    from calcheck.simulations.files import json_text

    if args.project_cores is not None:
        from ..running.projection import project_cores

        if args.project_cores < 1:
            raise ValueError(
                f"--project-cores must be a positive integer, got {args.project_cores}"
            )
        projection = project_cores(args.results, args.project_cores)
        print(projection.to_json(indent=1) if args.json else projection.summary())
        return 0
    from ..running.bench import bench_text, run_benchmarks

    report = run_benchmarks(
        args.n,
        args.n_bins,
        calibrator=args.calibrator,
        law=args.law,
        rounds=args.rounds,
        seed=args.seed,
    )
    if args.json:
        out = dataclasses.asdict(report.cell)  # the cell's fields at the top, as before
        out.update(
            single_fit=[dataclasses.asdict(r) for r in report.single_fit],
            recalibration=dataclasses.asdict(report.recalibration),
            dirichlet=dataclasses.asdict(report.dirichlet),
            main_process=dataclasses.asdict(report.main_process),
            evaluation=dataclasses.asdict(report.evaluation),
        )
        print(json_text(out))
        return 0
    print(bench_text(report))
    return 0


def _print_laws(as_json: bool) -> int:
    """``calcheck list --laws``: each shipped law's name, family and definition."""
    from calcheck.simulations.files import json_text
    from calcheck.simulations.laws import LAWS

    rows = [
        {"name": name, "family": type(law).__name__, "law": repr(law)} for name, law in LAWS.items()
    ]
    if as_json:
        print(json_text(rows, indent=1))
        return 0
    width = max(len(r["name"]) for r in rows)
    for r in rows:
        text = r["law"] if len(r["law"]) <= 100 else r["law"][:97] + "..."
        print(f"{r['name']:<{width}}  {text}")
    return 0


def _add_list_arguments(s: argparse.ArgumentParser) -> None:
    """The options of ``calcheck list``."""
    add_json_argument(s)
    s.add_argument(
        "--methods",
        action="store_true",
        help="list the method x event pairs a guarantee of your own can name",
    )
    s.add_argument(
        "--laws",
        action="store_true",
        help="list the laws the suite ships (calcheck.LAWS), by name, as a study file names them",
    )
    s.add_argument(
        "--study-schema",
        action="store_true",
        help="print every key a study file may hold, with its type and meaning (Markdown)",
    )


def _add_bound_arguments(s: argparse.ArgumentParser) -> None:
    """The arguments of ``calcheck bound``."""
    s.add_argument("id", help="guarantee id, e.g. gr21.thm3 (see `calcheck list`)")
    s.add_argument(
        "params",
        nargs="*",
        metavar="NAME=VALUE",
        help="other parameters of the bound, e.g. n_bin=100 variance=0.25 "
        "(comma lists for per-bin arguments: counts=10,20,30)",
    )
    add_n_argument(s)
    add_n_bins_argument(s)
    add_alpha_argument(s, "miscoverage in (0, 1)")
    s.add_argument(
        "--delta", type=float, default=None, help="randomisation parameter (the bound's default: 0)"
    )
    add_json_argument(s)


def _add_bench_arguments(s: argparse.ArgumentParser) -> None:
    """The options of ``calcheck bench``."""
    add_n_argument(s, default=10_000)
    add_n_bins_argument(s, default=10)
    s.add_argument("--calibrator", default="umd", help="calibrator of the timed cell")
    s.add_argument("--law", default="uniform_half", help="law of the timed cell")
    s.add_argument("--rounds", type=int, default=15, help="timed rounds of 100 replicates")
    add_seed_argument(s, default=0)
    add_json_argument(s)
    s.add_argument(
        "--project-cores",
        type=int,
        metavar="K",
        help="instead of timing: project the run recorded in --results to K workers (Amdahl's "
        "law from its measured CPU times, the inputs shown)",
    )
    s.add_argument(
        "--results",
        default="calcheck-results/results.json",
        help="a run's results.json (or its folder), with --project-cores",
    )


#: The sub-commands, in the order ``calcheck --help`` lists them: name, summary, and where its
#: two functions live (``module:add_arguments:command``; the module relative to this package,
#: empty for this one), the one that adds its arguments and the one that runs it. A command's
#: module is imported only when that command is parsed (:func:`command_functions`).
SUBCOMMANDS = (
    ("list", "list guarantees and checks", ":_add_list_arguments:_cmd_list"),
    ("bound", "evaluate a registered bound", ":_add_bound_arguments:_cmd_bound"),
    ("run", "run theory checks and write a report", ".run:add_run_arguments:cmd_run"),
    (
        "figures",
        "regenerate paper figures (PNG, PDF) and an HTML page",
        ".figures:add_figures_arguments:cmd_figures",
    ),
    (
        "search",
        "search a law family for the worst law of a guarantee (or --all)",
        ".search:add_search_arguments:cmd_search",
    ),
    (
        "audit",
        "one row per check of a run: its mutant and whether it was caught, its power, "
        "powerless cells, implied-by (exit 1 if a guarantee cannot fail on its design)",
        ".audit:add_audit_arguments:cmd_audit",
    ),
    (
        "plan",
        "replicates needed to detect a coverage shortfall (or a bound factor) at a "
        "given power and false-alarm rate (exact binomial)",
        ".plan:add_plan_arguments:cmd_plan",
    ),
    (
        "bench",
        "time each hot path against its own floor (ratios)",
        ":_add_bench_arguments:_cmd_bench",
    ),
)


def command_functions(where: str):
    """``(add_arguments, command)`` of a :data:`SUBCOMMANDS` entry's ``module:add:command``."""
    module_name, add_name, command_name = where.split(":")
    module = (
        importlib.import_module(module_name, __package__) if module_name else sys.modules[__name__]
    )
    return getattr(module, add_name), getattr(module, command_name)


def _version() -> str:
    from calcheck.simulations.provenance import package_version

    return f"calcheck {package_version()}"


class _VersionAction(argparse.Action):
    """``--version``: the version, looked up only when asked (the lookup imports numpy)."""

    def __init__(
        self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None
    ):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        parser.exit(message=_version() + "\n")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of ``calcheck`` and its sub-commands (:data:`SUBCOMMANDS`).

    With ``command``, only that sub-command gets its arguments (and its module is imported);
    the others are listed by name and summary, as ``calcheck --help`` shows them.
    """
    p = argparse.ArgumentParser(
        prog="calcheck",
        description="Verify distribution-free calibration guarantees by exact Monte Carlo.",
    )
    p.add_argument("--version", action=_VersionAction, help="show the version and exit")
    p.add_argument("-v", "--verbose", action="store_true", help="log progress details")
    sub = p.add_subparsers(dest="command", required=True)
    for name, summary, where in SUBCOMMANDS:
        # every sub-command's --help shows its defaults
        s = sub.add_parser(name, help=summary, formatter_class=DefaultsHelp)
        if command is None or name == command:
            add_arguments, run = command_functions(where)
            add_arguments(s)
            s.set_defaults(func=run)
    return p


def _command_named(argv: list) -> str | None:
    """The sub-command ``argv`` names: its first word that is one (None: none is)."""
    names = {entry[0] for entry in SUBCOMMANDS}
    return next((word for word in argv if word in names), None)


def _kept_when_interrupted(args) -> str:
    """What an interrupted command kept, and how to go on (its one line's second half)."""
    out = getattr(args, "out", None)
    if args.command == "figures":
        return (
            f"the figures finished before it are in {out} and their data is cached; rerun the "
            "same command to resume"
        )
    if args.command == "search":
        return (
            f"the searches finished before it are stored under {Path(out or '.') / 'search'}; "
            "rerun the same command to search again"
        )
    if args.command == "run":
        return "the blocks computed so far are stored; rerun the same command to resume"
    return "nothing was written; rerun the same command"


def main(argv=None) -> int:
    """Run the ``calcheck`` command line; returns the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(_command_named(argv))
    args, extra = parser.parse_known_args(argv)
    if extra and getattr(args, "command", None) == "bound" and all("=" in e for e in extra):
        args.params = [*args.params, *extra]  # NAME=VALUE given after the options
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    args.argv = argv
    resolve_jobs(args)  # run, search, figures: by default every CPU this process may use
    # dask's own INFO lines (cluster start, connections) only with -v; set before dask loads
    os.environ.setdefault("DASK_LOGGING__DISTRIBUTED", "info" if args.verbose else "warning")
    from calcheck.simulations.parallel import LOG_FORMAT

    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format=LOG_FORMAT,
    )
    try:
        with stop_on_signals():
            return args.func(args)
    except BaseException as exc:
        # an interruption, also one that came out as another error (see interruption_behind)
        interruption = interruption_behind(exc)
        if interruption is None and received_signal() is not None:
            interruption = Interrupted(received_signal())  # dropped on its way out
        if interruption is None:
            return _failed(exc, args.command)
        return interrupted_status(interruption, _kept_when_interrupted(args))


#: errno of a write that found no room: a full disk, a file-size limit, a disk quota.
_NO_ROOM = frozenset(
    code for code in (errno.ENOSPC, errno.EFBIG, getattr(errno, "EDQUOT", None)) if code
)


#: What lowers each command's memory, in its own flags (the MemoryError line names them).
_SMALLER_FLAGS = {
    "run": "lower --reps or --jobs (or choose the quick --budget)",
    "figures": "lower --reps",
    "search": "lower --reps, --evaluations or --jobs",
    "plan": "lower --max-reps (or --n, --n-bins with --bound-factor)",
    "bench": "lower --n or --n-bins",
    "bound": "lower --n or --n-bins",
}


def _failed(exc: BaseException, command: str | None = None) -> int:
    """The exit status (and one line) of a command that raised ``exc``; re-raises the rest.

    An exception of the user's code (a calibrator, a law's eta, a plugin's code) that ran
    here is one line naming it, as one from a worker is (``attributed_error``).
    """
    from calcheck.simulations.parallel import attributed_error

    user_error = attributed_error(exc) if isinstance(exc, Exception) else None
    try:
        raise user_error or exc
    except BrokenPipeError:
        # the reader of our output went away (``calcheck list | head``): stop quietly, and
        # keep Python from reporting the pipe again when it flushes stdout at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except (ValueError, FileNotFoundError) as exc:
        print(f"calcheck: error: {exc}", file=sys.stderr)
        return 2
    except MemoryError as exc:
        # sizes with an estimate are refused before any work; this is the rest (a figure's
        # --reps): numpy refuses the allocation before it grows, so nothing was lost
        print(
            f"calcheck: error: not enough memory ({exc or 'MemoryError'}); "
            f"{_SMALLER_FLAGS.get(command, 'choose smaller sizes')}; what was stored before is "
            "kept",
            file=sys.stderr,
        )
        return 2
    except OSError as exc:
        if exc.errno not in _NO_ROOM:
            raise
        # atomic writes leave the previous files whole; the store keeps its blocks
        where = f" writing {exc.filename}" if exc.filename else ""
        why = "no space left on the device" if exc.errno == errno.ENOSPC else exc.strerror
        print(
            f"calcheck: error: {why}{where} (a full disk, a file-size limit (ulimit -f) or a "
            "disk quota); the previous outputs are unchanged and stored blocks are kept: free "
            "space (or raise the limit) and rerun the same command",
            file=sys.stderr,
        )
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
