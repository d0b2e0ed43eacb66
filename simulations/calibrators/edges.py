"""Bin edges and bin membership: the one home of the binning conventions.

Bins are lexicographic intervals on ``(score, U)``: ``[(lower_s, lower_u), (upper_s,
upper_u))``, the outer edges being ``(0, 0)`` and ``(1, 1)`` so that the last bin is closed
at 1. Uniform-mass edges are the order statistics of ranks ``ceil(b (n + 1) / B)`` (Gupta &
Ramdas 2021, Algorithm 1); fixed-width bins are ``[0, 1/B), ..., [1 - 1/B, 1]``.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "assign_lexicographic_bins",
    "bin_index_from_edges",
    "bin_index_rows",
    "fixed_width_bin_index",
    "fixed_width_edges",
    "outer_edges",
    "sort_lexicographic",
    "sort_scores",
    "uniform_mass_edge_ranks",
    "uniform_mass_edges",
]


def uniform_mass_edge_ranks(n: int, n_bins: int) -> np.ndarray:
    """Ranks ``A_0 = 0, A_b = ceil(b (n + 1) / B), A_B = n + 1`` of gr21 Algorithm 1.

    Exact integer arithmetic (``ceil(b * ((n+1)/B))`` in float64 is wrong
    for e.g. n = 49, B = 22, b = 11).
    """
    b = np.arange(n_bins + 1, dtype=np.int64)
    return (b * (n + 1) + n_bins - 1) // n_bins


def sort_lexicographic(scores: np.ndarray, rng: np.random.Generator, *, tie_breaking: str):
    """Sort each row of ``scores`` and return ``(order, sorted_scores, sorted_u)``.

    With ``tie_breaking="lexicographic"``, rows with tied scores are re-sorted on
    ``(score, U)`` with an independent ``U ~ Unif[0, 1]`` per point (the delta -> 0 limit
    of gr21 Algorithm 2); U is drawn only when ties occur, so continuous laws pay nothing.
    With ``"none"`` ties keep their input order and every ``U`` is 0.
    """
    order = np.argsort(scores, axis=1)
    s_sorted = np.take_along_axis(scores, order, axis=1)
    u_sorted = np.zeros_like(s_sorted)
    if tie_breaking == "none":
        return order, s_sorted, u_sorted
    tied = (s_sorted[:, 1:] == s_sorted[:, :-1]).any(axis=1)
    if tied.any():
        rows = np.flatnonzero(tied)
        u = rng.random((rows.size, scores.shape[1]))
        sub = np.lexsort((u, scores[rows]), axis=1)
        order[rows] = sub
        s_sorted[rows] = np.take_along_axis(scores[rows], sub, axis=1)
        u_sorted[rows] = np.take_along_axis(u, sub, axis=1)
    return order, s_sorted, u_sorted


def sort_scores(scores: np.ndarray, rng: np.random.Generator, *, tie_breaking: str):
    """Sorted scores and their tie-breaking uniforms, without the permutation.

    For the Monte Carlo engine, which draws labels after sorting (labels are conditionally
    independent given scores). Same conventions as :func:`sort_lexicographic`; tied rows
    get iid uniforms, sorted within each run of equal scores.
    """
    s_sorted = np.sort(scores, axis=1)
    u_sorted = np.zeros_like(s_sorted)
    if tie_breaking == "none":
        return s_sorted, u_sorted
    tied = (s_sorted[:, 1:] == s_sorted[:, :-1]).any(axis=1)
    if tied.any():
        rows = np.flatnonzero(tied)
        u = rng.random((rows.size, scores.shape[1]))
        # Sort U within each run of equal scores with one float sort of (run index + U)
        # instead of a lexsort; the run index is exact and U keeps ~40 bits.
        run = np.zeros(u.shape)
        np.cumsum(s_sorted[rows, 1:] != s_sorted[rows, :-1], axis=1, out=run[:, 1:])
        u_sorted[rows] = np.sort(run + u, axis=1) - run
    return s_sorted, u_sorted


def outer_edges(s_sorted, u_sorted, ranks):
    """Bin edges at the given interior ranks (1-based) plus the outer edges (0,0), (1,1)."""
    r = s_sorted.shape[0]
    inner_s = s_sorted[:, ranks[1:-1] - 1]
    inner_u = u_sorted[:, ranks[1:-1] - 1]
    zeros, ones = np.zeros((r, 1)), np.ones((r, 1))
    return (
        np.hstack([zeros, inner_s]),
        np.hstack([zeros, inner_u]),
        np.hstack([inner_s, ones]),
        np.hstack([inner_u, ones]),
    )


def assign_lexicographic_bins(lower_s, lower_u, scores, u):
    """Bin index of each (score, u) for rows of lexicographic lower edges (R, B)."""
    # A point is in bin b when it is >= lower edge b and < lower edge b + 1.
    ge = (scores[:, :, None] > lower_s[:, None, 1:]) | (
        (scores[:, :, None] == lower_s[:, None, 1:]) & (u[:, :, None] >= lower_u[:, None, 1:])
    )
    return ge.sum(axis=2)


_COUNT_EDGES = 32  # up to this many inner edges, counting beats a binary search per point


def _edges_below(s, inner):
    """Number of (ascending) ``inner`` edges strictly below each score, and ties with one.

    ``np.searchsorted(inner, s, side="left")`` and ``np.isin(s, inner)``. With few edges,
    one comparison pass per edge is several times faster than a binary search per point
    (whose branches the unsorted scores mispredict); a score tied with an edge is the one
    whose next edge up equals it.
    """
    if inner.size > _COUNT_EDGES:
        return np.searchsorted(inner, s, side="left"), np.isin(s, inner)
    count = np.zeros(s.shape, dtype=np.int8)
    above = np.empty(s.shape, dtype=bool)
    for edge in inner:
        np.greater(s, edge, out=above)
        count += above
    bins = count.astype(np.intp)
    next_edge = np.append(inner, np.inf)[bins]
    return bins, next_edge == s


def _as_binary_labels(labels):
    """``labels`` as booleans if every label is 0 or 1, else None."""
    y = np.asarray(labels)
    if y.dtype == bool:
        return y
    if y.dtype.kind not in "iuf":
        return None
    binary = y.astype(bool)
    return binary if np.array_equal(binary, y) else None


def fixed_width_bin_index(values, n_bins: int) -> np.ndarray:
    """Bin of each value in ``[0, 1/B), ..., [1 - 1/B, 1]`` (the last bin closed at 1).

    Raises
    ------
    ValueError
        For a value outside [0, 1] or not finite (it has no bin; NaN would land in bin 0).
    """
    v = np.asarray(values, dtype=float)
    if not np.all((v >= 0) & (v <= 1)):  # also false for NaN
        bad = v[~((v >= 0) & (v <= 1))][:3]
        raise ValueError(f"values to bin must lie in [0, 1], got e.g. {bad.tolist()}")
    return np.minimum((v * n_bins).astype(np.int64), n_bins - 1)


def fixed_width_edges(n_bins: int) -> np.ndarray:
    """Edges ``0, 1/B, ..., 1`` of fixed-width bins."""
    return np.linspace(0.0, 1.0, n_bins + 1)


def bin_index_from_edges(values, edges) -> np.ndarray:
    """Bin of each value for edges ``e_0 = 0 < ... < e_B = 1``: ``[e_b, e_{b+1})``, last closed.

    ``edges`` of shape ``(B + 1,)`` for any ``values``, or ``(R, B + 1)`` with ``values`` of
    shape ``(R, n)`` (one partition per row). A value equal to an interior edge belongs
    to the upper bin.
    """
    v = np.asarray(values, dtype=float)
    e = np.asarray(edges, dtype=float)
    n_bins = e.shape[-1] - 1
    if e.ndim == 1:
        return np.clip(np.searchsorted(e, v, side="right") - 1, 0, n_bins - 1)
    return (v[..., None] >= e[:, None, 1:-1]).sum(axis=-1)


def bin_index_rows(values, edges) -> np.ndarray:
    """:func:`bin_index_from_edges` for one partition per row, in O(R n log B) memory-light.

    ``values`` ``(R, m)``, ``edges`` ``(R, B + 1)`` nondecreasing within [0, 1]: one
    ``searchsorted`` on rows shifted apart by 2 (same convention: a value equal to an
    interior edge belongs to the upper bin).
    """
    v = np.asarray(values, dtype=float)
    e = np.asarray(edges, dtype=float)
    r, n_bins = v.shape[0], e.shape[1] - 1
    shift = 2.0 * np.arange(r)[:, None]
    inner = (e[:, 1:-1] + shift).ravel()
    pos = np.searchsorted(inner, (v + shift).ravel(), side="right").reshape(v.shape)
    return pos - (n_bins - 1) * np.arange(r)[:, None]


def uniform_mass_edges(sorted_scores, n_bins: int) -> np.ndarray:
    """Edges ``0 < q_1 <= ... <= q_{B-1} < 1``: order statistics at gr21 Algorithm 1's ranks.

    ``sorted_scores`` has shape ``(..., n)``; the result ``(..., B + 1)``.
    """
    n = sorted_scores.shape[-1]
    ranks = uniform_mass_edge_ranks(n, n_bins)
    inner = sorted_scores[..., ranks[1:-1] - 1]
    shape = (*inner.shape[:-1], 1)
    return np.concatenate([np.zeros(shape), inner, np.ones(shape)], axis=-1)


def _sort_binary_labels(scores, labels, rng):
    """``(s_sorted, u_sorted, y_sorted)`` as ``fit_batch`` sorts them (y as int64), or None.

    :func:`~calcheck.simulations.calibrators.edges.sort_lexicographic` followed by the label gather,
    for scores in [+0, 2) and labels in {0, 1}: the float64 bits of a nonnegative score
    order like the score, so one integer sort of ``2 bits + y`` sorts scores and labels
    together (an argsort and two gathers cost about 3 sorts). A row without tied scores has
    one sorted order, so the result is identical; rows with ties are re-sorted on
    ``(score, U)`` as in ``sort_lexicographic``, with U drawn only then (same draws), by
    :func:`_sort_tied_rows`. None for other inputs (the caller falls back to ``fit_batch``).
    """
    bits = np.ascontiguousarray(scores, dtype=np.float64).view(np.int64)
    # Unsigned bits below those of 2.0: rejects negative scores, -0.0, >= 2 and NaN.
    if not bits.view(np.uint64).max() < _TWO_BITS:
        return None
    key = bits << 1
    if labels.dtype == bool:
        key |= labels
    else:
        key += labels.astype(np.int64)
    key.sort(axis=1)
    s_sorted = (key >> 1).view(np.float64)
    tied = (s_sorted[:, 1:] == s_sorted[:, :-1]).any(axis=1)
    u_sorted = np.zeros(s_sorted.shape)
    # Integer labels (the fit sums them exactly, without a cumsum), in place of the key;
    # all rows tied (e.g. atomic scores): every row's labels are re-sorted below.
    if tied.all():
        y_sorted = np.empty(s_sorted.shape, dtype=np.int64)
    else:
        y_sorted = key
        y_sorted &= 1
    if tied.any():
        rows = np.flatnonzero(tied)
        u = rng.random((rows.size, scores.shape[1]))
        _sort_tied_rows(scores[rows], labels[rows], u, s_sorted, u_sorted, y_sorted, rows)
    return s_sorted, u_sorted, y_sorted


_TWO_BITS = int(np.float64(2.0).view(np.int64))
_U_BITS = 53  # rng.random() is k / 2**53 with an integer k < 2**53
_MAX_CODES = 1 << (62 - _U_BITS)  # code, U and label share one nonnegative int64


def _sort_tied_rows(scores, labels, u, s_sorted, u_sorted, y_sorted, rows):
    """Sort tied rows on ``(score, U)`` into ``u_sorted[rows]``, ``y_sorted[rows]``.

    ``s_sorted`` already holds the sorted scores (any order on ``(score, U)`` sorts them).
    When the tied rows hold few distinct scores (atomic laws), one integer sort of
    ``code << 54 | (2**53 U) << 1 | y`` replaces ``np.lexsort`` and its gathers, where
    ``code`` is the rank of the score among those values: the key orders like
    ``(score, U)``, and ``U`` and ``y`` are read back exactly. Rows where two keys might
    share score and U (lexsort keeps their input order, the key would order them by label)
    and rows with many distinct scores take ``np.lexsort`` itself.
    """
    sr = s_sorted[rows]
    starts = np.ones(sr.shape, dtype=bool)
    np.not_equal(sr[:, 1:], sr[:, :-1], out=starts[:, 1:])
    slow = np.ones(rows.size, dtype=bool)
    values = np.unique(sr[starts]) if starts.sum(axis=1).max() < _MAX_CODES else sr[:0, 0]
    if 0 < values.size < _MAX_CODES:
        if values.size <= 8:  # a few comparisons beat a binary search per point
            code = np.zeros(scores.shape, dtype=np.int8)
            for v in values[1:]:
                code += scores >= v
        else:
            code = np.searchsorted(values, scores)
        key = np.multiply(u, float(1 << _U_BITS)).astype(np.int64)
        key <<= 1
        key += code.astype(np.int64) << (_U_BITS + 1)
        if labels.dtype == bool:
            key |= labels
        else:
            key += labels.astype(np.int64)
        key.sort(axis=1)
        # sorted keys 1 apart may share (code, U): such rows (a.s. none) go to lexsort
        slow = (np.diff(key, axis=1) < 2).any(axis=1)
        if slow.any():
            fast = np.flatnonzero(~slow)
            key, rows_fast = key[fast], rows[fast]
        else:
            rows_fast = rows
        if rows_fast.size == y_sorted.shape[0]:  # every row: write in place
            np.bitwise_and(key, 1, out=y_sorted)
            key >>= 1
            key &= (1 << _U_BITS) - 1
            np.multiply(key, 1.0 / (1 << _U_BITS), out=u_sorted)
        else:
            y_sorted[rows_fast] = key & 1
            key >>= 1
            key &= (1 << _U_BITS) - 1
            u_sorted[rows_fast] = key * (1.0 / (1 << _U_BITS))
    if slow.any():
        idx = np.flatnonzero(slow)
        sub = np.lexsort((u[idx], scores[idx]), axis=1)
        u_sorted[rows[idx]] = np.take_along_axis(u[idx], sub, axis=1)
        y_sorted[rows[idx]] = np.take_along_axis(labels[idx], sub, axis=1)
