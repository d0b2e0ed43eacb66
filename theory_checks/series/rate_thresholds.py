"""Thresholds n* of a rate check and the slopes fitted to them (the statistics of rates).

A rate check (:mod:`calcheck.theory_checks.series.rates`) measures, along a series, the smallest n
at which a coverage reaches its target (:func:`threshold`, interpolated in log n between
the grid points around the crossing) and fits the slope of log n* on log h
(:func:`ols_slopes`, vectorised over bootstrap resamples of the coverage counts, of which
there are :data:`N_BOOT`). The rate search (:mod:`calcheck.theory_checks.search.rates`) uses
the same two.
"""

from __future__ import annotations

import numpy as np

__all__ = ["N_BOOT", "ols_slopes", "threshold"]

#: Bootstrap resamples of the coverage counts (enough for a 1e-4 lower quantile).
N_BOOT = 20000


def threshold(coverage, n_grid, level) -> np.ndarray:
    """Interpolated crossing of ``coverage`` (``(..., G)``) with ``level`` on ``n_grid``.

    The last grid point below ``level`` and the next one are joined linearly in log n.
    Returns ``n_grid[0]`` where no point is below and ``inf`` where the last one is.
    """
    cov = np.asarray(coverage, dtype=float)
    grid = np.asarray(n_grid, dtype=float)
    logn = np.log(grid)
    g = logn.size
    below = cov < level
    any_below = below.any(axis=-1)
    last = g - 1 - np.argmax(below[..., ::-1], axis=-1)
    j = np.where(any_below, last, 0)
    nxt = np.minimum(j + 1, g - 1)
    c0 = np.take_along_axis(cov, j[..., None], axis=-1)[..., 0]
    c1 = np.take_along_axis(cov, nxt[..., None], axis=-1)[..., 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        frac = np.clip((level - c0) / (c1 - c0), 0.0, 1.0)
    out = np.exp(logn[j] + frac * (logn[nxt] - logn[j]))
    out = np.where(any_below, out, grid[0])
    return np.where(any_below & (last == g - 1), np.inf, out)


def ols_slopes(x, y) -> np.ndarray:
    """OLS slopes of ``y`` (``(..., T)``) on ``x`` (``(T,)``); inf where y is not finite."""
    xc = x - x.mean()
    finite = np.all(np.isfinite(y), axis=-1)
    yy = np.where(np.isfinite(y), y, 0.0)
    b = (yy - yy.mean(axis=-1, keepdims=True)) @ xc / (xc @ xc)
    return np.where(finite, b, np.inf)
