"""Inverse helpers for any bound function: smallest n, largest B for a target eps.

Generic: they take a bound ``f(n, n_bins, alpha, **kwargs)`` (for example
:func:`calcheck.bounds.gr21.thm3_conditional_eps`) and search it.
"""

from __future__ import annotations

import numpy as np

from ._validation import (
    as_float_array,
    as_integer_array,
    as_positive,
    as_scalar,
    guard_public,
)

__all__ = ["is_informative", "max_bins_for_eps", "min_n_for_eps"]


def is_informative(value):
    """True where a bound value is below 1 (a radius >= 1 says nothing about [0,1] labels).

    ``inf`` (an empty bin) is not informative; NaN is refused (it is no bound at all).
    """
    arr = as_float_array(value, "value")
    if np.isnan(arr).any():
        raise ValueError(f"value must not be NaN, got {value!r}")
    return arr < 1.0


def _check_bound(bound):
    if not callable(bound):
        raise TypeError(f"bound must be a bound function, got {bound!r}")


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
    _check_bound(bound)
    b = as_scalar(as_integer_array(n_bins, "n_bins", minimum=1), "n_bins", n_bins)
    eps = as_scalar(as_positive(eps, "eps"), "eps", eps)
    n_max = as_scalar(as_integer_array(n_max, "n_max", minimum=1), "n_max", n_max)
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

    Every radius of this package is non-decreasing in B at fixed n (``bound`` must be), so
    this is the B a user would "eyeball" from Figure 2 for a target eps. Found by bisection,
    in O(log n) evaluations of ``bound``.
    """
    _check_bound(bound)
    n_int = as_scalar(as_integer_array(n, "n", minimum=2), "n", n)
    eps = as_scalar(as_positive(eps, "eps"), "eps", eps)
    args = () if alpha is None else (alpha,)

    def ok(b):
        return bool(np.all(np.asarray(bound(n_int, b, *args, **kwargs)) <= eps))

    # Bisection on the monotone radius: O(log n) evaluations, never an array of n/2 bins,
    # which at n = 1e10 would take 37 GiB.
    if not ok(1):
        return None
    lo, hi = 1, n_int // 2
    if ok(hi):
        return hi
    while hi - lo > 1:  # invariant: ok(lo), not ok(hi)
        mid = (lo + hi) // 2
        if ok(mid):
            lo = mid
        else:
            hi = mid
    return lo


guard_public(globals())  # broadcasting errors name the arguments
