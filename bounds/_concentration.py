"""Concentration radii shared by the papers' bounds.

One home for the two inequalities every paper builds on: Hoeffding's radius for a mean of
[0, 1] variables and the empirical-Bernstein half-width of Audibert, Munos & Szepesvari
(2007). The papers' guarantees combine them with their own union bounds and counts.
"""

from __future__ import annotations

import numpy as np

from ._validation import (
    as_counts,
    as_nonnegative,
    as_open_unit,
    as_positive,
    guard_public,
    scalar_or_array,
)

__all__ = ["empirical_bernstein_halfwidth", "hoeffding_radius", "per_count"]


def hoeffding_radius(log_term, m):
    r"""Hoeffding radius ``sqrt(log_term / (2 m))`` of a mean of m variables in [0, 1].

    With ``log_term = log(2/delta)`` it is the two-sided radius at level 1 - delta
    (Hoeffding, 1963, Theorem 2). Arguments are validated by the callers.
    """
    return np.sqrt(log_term / (2.0 * m))


def per_count(numerator, counts):
    """``numerator / counts`` with ``inf`` where a count is 0 (an empty bin gives no interval)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(counts > 0, numerator / np.where(counts > 0, counts, 1.0), np.inf)


def empirical_bernstein_halfwidth(n_bin, variance, delta, scale=1.0):
    r"""Empirical-Bernstein half-width of Audibert, Munos & Szepesvari (2007), Theorem 1.

    .. math:: \sqrt{\frac{2 \hat V \log(3/\delta)}{N}} + \frac{3 s \log(3/\delta)}{N}

    Parameters
    ----------
    n_bin : int or array_like
        Sample size N >= 0 (``inf`` is returned for N = 0).
    variance : float or array_like
        Biased sample variance ``sum (X_i - Xbar)^2 / N`` (not N - 1).
    delta : float or array_like
        Failure probability in (0, 1).
    scale : float, default 1
        Range s of the variables, ``X_i in [0, s]``.

    Notes
    -----
    Cited as Theorem 12 of gpr20 (App. F). Hypotheses: X_1..X_N iid in [0, s]. Quantifier:
    with probability >= 1 - delta, ``|Xbar - mu| <= half-width``.
    """
    counts = as_counts(n_bin)
    v = as_nonnegative(variance, "variance")
    d = as_open_unit(delta, "delta")
    s = as_positive(scale, "scale")
    log_term = np.log(3.0 / d)
    width = np.sqrt(per_count(2.0 * v * log_term, counts)) + per_count(3.0 * s * log_term, counts)
    return scalar_or_array(width)


guard_public(globals())  # broadcasting errors name the arguments
