"""Declarative theory checks (the A and P of ADEMP) and their evaluation.

A :class:`Check` names a registered guarantee, the calibrator it is about, the laws to run
it on, a grid of (n, B) and miscoverages alpha, and the per-replicate event the guarantee
speaks of (``metric``). Running it simulates one cell per (law, n, B) through the engine
(cells are shared between checks that use the same calibrator and law) and turns every
(law, n, B, alpha) into a :class:`CellResult` with an exact binomial verdict.

Metrics
-------
``max_error``
    Conditional guarantees: success iff ``max_{r in Range(h)} |E[Y|h=r] - r| <= eps``.
``l2_ece``
    High-probability ECE guarantees: success iff the exact l2-ECE ``<= eps`` (l2 bounds
    every lp with p <= 2; p -> inf is ``max_error``).
``marginal``
    Marginal guarantees: a fresh test point per replicate. Given the fitted map, the test
    point's error is ``<= eps`` with exact probability ``q = sum_b w_b 1{err_b <= eps}``;
    the success is ``1{V < q}`` with an independent uniform V, a Bernoulli(q) outcome exactly
    as a drawn test point would give, so the binomial test is exact. The mean of q (the
    Rao-Blackwellised coverage) is reported too.
``mean_l2_ece``
    Expectation guarantees ``E[l2-ECE] <= bound``: success ``1{V >= l2-ECE}`` is Bernoulli
    with mean ``1 - E[l2-ECE]``, tested against the claimed ``1 - bound``.

False alarms: each check tests its cells at ``false_alarm / (number of cells)``
(Bonferroni), so a check whose guarantee holds is reported violated with probability at
most ``false_alarm``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from bounds import registry
from simulations.engine import BLOCK_REPS, Cell, load_cell, n_blocks_for, run_cells
from simulations.laws import LAWS, Law
from simulations.metrics import conditional_max_error, lp_ece, marginal_validity

from .verdicts import CoverageVerdict, coverage_verdict, weighted_upper_quantile

__all__ = [
    "BUDGETS",
    "CLAIMS",
    "CellResult",
    "Check",
    "CheckResult",
    "EventCheck",
    "all_checks",
    "evaluate_check",
    "gr21_checks",
    "run_checks",
]

METRICS = ("max_error", "l2_ece", "marginal", "mean_l2_ece")
BOUND_MODES = ("stated", "n_in_place_of_n_over_B")

#: Replicates per cell for each budget. Quick: R = 4000 gives a Clopper-Pearson half-width
#: of about 0.009 at coverage 0.9 and detects a shortfall of about 0.03 below 1 - alpha with
#: power 0.9 at a per-cell false-alarm rate of 1e-3/36. Full: R = 10000, half-width 0.006.
BUDGETS = {"quick": 4000, "full": 10000}


@dataclass(frozen=True)
class Check:
    """One theory check: a guarantee x calibrator x laws x grid x replicates.

    Parameters
    ----------
    id : str
        Check id; a guarantee's own check has the guarantee id, controls add a suffix.
    guarantee : str
        Registered guarantee id (``bounds.registry``).
    calibrator : dict
        Calibrator spec, ``{"name": ..., <parameters>}``.
    laws : tuple of Law
    grid : tuple of (n, n_bins)
    alphas : tuple of float
        Miscoverages (ignored by expectation guarantees).
    metric : str
        One of ``max_error``, ``l2_ece``, ``marginal``, ``mean_l2_ece``.
    expect : {"consistent", "violated"}
        "violated" marks a negative control: the suite must flag it.
    bound_mode : {"stated", "n_in_place_of_n_over_B"}
        "n_in_place_of_n_over_B" evaluates the bound at ``n * B`` calibration points, i.e.
        with n where the theorem has n/B: a deliberately wrong bound (negative control).
    delta : float
        Randomisation parameter passed to bounds that take one.
    description : str
    """

    id: str
    guarantee: str
    calibrator: dict
    laws: tuple[Law, ...]
    grid: tuple[tuple[int, int], ...]
    alphas: tuple[float, ...] = (0.1,)
    metric: str = "max_error"
    expect: str = "consistent"
    bound_mode: str = "stated"
    delta: float = 0.0
    description: str = ""

    def __post_init__(self):
        g = registry.get(self.guarantee)
        if self.metric not in METRICS:
            raise ValueError(f"metric must be one of {METRICS}, got {self.metric!r}")
        if self.expect not in ("consistent", "violated"):
            raise ValueError(f"expect must be 'consistent' or 'violated', got {self.expect!r}")
        if self.bound_mode not in BOUND_MODES:
            raise ValueError(f"bound_mode must be one of {BOUND_MODES}, got {self.bound_mode!r}")
        expectation = g.quantifier == "expectation"
        if expectation != (self.metric == "mean_l2_ece"):
            raise ValueError(
                f"metric {self.metric!r} does not fit the {g.quantifier} guarantee {g.id!r}"
            )
        if not self.laws or not self.grid:
            raise ValueError(f"check {self.id!r} needs at least one law and one grid point")
        for a in self.alphas:
            if not (0 < a < 1):
                raise ValueError(f"alpha must lie in (0, 1), got {a!r}")
        for n, b in self.grid:
            if n < 2 * b:
                raise ValueError(f"grid point needs n >= 2 * n_bins, got n={n}, n_bins={b}")

    @property
    def is_control(self) -> bool:
        return self.expect == "violated"

    def cells(self) -> list[tuple[Law, int, int, Cell]]:
        return [(law, n, b, Cell(self.calibrator, law, int(n), int(b)))
                for law in self.laws for n, b in self.grid]

    def simulation_cells(self) -> list:
        """What the engine must simulate for this check."""
        return [cell for *_, cell in self.cells()]

    def law_specs(self) -> dict:
        return {law.name: law.spec() for law in self.laws}

    def evaluate(self, store, reps: int, root_seed: int, false_alarm: float) -> CheckResult:
        return evaluate_check(self, store, reps, root_seed, false_alarm)

    def effective_alphas(self) -> tuple:
        return (None,) if self.metric == "mean_l2_ece" else self.alphas

    def bound(self, n: int, n_bins: int, alpha) -> float:
        g = registry.get(self.guarantee)
        n_eval = n * n_bins if self.bound_mode == "n_in_place_of_n_over_B" else n
        return float(g(n=n_eval, n_bins=n_bins, alpha=alpha, delta=self.delta))


@dataclass(frozen=True)
class CellResult:
    """Verdict of one (law, n, B, alpha) cell of a check."""

    law: str
    n: int
    n_bins: int
    alpha: float | None
    bound: float
    verdict: CoverageVerdict
    estimate: float
    empirical_quantile: float
    tightness: float
    empty_bins: int


@dataclass(frozen=True)
class CheckResult:
    """All cells of a check and its overall verdict."""

    check: Check
    cells: tuple[CellResult, ...]
    reps: int
    false_alarm: float
    verdict: str = field(init=False)
    passed: bool = field(init=False)

    def __post_init__(self):
        violated = any(c.verdict.violated for c in self.cells)
        object.__setattr__(self, "verdict", "violated" if violated else "consistent")
        object.__setattr__(self, "passed", self.verdict == self.check.expect)


def _evaluate_cell(check: Check, data: dict, alpha, bound: float, level: float,
                   law: Law, n: int, n_bins: int) -> CellResult:
    err, mass, test_u = data["error"], data["mass"], data["test_u"]
    metric = check.metric
    if metric == "marginal":
        q = marginal_validity(err, mass, bound)
        success = test_u[:, 0] < q
        estimate = float(q.mean())
        emp = weighted_upper_quantile(err, mass, 1 - alpha)
        claimed = 1 - alpha
    elif metric == "mean_l2_ece":
        stat = lp_ece(err, mass, 2.0)
        success = test_u[:, 1] >= stat
        estimate = float(stat.mean())
        emp = estimate
        claimed = 1 - bound
    else:
        stat = conditional_max_error(err) if metric == "max_error" else lp_ece(err, mass, 2.0)
        success = stat <= bound
        estimate = float(success.mean())
        emp = float(np.quantile(stat, 1 - alpha))
        claimed = 1 - alpha
    if claimed <= 0:
        # A bound >= 1 on an expectation of a [0, 1] quantity cannot fail.
        claimed = np.nextafter(0.0, 1.0)
    verdict = coverage_verdict(int(success.sum()), success.size, claimed, level=level)
    tightness = bound / emp if emp > 0 else float("inf")
    return CellResult(law.name, n, n_bins, alpha, bound, verdict, estimate, emp, tightness,
                      int(data["n_empty"].sum()))


def evaluate_check(check: Check, store, reps: int, root_seed: int,
                   false_alarm: float = 1e-3) -> CheckResult:
    """Verdicts of a check from simulations already in ``store``."""
    n_tests = len(check.cells()) * len(check.effective_alphas())
    level = false_alarm / n_tests
    results = []
    for law, n, b, cell in check.cells():
        data = load_cell(store, cell, reps, root_seed)
        for alpha in check.effective_alphas():
            results.append(_evaluate_cell(check, data, alpha, check.bound(n, b, alpha), level,
                                          law, n, b))
    return CheckResult(check, tuple(results), n_blocks_for(reps) * BLOCK_REPS, false_alarm)


def run_checks(checks, store, *, reps: int, root_seed: int, false_alarm: float = 1e-3,
               n_jobs: int = 1, backend: str = "loky", progress: bool = False,
               on_block=None) -> list[CheckResult]:
    """Simulate every cell the checks need (resuming from ``store``), then evaluate them."""
    if not (0 < false_alarm < 1):
        raise ValueError(f"false_alarm must lie in (0, 1), got {false_alarm!r}")
    cells = [cell for check in checks for cell in check.simulation_cells()]
    run_cells(cells, reps, root_seed, store, n_jobs=n_jobs, backend=backend, progress=progress,
              on_block=on_block)
    return [c.evaluate(store, reps, root_seed, false_alarm) for c in checks]


# ------------------------------------------------------------------ event checks
#: Claimed probability of an experiment's success event, as a function of alpha.
CLAIMS = {
    "1-alpha": lambda a, b: 1.0 - a,
    "1-alpha/2": lambda a, b: 1.0 - a / 2.0,
    "1-2alpha/3": lambda a, b: 1.0 - 2.0 * a / 3.0,
    "1-2alpha": lambda a, b: 1.0 - 2.0 * a,
    "alpha": lambda a, b: a,
    "one": lambda a, b: 1.0,
    # an expectation bound E[Z] <= b for Z in [0, 1], tested as P(U >= Z) >= 1 - b
    "1-bound": lambda a, b: 1.0 - b,
}


@dataclass(frozen=True)
class EventCheck:
    """A check on experiments that report their own per-replicate success event.

    Used where the radius depends on the data (empirical Bernstein, time-uniform bounds) or
    the guarantee is about another event (bin counts, widths, impossibility); see
    :mod:`simulations.experiments`. Each (experiment, alpha) is one cell, tested at
    ``false_alarm / #cells`` against the claimed probability ``CLAIMS[claim](alpha, median bound)``.

    Parameters
    ----------
    id, guarantee, expect, description
        As in :class:`Check`.
    experiments : tuple
        Experiments (``simulations.experiments``), each with its ``alphas``.
    claim : str
        Key of :data:`CLAIMS`.
    """

    id: str
    guarantee: str
    experiments: tuple
    claim: str = "1-alpha"
    expect: str = "consistent"
    description: str = ""

    def __post_init__(self):
        registry.get(self.guarantee)
        if self.claim not in CLAIMS:
            raise ValueError(f"claim must be one of {sorted(CLAIMS)}, got {self.claim!r}")
        if self.expect not in ("consistent", "violated"):
            raise ValueError(f"expect must be 'consistent' or 'violated', got {self.expect!r}")
        if not self.experiments:
            raise ValueError(f"check {self.id!r} needs at least one experiment")

    is_control = Check.is_control
    bound_mode = "stated"

    @property
    def metric(self) -> str:
        return f"event ({self.claim})"

    @property
    def calibrator(self) -> dict:
        return {"experiments": sorted({type(e).__name__ for e in self.experiments})}

    def simulation_cells(self) -> list:
        return list(self.experiments)

    def law_specs(self) -> dict:
        return {e.label(): e.description() for e in self.experiments}

    def evaluate(self, store, reps: int, root_seed: int, false_alarm: float) -> CheckResult:
        n_tests = sum(len(e.alphas) for e in self.experiments)
        level = false_alarm / n_tests
        claim = CLAIMS[self.claim]
        results = []
        for exp in self.experiments:
            data = load_cell(store, exp, reps, root_seed)
            for j, alpha in enumerate(exp.alphas):
                success = data["success"][:, j]
                bound_j = float(np.median(data["bound"][:, j]))
                claimed = max(claim(alpha, bound_j), np.nextafter(0.0, 1.0))
                verdict = coverage_verdict(int(success.sum()), success.size, claimed,
                                           level=level)
                ratio = data["ratio"][:, j]
                emp = float(np.quantile(ratio, min(claimed, 1.0), method="inverted_cdf"))
                bounds_ = data["bound"][:, j]
                finite = bounds_[np.isfinite(bounds_)]
                bound = float(np.median(finite)) if finite.size else float("inf")
                alpha_out = None if self.claim in ("one", "1-bound") else alpha
                results.append(CellResult(
                    exp.law_name, exp.n_total, exp.bins, alpha_out, bound, verdict,
                    float(success.mean()), emp, 1.0 / emp if emp > 0 else float("inf"),
                    int(data["n_empty"].sum())))
        return CheckResult(self, tuple(results), n_blocks_for(reps) * BLOCK_REPS, false_alarm)


# --------------------------------------------------------------------------- catalogue
_POSITIVE_LAWS = ("uniform_half", "uniform_logistic", "skewed_beta", "two_atoms",
                  "mixture_atoms", "beta_labels")
_EXTRA_LAWS = ("uniform_identity", "uniform_step", "uniform_sine", "rare_event", "atoms_30")
_GRIDS = {
    "quick": ((200, 10), (1000, 10), (3000, 10)),
    "full": ((200, 10), (1000, 5), (1000, 10), (3000, 10), (3000, 20), (10000, 10)),
}
# Tiny bins for the expectation bound: n = 2B, and 2B < n < 3B where the proof has a gap.
_TINY = ((20, 10), (25, 10), (29, 10))
_UMD = {"name": "umd", "tie_breaking": "lexicographic"}
_ZE = {"name": "zadrozny_elkan", "tie_breaking": "lexicographic"}
_RUMD = {"name": "randomized_umd", "delta": 0.0}


def gr21_checks(budget: str = "quick") -> list[Check]:
    """The gr21 checks and their negative controls for a budget ("quick" or "full")."""
    if budget not in _GRIDS:
        raise ValueError(f"budget must be 'quick' or 'full', got {budget!r}")
    laws = tuple(LAWS[k] for k in _POSITIVE_LAWS + (_EXTRA_LAWS if budget == "full" else ()))
    grid = _GRIDS[budget]
    alphas = (0.1, 0.05) if budget == "quick" else (0.2, 0.1, 0.05, 0.01)
    specs = [
        ("gr21.thm3", _UMD, "max_error", grid,
         "UMD (Algorithm 1) with lexicographic tie-breaking: all bins within eps (8)"),
        ("gr21.cor1", _ZE, "max_error", grid,
         "original Zadrozny-Elkan UMD: all bins within eps (10)"),
        ("gr21.thm4.marginal", _RUMD, "marginal", grid,
         "randomized UMD: a fresh test point is within eps1 (11)"),
        ("gr21.thm4.conditional", _RUMD, "max_error", grid,
         "randomized UMD: all bins within eps2 (11)"),
        ("gr21.thm4.ece_hp", _RUMD, "l2_ece", grid,
         "randomized UMD: exact l2-ECE within eps2 (Theorem 4(a))"),
        ("gr21.thm4.ece_mean", _RUMD, "mean_l2_ece", _TINY + grid,
         "randomized UMD: E[l2-ECE] <= sqrt(B/2n) (Theorem 4(b), stated form)"),
        ("gr21.thm4.ece_mean.proof_valid", _RUMD, "mean_l2_ece", _TINY + grid,
         "randomized UMD: E[l2-ECE] <= 1/(2 sqrt(floor(n/B)-1)) (Theorem 4(b), proof-valid)"),
    ]
    checks = []
    for gid, cal, metric, g, text in specs:
        checks.append(Check(gid, gid, cal, laws, g, alphas, metric, description=text))
        checks.append(Check(
            f"{gid}.control.wrong_bound", gid, cal, (LAWS["uniform_half"],), g, alphas, metric,
            expect="violated", bound_mode="n_in_place_of_n_over_B",
            description="negative control: bound computed with n in place of n/B, eta = 1/2",
        ))
    checks.append(Check(
        "gr21.thm3.control.no_tie_breaking", "gr21.thm3",
        {"name": "umd", "tie_breaking": "none"}, (LAWS["two_atoms"],), ((3000, 3),), (0.1,),
        "max_error", expect="violated",
        description="negative control: Algorithm 1 without tie-breaking on atoms {0.2, 0.8} "
                    "(catalog §4 T3 stress (i))",
    ))
    return checks


def all_checks(budget: str = "quick") -> list:
    """Every check of every paper implemented so far."""
    from .gpr20_checks import gpr20_checks
    from .gr22_checks import gr22_checks

    return gr21_checks(budget) + gpr20_checks(budget) + gr22_checks(budget)
