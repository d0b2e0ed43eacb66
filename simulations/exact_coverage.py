"""Exact coverage of histogram binning when ``eta = E[Y | S]`` is a constant.

With a constant ``eta`` in (0, 1) the labels are iid Bernoulli(eta) and independent of the
scores (and of the tie-breaking uniforms), so the label sum of any fixed set of ranks is
binomial and sums over disjoint rank sets are independent. Uniform-mass binning with double
dipping (gr21 Algorithm 1 / 2, and the Zadrozny-Elkan variant that nch14 Sec. 3 calls Hist)
averages fixed rank sets, whatever the scores: bin b's mean is ``K_b / m_b`` with
independent ``K_b ~ Bin(m_b, eta)`` (gr21 Lemma 2 gives this for any law and any eta given
the edges; constant eta makes it unconditional). Every bin has exact bias
``Pi_b = eta``, also after merging bins with equal outputs, so the error of bin b is
``|K_b / m_b - eta|`` and

* the **conditional** event "every output within eps" has probability
  ``prod_b P(|K_b / m_b - eta| <= eps)``;
* the **marginal** event "a fresh test point's output within eps" has probability
  ``sum_b E[w_b] P(|K_b / m_b - eta| <= eps)``: the bin masses ``w_b`` depend on the scores
  only, hence are independent of the labels, and under the lexicographic order on
  ``(score, U)`` (continuous scores, or any law with tie-breaking) they are uniform spacings,
  ``E[w_b] = (A_b - A_{b-1}) / (n + 1)`` (gr21 Lemma 2 check; Algorithm 1 edges
  ``A_b = ceil(b (n + 1) / B)``).

This is the event :class:`~calcheck.simulations.experiments.binning.BinningExperiment` counts:
``Within("max_error")`` (conditional) and ``Marginal()`` (a test point whose bin is drawn
with the exact masses; its Rao-Blackwellised estimate is ``sum_b w_b 1{err_b <= eps}``),
for the calibrators ``umd``, ``randomized_umd`` (delta = 0, distinct or as-returned outputs)
and ``zadrozny_elkan``; and, class by class, what
:class:`~calcheck.simulations.experiments.gr22.TopLabelBinningExperiment` counts (gr22 Algorithm 8
runs randomized UMD on each predicted class).

Boundary: the events are closed (``<= eps``). In counts, ``|k - m eta| <= m eps`` is
evaluated with a slack of :data:`COUNT_TOLERANCE` counts, so that ``eps = |k/m - eta|``
computed in float64 counts k as inside; the Monte Carlo compares float64 errors with the
radius and may differ from this only when eps is within a few ulps of such a value.

References
----------
.. [1] C. Gupta and A. Ramdas, "Distribution-free calibration guarantees for histogram
       binning without sample splitting", ICML 2021: Algorithms 1-2, Lemma 2, Theorem 3
       (eq. 8), Theorem 4 (eq. 11).
.. [2] C. Gupta and A. Ramdas, "Top-label calibration and multiclass-to-binary reductions",
       ICLR 2022: Algorithm 8, Theorem 1 (eqs. 8-9; the proof is per predicted class).
.. [3] M. P. Naeini, G. F. Cooper and M. Hauskrecht, "Binary classifier calibration:
       non-parametric approach", arXiv:1401.3390 (2014): Theorem 3.1, eqs. (1)-(3).
"""

from __future__ import annotations

import numpy as np
from scipy.stats import binom

from .calibrators.edges import uniform_mass_edge_ranks
from .validation import MAX_POINTS, check_binning_sizes, check_eps, check_positive_int

__all__ = [
    "COUNT_TOLERANCE",
    "EVENTS",
    "MAX_POINTS",
    "SCHEMES",
    "bin_point_counts",
    "bin_within_probability",
    "exact_coverage",
    "expected_bin_masses",
    "layout_coverage",
    "looseness_grid",
    "smallest_exact_eps",
]

#: Binning schemes: which ranks each bin averages (both use gr21 Algorithm 1's edges).
SCHEMES = ("umd", "zadrozny_elkan")
#: Events: every output within eps (conditional), a fresh test point within eps (marginal).
EVENTS = ("conditional", "marginal")
#: Slack, in label counts, of the closed cut-offs ``|k - m eta| <= m eps``.
COUNT_TOLERANCE = 1e-9


# ------------------------------------------------------------------------- validation
_sizes = check_binning_sizes  # (its home is the validation module: plan checks it lightly)


def _open_unit(value, name, what="a number"):
    """A float in (0, 1); ValueError naming ``name`` and echoing ``value`` otherwise."""
    try:
        v = float(value) if not isinstance(value, bool) else None
    except (TypeError, ValueError):
        v = None
    if v is None or not 0.0 < v < 1.0:
        raise ValueError(f"{name} must be {what} in (0, 1), got {value!r}")
    return v


def _eta(eta):
    return _open_unit(eta, "eta", "a constant")


def _choice(value, allowed, name):
    if value not in allowed:
        raise ValueError(f"{name} must be one of {allowed}, got {value!r}")
    return value


def _alpha(alpha):
    return _open_unit(alpha, "alpha")


# ----------------------------------------------------------------------- bin layouts
def bin_point_counts(n, n_bins, scheme="umd") -> np.ndarray:
    """Number of calibration labels averaged in each bin, ``m_b`` (b = 1..B).

    Parameters
    ----------
    n : int
        Calibration points, ``n >= 2 B``.
    n_bins : int
        Bins B.
    scheme : {"umd", "zadrozny_elkan"}
        ``"umd"``: gr21 Algorithm 1 (and Algorithm 2, TL-HB per class), ranks
        ``A_{b-1}+1 .. A_b - 1``: ``m_b = A_b - A_{b-1} - 1``, at least
        ``floor((n+1)/B) - 1 >= floor(n/B) - 1`` (gr21 Sec. 3.2). ``"zadrozny_elkan"``:
        gr21 Corollary 1's original UMD and nch14's Hist, ranks ``A_{b-1}+1 .. min(A_b, n)``
        (all n points).

    Returns
    -------
    ndarray of int, shape (B,)
        Sums to ``n + 1 - B`` (UMD) or ``n`` (Zadrozny-Elkan).
    """
    n, n_bins = _sizes(n, n_bins)
    _choice(scheme, SCHEMES, "scheme")
    ranks = uniform_mass_edge_ranks(n, n_bins)
    upper = ranks[1:] - 1 if scheme == "umd" else np.minimum(ranks[1:], n)
    return (upper - ranks[:-1]).astype(np.int64)


def expected_bin_masses(n, n_bins) -> np.ndarray:
    """``E[w_b] = (A_b - A_{b-1}) / (n + 1)``: expected test mass of each bin.

    Parameters
    ----------
    n, n_bins : int
        As in :func:`bin_point_counts`.

    Returns
    -------
    ndarray, shape (B,)
        Sums to 1.

    Notes
    -----
    Bin b is ``[S_(A_{b-1}), S_(A_b))`` in the lexicographic order on ``(score, U)``, whose
    probability integral transform is uniform for every score law; the masses are then
    uniform spacings, ``w_b ~ Beta(A_b - A_{b-1}, n + 1 - A_b + A_{b-1})`` (gr21 Lemma 2 and
    its check), the same for both schemes.
    """
    n, n_bins = _sizes(n, n_bins)
    return np.diff(uniform_mass_edge_ranks(n, n_bins)) / (n + 1.0)


def bin_within_probability(m, eta, eps) -> np.ndarray:
    """``P(|K/m - eta| <= eps)`` for ``K ~ Bin(m, eta)``: one bin's exact coverage.

    Parameters
    ----------
    m : int
        Labels averaged in the bin (>= 1).
    eta : float
        Constant bias in (0, 1).
    eps : float or 1-d array_like
        Radii (negative radii give 0).

    Returns
    -------
    float or ndarray
        Shape of ``eps``; never NaN.

    Notes
    -----
    The count cut-offs are ``ceil(m (eta - eps) - tol)`` and ``floor(m (eta + eps) + tol)``
    with ``tol =`` :data:`COUNT_TOLERANCE` (closed event, see the module notes).
    """
    m = check_positive_int(m, "m", maximum=MAX_POINTS)
    eta = _eta(eta)
    e = check_eps(eps)
    out = _within(m, eta, e)
    return float(out) if out.ndim == 0 else out


def _within(m: int, eta: float, eps: np.ndarray) -> np.ndarray:
    """Unvalidated :func:`bin_within_probability` (array in, array out)."""
    with np.errstate(invalid="ignore"):
        lo = np.ceil(m * (eta - eps) - COUNT_TOLERANCE)
        hi = np.floor(m * (eta + eps) + COUNT_TOLERANCE)
    lo = np.clip(np.nan_to_num(lo, nan=0.0, neginf=0.0, posinf=m + 1.0), 0, m + 1)
    hi = np.clip(np.nan_to_num(hi, nan=-1.0, neginf=-1.0, posinf=m), -1, m)
    p = binom.cdf(hi, m, eta) - binom.cdf(lo - 1, m, eta)
    return np.where(hi >= lo, np.clip(p, 0.0, 1.0), 0.0)


# --------------------------------------------------------------------------- coverage
def _coverage(counts, weights, etas, eps: np.ndarray, event: str) -> np.ndarray:
    """Coverage of a layout of independent binomial bins at each eps.

    ``counts``, ``weights`` (expected test masses, summing to 1) and ``etas`` are per bin.
    """
    keys = np.stack([np.asarray(counts, dtype=float), np.asarray(etas, dtype=float)], axis=1)
    uniq, inverse = np.unique(keys, axis=0, return_inverse=True)
    inverse = np.ravel(inverse)
    e = np.atleast_1d(eps).astype(float)
    if event == "conditional":
        out = np.ones(e.shape)
        for j, (m, eta) in enumerate(uniq):
            mult = int(np.sum(inverse == j))
            out = out * _within(int(m), float(eta), e) ** mult
    else:
        out = np.zeros(e.shape)
        w = np.asarray(weights, dtype=float)
        for j, (m, eta) in enumerate(uniq):
            out = out + w[inverse == j].sum() * _within(int(m), float(eta), e)
        out = np.clip(out, 0.0, 1.0)
    return out.reshape(np.shape(eps))


def layout_coverage(counts, weights, etas, eps, *, event="conditional"):
    r"""Exact coverage of independent binomial bins: any layout, one eta per bin.

    Bin b averages ``counts[b]`` labels, i.i.d. Bernoulli(``etas[b]``), independently of the
    other bins; ``weights[b]`` is the probability that a fresh test point falls in bin b.

    .. math:: \text{conditional: } \prod_b P(|K_b/m_b - \eta_b| \le \varepsilon),
              \qquad \text{marginal: } \sum_b w_b\, P(|K_b/m_b - \eta_b| \le \varepsilon).

    :func:`exact_coverage` (one eta, gr21 Algorithm 1's layout) and
    ``exact_top_label.top_label_exact_coverage`` (gr22 Algorithm 8, one eta per class) are
    this function on their layouts; :mod:`calcheck.theory_checks.checks.exact_evidence` uses it on
    an experiment's parts (gr21 Lemma 2: the bins are independent binomials at constant eta).

    Parameters
    ----------
    counts : 1-d array_like of int
        ``m_b >= 1``.
    weights : 1-d array_like of float
        Test masses ``w_b >= 0`` summing to 1 (used by the marginal event only).
    etas : 1-d array_like of float
        Constant bias of each bin, in (0, 1).
    eps : float or 1-d array_like
        Radii.
    event : {"conditional", "marginal"}

    Returns
    -------
    float or ndarray
        In [0, 1], shape of ``eps``.

    Raises
    ------
    ValueError
        Naming the argument: arrays of different lengths, a count < 1, an eta outside
        (0, 1), weights that are negative or do not sum to 1, a NaN radius, an unknown event.
    """
    m = np.asarray(counts)
    w = np.asarray(weights, dtype=float)
    e_b = np.asarray(etas, dtype=float)
    if m.ndim != 1 or m.size == 0 or w.shape != m.shape or e_b.shape != m.shape:
        raise ValueError(
            f"counts, weights and etas must be 1-d arrays of one length, got shapes "
            f"{np.shape(counts)}, {np.shape(weights)}, {np.shape(etas)}"
        )
    if not np.issubdtype(m.dtype, np.integer) or np.any(m < 1) or np.any(m > MAX_POINTS):
        raise ValueError(f"counts must be integers in 1..{MAX_POINTS}, got {counts!r}")
    if np.any(~(e_b > 0) | ~(e_b < 1)):
        raise ValueError(f"etas must lie in (0, 1), got {etas!r}")
    if np.any(~np.isfinite(w) | (w < 0)) or abs(w.sum() - 1.0) > 1e-9:
        raise ValueError(f"weights must be >= 0 and sum to 1, got {weights!r}")
    _choice(event, EVENTS, "event")
    e = check_eps(eps)
    return _scalar_or_array(_coverage(m.astype(np.int64), w, e_b, e, event))


def _layout(n, n_bins, scheme):
    return bin_point_counts(n, n_bins, scheme), expected_bin_masses(n, n_bins)


def _scalar_or_array(value):
    return float(value) if np.ndim(value) == 0 else value


def exact_coverage(n, n_bins, eta, eps, *, event="conditional", scheme="umd"):
    r"""Exact probability of a binning calibration event at constant ``eta``.

    Conditional (gr21 Theorem 3 eq. (8), Theorem 4 eq. (11) eps2; nch14 Theorem 3.1):

    .. math:: P\big(\forall b:\ |K_b/m_b - \eta| \le \varepsilon\big)
              = \prod_{b=1}^{B} P\big(|K_b/m_b - \eta| \le \varepsilon\big),
              \quad K_b \sim \mathrm{Bin}(m_b, \eta) \text{ independent};

    marginal (gr21 Theorem 4 eq. (11) eps1; nch14 eqs. (1)/(9)):

    .. math:: P\big(|E[Y \mid h(X)] - h(X)| \le \varepsilon\big)
              = \sum_{b=1}^{B} \frac{A_b - A_{b-1}}{n+1}\,
                P\big(|K_b/m_b - \eta| \le \varepsilon\big).

    Parameters
    ----------
    n : int
        Calibration points, ``n >= 2 * n_bins`` (the theorems' hypothesis).
    n_bins : int
        Bins B.
    eta : float
        Constant ``E[Y | S]`` in (0, 1). No single eta is the worst law: the certified
        coverage (:mod:`calcheck.simulations.certified_coverage`) bounds every law.
    eps : float or 1-d array_like
        Radii.
    event : {"conditional", "marginal"}
    scheme : {"umd", "zadrozny_elkan"}
        See :func:`~calcheck.simulations.exact_coverage.bin_point_counts`.

    Returns
    -------
    float or ndarray
        In [0, 1], shape of ``eps``, nondecreasing in eps.

    Notes
    -----
    Hypotheses: iid calibration data and test point; ``E[Y | S] = eta`` constant, any score
    law (ties broken lexicographically on an independent uniform, gr21 App. C.1); binary
    labels; bin values not jittered (delta = 0, the limit the project's lexicographic
    tie-breaking implements). Probability over the calibration data (conditional) and also
    the test point (marginal). Exact: no Monte Carlo, no asymptotics.

    Examples
    --------
    gr21 Theorem 3's radius at n = 1000, B = 10, alpha = 0.1, at eta = 1/2;
    ``calcheck.coverage_at_radius`` is this function:

    >>> from calcheck import coverage_at_radius, get_guarantee
    >>> eps = float(get_guarantee("gr21.thm3").function(n=1000, n_bins=10, alpha=0.1))
    >>> round(eps, 4), round(coverage_at_radius(1000, 10, 0.5, eps), 4)
    (0.1636, 0.9885)
    >>> round(coverage_at_radius(1000, 10, 0.5, eps, event="marginal"), 4)
    0.9988
    """
    counts, masses = _layout(n, n_bins, scheme)
    eta = _eta(eta)
    _choice(event, EVENTS, "event")
    e = check_eps(eps)
    return _scalar_or_array(_coverage(counts, masses, np.full(counts.shape, eta), e, event))


def _smallest(counts, weights, etas, alpha: float, event: str) -> float:
    """Smallest candidate ``|k/m - eta|`` whose exact coverage reaches ``1 - alpha``.

    Coverage is a right-continuous step function of eps that jumps only at the values
    ``|k/m_b - eta_b|``; the events are closed, so the infimum is attained at one of them.
    """
    pairs = np.unique(np.stack([counts, etas], axis=1).astype(float), axis=0)
    cands = np.unique(
        np.concatenate(
            [np.abs(np.arange(int(m) + 1) - m * eta) / m for m, eta in pairs],
        )
    )
    cov = _coverage(counts, weights, etas, cands, event)
    ok = np.flatnonzero(cov >= 1.0 - alpha)
    # the largest candidate covers every count of every bin: coverage exactly 1
    return float(cands[ok[0]] if ok.size else cands[-1])


def smallest_exact_eps(n, n_bins, eta, alpha, *, event="conditional", scheme="umd") -> float:
    r"""Smallest eps whose exact coverage at constant eta is at least ``1 - alpha``.

    .. math:: \varepsilon^\ast(\alpha) = \min\{\varepsilon \ge 0 :
              \mathrm{coverage}(\varepsilon) \ge 1 - \alpha\}

    the radius a theorem of the same event (gr21 Theorem 3 / Theorem 4, nch14 Theorem 3.1)
    could state for this (n, B, eta) with no slack at all; ``theorem eps / eps*`` measures how
    loose the theorem is.

    Parameters
    ----------
    n, n_bins, eta, event, scheme
        As in :func:`~calcheck.coverage_at_radius`.
    alpha : float
        Miscoverage in (0, 1).

    Returns
    -------
    float
        One of the values ``|k/m_b - eta|`` (computed as ``|k - m_b eta| / m_b``).

    Notes
    -----
    Exact search over the finitely many jump points (no bisection on floats). The
    minimum is attained because the events are closed (``<= eps``).

    Examples
    --------
    At n = 1000, B = 10, alpha = 0.1 and eta = 1/2 no radius below 0.1263 covers; gr21
    Theorem 3 states 0.1636, 1.3 times as much:

    >>> from calcheck import get_guarantee, smallest_exact_eps
    >>> exact = smallest_exact_eps(1000, 10, 0.5, 0.1)
    >>> theorem = float(get_guarantee("gr21.thm3").function(n=1000, n_bins=10, alpha=0.1))
    >>> round(exact, 4), round(theorem / exact, 2)
    (0.1263, 1.3)
    """
    counts, masses = _layout(n, n_bins, scheme)
    eta = _eta(eta)
    _choice(event, EVENTS, "event")
    return _smallest(counts, masses, np.full(counts.shape, eta), _alpha(alpha), event)


def looseness_grid(theorem_eps, exact_eps, n_values, bins, alphas) -> dict:
    """A theorem's eps beside the exact smallest eps on a grid of ``(n, B, alpha)``.

    Parameters
    ----------
    theorem_eps, exact_eps : callable
        ``f(n, n_bins, alpha) -> float``: the theorem's radius (a ``bounds`` function) and
        the exact smallest radius of the same event (e.g. :func:`smallest_exact_eps`).
    n_values, bins, alphas : sequence
        The grid.

    Returns
    -------
    dict of ndarray
        ``"theorem"``, ``"exact"`` and ``"ratio"`` (theorem / exact), each of shape
        ``(len(n_values), len(bins), len(alphas))``; the ratio is ``inf`` where the exact
        radius is 0 and the theorem's is not (never NaN).
    """
    shape = (len(n_values), len(bins), len(alphas))
    theorem, exact = np.empty(shape), np.empty(shape)
    for i, j, k in np.ndindex(*shape):
        args = (int(n_values[i]), int(bins[j]), float(alphas[k]))
        theorem[i, j, k], exact[i, j, k] = float(theorem_eps(*args)), float(exact_eps(*args))
    if np.any(~np.isfinite(theorem) | ~np.isfinite(exact)):
        raise ValueError("theorem_eps and exact_eps must return finite numbers on the grid")
    ratio = np.divide(theorem, exact, out=np.full(shape, np.inf), where=exact > 0)
    return {"theorem": theorem, "exact": exact, "ratio": ratio}
