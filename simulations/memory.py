"""Memory estimates made before any allocation: refuse sizes that cannot fit.

One home for the rule "estimate, then refuse with the largest size that fits": a caller
states how many float64 arrays of ``n x reps`` entries it holds at once (``arrays``; a
fraction is fine, e.g. 0.5 for a float32-sized array) and :func:`check_fits` raises
:class:`MemoryRefused` (a ``ValueError``) naming the size, the estimate, the memory
available and the largest ``n`` that fits, instead of letting numpy fail with
"Unable to allocate 728 TiB" (or the machine swap) later.

The memory available is the kernel's ``MemAvailable`` (``/proc/meminfo``), capped by a
cgroup v2 limit when one is set; elsewhere ``os.sysconf``'s available pages. Where none
can be read the check is skipped (never a false refusal).
"""

from __future__ import annotations

import logging
import math
import os
from pathlib import Path

__all__ = [
    "BLOCK_ARRAYS",
    "MemoryRefused",
    "available_bytes",
    "check_count_fits",
    "check_experiments_fit",
    "check_fits",
    "check_outcomes_fit",
    "largest_fitting",
    "needed_bytes",
]

_log = logging.getLogger(__name__)

#: Bytes of one float64 entry.
_FLOAT64 = 8
#: Float64 arrays of ``cost x BLOCK_REPS`` entries an experiment holds at once while it
#: simulates one block (measured with tracemalloc: 5.1 for binning on uniform laws, 9.1 on
#: beta_labels, 2.3 for gr22's class-wise experiments; rounded up). An experiment may
#: declare its own as a ``memory_arrays`` attribute.
BLOCK_ARRAYS = 10
#: Float64 arrays of ``reps x n_bins`` entries a cell's outcome holds while evaluated
#: (its per-bin arrays, and their concatenation over blocks).
OUTCOME_ARRAYS = 4


class MemoryRefused(ValueError):
    """A size whose estimated memory exceeds the memory available (raised before allocating)."""


def _meminfo_available() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024  # the kernel reports kB
    except (OSError, ValueError, IndexError):
        pass
    return None


def _cgroup_room() -> int | None:
    """Room left under a cgroup v2 memory limit (None when unlimited or unreadable)."""
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        if limit == "max":
            return None
        used = int(Path("/sys/fs/cgroup/memory.current").read_text().strip())
        return max(0, int(limit) - used)
    except (OSError, ValueError):
        return None


def _sysconf_available() -> int | None:
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return None


def available_bytes() -> int | None:
    """Memory available to this process now, in bytes (None where it cannot be read)."""
    found = _meminfo_available()
    if found is None:
        found = _sysconf_available()
    room = _cgroup_room()
    if room is not None:
        found = room if found is None else min(found, room)
    return found


def needed_bytes(*, n: int, reps: int, arrays: float) -> float:
    """Bytes of ``arrays`` float64 arrays of ``n x reps`` entries."""
    return float(arrays) * float(n) * float(reps) * _FLOAT64


def largest_fitting(*, reps: int, arrays: float, available: int | None = None) -> int | None:
    """The largest ``n`` whose ``arrays`` float64 arrays of ``n x reps`` fit in ``available``.

    ``available`` defaults to :func:`available_bytes`; returns None where that is unknown,
    and 0 where not even ``n = 1`` fits.
    """
    if available is None:
        available = available_bytes()
        if available is None:
            return None
    return math.floor(available / (float(arrays) * float(reps) * _FLOAT64))


def _size(nbytes: float) -> str:
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if nbytes >= scale:
            return f"{nbytes / scale:.1f} {unit}"
    return f"{nbytes / 1e3:.1f} kB"


def check_fits(
    *,
    n: int,
    reps: int,
    arrays: float,
    what: str,
    available: int | None = None,
    name: str = "n",
    detail: str = "",
) -> None:
    """Refuse ``n`` before allocating when its estimate exceeds the memory available.

    Parameters
    ----------
    n, reps : int
        The two dimensions of the arrays held at once (``reps`` is the replicates held at
        once: a block's, not the whole run's, where blocks bound the allocation).
    arrays : float
        How many float64 arrays of ``n x reps`` entries are held at once.
    what : str
        What is being sized, for the message (e.g. ``"study file 's.toml'"``).
    available : int, optional
        Bytes available; by default :func:`available_bytes` (the check is skipped where it
        cannot be read).
    name : str, default "n"
        The argument's name in the message.
    detail : str, optional
        Said after the arrays in the message (e.g. what ``reps`` counts).

    Raises
    ------
    MemoryRefused
        ``"<what>: n = 30000000 with reps = 200 needs about 96.0 GB (2 arrays of n x reps
        float64), more than the 7.6 GB available; the largest n that fits is 2375000"``.
    """
    if available is None:
        available = available_bytes()
        if available is None:
            _log.debug("memory available unknown: %s not checked", what)
            return
    need = needed_bytes(n=n, reps=reps, arrays=arrays)
    if need <= available:
        return
    largest = largest_fitting(reps=reps, arrays=arrays, available=available)
    advice = (
        f"the largest {name} that fits is {largest}"
        if largest >= 1
        else f"no {name} fits with reps = {reps}; lower reps"
    )
    detail = f"; {detail}" if detail else ""
    raise MemoryRefused(
        f"{what}: {name} = {n} with reps = {reps} needs about {_size(need)} ({arrays:.3g} arrays "
        f"of {name} x reps float64{detail}), more than the {_size(available)} available; {advice}"
    )


def _workers(n_jobs) -> int:
    """Workers that ``n_jobs`` starts (joblib's convention: -1 is every core).

    The engine validates ``n_jobs`` itself, so anything else counts as one here.
    """
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int):
        return 1
    if n_jobs < 0:
        return max(1, (os.cpu_count() or 1) + 1 + n_jobs)
    return max(1, n_jobs)


def check_experiments_fit(
    experiments,
    *,
    reps: int | None = None,
    n_jobs: int = 1,
    what: str,
    available=None,
    evaluators: int = 1,
) -> None:
    """Refuse experiments whose blocks (or cell outcomes) cannot fit, before simulating.

    The engine simulates one block of ``BLOCK_REPS`` replicates at a time in each worker,
    so what is held at once is ``n_jobs`` blocks of ``BLOCK_ARRAYS`` arrays of
    ``memory_points`` entries per replicate each (an experiment's ``cost`` where it declares
    none: its simulated points per replicate), not all
    ``reps`` at once; evaluating a cell then holds its outcome, ``OUTCOME_ARRAYS`` arrays
    of ``reps x n_bins``, in each of the ``evaluators`` processes that evaluate cells at
    once (the checks evaluated beside the workers). ``reps`` None skips the outcome estimate.

    Raises
    ------
    MemoryRefused
        Naming the experiment's ``n`` (or ``n_bins``) and the largest that fits.
    """
    from .experiments.base import BLOCK_REPS

    if available is None:
        available = available_bytes()
        if available is None:
            return
    workers = _workers(n_jobs)
    held = BLOCK_REPS * workers
    for exp in experiments:
        n = int(getattr(exp, "n_total", 0) or 0)
        points = int(getattr(exp, "memory_points", getattr(exp, "cost", 0)) or 0)
        if n >= 1 and points >= 1:
            arrays = getattr(exp, "memory_arrays", BLOCK_ARRAYS) * points / n
            check_fits(
                n=n,
                reps=held,
                arrays=arrays,
                what=what,
                available=available,
                detail=f"reps here is {BLOCK_REPS} replicates of one block in each of {workers} "
                "worker(s), held at once",
            )
        bins = int(getattr(exp, "n_bins", 0) or 0)
        if reps is not None and bins >= 1:
            held_by = (
                f", in each of {evaluators} evaluating processes (one per worker: fewer jobs "
                "hold fewer)"
                if evaluators > 1
                else ""
            )
            check_fits(
                n=bins,
                reps=int(reps) * max(1, int(evaluators)),
                arrays=OUTCOME_ARRAYS,
                what=what,
                available=available,
                name="n_bins",
                detail=f"a cell's per-bin outcome, every replicate at once{held_by}",
            )


def check_outcomes_fit(
    experiments, *, reps: int, n_jobs: int = 1, what: str, available=None, name: str = "reps"
) -> None:
    """Refuse a replicate count whose outcomes cannot fit, held in every worker at once.

    Where each worker evaluates a whole cell at a time (a search's criterion on its common
    random numbers, the comparison with the known laws), each holds a cell's outcome of
    ``reps`` replicates: ``OUTCOME_ARRAYS`` arrays of ``reps x n_bins``, in each of the
    workers ``n_jobs`` starts. Unlike :func:`check_experiments_fit`, the size refused is the
    replicate count (``name`` in the message).

    Raises
    ------
    MemoryRefused
        ``"<what>: reps = 1000000000 replicates of 10 bins, held at once in each of 2
        worker(s), need about 640.0 GB (4 arrays of reps x n_bins float64), more than the
        7.6 GB available; the largest reps that fits is 11875000"``.
    """
    if available is None:
        available = available_bytes()
        if available is None:
            return
    bins = max((int(getattr(exp, "n_bins", 0) or 0) for exp in experiments), default=0)
    if bins < 1:
        return
    workers = _workers(n_jobs)
    per_replicate = OUTCOME_ARRAYS * bins * _FLOAT64 * workers
    need = per_replicate * float(reps)
    if need <= available:
        return
    largest = math.floor(available / per_replicate)
    raise MemoryRefused(
        f"{what}: {name} = {reps} replicates of {bins} bins, held at once in each of "
        f"{workers} worker(s), need about {_size(need)} ({OUTCOME_ARRAYS} arrays of "
        f"reps x n_bins float64), more than the {_size(available)} available; "
        + (f"the largest {name} that fits is {largest}" if largest >= 1 else "no reps fits")
    )


def check_count_fits(
    *, count: int, bytes_each: float, what: str, name: str, detail: str, available=None
) -> None:
    """Refuse ``count`` things of ``bytes_each`` bytes each that cannot fit, before any work.

    For what grows with a count rather than with ``n x reps`` arrays (a search keeps every
    law it evaluates and its value).

    Raises
    ------
    MemoryRefused
        ``"<what>: evaluations = 100000000 need about 30.0 GB (every law evaluated and its
        value, about 300 bytes each), more than the 7.6 GB available; the largest
        evaluations that fits is 25333333"``.
    """
    if available is None:
        available = available_bytes()
        if available is None:
            return
    need = float(count) * float(bytes_each)
    if need <= available:
        return
    raise MemoryRefused(
        f"{what}: {name} = {count} need about {_size(need)} ({detail}, about {bytes_each:g} "
        f"bytes each), more than the {_size(available)} available; the largest {name} that "
        f"fits is {math.floor(available / float(bytes_each))}"
    )
