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

Bounded work. The answer is that of the exhaustive search (the exact power at every count
from 1 up), but found without evaluating every count: the critical count rises by 0 or 1 from
one count to the next, which bounds the power over a block of counts from the block's two
ends, and Zubkov and Serov's inequalities bound each binomial tail within about one binomial
mass at no cost (:func:`_tail_bounds`); a branch and bound over blocks then evaluates the
exact power only where the sawtooth crosses the target, some 2 / shortfall counts. So the
work grows with 1 / shortfall (not with the count found), and each argument is checked before
any of it: a shortfall below ``MIN_SHORTFALL``, a ``max_reps`` above
``MAX_REPS_LIMIT`` and, for a bound factor, sizes whose exact coverage needs more than
``COVERAGE_BYTES`` are refused in one line that says the largest size that fits. Within
them a plan takes at most a few seconds and under 200 MB (tests/faults/test_bounded_work.py).
The answers are the exhaustive search's wherever that was compared (200 argument sets, and
the tests'): the bounds hold in exact arithmetic, and only decide with a margin over rounding.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

# scipy and the engine are imported where they are used: ``calcheck plan`` refuses a bad
# argument in well under a second, before scipy.stats (about half a second) loads
from ..checks.budgets import DEFAULT_FALSE_ALARM
from ..results.export import Exportable
from ..results.verdicts import critical_count

__all__ = [
    "COVERAGE_BYTES",
    "MAX_REPS",
    "MAX_REPS_LIMIT",
    "MIN_SHORTFALL",
    "ReplicatePlan",
    "critical_counts",
    "plan",
    "rejection_power",
]

#: The largest replicate count :func:`plan` searches by default.
MAX_REPS = 10_000_000
#: The largest ``max_reps``. A binomial tail near its middle costs scipy more as the count
#: grows (about 40 us at 2e8 trials), and no check runs 10**9 replicates of a cell.
MAX_REPS_LIMIT = 10**9
#: The smallest shortfall planned. The work grows as 1 / shortfall (the counts where the
#: power's sawtooth crosses the target, and the blocks that bound them at each scale): at
#: 1e-4 a plan takes up to about two seconds and 20 MB besides the imports (the worst
#: arguments: alpha = 0.5, power = 0.5, 10**9 replicates); at the suite's settings such a
#: shortfall already needs 1.7e8 replicates, 17 times the default max_reps.
MIN_SHORTFALL = 1e-4
#: Memory the exact coverage of a bound factor may take (plan stays within 200 MB).
COVERAGE_BYTES = 80_000_000
#: Bytes a bin of the exact coverage of a fixed radius, and a radius of a data radius's
#: table (measured, rounded up: see :func:`_check_coverage_fits`).
_BYTES_PER_BIN = 100
_BYTES_PER_RADIUS = 80
#: A shortfall computed as ``claimed - true_coverage`` may round just below the one meant.
_ROUNDING = 1.0 - 1e-9
#: Blocks of at most this many counts are evaluated count by count (cheaper than bounding).
_LEAF = 4
#: Margin by which a bound must clear the target to decide a block or a count (rounding of
#: the binomial tails is far below it; what it does not decide is evaluated exactly).
_SLACK = 1e-14
#: Margin on the signed root of :func:`_tail_bounds`, far above its rounding (under 1e-10
#: at 2e9 trials), so that the bounds stay bounds in floating point.
_ROOT_MARGIN = 1e-7


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
        from calcheck.simulations.experiments.base import BLOCK_REPS

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
    Started from the normal approximation (:func:`_critical_guess`, right for most counts at
    the suite's levels: two binomial tails confirm it); where it is wrong, bracketed by
    doubling steps away from it and bisected, a few tails more (never the binomial
    quantile's own search, which at levels such as 1e-300 takes long and warns).
    """
    r = np.asarray(reps, dtype=np.int64)
    guess = _critical_guess(r, claimed, level)
    fits = _below(guess, r, claimed, level)  # the answer is the guess or above it
    right = fits & ~_below(guess + 1, r, claimed, level)
    if right.all():
        return guess
    wrong = np.flatnonzero(~right)
    c = guess.copy()
    c[wrong] = _bracketed(r[wrong], guess[wrong], fits[wrong], claimed, level)
    return c


def _below(k: np.ndarray, r: np.ndarray, claimed: float, level: float) -> np.ndarray:
    """``P(Bin(r, claimed) <= k) < level``: true for k = -1, false for k >= r (level < 1)."""
    from scipy import stats

    inside = (k >= 0) & (k < r)
    tail = np.ones(k.shape)
    if inside.any():
        tail[inside] = stats.binom.cdf(k[inside], r[inside], claimed)
    return (k < 0) | (inside & (tail < level))


def _bracketed(r, guess, fits, claimed: float, level: float) -> np.ndarray:
    """The critical counts where the guess is wrong: doubling steps away from it, then bisection.

    ``fits`` says on which side the answer lies: at or above the guess (the guess is below
    the level), or under it.
    """
    lo = np.where(fits, guess, -1)  # below the level: the answer is >= lo
    hi = np.where(fits, r, guess)  # not below it: the answer is < hi
    step = np.ones_like(r)
    going = hi - lo > 1
    while going.any():  # double the step until a probe lands on the far side
        probe = np.where(fits, np.minimum(lo + step, hi - 1), np.maximum(hi - step, lo + 1))
        ok = _below(probe, r, claimed, level)
        lo = np.where(going & ok, probe, lo)
        hi = np.where(going & ~ok, probe, hi)
        going &= (ok == fits) & (hi - lo > 1)
        step *= 2
    while (hi - lo > 1).any():
        middle = (lo + hi) // 2
        ok = _below(middle, r, claimed, level)
        lo = np.where(ok, middle, lo)
        hi = np.where(ok, hi, middle)
    return lo


def _critical_guess(r: np.ndarray, claimed: float, level: float) -> np.ndarray:
    """The critical count by the normal approximation with a skewness term (Cornish-Fisher).

    Exact for about 98% of the counts at the suite's levels, off by one or two elsewhere:
    only a start for :func:`critical_counts`, which checks it.
    """
    from scipy import special

    n = r.astype(float)
    z = float(special.ndtri(level))
    sd = np.sqrt(n * claimed * (1.0 - claimed))
    skew = np.divide(1.0 - 2.0 * claimed, sd, out=np.zeros_like(sd), where=sd > 0)
    with np.errstate(over="ignore", invalid="ignore"):
        quantile = n * claimed + sd * (z + skew * (z * z - 1.0) / 6.0) - 0.5
    guess = np.clip(np.nan_to_num(np.ceil(quantile) - 1.0, nan=-1.0), -1.0, n)
    return guess.astype(np.int64)


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
    from scipy import stats

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
    """Exact coverage of ``guarantee``'s bound times ``bound_factor`` at constant eta.

    The coverage alone: not :func:`~calcheck.theory_checks.running.exact.exact_coverage`,
    whose certificate over every law (unused here) takes minutes at n = 10**6.
    """
    from calcheck.simulations.validation import check_binning_sizes

    if guarantee is None or n is None or n_bins is None:
        raise ValueError(
            "bound_factor needs guarantee, n and n_bins (the exact coverage of the bound "
            f"times the factor is computed there), got guarantee={guarantee!r}, n={n!r}, "
            f"n_bins={n_bins!r}"
        )
    check_binning_sizes(n, n_bins)  # before the registry and scipy.stats load: refused at once
    from calcheck.bounds import registry
    from calcheck.simulations.exact_coverage import exact_coverage as coverage_at
    from calcheck.simulations.radius_coverage import exact_radius_coverage

    from ..user.guarantees import guarantee_id
    from .exact import _route, radius_of

    gid = guarantee_id(guarantee)
    registry.get(gid)
    scheme, event = _route(gid)
    _check_coverage_fits(gid, n, n_bins, scheme)
    radius = radius_of(gid, n=n, n_bins=n_bins, alpha=alpha, scheme=scheme)
    if not callable(radius):
        eps = bound_factor * radius
        return float(coverage_at(n, n_bins, eta, eps, event=event, scheme=scheme))

    def scaled(k, m):  # a radius read off each bin's data, r(k, m): scaled count by count
        return bound_factor * radius(k, m)

    return exact_radius_coverage(n, n_bins, eta, scaled, event=event, scheme=scheme)


def _check_coverage_fits(gid: str, n, n_bins, scheme: str) -> None:
    """Refuse sizes whose exact coverage would not fit ``COVERAGE_BYTES``, before it runs.

    A fixed radius holds about :data:`_BYTES_PER_BIN` bytes a bin (the bins' sizes, masses
    and coverages; measured: 97 MB at 10**6 bins); a radius read off each bin's data holds
    a table of it for every label sum of every bin, ``(largest bin + 1) x n_bins`` entries
    of about :data:`_BYTES_PER_RADIUS` bytes each (measured: 74 MB at n = 10**6, B = 10),
    besides what the user's bound allocates on it.
    """
    from calcheck.bounds import registry
    from calcheck.simulations.exact_coverage import bin_point_counts

    from ..checks.methods import DATA_KEYWORDS

    sizes = bin_point_counts(n, n_bins, scheme)  # validates n and n_bins, names them
    if set(registry.get(gid).parameters) & set(DATA_KEYWORDS):
        entries = (int(sizes.max()) + 1) * int(n_bins)
        if entries * _BYTES_PER_RADIUS > COVERAGE_BYTES:
            # bins of at most m labels: n up to m B (umd's bins hold (n + 1) / B - 1)
            largest = (COVERAGE_BYTES // (_BYTES_PER_RADIUS * int(n_bins)) - 1) * int(n_bins)
            raise ValueError(
                f"n = {n} with n_bins = {n_bins} is too large for plan's exact coverage of "
                f"{gid}, whose radius reads each bin's data: a table of {entries} radii (one "
                f"for every label sum of every bin, about {entries * _BYTES_PER_RADIUS / 1e6:.0f}"
                f" MB) against plan's {COVERAGE_BYTES / 1e6:.0f} MB; the largest n that fits "
                f"with n_bins = {n_bins} is about {largest}"
            )
    elif int(n_bins) * _BYTES_PER_BIN > COVERAGE_BYTES:
        raise ValueError(
            f"n_bins = {n_bins} is too large for plan's exact coverage (about "
            f"{_BYTES_PER_BIN} bytes a bin, {int(n_bins) * _BYTES_PER_BIN / 1e6:.0f} MB, "
            f"against plan's {COVERAGE_BYTES / 1e6:.0f} MB); the largest n_bins that fits is "
            f"{COVERAGE_BYTES // _BYTES_PER_BIN}"
        )


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
        The largest count searched, at most ``MAX_REPS_LIMIT`` (10**9).

    Returns
    -------
    ReplicatePlan

    Raises
    ------
    ValueError
        For not exactly one of shortfall / true_coverage / bound_factor, ``guarantee``,
        ``n``, ``n_bins`` or ``eta`` without ``bound_factor``, a value out of its range
        (named and echoed), a bound factor whose bound still holds exactly (no count
        detects it), or a shortfall that needs more than ``max_reps`` replicates. Before any
        work: a shortfall below ``MIN_SHORTFALL`` (1e-4; also as a true coverage or a
        bound factor's exact coverage), a ``max_reps`` above ``MAX_REPS_LIMIT``, and
        sizes ``n``, ``n_bins`` whose exact coverage needs more than ``COVERAGE_BYTES``;
        each message says the largest size that fits.

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
        whole = isinstance(max_reps, int | np.integer) and not isinstance(max_reps, bool)
        if not whole or not 2 <= max_reps <= MAX_REPS_LIMIT:
            raise ValueError(
                f"max_reps must be an integer in [2, {MAX_REPS_LIMIT}] (the largest count plan "
                f"searches), got {max_reps!r}"
            )
        max_reps = int(max_reps)
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
            if shortfall < MIN_SHORTFALL:
                raise ValueError(
                    f"shortfall must be at least {MIN_SHORTFALL:g}, got {self.shortfall!r}: "
                    + _too_small(shortfall, test)
                )
            return replace(self, true_coverage=claimed - shortfall)
        p1 = _number("true_coverage", self.true_coverage, 0.0, claimed, low_open=False)
        if claimed - p1 < MIN_SHORTFALL * _ROUNDING:
            raise ValueError(
                f"true_coverage must be at most {claimed - MIN_SHORTFALL:.10g}, "
                f"{MIN_SHORTFALL:g} below claimed {claimed:g}, got {self.true_coverage!r}: "
                + _too_small(claimed - p1, test)
            )
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
        if claimed - p1 < MIN_SHORTFALL * _ROUNDING:
            raise ValueError(
                f"the bound of {guarantee} times {bound_factor:g} at n={n}, B={n_bins}, "
                f"eta={eta:g} has exact coverage {p1:.10g}, less than {MIN_SHORTFALL:g} below "
                f"claimed {claimed:g} (choose a smaller factor): " + _too_small(claimed - p1, test)
            )
        return replace(self, true_coverage=p1, bound_factor=bound_factor, eta=eta)


def _too_small(shortfall: float, test: _Test) -> str:
    """Why a shortfall below ``MIN_SHORTFALL`` is refused, and what it would need."""
    needs = _normal_reps(test.claimed, shortfall, test.power, test.level)
    return (
        f"the work of plan's exact search grows as 1 / shortfall, and {MIN_SHORTFALL:g} is "
        "the smallest shortfall it plans"
        + (f" (this one needs {needs} replicates by the normal approximation)" if needs else "")
    )


def _normal_reps(claimed, shortfall, power, level) -> str:
    """``"about 1.7e+10"``: the replicates a shortfall needs, by the normal approximation.

    The count R where ``Phi((sqrt(R) shortfall + z_level sd0) / sd1)`` reaches ``power``
    (``sd0``, ``sd1``: the Bernoulli deviations at the claimed and the true coverage), in
    logarithms so that a shortfall of 1e-300 still gives a number; empty below 1000.
    """
    from scipy import special

    p1 = claimed - shortfall
    spread = special.ndtri(power) * np.sqrt(p1 * (1.0 - p1)) - special.ndtri(level) * np.sqrt(
        claimed * (1.0 - claimed)
    )
    if not shortfall > 0 or not spread > 0:
        return ""
    digits = 2.0 * (np.log10(spread) - np.log10(shortfall))
    if digits < 3:
        return ""
    exponent = int(np.floor(digits))
    mantissa = round(10.0 ** (digits - exponent), 1)
    if mantissa >= 10:
        mantissa, exponent = 1.0, exponent + 1
    return f"about {mantissa:g}e+{exponent:02d}"


def _replicate_plan(test: _Test, target: _Target) -> ReplicatePlan:
    """The plan: the replicate counts :func:`_search` finds for a resolved target."""
    from calcheck.simulations.experiments.base import BLOCK_REPS

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


@dataclass
class _Blocks:
    """Blocks ``[start, end]`` of replicate counts with the critical counts at both ends.

    The critical count c(R) rises by 0 or 1 from one count to the next (``Bin(R + 1, p)`` is
    ``Bin(R, p)`` plus a Bernoulli), so on a block where it rises ``m = c(end) - c(start)``
    times the power ``P(Bin(R, p1) <= c(R))`` of every count is at most
    ``P(Bin(start + m, p1) <= c(end))`` (below ``start + m`` the count rose at most once a
    step and ``R - Bin(R, p1)`` is stochastically increasing; above it ``c(R) <= c(end)``)
    and at least ``P(Bin(end - m, p1) <= c(start))`` (the same from the other end). Both
    are off by about ``p0 (1 - p0)`` times the block's length in binomial masses, so a block
    far from where the power crosses the target is decided whole (:meth:`bounds`, with
    :func:`_tail_bounds` for the two tails: about one mass more, and no scipy tail).
    """

    start: np.ndarray
    end: np.ndarray
    c_start: np.ndarray
    c_end: np.ndarray

    def where(self, keep: np.ndarray) -> _Blocks:
        return _Blocks(self.start[keep], self.end[keep], self.c_start[keep], self.c_end[keep])

    def bounds(self, p1: float) -> tuple[np.ndarray, np.ndarray]:
        """``(upper, lower)``: bounds on the power of every count of each block."""
        rises = self.c_end - self.c_start
        upper = _tail_bounds(self.c_end, self.start + rises, p1)[1]
        lower = _tail_bounds(self.c_start, self.end - rises, p1)[0]
        return upper, lower

    def halves(self, claimed: float, level: float) -> _Blocks:
        """Each block split in two at its middle (two critical counts each)."""
        middle = (self.start + self.end) // 2
        c_middle = critical_counts(middle, claimed, level)
        c_next = critical_counts(middle + 1, claimed, level)
        return _Blocks(
            np.concatenate([self.start, middle + 1]),
            np.concatenate([middle, self.end]),
            np.concatenate([self.c_start, c_next]),
            np.concatenate([c_middle, self.c_end]),
        )


def _tail(c: np.ndarray, reps: np.ndarray, p1: float) -> np.ndarray:
    """``P(Bin(reps, p1) <= c)``, 0 where c is -1 (no count rejects)."""
    from scipy import stats

    return np.where(c >= 0, stats.binom.cdf(c, reps, p1), 0.0)


def _tail_bounds(c: np.ndarray, reps: np.ndarray, p: float) -> tuple[np.ndarray, np.ndarray]:
    """``(lower, upper)`` bounds on ``P(Bin(reps, p) <= c)`` that cost no binomial tail.

    Zubkov and Serov's inequalities: ``Phi(g(c)) <= P(Bin(n, p) <= c) <= Phi(g(c + 1))``
    with ``g(j) = sign(j - n p) sqrt(2 n KL(j / n || p))`` [1]_. Their gap is about one
    binomial mass, and a tail near the middle of a large binomial costs scipy some 40 us
    against well under one for these; checked against scipy's tails on about a million
    ``(c, n, p)`` with n up to 2e11 (tests/faults/test_bounded_work.py keeps a sample).

    References
    ----------
    .. [1] A. M. Zubkov and A. A. Serov, "A complete proof of universal inequalities for
           the distribution function of the binomial law", Theory Probab. Appl. 57(3),
           539-544 (2013).
    """
    from scipy import special

    c = np.asarray(c, dtype=float)
    n = np.asarray(reps, dtype=float)
    if p <= 0.0:  # Bin(n, 0) is 0: the tail is 1 from c = 0 on
        exact = np.where(c >= 0, 1.0, 0.0)
        return exact, exact
    inside = (c >= 0) & (c < n)
    lower = np.where(c >= n, 1.0, 0.0)
    upper = np.where(c >= 0, 1.0, 0.0)
    if inside.any():
        k, m = c[inside], n[inside]
        lower[inside] = special.ndtr(_signed_root(k, m, p) - _ROOT_MARGIN)
        upper[inside] = special.ndtr(_signed_root(k + 1.0, m, p) + _ROOT_MARGIN)
    # a bound that is not a number bounds nothing: the trivial ones (never a false decision)
    return np.nan_to_num(lower, nan=0.0), np.nan_to_num(upper, nan=1.0)


def _signed_root(k: np.ndarray, n: np.ndarray, p: float) -> np.ndarray:
    """``sign(k - n p) sqrt(2 n KL(k / n || p))`` for ``0 <= k <= n``, without cancellation.

    ``KL = p u(d / p) + (1 - p) u(-d / (1 - p))`` with ``d = k / n - p`` and
    ``u(t) = (1 + t) log(1 + t) - t`` (its series where |t| < 0.1): the textbook form
    subtracts two logarithms of ratios near 1 and loses every digit at 1e11 trials.
    """
    d = (k - n * p) / n
    kl = p * _entropy_gap(d / p) + (1.0 - p) * _entropy_gap(-d / (1.0 - p))
    return np.sign(d) * np.sqrt(2.0 * n * np.maximum(kl, 0.0))


def _entropy_gap(t: np.ndarray) -> np.ndarray:
    """``(1 + t) log(1 + t) - t`` for t >= -1, without cancellation near 0.

    Where |t| < 0.1, its series ``sum_{k >= 2} (-t)^k / (k (k - 1))`` to 20 terms (the rest
    is below 1e-19 of it).
    """
    from scipy import special

    t = np.maximum(t, -1.0)  # -d / (1 - p) at k = n rounds to just below -1
    small = np.abs(t) < 0.1
    out = special.xlogy(1.0 + t, 1.0 + t) - t
    if small.any():
        x = t[small]
        series = np.zeros_like(x)
        for k in range(21, 1, -1):  # Horner from the highest power
            series = series * x + (-1.0) ** k / (k * (k - 1))
        out[small] = series * x * x
    return out


def _spans(start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Every count of the blocks ``[start[i], end[i]]``, in order."""
    lengths = end - start + 1
    offsets = np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    return np.repeat(start, lengths) + offsets


@dataclass(frozen=True)
class _Crossing:
    """Where the exact power crosses the target: the counts :func:`_search` looks for."""

    claimed: float
    p1: float
    power: float
    level: float

    def power_at(self, reps) -> np.ndarray:
        """The exact power at each count (what :func:`rejection_power` computes)."""
        r = np.asarray(reps, dtype=np.int64)
        return _tail(critical_counts(r, self.claimed, self.level), r, self.p1)

    def reaches(self, reps: np.ndarray) -> np.ndarray:
        """Whether the exact power at each count is >= the target.

        :func:`_tail_bounds` decides most counts; the exact tail the others.
        """
        c = critical_counts(reps, self.claimed, self.level)
        lower, upper = _tail_bounds(c, reps, self.p1)
        reached = lower >= self.power + _SLACK
        unsure = ~reached & (upper >= self.power - _SLACK)
        if unsure.any():
            reached[unsure] = _tail(c[unsure], reps[unsure], self.p1) >= self.power
        return reached

    def extreme(self, lo: int, hi: int, *, reaching: bool) -> int | None:
        """The first count in ``[lo, hi]`` reaching the target, or the last short of it.

        ``reaching``: the smallest count with power >= the target; else the largest with
        power below it; None where there is none.

        Branch and bound, one level of blocks at a time (vectorised): a block that
        :meth:`_Blocks.bounds` shows holds no such count is dropped, one that holds only
        such counts gives a candidate (its first or last count), the others are halved;
        blocks of up to :data:`_LEAF` counts are evaluated count by count with the exact
        power, so the answer is the exhaustive search's. The bounds decide a block only with
        a margin of :data:`_SLACK` (rounding of the binomial tails cannot decide it).
        """
        ends = np.array([lo, hi], dtype=np.int64)
        c = critical_counts(ends, self.claimed, self.level)
        blocks = _Blocks(ends[:1], ends[1:], c[:1], c[1:])
        best = None
        while blocks.start.size:
            if best is not None:  # blocks beyond the candidate cannot improve on it
                blocks = blocks.where(blocks.start < best if reaching else blocks.end > best)
            leaf = blocks.end - blocks.start < _LEAF
            if leaf.any():
                counts = _spans(blocks.start[leaf], blocks.end[leaf])
                hit = self.reaches(counts)
                best = _better(best, counts[hit if reaching else ~hit], reaching)
                blocks = blocks.where(~leaf)
            if not blocks.start.size:
                break
            upper, lower = blocks.bounds(self.p1)
            every = lower >= self.power + _SLACK if reaching else upper < self.power - _SLACK
            none = upper < self.power - _SLACK if reaching else lower >= self.power + _SLACK
            best = _better(best, (blocks.start if reaching else blocks.end)[every], reaching)
            blocks = blocks.where(~every & ~none).halves(self.claimed, self.level)
        return best


def _better(best, counts: np.ndarray, reaching: bool) -> int | None:
    """The best of a candidate and some counts (None where there are neither).

    The smallest where ``reaching``, else the largest.
    """
    if counts.size:
        count = int(counts.min() if reaching else counts.max())
        best = count if best is None else (min(best, count) if reaching else max(best, count))
    return best


def _search(claimed, p1, power, level, max_reps):
    """(first count with power, horizon, smallest count holding it to the horizon, power).

    The exhaustive search's answer (every count from 1 up evaluated), found by
    :meth:`_Crossing.extreme` in about ``4 / (claimed - p1)`` exact evaluations.
    """
    from calcheck.simulations.experiments.base import BLOCK_REPS

    crossing = _Crossing(claimed, p1, power, level)
    first = crossing.extreme(1, max_reps, reaching=True)
    if first is None:
        needs = _normal_reps(claimed, claimed - p1, power, level)
        raise ValueError(
            f"detecting coverage {p1:.6g} (claimed {claimed:g}) with power {power:g} at "
            f"level {level:.3g} needs more than max_reps = {max_reps} replicates"
            + (f" ({needs} by the normal approximation)" if needs else "")
            + (
                f"; raise max_reps (plan searches up to {MAX_REPS_LIMIT}),"
                if max_reps < MAX_REPS_LIMIT
                else ", the most plan searches;"
            )
            + " or plan a larger shortfall or a lower power"
        )
    horizon = min(max(2 * first, first + 2 * BLOCK_REPS), max_reps)
    # below the first count every power is short of the target: search from it
    last_short = crossing.extreme(first, horizon, reaching=False)
    reps = (first - 1 if last_short is None else last_short) + 1
    return first, horizon, reps, float(crossing.power_at([reps])[0])
