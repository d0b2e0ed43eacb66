"""Benchmark: cost of a coverage replicate against drawing the data and sorting it.

Both are timed in the same process, interleaved, so the ratio is insensitive to how fast
or busy the machine is.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from calcheck.simulations.engine import BLOCK_REPS, simulate_block
from calcheck.simulations.experiments.binning import BinningExperiment
from calcheck.simulations.laws import LAWS

__all__ = ["BenchResult", "benchmark_cell"]


@dataclass(frozen=True)
class BenchResult:
    """Median seconds per replicate of a full coverage replicate and of draw + sort."""

    n: int
    n_bins: int
    calibrator: str
    law: str
    rounds: int
    seconds_per_replicate: float
    argsort_baseline_seconds_per_replicate: float
    sort_baseline_seconds_per_replicate: float
    ratio_to_argsort_baseline: float
    ratio_to_sort_baseline: float


def _draw_and_argsort(law, n, rng):
    """Draw (score, label) pairs and order the pairs by score."""
    scores = law.sample_scores((BLOCK_REPS, n), rng)
    labels = law.sample_labels(scores, rng)
    return labels, np.argsort(scores, axis=1)


def _draw_and_sort(law, n, rng):
    """Draw (score, label) pairs and sort the scores only (the cheapest reading)."""
    scores = law.sample_scores((BLOCK_REPS, n), rng)
    labels = law.sample_labels(scores, rng)
    return labels, np.sort(scores, axis=1)


def benchmark_cell(
    n=10_000, n_bins=10, *, calibrator="umd", law="uniform_half", rounds=15, seed=0
) -> BenchResult:
    """Time one coverage block (BLOCK_REPS replicates) against draw + sort of the same data."""
    if law not in LAWS:
        raise ValueError(f"law must be one of {sorted(LAWS)}, got {law!r}")
    cell = BinningExperiment({"name": calibrator}, LAWS[law], n, n_bins)
    rng = np.random.default_rng(seed)
    if rounds < 1:
        raise ValueError(f"rounds must be >= 1, got {rounds!r}")
    simulate_block(cell, seed, 0)  # warm-up
    _draw_and_argsort(cell.law, cell.n, rng)
    times = {"full": [], "argsort": [], "sort": []}
    for k in range(rounds):
        for name, work in (
            ("full", lambda k=k: simulate_block(cell, seed, k)),
            ("argsort", lambda: _draw_and_argsort(cell.law, cell.n, rng)),
            ("sort", lambda: _draw_and_sort(cell.law, cell.n, rng)),
        ):
            t0 = time.perf_counter()
            work()
            times[name].append(time.perf_counter() - t0)
    f, a, s = (float(np.median(times[k])) / BLOCK_REPS for k in ("full", "argsort", "sort"))
    return BenchResult(cell.n, cell.n_bins, calibrator, law, rounds, f, a, s, f / a, f / s)
