"""The gpr20 covariate-shift checks: Theorems 7 and 10, Propositions 2 and 3, steps G3, G4.

Gupta, C., Podkopaev, A. and Ramdas, A. (2020). Distribution-free binary classification:
prediction sets, confidence intervals and calibration. NeurIPS, Sec. 5 (covariate shift with
a known bounded likelihood ratio). Part of the gpr20 catalog module, which adds these checks
and studies to its own.
"""

from __future__ import annotations

import numpy as np

from calcheck.simulations.experiments.gpr20_shift import (
    PlugInRatioExperiment,
    Prop3Experiment,
    ShiftExperiment,
)
from calcheck.simulations.laws import LAWS
from calcheck.simulations.laws.shift import StepShiftLaw

from ..checks.check import StudyAdapter
from ..checks.events import BoundRule, Identity, Within
from ..series.exponents import ExponentCheck, ExponentSeries
from .common import make_check

__all__ = ["SHIFT_REFUSED", "SHIFT_STUDIES", "prop2_checks", "shift_checks"]

_POOLED = BoundRule(
    "hoeffding_pooled",
    function=lambda s, a: np.sqrt(np.log(6.0 * s["n_bins"] / a) / (2.0 * s["n"])),
    description="sqrt(ln(6B/alpha)/(2n)): as if every bin had n points and no shift",
)
_WITHOUT_MB = BoundRule(
    "without_m_b",
    function=lambda s, a: s["source_weighted_mean"],
    description="E[w Y | X_b] without the factor m_b",
)


def shift_checks(full, alphas) -> list:
    """Theorems 7 and 10, G3, G4, Proposition 3: covariate shift with a known bounded ratio."""
    n_shift = 10000 if not full else 40000
    return [
        *_thm7_checks(n_shift, alphas),
        *_thm10_checks(n_shift, alphas),
        *_step_checks(alphas),
        *_prop3_checks(alphas),
    ]


def _shift(law, estimator, n, n_bins=10, part="uniform_mass"):
    """``estimator`` on ``part`` bins of ``law``; uniform-mass edges from 2000 extra points."""
    return ShiftExperiment(law, n, n_bins, estimator, part, 2000 if part == "uniform_mass" else 0)


def _thm7_checks(n_shift, alphas) -> list:
    """Theorem 7 (c = 1) and its explicit constants, each against the pooled Hoeffding radius."""
    weighted = [_shift(LAWS["shift_sine"], "weighted", n_shift)]
    explicit = [
        *weighted,
        _shift(LAWS["shift_identity"], "weighted", 2 * n_shift, 2, "fixed_width"),
    ]
    per_bin = Within("error")
    return [
        make_check(
            alphas,
            "gpr20.thm7",
            "gpr20.thm7",
            weighted,
            per_bin,
            description="weighted binning on uniform-mass source bins within c (U/L)^2 "
            "sqrt(B ln(6B/alpha)/(2n)), c = 1",
        ),
        make_check(
            alphas,
            "gpr20.thm7.control.hoeffding_pooled",
            "gpr20.thm7",
            weighted,
            per_bin,
            expect="violated",
            bound=_POOLED,
            description="negative control: sqrt(ln(6B/alpha)/(2n)), as if every bin had n "
            "points and there were no shift",
        ),
        make_check(
            alphas,
            "gpr20.thm7.explicit",
            "gpr20.thm7.explicit",
            explicit,
            per_bin,
            "1-2alpha/3",
            description="derived explicit constants (2U^2 m_b^2 + U m_b) sqrt(ln(6B/alpha)/(2N_b))",
        ),
        make_check(
            alphas,
            "gpr20.thm7.explicit.control.hoeffding_pooled",
            "gpr20.thm7.explicit",
            weighted,
            per_bin,
            "1-2alpha/3",
            expect="violated",
            bound=_POOLED,
            description="negative control: the pooled Hoeffding radius",
        ),
    ]


def _thm10_checks(n_shift, alphas) -> list:
    """Theorem 10 (the oracle m_b estimator) and unweighted binning as its control."""
    sine, ident = LAWS["shift_sine"], LAWS["shift_identity"]
    return [
        make_check(
            alphas,
            "gpr20.thm10",
            "gpr20.thm10",
            [
                _shift(sine, "oracle", n_shift),
                _shift(ident, "oracle", 2 * n_shift, 2, "fixed_width"),
            ],
            Within("error"),
            description="oracle m_b estimator (40) within its empirical-Bernstein radius",
        ),
        make_check(
            alphas,
            "gpr20.thm10.control.unweighted",
            "gpr20.thm10",
            [_shift(ident, "unweighted", 2 * n_shift, 2, "fixed_width")],
            Within("error"),
            expect="violated",
            description="negative control: unweighted binning (17) is biased for the target mean",
        ),
    ]


def _prop3_checks(alphas) -> list:
    """Proposition 3, an identity on random partitions, and the factor m_b dropped."""
    prop3 = [Prop3Experiment(LAWS["shift_sine"]), Prop3Experiment(LAWS["shift_identity"])]
    return [
        make_check(
            alphas,
            "gpr20.prop3",
            "gpr20.prop3",
            prop3,
            Identity("target_mean"),
            "one",
            description="identity on random partitions, to 1e-10 (two quadrature routes)",
        ),
        make_check(
            alphas,
            "gpr20.prop3.control.without_m_b",
            "gpr20.prop3",
            prop3[:1],
            Identity("target_mean"),
            "one",
            expect="violated",
            bound=_WITHOUT_MB,
            description="negative control: E[w Y | X_b] without the factor m_b",
        ),
    ]


# Step likelihood ratios (w = L below t, U above): in the bin that straddles t the weights
# take two values. HALF: the bin [0.5, 0.6) is half below t (the Hoeffding-extremal law of
# G3's weights); EDGE: 5% of it lies above t, where the target puts its mass, so
# m_b = 4.74 and the summands m_b w Y of G4 reach m_b U = 11 > U = 2.3.
_STEP_HALF = StepShiftLaw(0.1, 0.55, 0.2, 0.7, name="step_ratio_half")
_STEP_EDGE = StepShiftLaw(0.1, 0.595, 0.0, 1.0, name="step_ratio_edge")


def _step(law, estimator):
    """``estimator`` on 10 fixed-width bins of 2000 points of a step-ratio law."""
    return ShiftExperiment(law, 2000, 10, estimator, "fixed_width")


def _step_checks(alphas) -> list:
    """G3 (eq. 44) and G4 (step 4) of Theorem 7's proof on their own, given the bins."""
    per_bin = Within("error")
    linear = [LAWS["shift_sine"], LAWS["shift_identity"]]
    oracle = [_shift(law, "oracle", 2000) for law in linear]
    return [
        make_check(
            alphas,
            "gpr20.g3",
            "gpr20.g3",
            [_shift(law, "weight_mean", 2000) for law in linear]
            + [_step(_STEP_HALF, "weight_mean")],
            per_bin,
            "1-alpha/3",
            description="every bin's mean weight within sqrt(U^2 ln(6B/alpha)/(2N_b)) of "
            "E[w | X_b] = 1/m_b (two linear ratios, uniform-mass bins; a step ratio)",
        ),
        make_check(
            alphas,
            "gpr20.g4",
            "gpr20.g4",
            oracle,
            per_bin,
            "1-alpha/3",
            description="as printed (scale U), where it holds: linear ratios, on which m_b w <= U",
        ),
        make_check(
            alphas,
            "gpr20.g4.control.counterexample",
            "gpr20.g4",
            [_step(_STEP_EDGE, "oracle")],
            per_bin,
            "1-alpha/3",
            expect="violated",
            role="counterexample",
            description="the printed scale U fails in a bin the target under-weights "
            "(m_b = 4.7): the summands m_b w Y reach m_b U = 11",
        ),
        make_check(
            alphas,
            "gpr20.g4.corrected",
            "gpr20.g4.corrected",
            [*oracle, _step(_STEP_EDGE, "oracle"), _step(_STEP_HALF, "oracle")],
            per_bin,
            "1-alpha/3",
            description="oracle m_b estimator (40) within m_b U sqrt(ln(6B/alpha)/(2N_b)), "
            "the range of its summands (the step laws included)",
        ),
    ]


def prop2_checks(full) -> list:
    """Proposition 2 by the fitted exponent of the plug-in's distance to the oracle in Delta.

    Weighted binning with ``w_hat = w + Delta s(x)`` against the same data weighted by w:
    E[max_b |pi_check^(w_hat)_b - pi_check^(w)_b|] falls like Delta (the proof's step (3)
    at fixed n), so the plug-in's error tends to the oracle's as Delta -> 0. Two error
    shapes: a misestimated slope (tilt) and a high-frequency error (wiggle).

    The statistic is linear in Delta by algebra: in every bin the gap is
    ``Delta |sum s (Y - pi_check^(w))| / sum (w + Delta s)``, so gap / Delta moves with
    Delta only through the denominator (a factor 1 + O(Delta / L)) and the fitted exponent
    cannot leave 1 +- 0.05 whatever the data. The check therefore has the role
    ``identity``: checked exactly as code (``tests/papers/test_gpr20_prop2.py`` replays the
    experiment's draws against the formula) and given no control (the former sqrt-rate
    control was violated by the same algebra).
    """
    n, deltas = (2000, (0.002, 0.008, 0.032, 0.128)) if full else (500, (0.004, 0.02, 0.1))
    series = tuple(
        ExponentSeries(
            f"Delta sweep, {shape} error, n = {n}, B = 10",
            "sup_error",
            tuple(PlugInRatioExperiment(LAWS["shift_sine"], n, 10, d, shape) for d in deltas),
        )
        for shape in ("tilt", "wiggle")
    )
    return [
        ExponentCheck(
            "gpr20.prop2",
            "gpr20.prop2",
            series,
            "gap",
            description="identity (holds by construction: the gap is Delta |sum s (Y - pi)| "
            "/ sum (w + Delta s) in every bin): E[max_b |pi_check^(w_hat) - pi_check^(w)|] "
            "~ c sup|w_hat - w|, the plug-in's error tends to the oracle's linearly in "
            "Delta (proof, step (3))",
            role="identity",
        ),
    ]


#: Shift guarantees whose law or design the check fixes, with the reason.
SHIFT_REFUSED = {
    "gpr20.prop2": "a rate claim over a sweep of sup|w_hat - w|",
    "gpr20.g3": "a proof step checked given the bin memberships, on linear and step ratios",
    "gpr20.g4": "as gpr20.g3",
    "gpr20.g4.corrected": "as gpr20.g3",
}


def _shift_adapter(gid, estimator, claim="1-alpha"):
    return StudyAdapter(
        gid,
        ("linear_shift",),
        ("n", "n_bins"),
        lambda law, n, n_bins: ShiftExperiment(
            law, n, n_bins, estimator, "uniform_mass", max(n // 5, n_bins)
        ),
        Within("error"),
        claim,
        description=f"{estimator} binning under shift ({gid})",
    )


#: Shift guarantees that can be checked on a user's linear-shift law.
SHIFT_STUDIES = {
    "gpr20.thm7": _shift_adapter("gpr20.thm7", "weighted"),
    "gpr20.thm7.explicit": _shift_adapter("gpr20.thm7.explicit", "weighted", "1-2alpha/3"),
    "gpr20.thm10": _shift_adapter("gpr20.thm10", "oracle"),
    "gpr20.prop3": StudyAdapter(
        "gpr20.prop3",
        ("linear_shift",),
        ("n_bins",),
        lambda law, n_bins: Prop3Experiment(law, n_bins),
        Identity("target_mean"),
        "one",
        description="Proposition 3 on random partitions",
    ),
}
