"""Monte Carlo engine: replicate blocks, parallel execution, resumable storage.

Seed protocol
-------------
An *experiment* (:mod:`calcheck.simulations.experiments`) is one law x method x estimand. Its
replicates come in blocks of :data:`BLOCK_REPS`; block ``k`` draws from
``generator(root_seed, experiment.seed_key, k)`` (:func:`calcheck.simulations.provenance.generator`)
-- one SeedSequence child per replicate block, derived from the recorded root seed and the
experiment's content hash (adding or removing other experiments changes nothing). Results
are therefore bit-identical for any ``n_jobs``, any number of blocks per task, any backend,
and after an interrupted run is resumed. Replicates are rounded up to whole blocks.

Provenance
----------
Blocks are stored under the experiment's code stamp (package version + hash of the code
that simulates it); a block stored by other code is never reused: it is recomputed and
counted as ``stale`` in the returned :class:`RunStats`.
"""

from __future__ import annotations

import dataclasses
import logging
import math
from collections.abc import Callable, Iterable
from contextlib import ExitStack
from dataclasses import dataclass

import numpy as np

from .experiments.base import BLOCK_REPS
from .parallel import parallel_results
from .provenance import check_root_seed, generator
from .store import ResultStore

__all__ = [
    "BLOCK_REPS",
    "MAX_BLOCKS_PER_CELL",
    "RunEstimate",
    "RunStats",
    "load_outcome",
    "n_blocks_for",
    "run_experiments",
    "simulate_block",
]

logger = logging.getLogger(__name__)

# Points (replicates x n) simulated per parallel task: a few tens of milliseconds of work.
_POINTS_PER_TASK = 2_000_000
_BACKENDS = ("loky", "dask", "threading", "sequential")

#: Hard limit on blocks per experiment (10^8 replicates): beyond it the outcome of one cell
#: does not fit in memory, whatever the time allowed.
MAX_BLOCKS_PER_CELL = 1_000_000


@dataclass(frozen=True)
class RunStats:
    """What a run did: blocks computed now, reused from the store, and stale ones.

    ``stale`` counts blocks of the same experiments and seed stored by *other code* (another
    code stamp): they are never reused, and were recomputed now. ``damaged`` counts stored
    blocks that failed their digest or shape check: deleted and recomputed now.
    """

    computed: int
    reused: int
    stale: int = 0
    experiments: int = 0
    damaged: int = 0
    #: ``{experiment kind: (blocks computed, core-seconds)}`` of this run, where time goes.
    seconds_by_kind: dict = dataclasses.field(default_factory=dict)


@dataclass(frozen=True)
class RunEstimate:
    """What a run is about to cost, measured on one calibration block per experiment kind.

    The calibration blocks are real blocks (stored and counted as computed). ``seconds`` is
    the wall-clock estimate on the run's workers, ``bytes`` the growth of the store; both
    extrapolate each kind's calibration block by the experiments' declared ``cost``.
    """

    blocks: int
    seconds: float
    bytes: int
    workers: int
    calibration_blocks: int = 0


def simulate_block(experiment, root_seed: int, block: int):
    """Simulate replicate block ``block`` of an experiment; returns its typed outcome.

    The block's generator is :func:`calcheck.simulations.provenance.generator` at
    ``(root_seed, experiment.seed_key, block)``.
    """
    return experiment.simulate(generator(root_seed, experiment.seed_key, int(block)), BLOCK_REPS)


def _simulate_chunk(experiment, root_seed: int, blocks: list[int]):
    import time

    start = time.process_time()  # CPU time of this worker: where the run's time goes
    payloads = [(b, simulate_block(experiment, root_seed, b).arrays()) for b in blocks]
    return experiment.key, payloads, time.process_time() - start


def n_blocks_for(reps: int) -> int:
    """Blocks of BLOCK_REPS replicates needed for ``reps`` (validated)."""
    if isinstance(reps, bool) or not isinstance(reps, int | np.integer) or reps < 1:
        raise ValueError(f"reps must be a positive integer, got {reps!r}")
    n = math.ceil(reps / BLOCK_REPS)
    if n > MAX_BLOCKS_PER_CELL:
        raise ValueError(
            f"reps must be at most {MAX_BLOCKS_PER_CELL * BLOCK_REPS:.0e} per cell (one cell's "
            f"outcome must fit in memory), got {reps!r}"
        )
    return n


def _cost(key_and_experiment) -> int:
    return key_and_experiment[1].cost


def _first_missing(done: set[int]) -> int:
    b = 0
    while b in done:
        b += 1
    return b


def run_experiments(
    experiments: Iterable,
    reps: int,
    root_seed: int,
    store: ResultStore,
    *,
    n_jobs: int = 1,
    backend: str = "loky",
    blocks_per_task: int | None = None,
    progress: bool = False,
    on_block: Callable[[str, int], None] | None = None,
    heartbeat: Callable[[int, int, float], None] | None = None,
    on_estimate: Callable[[RunEstimate], None] | None = None,
    on_cell_done: Callable[[str], None] | None = None,
) -> RunStats:
    """Simulate every missing block of ``experiments`` and store each one as it arrives.

    Parameters
    ----------
    experiments : iterable of Experiment
        Anything with ``key``, ``seed_key``, ``code_stamp``, ``cost``, ``description()``
        and ``simulate(rng, reps)`` (:mod:`calcheck.simulations.experiments`).
    reps : int
        Replicates per experiment (rounded up to whole blocks of BLOCK_REPS).
    root_seed : int
        Recorded root of the seed protocol.
    store : ResultStore
        Blocks already stored for this seed are skipped (resume).
    n_jobs : int, default 1
        Parallel workers.
    backend : {"loky", "dask", "threading", "sequential"}
        joblib backend; "dask" needs the ``distributed`` extra and uses the current dask
        client, or starts a local cluster of ``n_jobs`` workers.
    blocks_per_task : int, optional
        Blocks simulated per task; by default sized to a few tens of milliseconds. Does not
        change results.
    progress : bool
        Show a tqdm progress bar on standard error.
    on_block : callable, optional
        Called as ``on_block(cell_key, block)`` after each block is committed.
    heartbeat : callable, optional
        Called as ``heartbeat(done, total, work_done)`` after each block is committed: blocks
        computed in this run, and the share of the run's CPU time they stand for (see
        ``_Progress``), e.g. to report progress where no progress bar can be drawn.
    on_estimate : callable, optional
        Called as ``on_estimate(RunEstimate)`` after one calibration block per experiment
        kind is simulated and stored, before the rest; it may raise to refuse the run.
    on_cell_done : callable, optional
        Called as ``on_cell_done(cell_key)`` once every block of an experiment is stored:
        at the start for experiments already complete, then as each one completes (the
        caller may evaluate what reads it and drop its blocks).

    Returns
    -------
    RunStats
        Blocks computed now, reused from the store (same seed, experiment and code stamp),
        and stale (stored by other code, recomputed).
    """
    root_seed = check_root_seed(root_seed)
    if backend not in _BACKENDS:
        raise ValueError(f"backend must be one of {_BACKENDS}, got {backend!r}")
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs == 0 or n_jobs < -1:
        raise ValueError(f"n_jobs must be a positive integer or -1, got {n_jobs!r}")
    n_blocks = n_blocks_for(reps)
    unique = {e.key: e for e in experiments}
    stamps = {key: e.code_stamp for key, e in unique.items()}
    done, reused, stale = {}, 0, 0
    damaged_before = len(store.damaged)
    for key, exp in unique.items():
        store.describe_cell(key, exp.description())
        done[key] = {b for b in store.done_blocks(root_seed, key, stamps[key]) if b < n_blocks}
        reused += len(done[key])
        stale += len(
            {b for b in store.stale_blocks(root_seed, key, stamps[key]) if b < n_blocks} - done[key]
        )
    total = len(unique) * n_blocks - reused
    logger.info(
        "%d experiments: %d blocks to compute, %d reused, %d stale (other code)",
        len(unique),
        total,
        reused,
        stale,
    )
    if total and store.read_only:
        raise ValueError(
            f"the store {store.path!r} is read-only and lacks {total} of the blocks this run "
            "needs; make it writable or choose another --out"
        )
    if total:
        store.set_meta("root_seed", root_seed)
    count = {"done": 0}
    by_kind: dict = {}
    # estimated seconds per block of each experiment (1 until calibration measures them)
    weight = dict.fromkeys(unique, 1.0)
    kind_of = {key: type(e).__name__ for key, e in unique.items()}
    progress_ = _Progress(kind_of, weight, {k: n_blocks - len(done[k]) for k in unique})

    def account(key, n_blocks_done, seconds):
        kind = kind_of[key]
        blocks_before, seconds_before = by_kind.get(kind, (0, 0.0))
        by_kind[kind] = (blocks_before + n_blocks_done, seconds_before + seconds)
        progress_.account(kind, seconds)

    def commit(key, block, arrays):
        store.put(root_seed, key, stamps[key], block, arrays)
        done[key].add(block)
        count["done"] += 1
        progress_.commit(key)
        if on_block is not None:
            on_block(key, block)
        if heartbeat is not None:
            heartbeat(count["done"], total, progress_.share())
        if on_cell_done is not None and len(done[key]) == n_blocks:
            on_cell_done(key)

    if on_cell_done is not None:
        for key in [k for k in unique if len(done[k]) == n_blocks]:
            on_cell_done(key)

    if total and on_estimate is not None:
        compress = getattr(store, "compress", True)
        estimate = _calibrate(
            unique, done, n_blocks, root_seed, n_jobs, commit, account, compress, weight
        )
        # from here on the blocks left are weighed by their estimated seconds
        progress_.reweigh({k: n_blocks - len(done[k]) for k in unique})
        on_estimate(estimate)
    tasks = []
    for key, exp in unique.items():
        missing = [b for b in range(n_blocks) if b not in done[key]]
        per = blocks_per_task or max(1, _POINTS_PER_TASK // (BLOCK_REPS * exp.cost))
        tasks += [(exp, missing[i : i + per]) for i in range(0, len(missing), per)]
    damaged = len(store.damaged) - damaged_before
    stats = RunStats(total, reused, stale, len(unique), damaged, by_kind)
    if not tasks:
        return stats

    from tqdm.auto import tqdm

    with ExitStack() as stack:
        bar = stack.enter_context(
            tqdm(total=total, disable=not progress, unit="block", desc="calcheck", leave=False)
        )
        bar.update(count["done"])
        if backend == "sequential" or (n_jobs == 1 and backend == "loky"):
            results = (_simulate_chunk(exp, root_seed, blocks) for exp, blocks in tasks)
        else:
            results = parallel_results(_simulate_chunk, tasks, root_seed, n_jobs, backend, stack)
            # an interruption (SIGINT, SIGTERM) or an error between two results leaves the
            # generator suspended: close it on the way out, while the warning filters of
            # parallel_results still hold, so the workers stop now rather than at garbage
            # collection and joblib's "tasks ... cancelled" warning is not shown
            stack.callback(results.close)
        for key, payloads, seconds in results:
            account(key, len(payloads), seconds)
            for block, arrays in payloads:
                commit(key, block, arrays)
                bar.update(1)
    return stats


class _Progress:
    """The share of a run's work (CPU time) done, for its progress line.

    Measured for the blocks done; for those left, their estimated seconds (``weight``)
    times their kind's measured / estimated ratio so far (overall ratio for a new kind).
    """

    def __init__(self, kind_of, weight, left):
        self.kind_of, self.weight = kind_of, weight
        self.cpu, self.committed = {}, {}
        self.reweigh(left)

    def reweigh(self, left):
        """Blocks left per experiment; every block weighed by the current ``weight``."""
        self.est_left = dict.fromkeys(self.kind_of.values(), 0.0)
        for key, n in left.items():
            self.est_left[self.kind_of[key]] += n * self.weight[key]
        self.est_done = {}
        for key, n in self.committed.items():
            kind = self.kind_of[key]
            self.est_done[kind] = self.est_done.get(kind, 0.0) + n * self.weight[key]

    def account(self, kind, seconds):
        """CPU seconds measured for blocks of ``kind``."""
        self.cpu[kind] = self.cpu.get(kind, 0.0) + seconds

    def commit(self, key):
        """One block of experiment ``key`` stored."""
        kind, w = self.kind_of[key], self.weight[key]
        self.committed[key] = self.committed.get(key, 0) + 1
        self.est_left[kind] = max(0.0, self.est_left[kind] - w)
        self.est_done[kind] = self.est_done.get(kind, 0.0) + w

    def share(self) -> float:
        """Work done / (done + left), in [0, 1]."""
        seen = [k for k in self.cpu if self.est_done.get(k, 0.0) > 0]
        est = sum(self.est_done[k] for k in seen)
        overall = sum(self.cpu[k] for k in seen) / est if est > 0 else 1.0
        done = sum(self.cpu.values())
        left = sum(
            w * (self.cpu[k] / self.est_done[k] if k in seen else overall)
            for k, w in self.est_left.items()
        )
        return done / (done + left) if done + left > 0 else 1.0


def _calibrate(
    unique, done, n_blocks, root_seed, n_jobs, commit, account, compress=True, weight=None
) -> RunEstimate:
    """Simulate (and commit) one block of the costliest experiment of each kind; extrapolate.

    ``weight`` (a dict), if given, receives each experiment's estimated seconds per block.
    """
    import os

    from .store import _pack

    kinds: dict[str, list] = {}
    for key, exp in unique.items():
        kinds.setdefault(type(exp).__name__, []).append((key, exp))
    seconds = size = 0.0
    blocks = calibrated = 0
    for members in kinds.values():
        todo = [(k, e) for k, e in members if len(done[k]) < n_blocks]
        if not todo:
            continue
        # time per block = overhead + per_point * cost, from the costliest and cheapest cells
        probes = {k: e for k, e in (max(todo, key=_cost), min(todo, key=_cost))}
        timed = []
        for key, exp in probes.items():
            block = _first_missing(done[key])
            _, [(_, arrays)], spent = _simulate_chunk(exp, root_seed, [block])
            timed.append((exp.cost, spent, len(_pack(arrays, compress))))
            account(key, 1, spent)
            commit(key, block, arrays)
            calibrated += 1
        (c_hi, t_hi, _), (c_lo, t_lo, _) = timed[0], timed[-1]
        per_point = (t_hi - t_lo) / (c_hi - c_lo) if c_hi > c_lo else 0.0
        if per_point <= 0:
            overhead, per_point = 0.0, max(t_hi, t_lo) / c_hi
        else:
            overhead = max(0.0, t_lo - per_point * c_lo)
        bytes_per_block = max(t[2] for t in timed)
        for k, e in todo:
            left = n_blocks - len(done[k])
            blocks += left
            seconds += left * (overhead + e.cost * per_point)
            if weight is not None:
                weight[k] = max(overhead + e.cost * per_point, 1e-9)
            size += left * bytes_per_block
    workers = max(1, min(os.cpu_count() or 1, n_jobs if n_jobs > 0 else os.cpu_count() or 1))
    return RunEstimate(blocks, seconds / workers, int(size), workers, calibrated)


def load_outcome(store: ResultStore, experiment, reps: int, root_seed: int):
    """All stored replicates of an experiment (whole blocks, block order), as its outcome."""
    arrays = store.load(
        check_root_seed(root_seed), experiment.key, experiment.code_stamp, range(n_blocks_for(reps))
    )
    return experiment.outcome_type.from_arrays(arrays)
