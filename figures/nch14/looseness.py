"""How loose is nch14 Theorem 3.1? The MCE bound beside the smallest certified eps.

Hist (equal-frequency histogram binning, calcheck's Zadrozny-Elkan binning: all n points,
bins at the order statistics of ranks ceil(b (n + 1) / B)): given the edges, each bin's
inner label sum is Bin(m_b - 1, Pi_b) and its upper edge point's label has a mean of its
own, whatever the law (gr21 Lemma 2), so the probability that the population MCE is at most
eps is bounded below over every law by the worst Pi_b and edge mean in each bin
(:mod:`calcheck.simulations.certified_coverage`). Theorem 3.1 as printed (exponent
n eps^2 / (2B), eq. 3) and with eq. (1)'s Hoeffding exponent are compared with the smallest
eps whose certified coverage reaches 1 - alpha (no single c is the worst law).

Naeini, M. P., Cooper, G. F. and Hauskrecht, M. (2014). Binary classifier calibration:
non-parametric approach. arXiv:1401.3390. Theorem 3.1, eqs. (1)-(3).
"""

from __future__ import annotations

from calcheck.bounds import nch14

from ..looseness import (
    LoosenessFigure,
    Wording,
    certified_statement,
    draw_looseness,
    looseness_data,
    looseness_findings,
    three_significant,
)

ID = "nch14.looseness"
CAPTION = (
    "How loose is Theorem 3.1 over every law (certified: Lemma 2's binomial bins at their "
    "worst bias, computed exactly). Top: "
    "the MCE bound as printed, sqrt(2B log(2B/alpha)/n), and with eq. (1)'s exponent, "
    "sqrt(B log(2B/alpha)/(2n)), beside the smallest eps whose certified probability of "
    "MCE <= eps reaches 1 - alpha (alpha = 0.1), for Hist (equal-frequency bins) against n. "
    "Bottom: the ratio for B in {5, 10, 20} and alpha in {0.05, 0.1}; a valid bound has "
    "ratio >= 1."
)
N_VALUES = (1000, 3000, 10_000)
BINS = (5, 10, 20)
ALPHAS = (0.05, 0.1)
SCHEME = "zadrozny_elkan"

#: key -> the MCE bound, certified for Hist (equal-frequency bins)
THEOREMS = {
    "thm31": certified_statement(
        "Theorem 3.1 as printed (eq. 3)", nch14.thm31_mce_bound, scheme=SCHEME
    ),
    "thm31_hoeffding": certified_statement(
        "Theorem 3.1, eq. (1)'s exponent", nch14.thm31_mce_bound_hoeffding, scheme=SCHEME
    ),
}
#: A bound on the MCE rather than a theorem's eps; its failure probabilities are far below
#: 1e-5 (as printed), so they are reported to 3 significant digits.
WORDING = Wording(
    bound="bound",
    never_exceeds="the bound",
    ratio="bound",
    ratio_axis=r"bound / certified $\varepsilon$",
    failure="largest probability over every law that MCE exceeds the bound",
    failure_value=three_significant,
)
FIGURE = LoosenessFigure(THEOREMS, N_VALUES, BINS, ALPHAS, wording=WORDING)


def compute(cache_dir=None, **_):
    """Bound, certified eps, ratio and the worst failure probability at the bound."""
    return looseness_data(FIGURE)


def findings(data):
    """Per form: every ratio >= 1 (a real test), the ratio range and the true failure."""
    return looseness_findings(FIGURE, data)


def draw(data):
    """Top: bound and certified eps against n (alpha = 0.1); bottom: their ratio."""
    return draw_looseness(FIGURE, data)
