"""The klm19 checks (Kumar, Liang & Ma 2019) and their negative controls.

Kumar, A., Liang, P. and Ma, T. (2019). Verified uncertainty calibration. NeurIPS.
Example 3.2, Proposition 3.3, Lemma 4.3, Theorems 5.3 and 5.4 (and the Sec. 4.2 remark
on a VC argument).

Example 3.2 and Proposition 3.3 are population statements, computed exactly by quadrature
on laws and binning schemes the experiments draw; both hold by construction of the code
(Jensen on one measure; a law built to sit in one bin), so they are *identities* (role
``identity``, no control), checked exactly by hand-computed unit tests.

Every sample-size result of the paper holds for an unspecified constant c, so each is a
:class:`~calcheck.theory_checks.series.rates.RateCheck`: thresholds n* measured on geometric grids
of n, over series that vary one parameter over two decades or more, and the slope of log n* on
log h(theta) decided against 1. The estimator checks use exact binned models
(:func:`~calcheck.simulations.laws.binned.binned_model`): ``half`` (y_s = 1/2, the largest plug-in
bias), ``min_mass`` (half the bins at the hypothesis' floor 1/(2B)) and ``one_bin`` (all of
E^2 in one bin). The bin-balance checks are distribution-free over continuous scores.

Negative controls claim a wrong rate on the same stored data: the plug-in at the debiased
rate sqrt(B)/E^2 log(B/delta); the debiased estimator at a rate without B; Lemma 4.3 at
the rate B (no log), where n* is close to 5.2 B ln(B/delta); the VC remark at sqrt(B).
"""

from __future__ import annotations

import numpy as np

from calcheck.simulations.calibrators.scaling_binning import ScalingBinning
from calcheck.simulations.experiments.calibrator import CalibratorExperiment
from calcheck.simulations.experiments.klm19 import BinBalanceExperiment, EstimatorRateExperiment
from calcheck.simulations.experiments.klm19_population import Ex32Experiment, Prop33Experiment
from calcheck.simulations.laws.binned import binned_model

from ..checks.budgets import get_budget
from ..checks.check import Check
from ..checks.events import AtLeast, BoundRule, Ordered, other_guarantee
from ..checks.methods import BINARY_EVENTS, DATA_KEYWORDS, MethodSpec
from ..series.means import MeanZeroCheck
from ..series.rates import Balanced, FactorWithin, RateCheck, RateSeries
from .klm19_recalibration import REFUSED as _RECALIBRATION_REFUSED
from .klm19_recalibration import recalibration_checks
from .klm19_studies import STUDIES, _debiased_error, _plugin_error

__all__ = ["DELTA", "METHODS", "REFUSED", "STUDIES", "checks"]

#: Failure probability of every klm19 rate check: n* is where coverage reaches 0.9.
DELTA = 0.1

_BALANCE_REFUSAL = (
    "the lemma is distribution-free over continuous score laws: the masses of uniform-mass "
    "bins are sums of uniform spacings whatever the law (the check draws no scores), so a "
    "study on a continuous law of yours is the suite's check itself (calcheck run --checks "
    "'klm19.lem43*'); a law with atoms breaks the lemma's hypothesis (a continuous g(Z))"
)


def _scaling_binning(law, n, n_bins):
    return CalibratorExperiment(ScalingBinning(n_bins, split="thirds"), law, n, n_bins)


#: Calibrators a user's guarantee can name (``calcheck.define_guarantee(method=...)``).
METHODS = {
    "scaling_binning": MethodSpec(
        "scaling_binning",
        "scaling-binning (klm19 Sec. 4.1: Platt scaling on a third of the points, "
        "uniform-mass bins of its outputs on the second, bin means of the scaled values on "
        "the third; split drawn per replicate), events on its level sets",
        ("binary",),
        ("n", "n_bins"),
        _scaling_binning,
        ("n", "n_bins"),
        BINARY_EVENTS,
        data=tuple(DATA_KEYWORDS),  # its level sets' calibration data
    ),
}
REFUSED = {
    "klm19.lem43": _BALANCE_REFUSAL,
    "klm19.lem43.vc": _BALANCE_REFUSAL,
    "klm19.ex32": "an existence statement: for each binning scheme the check constructs the "
    "law that hides its miscalibration, so there is no law of yours to put in; on your law, "
    "study klm19.prop33 (binning never raises the CE)",
    **_RECALIBRATION_REFUSED,
}


def geometric_grid(lo: float, hi: float, per_octave: int = 3) -> tuple[int, ...]:
    """Integer sample sizes from ``lo`` to ``hi``, ``per_octave`` points per doubling."""
    k = int(np.ceil(np.log2(hi / lo) * per_octave)) + 1
    return tuple(int(n) for n in np.unique(np.round(np.geomspace(lo, hi, k))))


def _estimators(kind, n_bins, ce_sq):
    # Wide enough for both estimators: the debiased n* is above ~2/E^2 and the plug-in's
    # below ~1.6 B/E^2 + 20/E^2 in the catalog's ranges (measured, then doubled).
    grid = geometric_grid(max(2.0 / ce_sq, 8.0), 3.0 * n_bins / ce_sq + 40.0 / ce_sq)
    return EstimatorRateExperiment(binned_model(kind, n_bins, ce_sq), grid)


def _estimator_series(full: bool):
    b_values = (10, 30, 100, 300, 1000, 3000) if full else (10, 30, 100, 300, 1000)
    e_values = (1e-3, 3e-3, 1e-2, 3e-2, 1e-1)
    series = [
        RateSeries(
            "B sweep, y_s = 1/2, E^2 = 0.01",
            "n_bins",
            tuple(_estimators("half", b, 1e-2) for b in b_values),
        ),
        RateSeries(
            "E^2 sweep, y_s = 1/2, B = 100",
            "ce_sq",
            tuple(_estimators("half", 100, e) for e in e_values),
        ),
        RateSeries(
            "B sweep, half the masses at 1/(2B), E^2 = 0.01",
            "n_bins",
            tuple(_estimators("min_mass", b, 1e-2) for b in b_values),
        ),
        RateSeries(
            "E^2 sweep, all of E^2 in one bin, B = 20",
            "ce_sq",
            tuple(_estimators("one_bin", 20, e) for e in (1e-4, 1e-3, 1e-2)),
        ),
    ]
    return tuple(series)


def _balance_series(full: bool):
    b_values = (10, 30, 100, 300, 1000, 3000) + ((10000,) if full else ())
    # n*/(B ln(B/delta)) measured 3.1-4.1 for B = 10-1000 (large deviations: -> 5.2).
    return (
        RateSeries(
            "B sweep, continuous scores",
            "n_bins",
            tuple(
                BinBalanceExperiment(
                    b, geometric_grid(1.5 * b * np.log(b / DELTA), 8.0 * b * np.log(b / DELTA), 4)
                )
                for b in b_values
            ),
        ),
    )


# n*/(B ln(B/delta)) rises from 3.1 (B = 10) to 4.1 (B = 1000) on its way to the
# large-deviation limit 5.2: a slope of 1.05 on log h over this range that is a lower-order
# term, not a growing ratio. The slack allows it; the control at the rate B (slope 1.2)
# is still flagged.
_LEM43_SLACK = 0.1
_LEM43_SLACK_REASON = (
    "n*/(B ln(B/delta)) rises from 3.1 (B = 10) to 4.1 (B = 1000) toward its large-deviation "
    "limit 5.2: a slope of 1.05 over this finite range from a lower-order term"
)


def _rate_of(name, description, f):
    return BoundRule(name, function=lambda s, alpha: f(s), description=description)


def _population_checks() -> list:
    """Proposition 3.3 and Example 3.2, exact by quadrature: identities of the code.

    Both hold by construction: Proposition 3.3 is Jensen's inequality on one discrete
    measure (every scheme and the unbinned error are functionals of the same quadrature
    nodes), and Example 3.2's law is built to sit in one bin (CE(f_B) = 0 by construction,
    CE(f) >= 1 - c - w >= 0.491). No data could make either fail, so both have the role
    ``identity``: checked exactly as code (``tests/simulations/test_klm19.py`` computes
    :func:`~calcheck.simulations.experiments.klm19_population.binned_ce` and the
    construction by hand) and given no control. (Dropping the nesting, a finer scheme that
    does not refine B, can lower the binned CE: the outcome's ``finer_l2``, shown by the
    unit test and by the study form's hypothesis check on a user's law.)
    """
    prop = (Prop33Experiment(30),)
    ex = (Ex32Experiment(),)
    jensen = tuple((f"binned_l{p}", f"ce_l{p}") for p in (1, 2, 3))
    return [
        Check(
            "klm19.prop33",
            "klm19.prop33",
            prop,
            Ordered(pairs=(*jensen, ("binned_l2", "nested_l2"), ("nested_l2", "ce_l2"))),
            claim="one",
            description="identity (holds by construction: Jensen on one discrete measure): "
            "CE_p(f_B) <= CE_p(f), p = 1, 2, 3, and a nested refinement in between, on "
            "random laws and schemes (quadrature)",
            role="identity",
        ),
        Check(
            "klm19.ex32",
            "klm19.ex32",
            ex,
            AtLeast("gap"),
            claim="one",
            description="identity (holds by construction: the law sits in one bin): "
            "min_p CE_p(f) - max_p CE_p(f_B) >= 0.49 for the law built for each random "
            "scheme (quadrature)",
            role="identity",
        ),
    ]


def _unbiasedness_checks(est) -> list:
    """Definition 5.2's conditional unbiasedness on every estimator experiment."""
    experiments = tuple(dict.fromkeys(e for s in est for e in s.experiments))
    return [
        MeanZeroCheck(
            "klm19.def52",
            "klm19.def52",
            experiments,
            _debiased_error,
            description="E[debiased - sum_{n_s >= 2} (n_s/n)(s - y_s)^2] = 0 at the drawn "
            "counts, every binned model and n of the Theorem 5.3/5.4 grids",
        ),
        MeanZeroCheck(
            "klm19.def52.control.plugin",
            "klm19.def52",
            experiments,
            _plugin_error,
            "violated",
            description="the plug-in claimed conditionally unbiased (its bias is "
            "sum_s y_s (1 - y_s) / n)",
        ),
    ]


def checks(budget="quick") -> list:
    """The klm19 rate checks and their negative controls."""
    full = get_budget(budget).full
    est = _estimator_series(full)
    return [
        *_population_checks(),
        *recalibration_checks(full, est),
        *_unbiasedness_checks(est),
        *_estimator_rate_checks(est),
        *_balance_rate_checks(_balance_series(full)),
    ]


def _estimator_rate_checks(est) -> list:
    """Theorems 5.3 (plug-in) and 5.4 (debiased), each claimed at a wrong rate as control."""
    plugin = FactorWithin("plugin")
    debiased = FactorWithin("debiased")
    return [
        RateCheck(
            "klm19.thm53",
            "klm19.thm53",
            est,
            plugin,
            DELTA,
            description="plug-in within [E^2/2, 3E^2/2] once n >= c (B/E^2) log(B/delta)",
        ),
        RateCheck(
            "klm19.thm53.control.debiased_rate",
            "klm19.thm53",
            est,
            plugin,
            DELTA,
            "violated",
            other_guarantee("debiased_rate", "klm19.thm54"),
            description="the plug-in claimed at the debiased rate sqrt(B)/E^2 log(B/delta)",
        ),
        RateCheck(
            "klm19.thm54",
            "klm19.thm54",
            est,
            debiased,
            DELTA,
            description="debiased (bins with n_s < 2 dropped, as the authors' code) within "
            "[E^2/2, 3E^2/2] once n >= c (sqrt(B)/E^2) log(B/delta)",
        ),
        RateCheck(
            "klm19.thm54.control.no_B",
            "klm19.thm54",
            est,
            debiased,
            DELTA,
            "violated",
            _rate_of(
                "no_B",
                "the debiased estimator claimed at log(B/delta)/E^2 (no power of B)",
                lambda s: np.log(s["n_bins"] / DELTA) / s["ce_sq"],
            ),
            description="the debiased estimator claimed at log(B/delta)/E^2",
        ),
    ]


def _balance_rate_checks(bal) -> list:
    """Lemma 4.3 (uniform-mass bins well balanced) and the VC remark, with wrong-rate controls."""
    return [
        RateCheck(
            "klm19.lem43",
            "klm19.lem43",
            bal,
            Balanced(2.0),
            DELTA,
            slack=_LEM43_SLACK,
            slack_reason=_LEM43_SLACK_REASON,
            description="uniform-mass bins 2-well-balanced once n >= c B log(B/delta)",
        ),
        RateCheck(
            "klm19.lem43.control.no_log",
            "klm19.lem43",
            bal,
            Balanced(2.0),
            DELTA,
            "violated",
            _rate_of("no_log", "Lemma 4.3 claimed at the rate B", lambda s: s["n_bins"]),
            slack=_LEM43_SLACK,
            slack_reason=_LEM43_SLACK_REASON,
            description="Lemma 4.3 claimed at n >= c B (no log): n* ~ 5.2 B ln(B/delta)",
        ),
        RateCheck(
            "klm19.lem43.vc",
            "klm19.lem43.vc",
            bal,
            Balanced(2.0),
            DELTA,
            description="the VC remark's n >= c B^2 log(B/delta) suffices (loose)",
        ),
        RateCheck(
            "klm19.lem43.vc.control.sqrt_B",
            "klm19.lem43.vc",
            bal,
            Balanced(2.0),
            DELTA,
            "violated",
            _rate_of(
                "sqrt_B",
                "balance claimed at sqrt(B) log(B/delta)",
                lambda s: np.sqrt(s["n_bins"]) * np.log(s["n_bins"] / DELTA),
            ),
            description="balance claimed at n >= c sqrt(B) log(B/delta)",
        ),
    ]
