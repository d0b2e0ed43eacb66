"""Monte Carlo engine: replicate blocks, parallel execution, resumable storage.

Seed protocol
-------------
A *cell* is one (calibrator, law, n, n_bins) combination. Its replicates come in blocks of
:data:`BLOCK_REPS`; block ``k`` of a cell draws from
``SeedSequence(root_seed, spawn_key=(cell.seed_key, k))`` -- one SeedSequence child per
replicate block, derived from the recorded root seed and the cell's content hash (adding or
removing other cells changes nothing). Results are therefore bit-identical for any
``n_jobs``, any number of blocks per task, either backend, and after an interrupted run is
resumed. Replicates are rounded up to whole blocks.

Within a block all replicates are vectorised: scores are drawn as an ``(R, n)`` array and
sorted once; labels are drawn given the sorted scores (the labels are conditionally
independent given the scores, so this is the same joint law and saves a gather); the fit is
a cumulative sum; the exact ground truth costs ``O(R B)``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
from collections.abc import Callable, Iterable
from contextlib import ExitStack
from dataclasses import dataclass

import numpy as np

from .calibrators import calibrator_from_spec, sort_scores
from .laws import Law
from .metrics import exact_bin_errors
from .store import ResultStore

__all__ = ["BLOCK_REPS", "Cell", "load_cell", "run_cells", "simulate_block"]

logger = logging.getLogger(__name__)

#: Replicates per SeedSequence child. Part of the seed protocol: changing it changes results.
BLOCK_REPS = 100
# Points (replicates x n) simulated per parallel task: a few tens of milliseconds of work.
_POINTS_PER_TASK = 2_000_000
_BACKENDS = ("loky", "dask", "threading", "sequential")


def content_key(description: dict) -> str:
    """Content hash (24 hex digits) of a JSON-able description: a cell's or experiment's key."""
    text = json.dumps(description, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:24]


class ContentKeyed:
    """``key`` and ``seed_key`` from ``self.description()``: shared by cells and experiments."""

    @property
    def key(self) -> str:
        """Content hash (hex), stable across runs and machines."""
        return content_key(self.description())

    @property
    def seed_key(self) -> int:
        return int(self.key[:15], 16)


@dataclass(frozen=True)
class Cell(ContentKeyed):
    """One simulation cell: a calibrator run on a law at (n, n_bins)."""

    calibrator: dict
    law: Law
    n: int
    n_bins: int

    def __post_init__(self):
        for name in ("n", "n_bins"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int | np.integer) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        calibrator_from_spec(self.calibrator, self.n_bins)  # validates the spec early

    def description(self) -> dict:
        return {"calibrator": self.calibrator, "law": self.law.spec(), "n": int(self.n),
                "n_bins": int(self.n_bins), "block_reps": BLOCK_REPS}

    def label(self) -> str:
        return f"{self.calibrator['name']}/{self.law.name}/n={self.n}/B={self.n_bins}"

    @property
    def cost(self) -> int:
        """Simulated points per replicate (sizes the parallel tasks)."""
        return self.n

    def simulate(self, rng: np.random.Generator, reps: int) -> dict:
        """Simulate ``reps`` replicates: exact per-bin errors and masses.

        Returns
        -------
        dict of ndarray
            ``error`` and ``mass`` of shape (reps, B) (see
            :class:`simulations.metrics.BinErrors`), ``test_u`` (reps, 2) independent
            uniforms that turn exact probabilities into Bernoulli outcomes for the verdicts,
            and ``n_empty`` the number of empty bins of each fitted map.
        """
        law = self.law
        calibrator = calibrator_from_spec(self.calibrator, self.n_bins)
        scores = law.sample_scores((reps, self.n), rng)
        if hasattr(calibrator, "fit_sorted_batch"):
            s_sorted, u_sorted = sort_scores(scores, rng, tie_breaking=calibrator._tie_breaking())
            y_sorted = law.sample_labels(s_sorted, rng)
            batch = calibrator.fit_sorted_batch(s_sorted, u_sorted, y_sorted, self.n_bins, rng)
        else:
            labels = law.sample_labels(scores, rng)
            batch = calibrator.fit_batch(scores, labels, self.n_bins, rng)
        errors = exact_bin_errors(batch, law)
        return {
            "error": errors.error,
            "mass": errors.mass,
            "test_u": rng.random((reps, 2)),
            "n_empty": (batch.counts == 0).sum(axis=1),
        }


def simulate_block(cell, root_seed: int, block: int) -> dict:
    """Simulate replicate block ``block`` of ``cell`` (a :class:`Cell` or an experiment).

    The block's generator is ``default_rng(SeedSequence(root_seed, spawn_key=(cell.seed_key,
    block)))``; the cell's ``simulate(rng, BLOCK_REPS)`` does the rest and returns a dict of
    arrays with one row per replicate.
    """
    seq = np.random.SeedSequence(root_seed, spawn_key=(cell.seed_key, int(block)))
    return cell.simulate(np.random.default_rng(seq), BLOCK_REPS)


def _simulate_chunk(cell: Cell, root_seed: int, blocks: list[int]):
    return cell.key, [(b, simulate_block(cell, root_seed, b)) for b in blocks]


def n_blocks_for(reps: int) -> int:
    if isinstance(reps, bool) or not isinstance(reps, int | np.integer) or reps < 1:
        raise ValueError(f"reps must be a positive integer, got {reps!r}")
    return math.ceil(reps / BLOCK_REPS)


def _check_root_seed(root_seed):
    if isinstance(root_seed, bool) or not isinstance(root_seed, int | np.integer) or root_seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {root_seed!r}")
    return int(root_seed)


def run_cells(
    cells: Iterable[Cell],
    reps: int,
    root_seed: int,
    store: ResultStore,
    *,
    n_jobs: int = 1,
    backend: str = "loky",
    blocks_per_task: int | None = None,
    progress: bool = False,
    on_block: Callable[[str, int], None] | None = None,
) -> dict:
    """Simulate every missing block of ``cells`` and store each one as it arrives.

    Parameters
    ----------
    cells : iterable of Cell or experiment
        Anything with ``key``, ``seed_key``, ``cost``, ``description()`` and
        ``simulate(rng, reps)`` (:mod:`simulations.experiments`).
    reps : int
        Replicates per cell (rounded up to whole blocks of BLOCK_REPS).
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

    Returns
    -------
    dict
        ``{"computed": blocks computed now, "reused": blocks found in the store}``.
    """
    root_seed = _check_root_seed(root_seed)
    if backend not in _BACKENDS:
        raise ValueError(f"backend must be one of {_BACKENDS}, got {backend!r}")
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs == 0 or n_jobs < -1:
        raise ValueError(f"n_jobs must be a positive integer or -1, got {n_jobs!r}")
    n_blocks = n_blocks_for(reps)
    unique = {c.key: c for c in cells}
    tasks, reused = [], 0
    for key, cell in unique.items():
        store.describe_cell(key, cell.description())
        missing = sorted(set(range(n_blocks)) - store.done_blocks(root_seed, key))
        reused += n_blocks - len(missing)
        per = blocks_per_task or max(1, _POINTS_PER_TASK // (BLOCK_REPS * cell.cost))
        tasks += [(cell, missing[i:i + per]) for i in range(0, len(missing), per)]
    total = sum(len(b) for _, b in tasks)
    logger.info("%d cells: %d blocks to compute, %d reused", len(unique), total, reused)
    store.set_meta("root_seed", root_seed)
    if not tasks:
        return {"computed": 0, "reused": reused}

    from tqdm.auto import tqdm

    with ExitStack() as stack:
        bar = stack.enter_context(tqdm(total=total, disable=not progress, unit="block",
                                       desc="calcheck", leave=False))
        if backend == "sequential" or (n_jobs == 1 and backend == "loky"):
            results = (_simulate_chunk(cell, root_seed, blocks) for cell, blocks in tasks)
        else:
            results = _parallel_results(tasks, root_seed, n_jobs, backend, stack)
        for key, payloads in results:
            for block, arrays in payloads:
                store.put(root_seed, key, block, arrays)
                bar.update(1)
                if on_block is not None:
                    on_block(key, block)
    return {"computed": total, "reused": reused}


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
            cluster = stack.enter_context(LocalCluster(n_workers=workers, threads_per_worker=1,
                                                       dashboard_address=None, processes=True))
            stack.enter_context(Client(cluster))
        stack.enter_context(joblib.parallel_config(backend="dask"))
        parallel = joblib.Parallel(return_as="generator_unordered")
    else:
        parallel = joblib.Parallel(n_jobs=n_jobs, backend=backend,
                                   return_as="generator_unordered")
    return parallel(joblib.delayed(_simulate_chunk)(cell, root_seed, blocks)
                    for cell, blocks in tasks)


def load_cell(store: ResultStore, cell: Cell, reps: int, root_seed: int) -> dict:
    """All stored replicates of a cell (whole blocks), concatenated in block order."""
    return store.load(_check_root_seed(root_seed), cell.key, range(n_blocks_for(reps)))
