"""Adversarial law search for a guarantee: the driver that uses checks.

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
import math
import re
import time
from dataclasses import dataclass, field

from calcheck.simulations.experiments.base import BLOCK_REPS
from calcheck.simulations.laws.families import LawFamily, get_family
from calcheck.simulations.memory import (
    check_count_fits,
    check_experiments_fit,
    check_outcomes_fit,
)
from calcheck.simulations.search import (
    OptimResult,
    SearchBudget,
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
    "MAX_SEARCH_POINTS",
    "CheckCriterion",
    "FreshCheck",
    "SearchResult",
    "analytic_reference",
    "check_search_work",
    "exact_worst_case",
    "fresh_check",
    "resolve_target",
    "search",
]

logger = logging.getLogger(__name__)

#: The most points a search may simulate: replicates times points per replicate (the
#: experiments' ``cost``), over every evaluation and re-check. Binning simulates about 10**7
#: points a second on one core (gr21.thm3 at n = 1000: 0.02 s an evaluation of 200
#: replicates), so 10**13 is some 12 days of one core: no budget, ``--evaluations`` or
#: ``--reps`` that was meant; the full budget at n = 10**5 is about 10**11.
MAX_SEARCH_POINTS = 10**13
#: Bytes a search keeps per evaluation: the law (a small array) and its value, kept for the
#: result's history, and their copies when it is assembled (measured: about 150; doubled).
_HISTORY_BYTES = 300

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


@dataclass(frozen=True)
class SearchPlan:
    """What a search searches, where and how hard: :func:`search`'s arguments, validated.

    Built from the arguments of :func:`search` as given (same names);
    ``__post_init__`` validates them once, before any search, and puts them in the form the
    stages use: ``target`` a target id, ``family`` a :class:`LawFamily`, ``grid`` a dict,
    ``budget`` a :class:`SearchBudget`, ``fresh_seed`` an int (default ``seed + 1``),
    ``progress`` a bool. ``guarantee`` and ``bound`` are the target's
    (:func:`resolve_target`) and ``objective`` the :class:`CheckCriterion` that differential
    evolution maximises, already evaluated once at the family's first benign law (which
    refuses a wrong family, grid or alpha) and sized before any simulation: its blocks and
    the outcomes each worker holds against memory, the whole search's simulated points
    against ``MAX_SEARCH_POINTS`` (:func:`check_search_work`).
    """

    target: str
    family: LawFamily
    grid: dict
    alpha: float
    budget: SearchBudget
    criterion: str
    seed: int
    fresh_seed: int | None
    n_jobs: int
    backend: str
    start: str
    baseline: bool
    known: bool
    progress: bool | None
    guarantee: str = field(init=False)
    bound: BoundRule = field(init=False)
    objective: CheckCriterion = field(init=False, repr=False)

    def __post_init__(self):
        target = guarantee_id(self.target)
        guarantee, bound = resolve_target(target)
        family = get_family(self.family) if isinstance(self.family, str) else self.family
        if not isinstance(family, LawFamily):
            raise ValueError(f"family must be a LawFamily or a family name, got {self.family!r}")
        if self.criterion not in CRITERIA:
            raise ValueError(f"criterion must be one of {CRITERIA}, got {self.criterion!r}")
        if not isinstance(self.grid, dict) or not self.grid:
            raise ValueError(f"grid must be a dict of single values, got {self.grid!r}")
        budget = get_search_budget(self.budget)
        normalised = {
            "target": target,
            "guarantee": guarantee,
            "bound": bound,
            "family": family,
            "grid": dict(self.grid),
            "budget": budget,
            "progress": show_progress(self.progress),
            "fresh_seed": self.seed + 1 if self.fresh_seed is None else self.fresh_seed,
        }
        for name, value in normalised.items():
            object.__setattr__(self, name, value)
        objective = CheckCriterion(
            target,
            guarantee,
            bound,
            family,
            tuple(sorted(self.grid.items())),
            float(self.alpha),
            self.criterion,
            budget.reps,
            self.seed,
            definition_of(guarantee),
        )
        probe = objective.check(family.benign[0])  # refuses a wrong family, grid or alpha
        # ... and a size whose blocks cannot fit in memory (one block per worker at a time),
        what = f"the search of {target}"
        check_experiments_fit(probe.experiments, n_jobs=self.n_jobs, what=what)
        # whose outcomes cannot (each worker evaluates a law on all its replicates at once;
        # the known laws are compared on fresh_reps),
        larger = "fresh_reps" if budget.fresh_reps > budget.reps else "reps"
        replicates = getattr(budget, larger)
        check_outcomes_fit(
            probe.experiments, reps=replicates, n_jobs=self.n_jobs, what=what, name=larger
        )
        # or whose simulated points are past any search meant, or whose history cannot fit
        check_search_work(what, family, budget, probe.experiments, baseline=self.baseline)
        check_count_fits(
            count=budget.total_evaluations(family.dim),
            bytes_each=_HISTORY_BYTES * (2 if self.baseline else 1),
            what=what,
            name="evaluations",
            detail="every law evaluated and its value, kept for the result"
            + (", by the search and by random sampling" if self.baseline else ""),
        )
        object.__setattr__(self, "objective", objective)

    @property
    def optimiser_keywords(self) -> dict:
        """The optimisers' keywords: the CRN root seed and the parallel evaluation."""
        return {"seed": self.seed, "n_jobs": self.n_jobs, "backend": self.backend}


def check_search_work(what: str, family: LawFamily, budget: SearchBudget, experiments, *, baseline):
    """Refuse a search that would simulate more than ``MAX_SEARCH_POINTS``, before any work.

    The points: the experiments' ``cost`` per replicate times the replicates (whole blocks)
    of every evaluation (the benign start points, differential evolution and refinement,
    and random sampling's as many with ``baseline``) and of the re-checks on ``fresh_reps``
    (one per law re-checked and the comparison with the known laws, counted once).

    Raises
    ------
    ValueError
        Naming the points, the ceiling, and the largest ``reps`` with these evaluations and
        the most evaluations with these ``reps`` that fit (or the largest ``fresh_reps``).
    """
    per_replicate = sum(int(getattr(exp, "cost", 0) or 0) for exp in experiments)
    if per_replicate < 1:
        return
    rounds = 2 if baseline else 1  # random sampling spends the same budget again
    evaluations = budget.total_evaluations(family.dim) * rounds + len(family.benign)
    fresh = rounds + 1  # the re-checks and the comparison with the known laws

    def whole(reps: int) -> int:
        return math.ceil(reps / BLOCK_REPS) * BLOCK_REPS

    fresh_points = per_replicate * fresh * whole(budget.fresh_reps)
    points = per_replicate * evaluations * whole(budget.reps) + fresh_points
    if points <= MAX_SEARCH_POINTS:
        return
    said = (
        f"{what}: about {evaluations} evaluations of {budget.reps} replicates and {fresh} "
        f"re-checks of {budget.fresh_reps}, at {per_replicate} simulated points a replicate, "
        f"are about {points:.2g} points, more than the {MAX_SEARCH_POINTS:.0e} a search may "
        "simulate (some 12 days of one core)"
    )
    if fresh_points > MAX_SEARCH_POINTS:  # the re-checks alone (a budget's fresh_reps)
        largest = MAX_SEARCH_POINTS // (per_replicate * fresh) // BLOCK_REPS * BLOCK_REPS
        raise ValueError(f"{said}; the largest fresh_reps that fits is {largest}")
    room = MAX_SEARCH_POINTS - fresh_points
    most = (room // (per_replicate * whole(budget.reps)) - len(family.benign)) // rounds
    fits = [f"the most evaluations with reps = {budget.reps} is about {max(most, 0)}"]
    reps = room // (per_replicate * evaluations) // BLOCK_REPS * BLOCK_REPS
    if reps >= BLOCK_REPS:
        fits.insert(0, f"the largest reps that fits with these evaluations is {reps}")
    raise ValueError(f"{said}; " + ", ".join(fits))


def _estimate(plan: SearchPlan, n_known: int, on_estimate):
    """The criterion at the benign start points, and the estimate their times give.

    The estimate is logged at INFO and handed to ``on_estimate`` (if given).
    """
    benign, seconds = timed_batch(plan.objective, plan.family.benign)
    estimate = estimate_search(
        plan.objective,
        plan.family,
        plan.budget,
        seconds,
        known=n_known,
        baseline=plan.baseline,
        n_jobs=plan.n_jobs,
    )
    logger.info("search of %s: %s", plan.target, estimate.line())
    if on_estimate is not None:
        on_estimate(estimate)
    return benign, estimate


def _refine_and_compare(plan: SearchPlan, de: OptimResult, known_laws: list) -> tuple:
    """``(theta, record)``: line searches from the optimiser's best law, then the known laws.

    ``record`` is the refinement's record with the comparison as its last stage (None
    where neither ran).
    """
    theta, record = refine_incumbent(
        plan.objective, plan.family, de.theta, plan.budget, **plan.optimiser_keywords
    )
    theta, stage = keep_the_worst(
        plan.objective, theta, known_laws, plan.budget, **plan.optimiser_keywords
    )
    if stage is not None:
        record = {"stages": [*(record or {}).get("stages", ()), stage]}
    return theta, record


def _found(plan: SearchPlan, opt: OptimResult, refined=None) -> Found:
    """Re-check the best law (``refined``: ``(theta, record)`` of the refinement, if any)."""
    theta, record = refined if refined is not None else (opt.theta, None)
    details = plan.objective.details(theta)
    fresh = fresh_check(
        plan.objective,
        theta,
        reps=plan.budget.fresh_reps,
        root_seed=plan.fresh_seed,
        n_jobs=plan.n_jobs,
        backend=plan.backend,
    )
    evaluations = opt.evaluations
    method = opt.method
    if record is not None:
        evaluations += sum(stage["evaluations"] for stage in record["stages"])
        if plan.budget.refine:
            method += " + coordinate_refinement"
        method += "".join(f" + known law ({s['kept']})" for s in record["stages"] if s.get("kept"))
    return Found(
        method,
        tuple(float(x) for x in theta),
        plan.family.describe(theta),
        float(details["criterion"]),
        details["failure"],
        details["ratio_quantile"],
        evaluations,
        fresh,
        tuple(float(v) for v in opt.best_so_far()),
        record,
    )


def _search_and_baseline(plan: SearchPlan, known_laws: list, bar) -> tuple:
    """``(found, random)``: the search's law and random sampling's (None without baseline)."""
    de = differential_evolution_search(
        plan.objective, plan.family, plan.budget, start=plan.start, **plan.optimiser_keywords
    )
    refined = _refine_and_compare(plan, de, known_laws)
    bar.set_postfix_str("re-check on a fresh seed")
    found = _found(plan, de, refined)
    if not plan.baseline:
        return found, None
    bar.set_postfix_str("random sampling")
    rs = random_search(plan.objective, plan.family, plan.budget, **plan.optimiser_keywords)
    return found, _found(plan, rs)


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
        values, a family, grid or alpha the guarantee refuses, a size that cannot fit in
        memory (a block, the outcomes of ``reps`` or ``fresh_reps`` replicates in each
        worker, the history of every evaluation), or a search that would simulate more
        than ``MAX_SEARCH_POINTS`` points: before any search, naming the largest size
        that fits.

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
    plan = SearchPlan(
        target,
        family,
        grid,
        alpha=alpha,
        budget=budget,
        criterion=criterion,
        seed=seed,
        fresh_seed=fresh_seed,
        n_jobs=n_jobs,
        backend=backend,
        start=start,
        baseline=baseline,
        known=known,
        progress=progress,
    )
    reference = analytic_reference(plan.guarantee, plan.bound, plan.grid, plan.alpha)
    known_laws = known_points(plan.family, reference) if plan.known else []
    benign, estimate = _estimate(plan, len(known_laws), on_estimate)
    with progress_bar(estimate, plan.progress, done=len(benign)) as bar:
        found, rnd = _search_and_baseline(plan, known_laws, bar)
    return SearchResult(
        plan.target,
        plan.guarantee,
        plan.bound.name,
        plan.family.spec(),
        dict(plan.grid),
        float(plan.alpha),
        plan.criterion,
        plan.budget,
        plan.seed,
        plan.fresh_seed,
        found,
        rnd,
        reference,
        tuple(float(v) for v in benign),
        time.perf_counter() - started,
    )
