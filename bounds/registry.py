"""Registry of guarantees: id -> function and the metadata a theory check needs.

A guarantee id follows the project convention ``<paper>.<label>[.<part>]`` (shared/spec
README, item 1). The registry lets tests assert that every registered guarantee has a
theory check, and lets the CLI evaluate any bound by id.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field

from . import gpr20, gr21, gr22

#: conditional: w.p. >= 1 - alpha over the calibration data, for every bin / output;
#: marginal: over the data and a test point; expectation: a bound on a mean;
#: time_uniform: conditional, simultaneously for every sample size of a stream;
#: lower_bound: an impossibility (no method can do better on some law);
#: identity: exact, no probability.
QUANTIFIERS = ("conditional", "marginal", "expectation", "time_uniform", "lower_bound",
               "identity")


@dataclass(frozen=True)
class Guarantee:
    """One guarantee of one paper.

    Attributes
    ----------
    id : str
        Project id, e.g. ``"gr21.thm4.marginal"``.
    function : callable
        Vectorised bound of the paper's symbols.
    paper : str
        Paper key (``gr21``, ...).
    label : str
        Label in the paper (``"Theorem 4"``) and equation.
    statement : str
        One-line statement of what is bounded.
    hypotheses : tuple of str
        Hypotheses of the guarantee.
    quantifier : str
        One of :data:`QUANTIFIERS`.
    variant_of : str or None
        For corrected / proof-valid variants, the id of the stated guarantee.
    """

    id: str
    function: Callable
    paper: str
    label: str
    statement: str
    hypotheses: tuple[str, ...]
    quantifier: str
    variant_of: str | None = None
    parameters: tuple[str, ...] = field(default=())

    def __post_init__(self):
        if self.quantifier not in QUANTIFIERS:
            raise ValueError(f"quantifier must be one of {QUANTIFIERS}, got {self.quantifier!r}")
        names = tuple(inspect.signature(self.function).parameters)
        object.__setattr__(self, "parameters", names)

    def __call__(self, **kwargs):
        """Evaluate the bound with keyword arguments named as in the function signature."""
        return self.function(**{k: v for k, v in kwargs.items() if k in self.parameters})


_REGISTRY: dict[str, Guarantee] = {}


def register(guarantee: Guarantee) -> Guarantee:
    """Add a guarantee; ids are unique."""
    if guarantee.id in _REGISTRY:
        raise ValueError(f"guarantee id already registered: {guarantee.id!r}")
    _REGISTRY[guarantee.id] = guarantee
    return guarantee


def get(guarantee_id: str) -> Guarantee:
    """Return the guarantee with this id, or raise ValueError listing the known ids."""
    try:
        return _REGISTRY[guarantee_id]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY))
        raise ValueError(f"unknown guarantee id {guarantee_id!r}; known: {known}") from None


def all_guarantees() -> list[Guarantee]:
    """All registered guarantees, sorted by id."""
    return [_REGISTRY[k] for k in sorted(_REGISTRY)]


_IID = "calibration data and test point iid"
_N2B = "n >= 2B"
_CONT = "g(X) absolutely continuous (or ties broken on an independent uniform)"

register(Guarantee(
    "gr21.thm3", gr21.thm3_conditional_eps, "gr21", "Theorem 3, eq. (8)",
    "UMD (Algorithm 1): w.p. >= 1-alpha, |E[Y|h(X)=r]-r| <= eps for all r in Range(h)",
    (_IID, _CONT, _N2B), "conditional"))
register(Guarantee(
    "gr21.cor1", gr21.cor1_conditional_eps, "gr21", "Corollary 1, eq. (10)",
    "original Zadrozny-Elkan UMD: w.p. >= 1-alpha, all bins within eps",
    (_IID, _CONT, _N2B), "conditional"))
register(Guarantee(
    "gr21.thm4.marginal", gr21.thm4_marginal_eps, "gr21", "Theorem 4, eq. (11) eps1",
    "randomized UMD (Algorithm 2): Pr(|E[Y|h(X)]-h(X)| <= eps1) >= 1-alpha",
    (_IID, _N2B, "bin values a.s. distinct (Algorithm 2 lines 14-15)"), "marginal"))
register(Guarantee(
    "gr21.thm4.conditional", gr21.thm4_conditional_eps, "gr21", "Theorem 4, eq. (11) eps2",
    "randomized UMD: w.p. >= 1-alpha, all bins within eps2",
    (_IID, _N2B), "conditional"))
register(Guarantee(
    "gr21.thm4.ece_hp", gr21.thm4_conditional_eps, "gr21", "Theorem 4(a)",
    "randomized UMD: w.p. >= 1-alpha, lp-ECE(h) <= eps2 for all p >= 1",
    (_IID, _N2B), "conditional"))
register(Guarantee(
    "gr21.thm4.ece_mean", gr21.thm4_ece_mean_bound, "gr21", "Theorem 4(b)",
    "randomized UMD: E[lp-ECE(h)] <= sqrt(B/2n) + delta for p in [1, 2]",
    (_IID, _N2B), "expectation"))
register(Guarantee(
    "gr21.thm4.ece_mean.proof_valid", gr21.thm4_ece_mean_bound_proof_valid, "gr21",
    "Theorem 4(b), proof as corrected (catalog §9 items 4-5)",
    "randomized UMD: E[lp-ECE(h)] <= 1/(2 sqrt(floor(n/B)-1)) + delta for p in [1, 2]",
    (_IID, _N2B), "expectation", variant_of="gr21.thm4.ece_mean"))


# ----------------------------------------------------------------------------- gpr20
_FIXED = "fixed partition, independent of the calibration data"
_NB1 = "N_b >= 1 for every bin"
_SHIFT = "covariate shift: target = P~_X x P_{Y|X}, w = dP~_X/dP_X known"

register(Guarantee(
    "gpr20.thm4", gpr20.thm4_halfwidth, "gpr20", "Theorem 4, eq. (17)",
    "w.p. >= 1-alpha given memberships, |pi_b - pi^_b| <= EB half-width for all b",
    (_FIXED, "calibration data iid", _NB1), "conditional"))
register(Guarantee(
    "gpr20.thm4.hoeffding", gpr20.hoeffding_bin_halfwidth, "gpr20",
    "derived Hoeffding analogue of Theorem 4 (catalog §4.21; not a paper claim)",
    "w.p. >= 1-alpha given memberships, |pi_b - pi^_b| <= sqrt(ln(2B/alpha)/(2N_b)) for all b",
    (_FIXED, "calibration data iid", _NB1), "conditional", variant_of="gpr20.thm4"))
register(Guarantee(
    "gpr20.cor3", gpr20.cor3_eps_stated, "gpr20", "Corollary 3 (as printed: hw at argmin N_b)",
    "histogram binning: w.p. >= 1-alpha, |E[Y|h(X)] - h(X)| <= hw_{b*} a.s. (eq. 18)",
    (_FIXED, "calibration data iid", _NB1), "conditional"))
register(Guarantee(
    "gpr20.cor3.max_halfwidth", gpr20.cor3_eps_max_halfwidth, "gpr20",
    "Corollary 3 corrected (catalog §4.9): eps = max_b hw_b",
    "histogram binning: w.p. >= 1-alpha, |E[Y|h(X)=r] - r| <= max_b hw_b for all r",
    (_FIXED, "calibration data iid", _NB1), "conditional", variant_of="gpr20.cor3"))
register(Guarantee(
    "gpr20.thm5", gpr20.thm5_min_count, "gpr20", "Theorem 5 (App. C.3, eqs. 38-39)",
    "uniform-mass binning with a split: w.p. >= 1-alpha, N_{b*} >= n2/(2B) - sqrt(n2 ln(2B/a)/2)",
    ("|D^1| >= c B ln(2B/alpha), c unspecified", "D^1 independent of D^2",
     "g(X) without atoms (implicit, catalog §9 A5)"), "conditional"))
register(Guarantee(
    "gpr20.thm6", gpr20.thm6_halfwidth, "gpr20", "Theorem 6 (stated form)",
    "streaming binning: w.p. >= 1-alpha, |pi_b - pi^_b| <= [7 sqrt(V ln(1+ln V)) "
    "+ 5.3 ln(6.3B/alpha)]/N_b for all b and all n",
    (_FIXED, "stream of iid points"), "time_uniform"))
register(Guarantee(
    "gpr20.thm6.intermediate", gpr20.thm6_halfwidth_intermediate, "gpr20",
    "Theorem 6, intermediate bound of the proof (App. C.4; catalog §4.11, §9 A1)",
    "streaming binning: the bound the stitching proof establishes, before the final step",
    (_FIXED, "stream of iid points"), "time_uniform", variant_of="gpr20.thm6"))
register(Guarantee(
    "gpr20.thm7", gpr20.thm7_halfwidth, "gpr20", "Theorem 7 (c unspecified; checked at c = 1)",
    "weighted binning: w.p. >= 1-alpha, |pi_check_b - E~[Y|X_b]| <= c (U/L)^2 "
    "sqrt(B ln(6B/alpha)/(2n)) for all b",
    (_SHIFT, "0 < L <= w <= U", "uniform-mass bins on the source",
     "n >= c (U/L)^2 B ln^2(6B/alpha)"), "conditional"))
register(Guarantee(
    "gpr20.thm7.explicit", gpr20.thm7_explicit_halfwidth, "gpr20",
    "Theorem 7 with explicit constants derived from App. D.1 (catalog §4.12; not a paper claim)",
    "weighted binning: w.p. >= 1-2alpha/3, |pi_check_b - E~[Y|X_b]| <= (2U^2 m_b^2 + U m_b) "
    "sqrt(ln(6B/alpha)/(2N_b)) for all b",
    (_SHIFT, "0 < L <= w <= U", _FIXED, "N_b > 2 U^2 m_b^2 ln(6B/alpha)"), "conditional",
    variant_of="gpr20.thm7"))
register(Guarantee(
    "gpr20.thm10", gpr20.thm10_halfwidth, "gpr20", "Theorem 10 (App. D.2), estimator (40)",
    "oracle m_b: w.p. >= 1-alpha, |pi^_b^(w) - E~[Y|X_b]| <= EB half-width with scale m_b U",
    (_SHIFT, "w <= U", "m_b known", _FIXED, _NB1), "conditional"))
register(Guarantee(
    "gpr20.prop3", gpr20.prop3_target_bin_mean, "gpr20", "Proposition 3 (App. D.2)",
    "E~[Y | X in X_b] = m_b E[w(X) Y | X in X_b], m_b = P(X_b)/P~(X_b)",
    (_SHIFT, "P~(X in X_b) > 0"), "identity"))
register(Guarantee(
    "gpr20.thm3", gpr20.thm3_eps_lower_bound, "gpr20", "Theorem 3 (App. B.4)",
    "injective post-hoc calibration: eps_n >= 0.25 - alpha/2 on some law, for every n",
    ("m_n injective", "Range(f) contains an interval", "alpha in (0, 0.5)"), "lower_bound"))
register(Guarantee(
    "gpr20.cor1", gpr20.cor1_width_lower_bound, "gpr20", "Corollary 1 (App. B.3)",
    "distribution-free CI w.r.t. f: E|C_n| >= 0.5 - alpha (P(|C_n| >= 1/2) >= 1 - 2 alpha) "
    "when E[Y|X] = 1/2 and f(X) is nonatomic",
    ("C_n valid for every law (atomic ones included)", "P_f non-empty",
     "alpha in (0, 0.5)"), "lower_bound"))


# ------------------------------------------------------------------------------ gr22
_TL = ("Algorithm 8 (TL-HB), k >= 2 points per bin, delta tie-breaking",
       "n_l >= k for every predicted class l", _IID, "base model g fixed (independent of D)")
_CW = ("Algorithm 9 (CW-HB), k_l >= 2 points per bin, delta tie-breaking",
       "n >= k_l (printed n_l >= k_l, catalog §9.1)", _IID, "base model g fixed")

register(Guarantee(
    "gr22.thm1.marginal", gr22.thm1_marginal_eps, "gr22", "Theorem 1, eq. (8) eps_1",
    "TL-HB: Pr(|P(Y=c(X)|c(X),h(X)) - h(X)| <= sqrt(log(2/alpha)/(2(k-1))) + delta) >= 1-alpha",
    _TL, "marginal"))
register(Guarantee(
    "gr22.thm1.conditional", gr22.thm1_conditional_eps, "gr22", "Theorem 1, eq. (9) eps_2",
    "TL-HB: w.p. >= 1-alpha, TL-MCE <= sqrt(log(2n/(k alpha))/(2(k-1))) + delta",
    _TL, "conditional"))
register(Guarantee(
    "gr22.thm1.conditional.data_dependent", gr22.thm1_conditional_eps_data_dependent, "gr22",
    "Theorem 1 proof (App. H.2), realised bins",
    "TL-HB (also with a fixed B_l): w.p. >= 1-alpha, TL-MCE <= "
    "delta + max_l sqrt(log(2B/alpha)/(2(floor(n_l/B_l)-1))), B = sum_l B_l",
    _TL, "conditional", variant_of="gr22.thm1.conditional"))
register(Guarantee(
    "gr22.thm1.ece_hp", gr22.thm1_conditional_eps, "gr22", "Theorem 1, TL-ECE bound",
    "TL-HB: w.p. >= 1-alpha, TL-ECE <= eps_2", _TL, "conditional"))
register(Guarantee(
    "gr22.thm1.ece_mean", gr22.thm1_ece_mean_bound, "gr22", "Theorem 1, E[TL-ECE] bound",
    "TL-HB: E_D[TL-ECE] <= sqrt(1/(2k)) + delta", _TL, "expectation"))
register(Guarantee(
    "gr22.thm2.marginal", gr22.thm2_marginal_eps, "gr22", "Theorem 2, eq. (11) eps^(1)",
    "CW-HB: per class l, Pr(|P(Y=l|h_l(X)) - h_l(X)| <= sqrt(log(2/alpha_l)/(2(k_l-1))) "
    "+ delta) >= 1-alpha_l", _CW, "marginal"))
register(Guarantee(
    "gr22.thm2.conditional", gr22.thm2_conditional_eps, "gr22", "Theorem 2, eq. (12) eps^(2)",
    "CW-HB: per class l, w.p. >= 1-alpha_l, every output of h_l within "
    "sqrt(log(2n/(k_l alpha_l))/(2(k_l-1))) + delta", _CW, "conditional"))
register(Guarantee(
    "gr22.thm2.ece_hp", gr22.thm2_ece_hp_eps, "gr22", "Theorem 2(a)",
    "CW-HB: w.p. >= 1-alpha, CW-ECE <= max_l eps^(2)_l with alpha_l = alpha/L",
    _CW, "conditional"))
register(Guarantee(
    "gr22.thm2.ece_mean", gr22.thm2_ece_mean_bound, "gr22", "Theorem 2(b)",
    "CW-HB: E_D[CW-ECE] <= max_l sqrt(1/(2 k_l)) + delta", _CW, "expectation"))
register(Guarantee(
    "gr22.prop4", gr22.discrete_top_label_errors, "gr22", "Proposition 4 (App. H.1), App. E.3",
    "for every predictor and law: conf-ECE <= TL-ECE and conf-MCE <= TL-MCE",
    ("none",), "identity"))
register(Guarantee(
    "gr22.accuracy", gr22.alg2_calibrated_accuracy, "gr22", "Sec. 3.2 (Algorithm 2)",
    "top-label calibrators (Algorithms 1, 2, 8) keep c, hence the base model's accuracy",
    ("any binary calibrator",), "identity"))
