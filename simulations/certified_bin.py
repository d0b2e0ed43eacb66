"""One bin of the certified reduction: ``inf_p P(|K/m - p| <= r(K, m))``, computed exactly.

:mod:`calcheck.simulations.certified_coverage` states the reduction (gr21 Lemma 2) and how
the infimum is found without a grid: the accepted counts are fixed between the ends of the
intervals ``[k/m - r(k, m), k/m + r(k, m)]``, and on such a piece a run of consecutive counts
has a quasi-concave probability, whose infimum is a one-sided limit at an end. This module
computes it for one bin (with or without an edge point of arbitrary mean), in float64 and,
near a threshold, in interval arithmetic (mpmath ``iv``).
"""

from __future__ import annotations

import contextlib
import functools
import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from scipy.stats import binom

from .exact_coverage import MAX_POINTS
from .validation import check_positive_int

__all__ = [
    "RIGOROUS_DPS",
    "RIGOROUS_MARGIN",
    "BinInfimum",
    "bin_infimum",
    "fixed_bin",
    "float_below",
    "iv_precision",
    "radii",
    "rigorous_min",
]

#: Distance to a caller's threshold below which the float64 value is recomputed rigorously.
RIGOROUS_MARGIN = 1e-9
#: Decimal digits of the interval arithmetic of the rigorous recomputation.
RIGOROUS_DPS = 40
#: Pieces x counts handled at once (memory of the accepted-set matrix).
_CHUNK = 2_000_000


@dataclass(frozen=True)
class BinInfimum:
    """``inf_p P(bin within its radius)`` for one bin of the reduction.

    Attributes
    ----------
    m : int
        Labels averaged by the bin.
    edge_point : bool
        Whether one of them is an edge point of arbitrary mean (Zadrozny-Elkan).
    value : float
        The infimum (a lower bound: see the module notes on several runs).
    p : float
        The ``Pi_b`` at which it is approached (a one-sided limit).
    q : int or None
        The edge point's worst mean (0 or 1), None without an edge point.
    rigorous : bool
        Whether ``value`` is the lower end of an interval-arithmetic ball.
    """

    m: int
    edge_point: bool
    value: float
    p: float
    q: int | None
    rigorous: bool = False


# --------------------------------------------------------------------- the radius of a bin
def radii(radius, m: int) -> np.ndarray:
    """``r(k, m)`` for k = 0..m: a fixed radius, or a callable of (label sums, size)."""
    k = np.arange(m + 1, dtype=float)
    if callable(radius):
        r = np.asarray(radius(k, m), dtype=float)
        if r.shape != k.shape:
            raise ValueError(
                f"radius(k, m) must return one radius per label sum k = 0..m (shape "
                f"{k.shape}), got shape {r.shape}"
            )
    else:
        r = np.full(k.shape, float(radius))
    if np.any(np.isnan(r)) or np.any(r < 0):
        raise ValueError(f"radius must be >= 0 and not NaN for every label sum, got {r!r}")
    return r


def _end(k: int, m: int, r: float, sign: int) -> Fraction:
    """``k/m + sign r`` clipped to [0, 1], exactly (a float radius is a dyadic rational)."""
    if not np.isfinite(r):
        return Fraction(0) if sign < 0 else Fraction(1)
    return min(max(Fraction(k, m) + sign * Fraction(float(r)), Fraction(0)), Fraction(1))


def _pieces(m: int, r: np.ndarray):
    """The interval ends in exact arithmetic: ``(lo_rank, hi_rank, points, exact_points)``.

    ``exact_points`` are the distinct ends of the intervals ``[k/m - r_k, k/m + r_k]`` and
    0, 1, sorted exactly (rationals: no rounding can open a gap between two intervals that
    touch, or close one that is there); ``points`` are their floats (where probabilities
    are evaluated); ``lo_rank[k]``, ``hi_rank[k]`` the positions of count k's ends among them.
    Count k is accepted on the piece between points i and i + 1 exactly when
    ``lo_rank[k] <= i`` and ``hi_rank[k] >= i + 1``.
    """
    lo = [_end(k, m, r[k], -1) for k in range(m + 1)]
    hi = [_end(k, m, r[k], +1) for k in range(m + 1)]
    exact = sorted({*lo, *hi, Fraction(0), Fraction(1)})
    rank = {x: i for i, x in enumerate(exact)}
    lo_rank = np.array([rank[x] for x in lo])
    hi_rank = np.array([rank[x] for x in hi])
    return lo_rank, hi_rank, np.array([float(x) for x in exact]), exact


# --------------------------------------------------------------- the infimum of one bin
def _run_ends(accepted: np.ndarray):
    """``(piece, first, last)`` of every run of consecutive accepted counts, row by row."""
    padded = np.zeros((accepted.shape[0], accepted.shape[1] + 2), dtype=np.int8)
    padded[:, 1:-1] = accepted
    step = np.diff(padded, axis=1)
    starts = np.nonzero(step == 1)
    ends = np.nonzero(step == -1)
    # np.nonzero walks row-major: the i-th start and the i-th end bound the same run
    return starts[0], starts[1], ends[1] - 1


def _window(first, last, m_inner: int, p) -> np.ndarray:
    """``P(first <= K' <= last)`` for ``K' ~ Bin(m_inner, p)`` (float64)."""
    return np.clip(binom.cdf(last, m_inner, p) - binom.cdf(first - 1, m_inner, p), 0.0, 1.0)


def _accepted(lo_rank, hi_rank, pieces: np.ndarray, s: int, m_inner: int) -> np.ndarray:
    """Counts K' = j - s accepted on each piece (rows), K' = 0..m_inner (columns)."""
    accepted = (lo_rank[None, :] <= pieces[:, None]) & (hi_rank[None, :] >= pieces[:, None] + 1)
    # counts j of the bin are K' + s: K' = j - s must lie in 0..m_inner
    return accepted[:, s : s + m_inner + 1]


def _candidates(m: int, r: np.ndarray, shift: int):
    """Lower bound on each piece and where: ``(values, p)`` for an edge mean ``shift``."""
    lo_rank, hi_rank, points, _ = _pieces(m, r)
    n_pieces = points.size - 1
    m_inner = m - (1 if shift is not None else 0)
    s = 0 if shift is None else shift
    values = np.empty(n_pieces)
    where = np.empty(n_pieces)
    step = max(1, _CHUNK // (m + 1))
    for start in range(0, n_pieces, step):
        pieces = np.arange(start, min(start + step, n_pieces))
        a, b = points[pieces], points[pieces + 1]
        piece, first, last = _run_ends(_accepted(lo_rank, hi_rank, pieces, s, m_inner))
        at_a = _window(first, last, m_inner, a[piece])
        at_b = _window(first, last, m_inner, b[piece])
        low = np.minimum(at_a, at_b)
        total = np.bincount(piece, weights=low, minlength=a.size)
        values[start : start + a.size] = np.clip(total, 0.0, 1.0)
        # where: the end of the first run's smaller value (one run is the usual case)
        pick = np.full(a.size, -1)
        pick[piece[::-1]] = np.arange(piece.size)[::-1]
        use_b = np.zeros(a.size, dtype=bool)
        has = pick >= 0
        use_b[has] = at_b[pick[has]] < at_a[pick[has]]
        where[start : start + a.size] = np.where(use_b, b, a)
    return values, where


def bin_infimum(m, radius, *, edge_point=False, threshold=None) -> BinInfimum:
    r"""``inf_{p in [0, 1]} P(|K/m - p| <= r(K, m))`` over the laws of one bin.

    .. math:: \inf_{p \in [0, 1]} P\big(|K/m - p| \le r(K, m)\big),
              \quad K \sim \mathrm{Bin}(m, p)

    (with ``edge_point``: ``K = K' + Y_e``, ``K' ~ Bin(m - 1, p)``, ``Y_e ~ Bern(q)``, also
    infimised over q).

    Parameters
    ----------
    m : int
        Labels averaged (>= 1; >= 2 with an edge point).
    radius : float or callable
        A fixed radius >= 0, or ``radius(k, m) -> ndarray`` giving the radius of a bin whose
        label sum is k (k = 0..m, float array) and size m: a radius computed from the bin's
        data, such as an empirical-Bernstein one.
    edge_point : bool, default False
        One of the m labels has an arbitrary mean (Zadrozny-Elkan's upper edge point).
    threshold : float, optional
        Where the float64 value lies within
        :data:`~calcheck.simulations.certified_bin.RIGOROUS_MARGIN` of this, it is
        recomputed in interval arithmetic and the ball's lower end returned.

    Returns
    -------
    BinInfimum

    Examples
    --------
    A bin of 4 labels and radius 0.3: the infimum is 0.667, approached at p -> 0.45 (and,
    by symmetry, 0.55), one minus the supremum of
    :func:`calcheck.simulations.binomial_sup.sup_binomial_tail`:

    >>> b = bin_infimum(4, 0.3)
    >>> round(b.value, 4), round(b.p, 2)
    (0.667, 0.45)
    """
    m = check_positive_int(m, "m", 2 if edge_point else 1, maximum=MAX_POINTS)
    if not callable(radius):
        e = float(radius)
        if not e >= 0:
            raise ValueError(f"radius must be a number >= 0 or a callable, got {radius!r}")
        if e == np.inf:
            return BinInfimum(m, bool(edge_point), 1.0, 0.5, 0 if edge_point else None)
    return _bin_infimum(m, radius, bool(edge_point), threshold)


def _fixed_candidates(m: int, eps: float, shift):
    """:func:`_candidates` of a fixed radius in O(m): only where a count leaves the window.

    With one radius the accepted counts are the window ``m (p - eps) <= j <= m (p + eps)``:
    one run. A piece's end where a count enters the window is dominated by the neighbouring
    piece's end (fewer counts, same p), so the one-sided limits that matter are just past
    ``k/m + eps`` (k has left from below: j in ``k+1 .. k + floor(2 m eps)``) and just before
    ``k/m - eps`` (k has left from above: j in ``k - floor(2 m eps) .. k-1``), as in
    :func:`calcheck.simulations.binomial_sup.sup_binomial_tail`. ``floor(2 m eps)`` and which
    ends lie inside (0, 1) are decided in exact arithmetic (the float radius is a dyadic
    rational), so a radius a rounding below a lattice value is not taken for that value.
    """
    k = np.arange(m + 1)
    e = Fraction(float(eps))
    width = math.floor(2 * m * e)
    m_inner = m - (1 if shift is not None else 0)
    s = 0 if shift is None else shift
    keep_up = k < math.ceil(m - m * e)  # k/m + eps < 1
    keep_down = k > math.floor(m * e)  # k/m - eps > 0
    up = k / m + eps
    down = k / m - eps
    first = np.concatenate([k[keep_up] + 1, k[keep_down] - width])
    last = np.concatenate([k[keep_up] + width, k[keep_down] - 1])
    where = np.concatenate([up[keep_up], down[keep_down]])
    first = np.maximum(first - s, 0)
    last = np.minimum(last - s, m_inner)
    values = np.where(last >= first, _window(first, last, m_inner, where), 0.0)
    if values.size == 0:  # no count ever leaves: the radius covers [0, 1] from every count
        return np.ones(1), np.full(1, 0.5)
    return values, where


def _bin_infimum(m: int, radius, edge_point: bool, threshold) -> BinInfimum:
    r = radii(radius, m)
    best = None
    for shift in (0, 1) if edge_point else (None,):
        if callable(radius):
            values, where = _candidates(m, r, shift)
        else:
            values, where = _fixed_candidates(m, float(radius), shift)
        i = int(np.argmin(values))
        if best is None or values[i] < best[0]:
            best = (float(values[i]), float(where[i]), shift, values, where)
    value, p, shift, values, where = best
    if threshold is not None and abs(value - float(threshold)) <= RIGOROUS_MARGIN:
        value = rigorous_min(m, r, edge_point, value)
        return BinInfimum(m, edge_point, value, p, shift, True)
    return BinInfimum(m, edge_point, value, p, shift)


@functools.lru_cache(maxsize=512)
def fixed_bin(m: int, eps: float, edge_point: bool) -> BinInfimum:
    """:func:`bin_infimum` of a fixed radius, unvalidated and cached (layouts repeat sizes)."""
    return _bin_infimum(m, eps, edge_point, None)


# ------------------------------------------------------------- rigorous recomputation
def rigorous_min(m: int, r: np.ndarray, edge_point: bool, float_value: float) -> float:
    """The candidates within ``RIGOROUS_MARGIN`` of the float minimum, in interval arithmetic.

    The piece ends are the exact rationals of ``_pieces``, so the balls enclose the
    probabilities at the true ends, not at their floats.
    """
    import mpmath

    lowest = np.inf
    lo_rank, hi_rank, _, exact = _pieces(m, r)
    for shift in (0, 1) if edge_point else (None,):
        values, _ = _candidates(m, r, shift)
        near = np.flatnonzero(values <= float_value + 10 * RIGOROUS_MARGIN)
        m_inner = m - (1 if shift is not None else 0)
        s = 0 if shift is None else shift
        accepted = _accepted(lo_rank, hi_rank, near, s, m_inner)
        with iv_precision():
            for row, i in enumerate(near):
                counts = np.flatnonzero(accepted[row])
                total = mpmath.iv.mpf(0)
                for run in np.split(counts, np.flatnonzero(np.diff(counts) > 1) + 1):
                    if run.size:
                        ends = [
                            _iv_window(int(run[0]), int(run[-1]), m_inner, x)
                            for x in (exact[i], exact[i + 1])
                        ]
                        total += _iv_min(ends)
                lowest = min(lowest, float_below(total.a))
    return max(lowest, 0.0)


@contextlib.contextmanager
def iv_precision():
    """The interval context of mpmath at ``RIGOROUS_DPS`` digits, restored afterwards."""
    import mpmath

    saved = mpmath.iv.dps
    mpmath.iv.dps = RIGOROUS_DPS
    try:
        yield
    finally:
        mpmath.iv.dps = saved


def _iv_window(first: int, last: int, m_inner: int, p: Fraction):
    """``P(first <= K' <= last)`` as an mpmath interval at the exact rational ``p``."""
    import mpmath

    iv = mpmath.iv
    p = iv.mpf(p.numerator) / iv.mpf(p.denominator)
    total = iv.mpf(0)
    for k in range(first, last + 1):
        total += iv.mpf(mpmath.binomial(m_inner, k)) * p**k * (1 - p) ** (m_inner - k)
    return total


def float_below(x) -> float:
    """A float64 at most the mpmath number ``x`` (rounding to nearest could go above it)."""
    return float(np.nextafter(float(x), -np.inf))


def _iv_min(balls):
    """An interval below every ball's lower end: the smaller of two end values."""
    import mpmath

    low = min(mpmath.mpf(b.a) for b in balls)
    return mpmath.iv.mpf([low, low])
