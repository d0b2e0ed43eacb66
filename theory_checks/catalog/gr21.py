"""The gr21 checks and their negative controls.

Gupta, C. and Ramdas, A. (2021). Distribution-free calibration guarantees for histogram
binning without sample splitting. ICML. Theorem 3 (eq. 8), Corollary 1 (eq. 10), Theorem 4
(eq. 11, parts (a) and (b)), A9; Lemma 1 and the two-bin case A4 in :mod:`.gr21_lemmas`.

Theorem 4 is checked three ways: in the delta -> 0 limit (every bin its own output), on
the map a user receives (delta = 0, equal values merged into one output) and with a real
delta = 1e-3 (values jittered, bound eps + delta).

Each check runs on six laws (uniform scores with eta = 1/2, a Platt curve, Beta(0.1, 5)
scores, two atoms, a continuous-plus-atoms mixture, Beta labels; five more at the full
budget). Negative controls: every check with the bound evaluated at n B points (n in place
of n/B) on the eta = 1/2 law, which reuses that law's simulations; and Algorithm 1 without
tie-breaking on two atoms (B = 3, n = 3000), where the bins are not exchangeable.
"""

from __future__ import annotations

from calcheck.simulations.experiments.binning import BinningExperiment
from calcheck.simulations.experiments.binning_data import BinningDataExperiment
from calcheck.simulations.laws import LAWS

from ..checks.budgets import get_budget
from ..checks.check import Check, StudyAdapter, with_sharper_controls
from ..checks.events import Marginal, MeanAtMost, Within
from ..checks.methods import BINARY_EVENTS, DATA_KEYWORDS, MethodSpec
from .common import binning_experiments, n_times_bins
from .gr21_lemmas import LEMMA_REFUSED, lemma_checks

__all__ = ["METHODS", "REFUSED", "STUDIES", "checks"]

_POSITIVE_LAWS = (
    "uniform_half",
    "uniform_logistic",
    "skewed_beta",
    "two_atoms",
    "mixture_atoms",
    "beta_labels",
)
_EXTRA_LAWS = ("uniform_identity", "uniform_step", "uniform_sine", "rare_event", "atoms_30")
_GRIDS = {
    "quick": ((200, 10), (1000, 10), (3000, 10)),
    "full": ((200, 10), (1000, 5), (1000, 10), (3000, 10), (3000, 20), (10000, 10)),
}
# Tiny bins for the expectation bound: n = 2B, and 2B < n < 3B where the proof has a gap.
_TINY = ((20, 10), (25, 10), (29, 10))
_UMD = {"name": "umd", "tie_breaking": "lexicographic"}
_ZE = {"name": "zadrozny_elkan", "tie_breaking": "lexicographic"}
_RUMD = {"name": "randomized_umd", "delta": 0.0}

# guarantee -> (calibrator, event, claim, tiny grid too, description)
_SPECS = {
    "gr21.thm3": (
        _UMD,
        Within("max_error"),
        "1-alpha",
        False,
        "UMD (Algorithm 1) with lexicographic tie-breaking: all bins within eps (8)",
    ),
    "gr21.cor1": (
        _ZE,
        Within("max_error"),
        "1-alpha",
        False,
        "original Zadrozny-Elkan UMD: all bins within eps (10)",
    ),
    "gr21.thm4.marginal": (
        _RUMD,
        Marginal(),
        "1-alpha",
        False,
        "randomized UMD: a fresh test point is within eps1 (11)",
    ),
    "gr21.thm4.conditional": (
        _RUMD,
        Within("max_error"),
        "1-alpha",
        False,
        "randomized UMD: all bins within eps2 (11)",
    ),
    "gr21.thm4.ece_hp": (
        _RUMD,
        Within("l2_ece"),
        "1-alpha",
        False,
        "randomized UMD: exact l2-ECE within eps2 (Theorem 4(a))",
    ),
    "gr21.thm4.ece_mean": (
        _RUMD,
        MeanAtMost("l2_ece"),
        "1-bound",
        True,
        "randomized UMD: E[l2-ECE] <= sqrt(B/2n) (Theorem 4(b), stated form)",
    ),
    "gr21.a9": (
        _RUMD,
        MeanAtMost("l2_ece_sq"),
        "1-bound",
        True,
        "randomized UMD: E[(l2-ECE)^2] <= 1/(4(floor(n/B)-1)) (A9, eq. 19; attained at "
        "eta = 1/2 with one interior point per bin)",
    ),
    "gr21.thm4.ece_mean.proof_valid": (
        _RUMD,
        MeanAtMost("l2_ece"),
        "1-bound",
        True,
        "randomized UMD: E[l2-ECE] <= 1/(2 sqrt(floor(n/B)-1)) (Theorem 4(b), as the proof "
        "supports it)",
    ),
}

# The map a user receives (equal float64 outputs merged, delta = 0) and a real delta > 0,
# beside the delta -> 0 limit above: check id -> (guarantee, calibrator, event, description)
_AS_USED = {
    "gr21.thm4.marginal.as_returned": (
        "gr21.thm4.marginal",
        {"name": "randomized_umd", "delta": 0.0, "outputs": "as_returned"},
        Marginal(),
        "randomized UMD as a user receives it (delta = 0: bins with equal values are one "
        "output, merged): a fresh test point is within eps1 (11)",
    ),
    "gr21.thm4.conditional.as_returned": (
        "gr21.thm4.conditional",
        {"name": "randomized_umd", "delta": 0.0, "outputs": "as_returned"},
        Within("max_error"),
        "randomized UMD as a user receives it (equal values merged): all outputs within eps2",
    ),
    "gr21.thm4.marginal.delta_0.001": (
        "gr21.thm4.marginal",
        {"name": "randomized_umd", "delta": 1e-3},
        Marginal(),
        "randomized UMD with delta = 1e-3 (jittered, distinct float64 values): a fresh test "
        "point is within eps1 + delta (11)",
    ),
    "gr21.thm4.conditional.delta_0.001": (
        "gr21.thm4.conditional",
        {"name": "randomized_umd", "delta": 1e-3},
        Within("max_error"),
        "randomized UMD with delta = 1e-3: all outputs within eps2 + delta (11)",
    ),
}

_WRONG_N = n_times_bins(
    "n_in_place_of_n_over_B", "bound evaluated at n B points: n in place of n/B"
)


def checks(budget="quick") -> list[Check]:
    """The gr21 checks and their negative controls for a budget ("quick" or "full")."""
    bud = get_budget(budget)
    laws = tuple(LAWS[k] for k in _POSITIVE_LAWS + (_EXTRA_LAWS if bud.full else ()))
    grid = _GRIDS[bud.name]
    out = [*_stated_checks(bud, laws, grid), *_as_used_checks(bud, laws, grid)]
    out += lemma_checks(bud)
    # sharper controls: detectable factors 0.785 / 0.785 at the quick budget (0.78 / 0.79 at
    # 1000 replicates), so a constant 30% too small is caught, not only n for n/B; A9's bound
    # is attained at eta = 1/2, n = 2B (coverage 3/4 exactly): x0.6 claims 0.85, 7 standard
    # errors above at 1000 replicates
    return with_sharper_controls(
        out,
        {
            "gr21.thm3": 0.7,
            "gr21.thm4.conditional": 0.7,
            "gr21.a9": 0.6,
            "gr21.lem1": 0.8,
            "gr21.a4": 0.6,
        },
    )


def _wrong_bound_control(cid, gid, experiments, event, alphas, claim) -> Check:
    """The negative control of ``cid``: its bound at n B points, on eta = 1/2's experiments."""
    return Check(
        f"{cid}.control.wrong_bound",
        gid,
        experiments,
        event,
        alphas,
        claim,
        "violated",
        _WRONG_N,
        "negative control: bound computed with n in place of n/B, eta = 1/2",
    )


def _stated_checks(bud, laws, grid) -> list[Check]:
    """Every statement of :data:`_SPECS` with its control; Algorithm 1 without tie-breaking."""
    out = []
    for gid, (cal, event, claim, tiny, text) in _SPECS.items():
        g = _TINY + grid if tiny else grid
        exps = binning_experiments(cal, laws, g)
        out.append(Check(gid, gid, exps, event, bud.alphas, claim, description=text))
        half = binning_experiments(cal, (LAWS["uniform_half"],), g)
        out.append(_wrong_bound_control(gid, gid, half, event, bud.alphas, claim))
    out.append(
        Check(
            "gr21.thm3.control.no_tie_breaking",
            "gr21.thm3",
            binning_experiments(
                {"name": "umd", "tie_breaking": "none"}, (LAWS["two_atoms"],), ((3000, 3),)
            ),
            Within("max_error"),
            (0.1,),
            expect="violated",
            description="Algorithm 1 without tie-breaking on atoms {0.2, 0.8}: a bin mixes the "
            "atoms, so bins are not exchangeable",
            role="hypothesis",
        )
    )
    return out


def _as_used_checks(bud, laws, grid) -> list[Check]:
    """Theorem 4 on the map a user receives and with delta = 1e-3 (:data:`_AS_USED`)."""
    out = []
    for cid, (gid, cal, event, text) in _AS_USED.items():
        exps = binning_experiments(cal, laws, grid)
        out.append(Check(cid, gid, exps, event, bud.alphas, "1-alpha", description=text))
        half = binning_experiments(cal, (LAWS["uniform_half"],), grid)
        out.append(_wrong_bound_control(cid, gid, half, event, bud.alphas, "1-alpha"))
    return out


def _adapter(gid):
    cal, event, claim, _, text = _SPECS[gid]
    return StudyAdapter(
        gid,
        ("binary",),
        ("n", "n_bins"),
        lambda law, n, n_bins: BinningExperiment(cal, law, n, n_bins),
        event,
        claim,
        description=text,
    )


#: Guarantees that can be checked on a user's binary law (grid: n, n_bins).
STUDIES = {gid: _adapter(gid) for gid in _SPECS}
#: Guarantees whose law is fixed by the theorem itself, with the reason.
REFUSED: dict[str, str] = dict(LEMMA_REFUSED)


def _binning_method(name, spec, text, exact=None) -> MethodSpec:
    return MethodSpec(
        name,
        text,
        ("binary",),
        ("n", "n_bins"),
        lambda law, n, n_bins: BinningExperiment(spec, law, n, n_bins),
        ("delta", "n", "n_bins"),
        BINARY_EVENTS,
        exact,
        data=tuple(DATA_KEYWORDS),
        data_build=lambda law, n, n_bins: BinningDataExperiment(spec, law, n, n_bins),
    )


#: Calibrators a user's guarantee can name (``calcheck.define_guarantee(method=...)``).
METHODS = {
    "umd": _binning_method(
        "umd",
        _UMD,
        "uniform-mass binning without sample splitting (gr21 Algorithm 1, "
        "lexicographic tie-breaking), all n points for edges and means",
        "umd",
    ),
    "zadrozny_elkan": _binning_method(
        "zadrozny_elkan",
        _ZE,
        "the original Zadrozny-Elkan uniform-mass binning (gr21 "
        "Corollary 1: edges at order statistics, sorted blocks)",
        "zadrozny_elkan",
    ),
    "randomized_umd": _binning_method(
        "randomized_umd",
        _RUMD,
        "randomized UMD (gr21 Algorithm 2) in the delta -> 0 limit (every bin its own output)",
        "umd",
    ),
    "ums": _binning_method(
        "ums",
        {"name": "ums"},
        "uniform-mass binning with sample splitting (gr21 Sec. 3: "
        "edges from half the points, means from the other half)",
    ),
    "fixed_width": _binning_method(
        "fixed_width",
        {"name": "fixed_width"},
        "fixed-width binning: bins [0, 1/B), ..., "
        "[1 - 1/B, 1], value = mean label (an empty bin predicts its midpoint)",
    ),
}
