"""Argument validation shared by the simulation layer (one home for these conventions).

Each helper raises ``ValueError`` naming the argument and echoing the offending value.
"""

from __future__ import annotations

import itertools

import numpy as np

__all__ = [
    "MAX_BINS",
    "MAX_INTEGER",
    "MAX_POINTS",
    "as_generator",
    "check_alphas",
    "check_binning_sizes",
    "check_eps",
    "check_n_bins",
    "check_positive_int",
    "check_scores_labels",
]


#: Largest number of bins a calibrator or metric accepts: fitting allocates a few float
#: arrays of n_bins entries per replicate, so 10**9 bins would take gigabytes.
MAX_BINS = 10**6
#: Largest integer parameter accepted anywhere (exact in float64).
MAX_INTEGER = 2**53
#: Largest n of an exact coverage (:func:`calcheck.simulations.exact_coverage.smallest_exact_eps`
#: lists about 3 n / B radii).
MAX_POINTS = 10**7


def check_scores_labels(scores, labels, *, allow_fractional: bool, names=("scores", "labels")):
    """Validate 1-d scores in [0, 1] and labels (0/1, or [0, 1] if ``allow_fractional``).

    ``names`` are the argument names used in messages. Returns both as float arrays.
    """
    sn, yn = names
    s = np.asarray(scores, dtype=float)
    y = np.asarray(labels, dtype=float)
    if s.ndim != 1:
        raise ValueError(f"{sn} must be one-dimensional, got shape {s.shape}")
    if s.size == 0:
        raise ValueError(f"{sn} must not be empty, got {scores!r}")
    if y.shape != s.shape:
        raise ValueError(f"{sn} and {yn} must have the same length, got {s.shape[0]} and {y.shape}")
    if np.isnan(s).any() or np.isnan(y).any():
        raise ValueError(f"{sn} and {yn} must not contain NaN")
    if np.any((s < 0) | (s > 1)):
        bad = s[(s < 0) | (s > 1)][:3]
        raise ValueError(f"{sn} must lie in [0, 1], got values such as {bad.tolist()}")
    if allow_fractional:
        if np.any((y < 0) | (y > 1)):
            bad = y[(y < 0) | (y > 1)][:3]
            raise ValueError(f"{yn} must lie in [0, 1], got values such as {bad.tolist()}")
    elif np.any((y != 0) & (y != 1)):
        bad = y[(y != 0) & (y != 1)][:3]
        raise ValueError(
            f"{yn} must be 0 or 1 (pass allow_fractional_labels=True for [0, 1] labels), "
            f"got values such as {bad.tolist()}"
        )
    return s, y


def check_eps(eps) -> np.ndarray:
    """Radii at which to evaluate a validity: a number or 1-d array, no NaN (inf is fine)."""
    try:
        e = np.asarray(eps, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"eps must be a number or a 1-d array of numbers, got {eps!r}") from None
    if e.ndim > 1 or np.isnan(e).any():
        raise ValueError(f"eps must be a number or a 1-d array without NaN, got {eps!r}")
    return e


def check_n_bins(n_bins):
    """Validate a number of bins: an integer in 1..:data:`MAX_BINS`."""
    return check_positive_int(n_bins, "n_bins", maximum=MAX_BINS)


def check_binning_sizes(n, n_bins) -> tuple[int, int]:
    """``(n, n_bins)`` of an exact coverage, validated (ValueError naming the size otherwise).

    Every bin holds a point (``n >= 2 n_bins``) and n is at most :data:`MAX_POINTS`.
    """
    n = check_positive_int(n, "n", 2, maximum=MAX_POINTS)
    n_bins = check_n_bins(n_bins)
    if n < 2 * n_bins:
        raise ValueError(
            f"n must be >= 2 * n_bins (gr21 Theorems 3-4: every bin holds a point), "
            f"got n={n!r}, n_bins={n_bins!r}"
        )
    return n, n_bins


def as_generator(rng) -> np.random.Generator:
    """A numpy Generator from None, a seed, a SeedSequence or a Generator."""
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or isinstance(rng, int | np.integer | np.random.SeedSequence):
        return np.random.default_rng(rng)
    raise ValueError(f"rng must be None, an int, a SeedSequence or a numpy Generator, got {rng!r}")


def check_positive_int(value, name, minimum=1, maximum=MAX_INTEGER):
    """Validate an integer in ``minimum..maximum``; a larger one is reported as too large."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if value > maximum:
        raise ValueError(f"{name} is too large: at most {maximum} is supported, got {value!r}")
    return int(value)


def check_alphas(alphas, upper=1.0):
    """Validate a non-empty tuple of miscoverage levels in (0, ``upper``)."""
    if not alphas:
        raise ValueError("alphas must be a non-empty tuple")
    for a in alphas:
        if not (0 < a < upper):
            raise ValueError(f"alpha must lie in (0, {upper:g}), got {a!r}")


def check_n_grid(n_grid, minimum=1) -> tuple[int, ...]:
    """A strictly increasing tuple of integer sample sizes >= ``minimum``."""
    grid = tuple(check_positive_int(n, "n_grid entries", minimum) for n in n_grid)
    if not grid or any(b <= a for a, b in itertools.pairwise(grid)):
        raise ValueError(f"n_grid must be non-empty and strictly increasing, got {n_grid!r}")
    return grid
