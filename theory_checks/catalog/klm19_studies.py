"""klm19 study forms on your laws: Theorems 4.1, 5.3, 5.4, Proposition 3.3, Definition 5.2.

Kumar, A., Liang, P. and Ma, T. (2019). Verified uncertainty calibration. NeurIPS.
Proposition 3.3, Theorem 4.1, Theorems 5.3 and 5.4, Definition 5.2.

A binned model is a law of ``family = "binned_model"`` (``values``, ``masses``,
``label_means``; :class:`~calcheck.simulations.laws.binned.BinnedModelLaw`): its E^2 is exact and
samples are drawn as multinomial counts, whatever n.

``klm19.thm53``, ``klm19.thm54`` (grid ``ce_sq_divisor``). A rate claim, "n >= c h(theta)
suffices" with c unspecified, says nothing at one parameter point: it is checked as the
suite's :class:`~calcheck.theory_checks.series.rates.RateCheck` on a *series* of binned models, the
slope of log n* on log h decided against 1 (n* is where the coverage of
``|estimate - E^2| <= E^2 / 2`` reaches 1 - delta = 0.9). Each law given at each divisor d
of the grid is one parameter point: the law with its miscalibration scaled,
``s -> y_s + (s - y_s) / sqrt(d)`` (masses and label means kept, so E^2 -> E^2 / d).

- With three or more divisors (e.g. ``[1, 10, 100]``), each law is its own series: an E^2
  sweep of your model at fixed B. Control (on the same data): the rate with E in place of
  E^2 (``B / E log(B/delta)``, ``sqrt(B) / E log(B/delta)``): slope 2 where n* ~ 1/E^2.
- With fewer divisors, the laws (three or more; e.g. your model at B = 10, 30, 100, 300)
  form one series, ``varying`` B when every point has the same E^2 and E^2 otherwise.
  Control where B varies: the suite's, Theorem 5.3 at the debiased rate sqrt(B)/E^2 and
  Theorem 5.4 without B; where only E^2 varies, E in place of E^2.

A series' h must span a factor 3 at least (the suite's series span two decades; a short
range widens the slope's interval, and a control may then go unflagged). Each point's grid
of n is geometric, three points per octave, from n = 2 (the smallest n the estimators
take, so a threshold below the grid is exact, not censored) to 4 (3B + 40)/E^2 (the
suite's upper end doubled twice). A study's ``alphas`` do not apply: delta = 0.1, as in
the suite. Hypotheses, each refusal naming it: every mass >= 1/(2B) (the theorems'
2-well-balanced lower half) and E^2 > 0. A control without power on your series (e.g. E in
place of E^2 where n* does not grow with 1/E^2, as for label means at 0 or 1) is reported
"NOT as expected": the control, not the claim, says so.

``klm19.def52`` (grid ``n``): conditional unbiasedness of the debiased estimator on your
model at every n of the grid, the suite's mean-zero z-test; control (same data): the
plug-in claimed conditionally unbiased (bias sum_s y_s (1 - y_s) / n at the drawn counts).

``klm19.prop33`` (grid ``n_bins``, B >= 2; any binary law, atoms allowed): every replicate
draws a scheme of B bins (edges at the law's Beta-part quantiles of uniform levels), its
nested refinement and a non-nested scheme of 2B bins, and must satisfy
CE_p(f_B) <= CE_p(f) (p = 1, 2, 3) and CE_2(f_B) <= CE_2(f_nested) <= CE_2(f), exactly
(one quadrature measure for every scheme). An identity (Jensen on one measure: role
``identity``, holds by construction on any law). Hypothesis check (same data): nesting
dropped, the non-nested 2B-bin scheme claimed never to lower the binned CE_2; it is
flagged on a law whose CE is not spread evenly (a calibrated law, CE = 0 everywhere,
leaves it nothing to find).

``klm19.thm41`` (grid ``n_bins`` and ``inv_eps_sq``, eps^2 = 1 / inv_eps_sq; a law of
``family = "recalibration"``): the suite's Theorem 4.1 rate check of scaling-binning
(thirds, squared-loss Platt) on your score law: an eps^2 sweep at each B when the grid has
three or more eps^2, a B sweep at each eps^2 when it has three or more B. The event is
CE^2 <= 2 min_G CE^2 + eps^2 (exact CE^2 by quadrature, min over Platt's family computed
for your law); each point's n grid spans [1/4, 4] times 2.4 / (eps^2 + 2 min_G CE^2) (the
0.9-quantile of n CE^2 measured on platt(2, 1)), two points per octave, from the smallest n
the thirds split takes; a threshold outside it is reported ("no verdict possible"). Control
on eps^2 sweeps (same data): eps in place of eps^2. Costly: every replicate fits five
calibrators at every n (the suite's check takes about 250 s at the quick budget).

A study's controls are built in: the ``controls`` key of a study file (bound factors) does
not apply to these checks and is refused.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from calcheck.simulations.experiments.klm19 import EstimatorRateExperiment
from calcheck.simulations.experiments.klm19_population import Prop33LawExperiment
from calcheck.simulations.experiments.klm19_recalibration import RecalibrationExperiment
from calcheck.simulations.laws.binned import BinnedModelLaw
from calcheck.simulations.metrics.recalibration import min_platt_ce_sq

from ..checks.check import StudyAdapter
from ..checks.events import BoundRule, Ordered, other_guarantee
from ..series.means import MeanZeroCheck
from ..series.rates import FactorWithin, RateCheck, RateSeries, SquaredCEWithin
from .klm19_recalibration import _Q90, EPS_NOT_SQUARED, _grid

__all__ = [
    "STUDIES",
    "EstimatorStudyExperiment",
    "MeanStudyAdapter",
    "RateStudyAdapter",
    "Thm41StudyAdapter",
    "scaled_model",
]

#: As :data:`klm19.DELTA`: n* is where the coverage reaches 0.9.
DELTA = 0.1
_RANGE = 3.0  # a series' h must span this factor (the suite's span two decades)


def scaled_model(law: BinnedModelLaw, divisor: int) -> BinnedModelLaw:
    """``law`` with its miscalibration divided by sqrt(divisor): E^2 / divisor, same B."""
    if divisor == 1:
        return law
    s, y = np.asarray(law.values), np.asarray(law.label_means)
    values = tuple(float(v) for v in y + (s - y) / math.sqrt(divisor))
    if len(set(values)) != len(values):
        raise ValueError(
            f"ce_sq_divisor {divisor}: two outputs of law {law.name!r} coincide once "
            "scaled (outputs must stay distinct); use other divisors"
        )
    return BinnedModelLaw(values, law.masses, law.label_means, f"{law.name}/E2_div{divisor}")


def _hypotheses(gid: str, law) -> None:
    where = f"{gid} on law {getattr(law, 'name', law)!r}"
    if getattr(law, "family", None) != "binned_model":
        raise ValueError(
            f"{gid} is checked on laws of family binned_model, got "
            f"{getattr(law, 'family', type(law).__name__)!r} ({getattr(law, 'name', law)!r})"
        )
    if law.min_mass_ratio < 0.5 - 1e-12:
        raise ValueError(
            f"{where}: the hypothesis P(f(X) = s) >= 1/(2B) for every output s fails "
            f"(smallest mass {min(law.masses):.6g} < 1/(2B) = {0.5 / law.n_bins:.6g})"
        )
    if law.ce_sq <= 0:
        raise ValueError(f"{where}: the hypothesis E^2 > 0 fails (the model is calibrated)")


def _n_grid(law: BinnedModelLaw) -> tuple[int, ...]:
    hi = 4.0 * (3.0 * law.n_bins + 40.0) / law.ce_sq
    k = int(np.ceil(np.log2(hi / 2.0) * 3)) + 1
    return tuple(int(n) for n in np.unique(np.round(np.geomspace(2.0, hi, k))))


@dataclass(frozen=True)
class EstimatorStudyExperiment(EstimatorRateExperiment):
    """:class:`EstimatorRateExperiment` whose grid starts at n_min = 2 (not censored)."""

    def symbols(self, outcome) -> dict:
        """The parent's symbols and ``n_min = 2``."""
        return super().symbols(outcome) | {"n_min": 2}


def _rate(name, description, f):
    return BoundRule(name, function=lambda s, alpha: f(s), description=description)


@dataclass(frozen=True)
class RateStudyAdapter:
    """A klm19 rate claim on series of a user's binned models (see the module docstring)."""

    guarantee: str
    statistic: str
    b_control: BoundRule
    e_control: BoundRule
    description: str = ""
    families = ("binned_model",)
    grid_keys = ("ce_sq_divisor",)

    def check(self, laws, grid: dict, alphas, *, check_id: str | None = None) -> RateCheck:
        """The rate check over the series the laws and divisors make."""
        if set(grid) != set(self.grid_keys):
            raise ValueError(
                f"{self.guarantee} takes grid parameters {list(self.grid_keys)}; got {sorted(grid)}"
            )
        for law in laws:
            _hypotheses(self.guarantee, law)
        divisors = sorted(set(grid["ce_sq_divisor"]))
        points = [[scaled_model(law, d) for d in divisors] for law in laws]
        if len(divisors) >= 3:
            groups = [
                (f"E^2 sweep of {law.name} (B = {law.n_bins})", p)
                for law, p in zip(laws, points, strict=True)
            ]
        else:
            groups = [("your binned models", [m for p in points for m in p])]
        series = tuple(self._series(name, models) for name, models in groups)
        check = RateCheck(
            check_id or f"study:{self.guarantee}",
            self.guarantee,
            series,
            FactorWithin(self.statistic),
            DELTA,
            description=self.description,
        )
        for s in series:
            h = [check.rate(e.symbols(None)) for e in s.experiments]
            if max(h) < _RANGE * min(h):
                raise ValueError(
                    f"{self.guarantee}: the rate h of series {s.name!r} spans a factor "
                    f"{max(h) / min(h):.3g} < {_RANGE:g}; a rate is a slope: vary E^2 "
                    "(ce_sq_divisor = [1, 10, 100]) or B more widely"
                )
        return check

    def _series(self, name, models) -> RateSeries:
        if len(models) < 3:
            raise ValueError(
                f"{self.guarantee}: a rate needs a series of at least 3 binned models, got "
                f"{len(models)}: give ce_sq_divisor = [1, 10, 100] (an E^2 sweep of each law) "
                "or three or more laws"
            )
        if len({m.name for m in models}) != len(models):
            raise ValueError(f"{self.guarantee}: the laws of a series need distinct names")
        same_e = len({round(m.ce_sq, 15) for m in models}) == 1
        varying = "n_bins" if same_e else "ce_sq"
        return RateSeries(
            name, varying, tuple(EstimatorStudyExperiment(m, _n_grid(m)) for m in models)
        )

    def controls(self, check: RateCheck) -> list:
        """The wrong-rate controls with power on the check's series (same data)."""
        out = []
        for kind, rule in (("ce_sq", self.e_control), ("n_bins", self.b_control)):
            series = tuple(s for s in check.series if s.varying == kind)
            if series:
                out.append(
                    dataclasses.replace(
                        check,
                        id=f"{check.id}.control.{rule.name}",
                        series=series,
                        expect="violated",
                        bound=rule,
                        description=f"negative control: {rule.description}",
                    )
                )
        return out


def _debiased_error(experiment, outcome):
    """Debiased estimate minus its conditional target (Definition 5.2 says: mean 0).

    The statistic of ``klm19.def52``, the suite's check (:mod:`.klm19`) and its study.
    """
    return np.asarray(outcome.debiased) - np.asarray(outcome.target)


def _plugin_error(experiment, outcome):
    """Plug-in estimate minus the same target over every non-empty bin (mean: its bias)."""
    return np.asarray(outcome.plugin) - np.asarray(outcome.target_all)


@dataclass(frozen=True)
class MeanStudyAdapter:
    """Definition 5.2 on a user's binned models at every n of the grid."""

    guarantee: str = "klm19.def52"
    description: str = (
        "E[debiased - sum_{n_s >= 2} (n_s/n)(s - y_s)^2] = 0 at the drawn counts, every n"
    )
    families = ("binned_model",)
    grid_keys = ("n",)

    def check(self, laws, grid: dict, alphas, *, check_id: str | None = None):
        """A :class:`MeanZeroCheck` on one estimator experiment per law (the grid's n)."""
        if set(grid) != {"n"}:
            raise ValueError(f"{self.guarantee} takes grid parameters ['n']; got {sorted(grid)}")
        for law in laws:
            if getattr(law, "family", None) != "binned_model":
                raise ValueError(f"{self.guarantee} is checked on laws of family binned_model")
        n_grid = tuple(sorted(set(grid["n"])))
        experiments = tuple(EstimatorRateExperiment(law, n_grid) for law in laws)
        return MeanZeroCheck(
            check_id or f"study:{self.guarantee}",
            self.guarantee,
            experiments,
            _debiased_error,
            description=self.description,
        )

    def controls(self, check) -> list:
        """The plug-in claimed conditionally unbiased, on the same data."""
        return [
            dataclasses.replace(
                check,
                id=f"{check.id}.control.plugin",
                statistic=_plugin_error,
                expect="violated",
                description="the plug-in claimed conditionally unbiased",
            )
        ]


def _e_not_squared(root_b: bool):
    def f(s):
        b = s["n_bins"]
        return (math.sqrt(b) if root_b else b) / math.sqrt(s["ce_sq"]) * math.log(b / DELTA)

    name = "sqrt(B)" if root_b else "B"
    return _rate("e_not_squared", f"{name} / E log(B/delta): E in place of E^2", f)


@dataclass(frozen=True)
class Thm41StudyAdapter:
    """Theorem 4.1 on a user's recalibration laws (see the module docstring)."""

    guarantee: str = "klm19.thm41"
    description: str = (
        "scaling-binning (thirds, squared-loss Platt): CE^2 <= 2 min_G CE^2 + eps^2 once "
        "n >= c (B log B + log B / eps^2), your laws; exact CE^2 by quadrature"
    )
    families = ("recalibration",)
    grid_keys = ("n_bins", "inv_eps_sq")

    def check(self, laws, grid: dict, alphas, *, check_id: str | None = None) -> RateCheck:
        """The rate check over the eps^2 and B sweeps of each law."""
        if set(grid) != set(self.grid_keys):
            raise ValueError(f"{self.guarantee} takes grid parameters {list(self.grid_keys)}")
        if min(grid["inv_eps_sq"]) < 2:
            raise ValueError(f"inv_eps_sq must be >= 2 (eps^2 < 1), got {grid['inv_eps_sq']}")
        eps = sorted({1.0 / v for v in grid["inv_eps_sq"]}, reverse=True)
        b_values = sorted(set(grid["n_bins"]))
        if len(eps) < 3 and len(b_values) < 3:
            raise ValueError(
                f"{self.guarantee}: a rate needs three or more inv_eps_sq (an eps^2 sweep) "
                f"or n_bins (a B sweep), got {len(eps)} and {len(b_values)}"
            )
        series = []
        for law in laws:
            if getattr(law, "family", None) != "recalibration":
                raise ValueError(f"{self.guarantee} is checked on laws of family recalibration")
            floor = min_platt_ce_sq(law)[0]

            def at(b, e, law=law, floor=floor):
                center = _Q90 / (e + 2.0 * floor)
                return RecalibrationExperiment(law, b, _grid(center / 4, 4 * center, b), e)

            if len(eps) >= 3:
                for b in b_values:
                    points = tuple(at(b, e) for e in eps)
                    series.append(RateSeries(f"eps^2 sweep, {law.name}, B = {b}", "eps_sq", points))
            if len(b_values) >= 3:
                for e in eps:
                    points = tuple(at(b, e) for b in b_values)
                    series.append(
                        RateSeries(f"B sweep, {law.name}, eps^2 = {e:g}", "n_bins", points)
                    )
        return RateCheck(
            check_id or f"study:{self.guarantee}",
            self.guarantee,
            tuple(series),
            SquaredCEWithin("sb"),
            DELTA,
            description=self.description,
        )

    def controls(self, check: RateCheck) -> list:
        """Eps in place of eps^2 on the eps^2 sweeps (same data)."""
        series = tuple(s for s in check.series if s.varying == "eps_sq")
        if not series:
            return []
        return [
            dataclasses.replace(
                check,
                id=f"{check.id}.control.eps_not_squared",
                series=series,
                expect="violated",
                bound=EPS_NOT_SQUARED,
                description="Theorem 4.1 claimed at log B / eps (eps not squared)",
            )
        ]


_JENSEN = tuple((f"binned_l{p}", f"ce_l{p}") for p in (1, 2, 3))


@dataclass(frozen=True)
class _Prop33Adapter(StudyAdapter):
    """Proposition 3.3 on a user's binary law, with its non-nested control built in."""

    def controls(self, check) -> list:
        """A finer non-nested scheme claimed never to lower the binned CE_2 (same data)."""
        return [
            dataclasses.replace(
                check,
                id=f"{check.id}.control.non_nested",
                event=Ordered(pairs=(("binned_l2", "finer_l2"),)),
                expect="violated",
                description="the nesting hypothesis dropped: a finer but non-nested scheme "
                "(2B random bins) claimed to give a larger binned CE",
                role="hypothesis",
            )
        ]


#: Guarantees checked on a user's laws (see the module docstring).
STUDIES = {
    "klm19.prop33": _Prop33Adapter(
        "klm19.prop33",
        ("binary",),
        ("n_bins",),
        Prop33LawExperiment,
        Ordered(pairs=(*_JENSEN, ("binned_l2", "nested_l2"), ("nested_l2", "ce_l2"))),
        "one",
        description="random schemes of B bins on your law: CE_p(f_B) <= CE_p(f), p = 1, 2, "
        "3, and a nested refinement in between (exact quadrature; an identity: Jensen on "
        "one measure, holds by construction)",
        role="identity",
    ),
    "klm19.thm53": RateStudyAdapter(
        "klm19.thm53",
        "plugin",
        other_guarantee("debiased_rate", "klm19.thm54", "the debiased rate sqrt(B)/E^2"),
        _e_not_squared(False),
        "plug-in within [E^2/2, 3E^2/2] once n >= c (B/E^2) log(B/delta), your models",
    ),
    "klm19.thm54": RateStudyAdapter(
        "klm19.thm54",
        "debiased",
        _rate(
            "no_B",
            "log(B/delta)/E^2 (no power of B)",
            lambda s: np.log(s["n_bins"] / DELTA) / s["ce_sq"],
        ),
        _e_not_squared(True),
        "debiased (bins with n_s < 2 dropped) within [E^2/2, 3E^2/2] once n >= "
        "c (sqrt(B)/E^2) log(B/delta), your models",
    ),
    "klm19.def52": MeanStudyAdapter(),
    "klm19.thm41": Thm41StudyAdapter(),
}
