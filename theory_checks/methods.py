"""Methods and events a user's guarantee can name (``calcheck.define_guarantee``).

A *method* is a calibrator the suite simulates on laws with exact truth (an experiment
builder); an *event* is what a guarantee bounds, evaluated against that truth. Each paper's
catalog lists the methods it brings in ``METHODS`` (method name -> :class:`MethodSpec`);
:func:`calcheck.theory_checks.catalog.methods` collects them. A method x event pair supplies the
keywords a user's bound is called with: the method's symbols (``n``, ``n_bins``, ...) and
``alpha`` where the event is a high-probability one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .events import ALPHA_FREE, Event, Marginal, MeanAtMost, Within

__all__ = ["BINARY_EVENTS", "EventSpec", "MethodSpec"]


@dataclass(frozen=True)
class EventSpec:
    """An event a method's outcome supports.

    Parameters
    ----------
    event : Event
        How successes and error / bound ratios are computed (:mod:`calcheck.theory_checks.events`).
    claim : str
        Claimed success probability (key of :data:`calcheck.theory_checks.events.CLAIMS`).
    quantifier : str
        The quantifier of a guarantee about this event (``bounds.guarantee.QUANTIFIERS``).
    description : str
        The event in words, with the bound as ``eps``.
    """

    event: Event
    claim: str
    quantifier: str
    description: str

    @property
    def uses_alpha(self) -> bool:
        """Whether the bound is called with ``alpha`` (high-probability events)."""
        return self.claim not in ALPHA_FREE


#: The events of a binning map on a binary law (outcome: per-output exact errors).
BINARY_EVENTS = {
    "conditional": EventSpec(
        Within("max_error"),
        "1-alpha",
        "conditional",
        "w.p. >= 1 - alpha, every output r of h has |E[Y | h(X) = r] - r| <= eps",
    ),
    "marginal": EventSpec(
        Marginal(),
        "1-alpha",
        "marginal",
        "w.p. >= 1 - alpha over the data and a fresh test point X, |E[Y | h(X)] - h(X)| <= eps",
    ),
    "ece": EventSpec(
        Within("l1_ece"),
        "1-alpha",
        "conditional",
        "w.p. >= 1 - alpha, the exact l1-ECE E|E[Y | h(X)] - h(X)| <= eps",
    ),
    "l2_ece": EventSpec(
        Within("l2_ece"),
        "1-alpha",
        "conditional",
        "w.p. >= 1 - alpha, the exact l2-ECE (E|E[Y | h(X)] - h(X)|^2)^(1/2) <= eps",
    ),
    "ece_mean": EventSpec(
        MeanAtMost("l1_ece"),
        "1-bound",
        "expectation",
        "E[l1-ECE] <= bound (no alpha; tested as P(U >= ECE) >= 1 - bound)",
    ),
}


@dataclass(frozen=True)
class MethodSpec:
    """A calibrator the suite simulates, as a user's guarantee names it.

    Parameters
    ----------
    name : str
        Method name (``"umd"``).
    description : str
        The calibrator, citing its paper and algorithm.
    families : tuple of str
        Law families it runs on.
    grid_keys : tuple of str
        Grid parameters (``("n", "n_bins")``).
    build : callable
        ``build(law, **point) -> Experiment``.
    symbols : tuple of str
        Keywords the experiment supplies to a bound (besides ``alpha``).
    events : dict
        Event name -> :class:`EventSpec`.
    exact_scheme : str or None
        Binning scheme of :func:`calcheck.simulations.exact_coverage.exact_coverage` whose exact
        coverage at constant eta equals this method's (None: not exactly computable).
    """

    name: str
    description: str
    families: tuple[str, ...]
    grid_keys: tuple[str, ...]
    build: Callable
    symbols: tuple[str, ...]
    events: dict = field(default_factory=dict)
    exact_scheme: str | None = None

    def supplied(self, event: str) -> tuple[str, ...]:
        """The keywords a bound of ``event`` is called with (sorted)."""
        extra = ("alpha",) if self.events[event].uses_alpha else ()
        return tuple(sorted((*self.symbols, *extra)))
