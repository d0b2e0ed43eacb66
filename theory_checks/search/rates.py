r"""Worst constants of rate claims: the law that needs the largest sample.

A rate claim "n >= c h(theta) suffices for the event w.p. >= 1 - delta" with an
unspecified c is checked by the suite on hand-picked laws
(:class:`~calcheck.theory_checks.series.rates.RateCheck`). The question it raises is which law needs
the largest sample: :func:`rate_worst_law` searches a law family at FIXED claim parameters
(B, E^2 or eps, delta; the targets in ``theory_checks/catalog/klm19_rate_targets.py``
and ``theory_checks/catalog/nch14_rate_targets.py``) for the largest implied
constant

.. math:: c(P) = n^*(P) / h,

with n*(P) the crossing of the event's coverage with 1 - delta on a geometric grid of n
(``calcheck.theory_checks.series.rate_thresholds.threshold``, interpolated in log n). Steps:

1. Search: differential evolution
   (:func:`calcheck.simulations.search.differential_evolution_search`) from the family's
   benign points, every candidate drawn on the same common random numbers
   (:func:`calcheck.simulations.search.simulate_crn`), so that c(theta) is compared between
   candidates without independent noise. A threshold above the grid counts as the grid's
   end (a lower bound of c), one below it as the grid's start.
2. Validation: the best of hundreds of noisy evaluations is biased upwards (on klm19
   Theorem 5.4 the search's best c was 0.66, the same law's fresh c 0.52), so the few best
   distinct candidates are re-measured on a validation seed with more replicates and the
   largest c there is the winner.
3. Fresh re-measurement of the winner on a third seed with more replicates, with a 95%
   percentile interval from the exact parametric bootstrap of the coverage counts (columns
   are independent binomial counts, as in :mod:`calcheck.theory_checks.series.rates`); the
   selection cannot bias it.
4. The suite's hand-picked laws measured the same way (same fresh seed and replicates).
5. Exponent test of the winner's *shape*: n* at three larger problems (the target's
   ``sweep``), and the slope of log n* on log h with a bootstrap interval. The claim says
   slope <= 1; a 95% lower bound above ``1 + slack`` is a finding. A wrong rate (a
   negative control) gives a slope far from 1 on the same data (:func:`sweep_fit` with
   ``rate=``).
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass, field

import numpy as np

from calcheck.simulations.experiments.base import BLOCK_REPS
from calcheck.simulations.provenance import check_root_seed, generator
from calcheck.simulations.search import SearchBudget, differential_evolution_search

from ..catalog import rate_targets
from ..series.rate_thresholds import ols_slopes, threshold
from .rate_result import RateSearchResult, SweepFit, Threshold, markdown_table

__all__ = [
    "RateObjective",
    "RateSearchResult",
    "SweepFit",
    "Threshold",
    "get_target",
    "markdown_table",
    "measure_threshold",
    "rate_worst_law",
    "sweep_fit",
]

log = logging.getLogger(__name__)

#: Bootstrap resamples of the coverage counts (intervals at 95%).
N_BOOT = 4000


def get_target(check_id):
    """The search target of a rate check id (ValueError listing the known ones), or a target.

    Targets live with their papers (``RATE_TARGETS`` of
    ``theory_checks/catalog/klm19_rate_targets.py`` and ``nch14_rate_targets.py``,
    collected by ``calcheck.theory_checks.catalog.rate_targets``).
    """
    if not isinstance(check_id, str):
        return check_id
    targets = rate_targets()
    if check_id not in targets:
        raise ValueError(f"check_id must be one of {sorted(targets)}, got {check_id!r}")
    return targets[check_id]


def _rounded(reps: int) -> int:
    return max(1, math.ceil(int(reps) / BLOCK_REPS)) * BLOCK_REPS


def _measure(target, point, seed, reps, rng, rate=None):
    """:class:`Threshold` and the bootstrap thresholds (``(N_BOOT,)``) of one point."""
    success, grid = target.successes(point, seed, reps)
    r = success.shape[0]
    cov = success.sum(axis=0) / r
    level = 1.0 - target.point_delta(point)
    n_star = float(threshold(cov, grid, level))
    boot = threshold(rng.binomial(r, cov, size=(N_BOOT, cov.size)) / r, grid, level)
    h = float(target.rate(point) if rate is None else rate(point))
    with np.errstate(invalid="ignore"):
        ci = tuple(float(q) / h for q in np.quantile(boot, (0.025, 0.975)))
    censored = "above" if cov[-1] < level else "below" if cov.min() >= level else ""
    return Threshold(n_star, h, n_star / h, ci, r, censored), boot


def measure_threshold(target, point, *, seed: int, reps: int, rate=None) -> Threshold:
    """n*, h and c = n*/h of ``point`` (``reps`` replicates on the CRN seed ``seed``).

    Parameters
    ----------
    target : str or object
        A rate check id (:func:`get_target`) or a target.
    point
        What ``target.point(theta)`` returns (a law, ``(B, delta)``, ``(law, B)``).
    seed, reps : int
    rate : callable, optional
        ``rate(point) -> h`` replacing the claim's (a negative control).
    """
    target = get_target(target)
    seed = check_root_seed(seed)
    _positive(reps, "reps")
    return _measure(target, point, seed, reps, generator(seed, "rate_search.boot"), rate)[0]


@dataclass(frozen=True)
class RateObjective:
    """``theta -> c(theta) = n*/h`` on CRN seed ``seed`` (picklable; for the optimiser).

    A threshold above the grid counts as the grid's last n (a lower bound of c).
    """

    target: object
    seed: int
    reps: int

    def __call__(self, theta) -> float:
        """c(theta) on the CRN replicates."""
        point = self.target.point(theta)
        success, grid = self.target.successes(point, self.seed, self.reps)
        level = 1.0 - self.target.point_delta(point)
        n_star = float(threshold(success.mean(axis=0), grid, level))
        return min(n_star, float(grid[-1])) / float(self.target.rate(point))


def sweep_fit(target, points, *, seed: int, reps: int, rate=None) -> SweepFit:
    """Thresholds at ``points`` (``((label, point), ...)``) and their slope on log h.

    With ``rate`` (``point -> h``) the slope is taken against a different rate: a wrong
    rate makes c drift and the slope leave 1 (the negative control).
    """
    target = get_target(target)
    rng = generator(check_root_seed(seed), "rate_search.sweep")
    meas = [_measure(target, p, seed, reps, rng, rate) for _, p in points]
    x = np.log([m.h for m, _ in meas])
    y = np.log([m.n_star for m, _ in meas])
    yb = np.log(np.stack([b for _, b in meas], axis=-1))
    with np.errstate(invalid="ignore"):
        ci = tuple(float(q) for q in np.quantile(ols_slopes(x, yb), (0.025, 0.975)))
    return SweepFit(
        tuple(lab for lab, _ in points),
        tuple(m for m, _ in meas),
        float(ols_slopes(x, y)),
        ci,
        target.slack,
    )


def _positive(v, name):
    if isinstance(v, bool) or not isinstance(v, int | np.integer) or v < 1:
        raise ValueError(f"{name} must be a positive integer, got {v!r}")
    return int(v)


@dataclass(frozen=True)
class _RatePlan:
    """What :func:`rate_worst_law` searches and measures, validated once in ``__post_init__``.

    Built from its arguments as given (``target`` is ``check_id``); ``target`` becomes a
    target, the seeds root seeds (``validation_seed`` by default ``fresh_seed + 1``), the
    re-measurements' replicate counts integers (``sweep_reps`` by default ``fresh_reps``),
    and ``budget`` the search's, which holds ``reps`` as an integer (``reps`` itself stays
    as given: the CRN objective receives it so).
    """

    target: object
    population: int
    generations: int
    reps: int
    fresh_reps: int
    sweep_reps: int | None
    seed: int
    fresh_seed: int
    validation_seed: int | None
    validate_top: int
    n_jobs: int
    sweep: bool
    budget: SearchBudget = field(init=False)

    def __post_init__(self):
        target = get_target(self.target)
        seed, fresh_seed = check_root_seed(self.seed), check_root_seed(self.fresh_seed)
        if seed == fresh_seed:
            raise ValueError(f"fresh_seed must differ from seed, got {fresh_seed!r}")
        validation_seed = check_root_seed(
            fresh_seed + 1 if self.validation_seed is None else self.validation_seed
        )
        if validation_seed in (seed, fresh_seed):
            raise ValueError(
                f"validation_seed must differ from seed and fresh_seed, got {validation_seed!r}"
            )
        validate_top = _positive(self.validate_top, "validate_top")
        fresh_reps = _positive(self.fresh_reps, "fresh_reps")
        sweep_reps = (
            fresh_reps if self.sweep_reps is None else _positive(self.sweep_reps, "sweep_reps")
        )
        budget = SearchBudget(
            "rate", self.population, self.generations, _positive(self.reps, "reps"), fresh_reps
        )
        normalised = {
            "target": target,
            "seed": seed,
            "fresh_seed": fresh_seed,
            "validation_seed": validation_seed,
            "validate_top": validate_top,
            "fresh_reps": fresh_reps,
            "sweep_reps": sweep_reps,
            "budget": budget,
        }
        for name, value in normalised.items():
            object.__setattr__(self, name, value)


def _top_candidates(opt, count: int) -> tuple[list, list]:
    """The ``count`` best distinct thetas of the search, best first, and their search c."""
    order = np.argsort(-np.where(np.isfinite(opt.values), opt.values, -np.inf), kind="stable")
    top, c_top = [], []
    for i in order:
        theta = tuple(float(x) for x in opt.thetas[i])
        if theta in top:
            continue
        top.append(theta)
        c_top.append(opt.values[i])
        if len(top) == count:
            break
    return top, c_top


def _validated_winner(plan: _RatePlan, top: list) -> tuple[int, list]:
    """The index of the largest c among ``top`` on the validation seed, and every c there."""
    target, seed = plan.target, plan.validation_seed
    vrng = generator(seed, "rate_search.validation")
    c_val = [_measure(target, target.point(t), seed, plan.fresh_reps, vrng)[0].c for t in top]
    return int(np.argmax(c_val)), c_val


def _remeasured(plan: _RatePlan, point) -> tuple:
    """``(fresh, hand_picked)``: the winner and the suite's laws on the fresh seed."""
    target, seed = plan.target, plan.fresh_seed
    rng = generator(seed, "rate_search.fresh")
    fresh = _measure(target, point, seed, plan.fresh_reps, rng)[0]
    hand = tuple(
        (name, _measure(target, p, seed, plan.fresh_reps, rng)[0])
        for name, p in target.hand_picked()
    )
    return fresh, hand


def _replicates(plan: _RatePlan, measured: int, fit: SweepFit | None) -> int:
    """Replicates simulated in all: the search's, ``measured`` re-measurements, the sweep's."""
    replicates = plan.budget.replicates + _rounded(plan.fresh_reps) * measured
    replicates += _rounded(plan.sweep_reps) * len(fit.labels) if fit else 0
    return replicates


def _search_and_measure(plan: _RatePlan) -> RateSearchResult:
    """Search, validate the top candidates, re-measure the winner, test its exponent."""
    target = plan.target
    t0 = time.perf_counter()
    opt = differential_evolution_search(
        RateObjective(target, plan.seed, plan.reps),
        target.family,
        plan.budget,
        seed=plan.seed,
        n_jobs=plan.n_jobs,
    )
    log.info("%s: search c = %.3g at %s", target.check_id, opt.value, opt.theta)
    # the CRN objective is noisy and the best of many evaluations is biased upwards: the
    # top candidates are re-measured on a validation seed and the largest c there wins
    top, c_top = _top_candidates(opt, plan.validate_top)
    best, c_val = _validated_winner(plan, top)
    theta = top[best]
    point = target.point(theta)
    fresh, hand = _remeasured(plan, point)
    fit = None
    if plan.sweep:
        fit = sweep_fit(target, target.sweep(theta), seed=plan.fresh_seed, reps=plan.sweep_reps)
    return RateSearchResult(
        target.check_id,
        target.family.name,
        target.fixed(),
        theta,
        target.describe_point(point),
        float(c_top[best]),
        float(c_val[best]),
        fresh,
        hand,
        fit,
        opt.evaluations,
        _replicates(plan, 1 + len(hand) + len(top), fit),
        time.perf_counter() - t0,
        plan.seed,
        plan.fresh_seed,
    )


def rate_worst_law(
    check_id,
    *,
    population: int = 8,
    generations: int = 6,
    reps: int = 300,
    fresh_reps: int = 2000,
    sweep_reps: int | None = None,
    seed: int = 0,
    fresh_seed: int = 1,
    validation_seed: int | None = None,
    validate_top: int = 5,
    n_jobs: int = 1,
    sweep: bool = True,
) -> RateSearchResult:
    """Search the worst law of a rate claim, re-measure it, compare, test its exponent.

    Parameters
    ----------
    check_id : str or object
        ``"klm19.thm53"``, ``"klm19.thm54"``, ``"klm19.lem43"``, ``"klm19.lem43.vc"`` or
        ``"nch14.cor32"`` (:func:`get_target`), or a target.
    population, generations : int
        Differential evolution: ``population x (generations + 1)`` evaluations.
    reps : int
        CRN replicates per evaluation (whole blocks of 100).
    fresh_reps : int
        Replicates of the fresh re-measurement and of each hand-picked point.
    sweep_reps : int, optional
        Replicates per point of the exponent test (default ``fresh_reps``).
    seed, fresh_seed : int
        Root seeds of the search and of every re-measurement (must differ).
    validation_seed : int, optional
        Root seed on which the ``validate_top`` best distinct candidates of the search are
        re-measured (``fresh_reps`` each); the largest c there is the winner (default
        ``fresh_seed + 1``; all three seeds must differ).
    validate_top : int
    n_jobs : int
        Parallel candidates (results identical for any value).
    sweep : bool
        Run the exponent test.

    Returns
    -------
    RateSearchResult
    """
    plan = _RatePlan(
        check_id,
        population,
        generations,
        reps,
        fresh_reps,
        sweep_reps,
        seed,
        fresh_seed,
        validation_seed,
        validate_top,
        n_jobs,
        sweep,
    )
    return _search_and_measure(plan)
