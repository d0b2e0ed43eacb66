"""Stated facts of gr22 App. G (canonical calibration by binning the simplex).

The paper's numbers for its canonical binning schemes -- Sierpinski binning (App. G.1),
grid-style binning (App. G.2) and projection histogram binning (Algorithm 10, App. G.3) --
as functions of the paper's symbols. The schemes themselves live in
:mod:`calcheck.simulations.simplex_bins` and
:mod:`calcheck.simulations.calibrators.projection_binning`;
unit tests compare the two (``tests/papers/test_gr22_simplex_bins.py``).

Only Algorithm 10's occupancy is a guarantee about data (``gr22.alg10.occupancy``,
registered below, identity: it holds on every calibration set without ties); the counts and
volumes are facts about fixed partitions, checked exactly by unit tests.

References
----------
.. [1] C. Gupta and A. Ramdas, "Top-label calibration and multiclass-to-binary reductions",
       ICLR 2022, Appendix G.1-G.3, eqs. (18)-(21), Algorithm 10.
"""

from __future__ import annotations

import numpy as np

from ._validation import as_integer_array, guard_public, scalar_or_array
from .guarantee import Guarantee

__all__ = [
    "SIERPINSKI_PRINTED_N_BINS",
    "alg10_interior_count",
    "alg10_interior_count_floor_n",
    "grid_n_bins_l3",
    "sierpinski_n_bins",
    "sierpinski_n_bins_as_printed",
    "sierpinski_volume_fractions",
]

#: The bin counts App. G.1 prints for L = 3, depth q -> B: "when q = 2, the number of bins is
#: B = 14, and when q = 3, B = 40" (B = 4 at q = 1 from eq. 18). 14 is a typo for 13.
SIERPINSKI_PRINTED_N_BINS = {1: 4, 2: 14, 3: 40}


def sierpinski_n_bins(n_classes, depth):
    r"""Number of Sierpinski bins at depth q, App. G.1: ``(L^(q+1) - 1) / (L - 1)``.

    Every depth splits each of the L corner bins into L + 1 and keeps the middle bin
    ``b_{L+1}`` whole, so ``N(q) = 1 + L N(q - 1)``, ``N(1) = L + 1``. This is the paper's
    formula (stated for L = 3 as ``(3^(q+1) - 1)/2`` and for general L at the end of G.1)
    and the corrected form of the number printed for L = 3, q = 2
    (:func:`sierpinski_n_bins_as_printed`). Quantifier: identity (a count).

    Parameters
    ----------
    n_classes : int or array_like of int
        L >= 2 (the paper takes L >= 3; L = 2 gives the dyadic binning of [0, 1]).
    depth : int or array_like of int
        q >= 1.

    Returns
    -------
    int or ndarray
        The number of bins.
    """
    L = as_integer_array(n_classes, "n_classes", minimum=2)
    q = as_integer_array(depth, "depth", minimum=1)
    big = (q + 1) * np.log2(L.astype(float)) > 52
    if np.any(big):
        raise ValueError(
            f"n_classes**(depth + 1) must be below 2**52 (exact), got n_classes={n_classes!r}, "
            f"depth={depth!r}"
        )
    out = (L ** (q + 1) - 1) // (L - 1)
    return int(out) if np.ndim(out) == 0 else out


def sierpinski_n_bins_as_printed(depth):
    """The Sierpinski bin counts App. G.1 prints for L = 3 (4, 14, 40 at q = 1, 2, 3).

    As printed, with the typo at q = 2: the paper's own formula ``(3^(q+1) - 1)/2`` and
    direct counting (``3 * 4 + 1``) give 13 (:func:`sierpinski_n_bins`, the corrected form);
    q = 1 and q = 3 agree with it. Quantifier: identity (a count).

    Parameters
    ----------
    depth : int
        q in {1, 2, 3}: the paper prints no other.

    Returns
    -------
    int
    """
    q = as_integer_array(depth, "depth", minimum=1)
    if q.ndim or int(q) not in SIERPINSKI_PRINTED_N_BINS:
        raise ValueError(f"depth must be 1, 2 or 3 (the depths App. G.1 prints), got {depth!r}")
    return SIERPINSKI_PRINTED_N_BINS[int(q)]


def sierpinski_volume_fractions(n_classes):
    r"""Depth-1 Sierpinski bin volumes as fractions of vol(Delta^(L-1)), App. G.1 (after eq. 19).

    ``vol(b_l) = vol(Delta^(L-1)) / 2^(L-1)`` for each corner bin ``b_l = {s_l > 1/2}``, and
    ``vol(b_(L+1)) = vol(Delta^(L-1)) (1 - L / 2^(L-1)) >= vol(Delta^(L-1)) / 2^(L-1)``, with
    equality only at L = 3 (every bin 1/4 of the triangle, eq. 18). Quantifier: identity.
    Both are dyadic rationals, exact in float64 for L <= 53.

    Parameters
    ----------
    n_classes : int or array_like of int
        L >= 3 (the statement's range; at L = 2 the middle bin is a point).

    Returns
    -------
    corner, middle : float or ndarray
        The fraction of each corner bin and of the middle bin.
    """
    L = as_integer_array(n_classes, "n_classes", minimum=3)
    if np.any(L > 53):
        raise ValueError(f"n_classes must be <= 53 (exact in float64), got {n_classes!r}")
    corner = np.ldexp(1.0, -(L - 1))
    return scalar_or_array(corner), scalar_or_array(1.0 - L * corner)


def grid_n_bins_l3(n_grid):
    """Number of grid-style bins for L = 3, App. G.2 (Fig. 11): ``K^2``, each of area ``1/K^2``.

    Read off Figure 11 (K = 4: 16 bins, K = 5: 25) and the statement "for L = 3, grid-style
    binning gives equi-volume bins"; the index set (20) has ``C(K, 2) + C(K + 1, 2) = K^2``
    elements for K >= 2 (and one for K = 1). Quantifier: identity.

    Parameters
    ----------
    n_grid : int or array_like of int
        K = 1/tau >= 1.

    Returns
    -------
    int or ndarray
    """
    K = as_integer_array(n_grid, "n_grid", minimum=1)
    if np.any(K > 2**26):
        raise ValueError(f"n_grid must be <= 2**26 (K^2 exact), got {n_grid!r}")
    return int(K * K) if np.ndim(K) == 0 else K * K


def _c(n, n_bins):
    n = as_integer_array(n, "n", minimum=1)
    b = as_integer_array(n_bins, "n_bins", minimum=1)
    if np.any(b > n + 1):
        raise ValueError(f"n_bins must be <= n + 1 (c >= 1), got n={n!r}, n_bins={n_bins!r}")
    return n, b


def alg10_interior_count(n, n_bins):
    r"""Algorithm 10's occupancy: each bin has ``>= floor((n+1)/B) - 1`` interior points.

    App. G.3: "by construction, the binning function is such that each bin contains at
    least ``floor((n+1)/B) - 1`` many points in its interior" (boundary points,
    ``g(X_i)^T q_s = T_s`` for some s, are left out of the bias estimates). Bins 1..B-1
    hold exactly ``c - 1`` interior points, ``c = floor((n+1)/B)``, and the last bin
    ``n - (B-1)c >= c - 1``.

    Parameters
    ----------
    n : int or array_like of int
        Calibration points.
    n_bins : int or array_like of int
        B, with ``1 <= B <= n + 1``.

    Returns
    -------
    int or ndarray
        The lower bound ``floor((n+1)/B) - 1`` (0 when B > (n+1)/2: vacuous).

    Notes
    -----
    Hypotheses: no ties among the projections ``g(X_i)^T q_b`` (implicit in the paper; it
    fails with atoms, see the hypothesis check); ``B <= n + 1``; unit vectors q_b arbitrary.
    Quantifier: identity -- for every calibration set without ties, whatever the q's.
    Gupta & Ramdas (2022), Algorithm 10, App. G.3.
    """
    n, b = _c(n, n_bins)
    out = (n + 1) // b - 1
    return int(out) if np.ndim(out) == 0 else out


def alg10_interior_count_floor_n(n, n_bins):
    r"""The occupancy as the paper's second sentence states it: ``>= floor(n/B) - 1``.

    App. G.3: "No matter how the q-vectors are chosen, the bins created by Algorithm 10
    have at least ``floor(n/B) - 1`` points for bias estimation" (OCR-garbled; this is
    the catalog's reading). Weaker than :func:`alg10_interior_count` (``floor(n/B) <=
    floor((n+1)/B)``), so implied by it; same hypotheses. Quantifier: identity.

    Parameters
    ----------
    n, n_bins : int or array_like of int
        As in :func:`alg10_interior_count`.

    Returns
    -------
    int or ndarray
    """
    n, b = _c(n, n_bins)
    out = n // b - 1
    return int(out) if np.ndim(out) == 0 else out


guard_public(globals())


#: The guarantees of this module, indexed by :mod:`calcheck.bounds.registry`.
GUARANTEES = (
    Guarantee(
        "gr22.alg10.occupancy",
        alg10_interior_count,
        "gr22",
        "Algorithm 10 (App. G.3), bin occupancy",
        "projection HB: every bin holds >= floor((n+1)/B) - 1 interior calibration points",
        ("no ties among the projections g(X_i)^T q_b", "B <= n + 1", "any unit q_1..q_B"),
        "identity",
    ),
)
