"""The exact supremum over p of a binomial mean's two-sided tail (a radius valid for any p).

A radius ``eps`` with ``sup_p P(|Bin(m, p)/m - p| > eps) <= alpha`` holds for every bin of m
points whatever its mean; the supremum is attained at the lattice lines where ``m (p +- eps)``
crosses an integer, so it is computed exactly there rather than on a grid of p (a grid's
sup is the mistake ``examples/own_bound.py`` shows calcheck catching). Counts follow the
closed-event convention of :mod:`calcheck.simulations.exact_coverage`.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import binom

from .exact_coverage import COUNT_TOLERANCE, MAX_POINTS
from .validation import check_eps, check_positive_int

__all__ = ["sup_binomial_tail"]


def sup_binomial_tail(m, eps) -> tuple[float, float]:
    r"""``(sup, p)``: the exact supremum over p of ``P(|Bin(m, p)/m - p| > eps)``, and where.

    .. math:: \sup_{p \in [0, 1]} P\big(|K/m - p| > \varepsilon\big),
              \qquad K \sim \mathrm{Bin}(m, p).

    Between the p where a cut-off ``m (p - eps)`` or ``m (p + eps)`` crosses an integer the
    failing counts are fixed, ``K <= a`` or ``K >= b``, and the tail
    ``P(K <= a) + P(K >= b)`` is quasi-convex in p (its derivative is
    ``m [f_{m-1}(b - 1) - f_{m-1}(a)]``, whose sign changes once, from - to +, since
    ``f_{m-1}(b-1) / f_{m-1}(a)`` grows with p): its supremum on each piece is a one-sided
    limit at an end. Those limits are just past ``p = k/m + eps`` (the count k leaves the
    window from below: ``K <= k`` fails) and just before ``p = k/m - eps`` (k leaves from
    above: ``K >= k`` fails), k = 0..m: the lattice lines of
    :func:`calcheck.simulations.conditional_coverage.lattice_etas`. The supremum is one of
    those 2 (m + 1) limits; it need not be attained (the failure event is open), and a grid
    of p misses it (a grid's maximum lies below it, so a radius calibrated on a grid is too
    small: ``examples/own_bound.py`` tells that story).

    Parameters
    ----------
    m : int
        Labels averaged (>= 1).
    eps : float
        Radius >= 0 (inf: the tail is 0).

    Returns
    -------
    sup : float
        In [0, 1].
    p : float
        The lattice point whose one-sided limit gives it (0.5 where ``sup = 0``).

    Notes
    -----
    The second cut-off at a crossing, ``k +- 2 m eps``, is snapped to an integer within
    :data:`COUNT_TOLERANCE` counts, the convention of the module's closed events. gr21
    Lemma 2 makes a bin of uniform-mass binning such a binomial given the edges, with
    ``p = Pi_b``, so ``prod_b (1 - sup)`` is a lower bound on the conditional coverage of
    radius eps on every law (the per-bin argument of gr21 Theorem 3, made exact).

    Examples
    --------
    >>> sup, p = sup_binomial_tail(4, 0.3)
    >>> round(sup, 4), round(p, 2)
    (0.333, 0.55)
    """
    m = check_positive_int(m, "m", maximum=MAX_POINTS)
    e = float(check_eps(eps)) if np.ndim(eps) == 0 else None
    if e is None or e < 0:
        raise ValueError(f"eps must be a number >= 0, got {eps!r}")
    if not np.isfinite(e):
        return 0.0, 0.5
    k = np.arange(m + 1, dtype=float)
    width = 2.0 * m * e
    # just past k/m + eps: K <= k fails below; above, K > k + 2 m eps, i.e. K >= floor(.) + 1
    p_up = k / m + e
    ok = p_up <= 1.0
    tail_up = binom.cdf(k[ok], m, p_up[ok]) + binom.sf(
        np.floor(k[ok] + width + COUNT_TOLERANCE), m, p_up[ok]
    )
    # just before k/m - eps: K >= k fails above; below, K < k - 2 m eps, i.e. K <= ceil(.) - 1
    p_down = k / m - e
    ok_d = p_down >= 0.0
    tail_down = binom.sf(k[ok_d] - 1, m, p_down[ok_d]) + binom.cdf(
        np.ceil(k[ok_d] - width - COUNT_TOLERANCE) - 1, m, p_down[ok_d]
    )
    tails = np.concatenate([tail_up, tail_down])
    points = np.concatenate([p_up[ok], p_down[ok_d]])
    if tails.size == 0:
        return 0.0, 0.5
    i = int(np.argmax(tails))
    return float(min(max(tails[i], 0.0), 1.0)), float(points[i])
