"""Exact evidence first: a cell whose probability calcheck can compute exactly is decided by it.

Where the conditional mean ``eta = E[Y | S]`` is constant, the label sums of uniform-mass
bins are independent binomials given the bin counts (gr21 Lemma 2; constant eta makes this
unconditional), so the probability of a binning event is a finite sum
(:mod:`calcheck.simulations.exact_coverage`):

* the conditional event "every output within eps" (``Within("max_error")``) has probability
  ``prod_b P(|K_b / m_b - eta| <= eps)``, ``K_b ~ Bin(m_b, eta)`` (gr21 Theorem 3 eq. (8),
  Theorem 4 eq. (11) eps2, nch14 Theorem 3.1, gr22 Theorem 1 eq. (9));
* the marginal event "a fresh test point within eps" (``Marginal``) has
  probability ``sum_b E[w_b] P(|K_b / m_b - eta| <= eps)`` (gr21 Theorem 4 eq. (11) eps1,
  nch14 eqs. (1)/(9), gr22 Theorem 1 eq. (8)).

:func:`with_exact_evidence` attaches that value to a cell (``CellResult.exact_coverage``,
with the route in words) exactly when it applies: the experiment is uniform-mass binning on
a binary-label law (the parts of :func:`calcheck.simulations.conditional_coverage.parts`:
``umd``, ``zadrozny_elkan`` and ``randomized_umd`` with delta = 0 and lexicographic
tie-breaking, or top-label binning class by class), every part's law has one constant eta in
(0, 1) (its continuous part and its atoms alike), every part has ``n >= 2 B`` (every bin holds
a point), the event is one of the two above and the radius is one number for every replicate
and bin (a radius computed from each replicate's data is not a fixed eps: the cell is left as
it is). A cell with a known exact value is decided by it (``CellResult.violated``); the Monte
Carlo test stays beside it as a cross-check, and an exact value outside a very wide
(:data:`CROSS_CHECK_LEVEL`) Clopper-Pearson interval of the Monte Carlo coverage is a
disagreement beyond Monte Carlo error: a bug in one of the two routes, raised as
RuntimeError, never a verdict.

References
----------
.. [1] C. Gupta and A. Ramdas, "Distribution-free calibration guarantees for histogram
       binning without sample splitting", ICML 2021: Algorithms 1-2, Lemma 2, Theorems 3-4.
.. [2] C. Gupta and A. Ramdas, "Top-label calibration and multiclass-to-binary reductions",
       ICLR 2022: Algorithm 8, Theorem 1.
.. [3] M. P. Naeini, G. F. Cooper and M. Hauskrecht, "Binary classifier calibration:
       non-parametric approach", 2014: Theorem 3.1, eqs. (1), (9).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass

import numpy as np

from calcheck.simulations.certified_coverage import (
    certified_bins,
    certified_layout,
    smallest_factor,
)
from calcheck.simulations.conditional_coverage import parts
from calcheck.simulations.exact_coverage import (
    bin_point_counts,
    expected_bin_masses,
    layout_coverage,
)
from calcheck.simulations.laws.binary import BinaryLaw

from ..results.verdicts import clopper_pearson
from .events import Marginal, Within

__all__ = [
    "CROSS_CHECK_LEVEL",
    "CertifiedRoute",
    "ExactRoute",
    "certified_route",
    "constant_eta",
    "cross_check",
    "exact_route",
    "with_exact_evidence",
]

#: Miscoverage of the two-sided Clopper-Pearson interval of the Monte Carlo coverage that
#: the exact value must lie in: outside it, the two routes disagree beyond Monte Carlo error.
CROSS_CHECK_LEVEL = 1e-6
#: How close (in counts) a radius may come to a jump of the exact coverage before the exact
#: route is declined: there the Monte Carlo's float64 comparison and the exact closed event
#: may legitimately differ (far above the exact events' slack,
#: :data:`calcheck.simulations.exact_coverage.COUNT_TOLERANCE`).
BOUNDARY_COUNTS = 1e-7

_EVENTS = {"conditional": "product of binomials", "marginal": "E[w_b]-weighted binomials"}


@dataclass(frozen=True)
class ExactRoute:
    """How a cell's exact probability is computed: a layout of independent binomial bins.

    Attributes
    ----------
    event : {"conditional", "marginal"}
    counts, weights, etas : ndarray
        Per bin: labels averaged ``m_b``, expected test mass ``E[w_b]`` (times the part's
        weight), constant eta.
    text : str
        The route in words (``CellResult.exact_route``).
    """

    event: str
    counts: np.ndarray
    weights: np.ndarray
    etas: np.ndarray
    text: str

    def coverage(self, eps: float) -> float:
        """The exact probability of the event at radius ``eps``."""
        return float(layout_coverage(self.counts, self.weights, self.etas, eps, event=self.event))

    def near_jump(self, eps: float) -> bool:
        """Whether ``eps`` lies within ``BOUNDARY_COUNTS`` counts of a jump of the coverage."""
        for m, eta in {(int(m), float(e)) for m, e in zip(self.counts, self.etas, strict=True)}:
            dist = np.abs(np.abs(np.arange(m + 1) - m * eta) - m * eps)
            if dist.min() <= BOUNDARY_COUNTS:
                return True
        return False


@dataclass(frozen=True)
class CertifiedRoute:
    """How a cell's probability is bounded below over every law (gr21 Lemma 2's reduction).

    Attributes
    ----------
    event : {"conditional", "marginal"}
    bins : tuple of (int, bool)
        ``(m_b, edge point)`` per bin
        (:func:`calcheck.simulations.certified_coverage.certified_bins`).
    pooled : bool
        Whether bins with equal outputs are merged into one output.
    """

    event: str
    bins: tuple
    pooled: bool

    def certificate(self, eps: float, claimed: float):
        """The :class:`~calcheck.simulations.certified_coverage.Certificate` at radius eps."""
        return certified_layout(
            self.bins, eps, event=self.event, pooled=self.pooled, threshold=claimed
        )


def certified_route(experiment, event) -> CertifiedRoute | None:
    """The certified route of ``event`` on ``experiment``, or None where there is none.

    Uniform-mass binning of one binary part (``umd``, ``zadrozny_elkan``, ``randomized_umd``
    with delta = 0, lexicographic tie-breaking) with ``n >= 2 B`` and the conditional or
    marginal event. Top-label binning is left out: its per-class sizes are random and
    depend on the law, so no bound over every law follows from one class layout.
    """
    name = _event_name(event)
    pieces = parts(experiment) if name is not None else []
    if len(pieces) != 1:
        return None
    part = pieces[0][1]
    n, b = int(part.n), int(part.n_bins)
    if n < 2 * b:
        return None
    spec = part.calibrator
    scheme = "zadrozny_elkan" if spec["name"] == "zadrozny_elkan" else "umd"
    pooled = spec["name"] in ("umd", "zadrozny_elkan") or spec.get("outputs") == "as_returned"
    return CertifiedRoute(name, tuple(certified_bins(n, b, scheme)), bool(pooled))


def constant_eta(law) -> float | None:
    """The constant ``E[Y | S]`` of a binary-label law in (0, 1), or None where it is not one.

    The continuous part's conditional mean (kind ``"constant"``, or ``"step"`` /
    ``"piecewise_constant"`` with equal values) and every atom's mean must be one value.

    Examples
    --------
    >>> from calcheck.simulations.laws import LAWS
    >>> constant_eta(LAWS["uniform_half"]), constant_eta(LAWS["uniform_logistic"])
    (0.5, None)
    """
    if not isinstance(law, BinaryLaw) or law.labels != "binary":
        return None
    values = {float(v) for v in law.atom_means()}
    if law.scores.continuous_weight > 0:
        eta = law.eta
        p = eta.params
        if eta.kind == "constant":
            values.add(float(p["value"]))
        elif eta.kind == "step":
            values.update((float(p["low"]), float(p["high"])))
        elif eta.kind == "piecewise_constant":
            values.update(float(v) for v in p["values"])
        else:
            return None
    if len(values) != 1:
        return None
    value = values.pop()
    return value if 0.0 < value < 1.0 else None


def _event_name(event) -> str | None:
    if type(event) is Within and event.statistic == "max_error":
        return "conditional"
    if type(event) is Marginal and event.statistic == "test_point_error":
        return "marginal"
    return None


def exact_route(experiment, event) -> ExactRoute | None:
    """The exact route of ``event`` on ``experiment``, or None where there is none.

    Parameters
    ----------
    experiment : Experiment
        Uniform-mass binning on a binary law, or top-label binning (see the module doc).
    event : Event
        ``Within("max_error")`` or ``Marginal()``.

    Returns
    -------
    ExactRoute or None
    """
    name = _event_name(event)
    if name is None:
        return None
    pieces = parts(experiment)
    if not pieces:
        return None
    counts, weights, etas, said = [], [], [], []
    for weight, part in pieces:
        eta = constant_eta(part.law)
        n, b = int(part.n), int(part.n_bins)
        if eta is None or n < 2 * b:
            return None
        scheme = "zadrozny_elkan" if part.calibrator["name"] == "zadrozny_elkan" else "umd"
        m = bin_point_counts(n, b, scheme)
        counts.append(m)
        weights.append(float(weight) * expected_bin_masses(n, b))
        etas.append(np.full(m.shape, eta))
        said.append(eta)
    where = (
        f"constant eta {said[0]:g}"
        if len(pieces) == 1
        else f"{len(pieces)} predicted classes, constant eta "
        + ("/".join(f"{e:g}" for e in said) if len(set(said)) > 1 else f"{said[0]:g} in each")
    )
    cite = "gr21 Lemma 2" if len(pieces) == 1 else "gr22 Algorithm 8 per class, gr21 Lemma 2"
    m_all = np.concatenate(counts)
    text = (
        f"exact: {where}, {_EVENTS[name]} over {m_all.size} bins of "
        f"{m_all.min()}-{m_all.max()} labels ({cite})"
    )
    return ExactRoute(name, m_all, np.concatenate(weights), np.concatenate(etas), text)


def _scalar_radius(radius) -> float | None:
    """The radius as one finite number >= 0, or None (per replicate or per bin, inf, NaN)."""
    if radius is None:
        return None
    r = np.asarray(radius, dtype=float)
    if r.size != 1:
        return None
    value = float(r.reshape(()))
    return value if math.isfinite(value) and value >= 0 else None


def cross_check(
    check_id: str,
    cell_label: str,
    exact: float,
    successes: int,
    trials: int,
    *,
    lower_bound: bool = False,
):
    """Raise RuntimeError when the exact coverage lies outside the Monte Carlo's wide interval.

    The interval is the two-sided Clopper-Pearson interval of ``successes / trials`` at
    confidence ``1 -`` :data:`CROSS_CHECK_LEVEL`: the two routes compute one probability, so
    an exact value outside it is a bug in one of them, not evidence about the guarantee.
    With ``lower_bound`` (a certified value, at most the probability) only a value above the
    interval is a disagreement.
    """
    low, high = clopper_pearson(int(successes), int(trials), 1.0 - CROSS_CHECK_LEVEL)
    if (lower_bound or low - 1e-12 <= exact) and exact <= high + 1e-12:
        return
    what = "certified lower bound" if lower_bound else "exact coverage"
    raise RuntimeError(
        f"{what} and Monte Carlo disagree on {check_id}, cell {cell_label}: {what} "
        f"{exact:.6f}, Monte Carlo {successes}/{trials} = "
        f"{successes / trials:.6f} with {1 - CROSS_CHECK_LEVEL:.6g} Clopper-Pearson "
        f"interval [{low:.6f}, {high:.6f}] (beyond Monte Carlo error: a bug in one "
        "of the two routes)"
    )


def with_exact_evidence(check, experiment, alpha, radius, cell):
    """``cell`` with its certified and exact coverage where they exist (unchanged otherwise).

    Parameters
    ----------
    check : Check
        The check the cell belongs to (its event; its id names it in errors).
    experiment : Experiment
        The cell's experiment.
    alpha : float or None
        The cell's miscoverage (unused: the claim is in ``cell.verdict.claimed``).
    radius : float, ndarray or None
        The bound rule's radius for the cell. Only a single number is a fixed eps; a radius
        per replicate (computed from the data) or per bin leaves the cell unchanged.
    cell : CellResult

    Returns
    -------
    CellResult
        With ``certified_coverage`` / ``certified_route`` where the certified route applies
        (:func:`certified_route`), ``exact_coverage`` / ``exact_route`` where the exact one
        does (:func:`exact_route`), and ``no_power`` set where either value is 1 (the claim
        cannot fail there, whatever the replicates).

    Raises
    ------
    RuntimeError
        Where the exact value, or the certified lower bound, and the Monte Carlo coverage of
        the cell disagree beyond Monte Carlo error (:func:`cross_check`), naming the check,
        the cell and both numbers.
    """
    eps = _scalar_radius(radius)
    if eps is None or not getattr(check.event, "uses_bound", False):
        return cell
    v = cell.verdict
    label = f"{experiment.label()}" + ("" if alpha is None else f" alpha={alpha:g}")
    changes = {}
    certified = certified_route(experiment, check.event)
    if certified is not None:
        cert = certified.certificate(eps, v.claimed)
        cross_check(check.id, label, cert.value, v.successes, v.trials, lower_bound=True)
        changes.update(certified_coverage=cert.value, certified_route=_certified_text(cert))
    route = exact_route(experiment, check.event)
    if route is not None and not route.near_jump(eps):
        exact = route.coverage(eps)
        cross_check(check.id, label, exact, v.successes, v.trials)
        changes.update(exact_coverage=exact, exact_route=route.text)
    if getattr(check, "has_mutant", False):  # a guarantee: its tightness on both routes
        changes.update(_critical_factors(certified, route, changes, eps, v.claimed))
    sure = [x for x in (changes.get("exact_coverage"), changes.get("certified_coverage")) if x]
    if any(x >= 1.0 for x in sure) and not cell.no_power:
        changes["no_power"] = (
            "the claim cannot fail here: the event's exact or certified probability is 1 "
            "(a radius that no error of this law can exceed)"
        )
    return dataclasses.replace(cell, **changes) if changes else cell


#: Width of the bisection bracket of a cell's exact and certified critical factors.
FACTOR_TOLERANCE = 1e-4


@functools.lru_cache(maxsize=1024)
def _certified_factor(route: CertifiedRoute, eps: float, claimed: float) -> float:
    # law-free: one value per sizes, radius and claim, whatever the cell's law
    return smallest_factor(
        lambda f: route.certificate(f * eps, None).value >= claimed, FACTOR_TOLERANCE
    )


def _critical_factors(certified, route, changes: dict, eps: float, claimed: float) -> dict:
    """``certified_factor`` and ``exact_factor`` of a guarantee's cell, where routes exist."""
    out = {}
    if certified is not None and eps > 0:
        out["certified_factor"] = _certified_factor(certified, eps, claimed)
    if "exact_coverage" in changes and eps > 0:
        out["exact_factor"] = smallest_factor(
            lambda f: route.coverage(f * eps) >= claimed, FACTOR_TOLERANCE
        )
    return out


def _certified_text(cert) -> str:
    worst = cert.worst
    where = f"worst bin of {worst.m} labels at Pi_b -> {worst.p:.4g}"
    if worst.edge_point:  # Zadrozny-Elkan: one of its labels is the upper edge's
        where += f", its edge label's mean at {worst.q}"
    rigorous = "; interval arithmetic" if cert.rigorous else ""
    return f"{cert.reduction}; {where}{rigorous}"
