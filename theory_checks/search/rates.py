r"""Worst constants of rate claims: the law that needs the largest sample (issue 27).

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


@dataclass(frozen=True)
class Threshold:
    """n* of one point, its rate h and the implied constant c = n*/h with a 95% interval.

    ``censored`` is ``"below"`` (coverage >= 1 - delta at the first grid n: n* is at most
    it), ``"above"`` (not reached at the last: n* is infinite on this grid) or ``""``.
    """

    n_star: float
    h: float
    c: float
    c_ci: tuple
    reps: int
    censored: str = ""

    def describe(self) -> str:
        """``c [lo, hi] (n* = ..., R reps)``."""
        lo, hi = self.c_ci
        cens = f", censored {self.censored}" if self.censored else ""
        return f"{self.c:.3g} [{lo:.3g}, {hi:.3g}] (n* = {self.n_star:.4g}, h = {self.h:.4g}{cens})"


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


@dataclass(frozen=True)
class SweepFit:
    """The exponent test: n* at the sweep's points and the slope of log n* on log h.

    ``finding``: the 95% interval of the slope lies above ``1 + slack`` (n*/h grows).
    """

    labels: tuple
    thresholds: tuple
    slope: float
    slope_ci: tuple
    slack: float
    finding: bool = field(init=False)

    def __post_init__(self):
        object.__setattr__(self, "finding", bool(self.slope_ci[0] > 1.0 + self.slack))

    def describe(self) -> str:
        """``slope s [lo, hi] over labels: c values``."""
        lo, hi = self.slope_ci
        cs = ", ".join(
            f"{lab}: c={t.c:.3g}" for lab, t in zip(self.labels, self.thresholds, strict=True)
        )
        return f"slope of log n* on log h {self.slope:.2f} [{lo:.2f}, {hi:.2f}] ({cs})"


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


@dataclass(frozen=True)
class RateSearchResult:
    """What :func:`rate_worst_law` found and re-measured.

    Attributes
    ----------
    check_id, family : str
    fixed : dict
        The claim's fixed parameters.
    theta : tuple
        The worst parameter found; ``law`` describes it.
    c_search : float
        c of the winner on the search's CRN replicates (selected: biased upwards).
    c_validation : float
        Its c on the validation seed (the largest of the top candidates there).
    fresh : Threshold
        The winner re-measured on ``fresh_seed``.
    hand_picked : tuple of (str, Threshold)
        The suite's laws, same seed and replicates.
    sweep : SweepFit or None
        The exponent test of the winner's shape.
    evaluations, replicates : int
        Candidates evaluated; replicates simulated in all (each over a whole n grid).
    seconds : float
    """

    check_id: str
    family: str
    fixed: dict
    theta: tuple
    law: str
    c_search: float
    c_validation: float
    fresh: Threshold
    hand_picked: tuple
    sweep: SweepFit | None
    evaluations: int
    replicates: int
    seconds: float
    seed: int
    fresh_seed: int

    @property
    def worst_hand_picked(self) -> tuple:
        """``(name, Threshold)`` of the hand-picked point with the largest c."""
        return max(self.hand_picked, key=lambda p: p[1].c)

    @property
    def ratio(self) -> float:
        """Fresh c of the winner over the largest hand-picked c."""
        return self.fresh.c / self.worst_hand_picked[1].c

    @property
    def verdict(self) -> str:
        """``finding`` (the winner's slope exceeds the claim), else ``survived``."""
        if self.sweep is not None and self.sweep.finding:
            return "finding"
        return "survived"

    def summary(self) -> str:
        """Several lines: law, fresh c, hand-picked c's, exponent test and verdict."""
        name = self.worst_hand_picked[0]
        lines = [
            f"{self.check_id} on {self.family} at {self.fixed}: worst c = {self.c_search:.3g} "
            f"(search), {self.c_validation:.3g} (validation), fresh {self.fresh.describe()}",
            f"  law: {self.law}",
            "  hand-picked: "
            + "; ".join(
                f"{n}: {t.c:.3g} [{t.c_ci[0]:.3g}, {t.c_ci[1]:.3g}]" for n, t in self.hand_picked
            ),
            f"  worst / largest hand-picked ({name}): {self.ratio:.2f}",
        ]
        if self.sweep is not None:
            lines.append(f"  exponent test: {self.sweep.describe()}")
        lines.append(
            f"  verdict: {self.verdict}; {self.evaluations} evaluations, {self.replicates} "
            f"replicates, {self.seconds:.0f} s (seeds {self.seed}, {self.fresh_seed})"
        )
        return "\n".join(lines)

    def table_row(self) -> str:
        """A Markdown table row (check, family, fixed, worst c, fresh c, hand-picked, verdict)."""
        name, hp = self.worst_hand_picked
        fixed = ", ".join(f"{k}={v}" for k, v in self.fixed.items())
        lo, hi = self.fresh.c_ci
        sw = ""
        if self.sweep is not None:
            s_lo, s_hi = self.sweep.slope_ci
            sw = f"slope {self.sweep.slope:.2f} [{s_lo:.2f}, {s_hi:.2f}]; "
        return (
            f"| {self.check_id} | {self.family} | {fixed} | {self.c_search:.3g} "
            f"({self.c_validation:.3g}) | "
            f"{self.fresh.c:.3g} [{lo:.3g}, {hi:.3g}] | {hp.c:.3g} ({name}) | {sw}{self.verdict} |"
        )


def _positive(v, name):
    if isinstance(v, bool) or not isinstance(v, int | np.integer) or v < 1:
        raise ValueError(f"{name} must be a positive integer, got {v!r}")
    return int(v)


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
    target = get_target(check_id)
    seed, fresh_seed = check_root_seed(seed), check_root_seed(fresh_seed)
    if seed == fresh_seed:
        raise ValueError(f"fresh_seed must differ from seed, got {fresh_seed!r}")
    validation_seed = check_root_seed(
        fresh_seed + 1 if validation_seed is None else validation_seed
    )
    if validation_seed in (seed, fresh_seed):
        raise ValueError(
            f"validation_seed must differ from seed and fresh_seed, got {validation_seed!r}"
        )
    validate_top = _positive(validate_top, "validate_top")
    fresh_reps = _positive(fresh_reps, "fresh_reps")
    sweep_reps = fresh_reps if sweep_reps is None else _positive(sweep_reps, "sweep_reps")
    budget = SearchBudget("rate", population, generations, _positive(reps, "reps"), fresh_reps)
    t0 = time.perf_counter()
    family = target.family
    opt = differential_evolution_search(
        RateObjective(target, seed, reps), family, budget, seed=seed, n_jobs=n_jobs
    )
    log.info("%s: search c = %.3g at %s", target.check_id, opt.value, opt.theta)
    # the CRN objective is noisy and the best of many evaluations is biased upwards: the
    # top candidates are re-measured on a validation seed and the largest c there wins
    order = np.argsort(-np.where(np.isfinite(opt.values), opt.values, -np.inf), kind="stable")
    top, c_top = [], []
    for i in order:
        theta = tuple(float(x) for x in opt.thetas[i])
        if theta in top:
            continue
        top.append(theta)
        c_top.append(opt.values[i])
        if len(top) == validate_top:
            break
    vrng = generator(validation_seed, "rate_search.validation")
    c_val = [_measure(target, target.point(t), validation_seed, fresh_reps, vrng)[0].c for t in top]
    best = int(np.argmax(c_val))
    theta = top[best]
    point = target.point(theta)
    rng = generator(fresh_seed, "rate_search.fresh")
    fresh = _measure(target, point, fresh_seed, fresh_reps, rng)[0]
    hand = tuple(
        (name, _measure(target, p, fresh_seed, fresh_reps, rng)[0])
        for name, p in target.hand_picked()
    )
    fit = (
        sweep_fit(target, target.sweep(theta), seed=fresh_seed, reps=sweep_reps) if sweep else None
    )
    replicates = budget.replicates + _rounded(fresh_reps) * (1 + len(hand) + len(top))
    replicates += _rounded(sweep_reps) * len(fit.labels) if fit else 0
    return RateSearchResult(
        target.check_id,
        family.name,
        target.fixed(),
        theta,
        target.describe_point(point),
        float(c_top[best]),
        float(c_val[best]),
        fresh,
        hand,
        fit,
        opt.evaluations,
        replicates,
        time.perf_counter() - t0,
        seed,
        fresh_seed,
    )


_HEADER = (
    "| check | family | fixed | worst c: search (validation) | fresh c [95%] "
    "| largest hand-picked c "
    "| exponent test; verdict |\n|---|---|---|---|---|---|---|"
)


def markdown_table(results) -> str:
    """A Markdown table of :class:`RateSearchResult` rows (for reports and the docs)."""
    return "\n".join([_HEADER, *(r.table_row() for r in results)])
