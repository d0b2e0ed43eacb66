"""Adversarial law search for a guarantee (issue 14): the driver that uses checks.

:func:`search` maximises, over a law family's box (:mod:`calcheck.simulations.laws.families`), a
criterion of one guarantee at one ``(grid, alpha)`` -- the failure rate of its event at the
stated (or a deliberately wrong) bound, or its tightness -- with common random numbers and
differential evolution from the family's benign laws (:mod:`calcheck.simulations.search`). Then, so
that selection does not bias the verdict, the winning law is re-checked on a fresh root
seed at the budget's full replicate count with the suite's exact binomial verdict
(:func:`calcheck.theory_checks.running.runner.run_checks`). The same is done for random sampling of
theta at the same budget (the baseline). Where the event has an exact route (uniform-mass binning),
the exact failure rate of the worst constant eta and the certified coverage over every law
(:func:`analytic_reference`) are reported beside it.

Targets: a studiable guarantee id (its stated bound;
:func:`calcheck.theory_checks.catalog.for_law`),
``"<guarantee>.times_<f>"`` (the stated bound times f < 1), or the id of a catalog control
that changes only the bound (``"gr21.thm3.control.wrong_bound"``), which is evaluated with
the guarantee's own method and event.

Criteria (larger is worse for the guarantee):

``"soft_failure"``
    the failure rate with a smoothed indicator, ``mean Phi((ratio - 1) / 0.05)`` over the
    CRN replicates (ratio = error / bound): it tends to the failure rate as the width goes
    to 0, and under common random numbers it is continuous in theta where the failure
    count is a step function (a law whose errors come close to the bound scores higher).

``"failure"`` (the default)
    ``1 - (successes / reps)`` on the CRN replicates, ties broken by the tail: plus
    ``t / (1 + t) / (2 reps)`` with t the mean of error / bound over the worst
    ``1 - claimed`` share of the replicates (less than half a count, so the failure rate
    comes first and a flat zero still has a slope).
``"tightness"``
    q itself: the bound times q is what the law needs at the claimed level.
``"mean_ratio"``
    the mean of error / bound over the CRN replicates: the most precise of the four (every
    replicate counts), for worst cases where the whole error distribution grows with the
    tail (eta -> 1/2 in a Hoeffding step, where the tail moves by a few percent only).
"""

from __future__ import annotations

import functools
import logging
import re
import time

from calcheck.simulations.laws.families import LawFamily, get_family
from calcheck.simulations.memory import check_experiments_fit
from calcheck.simulations.search import (
    OptimResult,
    differential_evolution_search,
    get_search_budget,
    random_search,
)

from ..catalog import all_checks, studiable
from ..catalog.exact_routes import EXACT_WORST_CASE
from ..checks.events import BoundRule, scaled
from ..running.exact import exact_worst_case
from ..user.guarantees import definition_of, guarantee_id
from .criterion import CRITERIA, CheckCriterion, fresh_check
from .known import analytic_reference, keep_the_worst, known_points
from .progress import estimate_search, progress_bar, show_progress, timed_batch
from .refine import refine_incumbent
from .result import Found, FreshCheck, SearchResult

__all__ = [
    "CRITERIA",
    "EXACT_WORST_CASE",
    "CheckCriterion",
    "FreshCheck",
    "SearchResult",
    "analytic_reference",
    "exact_worst_case",
    "fresh_check",
    "resolve_target",
    "search",
]

logger = logging.getLogger(__name__)

_TIMES = re.compile(r"^(?P<gid>.+)\.times_(?P<f>[0-9]*\.?[0-9]+)$")


@functools.lru_cache(maxsize=1)
def _catalog_controls() -> dict:
    return {c.id: c for c in all_checks("quick") if c.is_control}


def resolve_target(target: str) -> tuple[str, BoundRule]:
    """``(guarantee id, bound rule)`` of a target (see the module docstring).

    Raises ValueError naming the target and listing the studiable guarantees.
    """
    adapters = studiable()
    m = _TIMES.match(target)
    gid = m["gid"] if m and m["gid"] in adapters else target
    if gid in adapters and not hasattr(adapters[gid], "bound"):  # klm19.def52: E[...] = 0
        raise ValueError(
            f"cannot search {target!r}: {gid} claims a mean of zero, no bound "
            f"to search against; `calcheck run --checks {gid}` tests it"
        )
    if target in adapters:
        return target, BoundRule()
    if m and m["gid"] in adapters:
        return m["gid"], scaled(float(m["f"]))
    control = _catalog_controls().get(target)
    if control is not None and control.guarantee in adapters:
        bound = getattr(control, "bound", None)  # a mean-zero or rate control has none
        if (
            not isinstance(bound, BoundRule)
            or bound.name == "stated"
            or not target.startswith(f"{control.guarantee}.control.")
        ):
            raise ValueError(
                f"cannot search {target!r}: the control changes the method or the law, not "
                "only the bound, and the search runs the guarantee's own method"
            )
        return control.guarantee, control.bound
    raise ValueError(
        f"cannot search {target!r}: a target is a studiable guarantee, "
        "'<guarantee>.times_<factor>' or a catalog control of one that changes its bound. "
        f"Studiable: {', '.join(sorted(adapters))}"
    )


def _found(
    opt: OptimResult, crit: CheckCriterion, budget, fresh_seed, n_jobs, backend, refined=None
):
    """Re-check the best law (``refined``: ``(theta, record)`` of the refinement, if any)."""
    theta, record = refined if refined is not None else (opt.theta, None)
    details = crit.details(theta)
    fresh = fresh_check(
        crit,
        theta,
        reps=budget.fresh_reps,
        root_seed=fresh_seed,
        n_jobs=n_jobs,
        backend=backend,
    )
    evaluations = opt.evaluations
    method = opt.method
    if record is not None:
        evaluations += sum(stage["evaluations"] for stage in record["stages"])
        if budget.refine:
            method += " + coordinate_refinement"
        method += "".join(f" + known law ({s['kept']})" for s in record["stages"] if s.get("kept"))
    return Found(
        method,
        tuple(float(x) for x in theta),
        crit.family.describe(theta),
        float(details["criterion"]),
        details["failure"],
        details["ratio_quantile"],
        evaluations,
        fresh,
        tuple(float(v) for v in opt.best_so_far()),
        record,
    )


def search(
    target: str,
    family,
    *,
    grid: dict,
    alpha: float = 0.1,
    budget="quick",
    criterion: str = "failure",
    seed: int = 0,
    fresh_seed: int | None = None,
    n_jobs: int = 1,
    backend: str = "loky",
    start: str = "benign",
    baseline: bool = True,
    known: bool = True,
    progress: bool | None = None,
    on_estimate=None,
) -> SearchResult:
    """Search ``family`` for the law that is worst for ``target`` at ``(grid, alpha)``.

    Differential evolution from the family's benign laws, then line searches from its best
    law (:mod:`~calcheck.theory_checks.search.refine`), then a comparison with the family's
    known hard laws (eta = 1/2; ``calcheck.theory_checks.search.known``); the law kept
    is re-checked on a fresh seed with the suite's exact binomial verdict.

    Parameters
    ----------
    target : str or DefinedGuarantee
        A studiable guarantee (a paper's or one of :func:`calcheck.define_guarantee`),
        ``"<guarantee>.times_<f>"`` or a catalog control that changes the bound
        (``resolve_target``). The method is the guarantee's own, with its parameters
        (e.g. the tie-breaking ``delta`` of randomized uniform-mass binning, as in the
        suite's check); a bound asking for ``delta`` receives that value. Hypotheses the
        suite checks refuse, before any search, a family whose laws break them (atoms where
        scores must be continuous); the ``hypotheses`` of :func:`calcheck.define_guarantee`
        are text, not checked: choose a family whose laws satisfy them.
    family : LawFamily or str
        A family, or the name of one with default options
        (:func:`calcheck.simulations.laws.families.get_family`).
    grid : dict
        The guarantee's grid parameters, one value each (``{"n": 1000, "n_bins": 10}``).
    alpha : float
        The miscoverage level in (0, 1).
    budget : str or SearchBudget
        ``"quick"`` (50 evaluations of differential evolution and 48 of refinement per
        parameter, 200 replicates each, re-check 4000), ``"full"`` (300 + 96 per
        parameter x 1000, re-check 20000), or a :class:`calcheck.SearchBudget`, e.g.
        ``SearchBudget.named("quick").sized(evaluations=500, reps=100, dim=family.dim)``.
    criterion : {"failure", "soft_failure", "tightness", "mean_ratio"}
        What differential evolution maximises on the common random numbers (CRN) replicates
        (ratio = error / bound, one per replicate): ``"failure"`` the failure rate, ties
        broken by the tail of the ratio; ``"soft_failure"`` the failure rate with a smoothed
        indicator, ``mean Phi((ratio - 1) / 0.05)``, continuous in the law where the
        failure count is a step function; ``"tightness"`` the claimed-level quantile of the
        ratio (the law that needs the largest share of the bound); ``"mean_ratio"`` the mean
        ratio (every replicate counts: worst cases where the whole error distribution
        grows, as eta -> 1/2 in a Hoeffding step).
    seed : int
        Root of the CRN seeds and of the optimisers' random numbers.
    fresh_seed : int, optional
        Root seed of the re-checks (default ``seed + 1``): never the CRN streams.
    n_jobs, backend
        Parallel evaluation (joblib); results are bit-identical for any choice.
    start : {"benign", "uniform"}
        Start population of differential evolution.
    baseline : bool
        Also run random sampling at the same budget and re-check its best law.
    known : bool
        Compare the law found with the family's known hard laws (eta = 1/2, and the exact
        worst constant eta) on ``fresh_reps`` replicates of a stream of their own, and keep
        the worst; False measures the optimiser alone (``calcheck search --power``).
    progress : bool, optional
        A progress bar of the evaluations on standard error (tqdm); None (the default): when
        standard error is a terminal.
    on_estimate : callable, optional
        Called, before the search proper, with an estimate of its size and wall time (a
        ``calcheck.theory_checks.search.progress.SearchEstimate``; its ``line()`` is what
        ``calcheck search`` prints and what is logged at INFO: "about N evaluations of R
        replicates at n=...; about X s"). The family's benign points are evaluated first,
        one after the other in this process; the median of their times, times every
        evaluation and re-check (a re-check of ``fresh_reps`` counts ``fresh_reps / reps``
        evaluations), divided among the workers, is the estimate.

    Returns
    -------
    SearchResult

    Raises
    ------
    ValueError
        For an unknown target, family or criterion, a grid that is not a dict of single
        values, a family, grid or alpha the guarantee refuses, or a size that cannot fit
        in memory: before any search.

    Examples
    --------
    gr21 Theorem 3 with half its radius (a wrong bound), searched over Beta(2, 5) scores with
    eta constant on five pieces, on a tiny budget (30 evaluations of 100 replicates):

    >>> from calcheck import search
    >>> from calcheck.simulations.search import SearchBudget
    >>> tiny = SearchBudget("tiny", population=10, generations=2, reps=100, fresh_reps=1000)
    >>> res = search("gr21.thm3.times_0.5", "beta_piecewise", grid={"n": 1000, "n_bins": 10},
    ...              budget=tiny, criterion="mean_ratio", baseline=False)
    >>> res.search.fresh.outcome  # re-checked on a fresh seed
    'violated'
    """
    started = time.perf_counter()
    target = guarantee_id(target)
    guarantee, bound = resolve_target(target)
    fam = get_family(family) if isinstance(family, str) else family
    if not isinstance(fam, LawFamily):
        raise ValueError(f"family must be a LawFamily or a family name, got {family!r}")
    if criterion not in CRITERIA:
        raise ValueError(f"criterion must be one of {CRITERIA}, got {criterion!r}")
    if not isinstance(grid, dict) or not grid:
        raise ValueError(f"grid must be a dict of single values, got {grid!r}")
    budget = get_search_budget(budget)
    progress = show_progress(progress)
    fresh_seed = seed + 1 if fresh_seed is None else fresh_seed
    crit = CheckCriterion(
        target,
        guarantee,
        bound,
        fam,
        tuple(sorted(grid.items())),
        float(alpha),
        criterion,
        budget.reps,
        seed,
        definition_of(guarantee),
    )
    probe = crit.check(fam.benign[0])  # refuses a wrong family, grid or alpha before any search
    # ... and a size whose blocks cannot fit in memory (one block per worker at a time)
    check_experiments_fit(probe.experiments, n_jobs=n_jobs, what=f"the search of {target}")
    reference = analytic_reference(guarantee, bound, grid, alpha)
    known = known_points(fam, reference) if known else []
    benign, seconds = timed_batch(crit, fam.benign)  # the measure of the estimate
    estimate = estimate_search(
        crit, fam, budget, seconds, known=len(known), baseline=baseline, n_jobs=n_jobs
    )
    logger.info("search of %s: %s", target, estimate.line())
    if on_estimate is not None:
        on_estimate(estimate)
    kw = {"seed": seed, "n_jobs": n_jobs, "backend": backend}
    with progress_bar(estimate, progress, done=len(benign)) as bar:
        de = differential_evolution_search(crit, fam, budget, start=start, **kw)
        theta, record = refine_incumbent(crit, fam, de.theta, budget, **kw)
        theta, stage = keep_the_worst(crit, theta, known, budget, **kw)
        if stage is not None:
            record = {"stages": [*(record or {}).get("stages", ()), stage]}
        bar.set_postfix_str("re-check on a fresh seed")
        found = _found(de, crit, budget, fresh_seed, n_jobs, backend, (theta, record))
        rnd = None
        if baseline:
            bar.set_postfix_str("random sampling")
            rs = random_search(crit, fam, budget, **kw)
            rnd = _found(rs, crit, budget, fresh_seed, n_jobs, backend)
    return SearchResult(
        target,
        guarantee,
        bound.name,
        fam.spec(),
        dict(grid),
        float(alpha),
        criterion,
        budget,
        seed,
        fresh_seed,
        found,
        rnd,
        reference,
        tuple(float(v) for v in benign),
        time.perf_counter() - started,
    )
