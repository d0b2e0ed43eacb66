"""How loose is gr22 Theorem 1? eps_1 and eps_2 beside the smallest certified eps.

TL-HB (Algorithm 8) runs randomized UMD on each predicted class with ``B_l = floor(n_l / k)``
bins. Given the class counts and the edges, each bin's inner label sum is Bin(m_b, Pi_b)
whatever the law (gr21 Lemma 2, class by class), so coverage is bounded below over every law
with those class counts by the worst Pi_b in each bin
(:mod:`calcheck.simulations.certified_coverage`). Marginal: eps_1 (eq. 8) against the
certified per-class marginal radius (the proof's per-class statement). Conditional: eps_2
(eq. 9, n the total) against the certified radius for L = 5 classes of n_l points each.

Gupta, C. and Ramdas, A. (2022). Top-label calibration and multiclass-to-binary reductions.
ICLR. Algorithm 8, Theorem 1 (eqs. 8-9).
"""

from __future__ import annotations

from calcheck.bounds import gr22
from calcheck.simulations.certified_coverage import (
    certified_bins,
    certified_coverage,
    certified_layout,
    smallest_certified_eps,
    smallest_layout_eps,
)

from ..looseness import (
    LoosenessFigure,
    Statement,
    draw_looseness,
    looseness_data,
    looseness_findings,
)

ID = "gr22.looseness"
CAPTION = (
    "How loose is Theorem 1 of TL-HB over every law with these class counts (certified: "
    "Lemma 2's binomial bins at their worst bias, computed exactly). "
    "Points per bin k = n_l / B_l for n_l in {1K, 3K, 10K} points per class and B_l in "
    "{5, 10, 20} bins. Left: eps_1 (eq. 8) beside the smallest eps whose certified per-class "
    "marginal coverage reaches 1 - alpha. Right: eps_2 (eq. 9, n = 5 n_l) beside the "
    "certified conditional radius of L = 5 classes. Bottom: the ratios (alpha = 0.05, "
    "0.1); a valid bound has ratio >= 1."
)
N_VALUES = (1000, 3000, 10_000)  # points per class n_l
BINS = (5, 10, 20)  # bins per class B_l, i.e. k = n_l // B_l
ALPHAS = (0.05, 0.1)
N_CLASSES = 5


def _marginal_eps(n_l, b, a):
    return gr22.thm1_marginal_eps(n_l // b, a)


def _conditional_eps(n_l, b, a):
    return gr22.thm1_conditional_eps(N_CLASSES * n_l, n_l // b, a)


def _bins_per_class(n_l, b):
    return n_l // (n_l // b)  # B_l = floor(n_l / k), k = floor(n_l / B)


def _classes(n_l, b):
    """The bins of L classes of n_l points each, side by side (given the class counts)."""
    return certified_bins(n_l, _bins_per_class(n_l, b)) * N_CLASSES


def _certified_marginal(n_l, b, a):
    # TL-HB runs randomized UMD per class (delta -> 0): every bin its own output
    return smallest_certified_eps(n_l, _bins_per_class(n_l, b), a, event="marginal", pooled=False)


def _certified_conditional(n_l, b, a):
    return smallest_layout_eps(_classes(n_l, b), 1.0 - a)


def _failure_marginal(n_l, b, a):
    eps = _marginal_eps(n_l, b, a)
    n_bins = _bins_per_class(n_l, b)
    return 1.0 - certified_coverage(n_l, n_bins, eps, event="marginal", pooled=False).value


def _failure_conditional(n_l, b, a):
    return 1.0 - certified_layout(_classes(n_l, b), _conditional_eps(n_l, b, a)).value


#: key -> the theorem's eps, the certified eps of its event and the worst failure at its eps
THEOREMS = {
    "thm1_marginal": Statement(
        "Theorem 1, marginal eps_1 (eq. 8), per class",
        _marginal_eps,
        _certified_marginal,
        _failure_marginal,
    ),
    "thm1_conditional": Statement(
        "Theorem 1, conditional eps_2 (eq. 9), L = 5",
        _conditional_eps,
        _certified_conditional,
        _failure_conditional,
    ),
}
#: Both statements depend on the sizes through k = n_l // B_l: drawn against k.
FIGURE = LoosenessFigure(
    THEOREMS, N_VALUES, BINS, ALPHAS, size_names=("n_l", "B_l"), x_axis="points_per_bin"
)


def compute(cache_dir=None, **_):
    """Theorem eps, certified eps, ratio and worst failure at the theorem's eps, per (n_l, B_l)."""
    return looseness_data(FIGURE)


def findings(data):
    """Per statement: every ratio >= 1 (a real test), the ratio range and the true failure."""
    return looseness_findings(FIGURE, data)


def draw(data):
    """Top: eps against k (alpha = 0.1); bottom: the ratio against k for both alphas."""
    return draw_looseness(FIGURE, data)
