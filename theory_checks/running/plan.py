"""Replicate planning: how many replicates detect a given coverage shortfall at a given power.

A check flags a cell by the suite's exact one-sided binomial test
(:func:`~calcheck.theory_checks.results.verdicts.coverage_verdict`): with R replicates, k successes
and claimed coverage ``p0 = 1 - alpha``, the cell is violated when
``P(Bin(R, p0) <= k) < level``, i.e. when ``k <= c(R)``, the test's critical count
(:func:`~calcheck.theory_checks.results.verdicts.critical_count`); ``level`` is the check's
false-alarm rate over its cells (Bonferroni, as ``Check.evaluate``). If the true coverage is
``p1 < p0`` the probability of flagging is exactly ``P(Bin(R, p1) <= c(R))``: the power.

The power is not monotone in R (a sawtooth): ``c(R)`` moves in whole counts, so one more
replicate can lower it. :func:`plan` returns the smallest R from which the power stays at or
above the target for every replicate count up to twice the first count that reaches it
(``reps``; the horizon is recorded) -- any count from there, rounded up to whole blocks of
100 as :func:`calcheck.verify` and ``calcheck run`` do, keeps the power -- and the first
count that reaches it (``first_reps``), which a count one larger may not.

The shortfall is given directly, as the true coverage, or as a bound factor: the coverage of
the guarantee's bound times a factor (a wrong constant), computed exactly at constant eta
(uniform-mass binning, gr21 Lemma 2; :func:`calcheck.exact_coverage`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from scipy import stats

from calcheck.simulations.engine import BLOCK_REPS

from ..checks.budgets import DEFAULT_FALSE_ALARM
from ..results.export import Exportable
from ..results.verdicts import critical_count

__all__ = ["ReplicatePlan", "critical_counts", "plan", "rejection_power"]

#: The largest replicate count :func:`plan` searches by default.
MAX_REPS = 10_000_000


@dataclass(frozen=True)
class ReplicatePlan(Exportable):
    """How many replicates detect a coverage shortfall (see :func:`plan`).

    Attributes
    ----------
    claimed : float
        The claimed coverage ``1 - alpha``.
    true_coverage : float
        The coverage to detect (``claimed - shortfall``).
    shortfall : float
    power : float
        The target probability of flagging the cell.
    false_alarm : float
        False-alarm rate of the check; ``level = false_alarm / cells`` per cell.
    cells : int
    level : float
    reps : int
        Smallest replicate count whose power is >= ``power`` for every count up to
        ``horizon``.
    achieved_power : float
        Exact power at ``reps``.
    critical_count : int
        At ``reps`` the cell is flagged when at most this many replicates succeed.
    first_reps : int
        Smallest count with power >= ``power`` (a count just above it may have less).
    horizon : int
        Largest count checked: twice ``first_reps`` (at least).
    block_reps : int
        ``reps`` rounded up to whole blocks of 100 (what verify and run simulate).
    bound_factor : float or None
        Where the shortfall is the bound times this factor: the factor (and ``guarantee``,
        ``n``, ``n_bins``, ``eta`` say where its exact coverage was computed).

    Examples
    --------
    >>> from calcheck import plan
    >>> p = plan(alpha=0.1, shortfall=0.05, power=0.9)
    >>> p.reps, p.first_reps, p.critical_count
    (838, 810, 725)
    >>> plan(alpha=0.1, true_coverage=0.85, power=0.9).to_dict()["reps"]
    838
    """

    claimed: float
    true_coverage: float
    shortfall: float
    power: float
    false_alarm: float
    cells: int
    level: float
    reps: int
    achieved_power: float
    critical_count: int
    first_reps: int
    horizon: int
    block_reps: int
    bound_factor: float | None = None
    guarantee: str = ""
    n: int | None = None
    n_bins: int | None = None
    eta: float | None = None

    def summary(self) -> str:
        """The plan in words (what ``calcheck plan`` prints)."""
        what = (
            f"the bound times {self.bound_factor:g} of {self.guarantee} at n={self.n}, "
            f"B={self.n_bins}, eta={self.eta:g}: exact coverage {self.true_coverage:.6g}"
            if self.bound_factor is not None
            else f"coverage {self.true_coverage:.6g}"
        )
        return (
            f"To detect {what} (claimed {self.claimed:g}, shortfall {self.shortfall:.4g}) "
            f"with power >= {self.power:g} at false-alarm rate {self.false_alarm:g} per check "
            f"({self.cells} cell(s): level {self.level:.3g} per cell): {self.reps} replicates "
            f"(power {self.achieved_power:.4f}; the cell is flagged at <= "
            f"{self.critical_count} successes). Every count from {self.reps} to "
            f"{self.horizon} has power >= {self.power:g}"
            + (
                f"; {self.first_reps} is the smallest count with that power, but some counts "
                "between have less (binomial power is not monotone in the count)"
                if self.first_reps < self.reps
                else ""
            )
            + f". In whole blocks of {BLOCK_REPS}, as verify and run simulate: "
            f"{self.block_reps}."
        )


def critical_counts(reps, claimed: float, level: float) -> np.ndarray:
    """:func:`~calcheck.theory_checks.results.verdicts.critical_count` of many replicate counts.

    The largest k with ``P(Bin(R, claimed) <= k) < level`` for each R (-1 where none).
    """
    r = np.asarray(reps, dtype=np.int64)
    c = stats.binom.ppf(level, r, claimed).astype(np.int64) - 1
    for step, wrong in (
        (-1, lambda c: stats.binom.cdf(c, r, claimed) >= level),
        (1, lambda c: stats.binom.cdf(c + 1, r, claimed) < level),
    ):
        bad = wrong(c) & (c >= 0 if step < 0 else c < r)
        while bad.any():  # the quantile's rounding, as critical_count corrects it
            c = np.where(bad, c + step, c)
            bad = wrong(c) & (c >= 0 if step < 0 else c < r)
    return c


def rejection_power(reps, claimed, true_coverage, *, false_alarm=DEFAULT_FALSE_ALARM, cells=1):
    """Exact probability that the suite flags a cell of true coverage ``true_coverage``.

    Parameters
    ----------
    reps : int
    claimed : float
        Claimed coverage in (0, 1).
    true_coverage : float
        In [0, 1].
    false_alarm : float, default 1e-3
        The check's false-alarm rate; the cell's level is ``false_alarm / cells``.
    cells : int, default 1

    Returns
    -------
    float
        ``P(Bin(reps, true_coverage) <= c)`` with ``c`` the test's critical count.

    Raises
    ------
    ValueError
        For a bad argument (named and echoed).

    Examples
    --------
    Claimed 1/2 at level 0.05 with 5 replicates: only 0 successes is flagged
    (``P = 1/32``), so a true coverage of 0.1 is flagged with probability ``0.9**5``.

    >>> round(rejection_power(5, 0.5, 0.1, false_alarm=0.05), 5)
    0.59049
    """
    if isinstance(reps, bool) or not isinstance(reps, int | np.integer) or reps < 1:
        raise ValueError(f"reps must be a positive integer, got {reps!r}")
    claimed = _number("claimed", claimed, 0.0, 1.0)
    true_coverage = _number("true_coverage", true_coverage, 0.0, 1.0, False, False)
    level = _number("false_alarm", false_alarm, 0.0, 1.0) / _cells(cells)
    c = critical_count(int(reps), claimed, level)
    return float(stats.binom.cdf(c, int(reps), true_coverage)) if c >= 0 else 0.0


def _cells(cells) -> int:
    if isinstance(cells, bool) or not isinstance(cells, int | np.integer) or cells < 1:
        raise ValueError(f"cells must be a positive integer, got {cells!r}")
    return int(cells)


def _number(name, value, low, high, low_open=True, high_open=True) -> float:
    ok = isinstance(value, int | float | np.integer | np.floating) and not isinstance(value, bool)
    if ok and not np.isnan(value):
        above = value > low if low_open else value >= low
        below = value < high if high_open else value <= high
        if above and below:
            return float(value)
    lo, hi = ("(" if low_open else "["), (")" if high_open else "]")
    raise ValueError(f"{name} must be a number in {lo}{low:g}, {high:g}{hi}, got {value!r}")


def _factor_coverage(guarantee, bound_factor, alpha, n, n_bins, eta) -> float:
    """Exact coverage of ``guarantee``'s bound times ``bound_factor`` at constant eta."""
    from calcheck.simulations.exact_coverage import exact_coverage as coverage_at
    from calcheck.simulations.radius_coverage import exact_radius_coverage

    from .exact import exact_coverage, radius_of

    if guarantee is None or n is None or n_bins is None:
        raise ValueError(
            "bound_factor needs guarantee, n and n_bins (the exact coverage of the bound "
            f"times the factor is computed there), got guarantee={guarantee!r}, n={n!r}, "
            f"n_bins={n_bins!r}"
        )
    base = exact_coverage(guarantee, n=n, n_bins=n_bins, alpha=alpha, eta=eta)
    if base.eps is not None:
        eps = bound_factor * base.eps
        return float(coverage_at(n, n_bins, eta, eps, event=base.event, scheme=base.scheme))
    # a radius read off each bin's data, r(k, m): scaled count by count
    radius = radius_of(guarantee, n=n, n_bins=n_bins, alpha=alpha, scheme=base.scheme)

    def scaled(k, m):
        return bound_factor * radius(k, m)

    return exact_radius_coverage(n, n_bins, eta, scaled, event=base.event, scheme=base.scheme)


def plan(
    *,
    alpha: float = 0.1,
    shortfall=None,
    true_coverage=None,
    bound_factor=None,
    power: float = 0.9,
    false_alarm: float = DEFAULT_FALSE_ALARM,
    cells: int = 1,
    guarantee=None,
    n=None,
    n_bins=None,
    eta=None,
    max_reps: int = MAX_REPS,
) -> ReplicatePlan:
    """The replicates a check needs to flag a coverage shortfall with a given power.

    Parameters
    ----------
    alpha : float, default 0.1
        The claim is coverage ``1 - alpha`` (for another claim, pass 1 - claimed).
    shortfall, true_coverage, bound_factor : float
        Exactly one: the shortfall below ``1 - alpha``; the true coverage; or a factor (in
        (0, 1]) of the guarantee's bound whose exact coverage at constant ``eta`` is the
        true coverage (needs ``guarantee``, ``n`` and ``n_bins``).
    power : float, default 0.9
        Target probability of flagging, in (0, 1).
    false_alarm : float, default 1e-3
        The check's false-alarm rate (the suite's default), in (0, 1).
    cells : int, default 1
        Cells of the check: each is tested at ``false_alarm / cells`` (Bonferroni).
    guarantee : str or DefinedGuarantee, optional
    n, n_bins : int, optional
    eta : float, optional
        With ``bound_factor``: the constant conditional mean of the exact coverage (default
        1/2, where every Hoeffding step is at its largest variance; the worst constant eta
        of a radius can lie just off 1/2, where a cut-off crosses an integer:
        :func:`calcheck.search` finds it).
    max_reps : int, default 10_000_000
        The largest count searched.

    Returns
    -------
    ReplicatePlan

    Raises
    ------
    ValueError
        For not exactly one of shortfall / true_coverage / bound_factor, ``guarantee``,
        ``n``, ``n_bins`` or ``eta`` without ``bound_factor``, a value out of its range
        (named and echoed), a bound factor whose bound still holds exactly (no count
        detects it), or a shortfall that needs more than ``max_reps`` replicates.

    Examples
    --------
    How many replicates detect a coverage of 0.85 where 0.9 is claimed, with power 0.9 at
    the suite's false-alarm rate?

    >>> from calcheck.theory_checks.running.plan import plan
    >>> p = plan(alpha=0.1, shortfall=0.05, power=0.9)
    >>> p.reps, p.block_reps, round(p.achieved_power, 3)
    (838, 900, 0.901)
    """
    target = _Target.checked(shortfall, true_coverage, bound_factor, guarantee, n, n_bins, eta)
    test = _Test.checked(alpha, power, false_alarm, cells, max_reps)
    return _replicate_plan(test, target.resolved(test))


@dataclass(frozen=True)
class _Test:
    """The test :func:`plan` sizes: claim, target power, false-alarm rate over cells, search cap."""

    alpha: float
    power: float
    false_alarm: float
    cells: int
    max_reps: int

    @classmethod
    def checked(cls, alpha, power, false_alarm, cells, max_reps) -> _Test:
        """The arguments validated, in the order their errors are reported."""
        alpha = _number("alpha", alpha, 0.0, 1.0)
        power = _number("power", power, 0.0, 1.0)
        false_alarm = _number("false_alarm", false_alarm, 0.0, 1.0)
        cells = _cells(cells)
        if isinstance(max_reps, bool) or not isinstance(max_reps, int) or max_reps < 2:
            raise ValueError(f"max_reps must be an integer >= 2, got {max_reps!r}")
        return cls(alpha, power, false_alarm, cells, max_reps)

    @property
    def claimed(self) -> float:
        """The claimed coverage ``1 - alpha``."""
        return 1.0 - self.alpha

    @property
    def level(self) -> float:
        """Each cell's level: the false-alarm rate shared over the cells (Bonferroni)."""
        return self.false_alarm / self.cells


@dataclass(frozen=True)
class _Target:
    """The coverage to detect, given one of three ways, and where a bound factor is computed.

    :meth:`checked` refuses anything but exactly one of ``shortfall``, ``true_coverage`` and
    ``bound_factor``; :meth:`resolved` validates the rest and sets ``true_coverage``.
    """

    shortfall: object
    true_coverage: object
    bound_factor: object
    guarantee: object
    n: object
    n_bins: object
    eta: object

    @classmethod
    def checked(cls, shortfall, true_coverage, bound_factor, guarantee, n, n_bins, eta) -> _Target:
        """The target, refused unless exactly one of the three ways is given."""
        target = cls(shortfall, true_coverage, bound_factor, guarantee, n, n_bins, eta)
        if len(target.given) != 1:
            raise ValueError(
                "give exactly one of shortfall, true_coverage or bound_factor, "
                f"got {target.given or 'none'}"
            )
        return target

    @property
    def given(self) -> list[str]:
        ways = ("shortfall", "true_coverage", "bound_factor")
        return [k for k in ways if getattr(self, k) is not None]

    def resolved(self, test: _Test) -> _Target:
        """The target validated against ``test``, with its ``true_coverage`` computed."""
        claimed = test.claimed
        where = {
            k: getattr(self, k)
            for k in ("guarantee", "n", "n_bins", "eta")
            if getattr(self, k) is not None
        }
        if self.bound_factor is None and where:
            raise ValueError(
                f"{sorted(where)} go with bound_factor (where its exact coverage is computed); "
                f"got {where} with {self.given[0]}"
            )
        if self.bound_factor is not None:
            return self._from_bound_factor(test)
        if self.shortfall is not None:
            shortfall = _number("shortfall", self.shortfall, 0.0, claimed, high_open=False)
            return replace(self, true_coverage=claimed - shortfall)
        p1 = _number("true_coverage", self.true_coverage, 0.0, claimed, low_open=False)
        return replace(self, true_coverage=p1)

    def _from_bound_factor(self, test: _Test) -> _Target:
        bound_factor = _number("bound_factor", self.bound_factor, 0.0, 1.0, high_open=False)
        eta = 0.5 if self.eta is None else _number("eta", self.eta, 0.0, 1.0)
        guarantee, n, n_bins, claimed = self.guarantee, self.n, self.n_bins, test.claimed
        p1 = _factor_coverage(guarantee, bound_factor, test.alpha, n, n_bins, eta)
        if p1 >= claimed:
            raise ValueError(
                f"the bound of {guarantee} times {bound_factor:g} still holds at n={n}, "
                f"B={n_bins}, eta={eta:g}: exact coverage {p1:.6g} >= claimed {claimed:g}; "
                "no replicate count detects it (choose a smaller factor)"
            )
        return replace(self, true_coverage=p1, bound_factor=bound_factor, eta=eta)


def _replicate_plan(test: _Test, target: _Target) -> ReplicatePlan:
    """The plan: the replicate counts :func:`_search` finds for a resolved target."""
    claimed, p1, level = test.claimed, target.true_coverage, test.level
    first, horizon, reps, pw = _search(claimed, p1, test.power, level, test.max_reps)
    factor = target.bound_factor
    return ReplicatePlan(
        claimed,
        p1,
        claimed - p1,
        test.power,
        test.false_alarm,
        int(test.cells),
        level,
        reps,
        pw,
        critical_count(reps, claimed, level),
        first,
        horizon,
        -(-reps // BLOCK_REPS) * BLOCK_REPS,
        factor,
        "" if target.guarantee is None else str(getattr(target.guarantee, "id", target.guarantee)),
        None if factor is None else int(target.n),
        None if factor is None else int(target.n_bins),
        None if factor is None else target.eta,
    )


def _powers(lo: int, hi: int, claimed, p1, level) -> np.ndarray:
    r = np.arange(lo, hi + 1)
    c = critical_counts(r, claimed, level)
    return np.where(c >= 0, stats.binom.cdf(c, r, p1), 0.0)


def _search(claimed, p1, power, level, max_reps):
    """(first count with power, horizon, smallest count holding it to the horizon, power)."""
    hi = 1024
    while True:
        hi = min(hi, max_reps)
        pw = _powers(1, hi, claimed, p1, level)
        reached = np.flatnonzero(pw >= power)
        if reached.size:
            first = int(reached[0]) + 1
            horizon = max(2 * first, first + 2 * BLOCK_REPS)
            if horizon <= hi or hi == max_reps:
                horizon = min(horizon, hi)
                below = np.flatnonzero(pw[:horizon] < power)
                reps = int(below[-1]) + 2 if below.size else 1
                return first, horizon, reps, float(pw[reps - 1])
        elif hi == max_reps:
            raise ValueError(
                f"detecting coverage {p1:.6g} (claimed {claimed:g}) with power {power:g} at "
                f"level {level:.3g} needs more than max_reps = {max_reps} replicates; raise "
                "max_reps, or plan a larger shortfall or a lower power"
            )
        hi *= 4
