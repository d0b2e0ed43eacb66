"""The refinement stage of the law search: which criterion the incumbent is refined on.

Differential evolution explores with the user's criterion
(``calcheck.theory_checks.search.driver``); the refinement
(:func:`calcheck.simulations.search.coordinate_refine`) then climbs from its best law on the
quantity the fresh-seed verdict judges, the failure rate of the event, estimated as precisely as the
method allows:

``"conditional_failure"``
    Where the labels can be integrated out exactly given the scores (uniform-mass binning
    of a binary-label law, an every-bin or a test-point event at one radius;
    :mod:`calcheck.simulations.conditional_coverage`): ``1 - mean_r P(event | scores_r)``
    over the CRN replicates of the scores. No label noise, so the line searches resolve the
    narrow peaks of the worst case (eta where the binomial cut-offs cross integers); in the
    exact stage the line of an eta coordinate is those etas themselves
    (:class:`LatticeLines`).
otherwise the search criterion itself
    (a CRN Monte Carlo estimate), so a line search still polishes what the population found.

With the criterion ``"tightness"`` the refinement keeps tightness (the aim is the law that
needs the largest bound, not the one that fails most).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from calcheck.simulations.conditional_coverage import (
    bin_sizes,
    combine_parts,
    coverage_given_scores,
    lattice_etas,
    parts,
    sorted_scores,
    supports,
)
from calcheck.simulations.experiments.base import BLOCK_REPS
from calcheck.simulations.provenance import generator
from calcheck.simulations.search import (
    CRN_PATH,
    REFINE_SHRINK,
    REFINE_WIDTH,
    coordinate_refine,
    crn_generator,
)

from ..checks.events import Marginal, Within

__all__ = [
    "CONDITIONAL_FAILURE",
    "EXACT_POINTS",
    "EXACT_SHRINK",
    "EXACT_WIDTH",
    "LINE_POINTS",
    "SMOOTH_SHARE",
    "ConditionalFailure",
    "LatticeLines",
    "eta_groups",
    "objective_name",
    "refine_incumbent",
    "refinement_evaluations",
    "refinement_objective",
]

CONDITIONAL_FAILURE = "conditional_failure"
#: Points per line search of the smoothed stage (and of a refinement on the search criterion).
LINE_POINTS = 8
#: Points per line search of the exact stage: for an eta coordinate the 16 nearest etas of
#: the lattice (:class:`LatticeLines`: about +-0.04 at 49-50 points a bin, four peaks a side);
#: for the others a stratified grid (16 points 0.004 apart land next to the highest peak).
EXACT_POINTS = 16
#: Share of the refinement spent on the smoothed conditional failure (the rest: the exact one):
#: a third, i.e. two rounds of 8-point lines; the exact stage gets two rounds of 16 points.
SMOOTH_SHARE = 1 / 3
#: Half-width of the exact stage's stratified window (coordinates that are not an eta: class
#: weights, ``hi_<j>``), as a fraction of each box width: at n = 1000, B = 20 (49-50 points a
#: bin) the exact failure's peaks in eta repeat every 1/49 = 0.02, so +-0.03 holds the peaks
#: next to the smoothed stage's law.
EXACT_WIDTH = 0.03
#: Window factor between the exact stage's stratified rounds: the second zooms in 8-fold
#: (+-0.004, points 0.0005 apart). The tops can be that narrow (gr21 Theorem 4's marginal
#: radius x 0.7: bins of 49 and 50 points must both sit just past an integer); the lattice
#: lines of the eta coordinates land on them exactly.
EXACT_SHRINK = 1 / 8


def _event_kind(check) -> str | None:
    event = check.event
    if isinstance(event, Marginal) and event.statistic == "test_point_error":
        return "marginal"
    if type(event) is Within and event.statistic == "max_error" and event.uses_bound:
        return "conditional"
    return None


@dataclass(frozen=True)
class ConditionalFailure:
    """``theta -> 1 - mean P(event | scores)`` on the CRN seeds of a search criterion.

    ``base`` is the search's ``CheckCriterion`` (``calcheck.theory_checks.search.driver``) (it
    builds the one-cell check of the law at theta); ``reps`` replicates of the scores, in whole
    blocks drawn from :func:`calcheck.simulations.search.crn_generator`.
    """

    base: object
    reps: int
    smooth: bool = False

    @property
    def name(self) -> str:
        """``"conditional_failure"`` or ``"smoothed_conditional_failure"``."""
        return f"smoothed_{CONDITIONAL_FAILURE}" if self.smooth else CONDITIONAL_FAILURE

    def __call__(self, theta) -> float:
        """The conditional failure rate at theta."""
        check = self.base.check(theta)
        exp = check.experiments[0]
        alpha = check.effective_alphas()[0]
        eps = float(check.bound.radius(check.guarantee, exp.symbols(), alpha))
        if not np.isfinite(eps):
            return 0.0  # a vacuous radius never fails
        blocks = max(1, math.ceil(int(self.reps) / BLOCK_REPS))
        kind = _event_kind(check)
        cov = []
        for b in range(blocks):
            weighted = [
                (
                    weight,
                    coverage_given_scores(
                        part,
                        *_crn_scores(part.law.scores, part.n, self.base.crn_seed, b, i),
                        eps,
                        event=kind,
                        smooth=self.smooth,
                    ),
                )
                for i, (weight, part) in enumerate(parts(exp))
            ]
            cov.append(combine_parts(weighted, kind))
        return float(1.0 - np.mean(np.concatenate(cov)))


@functools.lru_cache(maxsize=16)
def _crn_scores(score_law, n: int, seed: int, block: int, part: int = 0):
    """CRN block ``block``'s sorted scores of one part (a class, for top-label binning).

    Drawn once per process where theta moves eta only.

    The draws are a function of the arguments (the score law is a frozen, hashable value),
    so the cache changes nothing but the time (about half of an evaluation).
    """
    # part 0 on the search's own CRN stream; the other classes below it, one stream each
    rng = crn_generator(seed, block) if part == 0 else generator(seed, CRN_PATH, block, part)
    s_sorted, u_sorted = sorted_scores(score_law, n, BLOCK_REPS, rng)
    s_sorted.flags.writeable = False
    u_sorted.flags.writeable = False
    return s_sorted, u_sorted


def eta_groups(names) -> dict:
    """``{coordinate: (coordinates set together, part or None)}`` of a family's eta values.

    A coordinate named ``eta_<j>`` is the constant eta of a piece (``beta_piecewise``) or
    an atom; ``lo_<j>`` and ``hi_<j>`` are the ends of class j's linear eta (``top_label``):
    the lattice move sets both, i.e. class j's eta constant, on the bins of class j's part
    (:func:`calcheck.simulations.conditional_coverage.parts`). Other coordinates (weights,
    ``hi_<j>``'s own line) keep the stratified grid.
    """
    names = list(names)
    out = {}
    for i, name in enumerate(names):
        head, _, tail = name.partition("_")
        if head == "eta" and tail:
            out[i] = ((i,), None)
        elif head == "lo" and f"hi_{tail}" in names and tail.isdigit():
            out[i] = ((i, names.index(f"hi_{tail}")), int(tail) - 1)
    return out


@dataclass(frozen=True)
class LatticeLines:
    """The exact stage's lines of the eta coordinates: the nearest lattice points.

    For a coordinate of :func:`eta_groups`, the ``points`` etas of
    :func:`~calcheck.simulations.conditional_coverage.lattice_etas` (for the bin sizes of
    the cell at the incumbent, its radius eps) nearest to the
    coordinate's value, in every round: at n = 1000, B = 20 (49 or 50 points a bin) two
    crossings per size every 1/49 in eta, so 16 points reach about +-0.04 and include the
    top of every peak there (a uniform line of 16 points steps over tops 0.0005 wide), and
    the next round reaches as far again from where the first landed. The other coordinates
    keep the stratified grid (None). Measured (gr21 Theorem 3 x 0.8 at n = 1000, B = 20,
    alpha = 0.01, 20 seeds): the law found is within 0.0004 of the worst constant eta
    (0.0273) on every seed, against 0.0014 with stratified lines only.
    """

    base: object
    points: int

    def __call__(self, rnd: int, i: int, best) -> np.ndarray | None:
        """``points`` candidate thetas for coordinate i in round ``rnd``, or None."""
        group = eta_groups(self.base.family.names).get(i)
        if group is None:
            return None
        coords, part = group
        check = self.base.check(best)
        exp = check.experiments[0]
        eps = float(check.bound.radius(check.guarantee, exp.symbols(), check.effective_alphas()[0]))
        sizes = bin_sizes(exp)
        if not np.isfinite(eps) or not sizes:
            return None
        ms = sizes[part] if part is not None and part < len(sizes) else sum(sizes, ())
        lo = max(self.base.family.lower[c] for c in coords)
        hi = min(self.base.family.upper[c] for c in coords)
        etas = lattice_etas(ms, eps)
        etas = etas[(etas >= lo) & (etas <= hi)]
        if etas.size < self.points:
            return None
        centre = float(np.mean([best[c] for c in coords]))
        near = np.sort(etas[np.argsort(np.abs(etas - centre), kind="stable")[: self.points]])
        rows = np.repeat(np.asarray(best, dtype=float)[None, :], self.points, axis=0)
        rows[:, list(coords)] = near[:, None]
        return rows


def refinement_objective(criterion, reps: int, *, smooth: bool = False):
    """The objective the refinement climbs: :class:`ConditionalFailure` where it applies.

    Parameters
    ----------
    criterion : CheckCriterion
        The search's criterion.
    reps : int
        Replicates per evaluation of the conditional failure rate.

    Returns
    -------
    callable
        A picklable ``theta -> float`` with a ``name`` attribute-like label given by
        :func:`objective_name`.
    """
    if criterion.criterion == "tightness":
        return criterion
    check = criterion.check(criterion.family.benign[0])
    if _event_kind(check) is None or not supports(check.experiments[0]):
        return criterion
    return ConditionalFailure(criterion, int(reps), smooth)


def objective_name(objective) -> str:
    """``"conditional_failure"`` or the search criterion's name."""
    return getattr(objective, "name", None) or objective.criterion


def _stages(criterion, family, budget) -> list:
    """``(objective, evaluations, width, points, shrink[, lines])`` of each stage."""
    total = budget.refine * family.dim
    exact = refinement_objective(criterion, budget.reps)
    if not isinstance(exact, ConditionalFailure):
        return [(exact, total, REFINE_WIDTH, LINE_POINTS, REFINE_SHRINK)]
    first = round(SMOOTH_SHARE * budget.refine) * family.dim
    return [
        (
            ConditionalFailure(criterion, budget.reps, smooth=True),
            first,
            REFINE_WIDTH,
            LINE_POINTS,
            REFINE_SHRINK,
        ),
        (
            exact,
            total - first,
            EXACT_WIDTH,
            EXACT_POINTS,
            EXACT_SHRINK,
            LatticeLines(criterion, EXACT_POINTS),
        ),
    ]


def refinement_evaluations(criterion, family, budget) -> int:
    """Evaluations :func:`refine_incumbent` makes: per stage, its start and whole lines.

    A stage of e evaluations in lines of p points evaluates its start, then ``p x (e // p)``
    laws; a stage of fewer than p evaluations is skipped.
    """
    if budget.refine == 0:
        return 0
    return sum(
        1 + (stage[1] // stage[3]) * stage[3]
        for stage in _stages(criterion, family, budget)
        if stage[1] >= stage[3]
    )


def refine_incumbent(criterion, family, start, budget, *, seed, n_jobs=1, backend="loky"):
    """Refine ``start`` (differential evolution's best law): ``budget.refine`` x dim evaluations.

    Where :class:`ConditionalFailure` applies: :data:`SMOOTH_SHARE` of the evaluations climb
    the smoothed conditional failure from :data:`~calcheck.simulations.search.REFINE_WIDTH`
    (the envelope of the failure: eta -> 1/2 in every Hoeffding step), the rest the exact
    one: in every round, an eta coordinate's line is the :data:`EXACT_POINTS` lattice etas
    nearest to it (:class:`LatticeLines`: the tops of the peaks, wherever the smoothed stage
    left it), any other coordinate's a stratified window of :data:`EXACT_WIDTH`, zooming by
    :data:`EXACT_SHRINK`. Otherwise all evaluations refine the search criterion itself.
    The number of evaluations is the same either way (``budget.refine`` per parameter).

    Returns
    -------
    theta : tuple of float
    record : dict or None
        Per stage: objective, evaluations, value at the start and at the end; None when the
        budget has no refinement.
    """
    if budget.refine == 0:
        return tuple(float(x) for x in start), None
    theta, record = tuple(float(x) for x in start), []
    for k, (objective, evaluations, width, points, shrink, *lines) in enumerate(
        _stages(criterion, family, budget)
    ):
        if evaluations < points:
            continue
        found = coordinate_refine(
            objective,
            family,
            theta,
            evaluations,
            seed=seed,
            points=points,
            width=width,
            shrink=shrink,
            stage=k,
            n_jobs=n_jobs,
            backend=backend,
            lines=lines[0] if lines else None,
        )
        theta = found.theta
        record.append(
            {
                "objective": objective_name(objective),
                "evaluations": int(found.evaluations),
                "start_value": float(found.values[0]),
                "value": float(found.value),
            }
        )
    return theta, {"stages": record}
