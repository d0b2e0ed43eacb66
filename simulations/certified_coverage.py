r"""Certified coverage of uniform-mass binning: a lower bound that holds for every law.

The reduction (gr21 Lemma 2 and the proof of Theorem 3). Uniform-mass binning (gr21
Algorithm 1, lexicographic tie-breaking on ``(score, U)``) puts bin b's edges at the order
statistics of ranks ``A_{b-1}`` and ``A_b``. Given the edges, the ``m_b`` points strictly
between them are i.i.d. draws of the score law restricted to the bin, so their labels are
i.i.d. Bernoulli(``Pi_b``), ``Pi_b = E[Y | S in bin b]``, and the bins are independent. The
label sum ``K_b`` is ``Bin(m_b, Pi_b)`` given the edges, whatever the law; only ``Pi_b`` in
[0, 1] depends on it. So, with ``g_b(p) = P(|K/m_b - p| <= r(K, m_b))``, ``K ~ Bin(m_b, p)``
(``r`` a fixed radius eps, or a radius computed from the bin's own label sum and size such as
an empirical-Bernstein one),

* **conditional** event, every bin within its radius:
  ``P(. | edges) = prod_b g_b(Pi_b) >= prod_b inf_p g_b(p)``;
* **marginal** event, a fresh test point within the radius of its bin: given the edges the
  test point falls in bin b with probability ``w_b`` (``sum_b w_b = 1``), so
  ``P(. | edges) = sum_b w_b g_b(Pi_b) >= min_b inf_p g_b(p)``.

Taking the expectation over the edges keeps both bounds: they hold for **every** law of
(score, label) with binary labels, at the sizes given. That is a certificate, stronger than
any Monte Carlo on sampled laws and than the exact value on one law.

Variants (all with gr21 Algorithm 1's edges):

* ``umd`` and ``randomized_umd`` with delta = 0 (gr21 Algorithms 1-2): inner points only.
* ``zadrozny_elkan`` (gr21 Corollary 1, nch14's Hist): bin b < B also averages its upper edge
  point, whose label is Bernoulli(``eta(S_(A_b))``) with a mean unrelated to ``Pi_b``. The
  count is ``K' + Y_e`` with ``K' ~ Bin(m_b - 1, Pi_b)`` and ``Y_e ~ Bern(q)`` independent;
  the probability is linear in q, so its infimum over q is at q = 0 or 1: both are taken.
* Outputs merged when bins have equal values (``umd``, ``zadrozny_elkan``, randomized UMD
  "as returned"): a merged output's truth is a weighted average of its bins' ``Pi_b``, so its
  error is at most the largest of theirs and the conditional event is implied by the per-bin
  event (the bound above still holds). The marginal event is then bounded by the conditional
  one (every output within the radius makes any test point's output within it).

How the infimum is computed (no grid). For each count k the bin is within its radius when p
lies in the closed interval ``[k/m - r(k, m), k/m + r(k, m)]``. Between consecutive interval
ends the accepted counts are a fixed set; on such a piece a run of consecutive counts
``a..b`` has ``d/dp P(a <= K <= b) = m [f_{m-1}(a-1) - f_{m-1}(b)]``, whose sign changes at
most once, from + to -, since ``f_{m-1}(b) / f_{m-1}(a-1)`` increases with p: the probability
is quasi-concave on the piece and its infimum is a one-sided limit at an end. A piece whose
accepted set is several runs is bounded below by the sum of each run's smaller end value
(exact for one run, the usual case). At a piece's end the closed intervals accept at least
what they accept on either side, so the infimum over [0, 1] is the smallest of these
one-sided limits. The interval ends are ordered in exact arithmetic (a float radius is a
dyadic rational): a rounding neither opens a gap between two intervals that touch nor closes
one that is there, however close the radius lies to a lattice value. Probabilities
are computed in float64 (scipy's binomial cdf); where the result lies within
:data:`~calcheck.simulations.certified_bin.RIGOROUS_MARGIN` of a threshold the caller
names, the candidates are recomputed in interval arithmetic (mpmath ``iv``,
:data:`~calcheck.simulations.certified_bin.RIGOROUS_DPS` digits) and the lower end of
the ball is returned.

References
----------
.. [1] C. Gupta and A. Ramdas, "Distribution-free calibration guarantees for histogram
       binning without sample splitting", ICML 2021: Algorithm 1, Lemma 2, Theorem 3
       (eq. 8), Corollary 1 (eq. 10), Theorem 4 (eq. 11).
.. [2] M. P. Naeini, G. F. Cooper and M. Hauskrecht, "Binary classifier calibration:
       non-parametric approach", 2014: Theorem 3.1, eq. (9).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from .calibrators.edges import uniform_mass_edge_ranks
from .certified_bin import (
    RIGOROUS_DPS,
    RIGOROUS_MARGIN,
    BinInfimum,
    bin_infimum,
    fixed_bin,
    float_below,
    iv_precision,
    radii,
    rigorous_min,
)
from .exact_coverage import EVENTS, MAX_POINTS, SCHEMES
from .validation import check_positive_int

__all__ = [
    "MAX_FACTOR",
    "RIGOROUS_DPS",
    "RIGOROUS_MARGIN",
    "BinInfimum",
    "Certificate",
    "bin_infimum",
    "certified_bins",
    "certified_coverage",
    "certified_layout",
    "smallest_certified_eps",
    "smallest_factor",
    "smallest_layout_eps",
]


@dataclass(frozen=True)
class Certificate:
    """A lower bound on a binning event's probability over every law, at given sizes.

    Attributes
    ----------
    value : float
        The certified lower bound, in [0, 1].
    event : {"conditional", "marginal"}
    scheme : str
        ``"umd"``, ``"zadrozny_elkan"`` or ``"pooled"`` variants as built by
        :func:`certified_bins`.
    bins : tuple of BinInfimum
        Each distinct bin's infimum.
    worst : BinInfimum
        The bin whose infimum is the smallest.
    rigorous : bool
        Whether interval arithmetic decided the value (it lay near the threshold).
    reduction : str
        The argument in words (for reports).
    """

    value: float
    event: str
    scheme: str
    bins: tuple
    worst: BinInfimum
    rigorous: bool
    reduction: str

    def holds(self, claimed: float) -> bool:
        """Whether the certificate proves the claim: ``value >= claimed``."""
        return bool(self.value >= claimed)


# -------------------------------------------------------------------- whole layouts
def certified_bins(n, n_bins, scheme="umd") -> list:
    """``[(m_b, edge_point_b), ...]``: the bins of the reduction for a scheme.

    ``"umd"`` (and randomized UMD with delta = 0): ``m_b = A_b - A_{b-1} - 1`` inner points.
    ``"zadrozny_elkan"``: ranks ``A_{b-1}+1 .. min(A_b, n)``, bin b < B with its edge point.
    """
    n = check_positive_int(n, "n", 2, maximum=MAX_POINTS)
    n_bins = check_positive_int(n_bins, "n_bins")
    if n < 2 * n_bins:
        raise ValueError(
            f"n must be >= 2 * n_bins (every bin holds a point), got n={n!r}, n_bins={n_bins!r}"
        )
    if scheme not in SCHEMES:
        raise ValueError(f"scheme must be one of {SCHEMES}, got {scheme!r}")
    ranks = uniform_mass_edge_ranks(n, n_bins)
    if scheme == "umd":
        return [(int(m), False) for m in ranks[1:] - ranks[:-1] - 1]
    upper = np.minimum(ranks[1:], n)
    return [
        (int(u - a), bool(u == b)) for a, b, u in zip(ranks[:-1], ranks[1:], upper, strict=True)
    ]


def certified_layout(bins, radius, *, event="conditional", pooled=False, threshold=None):
    """The certificate of a layout of bins (see the module notes).

    Parameters
    ----------
    bins : sequence of (int, bool)
        ``(m_b, edge_point_b)`` per bin (:func:`certified_bins`).
    radius : float or callable
        As in :func:`bin_infimum`.
    event : {"conditional", "marginal"}
    pooled : bool, default False
        Whether bins with equal outputs are merged (the marginal event is then bounded by the
        conditional one).
    threshold : float, optional
        The claim the certificate will be compared with (rigorous recomputation near it).

    Returns
    -------
    Certificate
    """
    if event not in EVENTS:
        raise ValueError(f"event must be one of {EVENTS}, got {event!r}")
    if not bins:
        raise ValueError("bins must hold at least one bin")
    for m, edge in bins:
        if isinstance(m, bool) or not isinstance(m, int | np.integer) or m < (2 if edge else 1):
            raise ValueError(
                f"bins must be (m, edge_point) with an integer m >= 1 (>= 2 with an edge "
                f"point), got {(m, edge)!r}"
            )
    if threshold is not None and not (isinstance(threshold, int | float) and 0 <= threshold <= 1):
        raise ValueError(f"threshold must be a number in [0, 1], got {threshold!r}")
    distinct = sorted({(int(m), bool(e)) for m, e in bins})
    multiplicity = {key: sum(1 for b in bins if tuple(b) == key) for key in distinct}
    product = event == "conditional" or pooled
    per_bin = {key: _float_bin(key, radius) for key in distinct}
    value = _combine({k: b.value for k, b in per_bin.items()}, multiplicity, product)
    rigorous = threshold is not None and abs(value - float(threshold)) <= RIGOROUS_MARGIN
    if rigorous:
        per_bin = {key: _rigorous_bin(b, radius) for key, b in per_bin.items()}
        value = _combine_rigorously({k: b.value for k, b in per_bin.items()}, multiplicity, product)
    worst = min(per_bin.values(), key=lambda b: b.value)
    return Certificate(
        value,
        event,
        "pooled" if pooled else "per bin",
        tuple(per_bin[k] for k in distinct),
        worst,
        rigorous,
        _reduction_text(event, pooled, len(bins)),
    )


def _rigorous_bin(b: BinInfimum, radius) -> BinInfimum:
    value = rigorous_min(b.m, radii(radius, b.m), b.edge_point, b.value)
    return dataclasses.replace(b, value=value, rigorous=True)


def _float_bin(key, radius) -> BinInfimum:
    if callable(radius):
        return bin_infimum(key[0], radius, edge_point=key[1])
    e = float(radius)
    if not e >= 0:
        raise ValueError(f"radius must be a number >= 0 or a callable, got {radius!r}")
    if e == np.inf:
        return BinInfimum(key[0], key[1], 1.0, 0.5, 0 if key[1] else None)
    return fixed_bin(key[0], e, key[1])


def _combine(values: dict, multiplicity: dict, product: bool) -> float:
    if not product:
        return float(min(values.values()))
    return float(np.prod([values[k] ** multiplicity[k] for k in values]))


def _combine_rigorously(values: dict, multiplicity: dict, product: bool) -> float:
    """The product of the bins' lower ends, rounded down (interval arithmetic)."""
    if not product:
        return float(min(values.values()))
    import mpmath

    with iv_precision():
        total = mpmath.iv.mpf(1)
        for key, v in values.items():
            total *= mpmath.iv.mpf(v) ** multiplicity[key]
        return float_below(total.a)


def _reduction_text(event: str, pooled: bool, n_bins: int) -> str:
    head = (
        f"certified for every law: given the edges the {n_bins} bins' label sums are "
        "independent Bin(m_b, Pi_b) (gr21 Lemma 2)"
    )
    if event == "conditional":
        return head + ", so P >= prod_b inf_p P(|K_b/m_b - p| <= r)"
    if pooled:
        return head + "; merged outputs: the marginal event is bounded by the conditional one"
    return head + ", so P >= min_b inf_p P(|K_b/m_b - p| <= r) (the test masses sum to 1)"


def certified_coverage(
    n, n_bins, radius, *, event="conditional", scheme="umd", pooled=True, threshold=None
):
    r"""A lower bound on a uniform-mass binning event's probability over **every** law.

    .. math:: \text{conditional: } \prod_b \inf_p P(|K_b/m_b - p| \le r),
              \qquad \text{marginal (distinct outputs): } \min_b \inf_p P(|K_b/m_b - p| \le r)

    Parameters
    ----------
    n : int
        Calibration points, ``n >= 2 * n_bins``.
    n_bins : int
        Bins B (gr21 Algorithm 1's edges).
    radius : float or callable
        A fixed radius eps, or ``radius(k, m)``: the radius of a bin of m labels summing to k.
    event : {"conditional", "marginal"}
    scheme : {"umd", "zadrozny_elkan"}
        ``"umd"`` also covers randomized UMD with delta = 0 (gr21 Algorithm 2).
    pooled : bool, default True
        Whether bins with equal values are merged into one output, as UMD and Zadrozny-Elkan
        binning return them (then the marginal event is bounded by the conditional one); pass
        False for distinct outputs (randomized UMD in the delta -> 0 limit, gr21 Theorem 4).
        The conditional bound is the same either way.
    threshold : float, optional
        A claim in [0, 1] to compare with: near it the value is computed in interval
        arithmetic.

    Returns
    -------
    Certificate

    Notes
    -----
    Hypotheses: i.i.d. calibration data (and test point), binary labels, any score law with
    gr21's lexicographic tie-breaking (continuous scores need none). For UMD with every bin
    of one size (``(n + 1) / B`` an integer) the conditional bound equals the infimum over
    constant eta of the exact coverage (approached at the worst p); otherwise, and for
    Zadrozny-Elkan (whose last bin has no edge point), it can lie below every constant eta's.

    Examples
    --------
    gr21 Theorem 3 at n = 200, B = 10, alpha = 0.05: the radius holds with probability at
    least 0.9951 on every law (its exact value is 0.9989 at eta = 1/2, 0.9952 at eta = 0.392):

    >>> from calcheck.bounds import gr21
    >>> eps = float(gr21.thm3_conditional_eps(200, 10, 0.05))
    >>> round(certified_coverage(200, 10, eps).value, 4)
    0.9951
    """
    scheme_name = "umd" if scheme == "randomized_umd" else scheme
    bins = certified_bins(n, n_bins, scheme_name)
    if not isinstance(pooled, bool):
        raise ValueError(f"pooled must be True or False, got {pooled!r}")
    return certified_layout(bins, radius, event=event, pooled=pooled, threshold=threshold)


def smallest_certified_eps(
    n, n_bins, alpha, *, event="conditional", scheme="umd", pooled=True
) -> float:
    """The smallest fixed radius whose certified coverage reaches ``1 - alpha`` (bisection).

    A radius a theorem of the same event could state at these sizes for every law; the ratio
    ``theorem eps / this`` is the theorem's looseness against the worst law, not against one
    chosen law. Returned as the upper end of a bisection bracket of width ``1e-9``, so the
    certificate holds at the value returned. ``pooled`` as in :func:`certified_coverage`.

    Examples
    --------
    gr21 Theorem 3 states 0.1636 at n = 1000, B = 10, alpha = 0.1; 0.1313 holds on every law:

    >>> round(smallest_certified_eps(1000, 10, 0.1), 4)
    0.1313
    """
    alpha = float(alpha)
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    bins = certified_bins(n, n_bins, "umd" if scheme == "randomized_umd" else scheme)
    return smallest_layout_eps(bins, 1.0 - alpha, event=event, pooled=pooled)


#: Largest multiple of a bound a critical factor is looked for at (a bound this many times
#: too small has no factor worth a number).
MAX_FACTOR = 64.0


def smallest_factor(covers, tolerance: float) -> float:
    """The smallest f in (0, :data:`MAX_FACTOR`] with ``covers(f)``, by bisection.

    ``covers`` must be nondecreasing in f (a coverage reaching a claim as the radius
    grows). Returned as the upper end of the final bracket (``covers`` holds there), within
    ``tolerance`` of the infimum; ``inf`` where even ``MAX_FACTOR`` does not cover. The one
    home of a bound's critical factor f* (:mod:`calcheck.theory_checks.running.tightness`, and each
    guarantee cell's in :mod:`calcheck.theory_checks.checks.exact_evidence`).
    """
    hi = 1.0
    while not covers(hi):
        hi *= 2.0
        if hi > MAX_FACTOR:
            return float("inf")
    lo = 0.0
    while hi - lo > tolerance:
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if covers(mid) else (mid, hi)
    return hi


def smallest_layout_eps(bins, claimed: float, *, event="conditional", pooled=False) -> float:
    """The smallest fixed radius whose certified coverage of a layout reaches ``claimed``.

    Parameters
    ----------
    bins : sequence of (int, bool)
        As :func:`certified_layout` takes (several classes' bins side by side: their
        conditional events multiply, gr22 Algorithm 8 given the class counts).
    claimed : float
        In (0, 1).
    event : {"conditional", "marginal"}
    pooled : bool, default False

    Returns
    -------
    float
        The upper end of a bisection bracket of width 1e-9 (the certificate holds there).
    """

    def holds(eps):
        return certified_layout(bins, eps, event=event, pooled=pooled).value >= claimed

    lo, hi = 0.0, 1.0
    while hi - lo > 1e-9:
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if holds(mid) else (mid, hi)
    return hi
