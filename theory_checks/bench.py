"""Benchmark: each hot path against its own floor, drawing the data and sorting it.

A coverage replicate (:func:`benchmark_cell`) and a single scikit-learn-style fit + predict
(:func:`benchmark_single_fit`) are each timed in the same process as their floor,
interleaved, so the ratios are insensitive to how fast or busy the machine is.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from calcheck.simulations.engine import BLOCK_REPS, simulate_block
from calcheck.simulations.experiments.binning import BinningExperiment
from calcheck.simulations.laws import LAWS

__all__ = ["BenchResult", "SingleFitResult", "benchmark_cell", "benchmark_single_fit"]


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


@dataclass(frozen=True)
class SingleFitResult:
    """Median seconds of one fit + predict on n points and of drawing and argsorting them."""

    n: int
    n_bins: int
    calibrator: str
    rounds: int
    fit_predict_seconds: float
    argsort_baseline_seconds: float
    ratio_to_argsort_baseline: float


def benchmark_single_fit(
    n=1_000_000, n_bins=10, *, calibrator="umd", law="uniform_half", rounds=5, seed=0
) -> SingleFitResult:
    """Time one ``fit(scores, labels).predict(scores)`` against draw + argsort of n points.

    This is what a user calling the calibrator once pays; the floor is the cost of drawing
    the same data and ordering it, which any uniform-mass fit needs.
    """
    from calcheck.simulations.calibrators import calibrator_from_spec

    if law not in LAWS:
        raise ValueError(f"law must be one of {sorted(LAWS)}, got {law!r}")
    if rounds < 1:
        raise ValueError(f"rounds must be >= 1, got {rounds!r}")
    dist = LAWS[law]
    rng = np.random.default_rng(seed)
    scores = dist.sample_scores(n, rng)
    labels = dist.sample_labels(scores, rng)
    model = calibrator_from_spec({"name": calibrator}, n_bins=n_bins, rng=seed)
    model.fit(scores, labels).predict(scores)  # warm-up (and validates the arguments)
    times = {"fit": [], "argsort": []}
    for _ in range(rounds):
        t0 = time.perf_counter()
        model.fit(scores, labels).predict(scores)
        times["fit"].append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        s = dist.sample_scores(n, rng)
        dist.sample_labels(s, rng)
        np.argsort(s)
        times["argsort"].append(time.perf_counter() - t0)
    f, a = (float(np.median(times[k])) for k in ("fit", "argsort"))
    return SingleFitResult(n, n_bins, calibrator, rounds, f, a, f / a)
