"""Inverse helpers for any bound function: smallest n, largest B for a target eps.

Generic: they take a bound ``f(n, n_bins, alpha, **kwargs)`` (for example
:func:`bounds.gr21.thm3_conditional_eps`) and search it.
"""

from __future__ import annotations

import numpy as np

from ._validation import as_integer_array, as_positive

__all__ = ["is_informative", "max_bins_for_eps", "min_n_for_eps"]


def is_informative(value):
    """True where a bound value is below 1 (a radius >= 1 says nothing about [0,1] labels)."""
    return np.asarray(value) < 1.0


def min_n_for_eps(bound, eps, n_bins, alpha=None, *, n_max=10**9, **kwargs):
    """Smallest n >= 2B for which ``bound(n, n_bins, alpha, **kwargs) <= eps``.

    Parameters
    ----------
    bound : callable
        A radius function of this module whose value is non-increasing in n.
    eps : float
        Target radius.
    n_bins : int
        Number of bins.
    alpha : float, optional
        Miscoverage, for bounds that take one.
    n_max : int, default 1e9
        Search limit.

    Returns
    -------
    int or None
        None when no n <= n_max reaches eps (e.g. eps <= delta).
    """
    b = int(as_integer_array(n_bins, "n_bins", minimum=1))
    eps = float(as_positive(eps, "eps"))
    args = () if alpha is None else (alpha,)

    def ok(n):
        return bound(n, b, *args, **kwargs) <= eps

    lo = 2 * b
    if ok(lo):
        return lo
    hi = lo
    while not ok(hi):
        if hi >= n_max:
            return None
        hi = min(2 * hi, n_max)
    while hi - lo > 1:  # invariant: not ok(lo), ok(hi)
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


def max_bins_for_eps(bound, eps, n, alpha=None, **kwargs):
    """Largest B with ``2B <= n`` and ``bound(n, B, alpha, **kwargs) <= eps``; None if none.

    Every radius of this module increases with B at fixed n, so this is the B a user would
    "eyeball" from Figure 2 for a target eps.
    """
    n_int = int(as_integer_array(n, "n", minimum=2))
    eps = float(as_positive(eps, "eps"))
    bins = np.arange(1, n_int // 2 + 1)
    args = () if alpha is None else (alpha,)
    values = np.asarray(bound(n_int, bins, *args, **kwargs))
    good = np.flatnonzero(values <= eps)
    return int(bins[good[-1]]) if good.size else None
