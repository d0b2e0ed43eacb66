"""The gr22 checks (Gupta & Ramdas 2022, top-label and class-wise calibration).

Every registered gr22 guarantee has a check and a negative control that the suite must flag.
Laws (:data:`simulations.multiclass_laws.MULTICLASS_LAWS`, catalog §7 protocols):

* Theorem 1 (TL-HB): ``tl_balanced_half`` (P-B, eta = 1/2 everywhere), ``tl_imbalanced``
  (P-D, COVTYPE-like class frequencies, mixed miscalibration) and ``tl_atoms`` (P-C, four
  atoms per class so that quantile edges tie);
* Theorem 2 (CW-HB): ``cw_dirichlet_balanced`` (L = 10), ``cw_dirichlet_imbalanced``
  (Dirichlet(4, 2, 1, .5, .3, .2)) and ``cw_prototype_atoms`` (five atomic score vectors).
"""

from __future__ import annotations

from simulations.gr22_experiments import (
    AccuracyExperiment,
    ClassWiseBinningExperiment,
    Prop4Experiment,
    TopLabelBinningExperiment,
)
from simulations.multiclass_laws import MULTICLASS_LAWS as LAWS

from .checks import EventCheck

__all__ = ["gr22_checks"]

_TL_LAWS = ("tl_balanced_half", "tl_imbalanced", "tl_atoms")
_CW_LAWS = ("cw_dirichlet_balanced", "cw_dirichlet_imbalanced", "cw_prototype_atoms")


def gr22_checks(budget: str = "quick") -> list[EventCheck]:
    """The gr22 checks and negative controls for a budget ("quick" or "full")."""
    if budget not in ("quick", "full"):
        raise ValueError(f"budget must be 'quick' or 'full', got {budget!r}")
    full = budget == "full"
    al = (0.1, 0.05) if not full else (0.2, 0.1, 0.05, 0.01)
    # (n, k): quick keeps n_l >= k for the rarest class (P(c = 4) = 0.005) at k = 10.
    tl_sizes = ((2000, 10),) if not full else ((2000, 10), (5000, 20), (20000, 50))
    cw_sizes = ((1000, 10),) if not full else ((1000, 10), (5000, 50))
    checks: list[EventCheck] = []

    def add(cid, guarantee, experiments, claim="1-alpha", expect="consistent", text=""):
        checks.append(EventCheck(cid, guarantee, tuple(experiments), claim, expect, text))

    def tl(event, radius="stated", laws=_TL_LAWS, sizes=tl_sizes):
        return [TopLabelBinningExperiment(LAWS[name], n, al, k, event, radius)
                for name in laws for n, k in sizes]

    def cw(event, radius="stated", laws=_CW_LAWS, sizes=cw_sizes):
        return [ClassWiseBinningExperiment(LAWS[name], n, al, k, event, radius)
                for name in laws for n, k in sizes]

    half = ("tl_balanced_half",)
    # Theorem 1 (catalog G6-G9).
    add("gr22.thm1.marginal", "gr22.thm1.marginal", tl("marginal"),
        text="TL-HB, stratified n_l: a fresh test point within eps_1 = sqrt(log(2/alpha)/"
             "(2(k-1)))")
    add("gr22.thm1.marginal.control.n_in_place_of_k", "gr22.thm1.marginal",
        tl("marginal", "n_in_place_of_k", half), expect="violated",
        text="negative control: eps_1 with n in place of k, eta = 1/2")
    add("gr22.thm1.conditional", "gr22.thm1.conditional", tl("conditional"),
        text="TL-HB: TL-MCE <= eps_2 = sqrt(log(2n/(k alpha))/(2(k-1))) (n total)")
    add("gr22.thm1.conditional.control.without_union_bound", "gr22.thm1.conditional",
        tl("conditional", "without_union_bound", half), expect="violated",
        text="negative control: the marginal eps_1 used for the conditional event, eta = 1/2")
    add("gr22.thm1.conditional.data_dependent", "gr22.thm1.conditional.data_dependent",
        tl("conditional", "data_dependent"),
        text="TL-HB: TL-MCE <= max_l sqrt(log(2B/alpha)/(2(floor(n_l/B_l)-1))) (proof form)")
    add("gr22.thm1.conditional.data_dependent.control.n_in_place_of_k",
        "gr22.thm1.conditional.data_dependent", tl("conditional", "n_in_place_of_k", half),
        expect="violated", text="negative control: radius with n points per bin, eta = 1/2")
    add("gr22.thm1.ece_hp", "gr22.thm1.ece_hp", tl("ece_hp"),
        text="TL-HB: exact TL-ECE <= eps_2")
    add("gr22.thm1.ece_hp.control.n_in_place_of_k", "gr22.thm1.ece_hp",
        tl("ece_hp", "n_in_place_of_k", half), expect="violated",
        text="negative control: eps_2 with n in place of k, eta = 1/2")
    add("gr22.thm1.ece_mean", "gr22.thm1.ece_mean", tl("ece_mean"), claim="1-bound",
        text="TL-HB: E[TL-ECE] <= sqrt(1/(2k)) (tested as P(U >= TL-ECE) >= 1 - bound)")
    add("gr22.thm1.ece_mean.control.n_in_place_of_k", "gr22.thm1.ece_mean",
        tl("ece_mean", "n_in_place_of_k", half), claim="1-bound", expect="violated",
        text="negative control: sqrt(1/(2n)) in place of sqrt(1/(2k)), eta = 1/2")

    # Theorem 2 (catalog G11-G14): per class for the rarest class, CW-ECE for all classes.
    add("gr22.thm2.marginal", "gr22.thm2.marginal", cw("marginal"),
        text="CW-HB: a fresh test point within eps_l^(1) for the last class")
    add("gr22.thm2.marginal.control.n_in_place_of_k", "gr22.thm2.marginal",
        cw("marginal", "n_in_place_of_k", _CW_LAWS[:1]), expect="violated",
        text="negative control: eps^(1) with n in place of k")
    add("gr22.thm2.conditional", "gr22.thm2.conditional", cw("conditional"),
        text="CW-HB: every output of h_l within eps_l^(2) for the last class")
    add("gr22.thm2.conditional.control.n_in_place_of_k", "gr22.thm2.conditional",
        cw("conditional", "n_in_place_of_k", _CW_LAWS[:1]), expect="violated",
        text="negative control: eps^(2) with n in place of k")
    add("gr22.thm2.ece_hp", "gr22.thm2.ece_hp", cw("ece_hp"),
        text="CW-HB: exact CW-ECE <= max_l eps_l^(2), alpha_l = alpha/L")
    add("gr22.thm2.ece_hp.control.n_in_place_of_k", "gr22.thm2.ece_hp",
        cw("ece_hp", "n_in_place_of_k", _CW_LAWS[:1]), expect="violated",
        text="negative control: eps with n in place of k")
    add("gr22.thm2.ece_mean", "gr22.thm2.ece_mean", cw("ece_mean"), claim="1-bound",
        text="CW-HB: E[CW-ECE] <= sqrt(1/(2k))")
    add("gr22.thm2.ece_mean.control.n_in_place_of_k", "gr22.thm2.ece_mean",
        cw("ece_mean", "n_in_place_of_k", _CW_LAWS[:1]), claim="1-bound", expect="violated",
        text="negative control: sqrt(1/(2n)) in place of sqrt(1/(2k))")

    # Proposition 4 and App. E.3 (catalog G1-G2), exact on random discrete predictors.
    p4 = [Prop4Experiment(12, 3, 3), Prop4Experiment(30, 5, 2)]
    if full:
        p4.append(Prop4Experiment(60, 10, 5))
    add("gr22.prop4", "gr22.prop4", p4, claim="one",
        text="conf-ECE <= TL-ECE and conf-MCE <= TL-MCE on every random discrete predictor")
    add("gr22.prop4.control.conf_in_place_of_tl", "gr22.prop4",
        [Prop4Experiment(12, 3, 3, "conf_in_place_of_tl")], claim="one", expect="violated",
        text="negative control: conf-ECE taken for TL-ECE under-reports it")

    # Accuracy preservation (catalog G4), through the user-facing calibrators.
    acc_laws = ("tl_opposite", "tl_atoms")
    add("gr22.accuracy", "gr22.accuracy",
        [AccuracyExperiment(LAWS[name], 600, 400, "tlhb", 20, (0.1,)) for name in acc_laws],
        claim="one", text="TL-HB predicts the base model's argmax on every test point")
    add("gr22.accuracy.control.classwise", "gr22.accuracy",
        [AccuracyExperiment(LAWS["tl_opposite"], 600, 400, c, 20, (0.1,))
         for c in ("cwhb", "nhb")], claim="one", expect="violated",
        text="negative control: CW-HB and N-HB (Algorithms 9, 4) can change the argmax")
    return checks
