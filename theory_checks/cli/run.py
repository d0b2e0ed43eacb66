"""``calcheck run``: select checks, guard the output folder, simulate, report.

What a person running it can rely on (the README says the same):

* one run per ``--out`` at a time: a second run into the same folder refuses with the pid
  of the first (an advisory lock the kernel releases when the first run dies, even by
  SIGKILL);
* before the bulk of the work, one calibration block per experiment kind is simulated and
  stored, and the run's time and disk are estimated and printed; beyond
  :data:`LIMIT_SECONDS` or :data:`LIMIT_BYTES` (or the free disk) the run refuses unless
  ``--yes``;
* SIGINT and SIGTERM stop a run with one line (blocks stored, how to resume), no traceback;
  the workers are stopped with it, and exit on their own if the run is killed outright;
* a damaged store is a clear error; ``--move-damaged-store`` renames it aside and recomputes.
"""

from __future__ import annotations

import argparse
import fnmatch
import os
import shlex
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from calcheck.simulations.files import json_text, writable_folder
from calcheck.simulations.provenance import package_version

from .arguments import (
    add_budget_argument,
    add_false_alarm_argument,
    add_jobs_argument,
    add_json_argument,
    add_out_argument,
    add_progress_argument,
    add_seed_argument,
    add_study_argument,
    given_on_command_line,
)
from .progress import (
    LIMIT_BYTES,
    LIMIT_SECONDS,
    PICTURE_SECONDS,
    REPORT_SECONDS,
    Clock,
    confirm,
    heartbeat,
)
from .signals import interrupted_status, interruption_behind, stop_on_signals

__all__ = ["DEFAULT_SEED", "LIMIT_BYTES", "LIMIT_SECONDS", "add_run_arguments", "cmd_run"]

DEFAULT_SEED = 20210718  # ICML 2021; any recorded seed works

#: The files a run writes in its --out (checked before any work: a folder there is refused).
RUN_FILES = ("store.sqlite", "results.json", "report.md", "report.html", ".calcheck.lock")
#: Seconds to wait for a --scheduler to answer.
SCHEDULER_TIMEOUT = 30


def add_run_arguments(s: argparse.ArgumentParser) -> None:
    """The options of ``calcheck run``."""
    s.add_argument(  # repeated --checks add up
        "--checks",
        nargs="+",
        action="extend",
        metavar="ID",
        help="check ids, prefixes or glob patterns (default: all; repeatable)",
    )
    add_budget_argument(s, "replicates, laws, grid")
    s.add_argument(
        "--reps",
        type=int,
        help="replicates per cell, rounded up to blocks of 100 (default: by budget: "
        "quick 4000, full 10000)",
    )
    add_jobs_argument(
        s,
        "parallel workers (default: every CPU this process may use; results are the "
        "same for any --jobs)",
    )
    s.add_argument(
        "--backend",
        choices=("loky", "dask", "threading", "sequential"),
        default="loky",
        help="joblib backend (results do not depend on it)",
    )
    s.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="run on an existing dask cluster (e.g. tcp://10.0.0.5:8786; implies --backend "
        "dask; results are identical to --jobs 1)",
    )
    add_seed_argument(s, DEFAULT_SEED, "root seed (recorded)")
    add_out_argument(s)
    add_study_argument(s, "TOML study file: a guarantee on laws of your own")
    add_false_alarm_argument(s, "false-alarm rate per check (default: 1e-3)")
    add_json_argument(s, "print every verdict as JSON")
    add_progress_argument(s, "progress bar (default: when standard error is a terminal)")
    s.add_argument(
        "--yes",
        action="store_true",
        help=f"run even if estimated beyond {LIMIT_SECONDS / 3600:.0f} h or "
        f"{LIMIT_BYTES / 1e9:.0f} GB of store",
    )
    s.add_argument(
        "--keep-replicates",
        action="store_true",
        help="keep every replicate block in the store (default: once a check's result is "
        "recorded, the blocks no check of the run still needs are deleted)",
    )
    s.add_argument(
        "--move-damaged-store",
        action="store_true",
        help="if the store is damaged, rename it aside and recompute its blocks",
    )


def workers_line(args) -> str:
    """``"2 workers (every CPU this process may use; --jobs N to choose)"``: a first line."""
    n = args.jobs
    why = getattr(args, "jobs_chosen", None)
    said = f"{n} worker{'s' if n != 1 else ''}"
    if args.backend == "dask" or getattr(args, "scheduler", None):
        return said + " (dask)"
    return f"{said} ({why}; --jobs N to choose)" if why else f"{said} (--jobs {n})"


def _select(checks, patterns):
    if not patterns:
        return checks

    def matches(c, p):
        return c.id == p or fnmatch.fnmatch(c.id, p) or c.id.startswith(p + ".")

    unmatched = [p for p in patterns if not any(matches(c, p) for c in checks)]
    if unmatched:
        # a typo is never silently dropped: every selector must select something
        raise ValueError(f"--checks {unmatched!r} matches no check; see `calcheck list`")
    return [c for c in checks if any(matches(c, p) for p in patterns)]


@contextmanager
def _exclusive(out: Path):
    """One run per output folder (advisory lock; released by the kernel when we die)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: no lock
        yield
        return
    path = out / ".calcheck.lock"
    with open(path, "a+") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            f.seek(0)
            holder = f.read().strip() or "unknown"
            raise ValueError(
                f"another calcheck run (pid {holder}) is using --out {str(out)!r}; wait for "
                "it to finish (its blocks are then reused) or choose another --out"
            ) from None
        f.seek(0)
        f.truncate()
        f.write(str(os.getpid()))
        f.flush()
        try:
            yield
        finally:
            f.seek(0)
            f.truncate()


def _move_aside(path: Path) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    target = path.with_name(f"{path.stem}.damaged-{stamp}{path.suffix}")
    for suffix in ("", "-wal", "-shm"):
        src = Path(str(path) + suffix)
        if src.exists():
            src.rename(Path(str(target) + suffix))
    return target


@dataclass
class _Plan:
    """What ``calcheck run`` runs and where, settled from its arguments before any work."""

    checks: list
    reps: int
    false_alarm: float
    out: Path
    #: whether a progress bar is drawn (else progress lines)
    progress: bool
    #: the pictures drawn: one per guarantee of the checks
    pictures: int
    clock: Clock


def _study_replacements(args) -> dict:
    """What the command line replaces in a study file: key -> (value, the flag as typed).

    A flag the command line gave wins over the file's key, and the run says so in one line:
    ``--reps`` over ``reps`` (so does an explicit ``--budget``, whose replicates it sets
    where ``--reps`` is not given), ``--false-alarm`` over ``false_alarm``. The file's
    laws, grid and alphas are its own (``run`` has no flags for them; ``--checks`` with
    ``--study`` is refused). With a study ``--budget`` sets only the replicates, so where
    ``--reps`` is given too, ``--reps`` wins and the run says so in one line.
    """
    from ..checks.budgets import BUDGETS

    out = {}
    if args.reps is not None:
        out["reps"] = (args.reps, f"--reps {args.reps}")
        if given_on_command_line(args, "budget"):
            print(
                f"calcheck: --reps {args.reps} overrides --budget {args.budget} "
                f"({BUDGETS[args.budget].reps} replicates per cell; with --study the budget "
                "sets nothing else)",
                file=sys.stderr,
                flush=True,
            )
    elif given_on_command_line(args, "budget"):
        reps = BUDGETS[args.budget].reps
        out["reps"] = (reps, f"--budget {args.budget} ({reps} replicates per cell)")
    if args.false_alarm is not None:
        out["false_alarm"] = (args.false_alarm, f"--false-alarm {args.false_alarm}")
    return out


def _plan(args) -> _Plan:
    """The checks (of the catalog or of a --study), their sizes and the checked output folder."""
    from ..catalog import all_checks
    from ..checks.budgets import BUDGETS, DEFAULT_FALSE_ALARM
    from ..study.files import load_study

    options = {}
    if args.study:
        if args.checks:
            raise ValueError("give either --study or --checks, not both")
        replace = _study_replacements(args)
        check, options = load_study(
            args.study,
            {key: value for key, (value, _) in replace.items()},
            on_replace=lambda key, file_value: print(
                f"calcheck: {replace[key][1]} overrides the study file's {key} = {file_value}",
                file=sys.stderr,
                flush=True,
            ),
        )
        checks = [check, *options["controls"]]
    else:
        checks = _select(all_checks(args.budget), args.checks)
    reps = args.reps if args.reps is not None else options.get("reps", BUDGETS[args.budget].reps)
    false_alarm = (
        args.false_alarm
        if args.false_alarm is not None
        else options.get("false_alarm", DEFAULT_FALSE_ALARM)
    )
    out = writable_folder(args.out, "--out", files=RUN_FILES)
    for name in ("plots", "previous"):  # folders it writes in at its end
        if (out / name).exists() and not (out / name).is_dir():
            raise ValueError(
                f"--out {str(out)!r} holds a file {name!r} where the run keeps a "
                "folder; move it away or choose another folder"
            )
    from ..report.output_folder import check_read_back

    check_read_back(out, results=False)  # the searches' and figures' index it reads back
    progress = sys.stderr.isatty() if args.progress is None else args.progress
    pictures = len({c.guarantee for c in checks if getattr(c, "guarantee", None)})
    entry = sys.modules.get("calcheck._entry")  # the command's own start, if it is one
    clock = Clock(
        REPORT_SECONDS + PICTURE_SECONDS * pictures / max(1, args.jobs),
        start=getattr(entry, "STARTED", None),
    )
    return _Plan(checks, reps, false_alarm, out, progress, pictures, clock)


def cmd_run(args) -> int:
    """Run the selected checks (or a study) and write results.json, report.md, report.html."""
    plan = _plan(args)
    stored = {"blocks": 0}

    def on_block(key, block):
        stored["blocks"] += 1

    from ..report.picture_drawer import PictureDrawer, picture_processes
    from ..running.cluster import dask_scheduler

    with (
        _exclusive(plan.out),
        stop_on_signals(),
        dask_scheduler(
            args.scheduler, args.backend, flag="--scheduler", timeout=SCHEDULER_TIMEOUT
        ) as args.backend,
    ):
        # each guarantee's picture is drawn while the run goes on, as its checks end
        processes = picture_processes(args.jobs, plan.pictures)
        drawer = PictureDrawer(plan.checks, plan.out / "plots", plan.reps, processes=processes)
        try:
            run = _run_moving_a_damaged_store(args, plan, on_block, drawer)
            # waited for here: an interruption meanwhile stops the pictures' process too
            drawn = drawer.finish()
        except BaseException as exc:
            # also an error that the interruption caused (numpy's zip writer closing mid-write)
            drawer.close()
            interruption = interruption_behind(exc)
            if interruption is None:
                raise
            kept = f"{stored['blocks']} blocks stored in this run; rerun the same command to resume"
            return interrupted_status(interruption, kept)
    return _report(args, plan, run, drawn)


def _run_moving_a_damaged_store(args, plan: _Plan, on_block, drawer):
    """:func:`_run`; with --move-damaged-store, a damaged store is moved aside and run anew."""
    from calcheck.simulations.store import StoreDamaged

    try:
        return _run(args, plan, on_block, drawer)
    except StoreDamaged:
        if not args.move_damaged_store:
            raise
        moved = _move_aside(plan.out / "store.sqlite")
        print(f"calcheck: the damaged store was moved to {moved}", file=sys.stderr)
    return _run(args, plan, on_block, drawer)


def _run(args, plan: _Plan, on_block, drawer):
    """Run the checks on the store in --out (resumed if it holds blocks)."""
    from calcheck.simulations.store import ResultStore

    from ..running.runner import run_checks

    # blocks that are deleted once recorded are not worth compressing
    compress = bool(args.keep_replicates)
    with ResultStore(plan.out / "store.sqlite", compress=compress) as store:
        if stored_before := store.block_count():  # (may take a minute)
            print(
                f"calcheck: resuming: checking the digests of the "
                f"{stored_before} blocks stored in {store.path}",
                file=sys.stderr,
                flush=True,
            )
        return run_checks(
            plan.checks,
            store,
            reps=plan.reps,
            root_seed=args.seed,
            false_alarm=plan.false_alarm,
            n_jobs=args.jobs,
            backend=args.backend,
            progress=plan.progress,
            on_block=on_block,
            heartbeat=heartbeat(clock=plan.clock, lines=not plan.progress),
            on_estimate=confirm(
                args.yes, Path(args.out), args.keep_replicates, plan.clock, workers_line(args)
            ),
            records=True,
            keep_replicates=args.keep_replicates,
            on_result=drawer.result,
        )


def _meta(args, plan: _Plan, run) -> dict:
    """The run's ``meta`` in results.json: its arguments, blocks, estimate and CPU times.

    ``cpu`` (:func:`~calcheck.theory_checks.running.projection.run_cpu_record`) is measured
    here, before the report is written: the main process's own CPU time and the inputs of
    ``calcheck bench --project-cores``.
    """
    from ..running.projection import run_cpu_record

    stats = run.stats
    estimate = plan.clock.record()
    return {
        "seed": args.seed,
        "reps": run.results[0].reps,
        "false_alarm": float(plan.false_alarm),
        "budget": args.budget,
        "version": package_version(),
        "backend": args.backend,
        "scheduler": args.scheduler,
        "jobs": args.jobs,
        "command": "calcheck " + shlex.join(args.argv),
        "blocks": {
            "computed": stats.computed,
            "reused": stats.reused,
            "stale_recomputed": stats.stale,
            "damaged_recomputed": stats.damaged,
            "dropped_after_recording": run.dropped_blocks,
        },
        "damaged_records_recomputed": run.damaged_records,
        "checks_read_from_records": run.recorded,
        "estimate": estimate,
        "cpu": run_cpu_record(run, plan.clock.start, estimate),
        "cpu_seconds_by_experiment_kind": {
            kind: {"blocks": b, "cpu_seconds": round(sec, 3)}
            for kind, (b, sec) in sorted(stats.seconds_by_kind.items(), key=lambda kv: -kv[1][1])
        },
    }


def _report(args, plan: _Plan, run, drawn) -> int:
    """Write results.json, report.md, the pictures and report.html; print the verdicts."""
    from ..report.files import results_to_dict, write_report
    from ..report.output_folder import render_folder_report
    from ..report.pictures import draw_guarantee_pictures

    results, out = run.results, plan.out
    meta = _meta(args, plan, run)
    data = results_to_dict(results, meta)  # once: every output below reads it
    paths = write_report(results, out, meta, data=data)
    # the rest of the pictures (those the run's thread drew are there already)
    draw_guarantee_pictures(data, out / "plots", skip=set(drawn))
    page = render_folder_report(out)
    if args.json:
        print(json_text(data, indent=1))
    else:
        _print_verdicts(out, run, data, paths, page)
    return 0 if all(r.passed for r in results) else 1


def _print_verdicts(out, run, data, paths, page) -> None:
    """The terminal's report: the table, what needs a look, the blocks and the files."""
    from ..report.files import format_table, printed_claim_lines, rate_lines, vacuity_lines

    print(format_table(run.results, data=data))
    no_power = vacuity_lines(data)
    if no_power:
        print("\nCells without power (a vacuous check is never a pass):")
        print("\n".join(f"  {line}" for line in no_power))
    fits = rate_lines(data)
    if fits:
        print("\nRate fits (threshold n* against the varied parameter, 95% bootstrap CI):")
        print("\n".join(f"  {line}" for line in fits))
    if data["printed_claims"]:
        print("\nPrinted claims that fail (a paper's statement checked as printed):")
        print("\n".join(f"  {line}" for line in printed_claim_lines(data["printed_claims"])))
    print(_closing_line(run, data, paths, page))
    stats = run.stats
    if stats.seconds_by_kind:
        spent = sorted(stats.seconds_by_kind.items(), key=lambda kv: -kv[1][1])
        total = sum(sec for _, (_, sec) in spent)
        parts = [f"{k} {sec:.0f} s ({b} blocks)" for k, (b, sec) in spent[:6]]
        print(f"Simulation CPU time {total:.0f} s; by experiment kind: " + ", ".join(parts))
    if paths["previous"]:
        print(f"The previous report in {out} (another selection) was kept in {paths['previous']}")


def _closing_line(run, data, paths, page) -> str:
    """The headline, where the blocks came from and the files written (after a blank line)."""
    from calcheck.simulations.engine import BLOCK_REPS

    results, stats = run.results, run.stats
    n_ok = sum(r.passed for r in results)
    # each clause only when its count is not zero
    clauses = [
        (stats.stale, f" ({stats.stale} stored by other code were recomputed)"),
        (stats.damaged, f" ({stats.damaged} damaged blocks were recomputed)"),
        (run.damaged_records, f" ({run.damaged_records} damaged result records were recomputed)"),
        (run.recorded, f"; {run.recorded} checks' results read from the store's records"),
        (
            run.dropped_blocks,
            f"; {run.dropped_blocks} blocks deleted once their results were recorded "
            "(--keep-replicates keeps them)",
        ),
    ]
    return (
        f"\n{n_ok} of {len(results)} checks as expected: {data['headline']['text']}. "
        f"Blocks of {BLOCK_REPS} replicates: {stats.computed} computed, {stats.reused} reused "
        "from the store"
        + "".join(clause for count, clause in clauses if count)
        + f". Results: {paths['json']}; report: {paths['markdown']}, {page}"
    )
