r"""Exponent checks: "E[statistic] behaves like c h(theta)" (quantifier ``informal_rate``).

Some rates are stated as proportionalities ("the squared calibration error decreases
approximately as 1/n", "increases nearly linearly with B"). Such a claim fixes the
exponent of the mean in each parameter: with m(theta) the mean of the statistic over
replicates, the fit

.. math:: \log m(\theta) - \log h(\theta) = a + b \log \theta

must have b = 0 (the excess exponent), up to a stated tolerance for "nearly". A series
varies one parameter: ``n`` along the columns of one experiment's grid, or any other
symbol across experiments (one column each). The decision uses a two-sided bootstrap
interval (replicates resampled within each point, the points being independent
simulations) at level ``false_alarm / (number of series)``: the claim is violated when
the interval lies entirely outside ``[-tolerance, tolerance]``. A negative control claims
a wrong h on the same data.

Means are Monte Carlo estimates: the verdict is a bootstrap test, not an exact binomial
one (a proportionality is a claim about means, not a coverage).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from calcheck.bounds import registry
from calcheck.simulations.engine import BLOCK_REPS, load_outcome, n_blocks_for
from calcheck.simulations.provenance import generator

from ..checks.budgets import DEFAULT_FALSE_ALARM
from ..checks.events import BoundRule
from ..results.export import Exportable
from ..results.protocol import Mutant
from ..results.roles import check_role, role_of
from .rates import SeriesCheckResult

__all__ = ["ExponentCheck", "ExponentCheckResult", "ExponentSeries", "ExponentSeriesResult"]

#: Bootstrap resamples of the means.
N_BOOT = 2000
_ROWS = 64  # resamples gathered at a time: 2 MB at 4000 replicates, which stays in cache


def _bootstrap_means(values, rng):
    """``N_BOOT`` bootstrap means of ``values``: ``values[idx].mean(axis=1)`` bit for bit.

    The indices are drawn in one call (the draws are the stream's), and the resamples are
    gathered and averaged a few rows at a time: each row's mean is the same sum, and not
    writing all ``N_BOOT x R`` gathered values first makes it about twice as fast.
    """
    idx = rng.integers(0, values.size, size=(N_BOOT, values.size))
    out = np.empty(N_BOOT)
    for i in range(0, N_BOOT, _ROWS):
        out[i : i + _ROWS] = values[idx[i : i + _ROWS]].mean(axis=1)
    return out


@dataclass(frozen=True)
class ExponentSeries:
    """Points of one series of an exponent check.

    The columns of one experiment's grid of n (``varying="n"`` and one experiment), or one
    experiment per value of the ``varying`` symbol (at least 3), each read at grid
    ``column`` (or, with ``at_n``, at the column whose n is closest to it); an experiment
    without a grid has one column, its symbol ``n``.
    """

    name: str
    varying: str
    experiments: tuple
    column: int = -1
    at_n: int | None = None

    def __post_init__(self):
        if len(self.experiments) not in (1,) and len(self.experiments) < 3:
            raise ValueError(f"series {self.name!r} needs at least 3 parameter points")


def _slope(x, y):
    xc = x - x.mean()
    return (y - y.mean(axis=-1, keepdims=True)) @ xc / (xc @ xc)


@dataclass(frozen=True)
class ExponentCheck:
    """A proportionality claim checked by fitted exponents (see the module docstring).

    Parameters
    ----------
    id, guarantee : str
    series : tuple of ExponentSeries
    statistic : str or callable
        Outcome field of shape ``(R, G)``, or ``f(experiment, outcome) -> (R, G)``.
    expect : {"consistent", "violated"}
    bound : BoundRule
        ``h(theta)``: the guarantee's function with ``c = 1``, or a wrong rate (control).
    tolerance : float
        Excess exponent allowed ("nearly").
    tolerance_reason : str
        Why a tolerance other than the default 0.1 (listed by ``calcheck audit``).
    description : str
    """

    id: str
    guarantee: str
    series: tuple
    statistic: object
    expect: str = "consistent"
    bound: BoundRule = field(default_factory=BoundRule)
    tolerance: float = 0.1
    description: str = ""
    role: str = ""
    tolerance_reason: str = ""

    def __post_init__(self):
        check_role(self)
        if registry.get(self.guarantee).quantifier not in ("informal_rate", "rate"):
            raise ValueError(f"{self.guarantee} is not a rate claim (rate or informal_rate)")
        if self.expect not in ("consistent", "violated"):
            raise ValueError(f"expect must be 'consistent' or 'violated', got {self.expect!r}")

    claim = property(lambda self: "exponent")
    is_control = property(lambda self: self.expect == "violated")
    bound_mode = property(lambda self: self.bound.name)
    delta = property(lambda self: None)

    @property
    def metric(self) -> str:
        """Short name of the statistic."""
        name = self.statistic if isinstance(self.statistic, str) else self.statistic.__name__
        return f"E[{name}] ~ h, excess exponent within +-{self.tolerance:g}"

    def simulations(self) -> list:
        """Every experiment of every series."""
        return [e for s in self.series for e in s.experiments]

    def law_specs(self) -> dict:
        """Readable description of each experiment, by label."""
        return {e.label(): e.description() for e in self.simulations()}

    def _values(self, exp, outcome):
        if isinstance(self.statistic, str):
            return np.asarray(getattr(outcome, self.statistic), dtype=float)
        return np.asarray(self.statistic(exp, outcome), dtype=float)

    def _h(self, symbols) -> float:
        pool = {"c": 1.0, **symbols}
        return float(self.bound.radius(self.guarantee, pool, None))

    def evaluate(self, store, reps, root_seed, false_alarm=DEFAULT_FALSE_ALARM):
        """Fitted exponents and the verdict from outcomes already in ``store``."""
        level = false_alarm / len(self.series)
        rng = generator(root_seed, "exponent-bootstrap", self.id)
        results = tuple(self._fit(s, store, reps, root_seed, level, rng) for s in self.series)
        mutant = exponent_mutant(results, self.tolerance) if role_of(self) == "guarantee" else None
        return ExponentCheckResult(
            self, results, n_blocks_for(reps) * BLOCK_REPS, false_alarm, mutant=mutant
        )

    def _points(self, series, store, reps, root_seed):
        """``(theta, h, values (R,))`` per point of the series."""
        out = []
        for exp in series.experiments:
            outcome = load_outcome(store, exp, reps, root_seed)
            sym = exp.symbols(outcome)
            vals = self._values(exp, outcome)
            if vals.ndim == 1:  # one sample size per experiment (symbol n)
                vals = vals[:, None]
            grid = np.asarray(sym.get("n_grid", (sym.get("n"),)))
            if series.varying == "n" and grid.size > 1:
                cols = range(grid.size)
            elif series.at_n is not None:
                cols = [int(np.argmin(np.abs(np.log(grid / series.at_n))))]
            else:
                cols = [series.column]
            for j in cols:
                point = {**sym, "n": int(grid[j])}
                out.append((float(point[series.varying]), self._h(point), vals[:, j]))
        return out

    def _fit(self, series, store, reps, root_seed, level, rng) -> ExponentSeriesResult:
        points = self._points(series, store, reps, root_seed)
        theta = np.array([p[0] for p in points])
        h = np.array([p[1] for p in points])
        means = np.array([p[2].mean() for p in points])
        boot = np.stack([_bootstrap_means(v, rng) for *_, v in points], axis=-1)
        x = np.log(theta)
        with np.errstate(divide="ignore", invalid="ignore"):
            excess = float(_slope(x, np.log(means / h)))
            excess_b = _slope(x, np.log(boot / h))
            exponent_b = _slope(x, np.log(boot))
        if not (np.all(means > 0) and np.all(np.isfinite(excess_b))):
            raise ValueError(f"{self.id}: the mean of the statistic must be positive")
        lo, hi = np.quantile(excess_b, (level / 2, 1 - level / 2))
        return ExponentSeriesResult(
            series.name,
            series.varying,
            tuple(theta),
            tuple(means),
            tuple(h),
            float(_slope(x, np.log(means))),
            tuple(float(q) for q in np.quantile(exponent_b, (0.025, 0.975))),
            float(_slope(x, np.log(h))),
            excess,
            (float(lo), float(hi)),
            float(np.mean(means / h)),
            bool(lo > self.tolerance or hi < -self.tolerance),
            level,
        )


#: Shifts of the claimed exponent a mutant tries (smallest first).
MUTANT_SHIFTS = (0.05, 0.1, 0.2, 0.3, 0.5, 1.0)


def exponent_mutant(series, tolerance: float) -> Mutant:
    """The claimed exponent shifted by +-m on the same means: the smallest m caught both ways.

    Claiming ``claimed + m`` moves the excess to ``excess - m``: flagged when its interval
    ``[lo - m, hi - m]`` leaves ``[-tolerance, tolerance]``, i.e. ``m > hi + tolerance`` for
    +m and ``m > tolerance - lo`` for -m, in some series.
    """
    tried = ", ".join(f"{m:g}" for m in MUTANT_SHIFTS)
    up = min(s.excess_ci[1] + tolerance for s in series)
    down = min(tolerance - s.excess_ci[0] for s in series)
    for m in MUTANT_SHIFTS:
        if m > up and m > down:
            return Mutant(
                f"the claimed exponent shifted by +-{m:g}",
                True,
                m,
                f"shifts {tried}",
                f"caught above +{up:.2f} and below -{down:.2f}",
            )
    m = MUTANT_SHIFTS[-1]
    return Mutant(
        f"the claimed exponent shifted by +-{m:g}",
        False,
        m,
        f"shifts {tried}",
        f"caught only above +{up:.2f} and below -{down:.2f}",
    )


@dataclass(frozen=True)
class ExponentSeriesResult(Exportable):
    """Fit of one series.

    Attributes
    ----------
    exponent, exponent_ci : float, (float, float)
        Slope of log E[stat] on log theta, 95% bootstrap interval.
    claimed : float
        Slope of log h on log theta (the claimed exponent).
    excess, excess_ci : float, (float, float)
        ``exponent - claimed`` and its interval at ``level`` (the decision).
    c_fit : float
        Mean of E[stat] / h over the series.
    """

    name: str
    varying: str
    theta: tuple
    means: tuple
    h: tuple
    exponent: float
    exponent_ci: tuple
    claimed: float
    excess: float
    excess_ci: tuple
    c_fit: float
    violated: bool
    level: float

    def describe(self) -> str:
        """One line: measured and claimed exponents, the decision interval, the constant."""
        lo, hi = self.exponent_ci
        return (
            f"{self.name}: E ~ {self.varying}^{self.exponent:.2f} [{lo:.2f}, {hi:.2f}], "
            f"claimed {self.claimed:.2f}; excess {self.excess:+.2f} "
            f"[{self.excess_ci[0]:+.2f}, {self.excess_ci[1]:+.2f}] at {self.level:.2g}; "
            f"c = {self.c_fit:.3g}"
        )


@dataclass(frozen=True, repr=False)  # the shared __repr__
class ExponentCheckResult(SeriesCheckResult):
    """Series fits of an exponent check and its verdict (violated if any series is)."""

    kind_name = "exponent check"
    kind = "exponent"

    def evidence(self) -> dict:
        """The series with their means and fits, JSON-able (the protocol's evidence)."""
        return {
            "claim": f"E[stat] ~ h: excess exponent within +-{self.check.tolerance:g}",
            "tolerance": self.check.tolerance,
            "tolerance_reason": self.check.tolerance_reason or None,
            "series": [
                {
                    "name": s.name,
                    "varying": s.varying,
                    "theta": list(s.theta),
                    "means": list(s.means),
                    "h": list(s.h),
                    "exponent": s.exponent,
                    "exponent_ci": list(s.exponent_ci),
                    "claimed": s.claimed,
                    "excess": s.excess,
                    "excess_ci": list(s.excess_ci),
                    "level": s.level,
                    "c_fit": s.c_fit,
                    "verdict": "violated" if s.violated else "consistent",
                }
                for s in self.series
            ],
            "cells": [],
        }

    def _settings(self) -> str:
        return f"{self.reps} replicates per point, tolerance {self.check.tolerance:g}"

    def plot(self, ax=None):
        """Means against theta on log-log axes with the claimed rate through their mean.

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
            t = np.asarray(s.theta)
            ax.loglog(
                t,
                s.means,
                "o-",
                color=f"C{i}",
                ms=4,
                label=f"{s.name}: exponent {s.exponent:.2f} (claimed {s.claimed:.2f})",
            )
            ax.loglog(t, s.c_fit * np.asarray(s.h), ":", color=f"C{i}", lw=1)
        ax.set_xlabel("varying parameter")
        ax.set_ylabel("mean of the statistic")
        ax.set_title(f"{self.check.id}: {self.verdict}", fontsize=9)
        ax.legend(fontsize=7)
        return ax
