"""Monte Carlo engine: replicate blocks, parallel execution, resumable storage.

Seed protocol
-------------
An *experiment* (:mod:`simulations.experiments`) is one law x method x estimand. Its
replicates come in blocks of :data:`BLOCK_REPS`; block ``k`` draws from
``generator(root_seed, experiment.seed_key, k)`` (:func:`simulations.provenance.generator`)
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

import logging
import math
from collections.abc import Callable, Iterable
from contextlib import ExitStack
from dataclasses import dataclass

import numpy as np

from .experiments.base import BLOCK_REPS
from .provenance import check_root_seed, generator
from .store import ResultStore

__all__ = [
    "BLOCK_REPS",
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


def simulate_block(experiment, root_seed: int, block: int):
    """Simulate replicate block ``block`` of an experiment; returns its typed outcome.

    The block's generator is :func:`simulations.provenance.generator` at
    ``(root_seed, experiment.seed_key, block)``.
    """
    return experiment.simulate(generator(root_seed, experiment.seed_key, int(block)), BLOCK_REPS)


def _simulate_chunk(experiment, root_seed: int, blocks: list[int]):
    return experiment.key, [(b, simulate_block(experiment, root_seed, b).arrays()) for b in blocks]


def n_blocks_for(reps: int) -> int:
    """Blocks of BLOCK_REPS replicates needed for ``reps`` (validated)."""
    if isinstance(reps, bool) or not isinstance(reps, int | np.integer) or reps < 1:
        raise ValueError(f"reps must be a positive integer, got {reps!r}")
    return math.ceil(reps / BLOCK_REPS)


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
    heartbeat: Callable[[int, int], None] | None = None,
) -> RunStats:
    """Simulate every missing block of ``experiments`` and store each one as it arrives.

    Parameters
    ----------
    experiments : iterable of Experiment
        Anything with ``key``, ``seed_key``, ``code_stamp``, ``cost``, ``description()``
        and ``simulate(rng, reps)`` (:mod:`simulations.experiments`).
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
        Called as ``heartbeat(done, total)`` after each block is committed (blocks computed
        in this run), e.g. to report progress where no progress bar can be drawn.

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
    tasks, reused, stale = [], 0, 0
    damaged_before = len(getattr(store, "damaged", ()))
    for key, exp in unique.items():
        store.describe_cell(key, exp.description())
        done = store.done_blocks(root_seed, key, stamps[key])
        missing = sorted(set(range(n_blocks)) - done)
        reused += n_blocks - len(missing)
        stale += len(store.stale_blocks(root_seed, key, stamps[key]) & set(missing))
        per = blocks_per_task or max(1, _POINTS_PER_TASK // (BLOCK_REPS * exp.cost))
        tasks += [(exp, missing[i : i + per]) for i in range(0, len(missing), per)]
    total = sum(len(b) for _, b in tasks)
    logger.info(
        "%d experiments: %d blocks to compute, %d reused, %d stale (other code)",
        len(unique),
        total,
        reused,
        stale,
    )
    store.set_meta("root_seed", root_seed)
    damaged = len(getattr(store, "damaged", ())) - damaged_before
    stats = RunStats(total, reused, stale, len(unique), damaged)
    if not tasks:
        return stats

    from tqdm.auto import tqdm

    with ExitStack() as stack:
        bar = stack.enter_context(
            tqdm(total=total, disable=not progress, unit="block", desc="calcheck", leave=False)
        )
        if backend == "sequential" or (n_jobs == 1 and backend == "loky"):
            results = (_simulate_chunk(exp, root_seed, blocks) for exp, blocks in tasks)
        else:
            results = _parallel_results(tasks, root_seed, n_jobs, backend, stack)
        done = 0
        for key, payloads in results:
            for block, arrays in payloads:
                store.put(root_seed, key, stamps[key], block, arrays)
                bar.update(1)
                done += 1
                if on_block is not None:
                    on_block(key, block)
                if heartbeat is not None:
                    heartbeat(done, total)
    return stats


def _parallel_results(tasks, root_seed, n_jobs, backend, stack: ExitStack):
    import joblib

    if backend == "dask":
        try:
            from distributed import Client, LocalCluster, get_client
        except ImportError as exc:  # pragma: no cover - depends on the extra
            raise ValueError(
                "backend 'dask' needs the distributed extra: pip install 'calcheck[distributed]'"
            ) from exc
        try:
            get_client()
        except ValueError:
            workers = n_jobs if n_jobs > 0 else None
            cluster = stack.enter_context(
                LocalCluster(
                    n_workers=workers, threads_per_worker=1, dashboard_address=None, processes=True
                )
            )
            stack.enter_context(Client(cluster))
        stack.enter_context(joblib.parallel_config(backend="dask"))
        parallel = joblib.Parallel(return_as="generator_unordered")
    else:
        parallel = joblib.Parallel(n_jobs=n_jobs, backend=backend, return_as="generator_unordered")
    return parallel(
        joblib.delayed(_simulate_chunk)(exp, root_seed, blocks) for exp, blocks in tasks
    )


def load_outcome(store: ResultStore, experiment, reps: int, root_seed: int):
    """All stored replicates of an experiment (whole blocks, block order), as its outcome."""
    arrays = store.load(
        check_root_seed(root_seed), experiment.key, experiment.code_stamp, range(n_blocks_for(reps))
    )
    return experiment.outcome_type.from_arrays(arrays)
