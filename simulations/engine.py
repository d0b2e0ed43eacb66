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

from .collector import Collector
from .experiments.base import BLOCK_REPS
from .parallel import parallel_results, usable_cpus
from .payload import pack_block
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
    """What a run is about to cost, measured on its first blocks: one or two per kind.

    The timing probes are the run's first tasks, real blocks (stored and counted as
    computed), simulated in parallel on the workers before the rest. ``seconds`` is the CPU time
    of the blocks left, extrapolated from each kind's probes by the experiments' declared
    ``cost``, over the run's workers; ``bytes`` the growth of the store.
    """

    blocks: int
    seconds: float
    bytes: int
    workers: int
    calibration_blocks: int = 0
    #: Blocks stored by this run when the estimate was made (the probes among them).
    stored: int = 0


def simulate_block(experiment, root_seed: int, block: int):
    """Simulate replicate block ``block`` of an experiment; returns its typed outcome.

    The block's generator is :func:`calcheck.simulations.provenance.generator` at
    ``(root_seed, experiment.seed_key, block)``.
    """
    return experiment.simulate(generator(root_seed, experiment.seed_key, int(block)), BLOCK_REPS)


def _simulate_chunk(experiment, root_seed: int, blocks: list[int], code: str, compress: bool):
    """Simulate blocks and pack them for the store (in a worker): ``(key, rows, cpu s)``.

    Each row is ``(block, reps, payload, digest)`` (:func:`pack_block`): the main process
    only inserts it.
    """
    import time

    start = time.process_time()  # CPU time of this worker: where the run's time goes
    rows = []
    for b in blocks:
        outcome = simulate_block(experiment, root_seed, b)
        arrays = {k: np.asarray(v) for k, v in outcome.arrays().items()}
        rows.append((b, *pack_block(root_seed, experiment.key, code, b, arrays, compress)))
    return experiment.key, rows, time.process_time() - start


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
        Called as ``on_block(cell_key, block)`` for each block once its batch is committed
        (:mod:`calcheck.simulations.collector`).
    heartbeat : callable, optional
        Called as ``heartbeat(done, total, work_done)`` after each batch is committed: blocks
        computed in this run, and the share of the run's CPU time they stand for (see
        :class:`~calcheck.simulations.collector.Progress`), e.g. to report progress where no
        progress bar can be drawn.
    on_estimate : callable, optional
        Called as ``on_estimate(RunEstimate)`` once the timing probes (the run's first
        tasks: one or two blocks per experiment kind) are stored; it may raise to refuse the
        run (the blocks stored by then are kept).
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
    # estimated seconds per block of each experiment (1 until the probes measure them)
    weight = dict.fromkeys(unique, 1.0)
    kind_of = {key: type(e).__name__ for key, e in unique.items()}
    collector = Collector(store, root_seed, stamps, n_blocks, done, kind_of, weight, total)
    collector.on_block, collector.heartbeat = on_block, heartbeat
    collector.on_cell_done = on_cell_done
    if on_cell_done is not None:
        for key in [k for k in unique if len(done[k]) == n_blocks]:
            on_cell_done(key)
    compress = getattr(store, "compress", True)
    # the timing probes run first, in parallel on the workers (no longer one after another)
    probes = _probes(unique, done, n_blocks) if total and on_estimate is not None else []
    tasks = [(unique[key], root_seed, [block], stamps[key], compress) for key, block in probes]
    probed = set(probes)
    for key, exp in unique.items():
        missing = [b for b in range(n_blocks) if b not in done[key] and (key, b) not in probed]
        per = blocks_per_task or max(1, _POINTS_PER_TASK // (BLOCK_REPS * exp.cost))
        tasks += [
            (exp, root_seed, missing[i : i + per], stamps[key], compress)
            for i in range(0, len(missing), per)
        ]
    damaged = len(store.damaged) - damaged_before
    stats = RunStats(total, reused, stale, len(unique), damaged, collector.by_kind)
    if not tasks:
        return stats
    timed: dict = {}  # probe -> (cost, cpu seconds, payload bytes)

    from tqdm.auto import tqdm

    with ExitStack() as stack:
        collector.bar = stack.enter_context(
            tqdm(total=total, disable=not progress, unit="block", desc="calcheck", leave=False)
        )
        sequential = backend == "sequential" or (n_jobs == 1 and backend == "loky")
        generation = 0 if sequential else _workers_generation(stamps)

        def results_of(batch):
            if sequential:
                return (_simulate_chunk(*task) for task in batch)
            results = parallel_results(_simulate_chunk, batch, n_jobs, backend, stack, generation)
            # an interruption (SIGINT, SIGTERM) or an error between two results leaves the
            # generator suspended: close it on the way out, while the warning filters of
            # parallel_results still hold, so the workers stop now rather than at garbage
            # collection and joblib's "tasks ... cancelled" warning is not shown
            stack.callback(results.close)
            return results

        try:
            if probes:
                # the probes in parallel first (one block each); nothing else runs until the
                # estimate is accepted, so a refused run has simulated only them
                for result in results_of(tasks[: len(probes)]):
                    collector.receive(result)
                    key, [(block, _, payload, _)], seconds = result
                    timed[key, block] = (unique[key].cost, seconds, len(payload))
                collector.flush()
                estimate = _estimate(unique, done, n_blocks, timed, n_jobs, weight, collector.count)
                # from here on the blocks left are weighed by their estimated seconds
                collector.progress.reweigh({k: n_blocks - len(done[k]) for k in unique})
                on_estimate(estimate)
            rest = tasks[len(probes) :]
            for result in results_of(rest) if rest else ():
                collector.receive(result)
            collector.flush()
        except BaseException:
            # an interruption or an error: what the workers returned is kept (one commit)
            if collector.pending:
                try:
                    collector.flush(callbacks=False)
                except Exception:  # the error being raised says more (a full disk, ...)
                    logger.debug("the last batch could not be stored", exc_info=True)
            raise
    return stats


#: Experiment key -> the code stamp its blocks had when this process's workers last
#: simulated it; a key seen again under another stamp (a user's module edited in a
#: notebook, or between two tests) means the workers may hold the old code.
_SIMULATED_STAMPS: dict[str, str] = {}
_GENERATION = [0]


def _workers_generation(stamps: dict) -> int:
    """The loky workers' generation: a new one whenever an experiment's code changed."""
    if any(_SIMULATED_STAMPS.get(key, stamp) != stamp for key, stamp in stamps.items()):
        _GENERATION[0] += 1
        _SIMULATED_STAMPS.clear()
    _SIMULATED_STAMPS.update(stamps)
    return _GENERATION[0]


def _probes(unique, done, n_blocks) -> list[tuple[str, int]]:
    """``(key, block)`` timed first: the costliest and cheapest experiment of each kind."""
    kinds: dict[str, list] = {}
    for key, exp in unique.items():
        kinds.setdefault(type(exp).__name__, []).append((key, exp))
    probes = []
    for members in kinds.values():
        todo = [(k, e) for k, e in members if len(done[k]) < n_blocks]
        if not todo:
            continue
        # time per block = overhead + per_point * cost, from the costliest and cheapest cells
        for key in dict.fromkeys(k for k, _ in (max(todo, key=_cost), min(todo, key=_cost))):
            probes.append((key, _first_missing(done[key])))
    return probes


def _estimate(unique, done, n_blocks, timed, n_jobs, weight, stored=0) -> RunEstimate:
    """The run's time and store growth, extrapolated from the probes' measured blocks.

    Per kind, a block's CPU time is ``overhead + per_point * cost``, fitted on its probes
    (the costliest and cheapest experiment); ``weight`` receives each experiment's
    estimated seconds per block. The wall time is the CPU time over the workers.
    """
    by_kind: dict[str, list] = {}
    for (key, _), measured in timed.items():
        by_kind.setdefault(type(unique[key]).__name__, []).append(measured)
    seconds = size = 0.0
    blocks = 0
    for kind, measured in by_kind.items():
        measured.sort(key=lambda t: -t[0])
        (c_hi, t_hi, _), (c_lo, t_lo, _) = measured[0], measured[-1]
        per_point = (t_hi - t_lo) / (c_hi - c_lo) if c_hi > c_lo else 0.0
        if per_point <= 0:
            overhead, per_point = 0.0, max(t_hi, t_lo) / c_hi
        else:
            overhead = max(0.0, t_lo - per_point * c_lo)
        bytes_per_block = max(t[2] for t in measured)
        for k, e in unique.items():
            if type(e).__name__ != kind:
                continue
            left = n_blocks - len(done[k])
            blocks += left
            seconds += left * (overhead + e.cost * per_point)
            weight[k] = max(overhead + e.cost * per_point, 1e-9)
            size += left * bytes_per_block
    cpus = usable_cpus()
    workers = max(1, min(cpus, n_jobs if n_jobs > 0 else cpus))
    return RunEstimate(blocks, seconds / workers, int(size), workers, len(timed), stored)


def load_outcome(store: ResultStore, experiment, reps: int, root_seed: int):
    """All stored replicates of an experiment (whole blocks, block order), as its outcome."""
    arrays = store.load(
        check_root_seed(root_seed), experiment.key, experiment.code_stamp, range(n_blocks_for(reps))
    )
    return experiment.outcome_type.from_arrays(arrays)
