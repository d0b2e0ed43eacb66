r"""Rate checks: "there is a c such that n >= c h(theta) suffices" (quantifier ``rate``).

A guarantee with an unspecified constant cannot be checked at a fixed n. What it does
claim is that the *threshold* n*(theta) -- the smallest n at which its event holds with
probability >= 1 - delta -- is at most c h(theta) for one c and every theta. A
:class:`RateCheck` measures n* at several parameter points theta of each *series* (one
parameter varied over at least two decades, e.g. B at fixed E^2), fits

.. math:: \log n^*(\theta) = a + b \log h(\theta)

and decides with a bootstrap confidence bound on the slope b: n*/h stays bounded only if
b <= 1 (up to a stated slack for lower-order terms on a finite range). A negative control
claims a wrong rate (a different ``h``) on the same stored data.

Threshold. Each experiment simulates one theta on a geometric grid of n (outcome columns,
independent draws). The coverage p_j of the event at each grid point is a binomial
proportion; n* is where the coverage curve last crosses 1 - delta from below, interpolated
linearly in log n between the two grid points around the crossing (the smallest grid n at
which the coverage *passes* a test would depend on the number of replicates; the crossing
estimates a replicate-free quantity). A grid must bracket the threshold: if no grid point
fails, n* is only known to lie at or below the first one -- also when the first one is the
smallest n the method accepts (symbol ``n_min``): the coverage is then reached wherever the
method runs, which measures nothing -- and if the last one fails it is only known to lie
beyond the grid. Such a point is *censored*: left out of the fit and listed (``unbracketed``,
``censored``), never evidence either way (a censored n* would flatten or steepen the slope,
and a grid that starts above every threshold would make any rate look consistent). A series
with fewer than 3 measured thresholds is *inconclusive*; a check none of whose series
reaches a verdict is inconclusive, never violated and never a pass.

Uncertainty. Columns are independent binomial counts, so resampling replicates is the same
as drawing ``Binomial(R, p_j)`` counts: the bootstrap is exact and cheap. The slope's
one-sided lower bound at level ``false_alarm / (number of series)`` decides (Bonferroni);
a 95% percentile interval is reported.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from calcheck.bounds import registry
from calcheck.simulations.engine import BLOCK_REPS, load_outcome, n_blocks_for
from calcheck.simulations.provenance import generator

from ..checks.budgets import DEFAULT_FALSE_ALARM
from ..checks.events import MUTANT_FACTORS, BoundRule
from ..results.export import Exportable
from ..results.protocol import Mutant, json_number
from ..results.roles import check_role, role_of
from ..results.series_result import SeriesCheckResult
from .rate_events import Balanced, FactorWithin, SquaredCEWithin
from .rate_thresholds import N_BOOT, ols_slopes, threshold

__all__ = [
    "Balanced",
    "FactorWithin",
    "RateCheck",
    "RateCheckResult",
    "RateSeries",
    "SeriesCheckResult",
    "SeriesResult",
    "SquaredCEWithin",
    "threshold",
]


# --------------------------------------------------------------------- checks
@dataclass(frozen=True)
class RateSeries:
    """Parameter points of one series: one experiment per theta, ``varying`` one symbol."""

    name: str
    varying: str
    experiments: tuple

    def __post_init__(self):
        if len(self.experiments) < 3:
            raise ValueError(f"series {self.name!r} needs at least 3 parameter points")


@dataclass(frozen=True)
class RateCheck:
    """A rate claim checked by thresholds (see the module docstring).

    Parameters
    ----------
    id, guarantee : str
    series : tuple of RateSeries
    event : FactorWithin or Balanced
        Per-replicate success at each grid n.
    delta : float
        The claim's failure probability: n* is where the coverage reaches 1 - delta.
    expect : {"consistent", "violated"}
    bound : BoundRule
        ``h(theta)``: the guarantee's function with ``c = 1`` by default; a negative control
        names a wrong rate.
    slack : float
        Slope allowed above 1 for lower-order terms on a finite range.
    slack_reason : str
        Why a slack other than the default 0.05 (listed by ``calcheck audit``).
    description : str
    """

    id: str
    guarantee: str
    series: tuple
    event: object
    delta: float = 0.1
    expect: str = "consistent"
    bound: BoundRule = field(default_factory=BoundRule)
    slack: float = 0.05
    description: str = ""
    role: str = ""
    slack_reason: str = ""

    def __post_init__(self):
        check_role(self)
        if registry.get(self.guarantee).quantifier not in ("rate", "informal_rate"):
            raise ValueError(f"{self.guarantee} is not a rate guarantee")
        if self.expect not in ("consistent", "violated"):
            raise ValueError(f"expect must be 'consistent' or 'violated', got {self.expect!r}")
        if not 0 < self.delta < 1:
            raise ValueError(f"delta must lie in (0, 1), got {self.delta!r}")

    claim = property(lambda self: "1-delta")
    is_control = property(lambda self: self.expect == "violated")
    bound_mode = property(lambda self: self.bound.name)
    metric = property(lambda self: self.event.describe())

    def simulations(self) -> list:
        """Every experiment of every series."""
        return [e for s in self.series for e in s.experiments]

    def law_specs(self) -> dict:
        """Readable description of each experiment, by label."""
        return {e.label(): e.description() for e in self.simulations()}

    def rate(self, symbols) -> float:
        """``h(theta)`` (the rate with c = 1)."""
        pool = {"c": 1.0, "delta": self.delta, **symbols}
        return float(self.bound.radius(self.guarantee, pool, None))

    def evaluate(
        self, store, reps: int, root_seed: int, false_alarm: float = DEFAULT_FALSE_ALARM
    ) -> RateCheckResult:
        """Thresholds, slopes and the verdict from outcomes already in ``store``."""
        level = false_alarm / len(self.series)
        rng = generator(root_seed, "rate-bootstrap", self.id)
        results = tuple(
            self._series_result(s, store, reps, root_seed, level, rng) for s in self.series
        )
        mutant = rate_mutant(results, self.slack) if role_of(self) == "guarantee" else None
        return RateCheckResult(
            self, results, n_blocks_for(reps) * BLOCK_REPS, false_alarm, mutant=mutant
        )

    def _series_result(self, series, store, reps, root_seed, level, rng) -> SeriesResult:
        target = 1.0 - self.delta
        n_star, n_boot, h, theta, censored = [], [], [], [], []
        for exp in series.experiments:
            outcome = load_outcome(store, exp, reps, root_seed)
            success = self.event.success(exp, outcome)
            r = success.shape[0]
            k = success.sum(axis=0)
            symbols = exp.symbols(outcome)
            grid = symbols["n_grid"]
            cov = k / r
            # a threshold at the grid's first point (even the smallest n the method accepts,
            # n_min: the coverage is already reached there) or past its last is censored:
            # not a measured n*
            censored.append(bool(cov.min() >= target or cov[-1] < target))
            n_star.append(float(threshold(cov, grid, target)))
            boot = rng.binomial(r, cov, size=(N_BOOT, k.size)) / r
            n_boot.append(threshold(boot, grid, target))
            h.append(self.rate(symbols))
            theta.append(float(symbols[series.varying]))
        keep = ~np.asarray(censored)
        unbracketed = int((~keep).sum())
        ratios = np.asarray(n_star) / np.asarray(h)
        if keep.sum() < 3:  # too few measured thresholds for a slope: no verdict
            nan2 = (float("nan"), float("nan"))
            return SeriesResult(
                series.name,
                series.varying,
                tuple(theta),
                tuple(n_star),
                tuple(h),
                float("nan"),
                nan2,
                float("nan"),
                float("nan"),
                nan2,
                float(np.max(ratios[keep])) if keep.any() else float("nan"),
                False,
                level,
                unbracketed,
                True,
                tuple(censored),
            )
        log_h, log_t = np.log(np.asarray(h)[keep]), np.log(np.asarray(theta)[keep])
        y = np.log(np.asarray(n_star)[keep])
        yb = np.log(np.stack(n_boot, axis=-1)[..., keep])
        slope = float(ols_slopes(log_h, y))
        boot_h = ols_slopes(log_h, yb)
        boot_t = ols_slopes(log_t, yb)
        # a bootstrap resample may still put a threshold off the grid: its slope is
        # infinite and its quantiles are reported as such
        with np.errstate(invalid="ignore"):
            lower = float(np.quantile(boot_h, level))
            slope_ci = tuple(float(q) for q in np.quantile(boot_h, (0.025, 0.975)))
            exponent_ci = tuple(float(q) for q in np.quantile(boot_t, (0.025, 0.975)))
        return SeriesResult(
            series.name,
            series.varying,
            tuple(theta),
            tuple(n_star),
            tuple(h),
            slope,
            slope_ci,
            lower,
            float(ols_slopes(log_t, y)),
            exponent_ci,
            float(np.max(ratios[keep])),
            lower > 1.0 + self.slack,
            level,
            unbracketed,
            False,
            tuple(censored),
        )


@dataclass(frozen=True)
class SeriesResult(Exportable):
    """Fit of one series: thresholds, slopes (with intervals) and the fitted constant.

    Attributes
    ----------
    slope, slope_ci : float, (float, float)
        Slope of log n* on log h and its 95% bootstrap interval.
    slope_lower : float
        One-sided lower bootstrap bound at ``level`` (the decision).
    exponent, exponent_ci : float, (float, float)
        Slope of log n* on log of the varying parameter (the measured exponent).
    c_fit : float
        ``max n*/h`` over the series: the smallest constant the claim needs here.
    violated : bool
        ``slope_lower > 1 + slack`` on the measured thresholds.
    unbracketed : int
        Parameter points whose grid does not bracket n* (see the module docstring): left
        out of the fit, listed as powerless.
    inconclusive : bool
        Fewer than 3 measured thresholds: the series reaches no verdict.
    censored : tuple of bool
        Per point: its threshold is off the grid (not measured).
    """

    name: str
    varying: str
    theta: tuple
    n_star: tuple
    h: tuple
    slope: float
    slope_ci: tuple
    slope_lower: float
    exponent: float
    exponent_ci: tuple
    c_fit: float
    violated: bool
    level: float
    unbracketed: int = 0
    inconclusive: bool = False
    censored: tuple = ()

    def powerless_note(self) -> str:
        """Which thresholds are not measured ("" when every one is)."""
        if not self.unbracketed:
            return ""
        head = "inconclusive: " if self.inconclusive else ""
        points = [
            f"{self.varying}={t:g}" for t, c in zip(self.theta, self.censored, strict=True) if c
        ]
        return f"{head}{self.unbracketed} threshold(s) off the grid ({', '.join(points)})"

    def describe(self) -> str:
        """One line: exponent, slope on log h and the fitted constant."""
        if self.inconclusive:
            return (
                f"{self.name}: inconclusive: {self.unbracketed} of {len(self.theta)} "
                "thresholds outside the grid, fewer than 3 measured"
            )
        e_lo, e_hi = self.exponent_ci
        s_lo, s_hi = self.slope_ci
        return (
            f"{self.name}: n* ~ {self.varying}^{self.exponent:.2f} [{e_lo:.2f}, {e_hi:.2f}]; "
            f"slope on log h {self.slope:.2f} [{s_lo:.2f}, {s_hi:.2f}] (lower bound "
            f"{self.slope_lower:.2f} at {self.level:.2g}); c = max n*/h = {self.c_fit:.3g}"
            + (
                f"; {self.unbracketed} threshold(s) outside the grid, left out of the fit"
                if self.unbracketed
                else ""
            )
        )


def _series_dict(s) -> dict:
    return {
        "name": s.name,
        "varying": s.varying,
        "theta": list(s.theta),
        "n_star": [json_number(x) for x in s.n_star],
        "h": list(s.h),
        "slope": json_number(s.slope),
        "slope_ci": [json_number(x) for x in s.slope_ci],
        "slope_lower": json_number(s.slope_lower),
        "level": s.level,
        "exponent": json_number(s.exponent),
        "exponent_ci": [json_number(x) for x in s.exponent_ci],
        "c_fit": json_number(s.c_fit),
        "unbracketed": s.unbracketed,
        "censored": list(s.censored),
        "verdict": "violated" if s.violated else "inconclusive" if s.inconclusive else "consistent",
    }


def rate_mutant(series, slack: float) -> Mutant:
    """The rate claim tightened: ``n* <= c h^p`` with ``p < 1``, on the same thresholds.

    The slope of log n* on log h^p is the slope on log h divided by p, so the mutant at p is
    flagged exactly when some measured series has ``slope_lower > p (1 + slack)``.
    """
    tried = ", ".join(f"{p:g}" for p in MUTANT_FACTORS)
    measured = [s for s in series if not s.inconclusive]
    for p in MUTANT_FACTORS:
        hits = [s for s in measured if s.slope_lower > p * (1.0 + slack)]
        if hits:
            s = max(hits, key=lambda x: x.slope_lower)
            return Mutant(
                f"n* <= c h^{p:g} (the rate's exponent times {p:g})",
                True,
                p,
                f"exponent times {tried}",
                f"{s.name}: slope lower bound {s.slope_lower:.2f} > {p * (1 + slack):.2f}",
            )
    p = MUTANT_FACTORS[-1]
    why = (
        "no series has a measured threshold slope"
        if not measured
        else f"largest slope lower bound {max(s.slope_lower for s in measured):.2f}"
    )
    return Mutant(
        f"n* <= c h^{p:g} (the rate's exponent times {p:g})",
        False,
        p,
        f"exponent times {tried}",
        why,
    )


@dataclass(frozen=True, repr=False)  # the shared __repr__
class RateCheckResult(SeriesCheckResult):
    """Series fits of a rate check and its verdict (violated if any series is)."""

    kind = "rate"

    def evidence(self) -> dict:
        """The series with their thresholds and fits, JSON-able (the protocol's evidence)."""
        ch = self.check
        return {
            "claim": f"n*/h bounded: slope of log n* on log h <= 1 + {ch.slack:g}",
            "delta": ch.delta,
            "slack": ch.slack,
            "tolerance_reason": ch.slack_reason or None,
            "series": [_series_dict(s) for s in self.series],
            "cells": [],
        }

    def worst_series(self) -> SeriesResult:
        """The series with the largest lower slope bound (inconclusive ones last)."""
        return max(
            self.series,
            key=lambda s: (not s.inconclusive, -np.inf if s.inconclusive else s.slope_lower),
        )

    kind_name = "rate check"

    def _settings(self) -> str:
        return (
            f"{self.reps} replicates per grid point, false-alarm rate {self.false_alarm:g}, "
            f"slack {self.check.slack:g}"
        )

    def plot(self, ax=None):
        """Thresholds n* against h(theta) on log-log axes, one colour per series.

        The dotted lines have slope 1 through each series' largest ``n*/h`` (the fitted
        constant): a claim that holds keeps every series on or below a line of slope 1.

        Parameters
        ----------
        ax : matplotlib Axes, optional

        Returns
        -------
        matplotlib Axes
        """
        if ax is None:
            from matplotlib.figure import Figure

            ax = Figure(figsize=(6.4, 4.4), layout="constrained").subplots()
        for i, s in enumerate(self.series):
            color = f"C{i}"
            h = np.asarray(s.h)
            ax.loglog(h, s.n_star, "o-", color=color, ms=4, label=f"{s.name} (slope {s.slope:.2f})")
            ax.loglog(h, s.c_fit * h, ":", color=color, lw=1)
        ax.set_xlabel(f"h(theta): rate {self.check.bound_mode!r} of {self.check.guarantee}, c = 1")
        ax.set_ylabel(f"threshold n* (coverage {1 - self.check.delta:g})")
        ax.set_title(f"{self.check.id}: {self.verdict}", fontsize=9)
        ax.legend(fontsize=7)
        return ax


def is_rate_result(result) -> bool:
    """Whether a result comes from a :class:`RateCheck`."""
    return isinstance(result, RateCheckResult)
