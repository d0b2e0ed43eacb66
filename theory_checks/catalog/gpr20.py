"""The gpr20 checks and their negative controls.

Gupta, C., Podkopaev, A. and Ramdas, A. (2020). Distribution-free binary classification:
prediction sets, confidence intervals and calibration. NeurIPS. Theorems 3-7 and 10,
Corollaries 1 and 3, Propositions 2 and 3, the proof steps G3 and G4 of Theorem 7 (Theorem 3
and Corollary 1 in :mod:`.gpr20_adversary`, the covariate shift in :mod:`.gpr20_shift`).

Every registered gpr20 guarantee has a check and at least one negative control that the
suite must flag, except Proposition 2, an identity (its fitted exponent is 1 by algebra:
role ``identity``, no control). Controls that only change the bound reuse the check's
simulations.
"""

from __future__ import annotations

import numpy as np

from calcheck.bounds import gpr20
from calcheck.simulations.experiments.gpr20 import (
    BinBernoulliExperiment,
    BinningRadiusExperiment,
    StreamExperiment,
    UMSCountExperiment,
)
from calcheck.simulations.laws import LAWS

from ..checks.budgets import get_budget
from ..checks.check import Check, StudyAdapter, with_sharper_controls
from ..checks.events import (
    AtLeast,
    BoundRule,
    PathWithin,
    Within,
    constant,
    substitute,
)
from .common import make_check
from .gpr20_adversary import cor1_checks, thm3_checks
from .gpr20_shift import SHIFT_REFUSED, SHIFT_STUDIES, prop2_checks, shift_checks

__all__ = ["REFUSED", "STUDIES", "checks"]

# Per-bin Bernoulli settings: (name, counts, probs).
_BINS = {
    "quick": [
        ("equal_half", (100,) * 10, (0.5,) * 10),
        ("tiny_rare", (20,) * 50, (0.01,) * 50),
        (
            "unequal_mixed",
            (5, 20, 50, 200, 500, 1000, 2000, 30, 10, 100),
            (0.001, 0.01, 0.05, 0.5, 0.2, 0.05, 0.01, 0.9, 0.5, 0.3),
        ),
        ("large_small_rates", (1000,) * 5, (0.001, 0.01, 0.05, 0.5, 0.2)),
        # rare but not empty: P(some bin has no positive) = 1 - (1 - 0.9^100)^50 = 0.13%;
        # bins with 1-3 positives understate p (1 - p) (the range term's job)
        ("moderate_rare", (100,) * 50, (0.1,) * 50),
    ],
    "full": [
        ("many_tiny", (10,) * 100, (0.05,) * 100),
        ("large_extreme", (5000,) * 20, (0.001,) * 10 + (0.999,) * 10),
    ],
}

_WITHOUT_RANGE = BoundRule(
    "without_range_term",
    function=lambda s, a: (
        gpr20.thm4_halfwidth(s["n_bin"], s["variance"], s["n_bins"], a)
        - gpr20.thm4_halfwidth(s["n_bin"], np.zeros_like(s["variance"]), s["n_bins"], a)
    ),
    description="Theorem 4 without its 3 ln(3B/alpha)/N_b term (the empirical variance alone)",
)
_NO_UNION = substitute(
    "without_union_bound", "Hoeffding at level alpha per bin", n_bins=lambda s: 1
)
_N_FOR_NB = substitute(
    "n_in_place_of_n_b",
    "max_b hw_b with n in place of every N_b",
    counts=lambda s: np.broadcast_to(
        np.sum(s["counts"], axis=-1, keepdims=True), s["counts"].shape
    ),
)


def checks(budget="quick") -> list[Check]:
    """The gpr20 checks and negative controls for a budget ("quick" or "full")."""
    bud = get_budget(budget)
    out = [
        *_thm4_checks(bud),
        *_cor3_checks(bud),
        *_thm5_checks(bud),
        *_thm6_checks(bud),
        *shift_checks(bud.full, bud.alphas),
        *prop2_checks(bud.full),
        *thm3_checks(bud),
        *cor1_checks(bud.alphas),
    ]
    # sharper control: detectable factor 0.81 at the quick budget
    # G3, G4 (corrected): half the radius fails on the step ratios (detectable factors of
    # about 0.6 at the quick budget)
    return with_sharper_controls(
        out, {"gpr20.thm4.hoeffding": 0.75, "gpr20.g3": 0.5, "gpr20.g4.corrected": 0.5}
    )


def _thm4_checks(bud) -> list[Check]:
    """Theorem 4 and its Hoeffding analogue, per bin given the counts, with their controls."""
    al = bud.alphas
    bins = [
        BinBernoulliExperiment(c, p, name)
        for name, c, p in _BINS["quick"] + (_BINS["full"] if bud.full else [])
    ]
    moderate_rare = [e for e in bins if e.name == "moderate_rare"]
    per_bin = Within("error")
    return [
        make_check(
            al,
            "gpr20.thm4",
            "gpr20.thm4",
            bins,
            per_bin,
            description="given the bin counts, all bins within the empirical-Bernstein "
            "half-width (17)",
        ),
        # On the guarantee's own path (one of its settings, same statistic), decided by bins
        # that are not empty: with N_b = 100, p = 0.1 and B = 50, a bin with 1-3 positives
        # has V^_b well below p (1 - p) and leaves sqrt(2 V^_b ln(3B/alpha)/N_b); exact
        # coverage 0.675 against 0.9 (binomial pmf), of which all-zero bins (radius 0) make
        # 0.13%.
        make_check(
            al,
            "gpr20.thm4.control.without_range_term",
            "gpr20.thm4",
            moderate_rare,
            per_bin,
            expect="violated",
            bound=_WITHOUT_RANGE,
            description="negative control: Theorem 4 without its 3 ln(3B/alpha)/N_b term, 50 "
            "bins of 100 points at p = 0.1: bins with 1-3 positives understate the variance "
            "(exact coverage 0.675 < 0.9; all-zero bins, radius 0, in 0.13% of replicates)",
        ),
        make_check(
            al,
            "gpr20.thm4.hoeffding",
            "gpr20.thm4.hoeffding",
            bins,
            per_bin,
            description="derived: all bins within sqrt(ln(2B/alpha)/(2 N_b)) (not a paper claim)",
        ),
        make_check(
            al,
            "gpr20.thm4.hoeffding.control.without_union_bound",
            "gpr20.thm4.hoeffding",
            [BinBernoulliExperiment((20,) * 50, (0.5,) * 50, "equal_half_50")],
            per_bin,
            expect="violated",
            bound=_NO_UNION,
            description="negative control: Hoeffding at level alpha per bin, no union bound, "
            "50 bins",
        ),
    ]


def _cor3_checks(bud) -> list[Check]:
    """Corollary 3 end to end: fixed-width bins, and uniform-mass bins with a split."""
    al = bud.alphas
    fw, ums = {"name": "fixed_width"}, {"name": "ums", "split": 0.2}
    cor3_laws = [
        (LAWS["uniform_half"], fw, 10),
        (LAWS["uniform_logistic"], fw, 10),
        (LAWS["mixture_atoms"], fw, 10),
        (LAWS["skewed_beta"], ums, 10),
        (LAWS["two_atoms"], ums, 10),
    ]
    ns = (1000, 3000) if not bud.full else (300, 1000, 3000, 10000)
    benign = [BinningRadiusExperiment(law, cal, n, b) for law, cal, b in cor3_laws for n in ns]
    counter = [BinningRadiusExperiment(LAWS["cor3_counterexample"], fw, n, 2) for n in ns]
    adversary = [BinningRadiusExperiment(LAWS["adversary_q"], fw, 1000, 10)]
    max_err = Within("max_error")
    # The printed radius hw_{b*} is not max_b hw_b: it fails wherever the fewest-point bin
    # has a smaller V^ than another bin and n is large enough for the 3 ln(3B/alpha)/N_b
    # term not to hide it (uniform_logistic, n = 10000: coverage 0.86 at alpha = 0.1). The
    # check states where it holds; the control shows both ways it fails.
    return [
        make_check(
            al,
            "gpr20.cor3",
            "gpr20.cor3",
            [e for e in benign if e.n <= 3000],
            max_err,
            description="histogram binning: every output within the printed radius hw_{b*}, "
            "b* = argmin N_b (benign laws, n <= 3000; fails beyond, see the control)",
        ),
        make_check(
            al,
            "gpr20.cor3.control.counterexample",
            "gpr20.cor3",
            [counter[-1], BinningRadiusExperiment(LAWS["uniform_logistic"], fw, 10000, 10)],
            max_err,
            expect="violated",
            role="counterexample",
            description="the printed radius fails where the fewest-point bin has V^ = 0, and "
            "on a benign logistic law at n = 10000 where V^_b differs across bins (the proof "
            "needs max_b hw_b)",
        ),
        make_check(
            al,
            "gpr20.cor3.max_halfwidth",
            "gpr20.cor3.max_halfwidth",
            benign + counter + adversary,
            max_err,
            description="histogram binning: every output within max_b hw_b, incl. the "
            "counterexample and the adversary Q of Theorem 2",
        ),
        make_check(
            al,
            "gpr20.cor3.max_halfwidth.control.n_in_place_of_n_b",
            "gpr20.cor3.max_halfwidth",
            [e for e in benign if e.law.name == "uniform_half" and e.n == ns[-1]],
            max_err,
            expect="violated",
            bound=_N_FOR_NB,
            description="negative control: radius with n in place of N_b, eta = 1/2",
        ),
    ]


def _thm5_checks(bud) -> list[Check]:
    """Theorem 5: minimum bin count and well-balancedness of uniform-mass bins."""
    al = bud.alphas
    t5 = [
        (LAWS["skewed_beta"], 1000, 5000, 10),
        (LAWS["uniform_logistic"], 1000, 5000, 10),
        (LAWS["mixture_atoms"], 1000, 5000, 10),
    ]
    if bud.full:
        t5 += [
            (LAWS["skewed_beta"], 1000, 10000, 10),
            (LAWS["skewed_beta"], 500, 2000, 5),
            (LAWS["skewed_beta"], 2000, 20000, 20),
        ]
    t5_exps = [UMSCountExperiment(law, n1, n2, b) for law, n1, n2, b in t5]
    return [
        make_check(
            al,
            "gpr20.thm5",
            "gpr20.thm5",
            t5_exps,
            AtLeast("min_count"),
            description="min_b N_b >= n2/(2B) - sqrt(n2 ln(2B/alpha)/2), |D^1| = 1000 "
            "(c ~ 19 at B = 10)",
        ),
        make_check(
            al,
            "gpr20.thm5.well_balanced",
            "gpr20.thm5",
            t5_exps,
            Within("balance"),
            "1-alpha/2",
            bound=constant("lemma13_balance", 1.0, "every bin mass in [1/(2B), 2/B]"),
            description="step 1 of the proof (Lemma 13 at alpha/2): every bin mass in "
            "[1/(2B), 2/B]",
        ),
        make_check(
            al,
            "gpr20.thm5.control.atoms_without_tie_breaking",
            "gpr20.thm5",
            [UMSCountExperiment(LAWS["two_atoms"], 1000, 5000, 10, tie_breaking="none")],
            AtLeast("min_count"),
            expect="violated",
            role="hypothesis",
            description="atoms {0.2, 0.8} and quantile bins without tie-breaking "
            "(Theorem 5 implicitly needs a nonatomic score)",
        ),
    ]


def _thm6_checks(bud) -> list[Check]:
    """Theorem 6: time-uniform coverage over streams (the path-dependent exception)."""
    al = bud.alphas
    length = 2000 if not bud.full else 10000
    streams = [
        ((0.5, 0.1, 0.3, 0.7, 0.02), (length,) * 5, "mixed"),
        ((0.5,) * 10, (length // 2,) * 10, "half_10"),
    ]
    cp = StreamExperiment(
        (0.5,) * 10, (length // 2,) * 10, al, "clopper_pearson_fixed_n", "half_10"
    )
    out = []
    for gid, radius in (("gpr20.thm6", "thm6"), ("gpr20.thm6.intermediate", "thm6_intermediate")):
        exps = [StreamExperiment(p, n, al, radius, name) for p, n, name in streams]
        out.append(
            make_check(
                al,
                gid,
                gid,
                exps,
                PathWithin(),
                description=f"no bin leaves its {radius} radius at any time t <= {length}",
            )
        )
        out.append(
            make_check(
                al,
                f"{gid}.control.fixed_n_clopper_pearson",
                gid,
                [cp],
                PathWithin(),
                expect="violated",
                description="negative control: an exact fixed-n interval (level alpha/B) "
                "re-checked at every n is not time-uniform",
            )
        )
    return out


def _cor3_adapter(gid):
    return StudyAdapter(
        gid,
        ("binary", "adversary"),
        ("n", "n_bins"),
        lambda law, n, n_bins: BinningRadiusExperiment(law, {"name": "fixed_width"}, n, n_bins),
        Within("max_error"),
        description=f"fixed-width histogram binning, radius of {gid}",
    )


#: Guarantees that can be checked on a user's law.
STUDIES = {
    "gpr20.cor3": _cor3_adapter("gpr20.cor3"),
    "gpr20.cor3.max_halfwidth": _cor3_adapter("gpr20.cor3.max_halfwidth"),
    "gpr20.thm5": StudyAdapter(
        "gpr20.thm5",
        ("binary",),
        ("n1", "n2", "n_bins"),
        lambda law, n1, n2, n_bins: UMSCountExperiment(law, n1, n2, n_bins),
        AtLeast("min_count"),
        description="uniform-mass bins from n1 points, counts of n2",
    ),
    **SHIFT_STUDIES,
}
#: Guarantees whose law is fixed by the theorem itself, with the reason.
REFUSED = {
    "gpr20.thm4": "checked given the bin memberships: its 'law' is a list of bin counts and "
    "bin means, not a score law (edit BinBernoulliExperiment settings instead)",
    "gpr20.thm4.hoeffding": "as gpr20.thm4: conditional on the bin counts",
    "gpr20.thm6": "checked on per-bin Bernoulli streams given the memberships, not on a score law",
    "gpr20.thm6.intermediate": "as gpr20.thm6",
    "gpr20.thm3": "an impossibility on the adversary Q of Theorem 2, which the theorem fixes",
    "gpr20.cor1": "an impossibility stated for eta = 1/2 with a nonatomic f(X), which the "
    "corollary fixes",
    **SHIFT_REFUSED,
}
