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

:data:`POWER_ROWS` are the rows of the documented table (``calcheck search --power``), at
n = 1000, B = 20, alpha = 0.01 on ``beta_piecewise`` (k = 5), each at a factor where the
worst constant eta (exact, ``analytic_reference``)
violates the scaled bound; ``gr21.thm3.times_0.9`` is a row where no constant eta does (no
search should flag it). For top-label binning (gr22 Theorem 1, per predicted class) the
hardest known law is a constant eta in every class, but its exact failure depends on the
class weights through the class counts (0.010-0.022 at eta = 1/2 over a grid of weights for
the row below):
its reference is the exact failure of each class's worst constant eta *at the class weights
of the law found*, one per seed.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from calcheck.simulations.laws.families import LawFamily, get_family
from calcheck.simulations.search import get_search_budget

from .driver import CheckCriterion, analytic_reference, fresh_check, resolve_target, search

__all__ = ["POWER_ROWS", "SearchPower", "power_table", "search_power", "top_label_reference"]

_GRID = {"n": 1000, "n_bins": 20}
#: (target, family, family options, grid, alpha, criterion): the power table's rows.
POWER_ROWS = (
    ("gr21.thm3.times_0.8", "beta_piecewise", {"k": 5}, _GRID, 0.01, "mean_ratio"),
    ("gr21.thm3.times_0.9", "beta_piecewise", {"k": 5}, _GRID, 0.01, "mean_ratio"),
    ("gr21.thm4.conditional.times_0.8", "beta_piecewise", {"k": 5}, _GRID, 0.01, "mean_ratio"),
    ("gr21.thm4.marginal.times_0.7", "beta_piecewise", {"k": 5}, _GRID, 0.01, "mean_ratio"),
    ("gr21.cor1.times_0.7", "beta_piecewise", {"k": 5}, _GRID, 0.01, "mean_ratio"),
    ("nch14.thm31.hoeffding.times_0.8", "beta_piecewise", {"k": 5}, _GRID, 0.01, "mean_ratio"),
    ("nch14.eq9.times_0.7", "beta_piecewise", {"k": 5}, _GRID, 0.01, "mean_ratio"),
    (
        "gr22.thm1.conditional.times_0.8",
        "top_label",
        {"n_classes": 3},
        {"n": 2000, "points_per_bin": 50},
        0.01,
        "mean_ratio",
    ),
)


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
    fam = get_family(family) if isinstance(family, str) else family
    if not isinstance(fam, LawFamily):
        raise ValueError(f"family must be a LawFamily or a family name, got {family!r}")
    budget = get_search_budget(budget)
    guarantee, bound = resolve_target(target)
    reference = analytic_reference(guarantee, bound, dict(grid), alpha)
    stated = CheckCriterion(
        guarantee,
        guarantee,
        resolve_target(guarantee)[1],
        fam,
        tuple(sorted(grid.items())),
        float(alpha),
        criterion,
        budget.reps,
        0,
    )
    started = time.perf_counter()
    records = []
    for s in range(seeds):
        root = int(first_seed) + 1000 * s
        res = search(
            target,
            fam,
            grid=dict(grid),
            alpha=alpha,
            budget=budget,
            criterion=criterion,
            seed=root,
            fresh_seed=root + 1,
            n_jobs=n_jobs,
            backend=backend,
            baseline=False,
            known=False,  # the optimiser's own power: not told the known worst laws
        )
        fresh = res.search.fresh
        again = fresh_check(
            stated,
            res.search.theta,
            reps=budget.fresh_reps,
            root_seed=root + 1,
            n_jobs=n_jobs,
            backend=backend,
        )
        ref = (
            reference["failure"]
            if reference is not None
            else _top_label_reference(stated, res.search.theta, bound, guarantee, alpha)
        )
        record = {
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
        records.append(record)
        if progress is not None:
            progress(s + 1, seeds, record)
    return SearchPower(
        target,
        guarantee,
        fam.name,
        dict(grid),
        float(alpha),
        criterion,
        budget.name,
        None if reference is None else float(reference["failure"]),
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
    stated = CheckCriterion(
        guarantee,
        guarantee,
        resolve_target(guarantee)[1],
        fam,
        tuple(sorted(grid.items())),
        float(alpha),
        "mean_ratio",
        1,
        0,
    )
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
