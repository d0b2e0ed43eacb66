"""What a law search maximises: the criterion of a target at one (grid, alpha), and the re-check.

:class:`CheckCriterion` turns a law family's parameter vector theta into a one-cell check of
the target (:func:`calcheck.theory_checks.catalog.for_law`), simulates it on common random
numbers and returns one of :data:`CRITERIA`: the failure rate (with a tail-mean tie-break),
its smoothed form, the claimed-level quantile of error / bound (tightness) or the mean ratio.
:func:`fresh_check` re-checks a law on a fresh root seed with the engine and the suite's
exact binomial verdict, against the selection bias of a maximum over many noisy evaluations.
The search itself is :func:`calcheck.theory_checks.search.driver.search`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
from scipy import special

from calcheck.simulations.laws.families import LawFamily
from calcheck.simulations.search import simulate_crn
from calcheck.simulations.store import ResultStore

from ..catalog import for_law
from ..checks.budgets import DEFAULT_FALSE_ALARM
from ..checks.check import Check
from ..checks.events import CLAIMS, BoundRule, MeanAtMost
from ..running.runner import run_checks
from .result import FreshCheck

__all__ = ["CRITERIA", "SOFT_WIDTH", "CheckCriterion", "fresh_check"]

#: What a search can maximise (see the module docstring).
CRITERIA = ("soft_failure", "failure", "tightness", "mean_ratio")
#: Width of the smoothed failure indicator of ``"soft_failure"`` (in units of the bound).
SOFT_WIDTH = 0.05


def _check_for(guarantee, bound, law, grid, alpha, check_id) -> Check:
    check = for_law(
        guarantee,
        law,
        grid={k: [v] for k, v in grid.items()},
        alphas=(alpha,),
        check_id=check_id,
    )
    return dataclasses.replace(check, bound=bound, expect="consistent")


def _cell_values(check: Check, outcome) -> tuple:
    """Failure rate, claimed-level quantile of the ratio, its tail mean, the bound, soft rate.

    The tail mean is the mean ratio of the worst ``1 - claimed`` share of the replicates
    (at least one): smooth in the law under common random numbers where the failure count
    is a step function.
    """
    exp = check.experiments[0]
    alpha = check.effective_alphas()[0]
    radius = (
        check.bound.radius(check.guarantee, exp.symbols(outcome), alpha)
        if check.event.uses_bound
        else None
    )
    values = check.event.evaluate(exp, outcome, radius, alpha)
    claimed = CLAIMS[check.claim](alpha if alpha is not None else 0.0, values.bound)
    claimed = min(max(claimed, np.nextafter(0.0, 1.0)), 1.0)
    r = np.asarray(values.ratio, dtype=float)
    if isinstance(check.event, MeanAtMost):
        q = float(np.mean(r))
    else:
        q = float(np.quantile(r, claimed, method="inverted_cdf"))
    failure = 1.0 - float(np.mean(np.asarray(values.success, dtype=bool)))
    worst = max(1, int(np.ceil((1.0 - claimed) * r.size)))
    with np.errstate(invalid="ignore"):
        tail = float(np.mean(np.sort(r)[-worst:]))
    with np.errstate(over="ignore", invalid="ignore"):
        soft = float(np.mean(np.nan_to_num(special.ndtr((r - 1.0) / SOFT_WIDTH), nan=1.0)))
    return failure, q, tail, float(values.bound), soft, float(np.mean(r))


@dataclass(frozen=True)
class CheckCriterion:
    """The criterion of a target at one (grid, alpha) as a picklable ``theta -> float``.

    Every call simulates ``reps`` replicates on the CRN seeds of ``crn_seed``
    (:func:`calcheck.simulations.search.simulate_crn`).
    """

    target: str
    guarantee: str
    bound: BoundRule
    family: LawFamily
    grid: tuple
    alpha: float
    criterion: str
    reps: int
    crn_seed: int
    #: A guarantee defined at run time, re-registered in worker processes (they start empty).
    definition: object = None

    def check(self, theta) -> Check:
        """The one-cell check of the law at theta."""
        if self.definition is not None:
            self.definition.ensure_registered()
        law = self.family.law(theta)
        return _check_for(self.guarantee, self.bound, law, dict(self.grid), self.alpha, self.target)

    def details(self, theta) -> dict:
        """Failure rate, ratio quantile, bound and criterion at theta (CRN replicates)."""
        check = self.check(theta)
        outcome = simulate_crn(check.experiments[0], self.crn_seed, self.reps)
        failure, q, tail, bound, soft, mean_ratio = _cell_values(check, outcome)
        if self.criterion == "tightness":
            value = q
        elif self.criterion == "mean_ratio":
            value = mean_ratio
        elif self.criterion == "soft_failure":
            value = soft
        else:
            share = 1.0 if not np.isfinite(tail) else tail / (1.0 + tail)
            value = failure + share / (2.0 * outcome.reps)
        return {
            "criterion": value,
            "failure": failure,
            "ratio_quantile": q,
            "tail_mean": tail,
            "soft_failure": soft,
            "bound": bound,
        }

    def __call__(self, theta) -> float:
        """The criterion at theta."""
        return float(self.details(theta)["criterion"])


def fresh_check(
    criterion: CheckCriterion,
    theta,
    *,
    reps: int,
    root_seed: int,
    n_jobs: int = 1,
    backend: str = "loky",
    false_alarm: float = DEFAULT_FALSE_ALARM,
) -> FreshCheck:
    """Re-check the law at theta on ``root_seed`` with the engine (seed protocol, any n_jobs)."""
    check = criterion.check(theta)
    with ResultStore(":memory:") as store:
        result = run_checks(
            [check],
            store,
            reps=reps,
            root_seed=root_seed,
            false_alarm=false_alarm,
            n_jobs=n_jobs,
            backend=backend,
        ).results[0]
    cell = result.cells[0]
    v = cell.verdict
    return FreshCheck(
        criterion.family.describe(theta),
        v,
        result.verdict,
        1.0 - v.coverage,
        cell.ratio_quantile,
        cell.tightness,
        cell.bound,
        int(root_seed),
    )
