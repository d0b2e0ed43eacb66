"""Fixed binnings of the probability simplex for canonical calibration (gr22 App. G.1-G.2).

* Sierpinski binning (App. G.1, eqs. 18-19): depth q; each corner bin ``{s_l > 1/2}`` is
  re-parameterised by ``t = 2s - e_l`` and split again, the middle bin ``{all s_l <= 1/2}``
  never is. Bins are numbered in depth-first order, corners ``l = 1..L`` before the middle
  bin at every node (:func:`sierpinski_paths` lists them).
* Grid-style binning (App. G.2, eqs. 20-21): ``K = 1/tau``; bins ``b_k = {s : s_l K in
  [k_l - 1, k_l] for all l}`` for ``k`` in the index set ``I`` (20), a point on a shared face
  going to the lexicographically smallest ``k`` (the paper's tie-break). Numbered by the
  position of ``k`` in the lexicographically sorted ``I`` (:func:`grid_index_set`).

Exact geometry for the unit tests and the figures: bin vertices, exact volumes as
:class:`fractions.Fraction` of vol(Delta^(L-1)), the constructive proof of Proposition 2
(:func:`grid_cover_index`) and the inner simplex of Proposition 3
(:func:`grid_inner_simplex`). The stated counts and volumes are in
:mod:`calcheck.bounds.gr22_canonical`; ``tests/papers/test_gr22_simplex_bins.py`` compares the two.

Membership in float64: Sierpinski's comparisons ``t_l > 1/2`` are exact (``2t`` and
``2t - 1`` are exact for ``t`` in (1/2, 1]); a grid coordinate ``s_l K`` within ``atol``
(default 1e-9) of an integer is taken to lie on that grid face.

References
----------
C. Gupta and A. Ramdas, "Top-label calibration and multiclass-to-binary reductions", ICLR
2022, Appendix G.1-G.2, Propositions 2-3, Figures 10-11.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np

from .validation import check_positive_int

__all__ = [
    "check_simplex_points",
    "grid_bin",
    "grid_bin_volumes",
    "grid_contains",
    "grid_cover_index",
    "grid_cover_index_as_printed",
    "grid_index_set",
    "grid_inner_simplex",
    "sierpinski_bin",
    "sierpinski_bin_vertices",
    "sierpinski_bin_volumes",
    "sierpinski_paths",
]

#: Largest number of candidate index tuples (K^L) or bins enumerated.
_MAX_ENUMERATION = 10**6
#: Rows of ``scores`` must sum to 1 within this.
_SUM_TOL = 1e-9


def check_simplex_points(scores, name="scores", *, n_classes=None) -> np.ndarray:
    """Validate an ``(m, L)`` array of points of Delta^(L-1) (L >= 2); return it as float."""
    p = np.asarray(scores, dtype=np.float64)
    if p.ndim != 2 or p.shape[1] < 2 or p.shape[0] == 0:
        raise ValueError(f"{name} must be a 2-d array (m >= 1, L >= 2), got shape {p.shape}")
    if n_classes is not None and p.shape[1] != n_classes:
        raise ValueError(f"{name} must have {n_classes} columns, got shape {p.shape}")
    if not np.all(np.isfinite(p)) or np.any(p < 0) or np.any(p > 1):
        raise ValueError(f"{name} must hold probabilities in [0, 1], got e.g. {p[:2].tolist()}")
    sums = p.sum(axis=1)
    if np.any(np.abs(sums - 1.0) > _SUM_TOL):
        raise ValueError(
            f"{name} rows must sum to 1 (within {_SUM_TOL:g}), got sums such as "
            f"{sums[np.abs(sums - 1.0) > _SUM_TOL][:3].tolist()}"
        )
    return p


# ------------------------------------------------------------------------ Sierpinski
def _subtree_sizes(n_classes: int, depth: int) -> list[int]:
    """``S[r]``: leaves below a node still to be split r more times (S[0] = 1)."""
    sizes = [1]
    for _ in range(depth):
        sizes.append(n_classes * sizes[-1] + 1)
    return sizes


def _check_sierpinski(n_classes, depth):
    L = check_positive_int(n_classes, "n_classes", minimum=2)
    q = check_positive_int(depth, "depth", minimum=1)
    if _subtree_sizes(L, q)[-1] > _MAX_ENUMERATION:
        raise ValueError(
            f"Sierpinski binning with n_classes={n_classes!r}, depth={depth!r} has more than "
            f"{_MAX_ENUMERATION} bins"
        )
    return L, q


def sierpinski_paths(n_classes, depth) -> list[tuple[int, ...]]:
    """The bins in their numbering order, each as its path of 0-based choices.

    A path ``(l_1, ..., l_m)``: corner ``l_i < L`` at depth i; it ends at depth q with a
    corner, or earlier with ``L`` (a middle bin, never split further). The count is built
    by enumeration, independently of the formula ``(L^(q+1) - 1)/(L - 1)``.
    """
    L, q = _check_sierpinski(n_classes, depth)

    def below(prefix):
        if len(prefix) == q:
            return [prefix]
        out = []
        for corner in range(L):
            out += below((*prefix, corner))
        return [*out, (*prefix, L)]

    return below(())


def sierpinski_bin(scores, depth) -> np.ndarray:
    """Sierpinski bin (0-based, :func:`sierpinski_paths` order) of each row of ``scores``.

    Eq. (19) applied recursively: ``s_l > 1/2`` sends s to corner l and re-parameterises
    it as ``t = 2s - e_l``; no coordinate above 1/2 sends it to the middle bin. A boundary
    point ``s_l = 1/2`` is in the middle bin (the inequality is strict).
    """
    t = check_simplex_points(scores).copy()
    L, q = _check_sierpinski(t.shape[1], depth)
    sizes = _subtree_sizes(L, q)
    rows = np.arange(len(t))
    index = np.zeros(len(t), dtype=np.int64)
    active = np.ones(len(t), dtype=bool)
    for i in range(1, q + 1):
        over = t > 0.5
        corner = np.argmax(over, axis=1)  # at most one coordinate exceeds 1/2
        has = over.any(axis=1)
        middle = active & ~has
        index[middle] += L * sizes[q - i]
        active &= has
        index[active] += corner[active] * sizes[q - i]
        t[active] *= 2.0  # exact
        t[rows[active], corner[active]] -= 1.0  # exact: 2t_l in (1, 2]
    return index


def sierpinski_bin_vertices(n_classes, depth) -> list[np.ndarray]:
    """Vertices (rows, points of Delta^(L-1)) of each bin in :func:`sierpinski_paths` order.

    A corner bin is the simplex spanned by ``(V_j + V_l)/2``; the middle bin of a node with
    vertices V is the convex hull of the midpoints ``(V_i + V_j)/2``, i < j (for L = 3 the
    inverted triangle; in general a scaled hypersimplex).
    """
    L, _ = _check_sierpinski(n_classes, depth)
    out = []
    for path in sierpinski_paths(n_classes, depth):
        v = np.eye(L)
        for step in path:
            if step < L:
                v = (v + v[step]) / 2.0
            else:
                v = np.array([(v[i] + v[j]) / 2.0 for i, j in itertools.combinations(range(L), 2)])
        out.append(v)
    return out


def sierpinski_bin_volumes(n_classes, depth) -> list[Fraction]:
    """Exact volume of each bin as a fraction of vol(Delta^(L-1)), by enumeration.

    A corner step scales the node by 1/2 in L - 1 dimensions (volume ``2^-(L-1)``); the middle
    bin of a node is what its L disjoint corners leave, ``1 - L 2^-(L-1)`` of the node.
    """
    L, _ = _check_sierpinski(n_classes, depth)
    corner = Fraction(1, 2 ** (L - 1))
    vols = []
    for path in sierpinski_paths(n_classes, depth):
        v = Fraction(1)
        for step in path:
            v *= corner if step < L else 1 - L * corner
        vols.append(v)
    return vols


# ----------------------------------------------------------------------------- grid
def _check_grid(n_classes, n_grid):
    L = check_positive_int(n_classes, "n_classes", minimum=2)
    K = check_positive_int(n_grid, "n_grid")
    if K**L > _MAX_ENUMERATION:
        raise ValueError(
            f"n_grid**n_classes must be <= {_MAX_ENUMERATION} to enumerate the grid, got "
            f"n_grid={n_grid!r}, n_classes={n_classes!r}"
        )
    return L, K


def grid_index_set(n_classes, n_grid) -> np.ndarray:
    """The index set I of eq. (20), lexicographically sorted, shape ``(|I|, L)``.

    ``I = {k in N^L : max(L, K + 1) <= sum_l k_l <= K + L - 1}``, N = {1, 2, ...}. Every
    ``k_l <= K`` follows (the others are >= 1), so enumerating ``{1..K}^L`` suffices.
    """
    L, K = _check_grid(n_classes, n_grid)
    ks = np.array(list(itertools.product(range(1, K + 1), repeat=L)), dtype=np.int64)
    total = ks.sum(axis=1)
    return ks[(total >= max(L, K + 1)) & (total <= K + L - 1)]


def _grid_code(k: np.ndarray, n_grid: int) -> np.ndarray:
    """Base-(K + 1) code of index tuples: numeric order = lexicographic order."""
    weights = (n_grid + 1) ** np.arange(k.shape[-1] - 1, -1, -1, dtype=np.int64)
    return k @ weights


def _grid_coordinates(scores, n_grid, atol):
    s = check_simplex_points(scores)
    K = _check_grid(s.shape[1], n_grid)[1]
    if not (0 <= atol < 0.01):
        raise ValueError(f"atol must lie in [0, 0.01), got {atol!r}")
    x = s * K
    near = np.rint(x)
    on_face = np.abs(x - near) <= atol
    return x, near, on_face, K


def grid_bin(scores, n_grid, *, atol=1e-9) -> np.ndarray:
    """Grid bin of each row: the position in :func:`grid_index_set` of the smallest k.

    Coordinate by coordinate, ``k_l`` is ``ceil(s_l K)`` off the grid faces and ``s_l K``
    or ``s_l K + 1`` on one (1 if ``s_l = 0``); the lexicographic minimum takes the smaller
    value wherever the remaining coordinates can still bring ``sum k`` to ``K + 1``.
    """
    x, near, on_face, K = _grid_coordinates(scores, n_grid, atol)
    lo = np.where(on_face, np.maximum(near, 1), np.ceil(x)).astype(np.int64)
    hi = np.where(on_face & (near >= 1), near + 1, lo).astype(np.int64)
    if np.any(hi.sum(axis=1) < K + 1):  # impossible for rows summing to 1 (Prop. 2)
        raise RuntimeError("grid_bin: no grid bin reaches sum(k) >= K + 1 (rounding?)")
    rest = np.cumsum(hi[:, ::-1], axis=1)[:, ::-1]  # sum of hi over u >= l
    k = np.empty_like(lo)
    acc = np.zeros(len(x), dtype=np.int64)
    for col in range(x.shape[1]):
        after = rest[:, col + 1] if col + 1 < x.shape[1] else 0
        k[:, col] = np.where(acc + lo[:, col] + after >= K + 1, lo[:, col], hi[:, col])
        acc += k[:, col]
    codes = _grid_code(grid_index_set(x.shape[1], K), K)
    return np.searchsorted(codes, _grid_code(k, K))


def grid_contains(scores, k, n_grid, *, atol=1e-9) -> np.ndarray:
    """Whether each row s lies in ``b_k`` (21): ``k_l - 1 <= s_l K <= k_l`` within atol."""
    x, _, _, _ = _grid_coordinates(scores, n_grid, atol)
    k = np.asarray(k)
    return np.all((x >= k - 1 - atol) & (x <= k + atol), axis=-1)


def _cover_index(scores, n_grid, atol, as_printed):
    x, near, on_face, _ = _grid_coordinates(scores, n_grid, atol)
    natural = on_face & (near >= 1)
    zero = on_face & (near == 0)
    k = np.where(natural, near, np.maximum(1, np.ceil(np.where(zero, 0.0, x)))).astype(np.int64)
    bump = np.all(natural | zero, axis=1)  # condition C
    if not as_printed:
        bump &= ~zero.any(axis=1)  # a zero coordinate (k_l = 1 > 0) already lifts the sum
    first = np.argmax(natural, axis=1)
    rows = np.flatnonzero(bump)
    k[rows, first[rows]] += 1
    return k


def grid_cover_index(scores, n_grid, *, atol=1e-9) -> np.ndarray:
    """A bin ``k in I`` containing each row (``(m, L)`` ints): Proposition 2, corrected proof.

    For ``s_l K`` not in N = {1, 2, ...}: ``k_l = max(1, ceil(s_l K))``; for ``s_l K`` in N:
    ``k_l = s_l K``, plus 1 for the first such l when *every* ``s_l K`` is in N (then
    ``sum k = K + 1``; otherwise a zero or a non-integer coordinate already makes
    ``sum k >= K + 1``, and ``sum k <= K + L - 1``). The proof as printed adds the 1 under
    its condition C (every ``s_l K`` in N or 0), which at a vertex ``s = e_l`` gives
    ``sum k = K + L``, outside I (:func:`grid_cover_index_as_printed`).
    """
    return _cover_index(scores, n_grid, atol, as_printed=False)


def grid_cover_index_as_printed(scores, n_grid, *, atol=1e-9) -> np.ndarray:
    """The k of Proposition 2's proof as printed (App. G.2): s is in b_k, k may leave I.

    Condition C: every ``s_l K`` not in N is 0. If C holds, one l with ``s_l K`` in N (the
    first) gets ``s_l K + 1``, the other such l get ``s_l K`` and zeros get 1; otherwise
    ``k_l = s_l K`` where it is in N and ``max(1, ceil(s_l K))`` elsewhere. At the L
    vertices of the simplex this gives ``(K + 1, 1, ..., 1)``, whose sum ``K + L`` exceeds
    (20)'s ``K + L - 1``: a gap in the proof (the statement holds: :func:`grid_cover_index`).
    """
    return _cover_index(scores, n_grid, atol, as_printed=True)


def grid_inner_simplex(k, n_grid) -> tuple[list[Fraction], Fraction, Fraction]:
    """Proposition 3's ``u + v Delta^(L-1)`` inside ``b_k``, exactly: ``(u, v, tau)``.

    ``tau in [0, 1)`` solves (22), ``sum_l (k_l - 1) + tau L + (1 - tau) = K``, i.e.
    ``tau = (K - 1 - sum k + L)/(L - 1)`` (the proof's tau, not the grid width);
    ``u = (k + (tau - 1) 1)/K`` and ``v = (1 - tau)/K > 0``.
    """
    kk = [int(v) for v in np.asarray(k).ravel()]
    L, K = _check_grid(len(kk), n_grid)
    if min(kk) < 1:
        raise ValueError(f"k must hold integers >= 1, got {k!r}")
    tau = Fraction(K - 1 - sum(kk) + L, L - 1)
    u = [(kl + tau - 1) / K for kl in kk]
    return u, (1 - tau) / K, tau


def _eulerian_slice(n_classes: int, level: int) -> int:
    """``sum_i (-1)^i C(L, i) (m - i)^(L-1)``: (L-1)! times the unit cube's slice at m."""
    L, m = n_classes, level
    return sum((-1) ** i * math.comb(L, i) * (m - i) ** (L - 1) for i in range(m + 1))


def grid_bin_volumes(n_classes, n_grid) -> list[Fraction]:
    """Exact volume of each grid bin (``grid_index_set`` order) over vol(Delta^(L-1)).

    ``b_k - (k - 1)/K`` is ``1/K`` times the slice ``{y in [0, 1]^L : sum y = m}`` of the
    unit cube, ``m = K + L - sum k`` in ``1..min(L - 1, K)``; its volume relative to the
    simplex ``{y >= 0 : sum y = K}`` is ``A(L, m) / K^(L-1)`` with ``A(L, m)`` the Eulerian
    number of the slice (1, 1 for L = 3; 1, 4, 1 for L = 4). Mine, not the paper's: the
    unit tests cross-check it with convex hulls and Dirichlet(1) Monte Carlo.
    """
    L, K = _check_grid(n_classes, n_grid)
    levels = K + L - grid_index_set(L, K).sum(axis=1)
    return [Fraction(_eulerian_slice(L, int(m)), K ** (L - 1)) for m in levels]
