"""How loose are gr21 Theorems 3 and 4? The theorem's eps beside the smallest certified eps.

Given the edges, the bin label sums of UMD are independent Bin(m_b, Pi_b) whatever the law
(Lemma 2), so the coverage of an eps is bounded below over **every** law by the worst Pi_b in
each bin (:mod:`calcheck.simulations.certified_coverage`); the smallest eps whose certified
coverage reaches 1 - alpha is what a theorem could state at these sizes for every law. No
single eta is the worst law (eta = 1/2 is not: the binomial cut-offs cross integers), so the
comparison is with the certificate, not with one law.
Theorem 3's eps (eq. 8; Theorem 4's eps2 is the same at delta = 0) is compared with the
certified conditional radius, Theorem 4's eps1 (eq. 11) with the certified marginal radius.

Gupta, C. and Ramdas, A. (2021). Distribution-free calibration guarantees for histogram
binning without sample splitting. ICML. Lemma 2, Theorem 3 (eq. 8), Theorem 4 (eq. 11).
"""

from __future__ import annotations

from calcheck.bounds import gr21

from ..looseness import (
    LoosenessFigure,
    certified_statement,
    draw_looseness,
    looseness_data,
    looseness_findings,
)

ID = "gr21.looseness"
CAPTION = (
    "How loose is each bound over every law (certified: Lemma 2's binomial bins at their "
    "worst bias, computed exactly, no Monte Carlo). Top: eps of Theorem 3 (conditional, "
    "eq. 8) and of Theorem 4 (marginal eps1, eq. 11) against n, beside the smallest eps "
    "whose certified coverage reaches 1 - alpha, alpha = 0.1. Bottom: their ratio for B in "
    "{5, 10, 20} and alpha in {0.05, 0.1}; a valid bound has ratio >= 1."
)
N_VALUES = (1000, 3000, 10_000)
BINS = (5, 10, 20)
ALPHAS = (0.05, 0.1)

#: key -> the theorem's eps and the event it covers. Theorems 3-4 hold for randomized UMD
#: in the delta -> 0 limit, where every bin is its own output (pooled=False).
THEOREMS = {
    "thm3": certified_statement(
        "Theorem 3, conditional (eq. 8)",
        gr21.thm3_conditional_eps,
        event="conditional",
        pooled=False,
    ),
    "thm4_marginal": certified_statement(
        "Theorem 4, marginal eps1 (eq. 11)",
        gr21.thm4_marginal_eps,
        event="marginal",
        pooled=False,
    ),
}
FIGURE = LoosenessFigure(THEOREMS, N_VALUES, BINS, ALPHAS)


def compute(cache_dir=None, **_):
    """Theorem eps, certified eps, their ratio and the worst failure at the theorem's eps."""
    return looseness_data(FIGURE)


def findings(data):
    """Per theorem: every ratio >= 1 (a real test), the ratio range and the true failure."""
    return looseness_findings(FIGURE, data)


def draw(data):
    """Top: eps against n (alpha = 0.1); bottom: the ratio for every (B, alpha)."""
    return draw_looseness(FIGURE, data)
