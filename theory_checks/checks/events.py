"""Events and bound rules: what a check compares, and with which bound.

A guarantee speaks of a per-replicate event ("every output within eps", "a fresh test
point within eps", "E[ECE] <= b", ...). An :class:`Event` turns an experiment's outcome,
a radius and a miscoverage alpha into per-replicate successes and a continuous *ratio*
(error / radius for upper bounds, radius / statistic for lower-bound events; success iff
ratio <= 1 or < 1) whose quantiles measure tightness. A :class:`BoundRule` computes the
radius from a registered guarantee and the experiment's symbols -- as stated, or
deliberately wrong for a negative control -- so that controls reuse their guarantee's data.

Events
------
:class:`Within`
    ``stat <= radius`` (all entries of a per-bin statistic).
:class:`AtLeast`, :class:`Exceeds`
    ``stat >= radius`` (a count), ``stat > radius`` (Theorem 3's lower bound).
:class:`Marginal`
    a fresh test point within the radius, its bin drawn with the exact masses; the exact
    conditional probability (Rao-Blackwellised coverage) is reported as the estimate.
:class:`MeanAtMost`
    ``E[stat] <= bound`` for ``stat in [0, 1]``, tested as ``P(U >= stat) >= 1 - bound``
    with an independent uniform U (exact for any law of stat).
:class:`Identity`
    the guarantee's value equals a truth computed by another route, within ``tol``.
:class:`Ordered`
    pairs of statistics are ordered (no bound: Proposition 4's inequalities).
:class:`PathWithin`
    the documented exception: time-uniform events evaluated inside the experiment.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from numpy.exceptions import ComplexWarning

from calcheck.bounds import registry
from calcheck.simulations.experiments.base import ratio

from .per_bin import broadcast_radius, output_radius, test_bin

__all__ = [
    "CLAIMS",
    "MUTANT_FACTORS",
    "UNIT_STATISTICS",
    "AtLeast",
    "BoundRule",
    "Event",
    "EventValues",
    "Exceeds",
    "Identity",
    "Marginal",
    "MeanAtMost",
    "Ordered",
    "PathWithin",
    "Within",
    "constant",
    "other_guarantee",
    "real_bound_values",
    "stated",
    "statistic_sup",
    "substitute",
]

#: Claimed probability of an event's success, from alpha and the (median) bound.
CLAIMS: dict[str, Callable[[float, float], float]] = {
    "1-alpha": lambda a, b: 1.0 - a,
    "1-alpha/2": lambda a, b: 1.0 - a / 2.0,
    "1-alpha/3": lambda a, b: 1.0 - a / 3.0,
    "1-2alpha/3": lambda a, b: 1.0 - 2.0 * a / 3.0,
    "1-2alpha": lambda a, b: 1.0 - 2.0 * a,
    "alpha": lambda a, b: a,
    "one": lambda a, b: 1.0,
    # an expectation bound E[Z] <= b for Z in [0, 1], tested as P(U >= Z) >= 1 - b
    "1-bound": lambda a, b: 1.0 - b,
}
#: Claims that do not depend on alpha (the check has one cell per experiment).
ALPHA_FREE = ("one", "1-bound")

#: Statistics known to lie in [0, 1] (one home): a radius >= 1 on one of them cannot be
#: exceeded, so a replicate where every radius reaches 1 holds by construction (vacuous).
#: Each is a distance between two quantities in [0, 1] (a bin's label mean and its
#: prediction, a mass and its estimate, a KS distance) or a calibration error built from them.
UNIT_STATISTICS = frozenset(
    {
        "max_error",
        "error",
        "test_point_error",
        "test_error",
        "class_max_error",
        "class_test_error",
        "mass_error",
        "l1_ece",
        "l2_ece",
        "l2_ece_sq",
        "cw_ece",
        "ks",
        "ks_pairs",
    }
)

#: Factors a same-path mutant tightens a claim by (largest first): the mutant of a check
#: is the stated claim tightened by the largest of these that the check catches.
MUTANT_FACTORS = (0.95, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.05)


def statistic_sup(name: str) -> float:
    """The largest value statistic ``name`` can take (inf where calcheck does not know one)."""
    return 1.0 if name in UNIT_STATISTICS else float("inf")


# ------------------------------------------------------------------------ bound rules
@dataclass(frozen=True)
class BoundRule:
    """How a check computes its radius from a guarantee and an experiment's symbols.

    Parameters
    ----------
    name : str
        ``"stated"`` for the guarantee as registered; a control names what it changes.
    substitutions : tuple of (str, callable)
        Symbols replaced before the guarantee is evaluated: ``(name, f(symbols))``.
    guarantee : str or None
        Evaluate this registered guarantee instead (e.g. a marginal radius used for a
        conditional event).
    function : callable or None
        A radius of its own, ``f(symbols, alpha)`` (a deliberately wrong bound).
    description : str
    """

    name: str = "stated"
    substitutions: tuple = ()
    guarantee: str | None = None
    function: Callable | None = None
    description: str = ""
    scale: float = 1.0

    def radius(self, guarantee_id: str, symbols: dict, alpha):
        """The radius at miscoverage ``alpha`` (None for alpha-free guarantees).

        Raises
        ------
        ValueError
            Where the bound returns complex values (naming the guarantee).
        """
        pool = dict(symbols)
        for name, f in self.substitutions:
            pool[name] = f(symbols)
        if self.function is not None:
            what = f"the bound rule {self.name!r} of {guarantee_id}"
            return self.scale * real_bound_values(lambda: self.function(pool, alpha), what)
        g = registry.get(self.guarantee or guarantee_id)
        if alpha is not None:
            pool["alpha"] = alpha
        kwargs = {k: pool[k] for k in g.parameters if k in pool}
        return self.scale * real_bound_values(lambda: g.function(**kwargs), f"the bound of {g.id}")


def real_bound_values(evaluate: Callable, what: str) -> np.ndarray:
    """``evaluate()`` (a bound's values) as floats; complex values are refused.

    Casting complex values to float drops their imaginary part with only a numpy warning,
    and the check would go on with numbers the bound never returned (``sqrt`` of a
    negative argument, say). The cast may happen inside the bound's own wrapper (a user's
    bound is cast there), so numpy's ComplexWarning is an error while it is evaluated.

    Parameters
    ----------
    evaluate : callable
        Evaluates the bound, without arguments.
    what : str
        The bound, named in the error (``"the bound of mine.thm1"``).

    Raises
    ------
    ValueError
        Where the values are complex (even with a zero imaginary part).
    """
    with warnings.catch_warnings():
        warnings.simplefilter("error", ComplexWarning)
        try:
            raw = evaluate()
            if not np.iscomplexobj(raw):
                return np.asarray(raw, dtype=float)
        except ComplexWarning:  # cast to float inside the bound's wrapper: complex all the same
            pass
    raise ValueError(
        f"{what} returned complex values; a bound must return real numbers >= 0 (a "
        "complex value is never cast to real: its imaginary part would be dropped)"
    )


def stated() -> BoundRule:
    """The guarantee's own bound."""
    return BoundRule()


def substitute(name: str, description: str = "", **subs: Callable) -> BoundRule:
    """The guarantee's bound with symbols replaced (``n=lambda s: s["n"] * s["n_bins"]``)."""
    return BoundRule(name, tuple(sorted(subs.items())), description=description)


def other_guarantee(name: str, guarantee_id: str, description: str = "") -> BoundRule:
    """Another registered guarantee's bound (e.g. eps_1 for a conditional event)."""
    return BoundRule(name, guarantee=guarantee_id, description=description)


def scaled(factor: float, description: str = "") -> BoundRule:
    """The guarantee's own bound times ``factor`` (a sharper negative control when < 1)."""
    if not (0 < factor < 1):
        raise ValueError(f"factor must lie in (0, 1), got {factor!r}")
    text = description or f"the stated bound times {factor:g}"
    return BoundRule(f"times_{factor:g}", description=text, scale=float(factor))


def constant(name: str, value: float, description: str = "") -> BoundRule:
    """A constant radius (an event with a fixed threshold, e.g. width >= 1/2)."""
    return BoundRule(name, function=lambda symbols, alpha: value, description=description)


# ----------------------------------------------------------------------------- events
def _per_output(outcome, radius) -> EventValues:
    """Every output of positive mass within its radius (``max_error`` with a per-bin radius).

    Outputs of zero mass (NaN error, padding) are not in Range(h): they neither fail nor
    succeed. A replicate is vacuous when every output of positive mass has a radius >= 1.
    """
    r = output_radius(outcome, radius)
    live = np.asarray(outcome.mass) > 0
    per_bin = np.where(live, ratio(np.nan_to_num(outcome.error), r), 0.0)
    worst = per_bin.max(axis=1)
    vacuous = np.all(~live | (r >= statistic_sup("max_error")), axis=1)
    bound = _median_bound(np.where(live, r, np.nan))
    return EventValues(worst <= 1.0, worst, float((worst <= 1.0).mean()), bound, vacuous)


@dataclass(frozen=True)
class EventValues:
    """Per-replicate successes and ratios of one (experiment, alpha) cell.

    ``vacuous`` marks the replicates in which the event holds by construction whatever the
    data (an infinite radius: e.g. a bin without calibration points); None where the event
    does not say.
    """

    success: np.ndarray
    ratio: np.ndarray
    estimate: float
    bound: float
    vacuous: np.ndarray | None = None


def _median_bound(radius) -> float:
    r = np.asarray(radius, dtype=float)
    finite = r[np.isfinite(r)]
    return float(np.median(finite)) if finite.size else float("inf")


@dataclass(frozen=True)
class Event:
    """Base of events: ``evaluate(experiment, outcome, radius, alpha) -> EventValues``."""

    statistic: str = ""
    uses_bound: bool = field(default=True, init=False)
    #: Whether the event draws randomness of its own (a fresh test point, a uniform U):
    #: its success set cannot imply another event's by construction.
    randomised: bool = field(default=False, init=False)

    def describe(self) -> str:
        """Short name for reports."""
        return f"{type(self).__name__.lower()}({self.statistic})"

    def tighten(self, radius, factor: float):
        """The radius of the claim tightened by ``factor`` in (0, 1) (an upper bound shrinks)."""
        return np.asarray(radius, dtype=float) * factor

    def tightened_text(self, factor: float) -> str:
        """What the claim tightened by ``factor`` says (reports)."""
        return f"the stated bound times {factor:g}"

    def evaluate_mutant(self, experiment, outcome, radius, alpha, factor: float, values):
        """Successes of the claim tightened by ``factor`` on the same outcome (a mutant).

        ``values`` are the stated claim's :class:`EventValues` (events without a bound
        tighten their ratio). Returns ``(success, bound)``: the bound enters the claim of
        expectation events.
        """
        v = self.evaluate(experiment, outcome, self.tighten(radius, factor), alpha)
        return v.success, v.bound

    def _stat(self, experiment, outcome, alpha):
        return np.asarray(experiment.statistic(outcome, self.statistic, alpha), dtype=float)


@dataclass(frozen=True)
class Within(Event):
    """``stat <= radius``; for a per-bin statistic ``(R, B)``, every bin within its radius."""

    def evaluate_mutant(self, experiment, outcome, radius, alpha, factor, values):
        """``stat <= factor * radius`` in every bin: the worst ratio ``<= factor``.

        The ratio is ``max_b stat_b / radius_b``, so scaling every radius by ``factor`` scales
        it by ``1 / factor``: the same event, without computing the statistic again.
        """
        return values.ratio <= factor, values.bound * factor

    def evaluate(self, experiment, outcome, radius, alpha) -> EventValues:
        """Successes and ratios."""
        stat = self._stat(experiment, outcome, alpha)
        if self.statistic == "max_error" and stat.ndim == 1 and np.ndim(radius) == 2:
            return _per_output(outcome, radius)  # a radius per bin: every output within its own
        full = broadcast_radius(radius, stat.shape, self.statistic)
        r = ratio(stat, full)
        # an infinite radius, or one at least the statistic's largest value, cannot be exceeded
        vacuous = full >= statistic_sup(self.statistic)
        if r.ndim == 2:
            r = r.max(axis=1)
            vacuous = vacuous.all(axis=1)
        success = r <= 1.0
        return EventValues(success, r, float(success.mean()), _median_bound(radius), vacuous)


@dataclass(frozen=True)
class AtLeast(Event):
    """``stat >= radius`` (a count that must reach a bound); ratio ``radius / stat``.

    With ``strict=True``, ``stat > radius`` (see :class:`Exceeds`).
    """

    strict: bool = False

    def tighten(self, radius, factor: float):
        """A lower bound tightened by ``factor`` rises: ``radius / factor``."""
        return np.asarray(radius, dtype=float) / factor

    def tightened_text(self, factor: float) -> str:
        """What the claim tightened by ``factor`` says (reports)."""
        return f"the stated lower bound divided by {factor:g}"

    def evaluate(self, experiment, outcome, radius, alpha) -> EventValues:
        """Successes and ratios."""
        stat = self._stat(experiment, outcome, alpha)
        radius = np.broadcast_to(np.asarray(radius, dtype=float), stat.shape)
        success = stat > radius if self.strict else stat >= radius
        vacuous = np.isneginf(radius)
        if vacuous.ndim == 2:
            vacuous = vacuous.all(axis=1)
        return EventValues(
            success, ratio(radius, stat), float(success.mean()), _median_bound(radius), vacuous
        )


@dataclass(frozen=True)
class Exceeds(AtLeast):
    """``stat > radius`` (an impossibility: the error exceeds a lower bound)."""

    strict: bool = True


@dataclass(frozen=True)
class Marginal(Event):
    """A fresh test point within the radius (outcome: a :class:`BinOutcome`)."""

    statistic: str = "test_point_error"
    randomised: bool = field(default=True, init=False)

    def evaluate_mutant(self, experiment, outcome, radius, alpha, factor, values):
        """The same test point within ``factor`` times the radius: its ratio ``<= factor``."""
        return values.ratio <= factor, values.bound * factor

    def evaluate(self, experiment, outcome, radius, alpha) -> EventValues:
        """Successes (drawn test point) and the exact conditional coverage as estimate.

        A radius per bin ``(R, B)`` is read at the test point's bin (a merged output's: the
        largest of its bins'); the estimate is then ``sum_b w_b 1{err_b <= radius_b}``.
        """
        err = outcome.test_point_error
        if np.ndim(radius) == 2:
            per_bin = output_radius(outcome, radius)
            ok = np.nan_to_num(outcome.error, nan=np.inf) <= per_bin
            estimate = float(np.sum(outcome.mass * ok, axis=1).mean())
            radius = np.take_along_axis(per_bin, test_bin(outcome)[:, None], axis=1)[:, 0]
            return EventValues(
                err <= radius,
                ratio(err, radius),
                estimate,
                _median_bound(np.where(outcome.mass > 0, per_bin, np.nan)),
                radius >= statistic_sup("test_point_error"),
            )
        radius = broadcast_radius(radius, err.shape, self.statistic)
        estimate = float(outcome.marginal_probability(radius).mean())
        return EventValues(
            err <= radius,
            ratio(err, radius),
            estimate,
            _median_bound(radius),
            radius >= statistic_sup("test_point_error"),
        )


@dataclass(frozen=True)
class MeanAtMost(Event):
    """``E[stat] <= bound``, tested as ``P(U >= stat) >= 1 - bound`` (claim ``1-bound``)."""

    randomised: bool = field(default=True, init=False)

    def evaluate(self, experiment, outcome, radius, alpha) -> EventValues:
        """Successes ``1{U >= stat}``; the ratio is ``stat / bound``."""
        stat = self._stat(experiment, outcome, alpha)
        radius = np.broadcast_to(radius, stat.shape)
        success = outcome.test_u[:, 1] >= stat
        return EventValues(success, ratio(stat, radius), float(stat.mean()), _median_bound(radius))


@dataclass(frozen=True)
class Identity(Event):
    """The guarantee's value (the "radius") equals ``stat`` within ``tol`` everywhere."""

    tol: float = 1e-10

    def tighten(self, radius, factor: float):
        """The value perturbed: ``radius * factor`` (an exact claim of another constant)."""
        return np.asarray(radius, dtype=float) * factor

    def evaluate(self, experiment, outcome, radius, alpha) -> EventValues:
        """Successes iff ``max |value - truth| <= tol``; ratio ``max diff / tol``."""
        truth = self._stat(experiment, outcome, alpha)
        diff = np.abs(np.asarray(radius) - truth)
        if diff.ndim == 2:
            diff = diff.max(axis=1)
        r = diff / self.tol
        return EventValues(r <= 1.0, r, float((r <= 1.0).mean()), self.tol)


@dataclass(frozen=True)
class Ordered(Event):
    """``a <= b + tol`` for every pair ``(a, b)`` of statistics (no bound)."""

    pairs: tuple = ()
    tol: float = 1e-12
    uses_bound: bool = field(default=False, init=False)

    def describe(self) -> str:
        """Short name for reports."""
        return " and ".join(f"{a} <= {b}" for a, b in self.pairs)

    def evaluate_mutant(self, experiment, outcome, radius, alpha, factor, values):
        """Every pair ordered with the larger side shrunk: ``a <= factor * b``."""
        return self._ordered(outcome, factor), float("nan")

    def _ordered(self, outcome, factor=1.0):
        success = np.ones(outcome.reps, dtype=bool)
        for a, b in self.pairs:
            success &= getattr(outcome, a) <= factor * getattr(outcome, b) + self.tol
        return success

    def evaluate(self, experiment, outcome, radius, alpha) -> EventValues:
        """Successes iff every pair is ordered; the ratio is ``a / b`` of the first pair."""
        success = self._ordered(outcome)
        first_a, first_b = self.pairs[0]
        r = ratio(getattr(outcome, first_a), getattr(outcome, first_b))
        return EventValues(success, r, float(success.mean()), float("nan"))


@dataclass(frozen=True)
class PathWithin(Event):
    """Time-uniform coverage evaluated inside a stream experiment (the documented exception).

    Reads the column of :class:`~calcheck.simulations.experiments.gpr20.StreamExperiment`'s ratios
    that belongs to alpha.
    """

    uses_bound: bool = field(default=False, init=False)

    def describe(self) -> str:
        """Short name for reports."""
        return "path_within"

    def evaluate_mutant(self, experiment, outcome, radius, alpha, factor, values):
        """The path within ``factor`` times its radius: worst ratio ``<= factor``."""
        return values.ratio <= factor, values.bound * factor

    def evaluate(self, experiment, outcome, radius, alpha) -> EventValues:
        """Successes iff the path's worst ratio at this alpha is <= 1."""
        j = experiment.alphas.index(alpha)
        r = outcome.ratio[:, j]
        return EventValues(
            r <= 1.0, r, float((r <= 1.0).mean()), _median_bound(outcome.radius[:, j])
        )
