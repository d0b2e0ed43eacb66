"""The base of series results (rate, exponent, mean and trade-off checks) in the protocol.

A series check's result holds one entry per series (or member, or experiment) with its own
``violated`` flag; :class:`SeriesCheckResult` turns them into the protocol's verdict
(:mod:`~calcheck.theory_checks.results.protocol`): violated if any entry is, inconclusive or vacuous
when no entry reached a decision, consistent otherwise; ``passed`` also asks a guarantee's
same-path mutant to be caught.

A series result read from data (:func:`~calcheck.theory_checks.results.export.decode`) is
checked by :meth:`SeriesCheckResult.check_invariants`: each entry's tuples have one value per
point, its numbers are finite where the check computes finite ones, a trade-off member's
counts are of the result's replicates, and each level and ``violated`` flag is recomputed
and compared.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .export import Exportable
from .protocol import Mutant

__all__ = ["SeriesCheckResult"]


@dataclass(frozen=True)
class SeriesCheckResult(Exportable):
    """Series fits of a check over parameter series; violated if any series is."""

    check: object
    series: tuple
    reps: int
    false_alarm: float
    cells: tuple = ()
    mutant: Mutant | None = None
    verdict: str = field(init=False)
    passed: bool = field(init=False)

    def __post_init__(self):
        if any(s.violated for s in self.series):
            verdict = "violated"
        elif self.series and all(_powerless(s) for s in self.series):
            verdict = "vacuous" if any(_vacuous(s) for s in self.series) else "inconclusive"
        else:
            verdict = "consistent"
        object.__setattr__(self, "verdict", verdict)
        caught = self.mutant is None or self.mutant.caught
        object.__setattr__(self, "passed", self.verdict == self.check.expect and caught)

    def check_invariants(self) -> None:
        """Raise ValueError, naming the field, where the numbers cannot be a series check's.

        Called on a result read from data, never on one computed: ``reps >= 1``,
        ``false_alarm`` in (0, 1), the entries of the kind's class (a rate check's
        ``SeriesResult``, an exponent check's ``ExponentSeriesResult``, a mean check's
        ``MeanCellsResult``, a trade-off check's ``TradeoffMember``), and each entry's own
        invariants (one value per point, finite numbers, its level and ``violated`` flag
        recomputed). An entry of a class of no known kind (a plugin's) needs a boolean
        ``violated``.
        """
        reps, false_alarm = self.reps, self.false_alarm
        if isinstance(reps, bool) or not isinstance(reps, int | np.integer) or reps < 1:
            raise ValueError(f"reps must be a positive integer, got {reps!r:.40}")
        if not 0 < false_alarm < 1:  # NaN fails too
            raise ValueError(f"false_alarm must lie in (0, 1), got {false_alarm!r:.40}")
        expected = _ENTRY_CLASSES.get(self.kind)
        for i, entry in enumerate(self.series):  # all first: an entry's test reads the others
            name = type(entry).__name__
            if expected is not None and name != expected:
                raise ValueError(
                    f"series[{i}] must be a {expected} (a {self.kind} check's), got {name}"
                )
        for i, entry in enumerate(self.series):
            test = _ENTRY_CHECKS.get(type(entry).__name__)
            try:
                if test is not None:
                    test(entry, self)
                elif not isinstance(getattr(entry, "violated", None), bool | np.bool_):
                    raise ValueError(f"violated must be a bool, got {entry!r:.60}")
            except ValueError as exc:
                raise ValueError(f"series[{i}].{exc}") from None

    #: Kind of check named in ``repr``; subclasses say what a replicate count is per.
    kind_name = "check"
    #: The protocol's name of the kind.
    kind = "series"

    @property
    def powerless(self) -> tuple[str, ...]:
        """Series (or their points) that could not have failed, each with why."""
        out = []
        for s in self.series:
            why = getattr(s, "powerless_note", None)
            note = why() if callable(why) else ""
            if note:
                out.append(f"{s.name}: {note}")
        return tuple(out)

    def power_text(self) -> str:
        """The smallest wrong claim the check would have caught (its mutant)."""
        m = self.mutant
        return "-" if m is None else (m.claim if m.caught else "none found")

    def _settings(self) -> str:
        return f"{self.reps} replicates"

    def __repr__(self) -> str:
        kind = "negative control" if self.check.is_control else self.kind_name
        status = "as expected" if self.passed else "NOT as expected"
        lines = [
            f"<{type(self).__name__} {self.check.id} ({kind} of {self.check.guarantee}): "
            f"{self.verdict}, {status}; {self._settings()}"
        ]
        lines += [f"  {s.describe()}" for s in self.series]
        return "\n".join(lines) + ">"


def _powerless(series) -> bool:
    return bool(getattr(series, "inconclusive", False) or getattr(series, "vacuous", False))


def _vacuous(series) -> bool:
    return bool(getattr(series, "vacuous", False))


# ------------------------------------------------------------------ invariants of the entries
def _numbers(entry, name: str, size: int | None = None, per: str = "point of theta"):
    """The tuple field ``name`` of ``entry`` as floats: numbers only, ``size`` of them."""
    items = getattr(entry, name)
    if not isinstance(items, tuple) or not all(
        isinstance(x, int | float | np.integer | np.floating) and not isinstance(x, bool)
        for x in items
    ):
        raise ValueError(f"{name} must be a tuple of numbers, got {items!r:.80}")
    if size is not None and len(items) != size:
        raise ValueError(f"{name} must hold {size} values (one per {per}), got {len(items)}")
    return np.asarray(items, dtype=float)


def _finite(name: str, values, low: str = "") -> None:
    """Raise unless every value is finite (and ``> 0`` or ``>= 0`` as ``low`` says)."""
    values = np.atleast_1d(np.asarray(values, dtype=float))
    with np.errstate(invalid="ignore"):
        below = {"": False, "> 0": values <= 0, ">= 0": values < 0}[low]
    bad = ~np.isfinite(values) | below
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        at = f" at index {i}" if values.size > 1 else ""
        raise ValueError(
            f"{name} must be finite{' and ' + low if low else ''}, got {float(values[i])!r}{at}"
        )


def _interval(entry, name: str, *, finite: bool = True) -> None:
    """A ``(low, high)`` pair of numbers (finite, ``low <= high``, where ``finite``)."""
    pair = _numbers(entry, name, 2, "end of an interval")
    if finite:
        _finite(name, pair)
        if pair[0] > pair[1]:
            raise ValueError(f"{name} must have low <= high, got {tuple(pair.tolist())}")


def _level(entry, expected: float, how: str) -> None:
    """The entry's Bonferroni level is the result's false-alarm rate over its tests."""
    if entry.level != expected:
        raise ValueError(f"level must be {how} = {expected!r}, got {entry.level!r:.40}")


def _flag(entry, expected: bool, how: str) -> None:
    """``violated`` as the check decides it from the entry's own numbers."""
    if bool(entry.violated) != expected:
        raise ValueError(f"violated must be {expected} ({how}), got {entry.violated!r}")


def _setting(result, name: str) -> float | None:
    """A number of the result's check (``slack``, ``tolerance``); None where it has none."""
    value = getattr(result.check, name, None)
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    return float(value) if ok else None


def _rate_series(entry, result) -> None:
    """A rate check's series: thresholds, censoring and the slope's decision."""
    theta = _numbers(entry, "theta")
    size = theta.size
    _finite("theta", theta)
    n_star, h = _numbers(entry, "n_star", size), _numbers(entry, "h", size)
    _finite("h", h)
    censored = entry.censored
    if censored and (
        len(censored) != size or not all(isinstance(c, bool | np.bool_) for c in censored)
    ):
        raise ValueError(f"censored must hold one bool per point ({size}), got {censored!r:.80}")
    off = np.asarray(censored, dtype=bool) if censored else np.zeros(size, dtype=bool)
    # a threshold past the grid's last point is inf (censored); none is NaN or <= 0
    bad = np.isnan(n_star) | (n_star <= 0) | (np.isinf(n_star) & ~off)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"n_star must be > 0 (inf only at a censored point), got {float(n_star[i])!r} at "
            f"index {i}"
        )
    if not 0 <= entry.unbracketed <= size or (censored and entry.unbracketed != off.sum()):
        raise ValueError(
            f"unbracketed must count the censored points ({int(off.sum())} of {size}), got "
            f"{entry.unbracketed!r}"
        )
    measured = size - entry.unbracketed
    if entry.inconclusive != (measured < 3):
        raise ValueError(
            f"inconclusive must be {measured < 3} with {measured} measured thresholds (fewer "
            f"than 3 reach no verdict), got {entry.inconclusive!r}"
        )
    for name in ("slope_ci", "exponent_ci"):
        _interval(entry, name, finite=False)  # a bootstrap threshold off the grid: inf
    if not entry.inconclusive:
        _finite("slope", entry.slope)
        _finite("exponent", entry.exponent)
        _finite("c_fit", entry.c_fit, "> 0")
    _level(entry, result.false_alarm / len(result.series), "false_alarm / series")
    slack = _setting(result, "slack")
    if slack is not None:
        expected = not entry.inconclusive and bool(entry.slope_lower > 1.0 + slack)
        _flag(entry, expected, f"slope_lower {entry.slope_lower!r} against 1 + slack {slack:g}")


def _exponent_series(entry, result) -> None:
    """An exponent check's series: positive means and rates, finite fits."""
    theta = _numbers(entry, "theta")
    size = theta.size
    _finite("theta", theta, "> 0")
    _finite("means", _numbers(entry, "means", size), "> 0")
    _finite("h", _numbers(entry, "h", size), "> 0")
    for name in ("exponent", "claimed", "excess", "c_fit"):
        _finite(name, getattr(entry, name))
    _interval(entry, "exponent_ci")
    _interval(entry, "excess_ci")
    _level(entry, result.false_alarm / len(result.series), "false_alarm / series")
    tolerance = _setting(result, "tolerance")
    if tolerance is not None:
        lo, hi = entry.excess_ci
        expected = bool(lo > tolerance or hi < -tolerance)
        _flag(entry, expected, f"excess_ci {entry.excess_ci!r} against +-{tolerance:g}")


def _mean_cells(entry, result) -> None:
    """A mean check's cells: z-scores of their means and standard errors, the z-tests."""
    from scipy.stats import norm  # half a second to import: only where data is read

    n_grid = _numbers(entry, "n_grid")
    size = n_grid.size
    _finite("n_grid", n_grid, "> 0")
    means = _numbers(entry, "means", size, "point of n_grid")
    z = _numbers(entry, "z", size, "point of n_grid")
    _finite("means", means)
    if entry.se:
        se = _numbers(entry, "se", size, "point of n_grid")
        _finite("se", se, ">= 0")  # 0: a statistic constant in the cell
        with np.errstate(divide="ignore", invalid="ignore"):
            expected = np.where(se > 0, means / se, np.where(means == 0, 0.0, np.inf))
        if not np.array_equal(z, expected):
            i = int(np.flatnonzero(z != expected)[0])
            raise ValueError(
                f"z must be means / se, got {float(z[i])!r} at index {i} for mean "
                f"{float(means[i])!r} and se {float(se[i])!r}"
            )
    elif np.isnan(z).any():
        _finite("z", z)
    _interval(entry, "detectable")
    _finite("detectable", entry.detectable, ">= 0")
    cells = sum(len(s.means) for s in result.series)
    _level(entry, result.false_alarm / cells, "false_alarm / cells")
    p = 2 * norm.sf(np.abs(z))
    _flag(entry, bool(np.any(p < entry.level)), "a cell's two-sided p-value below level")


def _tradeoff_member(entry, result) -> None:
    """A trade-off member: its two tests are of the result's replicates at the claimed rates."""
    alpha = entry.alpha
    if not 0 < alpha < 0.5:  # 1 - 2 alpha is the width test's claimed rate
        raise ValueError(f"alpha must lie in (0, 0.5), got {alpha!r:.40}")
    _finite("median_width", entry.median_width, ">= 0")
    for name, claimed in (("wide", 1 - 2 * alpha), ("valid", 1 - alpha)):
        verdict = getattr(entry, name)
        if verdict.trials != result.reps:
            raise ValueError(
                f"{name}.trials must be the result's reps ({result.reps}), got {verdict.trials!r}"
            )
        if verdict.claimed != claimed:
            raise ValueError(
                f"{name}.claimed must be {claimed!r} at alpha {alpha!r}, got {verdict.claimed!r}"
            )
        expected = result.false_alarm / (2 * len(result.series))
        if verdict.level != expected:
            raise ValueError(
                f"{name}.level must be false_alarm / (2 tests x members) = {expected!r}, got "
                f"{verdict.level!r}"
            )


#: Each kind's class of entries (by name: the series classes live above this layer).
_ENTRY_CLASSES = {
    "rate": "SeriesResult",
    "exponent": "ExponentSeriesResult",
    "mean": "MeanCellsResult",
    "tradeoff": "TradeoffMember",
}
#: The invariants of an entry read from data, by its class's name.
_ENTRY_CHECKS = {
    "SeriesResult": _rate_series,
    "ExponentSeriesResult": _exponent_series,
    "MeanCellsResult": _mean_cells,
    "TradeoffMember": _tradeoff_member,
}
