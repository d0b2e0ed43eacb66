"""Measure a calcheck command and record what it took, for the docs site.

Usage (from the repository root)::

    python docs/tools/record_run.py quick -- calcheck run --jobs 2 --out /tmp/quick
    python docs/tools/record_run.py full -- calcheck run --budget full --jobs 2 --out /tmp/full

A measurement taken while other work shares the machine measures that work as much as
calcheck, so the recorder refuses to start while the 1-minute load average is above
:data:`IDLE_LOAD` (``--loaded`` records it anyway, marked ``"loaded": true``), and marks a run
loaded when the load average at its end exceeds 1.5 times its ``--jobs`` (the run's own
workers and main process account for about ``jobs``; more means something else ran).

It runs the command, measures its wall time and the peak resident memory of its processes,
reads the run's ``results.json`` (the ``--out`` folder) and writes
``docs/measurements/<name>.json``: the date, the machine, the command, the wall time, the
checks per role as expected, where the simulation CPU time went and each check's summary row
(verdict, worst cell, coverage, detectable factor). The docs build renders
every file of that folder (``docs/_ext/calcheck_docs.py``), so no run time on the site is
typed by hand. Commit the file after a deliberate measurement.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _out_folder(command: list[str]) -> Path:
    if "--out" in command:
        return Path(command[command.index("--out") + 1])
    return Path("calcheck-results")


def _commit() -> str:
    try:
        return subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def audit_rows(results: dict) -> list:
    """The run's audit rows (``calcheck audit``), for the paper pages."""
    from calcheck.theory_checks.report.audit import audit_rows as rows

    return rows(results)


def check_rows(results: dict) -> dict:
    """Check id -> the run's summary row (the report's columns), for the paper pages."""
    from calcheck.theory_checks.report.summary import SUMMARY_HEADERS, summary_row

    return {
        c["id"]: dict(zip(SUMMARY_HEADERS, summary_row(c), strict=True)) for c in results["checks"]
    }


#: The 1-minute load average above which the machine is not idle: no measurement starts.
IDLE_LOAD = 1.0


def _jobs(command: list[str]) -> int:
    """The run's ``--jobs`` (its default: the CPUs this process may use)."""
    if "--jobs" in command and int(command[command.index("--jobs") + 1]) > 0:
        return int(command[command.index("--jobs") + 1])
    from calcheck.simulations.parallel import usable_cpus

    return usable_cpus()


def loaded_reason(load_at_start, load_at_end, jobs: int) -> str | None:
    """Why a measurement does not measure calcheck alone (None: it does)."""
    if load_at_start[0] > IDLE_LOAD:
        return f"the 1-minute load average was {load_at_start[0]} at the start (> {IDLE_LOAD})"
    if load_at_end[0] > 1.5 * jobs:
        return (
            f"the 1-minute load average was {load_at_end[0]} at the end, above 1.5 x --jobs "
            f"{jobs} = {1.5 * jobs:g}"
        )
    return None


def measure(name: str, command: list[str], allow_loaded: bool = False) -> dict:
    """Run ``command`` and return the measurement record (also written to the docs).

    Raises ValueError before running if the machine is not idle, unless ``allow_loaded``.
    """
    started = datetime.now(UTC)
    load_at_start = [round(x, 2) for x in os.getloadavg()]
    if load_at_start[0] > IDLE_LOAD and not allow_loaded:
        raise ValueError(
            f"the machine is not idle (1-minute load average {load_at_start[0]} > {IDLE_LOAD}): "
            "stop what else runs and wait a minute, or pass --loaded to record a run marked "
            "loaded"
        )
    t0 = time.monotonic()
    completed = subprocess.run(command, check=False)
    wall = time.monotonic() - t0
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    load_at_end = [round(x, 2) for x in os.getloadavg()]
    jobs = _jobs(command)
    loaded = loaded_reason(load_at_start, load_at_end, jobs)
    written = _out_folder(command) / "results.json"
    # a results.json left by an earlier run is not this run's: nothing is recorded then
    if not written.is_file() or written.stat().st_mtime < started.timestamp():
        raise ValueError(
            f"the command exited {completed.returncode} and wrote no {written}; nothing recorded"
        )
    results = json.loads(written.read_text())
    meta = results["meta"]
    checks = results["checks"]
    record = {
        "name": name,
        "date_utc": started.strftime("%Y-%m-%d %H:%M"),
        "commit": _commit(),
        "command": " ".join(command),
        "exit_status": completed.returncode,
        "wall_seconds": round(wall, 1),
        "peak_rss_mb": round(peak_kb / 1024),
        "machine": {
            "cpus": os.cpu_count(),
            "cpu_model": _cpu_model(),
            "python": platform.python_version(),
            "load_average_at_start": load_at_start,
            "load_average_at_end": load_at_end,
        },
        "jobs": jobs,
        "loaded": loaded is not None,
        "loaded_because": loaded,
        "budget": meta.get("budget"),
        "reps": meta.get("reps"),
        "checks": len(checks),
        "as_expected": sum(bool(c["passed"]) for c in checks),
        "roles": results.get("roles"),
        "headline": results.get("headline"),
        "audit": audit_rows(results) if "headline" in results else [],
        "blocks": meta.get("blocks"),
        "cpu_seconds_by_experiment_kind": meta.get("cpu_seconds_by_experiment_kind"),
        # the run's own start estimate and running estimates (checked against the wall time)
        "estimate": meta.get("estimate"),
        # where the CPU went (the main process's own time; calcheck bench --project-cores)
        "cpu": meta.get("cpu"),
        "seed": meta.get("seed"),
        "false_alarm": meta.get("false_alarm"),
        "check_rows": check_rows(results),
    }
    out = ROOT / "docs" / "measurements" / f"{name}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", dir=out.parent, delete=False, suffix=".tmp") as f:
        json.dump(record, f, indent=1)
        f.write("\n")
    os.replace(f.name, out)
    return record


def main(argv=None) -> int:
    """Command line: ``record_run.py NAME -- COMMAND ...``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("name", help="measurement name, e.g. quick or full")
    parser.add_argument(
        "--loaded",
        action="store_true",
        help="record even if the machine is not idle (the record is marked loaded)",
    )
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- then the command")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command to measure after --")
    try:
        record = measure(args.name, command, allow_loaded=args.loaded)
    except ValueError as exc:
        print(f"record_run: {exc}", file=sys.stderr)  # noqa: T201
        return 2
    if record["loaded"]:
        print(f"record_run: marked loaded: {record['loaded_because']}", file=sys.stderr)  # noqa: T201
    print(json.dumps(record, indent=1))  # noqa: T201 (a script: it reports what it measured)
    return 0 if record["exit_status"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
