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
from .parallel import attributed_call, parallel_results, usable_cpus
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
    execution = _Execution.checked(n_jobs, backend, blocks_per_task, progress)
    inventory = _inventory(experiments, n_blocks_for(reps), root_seed, store)
    _open_run(inventory, store)
    hooks = _Hooks(on_block, heartbeat, on_estimate, on_cell_done)
    collector = _collector(inventory, store, hooks)
    compress = getattr(store, "compress", True)
    # the timing probes are the first tasks, run on the workers in parallel: the estimate
    # waits for one round of blocks, and a refused run has simulated only them
    probes = _probes(inventory) if inventory.total and on_estimate is not None else []
    tasks = _tasks(inventory, probes, compress, execution.blocks_per_task)
    stats = inventory.stats(len(store.damaged) - inventory.damaged_before, collector.by_kind)
    if tasks:
        _execute(tasks, len(probes), inventory, collector, execution, hooks.on_estimate)
    return stats


@dataclass(frozen=True)
class _Execution:
    """How a run's blocks are computed: none of these settings changes a result."""

    n_jobs: int
    backend: str
    blocks_per_task: int | None
    progress: bool

    @classmethod
    def checked(cls, n_jobs, backend, blocks_per_task, progress) -> _Execution:
        """The settings, a backend calcheck does not know or a bad ``n_jobs`` refused."""
        if backend not in _BACKENDS:
            raise ValueError(f"backend must be one of {_BACKENDS}, got {backend!r}")
        if isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs == 0 or n_jobs < -1:
            raise ValueError(f"n_jobs must be a positive integer or -1, got {n_jobs!r}")
        return cls(n_jobs, backend, blocks_per_task, progress)

    @property
    def sequential(self) -> bool:
        """Whether blocks are simulated in this process, one task after another."""
        return self.backend == "sequential" or (self.n_jobs == 1 and self.backend == "loky")


@dataclass(frozen=True)
class _Hooks:
    """The callbacks of :func:`run_experiments`, each optional."""

    on_block: Callable[[str, int], None] | None = None
    heartbeat: Callable[[int, int, float], None] | None = None
    on_estimate: Callable[[RunEstimate], None] | None = None
    on_cell_done: Callable[[str], None] | None = None


@dataclass(frozen=True)
class _Inventory:
    """A run's experiments and the blocks of each already stored for its root seed.

    ``done`` (key -> stored blocks) grows as the run stores blocks; ``weight`` (key ->
    estimated seconds per block, 1 until the probes measure them) is set by the estimate.
    """

    unique: dict
    stamps: dict
    done: dict
    n_blocks: int
    root_seed: int
    reused: int
    stale: int
    damaged_before: int
    kind_of: dict
    weight: dict

    @property
    def total(self) -> int:
        """Blocks to compute: all of every experiment but those reused."""
        return len(self.unique) * self.n_blocks - self.reused

    def stats(self, damaged: int, seconds_by_kind: dict) -> RunStats:
        """The run's :class:`RunStats` (``seconds_by_kind`` fills as blocks arrive)."""
        return RunStats(
            self.total, self.reused, self.stale, len(self.unique), damaged, seconds_by_kind
        )


def _inventory(experiments, n_blocks: int, root_seed: int, store) -> _Inventory:
    """Describe each experiment in ``store`` and count its blocks there: reused, stale."""
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
    kind_of = {key: type(e).__name__ for key, e in unique.items()}
    weight = dict.fromkeys(unique, 1.0)
    return _Inventory(
        unique, stamps, done, n_blocks, root_seed, reused, stale, damaged_before, kind_of, weight
    )


def _open_run(inventory: _Inventory, store) -> None:
    """Log what the run will do; refuse a read-only store that lacks blocks; record the seed."""
    total = inventory.total
    logger.info(
        "%d experiments: %d blocks to compute, %d reused, %d stale (other code)",
        len(inventory.unique),
        total,
        inventory.reused,
        inventory.stale,
    )
    if total and store.read_only:
        raise ValueError(
            f"the store {store.path!r} is read-only and lacks {total} of the blocks this run "
            "needs; make it writable or choose another --out"
        )
    if total:
        store.set_meta("root_seed", inventory.root_seed)


def _collector(inventory: _Inventory, store, hooks: _Hooks) -> Collector:
    """The run's collector; ``on_cell_done`` hears at once of experiments already complete."""
    collector = Collector(
        store,
        inventory.root_seed,
        inventory.stamps,
        inventory.n_blocks,
        inventory.done,
        inventory.kind_of,
        inventory.weight,
        inventory.total,
    )
    collector.on_block, collector.heartbeat = hooks.on_block, hooks.heartbeat
    collector.on_cell_done = hooks.on_cell_done
    if hooks.on_cell_done is not None:
        done, n_blocks = inventory.done, inventory.n_blocks
        for key in [k for k in inventory.unique if len(done[k]) == n_blocks]:
            hooks.on_cell_done(key)
    return collector


def _tasks(inventory: _Inventory, probes, compress: bool, blocks_per_task) -> list:
    """``(experiment, root_seed, blocks, code stamp, compress)`` of every task, probes first.

    A probe is one block; the other missing blocks of an experiment go ``blocks_per_task``
    to a task, by default as many as make a few tens of milliseconds of work.
    """
    unique, stamps, root_seed = inventory.unique, inventory.stamps, inventory.root_seed
    tasks = [(unique[key], root_seed, [block], stamps[key], compress) for key, block in probes]
    probed = set(probes)
    for key, exp in unique.items():
        done = inventory.done[key]
        missing = [b for b in range(inventory.n_blocks) if b not in done and (key, b) not in probed]
        per = blocks_per_task or max(1, _POINTS_PER_TASK // (BLOCK_REPS * exp.cost))
        tasks += [
            (exp, root_seed, missing[i : i + per], stamps[key], compress)
            for i in range(0, len(missing), per)
        ]
    return tasks


def _execute(tasks, n_probes, inventory, collector, execution, on_estimate) -> None:
    """Run the tasks, the probes first, and store what they return as it arrives."""
    from tqdm.auto import tqdm

    with ExitStack() as stack:
        collector.bar = stack.enter_context(
            tqdm(
                total=inventory.total,
                disable=not execution.progress,
                unit="block",
                desc="calcheck",
                leave=False,
            )
        )
        results_of = _results_source(execution, inventory.stamps, stack)
        try:
            if n_probes:
                # nothing else runs until the estimate is accepted
                probed = results_of(tasks[:n_probes])
                _estimate_from_probes(probed, inventory, collector, execution.n_jobs, on_estimate)
            rest = tasks[n_probes:]
            for result in results_of(rest) if rest else ():
                collector.receive(result)
            collector.flush()
        except BaseException:
            _keep_received(collector)
            raise


def _results_source(execution: _Execution, stamps: dict, stack: ExitStack):
    """A function from a batch of tasks to their results (a generator), here or on workers."""
    sequential = execution.sequential
    generation = 0 if sequential else _workers_generation(stamps)

    def results_of(batch):
        if sequential:
            # the user's code that raises is one line, as from a worker (attributed_call)
            return (attributed_call(_simulate_chunk, *task) for task in batch)
        n_jobs, backend = execution.n_jobs, execution.backend
        results = parallel_results(_simulate_chunk, batch, n_jobs, backend, stack, generation)
        # an interruption (SIGINT, SIGTERM) or an error between two results leaves the
        # generator suspended: close it on the way out, while the warning filters of
        # parallel_results still hold, so the workers stop now rather than at garbage
        # collection and joblib's "tasks ... cancelled" warning is not shown
        stack.callback(results.close)
        return results

    return results_of


def _estimate_from_probes(results, inventory, collector, n_jobs, on_estimate) -> None:
    """Store the probes' blocks, estimate the run from their times, let ``on_estimate`` judge."""
    timed: dict = {}  # probe -> (cost, cpu seconds, payload bytes)
    for result in results:
        collector.receive(result)
        key, [(block, _, payload, _)], seconds = result
        timed[key, block] = (inventory.unique[key].cost, seconds, len(payload))
    collector.flush()
    estimate = _estimate(inventory, timed, n_jobs, collector.count)
    # from here on the blocks left are weighed by their estimated seconds
    done, n_blocks = inventory.done, inventory.n_blocks
    collector.progress.reweigh({k: n_blocks - len(done[k]) for k in inventory.unique})
    on_estimate(estimate)


def _keep_received(collector: Collector) -> None:
    """On an interruption or an error: store what the workers returned (one commit)."""
    if collector.pending:
        try:
            collector.flush(callbacks=False)
        except Exception:  # the error being raised says more (a full disk, ...)
            logger.debug("the last batch could not be stored", exc_info=True)


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


def _probes(inventory: _Inventory) -> list[tuple[str, int]]:
    """``(key, block)`` timed first: the costliest and cheapest experiment of each kind."""
    done, n_blocks = inventory.done, inventory.n_blocks
    kinds: dict[str, list] = {}
    for key, exp in inventory.unique.items():
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


def _estimate(inventory: _Inventory, timed, n_jobs, stored=0) -> RunEstimate:
    """The run's time and store growth, extrapolated from the probes' measured blocks.

    Per kind, a block's CPU time is ``overhead + per_point * cost``, fitted on its probes
    (the costliest and cheapest experiment); the inventory's ``weight`` receives each
    experiment's estimated seconds per block. The wall time is the CPU time over the workers.
    """
    unique, done, n_blocks = inventory.unique, inventory.done, inventory.n_blocks
    weight = inventory.weight
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
