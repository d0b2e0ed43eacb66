"""Adversarial law search, check-agnostic core: maximise a criterion over a family's box.

The criterion is any picklable callable ``objective(theta) -> float`` (larger is worse for
the guarantee); :mod:`calcheck.theory_checks.search.driver` builds it from a check (failure rate of
the guaranteed event, or tightness). This module provides what does not depend on checks:

Common random numbers (CRN)
    :func:`simulate_crn` draws an experiment's replicates from seeds that depend on the
    search seed and the block index only, never on the law: every candidate theta sees the
    same uniforms, so the criterion changes with theta through the law alone (smooth enough
    to optimise where the law's sampling consumes random numbers independently of theta;
    see :mod:`calcheck.simulations.laws.families`).
Optimisers over a box
    :func:`differential_evolution_search` (scipy's differential evolution, deferred
    updating, no polishing, no early stop: the budget is spent whole) from a start
    population of the family's benign points and jittered copies of them; then
    :func:`coordinate_refine`, line searches along each coordinate from its best law
    (window shrinking by half per round), which resolve narrow peaks a population steps
    over; and :func:`random_search`, theta uniform in the box, at the same budget (the
    baseline).
Parallel evaluation
    Candidates of one generation are evaluated in parallel with joblib (``loky``,
    ``threading``, ``dask`` or ``sequential``, as the engine). Each evaluation depends on
    theta and the CRN seed only, and the optimiser's own random numbers come from
    :func:`calcheck.simulations.provenance.generator`, so a search is bit-identical for any
    ``n_jobs`` and backend.

Budget: ``population x (generations + 1) + refine x dim`` evaluations of ``reps`` replicates
each for a family of ``dim`` parameters (:class:`SearchBudget`, defined in
:mod:`calcheck.simulations.search_budget`). Every evaluation made through
:func:`evaluate_batch` is counted for :func:`evaluations_counted` (a progress bar).
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import os
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass

import numpy as np

from .experiments.base import BLOCK_REPS
from .parallel import attributed_call, exit_with_parent, workers_spawned_ignoring_sigint
from .provenance import check_root_seed, generator
from .search_budget import SEARCH_BUDGETS, SearchBudget, get_search_budget

__all__ = [
    "CRN_PATH",
    "REFINE_SHRINK",
    "REFINE_WIDTH",
    "SEARCH_BUDGETS",
    "OptimResult",
    "SearchBudget",
    "coordinate_refine",
    "crn_generator",
    "differential_evolution_search",
    "evaluate_batch",
    "evaluations_counted",
    "get_search_budget",
    "random_search",
    "simulate_crn",
    "start_population",
]

_BACKENDS = ("loky", "threading", "dask", "sequential")
CRN_PATH = "calcheck.search.crn"


# -------------------------------------------------------------- common random numbers
def crn_generator(seed: int, block: int) -> np.random.Generator:
    """The generator of CRN block ``block``: the same for every candidate law."""
    return generator(seed, CRN_PATH, int(block))


def simulate_crn(experiment, seed: int, reps: int):
    """``reps`` replicates (whole blocks) of ``experiment`` on the CRN seeds of ``seed``.

    Unlike the engine (whose block seeds depend on the experiment's content), block k is
    drawn from :func:`crn_generator` ``(seed, k)`` whatever the law: common random numbers.
    """
    check_root_seed(seed)
    blocks = max(1, math.ceil(int(reps) / BLOCK_REPS))
    parts = [experiment.simulate(crn_generator(seed, b), BLOCK_REPS) for b in range(blocks)]
    return experiment.outcome_type.concatenate(parts)


# ------------------------------------------------------------------- parallel batches
#: Where :func:`evaluate_batch` reports the evaluations it finished (None: nowhere).
_COUNTER: contextvars.ContextVar = contextvars.ContextVar("calcheck_search_counter", default=None)


@contextlib.contextmanager
def evaluations_counted(callback: Callable[[int], object]):
    """Within the block, ``callback(k)`` after every k evaluations of :func:`evaluate_batch`.

    One call per evaluation where they run one after the other, one per batch where a
    batch runs in parallel (e.g. ``tqdm.update``: the search's progress bar).
    """
    token = _COUNTER.set(callback)
    try:
        yield
    finally:
        _COUNTER.reset(token)


def _call(objective, theta):
    return float(objective(np.asarray(theta, dtype=float)))


def evaluate_batch(objective, thetas, *, n_jobs: int = 1, backend: str = "loky") -> np.ndarray:
    """``objective(theta)`` for every row of ``thetas``, in order (parallel with joblib)."""
    if backend not in _BACKENDS:
        raise ValueError(f"backend must be one of {_BACKENDS}, got {backend!r}")
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs == 0 or n_jobs < -1:
        raise ValueError(f"n_jobs must be a positive integer or -1, got {n_jobs!r}")
    rows = [np.array(t, dtype=float) for t in thetas]
    count = _COUNTER.get() or (lambda k: None)
    if backend == "sequential" or n_jobs == 1 or len(rows) <= 1:
        out = []
        for t in rows:
            out.append(attributed_call(_call, objective, t))
            count(1)
        return np.array(out, dtype=float)
    import joblib

    with ExitStack() as stack:
        if backend == "dask":
            _dask_client(stack, n_jobs)
            stack.enter_context(joblib.parallel_config(backend="dask"))
            parallel = joblib.Parallel()
        elif backend == "loky":
            # the engine's workers: they exit with this process (even on SIGKILL), and one
            # executor serves the search and its fresh re-checks (no respawn between them)
            stack.enter_context(
                joblib.parallel_config(
                    backend="loky", initializer=exit_with_parent, initargs=(os.getpid(),)
                )
            )
            parallel = joblib.Parallel(n_jobs=n_jobs)
            # a Ctrl-C while the workers start reaches this process only (one line, no
            # worker traceback)
            stack.enter_context(workers_spawned_ignoring_sigint())
        else:
            parallel = joblib.Parallel(n_jobs=n_jobs, backend=backend)
        out = parallel(joblib.delayed(attributed_call)(_call, objective, t) for t in rows)
    count(len(rows))
    return np.array(out, dtype=float)


def _dask_client(stack: ExitStack, n_jobs: int):
    try:
        from distributed import Client, LocalCluster, get_client
    except ImportError as exc:  # pragma: no cover - depends on the extra
        raise ValueError("backend 'dask' needs the distributed extra") from exc
    try:
        get_client()
    except ValueError:
        cluster = stack.enter_context(
            LocalCluster(
                n_workers=n_jobs if n_jobs > 0 else None,
                threads_per_worker=1,
                dashboard_address=None,
                processes=True,
            )
        )
        stack.enter_context(Client(cluster))


# ------------------------------------------------------------------------- optimisers
@dataclass(frozen=True)
class OptimResult:
    """What an optimiser found: the best theta, its criterion and the whole history.

    ``thetas`` and ``values`` list every evaluation in order (start population first);
    ``theta`` is the first of the largest values.
    """

    method: str
    theta: tuple[float, ...]
    value: float
    evaluations: int
    thetas: np.ndarray
    values: np.ndarray
    seed: int

    def best_so_far(self) -> np.ndarray:
        """Running maximum of the criterion over the evaluations (a convergence trace)."""
        return np.maximum.accumulate(self.values)


def _result(method, thetas, values, seed) -> OptimResult:
    thetas = np.asarray(thetas, dtype=float)
    values = np.asarray(values, dtype=float)
    clean = np.where(np.isnan(values), -np.inf, values)
    i = int(np.argmax(clean))
    return OptimResult(
        method,
        tuple(float(x) for x in thetas[i]),
        float(values[i]),
        len(values),
        thetas,
        values,
        seed,
    )


#: Standard deviation of the jitter of the benign start points, as a fraction of each box
#: width (at 5% the population stayed near its start: at n = 1000, B = 10 the quick search
#: on gr21.thm3 ended below random sampling).
START_SPREAD = 0.25


def start_population(family, size: int, rng: np.random.Generator, start: str = "benign"):
    """``size`` start points: the benign points and jittered copies (or uniform draws).

    ``start="benign"``: the family's benign points, then copies of them moved by a normal
    step of :data:`START_SPREAD` of each box width (clipped to the box): wide enough that
    differential evolution's difference vectors can cross the box within a quick budget.
    ``start="uniform"``: uniform in the box.
    """
    lo, hi = np.asarray(family.lower), np.asarray(family.upper)
    if start == "uniform":
        return lo + (hi - lo) * rng.random((size, family.dim))
    if start != "benign":
        raise ValueError(f"start must be 'benign' or 'uniform', got {start!r}")
    base = np.asarray(family.benign, dtype=float)
    rows = [base[i % len(base)] for i in range(size)]
    out = np.array(rows)
    jitter = rng.normal(0.0, START_SPREAD, (size, family.dim)) * (hi - lo)
    out[len(base) :] += jitter[len(base) :]
    return np.clip(out, lo, hi)


class _Recorder:
    """scipy's ``workers`` map: evaluates a generation in parallel and records it."""

    def __init__(self, objective, n_jobs, backend):
        self.objective, self.n_jobs, self.backend = objective, n_jobs, backend
        self.thetas: list[np.ndarray] = []
        self.values: list[float] = []

    def __call__(self, _func, population):
        pop = [np.asarray(x, dtype=float) for x in population]
        values = evaluate_batch(self.objective, pop, n_jobs=self.n_jobs, backend=self.backend)
        self.thetas += pop
        self.values += [float(v) for v in values]
        return [-v if np.isfinite(v) else np.inf for v in values]


def _unused(_x):  # pragma: no cover - scipy's func; the recorder evaluates instead
    raise RuntimeError("evaluated through the workers map")


def differential_evolution_search(
    objective: Callable,
    family,
    budget,
    *,
    seed: int,
    n_jobs: int = 1,
    backend: str = "loky",
    start: str = "benign",
) -> OptimResult:
    """Maximise ``objective`` over ``family``'s box by differential evolution.

    scipy's ``differential_evolution`` (strategy best1bin, mutation (0.5, 1), recombination
    0.7, deferred updating, no polishing) from :func:`start_population`, for exactly
    ``budget.generations`` generations (``tol=0, atol=-1``: it never stops early), so it
    spends ``population x (generations + 1)`` evaluations. Its random numbers come from
    ``generator(seed, "calcheck.search.de")``.
    """
    from scipy.optimize import differential_evolution

    budget = get_search_budget(budget)
    seed = check_root_seed(seed)
    init = start_population(
        family, budget.population, generator(seed, "calcheck.search.start"), start
    )
    recorder = _Recorder(objective, n_jobs, backend)
    differential_evolution(
        _unused,
        list(family.bounds),
        strategy="best1bin",
        maxiter=budget.generations,
        mutation=(0.5, 1.0),
        recombination=0.7,
        rng=generator(seed, "calcheck.search.de"),
        polish=False,
        init=init,
        tol=0.0,
        atol=-1.0,
        updating="deferred",
        workers=recorder,
    )
    return _result("differential_evolution", recorder.thetas, recorder.values, seed)


def random_search(
    objective: Callable,
    family,
    budget,
    *,
    seed: int,
    n_jobs: int = 1,
    backend: str = "loky",
    evaluations: int | None = None,
) -> OptimResult:
    """The baseline: theta uniform in the box, as many times as the search evaluates.

    ``budget.total_evaluations(family.dim)`` times (differential evolution and refinement),
    or ``evaluations``.
    """
    budget = get_search_budget(budget)
    seed = check_root_seed(seed)
    count = budget.total_evaluations(family.dim) if evaluations is None else int(evaluations)
    thetas = start_population(family, count, generator(seed, "calcheck.search.random"), "uniform")
    values = evaluate_batch(objective, thetas, n_jobs=n_jobs, backend=backend)
    return _result("random_sampling", thetas, values, seed)


#: Half-width of the first refinement window, as a fraction of each box width; each round
#: multiplies it by :data:`REFINE_SHRINK`.
REFINE_WIDTH = 0.25
REFINE_SHRINK = 0.5


def coordinate_refine(
    objective: Callable,
    family,
    start,
    evaluations: int,
    *,
    seed: int,
    points: int = 8,
    width: float = REFINE_WIDTH,
    shrink: float = REFINE_SHRINK,
    stage: int = 0,
    n_jobs: int = 1,
    backend: str = "loky",
    lines: Callable | None = None,
) -> OptimResult:
    """Maximise ``objective`` near ``start`` by line searches along each coordinate.

    Each round visits the coordinates in order; along coordinate i it evaluates ``points``
    values spread over ``x_i +- w_i`` (clipped to the box; a stratified grid with a random
    offset from ``generator(seed, "calcheck.search.refine", stage)``, so successive rounds probe
    different values) with the other coordinates at the incumbent, and moves to the best of
    them if it improves on the incumbent. The window starts at :data:`REFINE_WIDTH` of the
    box width and shrinks by :data:`REFINE_SHRINK` per round. A line search sees a criterion
    with narrow peaks that a population method steps over: the failure rate of a binomial
    event at constant eta jumps between 0.016 and 0.027 within 0.01 of eta = 1/2 at n = 1000,
    B = 20, because the cut-offs ``m (Pi +- eps)`` cross integers.

    ``lines(round, i, best)``, if given, may replace a line: it returns ``points`` candidate
    thetas (rows; e.g. the etas where a binomial cut-off crosses an integer,
    :mod:`calcheck.theory_checks.search.refine`) or None for the stratified grid.

    ``evaluations`` (at least ``points``) is spent whole, in batches of ``points``
    evaluated in parallel; the start itself is evaluated first (one more evaluation).
    """
    seed = check_root_seed(seed)
    points = int(points)
    if points < 2:
        raise ValueError(f"points must be an integer >= 2, got {points!r}")
    if isinstance(evaluations, bool) or not isinstance(evaluations, int) or evaluations < points:
        raise ValueError(
            f"evaluations must be an integer >= points ({points}), got {evaluations!r}"
        )
    rng = generator(seed, "calcheck.search.refine", int(stage))
    lo, hi = np.asarray(family.lower, dtype=float), np.asarray(family.upper, dtype=float)
    best = np.clip(np.asarray(start, dtype=float), lo, hi)
    best_value = float(evaluate_batch(objective, [best], n_jobs=1, backend="sequential")[0])
    thetas, values = [best.copy()], [best_value]
    if not (0 < width <= 1 and 0 < shrink <= 1):
        raise ValueError(f"width and shrink must be in (0, 1], got {width!r} and {shrink!r}")
    width = width * (hi - lo)
    left, rnd = evaluations, 0
    while left >= points:
        for i in range(family.dim):
            if left < points:
                break
            a, b = max(lo[i], best[i] - width[i]), min(hi[i], best[i] + width[i])
            grid = a + (b - a) * (np.arange(points) + rng.random()) / points
            cands = None if lines is None else lines(rnd, i, best.copy())
            if cands is None:
                cands = np.repeat(best[None, :], points, axis=0)
                cands[:, i] = grid
            else:
                cands = np.clip(np.asarray(cands, dtype=float).reshape(points, family.dim), lo, hi)
            vals = evaluate_batch(objective, cands, n_jobs=n_jobs, backend=backend)
            thetas += list(cands)
            values += [float(v) for v in vals]
            left -= points
            clean = np.where(np.isnan(vals), -np.inf, vals)
            j = int(np.argmax(clean))
            if clean[j] > best_value:
                best, best_value = cands[j].copy(), float(clean[j])
        width, rnd = width * shrink, rnd + 1
    return _result("coordinate_refinement", thetas, values, seed)
