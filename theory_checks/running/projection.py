"""What a recorded run would take on K workers: Amdahl's law with its inputs measured.

A run's ``results.json`` says where its time went (:func:`run_cpu_record`, written by
``calcheck run`` into ``meta["cpu"]``): the simulation's CPU time (the workers', by kind of
experiment), the checks' evaluations (in processes beside the workers, or in the main
process), the pictures and the main process's own CPU time, and when the first and the
last block were stored. :func:`project_cores` spreads the parallel work over K workers:

``T(K) = S + max(P / K, M)``

- ``S``, the serial part: the time before the first block was stored (imports, the
  store's inventory, the timing probes) and after the last one (the last evaluations and
  the report), as measured;
- ``P``, the work that shares the cores: the simulation's CPU time, the evaluations', the
  side processes' (pictures) and the main process's;
- ``M``, the main process's CPU time: one process, which no number of workers spreads
  (its part before the first block is in ``S`` too, so ``M`` errs on the slow side).

On the machine that recorded the run (K = its workers) the formula gives back about the
wall time measured, which is its test; on more cores it assumes a block costs the CPU time
it cost there (no slower memory, no faster cores) and that the run has enough blocks to
keep K workers busy (a quick run has 14,040).
"""

from __future__ import annotations

import json
import resource
import time
from dataclasses import dataclass
from pathlib import Path

from ..results.export import Exportable

__all__ = ["CoreProjection", "project_cores", "run_cpu_record"]


def run_cpu_record(run, started: float, estimate: dict) -> dict:
    """``meta["cpu"]`` of a run: the inputs of :func:`project_cores`, measured now.

    ``run`` is the :class:`~.runner.RunResult`, ``started`` the ``time.monotonic()`` at the
    command's start, ``estimate`` the run's estimate record (first and last block stored).
    The side processes (evaluations, pictures) count once they have ended; so do, in
    ``side_processes_seconds``, a dask local cluster's workers and loky workers replaced
    during the run (their simulation also in ``simulation_seconds``: the projection then
    errs on the slow side).
    """
    own = resource.getrusage(resource.RUSAGE_SELF)
    side = resource.getrusage(resource.RUSAGE_CHILDREN)
    simulation = sum(sec for _, sec in run.stats.seconds_by_kind.values())
    return {
        "wall_seconds_before_report": round(time.monotonic() - started, 3),
        "main_process_seconds": round(own.ru_utime + own.ru_stime, 3),
        "main_thread_seconds": round(time.thread_time(), 3),
        "simulation_seconds": round(simulation, 3),
        "evaluation_seconds": round(run.evaluation_cpu_seconds, 3),
        "evaluation_processes": run.evaluation_processes,
        "side_processes_seconds": round(side.ru_utime + side.ru_stime, 3),
        "first_block_stored_at_seconds": estimate.get("first_block_stored_at_seconds"),
        "last_block_stored_at_seconds": estimate.get("last_block_stored_at_seconds"),
    }


@dataclass(frozen=True)
class CoreProjection(Exportable):
    """The wall time of a recorded run projected to ``cores`` workers, with its inputs.

    ``serial_seconds`` (S), ``parallel_cpu_seconds`` (P) and ``main_process_seconds`` (M)
    as in the module docstring; ``recorded_workers`` and ``recorded_wall_seconds`` the run's
    own; ``recorded_projection_seconds`` the formula at ``recorded_workers`` (compare it
    with ``recorded_wall_seconds``); ``projected_seconds`` the formula at ``cores``.
    """

    source: str
    cores: int
    serial_seconds: float
    parallel_cpu_seconds: float
    main_process_seconds: float
    recorded_workers: int
    recorded_wall_seconds: float
    recorded_projection_seconds: float
    projected_seconds: float

    def summary(self) -> str:
        """The projection in words, its inputs first."""
        return (
            f"recorded run ({self.source}): {self.recorded_workers} workers, "
            f"{self.recorded_wall_seconds:.1f} s before its report\n"
            f"  S serial (before the first block, after the last) {self.serial_seconds:.1f} s; "
            f"P work sharing the cores (simulation, evaluations, pictures, main process) "
            f"{self.parallel_cpu_seconds:.1f} CPU-s; M main process {self.main_process_seconds:.1f}"
            " CPU-s\n"
            f"  T(K) = S + max(P / K, M): T({self.recorded_workers}) = "
            f"{self.recorded_projection_seconds:.1f} s (recorded {self.recorded_wall_seconds:.1f} "
            f"s, ratio {self.recorded_projection_seconds / self.recorded_wall_seconds:.2f}); "
            f"T({self.cores}) = {self.projected_seconds:.1f} s"
        )


def _wall(serial: float, parallel: float, main: float, cores: int) -> float:
    return serial + max(parallel / cores, main)


def project_cores(results_path, cores: int) -> CoreProjection:
    """Project the run recorded in ``results_path`` (its ``results.json``) to ``cores`` workers.

    Raises
    ------
    ValueError
        For ``cores`` not a positive integer, or a results file without ``meta["cpu"]`` (a
        run of a calcheck before this record, or not a run's results).
    """
    if isinstance(cores, bool) or not isinstance(cores, int) or cores < 1:
        raise ValueError(f"cores must be a positive integer, got {cores!r}")
    path = Path(results_path)
    if path.is_dir():
        path = path / "results.json"
    try:
        meta = json.loads(path.read_text(encoding="utf-8")).get("meta", {})
    except (OSError, ValueError, AttributeError) as exc:
        raise ValueError(f"cannot read a run's results from {str(path)!r}: {exc}") from None
    cpu = meta.get("cpu") if isinstance(meta, dict) else None
    needed = ("wall_seconds_before_report", "main_process_seconds", "simulation_seconds")
    if not isinstance(cpu, dict) or any(not isinstance(cpu.get(k), int | float) for k in needed):
        raise ValueError(
            f"{str(path)!r} has no CPU record (meta['cpu']): rerun it with this calcheck "
            "(calcheck run writes it)"
        )
    first = cpu.get("first_block_stored_at_seconds") or 0.0
    wall = float(cpu["wall_seconds_before_report"])
    last = cpu.get("last_block_stored_at_seconds") or wall
    serial = first + max(0.0, wall - last)
    main = float(cpu["main_process_seconds"])
    # the side processes' time holds the evaluations' where processes made them, and the
    # main process's holds them where it did: each counted once
    side = float(cpu.get("side_processes_seconds") or 0.0)
    parallel = float(cpu["simulation_seconds"]) + side + main
    workers = int(meta.get("jobs") or 1)
    return CoreProjection(
        str(path),
        cores,
        round(serial, 3),
        round(parallel, 3),
        round(main, 3),
        workers,
        wall,
        round(_wall(serial, parallel, main, workers), 3),
        round(_wall(serial, parallel, main, cores), 3),
    )
