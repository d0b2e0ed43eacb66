"""The gpr20 checks (Gupta, Podkopaev & Ramdas 2020) and their negative controls.

Every registered gpr20 guarantee has a check and at least one negative control that the
suite must flag. The protocols follow catalog §4 and §7.2 (S1-S6); laws are in
:data:`simulations.laws.LAWS` and :data:`simulations.shift.SHIFT_LAWS`.
"""

from __future__ import annotations

from simulations.experiments import (
    BinBernoulliExperiment,
    BinningRadiusExperiment,
    CIWidthExperiment,
    ImpossibilityExperiment,
    Prop3Experiment,
    ShiftExperiment,
    StreamExperiment,
    UMSCountExperiment,
)
from simulations.laws import LAWS
from simulations.shift import SHIFT_LAWS

from .checks import EventCheck

__all__ = ["gpr20_checks"]

# Per-bin Bernoulli settings (catalog §7.2 S1): (name, counts, probs).
_BINS = {
    "quick": [
        ("equal_half", (100,) * 10, (0.5,) * 10),
        ("tiny_rare", (20,) * 50, (0.01,) * 50),
        ("unequal_mixed", (5, 20, 50, 200, 500, 1000, 2000, 30, 10, 100),
         (0.001, 0.01, 0.05, 0.5, 0.2, 0.05, 0.01, 0.9, 0.5, 0.3)),
        ("large_small_rates", (1000,) * 5, (0.001, 0.01, 0.05, 0.5, 0.2)),
    ],
    "full": [
        ("many_tiny", (10,) * 100, (0.05,) * 100),
        ("large_extreme", (5000,) * 20, (0.001,) * 10 + (0.999,) * 10),
    ],
}


def _alphas(budget):
    return (0.1, 0.05) if budget == "quick" else (0.2, 0.1, 0.05, 0.01)


def _bins(budget):
    return _BINS["quick"] + (_BINS["full"] if budget == "full" else [])


def gpr20_checks(budget: str = "quick") -> list[EventCheck]:
    """The gpr20 checks and negative controls for a budget ("quick" or "full")."""
    if budget not in ("quick", "full"):
        raise ValueError(f"budget must be 'quick' or 'full', got {budget!r}")
    full = budget == "full"
    al = _alphas(budget)
    checks: list[EventCheck] = []

    def add(cid, guarantee, experiments, claim="1-alpha", expect="consistent", text=""):
        checks.append(EventCheck(cid, guarantee, tuple(experiments), claim, expect, text))

    # Theorem 4 and its Hoeffding analogue, per bin given the counts (S1).
    def bins(radius):
        return [BinBernoulliExperiment(c, p, al, radius, name) for name, c, p in _bins(budget)]

    add("gpr20.thm4", "gpr20.thm4", bins("thm4"),
        text="given the bin counts, all bins within the empirical-Bernstein half-width (17)")
    add("gpr20.thm4.control.without_range_term", "gpr20.thm4",
        [BinBernoulliExperiment((20,) * 50, (0.01,) * 50, al, "bernstein_without_range",
                                "tiny_rare")], expect="violated",
        text="negative control: Theorem 4 without its 3 ln(3B/alpha)/N_b term (an all-zero "
             "bin gets radius 0)")
    add("gpr20.thm4.hoeffding", "gpr20.thm4.hoeffding", bins("hoeffding"),
        text="derived: all bins within sqrt(ln(2B/alpha)/(2 N_b)) (not a paper claim)")
    add("gpr20.thm4.hoeffding.control.without_union_bound", "gpr20.thm4.hoeffding",
        [BinBernoulliExperiment((20,) * 50, (0.5,) * 50, al, "hoeffding_without_union_bound",
                                "equal_half_50")], expect="violated",
        text="negative control: Hoeffding at level alpha per bin, no union bound, 50 bins")

    # Corollary 3 end to end (S2): fixed-width bins, and uniform-mass bins with a split.
    fw, ums = {"name": "fixed_width"}, {"name": "ums", "split": 0.2}
    cor3_laws = [(LAWS["uniform_half"], fw, 10), (LAWS["uniform_logistic"], fw, 10),
                 (LAWS["mixture_atoms"], fw, 10), (LAWS["skewed_beta"], ums, 10),
                 (LAWS["two_atoms"], ums, 10)]
    ns = (1000, 3000) if not full else (300, 1000, 3000, 10000)

    def cor3(radius, laws=cor3_laws):
        return [BinningRadiusExperiment(law, cal, n, b, al, radius)
                for law, cal, b in laws for n in ns]

    counter = [(LAWS["cor3_counterexample"], fw, 2)]
    add("gpr20.cor3", "gpr20.cor3", cor3("stated"),
        text="histogram binning: every output within the printed radius hw_{b*}, "
             "b* = argmin N_b (benign laws)")
    add("gpr20.cor3.control.counterexample", "gpr20.cor3",
        [BinningRadiusExperiment(LAWS["cor3_counterexample"], fw, 3000, 2, al, "stated")],
        expect="violated",
        text="the printed radius fails where the fewest-point bin has V^ = 0 (catalog §9 A3)")
    add("gpr20.cor3.max_halfwidth", "gpr20.cor3.max_halfwidth",
        cor3("max_halfwidth", cor3_laws + counter)
        + [ImpossibilityExperiment("fixed_width", n, al, "cor3") for n in (1000,)],
        text="histogram binning: every output within max_b hw_b, incl. the counterexample "
             "and the adversary Q of Theorem 2")
    add("gpr20.cor3.max_halfwidth.control.n_in_place_of_n_b", "gpr20.cor3.max_halfwidth",
        [BinningRadiusExperiment(LAWS["uniform_half"], fw, 3000, 10, al, "n_in_place_of_n_b")],
        expect="violated", text="negative control: radius with n in place of N_b, eta = 1/2")

    # Theorem 5 (S5): minimum bin count and well-balancedness of uniform-mass bins.
    t5 = [(LAWS["skewed_beta"], 1000, 5000, 10), (LAWS["uniform_logistic"], 1000, 5000, 10),
          (LAWS["mixture_atoms"], 1000, 5000, 10)]
    if full:
        t5 += [(LAWS["skewed_beta"], 1000, 10000, 10), (LAWS["skewed_beta"], 500, 2000, 5),
               (LAWS["skewed_beta"], 2000, 20000, 20)]
    add("gpr20.thm5", "gpr20.thm5", [UMSCountExperiment(law, n1, n2, b, al)
                                     for law, n1, n2, b in t5],
        text="min_b N_b >= n2/(2B) - sqrt(n2 ln(2B/alpha)/2), |D^1| = 1000 (c ~ 19 at B = 10)")
    add("gpr20.thm5.well_balanced", "gpr20.thm5",
        [UMSCountExperiment(law, n1, n2, b, al, "well_balanced") for law, n1, n2, b in t5],
        claim="1-alpha/2",
        text="step 1 of the proof (Lemma 13 at alpha/2): every bin mass in [1/(2B), 2/B]")
    add("gpr20.thm5.control.atoms_without_tie_breaking", "gpr20.thm5",
        [UMSCountExperiment(LAWS["two_atoms"], 1000, 5000, 10, al, tie_breaking="none")],
        expect="violated",
        text="negative control: atoms {0.2, 0.8} and quantile bins without tie-breaking "
             "(the implicit continuity hypothesis, catalog §9 A5)")

    # Theorem 6 (S4): time-uniform coverage over streams.
    length = 2000 if not full else 10000
    streams = [StreamExperiment((0.5, 0.1, 0.3, 0.7, 0.02), (length,) * 5, al, name="mixed"),
               StreamExperiment((0.5,) * 10, (length // 2,) * 10, al, name="half_10")]
    cp = StreamExperiment((0.5,) * 10, (length // 2,) * 10, al, "clopper_pearson_fixed_n",
                          "half_10")
    for gid, radius in (("gpr20.thm6", "thm6"), ("gpr20.thm6.intermediate",
                                                 "thm6_intermediate")):
        exps = [StreamExperiment(e.probs, e.lengths, al, radius, e.name) for e in streams]
        add(gid, gid, exps, text=f"no bin leaves its {radius} radius at any time t <= "
                                 f"{length}")
        add(f"{gid}.control.fixed_n_clopper_pearson", gid, [cp], expect="violated",
            text="negative control: an exact fixed-n interval (level alpha/B) re-checked at "
                 "every n is not time-uniform")

    # Theorems 7 and 10, Proposition 3 (S6): covariate shift with a known bounded ratio.
    sine, ident = SHIFT_LAWS["shift_sine"], SHIFT_LAWS["shift_identity"]
    n_shift = 10000 if not full else 40000

    def shift(law, estimator, radius, b=10, part="uniform_mass", n=n_shift):
        return ShiftExperiment(law, n, b, al, estimator, radius, part,
                               2000 if part == "uniform_mass" else 0)

    add("gpr20.thm7", "gpr20.thm7", [shift(sine, "weighted", "thm7")],
        text="weighted binning on uniform-mass source bins within c (U/L)^2 "
             "sqrt(B ln(6B/alpha)/(2n)), c = 1")
    pooled = [shift(sine, "weighted", "hoeffding_pooled")]
    add("gpr20.thm7.control.hoeffding_pooled", "gpr20.thm7", pooled, expect="violated",
        text="negative control: sqrt(ln(6B/alpha)/(2n)), as if every bin had n points "
             "and there were no shift")
    add("gpr20.thm7.explicit", "gpr20.thm7.explicit",
        [shift(sine, "weighted", "thm7_explicit"),
         shift(ident, "weighted", "thm7_explicit", 2, "fixed_width", 2 * n_shift)],
        claim="1-2alpha/3",
        text="derived explicit constants (2U^2 m_b^2 + U m_b) sqrt(ln(6B/alpha)/(2N_b))")
    add("gpr20.thm7.explicit.control.hoeffding_pooled", "gpr20.thm7.explicit", pooled,
        claim="1-2alpha/3", expect="violated",
        text="negative control: the pooled Hoeffding radius")
    add("gpr20.thm10", "gpr20.thm10",
        [shift(sine, "oracle", "thm10"),
         shift(ident, "oracle", "thm10", 2, "fixed_width", 2 * n_shift)],
        text="oracle m_b estimator (40) within its empirical-Bernstein radius")
    add("gpr20.thm10.control.unweighted", "gpr20.thm10",
        [shift(ident, "unweighted", "thm10", 2, "fixed_width", 2 * n_shift)],
        expect="violated",
        text="negative control: unweighted binning (17) is biased for the target mean")
    add("gpr20.prop3", "gpr20.prop3", [Prop3Experiment(sine), Prop3Experiment(ident)],
        claim="one", text="identity on random partitions, to 1e-10 (two quadrature routes)")
    add("gpr20.prop3.control.without_m_b", "gpr20.prop3",
        [Prop3Experiment(sine, variant="without_m_b")], claim="one", expect="violated",
        text="negative control: E[w Y | X_b] without the factor m_b")

    # Theorem 3 and Corollary 1 (S3): the adversary Q.
    n_q = (1000,) if not full else (200, 1000, 5000)
    add("gpr20.thm3", "gpr20.thm3",
        [ImpossibilityExperiment(m, n, al) for m in ("platt", "temperature", "beta")
         for n in n_q], claim="alpha",
        text="under Q, injective maps have P(error > 0.25 - alpha/2) >= alpha")
    add("gpr20.thm3.control.histogram_binning", "gpr20.thm3",
        [ImpossibilityExperiment("fixed_width", n, al) for n in n_q], claim="alpha",
        expect="violated",
        text="negative control: histogram binning (not injective) is calibrated under Q")
    add("gpr20.cor1", "gpr20.cor1",
        [CIWidthExperiment("atomwise_eb", LAWS["uniform_half"], n, al) for n in (1000, 5000)],
        claim="1-2alpha",
        text="a distribution-free CI w.r.t. f (atom-wise empirical Bernstein) has width "
             ">= 1/2 w.p. >= 1 - 2 alpha when eta = 1/2 and f(X) is continuous")
    add("gpr20.cor1.premise", "gpr20.cor1",
        [CIWidthExperiment("atomwise_eb", law, n, al, "coverage")
         for law, n in (("adversary_q", 1000), (LAWS["two_atoms"], 1000),
                        (LAWS["atoms_30"], 300), (LAWS["mixture_atoms"], 1000))],
        text="premise: the atom-wise interval covers E[Y | f(X)] on atomic laws and under Q")
    add("gpr20.cor1.control.bin_interval_width", "gpr20.cor1",
        [CIWidthExperiment("bin_thm4", LAWS["uniform_half"], 5000, al)], claim="1-2alpha",
        expect="violated",
        text="negative control: Theorem 4's bin interval used as a CI w.r.t. f is narrower")
    add("gpr20.cor1.control.bin_interval_validity", "gpr20.cor1",
        [CIWidthExperiment("bin_thm4", "adversary_q", 5000, al, "coverage")],
        expect="violated",
        text="... and, as Corollary 1 predicts, not valid w.r.t. f: it misses E_Q[Y|f(X)] = Y")
    return checks
