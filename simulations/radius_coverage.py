"""Exact coverage of a radius computed from each bin's data, at constant eta.

A bound may read each bin's data (its label sum and size: an empirical-Bernstein radius
reads the bin's sample variance, a function of both for binary labels). Written as
``r(k, m)``, the radius of a bin of m labels summing to k, the event "the bin's mean is within
its radius of eta" is the set of counts ``{k : |k - m eta| <= m r(k, m)}``, and at constant
eta its probability is a finite binomial sum (gr21 Lemma 2: the bins' label sums are
independent ``Bin(m_b, eta)``), exactly as for a fixed radius
(:mod:`calcheck.simulations.exact_coverage`):

* conditional: ``prod_b sum_{k in A_b} P(K_b = k)``;
* marginal: ``sum_b E[w_b] sum_{k in A_b} P(K_b = k)``.

Outputs merged when bins have equal values (``umd``, ``zadrozny_elkan``) take the largest
radius of their bins; at constant eta the pooled truth is eta, so the merged event equals the
per-bin one unless bins of different sizes with different radii share a value, which only
k = 0 or k = m can do (``k/m_1 = k'/m_2`` with ``|m_1 - m_2| = 1``): there the per-bin value
is a lower bound, short by at most the probability that two such bins are all 0 or all 1.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import binom

from .certified_bin import radii
from .exact_coverage import (
    COUNT_TOLERANCE,
    EVENTS,
    SCHEMES,
    bin_point_counts,
    expected_bin_masses,
)

__all__ = ["bin_radius_within", "exact_radius_coverage"]


def bin_radius_within(m: int, eta: float, radius) -> float:
    """``P(|K/m - eta| <= r(K, m))`` for ``K ~ Bin(m, eta)`` (closed, count slack as usual).

    Parameters
    ----------
    m : int
        Labels averaged.
    eta : float
        Constant bias in (0, 1).
    radius : float or callable
        A fixed radius, or ``radius(k, m) -> ndarray`` for k = 0..m.

    Returns
    -------
    float
    """
    k = np.arange(m + 1, dtype=float)
    r = radii(radius, m)
    inside = np.abs(k - m * eta) <= m * r + COUNT_TOLERANCE
    return float(np.clip(binom.pmf(k[inside], m, eta).sum(), 0.0, 1.0))


def exact_radius_coverage(n, n_bins, eta, radius, *, event="conditional", scheme="umd") -> float:
    """Exact probability of a binning event at constant eta for a radius ``r(k, m)``.

    Parameters
    ----------
    n, n_bins : int
        Calibration points and bins (gr21 Algorithm 1's edges).
    eta : float
        Constant ``E[Y | S]`` in (0, 1).
    radius : float or callable
        ``radius(k, m)``: the radius of a bin of m labels summing to k (k = 0..m).
    event : {"conditional", "marginal"}
    scheme : {"umd", "zadrozny_elkan"}

    Returns
    -------
    float
        In [0, 1].

    Examples
    --------
    A fixed radius gives :func:`calcheck.simulations.exact_coverage.exact_coverage`'s value:

    >>> from calcheck.simulations.exact_coverage import exact_coverage
    >>> a = exact_radius_coverage(1000, 10, 0.5, lambda k, m: 0.0 * k + 0.1636)
    >>> round(a, 10) == round(exact_coverage(1000, 10, 0.5, 0.1636), 10)
    True
    """
    if event not in EVENTS:
        raise ValueError(f"event must be one of {EVENTS}, got {event!r}")
    if scheme not in SCHEMES:
        raise ValueError(f"scheme must be one of {SCHEMES}, got {scheme!r}")
    eta = float(eta)
    if not 0.0 < eta < 1.0:
        raise ValueError(f"eta must be a constant in (0, 1), got {eta!r}")
    counts = bin_point_counts(n, n_bins, scheme)
    masses = expected_bin_masses(n, n_bins)
    within = {int(m): bin_radius_within(int(m), eta, radius) for m in np.unique(counts)}
    per_bin = np.array([within[int(m)] for m in counts])
    if event == "conditional":
        return float(np.prod(per_bin))
    return float(np.clip(np.sum(masses * per_bin), 0.0, 1.0))
