"""The nch14 checks (Naeini, Cooper & Hauskrecht 2014) and their negative controls.

Naeini, M. P., Cooper, G. F. and Hauskrecht, M. (2014). Binary classifier calibration:
non-parametric approach. Theorem 3.1, eqs. (1)/(9), Corollary 3.2, Theorem 3.3.

The paper's histogram binning (Hist: sort, cut into B equal-frequency bins, output each
bin's positive rate) is calcheck's Zadrozny-Elkan binning (all n points, bins at the order
statistics of ranks ceil(b (n + 1) / B), lexicographic tie-breaking for atoms), so these
checks share gr21 Corollary 1's simulations. The population MCE and ECE are exact per
fitted map (per distinct output, which eq. (2) bounds by the input bins'). Laws: uniform
scores with c = 1/2 (the largest label variance), a Platt curve, c(y) = y, Beta(0.1, 5) scores, two
atoms and a continuous-plus-atoms mixture; n/B from 2 to 300. Equal-width bins on the skewed
law break hypothesis H2 (equal frequency): that check reports what happens.

Negative controls: every bound evaluated as if each bin held all n points (n B in place
of n), on c = 1/2; Theorem 3.3 with C = 1/4 (below the asymptotic 0.399 at c = 1/2);
Corollary 3.2 at the rate sqrt(B/n) without the log and at 1/n.

Study forms (``STUDIES``, grid ``n``, ``n_bins``): Theorem 3.1 (both forms), eqs. (3), (9)
and Theorem 3.3 (three constants) on any binary law, with Hist and the events of these
checks; Theorem 3.4, eq. (22) and Loss_2 in the limit (grid ``n_bins``), eqs. (2) and (10):
see :mod:`.nch14_auc`. Refused: Corollary 3.2 (a rate over n and B sweeps) and Loss_1.
"""

from __future__ import annotations

import numpy as np

from calcheck.simulations.experiments.binning import BinningExperiment
from calcheck.simulations.laws import LAWS

from ..checks.budgets import get_budget
from ..checks.check import Check, StudyAdapter, with_sharper_controls
from ..checks.events import BoundRule, Marginal, MeanAtMost, Within
from ..series.exponents import ExponentCheck, ExponentSeries
from .common import binning_experiments, n_times_bins
from .nch14_auc import REFUSED as _AUC_REFUSED
from .nch14_auc import STUDIES as _AUC_STUDIES
from .nch14_auc import auc_checks, part_checks

__all__ = ["REFUSED", "STUDIES", "checks"]

_LAWS = (
    "uniform_half",
    "uniform_logistic",
    "uniform_identity",
    "skewed_beta",
    "two_atoms",
    "mixture_atoms",
)
_EXTRA_LAWS = ("uniform_step", "uniform_sine", "rare_event", "atoms_30")
_GRIDS = {
    "quick": ((20, 10), (40, 10), (200, 10), (1000, 10), (3000, 10)),
    "full": (
        (20, 10),
        (40, 10),
        (200, 10),
        (1000, 5),
        (1000, 10),
        (3000, 10),
        (3000, 20),
        (10000, 10),
    ),
}
_HIST = {"name": "zadrozny_elkan", "tie_breaking": "lexicographic"}
_EQUAL_WIDTH = {"name": "fixed_width"}

# guarantee -> (event, claim, description): the suite's checks and the study forms share them
_HP_SPECS = {
    "nch14.thm31": (
        Within("max_error"),
        "1-alpha",
        "population MCE (one bin per output) within "
        "sqrt(2B log(2B/alpha)/n), Theorem 3.1 as printed",
    ),
    "nch14.thm31.hoeffding": (
        Within("max_error"),
        "1-alpha",
        "population MCE within sqrt(B log(2B/alpha)/(2n)), eq. (1)'s exponent",
    ),
    "nch14.eq3": (
        Marginal(),
        "1-alpha",
        "a fresh test point's output bin within sqrt(2B log(2/alpha)/n) (one output bin, "
        "k = 1, eqs. 3/6: eq. (1)'s exponent weakened 4 times)",
    ),
    "nch14.eq9": (
        Marginal(),
        "1-alpha",
        "a fresh test point's bin rate within sqrt(B log(2/alpha)/(2n)) (one bin, eqs. 1/9)",
    ),
}
_ECE_SPECS = {
    gid: (MeanAtMost("l1_ece"), "1-bound", f"E[population ECE] <= {c} sqrt(B/n)")
    for gid, c in (
        ("nch14.thm33", "sqrt(2 pi)"),
        ("nch14.thm33.hoeffding", "sqrt(pi/2)"),
        ("nch14.thm33.variance", "1/2"),
    )
}

_WRONG_N = n_times_bins(
    "n_times_B", "bound evaluated as if every bin held all n points (n B in place of n)"
)


def _c_times_rate(name, c, description):
    return BoundRule(
        name, function=lambda s, alpha: c * np.sqrt(s["n_bins"] / s["n"]), description=description
    )


def _rate(name, description, f):
    return BoundRule(name, function=lambda s, alpha: f(s), description=description)


def _hp_checks(bud, laws, grid) -> list:
    """Theorem 3.1 (both forms) and eq. (9), with controls on c = 1/2."""
    half = (LAWS["uniform_half"],)
    out = []
    for gid, (event, _, text) in _HP_SPECS.items():
        out.append(
            Check(
                gid,
                gid,
                binning_experiments(_HIST, laws, grid),
                event,
                bud.alphas,
                description=text,
            )
        )
        out.append(
            Check(
                f"{gid}.control.n_times_B",
                gid,
                binning_experiments(_HIST, half, grid),
                event,
                bud.alphas,
                expect="violated",
                bound=_WRONG_N,
                description="negative control: every bin as if it held n points, c = 1/2",
            )
        )
    out.append(
        Check(
            "nch14.thm31.hoeffding.equal_width",
            "nch14.thm31.hoeffding",
            binning_experiments(_EQUAL_WIDTH, (LAWS["skewed_beta"],), ((1000, 10), (3000, 10))),
            Within("max_error"),
            bud.alphas,
            expect="violated",
            description="equal-width bins on Beta(0.1, 5) scores (H2 fails: the upper bins "
            "hold a handful of points)",
            role="hypothesis",
        )
    )
    return out


def _ece_checks(bud, laws, grid) -> list:
    """Theorem 3.3 with the three reconstructed constants (expectation events)."""
    out = []
    for gid, (event, claim, text) in _ECE_SPECS.items():
        out.append(
            Check(
                gid,
                gid,
                binning_experiments(_HIST, laws, grid),
                event,
                claim=claim,
                description=text,
            )
        )
    # the same wrong constant against each variant (shared data): C = 1/4 must be flagged
    for gid in ("nch14.thm33", "nch14.thm33.hoeffding", "nch14.thm33.variance"):
        out.append(
            Check(
                f"{gid}.control.quarter",
                gid,
                binning_experiments(_HIST, (LAWS["uniform_half"],), grid),
                MeanAtMost("l1_ece"),
                claim="1-bound",
                expect="violated",
                bound=_c_times_rate("C_quarter", 0.25, "C = 1/4 < sqrt(2/pi)/2 = 0.399"),
                description="negative control: C = 1/4, below the c = 1/2 asymptote 0.399",
            )
        )
    return out


def _rate_checks(full) -> list:
    """Corollary 3.2 by fitted exponents of E[MCE] (c = 1/2, the largest label variance)."""
    half = (LAWS["uniform_half"],)
    n_values = (200, 1000, 3000, 10000) + ((30000,) if full else ())
    n_series = ExponentSeries(
        "n sweep, B = 10, c = 1/2",
        "n",
        binning_experiments(_HIST, half, [(n, 10) for n in n_values]),
    )
    b_series = ExponentSeries(
        "B sweep, n = 4000, c = 1/2",
        "n_bins",
        binning_experiments(_HIST, half, [(4000, b) for b in (5, 10, 20, 40)]),
    )
    schedule = ExponentSeries(
        "B = n^(1/3): n = 1000, 8000, 27000",
        "n",
        binning_experiments(_HIST, half, [(1000, 10), (8000, 20), (27000, 30)]),
    )
    series = (n_series, b_series, schedule)
    return [
        ExponentCheck(
            "nch14.cor32",
            "nch14.cor32",
            series,
            "max_error",
            description="E[population MCE] ~ c sqrt(B log B / n) in n, in B, and under B = n^(1/3)",
        ),
        ExponentCheck(
            "nch14.cor32.control.no_log",
            "nch14.cor32",
            (b_series,),
            "max_error",
            "violated",
            _rate(
                "sqrt_B_over_n", "c sqrt(B/n) (no log B)", lambda s: np.sqrt(s["n_bins"] / s["n"])
            ),
            tolerance=0.1,
            description="Corollary 3.2 without the log B: the B exponent is 0.7, not 0.5",
        ),
        ExponentCheck(
            "nch14.cor32.control.one_over_n",
            "nch14.cor32",
            (n_series,),
            "max_error",
            "violated",
            _rate("one_over_n", "c B / n", lambda s: s["n_bins"] / s["n"]),
            description="the MCE claimed to fall as 1/n",
        ),
    ]


def checks(budget="quick") -> list:
    """The nch14 checks and their negative controls."""
    bud = get_budget(budget)
    laws = tuple(LAWS[k] for k in _LAWS + (_EXTRA_LAWS if bud.full else ()))
    grid = _GRIDS[bud.name]
    out = [
        *_hp_checks(bud, laws, grid),
        *_ece_checks(bud, laws, grid),
        *_rate_checks(bud.full),
        *auc_checks(bud.full, bud.alphas),
        *part_checks(bud.alphas),
    ]
    # sharper controls: eq. (9)'s detectable factor is 0.82 at the quick budget; Theorem
    # 3.4 and Loss_2 <= 1/(2B) are attained in the limit (the staircase law), so 1% less fails
    return with_sharper_controls(out, {"nch14.eq9": 0.6, "nch14.thm34": 0.99, "nch14.loss2": 0.99})


def _adapter(gid):
    event, claim, text = (_HP_SPECS | _ECE_SPECS)[gid]
    return StudyAdapter(
        gid,
        ("binary",),
        ("n", "n_bins"),
        lambda law, n, n_bins: BinningExperiment(_HIST, law, n, n_bins),
        event,
        claim,
        description=f"Hist (Zadrozny-Elkan equal-frequency bins, lexicographic ties): {text}",
    )


#: Guarantees that can be checked on a user's binary law (grid: n, n_bins; Hist binning).
STUDIES = {gid: _adapter(gid) for gid in _HP_SPECS | _ECE_SPECS} | _AUC_STUDIES
#: Guarantees whose law is fixed by the theorem itself (or a rate claim), with the reason.
REFUSED = {"nch14.cor32": "a rate claim over n and B sweeps", **_AUC_REFUSED}
