"""The gr22 checks (top-label and class-wise calibration) and their negative controls.

Gupta, C. and Ramdas, A. (2022). Top-label calibration and multiclass-to-binary reductions.
ICLR. Theorem 1 (eqs. 8-9), Theorem 2 (eqs. 11-12), Proposition 4, Sec. 3.2; Algorithm 10
(App. G.3) in :mod:`.gr22_canonical`.

Laws:

* Theorem 1 (TL-HB): ``tl_balanced_half`` (eta = 1/2 everywhere), ``tl_imbalanced``
  (COVTYPE-like class frequencies, mixed miscalibration) and ``tl_atoms`` (four atoms per
  class so that quantile edges tie);
* Theorem 2 (CW-HB): ``cw_dirichlet_balanced`` (L = 10), ``cw_dirichlet_imbalanced``
  (Dirichlet(4, 2, 1, .5, .3, .2)) and ``cw_prototype_atoms`` (five atomic score vectors).

All statements of a theorem (marginal, conditional, ECE with high probability, ECE in
expectation) and their controls read the same simulations: one experiment per (law, n, k).
The joint class-wise statements (13)/(14) (``gr22.eq13``, ``gr22.eq14``) read Theorem 2's;
their extra controls and the top-K label checks of Algorithms 6-7 are in :mod:`.gr22_m2b`.

Proposition 4 (``gr22.prop4``: one function on the level sets of h and on their refinement
by c) and Sec. 3.2's accuracy preservation (``gr22.accuracy``: TL-HB's predicted label is
``top_label`` of the scores, compared with ``top_label`` of the same scores) hold by
construction: they have the role ``identity`` (checked exactly by hand-computed unit tests
in ``tests/simulations/test_experiments_gr22.py``, no control; the same test shows CW-HB
and N-HB changing the argmax, so the statistic is not blind).
"""

from __future__ import annotations

from calcheck.simulations.experiments.gr22 import (
    AccuracyExperiment,
    ClassWiseBinningExperiment,
    Prop4Experiment,
    TopLabelBinningExperiment,
)
from calcheck.simulations.laws import LAWS

from ..checks.budgets import get_budget
from ..checks.check import Check, StudyAdapter, with_sharper_controls
from ..checks.events import (
    BoundRule,
    Marginal,
    MeanAtMost,
    Ordered,
    Within,
    constant,
    other_guarantee,
    substitute,
)
from ..checks.methods import EventSpec, MethodSpec
from . import gr22_canonical
from .gr22_m2b import UNION_SHARPER, top_k_checks, union_controls

__all__ = ["METHODS", "REFUSED", "STUDIES", "checks"]

_TL_LAWS = ("tl_balanced_half", "tl_imbalanced", "tl_atoms")
_CW_LAWS = ("cw_dirichlet_balanced", "cw_dirichlet_imbalanced", "cw_prototype_atoms")

# guarantee -> (event, claim, description); Theorem 1 and Theorem 2 statements.
_TL = {
    "gr22.thm1.marginal": (
        Marginal(),
        "1-alpha",
        "TL-HB, stratified n_l: a fresh test point within eps_1 = sqrt(log(2/alpha)/(2(k-1)))",
    ),
    "gr22.thm1.conditional": (
        Within("max_error"),
        "1-alpha",
        "TL-HB: TL-MCE <= eps_2 = sqrt(log(2n/(k alpha))/(2(k-1))) (n total)",
    ),
    "gr22.thm1.conditional.data_dependent": (
        Within("max_error"),
        "1-alpha",
        "TL-HB: TL-MCE <= max_l sqrt(log(2B/alpha)/(2(floor(n_l/B_l)-1))) (proof form)",
    ),
    "gr22.thm1.ece_hp": (Within("l1_ece"), "1-alpha", "TL-HB: exact TL-ECE <= eps_2"),
    "gr22.thm1.ece_mean": (
        MeanAtMost("l1_ece"),
        "1-bound",
        "TL-HB: E[TL-ECE] <= sqrt(1/(2k)) (tested as P(U >= TL-ECE) >= 1 - bound)",
    ),
}
_CW = {
    "gr22.thm2.marginal": (
        Marginal(),
        "1-alpha",
        "CW-HB: a fresh test point within eps_l^(1) for the last class",
    ),
    "gr22.thm2.conditional": (
        Within("max_error"),
        "1-alpha",
        "CW-HB: every output of h_l within eps_l^(2) for the last class",
    ),
    "gr22.thm2.ece_hp": (
        Within("cw_ece"),
        "1-alpha",
        "CW-HB: exact CW-ECE <= max_l eps_l^(2), alpha_l = alpha/L",
    ),
    "gr22.thm2.ece_mean": (MeanAtMost("cw_ece"), "1-bound", "CW-HB: E[CW-ECE] <= sqrt(1/(2k))"),
    # G15: the joint statements over all L classes (union bound, alpha_l = alpha / L)
    "gr22.eq13": (
        Within("class_test_error"),
        "1-alpha",
        "CW-HB, eq. (13): at one fresh test point every class within max_l eps_l^(1)(alpha/L)",
    ),
    "gr22.eq14": (
        Within("class_max_error"),
        "1-alpha",
        "CW-HB, eq. (14): every output of every class within max_l eps_l^(2)(alpha/L)",
    ),
}

_N_FOR_K = substitute(
    "n_in_place_of_k", "k = n points per bin in the radius", points_per_bin=lambda s: s["n"]
)
# The data-dependent radius with n points per bin in every class.
_N_PER_BIN = BoundRule(
    "n_in_place_of_k",
    substitutions=(("points_per_bin", lambda s: s["n"]),),
    guarantee="gr22.thm1.conditional",
    description="the radius with n points per bin",
)
_NO_UNION = other_guarantee(
    "without_union_bound", "gr22.thm1.marginal", "the marginal eps_1 used for the conditional event"
)


def _as_users_get(tl_sizes, cw_sizes, al) -> list[Check]:
    """TL-HB and CW-HB as users receive them, and with a real delta.

    As received: delta = 0, equal outputs of a class merged into one. With delta = 1e-3:
    the values jittered, checked against the bound + delta. Beside the delta -> 0 limit.
    """
    out = []
    for suffix, variant in (
        ("as_returned", {"outputs": "as_returned"}),
        ("delta_0.001", {"delta": 1e-3}),
    ):
        tl = tuple(
            TopLabelBinningExperiment(LAWS[name], n, k, **variant)
            for name in _TL_LAWS
            for n, k in tl_sizes
        )
        cw = tuple(
            ClassWiseBinningExperiment(LAWS[name], n, k, **variant)
            for name in _CW_LAWS
            for n, k in cw_sizes
        )
        for gid, exps in (("gr22.thm1.conditional", tl), ("gr22.thm2.conditional", cw)):
            event, claim, text = (_TL | _CW)[gid]
            what = "as a user receives it" if suffix == "as_returned" else "with delta = 1e-3"
            out.append(
                Check(f"{gid}.{suffix}", gid, exps, event, al, claim, description=f"{text}; {what}")
            )
            out.append(
                Check(
                    f"{gid}.{suffix}.control.n_in_place_of_k",
                    gid,
                    exps[: len(tl_sizes) if gid.startswith("gr22.thm1") else len(cw_sizes)],
                    event,
                    al,
                    claim,
                    "violated",
                    _N_FOR_K,
                    f"negative control: {_N_FOR_K.description}; {what}",
                )
            )
    return out


def checks(budget="quick") -> list[Check]:
    """The gr22 checks and negative controls for a budget ("quick" or "full")."""
    bud = get_budget(budget)
    al = bud.alphas
    # (n, k): quick keeps n_l >= k for the rarest class (P(c = 4) = 0.005) at k = 10.
    tl_sizes = ((2000, 10),) if not bud.full else ((2000, 10), (5000, 20), (20000, 50))
    cw_sizes = ((1000, 10),) if not bud.full else ((1000, 10), (5000, 50))
    tl = {
        name: [TopLabelBinningExperiment(LAWS[name], n, k) for n, k in tl_sizes]
        for name in _TL_LAWS
    }
    cw = {
        name: [ClassWiseBinningExperiment(LAWS[name], n, k) for n, k in cw_sizes]
        for name in _CW_LAWS
    }
    out = [
        *_theorem_checks(tl, cw, al),
        *_identity_checks(bud),
        *top_k_checks(al),
        *_as_users_get(tl_sizes, cw_sizes, al),
        *gr22_canonical.checks(bud.full, al),  # Algorithm 10 (App. G.3)
        *union_controls(tuple(e for name in cw for e in cw[name]), al),
    ]
    # sharper controls: detectable factors 0.75 and 0.77 at the quick budget, lower at 1000
    # replicates (the CI size): checked flagged on all 20 seeds of the stated range
    sharper = {"gr22.thm1.conditional": 0.65, "gr22.thm2.conditional": 0.6, **UNION_SHARPER}
    return with_sharper_controls(out, sharper)


def _theorem_checks(tl, cw, al) -> list[Check]:
    """Every statement of Theorems 1 and 2 on all its laws, each with its control.

    ``tl`` and ``cw`` map a law name to its experiments. The controls read one law (eta =
    1/2, balanced Dirichlet); Theorem 1's conditional statement has the marginal radius as
    its control instead of k = n.
    """
    out: list[Check] = []
    for specs, exps, control_law in (
        (_TL, tl, "tl_balanced_half"),
        (_CW, cw, "cw_dirichlet_balanced"),
    ):
        every = [e for name in exps for e in exps[name]]
        for gid, (event, claim, text) in specs.items():
            out.append(Check(gid, gid, tuple(every), event, al, claim, description=text))
            control = _N_PER_BIN if gid.endswith("data_dependent") else _N_FOR_K
            out.append(
                Check(
                    f"{gid}.control.n_in_place_of_k",
                    gid,
                    tuple(exps[control_law]),
                    event,
                    al,
                    claim,
                    "violated",
                    control,
                    f"negative control: {control.description}, {control_law}",
                )
            )
    out = [c for c in out if c.id != "gr22.thm1.conditional.control.n_in_place_of_k"]
    out.append(
        Check(
            "gr22.thm1.conditional.control.without_union_bound",
            "gr22.thm1.conditional",
            tuple(tl["tl_balanced_half"]),
            Within("max_error"),
            al,
            expect="violated",
            bound=_NO_UNION,
            description="negative control: the marginal eps_1 used for the "
            "conditional event, eta = 1/2",
        )
    )
    return out


def _identity_checks(bud) -> list[Check]:
    """Proposition 4 and Sec. 3.2's accuracy preservation: identities, without controls."""
    al = bud.alphas
    # Proposition 4 and App. E.3, exact on random discrete predictors: an identity (one
    # function on a grouping and its refinement), checked exactly by the hand-computed
    # test of discrete_top_label_errors; no control.
    p4 = [Prop4Experiment(12, 3, 3), Prop4Experiment(30, 5, 2)]
    if bud.full:
        p4.append(Prop4Experiment(60, 10, 5))
    # Accuracy preservation, through the user-facing calibrators: TL-HB's predict is
    # top_label(scores), compared with top_label(test), so an identity (no control; that
    # CW-HB and N-HB can change the argmax is shown by the unit test).
    unchanged = constant("unchanged", 0.0, "no predicted label changes")
    return [
        Check(
            "gr22.prop4",
            "gr22.prop4",
            tuple(p4),
            Ordered(pairs=(("conf_ece", "tl_ece"), ("conf_mce", "tl_mce"))),
            al,
            "one",
            description="identity (holds by construction: one function on the level sets "
            "of h and on their refinement by c): conf-ECE <= TL-ECE and conf-MCE <= TL-MCE "
            "on every random discrete predictor",
            role="identity",
        ),
        Check(
            "gr22.accuracy",
            "gr22.accuracy",
            tuple(
                AccuracyExperiment(LAWS[name], 600, 400, "tlhb", 20)
                for name in ("tl_opposite", "tl_atoms")
            ),
            Within("changed"),
            al,
            "one",
            bound=unchanged,
            description="identity (holds by construction: TL-HB predicts top_label(x), "
            "compared with top_label(x)): TL-HB predicts the base model's argmax on every "
            "test point",
            role="identity",
        ),
    ]


def _adapter(gid, event, claim, text, experiment, family):
    return StudyAdapter(
        gid,
        (family,),
        ("n", "points_per_bin"),
        lambda law, n, points_per_bin: experiment(law, n, points_per_bin),
        event,
        claim,
        description=text,
    )


#: Guarantees that can be checked on a user's multiclass law (grid: n, points_per_bin).
STUDIES = {
    **{
        gid: _adapter(gid, *spec, TopLabelBinningExperiment, "top_label")
        for gid, spec in _TL.items()
    },
    **{
        gid: _adapter(gid, *spec, ClassWiseBinningExperiment, "dirichlet_affine")
        for gid, spec in _CW.items()
    },
    "gr22.accuracy": StudyAdapter(
        "gr22.accuracy",
        ("top_label",),
        ("n", "points_per_bin"),
        lambda law, n, points_per_bin: AccuracyExperiment(law, n, 400, "tlhb", points_per_bin),
        Within("changed"),
        "one",
        constant("unchanged", 0.0),
        "TL-HB predicts the base model's argmax (an identity: holds by construction)",
        role="identity",
    ),
}
#: Guarantees whose law is fixed by the check itself, with the reason.
REFUSED = {
    "gr22.prop4": "an identity over all discrete predictors: the check draws random "
    "predictors itself (there is no law to choose)",
    **gr22_canonical.REFUSED,
}


_CW_SYMBOLS = ("delta", "n", "n_classes", "points_per_bin")
_TL_SYMBOLS = ("bins_per_class", "class_counts", *_CW_SYMBOLS)
_TL_EVENTS = {
    "conditional": EventSpec(
        Within("max_error"),
        "1-alpha",
        "conditional",
        "w.p. >= 1 - alpha, TL-MCE <= eps: every (class, bin) output r has "
        "|P(Y = c(X) | c(X), h(X) = r) - r| <= eps",
    ),
    "marginal": EventSpec(
        Marginal(),
        "1-alpha",
        "marginal",
        "w.p. >= 1 - alpha over the data and a fresh test point, its top-label error <= eps",
    ),
    "ece": EventSpec(
        Within("l1_ece"), "1-alpha", "conditional", "w.p. >= 1 - alpha, exact TL-ECE <= eps"
    ),
    "ece_mean": EventSpec(
        MeanAtMost("l1_ece"), "1-bound", "expectation", "E[TL-ECE] <= bound (no alpha)"
    ),
}
_CW_EVENTS = {
    "conditional": EventSpec(
        Within("max_error"),
        "1-alpha",
        "conditional",
        "w.p. >= 1 - alpha, every output of the last class's map h_L within eps (per class, "
        "as gr22 Theorem 2 is checked for the rarest class)",
    ),
    "marginal": EventSpec(
        Marginal(),
        "1-alpha",
        "marginal",
        "w.p. >= 1 - alpha, the last class's error at a fresh test point <= eps",
    ),
    "cw_ece": EventSpec(
        Within("cw_ece"), "1-alpha", "conditional", "w.p. >= 1 - alpha, exact CW-ECE <= eps"
    ),
    "cw_ece_mean": EventSpec(
        MeanAtMost("cw_ece"), "1-bound", "expectation", "E[CW-ECE] <= bound (no alpha)"
    ),
    "joint_conditional": EventSpec(
        Within("class_max_error"),
        "1-alpha",
        "conditional",
        "w.p. >= 1 - alpha, every output of every class's map h_l within eps (eq. 14)",
    ),
    "joint_marginal": EventSpec(
        Within("class_test_error"),
        "1-alpha",
        "marginal",
        "w.p. >= 1 - alpha over the data and one fresh test point, every class's error "
        "<= eps (eq. 13)",
    ),
}

#: Calibrators a user's guarantee can name (``calcheck.define_guarantee(method=...)``).
METHODS = {
    "tl_hb": MethodSpec(
        "tl_hb",
        "top-label histogram binning (gr22 Algorithm 8): uniform-mass bins of k points per "
        "predicted class, stratified over classes",
        ("top_label",),
        ("n", "points_per_bin"),
        lambda law, n, points_per_bin: TopLabelBinningExperiment(law, n, points_per_bin),
        _TL_SYMBOLS,
        _TL_EVENTS,
    ),
    "cw_hb": MethodSpec(
        "cw_hb",
        "class-wise histogram binning (gr22 Algorithm 9): one uniform-mass binning per class "
        "on all n points, floor(n/k) bins",
        ("dirichlet_affine",),
        ("n", "points_per_bin"),
        lambda law, n, points_per_bin: ClassWiseBinningExperiment(law, n, points_per_bin),
        _CW_SYMBOLS,
        _CW_EVENTS,
    ),
}
