"""The power of the law search itself, measured over root seeds.

A search that reports "consistent" certifies nothing unless it would have found a violation
that is there. On guarantees whose worst constant eta is known exactly (uniform-mass binning,
``calcheck.theory_checks.search.driver.EXACT_WORST_CASE``; the certified coverage bounds every law),
:func:`search_power` runs the search of a scaled bound (``"<guarantee>.times_<f>"``) from
independent root seeds and counts, over the seeds:

``flagged``
    searches whose law is found violated on the fresh seed (the suite's exact binomial
    verdict; correct only when the worst constant eta's exact failure exceeds alpha);
``reached``
    searches whose law reaches the worst constant eta within Monte Carlo error: its exact
    failure rate is at most the upper end of the 95% Clopper-Pearson interval of
    the fresh-seed failure rate (a law significantly *above* it would be a finding, counted
    in ``above``);
``stated_consistent``
    searches whose law keeps the *stated* bound consistent on the same fresh seed.

The searches run without the comparison with the family's known worst laws
(``search(..., known=False)``; ``calcheck.theory_checks.search.known``), which would hand
them the answer: the power measured is the optimiser's own.

:data:`~calcheck.theory_checks.catalog.search_sweep.POWER_ROWS` are the rows of the
documented table (``calcheck search --power``), at n = 1000, B = 20, alpha = 0.01 on
``beta_piecewise`` (k = 5), each at a factor where the worst constant eta (exact,
``analytic_reference``) violates the scaled bound; ``gr21.thm3.times_0.9`` is a row where no
constant eta does (no search should flag it). For top-label binning (gr22 Theorem 1, per
predicted class) the hardest known law is a constant eta in every class, but its exact
failure depends on the class weights through the class counts (0.010-0.022 at eta = 1/2 over
a grid of weights for the row below): its reference is the exact failure of each class's
worst constant eta *at the class weights of the law found*, one per seed.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from calcheck.simulations.laws.families import LawFamily, get_family
from calcheck.simulations.search import SearchBudget, get_search_budget

from ..catalog.search_sweep import POWER_ROWS
from ..checks.events import BoundRule
from .driver import CheckCriterion, analytic_reference, fresh_check, resolve_target, search

__all__ = ["POWER_ROWS", "SearchPower", "power_table", "search_power", "top_label_reference"]


@dataclass(frozen=True)
class SearchPower:
    """Searches of one target from ``len(records)`` root seeds (see the module docstring).

    ``records`` holds one dict per seed: ``seed``, ``theta``, ``failure`` (fresh seed) with
    ``failure_low``/``failure_high`` (95% Clopper-Pearson), ``outcome`` and
    ``stated_outcome``. ``seconds`` is not part of equality.
    """

    target: str
    guarantee: str
    family: str
    grid: dict
    alpha: float
    criterion: str
    budget: str
    reference: float | None
    records: tuple
    seconds: float = 0.0

    @property
    def seeds(self) -> int:
        """Number of root seeds searched."""
        return len(self.records)

    @property
    def flagged(self) -> int:
        """Searches whose law is violated on the fresh seed."""
        return sum(r["outcome"] == "violated" for r in self.records)

    @property
    def reached(self) -> int | None:
        """Searches within Monte Carlo error of (or above) the worst constant eta."""
        refs = [r.get("reference") for r in self.records]
        if any(x is None for x in refs):
            return None
        return sum(x <= r["failure_high"] for x, r in zip(refs, self.records, strict=True))

    @property
    def above(self) -> int | None:
        """Searches significantly above the worst constant eta (a finding if any)."""
        refs = [r.get("reference") for r in self.records]
        if any(x is None for x in refs):
            return None
        return sum(x < r["failure_low"] for x, r in zip(refs, self.records, strict=True))

    @property
    def stated_consistent(self) -> int:
        """Searches whose law keeps the stated bound consistent on the fresh seed."""
        return sum(r["stated_outcome"] == "consistent" for r in self.records)

    def row(self) -> str:
        """One Markdown table row."""
        refs = [r.get("reference") for r in self.records]
        if self.reference is not None:
            ref, worst = f"{self.reference:.4f}", self.reference
        elif refs and all(x is not None for x in refs):
            ref, worst = f"{min(refs):.4f}-{max(refs):.4f} (at the weights found)", min(refs)
        else:
            ref, worst = "", None
        violated = "" if worst is None else (" > alpha" if worst > self.alpha else " <= alpha")
        grid = ", ".join(f"{k}={v}" for k, v in self.grid.items())
        reached = "" if self.reached is None else f"{self.reached}/{self.seeds} ({self.above})"
        return (
            f"| {self.target} ({self.alpha:g}) | {self.family} ({grid}) | {ref}{violated} | "
            f"{self.flagged}/{self.seeds} | {reached} | {self.stated_consistent}/{self.seeds} | "
            f"{self.seconds / max(1, self.seeds):.1f} |"
        )

    def to_dict(self) -> dict:
        """JSON-able record with the counts."""
        return {
            "target": self.target,
            "guarantee": self.guarantee,
            "family": self.family,
            "grid": dict(self.grid),
            "alpha": self.alpha,
            "criterion": self.criterion,
            "budget": self.budget,
            "reference": self.reference,
            "seeds": self.seeds,
            "flagged": self.flagged,
            "reached": self.reached,
            "above": self.above,
            "stated_consistent": self.stated_consistent,
            "seconds": self.seconds,
            "row": self.row(),
            "records": [dict(r) for r in self.records],
        }


#: Header of :func:`power_table`.
TABLE_HEADER = (
    "| target (alpha) | family (grid) | worst case: exact failure | flagged | reached (above) "
    "| stated holds | s |\n"
    "|---|---|---|---|---|---|---|"
)


def power_table(results) -> str:
    """A Markdown table of :class:`SearchPower` results."""
    return "\n".join([TABLE_HEADER, *(r.row() for r in results)])


def _stated_criterion(guarantee: str, family, grid: dict, alpha, criterion: str, reps: int):
    """The criterion of ``guarantee`` at its stated bound (CRN root 0), for re-checking a law."""
    return CheckCriterion(
        guarantee,
        guarantee,
        resolve_target(guarantee)[1],
        family,
        tuple(sorted(grid.items())),
        float(alpha),
        criterion,
        reps,
        0,
    )


@dataclass(frozen=True)
class _PowerPlan:
    """What :func:`search_power` searches from each seed, validated once in ``__post_init__``.

    Built from its arguments as given; ``family`` becomes a :class:`LawFamily`, ``grid`` a
    dict and ``budget`` a :class:`SearchBudget`. ``guarantee`` and ``bound`` are the
    target's, ``reference`` its :func:`analytic_reference` (None where the worst case
    depends on the law found), ``stated`` the criterion of the stated bound.
    """

    target: str
    family: LawFamily
    grid: dict
    alpha: float
    criterion: str
    budget: SearchBudget
    n_jobs: int
    backend: str
    guarantee: str = field(init=False)
    bound: BoundRule = field(init=False)
    reference: dict | None = field(init=False)
    stated: CheckCriterion = field(init=False, repr=False)

    def __post_init__(self):
        family = get_family(self.family) if isinstance(self.family, str) else self.family
        if not isinstance(family, LawFamily):
            raise ValueError(f"family must be a LawFamily or a family name, got {self.family!r}")
        budget = get_search_budget(self.budget)
        guarantee, bound = resolve_target(self.target)
        reference = analytic_reference(guarantee, bound, dict(self.grid), self.alpha)
        stated = _stated_criterion(
            guarantee, family, self.grid, self.alpha, self.criterion, budget.reps
        )
        normalised = {
            "family": family,
            "grid": dict(self.grid),
            "budget": budget,
            "guarantee": guarantee,
            "bound": bound,
            "reference": reference,
            "stated": stated,
        }
        for name, value in normalised.items():
            object.__setattr__(self, name, value)


def _seed_record(plan: _PowerPlan, root: int) -> dict:
    """Search from CRN root ``root``, re-check on ``root + 1``: one record of SearchPower."""
    res = search(
        plan.target,
        plan.family,
        grid=dict(plan.grid),
        alpha=plan.alpha,
        budget=plan.budget,
        criterion=plan.criterion,
        seed=root,
        fresh_seed=root + 1,
        n_jobs=plan.n_jobs,
        backend=plan.backend,
        baseline=False,
        known=False,  # the optimiser's own power: not told the known worst laws
    )
    fresh = res.search.fresh
    again = fresh_check(
        plan.stated,
        res.search.theta,
        reps=plan.budget.fresh_reps,
        root_seed=root + 1,
        n_jobs=plan.n_jobs,
        backend=plan.backend,
    )
    ref = (
        plan.reference["failure"]
        if plan.reference is not None
        else _top_label_reference(
            plan.stated, res.search.theta, plan.bound, plan.guarantee, plan.alpha
        )
    )
    return {
        "reference": ref,
        "seed": root,
        "theta": list(res.search.theta),
        "failure": fresh.failure_rate,
        "failure_low": 1.0 - fresh.verdict.ci_high,
        "failure_high": 1.0 - fresh.verdict.ci_low,
        "outcome": fresh.outcome,
        "stated_outcome": again.outcome,
        "stated_failure": again.failure_rate,
    }


def search_power(
    target: str,
    family,
    *,
    grid: dict,
    alpha: float,
    criterion: str = "mean_ratio",
    seeds: int = 20,
    first_seed: int = 0,
    budget="quick",
    n_jobs: int = 1,
    backend: str = "loky",
    progress=None,
) -> SearchPower:
    """Search ``target`` from ``seeds`` root seeds and count what the searches found.

    Seed ``s`` searches with CRN root ``first_seed + 1000 s`` and re-checks on that plus one
    (:func:`calcheck.search`, without the random-sampling baseline); the stated bound is
    re-checked on the law found, on the same fresh seed.

    Parameters
    ----------
    target : str
        ``"<guarantee>.times_<f>"``, a guarantee or a bound-only control.
    family : LawFamily or str
    grid : dict
    alpha : float
    criterion : str
    seeds : int
        Number of root seeds (at least 1).
    first_seed : int
    budget : str or SearchBudget
    n_jobs, backend
        Parallel evaluation (results do not depend on them).
    progress : callable, optional
        ``progress(done, total, record)`` after each seed.

    Returns
    -------
    SearchPower
    """
    if isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 1:
        raise ValueError(f"seeds must be a positive integer, got {seeds!r}")
    plan = _PowerPlan(target, family, grid, alpha, criterion, budget, n_jobs, backend)
    started = time.perf_counter()
    records = []
    for s in range(seeds):
        records.append(_seed_record(plan, int(first_seed) + 1000 * s))
        if progress is not None:
            progress(s + 1, seeds, records[-1])
    return SearchPower(
        target,
        plan.guarantee,
        plan.family.name,
        dict(plan.grid),
        float(alpha),
        criterion,
        plan.budget.name,
        None if plan.reference is None else float(plan.reference["failure"]),
        tuple(records),
        time.perf_counter() - started,
    )


def top_label_reference(target: str, family, grid: dict, alpha: float, theta):
    """The reference of one seed of a top-label row at the law found (theta), or None.

    What :func:`search_power` records per seed where the worst case depends on the class
    weights (``docs/tools/record_power.py`` recomputes it with the current
    :func:`calcheck.simulations.conditional_coverage.worst_constant_eta`).
    """
    fam = get_family(family) if isinstance(family, str) else family
    guarantee, bound = resolve_target(target)
    stated = _stated_criterion(guarantee, fam, grid, alpha, "mean_ratio", 1)
    return _top_label_reference(stated, theta, bound, guarantee, alpha)


def _top_label_reference(stated, theta, bound, guarantee, alpha):
    """Exact failure of the worst constant eta per class, at theta's class weights, or None.

    Classes are independent (stratified counts;
    :func:`calcheck.simulations.conditional_coverage.parts`): the worst case takes each
    class's worst constant eta
    (:func:`calcheck.simulations.conditional_coverage.worst_constant_eta` on ``(n_l, B_l)``);
    the conditional event multiplies the classes' coverages, the marginal one weighs them by
    ``P(c = l)``.
    """
    from calcheck.simulations.conditional_coverage import worst_constant_eta

    check = stated.check(theta)
    exp = check.experiments[0]
    split = getattr(exp, "binary_parts", None)
    classes = split() if split is not None else []
    if not classes or check.event.statistic not in ("max_error", "test_point_error"):
        return None
    kind = "marginal" if check.event.statistic == "test_point_error" else "conditional"
    eps = float(bound.radius(guarantee, exp.symbols(), alpha))
    fails = [worst_constant_eta(p.n, p.n_bins, eps, event=kind)[1] for _, p in classes]
    if kind == "conditional":
        return float(1.0 - np.prod([1.0 - f for f in fails]))
    return float(np.dot([w for w, _ in classes], fails))
