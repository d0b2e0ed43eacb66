"""The refinement stage of the law search: which criterion the incumbent is refined on.

Differential evolution explores with the user's criterion (``calcheck.theory_checks.search``);
the refinement (:func:`calcheck.simulations.search.coordinate_refine`) then climbs from its best
law on the quantity the fresh-seed verdict judges, the failure rate of the event, estimated
as precisely as the method allows:

``"conditional_failure"``
    Where the labels can be integrated out exactly given the scores (uniform-mass binning
    of a binary-label law, an every-bin or a test-point event at one radius;
    :mod:`calcheck.simulations.conditional_coverage`): ``1 - mean_r P(event | scores_r)``
    over the CRN replicates of the scores. No label noise, so the line searches resolve the
    narrow peaks of the worst case (eta where the binomial cut-offs cross integers).
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
    combine_parts,
    coverage_given_scores,
    parts,
    sorted_scores,
    supports,
)
from calcheck.simulations.experiments.base import BLOCK_REPS
from calcheck.simulations.provenance import generator
from calcheck.simulations.search import (
    _CRN_PATH,
    REFINE_SHRINK,
    REFINE_WIDTH,
    coordinate_refine,
    crn_generator,
)

from .events import Marginal, Within

__all__ = [
    "CONDITIONAL_FAILURE",
    "EXACT_POINTS",
    "EXACT_SHRINK",
    "EXACT_WIDTH",
    "LINE_POINTS",
    "SMOOTH_SHARE",
    "ConditionalFailure",
    "objective_name",
    "refine_incumbent",
    "refinement_objective",
]

CONDITIONAL_FAILURE = "conditional_failure"
#: Points per line search of the smoothed stage (and of a refinement on the search criterion).
LINE_POINTS = 8
#: Points per line search of the exact stage: its window holds about three peaks of the exact
#: failure rate; 16 points 0.004 apart land next to the highest.
EXACT_POINTS = 16
#: Share of the refinement spent on the smoothed conditional failure (the rest: the exact one):
#: a third, i.e. two rounds of 8-point lines; the exact stage gets two rounds of 16 points.
SMOOTH_SHARE = 1 / 3
#: Half-width of the exact stage's window, as a fraction of each box width: at n = 1000,
#: B = 20 (49-50 points a bin) the exact failure's peaks in eta repeat every 1/49 = 0.02, so
#: +-0.03 holds the peaks next to the smoothed stage's law.
EXACT_WIDTH = 0.03
#: Window factor between the exact stage's rounds: the second round zooms in 8-fold (+-0.004,
#: points 0.0005 apart), onto the top of the peak; the top can be that narrow (gr21 Theorem 4's
#: marginal radius x 0.7: bins of 49 and 50 points must both sit just past an integer).
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

    ``base`` is the search's ``CheckCriterion`` (``calcheck.theory_checks.search``) (it builds
    the one-cell check of the law at theta); ``reps`` replicates of the scores, in whole
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
                (weight, coverage_given_scores(
                    part, *_crn_scores(part.law.scores, part.n, self.base.crn_seed, b, i), eps,
                    event=kind, smooth=self.smooth,
                ))
                for i, (weight, part) in enumerate(parts(exp))
            ]  # fmt: skip
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
    rng = crn_generator(seed, block) if part == 0 else generator(seed, _CRN_PATH, block, part)
    s_sorted, u_sorted = sorted_scores(score_law, n, BLOCK_REPS, rng)
    s_sorted.flags.writeable = False
    u_sorted.flags.writeable = False
    return s_sorted, u_sorted


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


def refine_incumbent(criterion, family, start, budget, *, seed, n_jobs=1, backend="loky"):
    """Refine ``start`` (differential evolution's best law): ``budget.refine`` x dim evaluations.

    Where :class:`ConditionalFailure` applies: :data:`SMOOTH_SHARE` of the evaluations climb
    the smoothed conditional failure from :data:`~calcheck.simulations.search.REFINE_WIDTH`
    (the envelope of the worst case: eta -> 1/2 in every Hoeffding step), the rest the exact
    one in a window of :data:`EXACT_WIDTH`, zooming by :data:`EXACT_SHRINK` (the top of its
    peak next to the envelope's top). Otherwise all evaluations refine the search criterion
    itself.

    Returns
    -------
    theta : tuple of float
    record : dict or None
        Per stage: objective, evaluations, value at the start and at the end; None when the
        budget has no refinement.
    """
    if budget.refine == 0:
        return tuple(float(x) for x in start), None
    total = budget.refine * family.dim
    exact = refinement_objective(criterion, budget.reps)
    if isinstance(exact, ConditionalFailure):
        first = round(SMOOTH_SHARE * budget.refine) * family.dim
        stages = [
            (ConditionalFailure(criterion, budget.reps, smooth=True), first, REFINE_WIDTH,
             LINE_POINTS, REFINE_SHRINK),
            (exact, total - first, EXACT_WIDTH, EXACT_POINTS, EXACT_SHRINK),
        ]  # fmt: skip
    else:
        stages = [(exact, total, REFINE_WIDTH, LINE_POINTS, REFINE_SHRINK)]
    theta, record = tuple(float(x) for x in start), []
    for k, (objective, evaluations, width, points, shrink) in enumerate(stages):
        if evaluations < points:
            continue
        found = coordinate_refine(
            objective, family, theta, evaluations, seed=seed, points=points, width=width,
            shrink=shrink, stage=k, n_jobs=n_jobs, backend=backend,
        )  # fmt: skip
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
