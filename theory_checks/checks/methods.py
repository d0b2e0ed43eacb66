"""Methods and events a user's guarantee can name (``calcheck.define_guarantee``).

A *method* is a calibrator the suite simulates on laws with exact truth (an experiment
builder); an *event* is what a guarantee bounds, evaluated against that truth. Each paper's
catalog lists the methods it brings in ``METHODS`` (method name -> :class:`MethodSpec`);
:func:`calcheck.theory_checks.catalog.methods` collects them. A method x event pair supplies the
keywords a user's bound is called with: the method's symbols (``n``, ``n_bins``, ...),
``alpha`` where the event is a high-probability one, and the data keywords
(:data:`DATA_KEYWORDS`) where the method records its calibration data per bin.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field

from .events import ALPHA_FREE, Event, Marginal, MeanAtMost, Within

__all__ = [
    "BINARY_EVENTS",
    "DATA_KEYWORDS",
    "PER_BIN_EVENTS",
    "EventSpec",
    "MethodSpec",
]

#: The data keywords a bound may ask for (one home), name -> meaning; each is given per
#: replicate, vectorised: ``(R, B)`` arrays have one row per replicate and one column per bin
#: (per level set of a user's calibrator), ``(R,)`` arrays one entry per replicate.
#: Which points they count depends on the method: histogram binning's own bins know the
#: points each bin averages; a calibrator object (a user's, scaling_binning) is seen only
#: through its outputs, so its level set holds every calibration point mapped to it, also
#: those it did not average (a sample-splitting calibrator's other split).
DATA_KEYWORDS = {
    "counts": "(R, B) calibration points counted in the bin. Histogram binning (umd, "
    "zadrozny_elkan, randomized_umd, ums, fixed_width): the points whose labels the bin "
    "averages (not UMD's B - 1 edge points, not UMS's first split). A calibrator of your "
    "own, and scaling_binning: every calibration point given to fit whose output is the "
    "level set's (summing to n), also the points it did not average: a sample-splitting "
    "calibrator averaged fewer (user guide, 'What the data keywords count'); its columns past "
    "its level sets are 0",
    "means": "(R, B) the sample mean of the labels of the points `counts` counts: histogram "
    "binning's prediction; for a calibrator of your own, not its prediction unless it "
    "averages exactly those labels; for a bin without points, the value predicted there",
    "variances": "(R, B) the biased sample variance (1/N) sum (y - mean)^2 of the labels of "
    "the points `counts` counts (0 for a bin without points)",
    "n_used": "(R,) `counts` summed: n - (B - 1) for umd and randomized_umd, the second "
    "split for ums, n for zadrozny_elkan and fixed_width; for a calibrator of your own and "
    "scaling_binning n (less the points whose output lies in a stretch left unresolved)",
}

#: Events whose bound may be a radius per bin ``(R, B)``: every output within its bin's
#: radius (a merged output within the largest radius of its bins), a fresh test point within
#: the radius of its bin. The others compare one statistic per replicate with one radius.
PER_BIN_EVENTS = ("conditional", "marginal")


@dataclass(frozen=True)
class EventSpec:
    """An event a method's outcome supports.

    Parameters
    ----------
    event : Event
        How successes and error / bound ratios are computed
        (:mod:`calcheck.theory_checks.checks.events`).
    claim : str
        Claimed success probability (key of :data:`calcheck.theory_checks.checks.events.CLAIMS`).
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
    data : tuple of str
        The data keywords (:data:`DATA_KEYWORDS`) the method supplies to a bound.
    data_build : callable or None
        ``data_build(law, **point) -> Experiment`` whose outcome records the data keywords,
        used in place of ``build`` for a bound that asks for one (None: ``build`` records
        them itself). Results of bounds that ask for none stay those of ``build``.
    """

    name: str
    description: str
    families: tuple[str, ...]
    grid_keys: tuple[str, ...]
    build: Callable
    symbols: tuple[str, ...]
    events: dict = field(default_factory=dict)
    exact_scheme: str | None = None
    data: tuple[str, ...] = ()
    data_build: Callable | None = None

    def supplied(self, event: str, data: bool = True) -> tuple[str, ...]:
        """The keywords a bound of ``event`` may ask for (sorted); ``data=False``: no data ones."""
        extra = ("alpha",) if self.events[event].uses_alpha else ()
        own = self.data if data else ()
        return tuple(sorted((*self.symbols, *own, *extra)))

    def with_data(self) -> MethodSpec:
        """The method as a bound that asks for data keywords runs it.

        Its experiments record the data (``data_build``). The exact scheme stays: a radius
        of each bin's label sum and size ``r(k, m)`` has an exact coverage at constant eta
        and a certified one (``calcheck.theory_checks.running.exact.radius_of``).
        """
        build = self.build if self.data_build is None else self.data_build
        return dataclasses.replace(self, build=build, data_build=None)
