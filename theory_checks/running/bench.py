"""Benchmark: each hot path against its own floor.

A coverage replicate (:func:`benchmark_cell`; floor: drawing the data and sorting it), a
single scikit-learn-style fit + predict (:func:`benchmark_single_fit`; floor: drawing and
argsorting), a klm19 recalibration replicate (``benchmark_recalibration_cell`` of the
klm19 recalibration experiments, reached through the catalog's index of papers; floor:
drawing and one vectorised log-loss Platt fit) and a gr22-sized Dirichlet-scaling fit (floor:
its evaluations times one evaluation) are each timed in the same process as their floor,
interleaved, so the ratios are insensitive to how fast or busy the machine is. A run's main
process (:func:`benchmark_main_process`) is timed on results handed to it at full speed,
against sqlite's inserts of the same rows: the blocks/s no number of workers can exceed.
A check's evaluation (:func:`benchmark_evaluation`: gr21 Theorem 3's checks from a store,
each cell's event, verdict, exact evidence and mutant) is timed against reading the same
blocks back, the floor of any evaluation.
"""

from __future__ import annotations

import logging
import pickle
import time
from dataclasses import dataclass

import numpy as np

from calcheck.simulations.engine import BLOCK_REPS, simulate_block
from calcheck.simulations.experiments.binning import BinningExperiment
from calcheck.simulations.laws import LAWS

from ..results.export import Exportable

__all__ = [
    "BenchReport",
    "BenchResult",
    "EvaluationBench",
    "MainProcessBench",
    "SingleFitResult",
    "bench_text",
    "benchmark_cell",
    "benchmark_evaluation",
    "benchmark_main_process",
    "benchmark_single_fit",
    "run_benchmarks",
]


@dataclass(frozen=True)
class BenchResult(Exportable):
    """Median seconds per replicate of a full coverage replicate and of draw + sort."""

    n: int
    n_bins: int
    calibrator: str
    law: str
    rounds: int
    seconds_per_replicate: float
    argsort_baseline_seconds_per_replicate: float
    sort_baseline_seconds_per_replicate: float
    ratio_to_argsort_baseline: float
    ratio_to_sort_baseline: float


def _draw_and_argsort(law, n, rng):
    """Draw (score, label) pairs and order the pairs by score."""
    scores = law.sample_scores((BLOCK_REPS, n), rng)
    labels = law.sample_labels(scores, rng)
    return labels, np.argsort(scores, axis=1)


def _draw_and_sort(law, n, rng):
    """Draw (score, label) pairs and sort the scores only (the cheapest reading)."""
    scores = law.sample_scores((BLOCK_REPS, n), rng)
    labels = law.sample_labels(scores, rng)
    return labels, np.sort(scores, axis=1)


def benchmark_cell(
    n=10_000, n_bins=10, *, calibrator="umd", law="uniform_half", rounds=15, seed=0
) -> BenchResult:
    """Time one coverage block (BLOCK_REPS replicates) against draw + sort of the same data."""
    if law not in LAWS:
        raise ValueError(f"law must be one of {sorted(LAWS)}, got {law!r}")
    cell = BinningExperiment({"name": calibrator}, LAWS[law], n, n_bins)
    rng = np.random.default_rng(seed)
    if rounds < 1:
        raise ValueError(f"rounds must be >= 1, got {rounds!r}")
    simulate_block(cell, seed, 0)  # warm-up
    _draw_and_argsort(cell.law, cell.n, rng)
    times = {"full": [], "argsort": [], "sort": []}
    for k in range(rounds):
        for name, work in (
            ("full", lambda k=k: simulate_block(cell, seed, k)),
            ("argsort", lambda: _draw_and_argsort(cell.law, cell.n, rng)),
            ("sort", lambda: _draw_and_sort(cell.law, cell.n, rng)),
        ):
            t0 = time.perf_counter()
            work()
            times[name].append(time.perf_counter() - t0)
    f, a, s = (float(np.median(times[k])) / BLOCK_REPS for k in ("full", "argsort", "sort"))
    return BenchResult(cell.n, cell.n_bins, calibrator, law, rounds, f, a, s, f / a, f / s)


@dataclass(frozen=True)
class SingleFitResult(Exportable):
    """Median seconds of one fit + predict on n points and of drawing and argsorting them."""

    n: int
    n_bins: int
    calibrator: str
    rounds: int
    fit_predict_seconds: float
    argsort_baseline_seconds: float
    ratio_to_argsort_baseline: float


def benchmark_single_fit(
    n=1_000_000, n_bins=10, *, calibrator="umd", law="uniform_half", rounds=5, seed=0
) -> SingleFitResult:
    """Time one ``fit(scores, labels).predict(scores)`` against draw + argsort of n points.

    This is what a user calling the calibrator once pays; the floor is the cost of drawing
    the same data and ordering it, which any uniform-mass fit needs.
    """
    from calcheck.simulations.calibrators import calibrator_from_spec

    if law not in LAWS:
        raise ValueError(f"law must be one of {sorted(LAWS)}, got {law!r}")
    if rounds < 1:
        raise ValueError(f"rounds must be >= 1, got {rounds!r}")
    dist = LAWS[law]
    rng = np.random.default_rng(seed)
    scores = dist.sample_scores(n, rng)
    labels = dist.sample_labels(scores, rng)
    model = calibrator_from_spec({"name": calibrator}, n_bins=n_bins, rng=seed)
    model.fit(scores, labels).predict(scores)  # warm-up (and validates the arguments)
    times = {"fit": [], "argsort": []}
    for _ in range(rounds):
        t0 = time.perf_counter()
        model.fit(scores, labels).predict(scores)
        times["fit"].append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        s = dist.sample_scores(n, rng)
        dist.sample_labels(s, rng)
        np.argsort(s)
        times["argsort"].append(time.perf_counter() - t0)
    f, a = (float(np.median(times[k])) for k in ("fit", "argsort"))
    return SingleFitResult(n, n_bins, calibrator, rounds, f, a, f / a)


@dataclass(frozen=True)
class MainProcessBench(Exportable):
    """The main process's handling of a run's results, per block, against its floor.

    ``seconds_per_block`` is unpickling, batching and committing results handed over at
    full speed (no simulation); ``floor_seconds_per_block`` inserting the same rows with
    one ``executemany`` per batch into an empty store (sqlite alone).
    ``ceiling_blocks_per_second`` = 1 / ``seconds_per_block``: the most a run can store,
    whatever the number of workers.
    """

    blocks: int
    payload_bytes: int
    seconds_per_block: float
    floor_seconds_per_block: float
    ceiling_blocks_per_second: float
    ratio_to_floor: float


def benchmark_main_process(tmp_dir, blocks: int = 5000, seed: int = 0) -> MainProcessBench:
    """Time a run's main process on ``blocks`` packed blocks of a quick-budget binning cell.

    The main process is :class:`~calcheck.simulations.collector.Collector` behind pickled
    results, as joblib hands them over.

    The rows are real (one block simulated and packed, its index varied); the store is a
    file in ``tmp_dir``, as in a run. The floor inserts the same rows in the same batches.
    """
    from pathlib import Path

    from calcheck.simulations.collector import BATCH_BLOCKS, Collector
    from calcheck.simulations.payload import pack_block
    from calcheck.simulations.store import ResultStore

    exp = BinningExperiment({"name": "umd"}, LAWS["uniform_half"], 1000, 10)
    key, code = exp.key, exp.code_stamp
    arrays = simulate_block(exp, seed, 0).arrays()
    per_task = 20  # blocks per task of such a cell (the engine's chunking)
    results = []
    for first in range(0, blocks, per_task):
        rows = [
            (b, *pack_block(seed, key, code, b, arrays, False))
            for b in range(first, min(first + per_task, blocks))
        ]
        # as they arrive from a worker: pickled (the main process unpickles each)
        results.append(pickle.dumps((key, rows, 0.0), protocol=pickle.HIGHEST_PROTOCOL))
    size = len(pickle.loads(results[0])[1][0][2])

    def handled(path):
        with ResultStore(path, compress=False) as store:
            collector = Collector(
                store, seed, {key: code}, blocks, {key: set()}, {key: "bench"}, {key: 1.0}, blocks
            )
            calls = {"n": 0}
            collector.on_block = lambda k, b: None
            collector.heartbeat = lambda done, total, share: calls.__setitem__("n", done)
            t0 = time.perf_counter()
            for result in results:
                collector.receive(pickle.loads(result))
            collector.flush()
            return time.perf_counter() - t0

    def floor(path):
        with ResultStore(path, compress=False) as store:
            rows = [(seed, key, code, *row) for r in results for row in pickle.loads(r)[1]]
            t0 = time.perf_counter()
            for i in range(0, len(rows), BATCH_BLOCKS):
                store.put_rows(rows[i : i + BATCH_BLOCKS])
            return time.perf_counter() - t0

    tmp = Path(tmp_dir)
    spent = min(handled(tmp / f"collector{i}.sqlite") for i in range(3))
    base = min(floor(tmp / f"floor{i}.sqlite") for i in range(3))
    return MainProcessBench(
        blocks, size, spent / blocks, base / blocks, blocks / spent, spent / base
    )


@dataclass(frozen=True)
class EvaluationBench(Exportable):
    """Evaluating checks from a store (what an evaluation process does), against its floor.

    ``seconds`` is evaluating ``checks`` checks of ``cells`` cells (``blocks`` blocks of
    100 replicates read back); ``floor_seconds`` reading the same blocks (each check's
    experiments, as its evaluation reads them); minima over ``rounds`` rounds, interleaved.
    """

    guarantee: str
    checks: int
    cells: int
    blocks: int
    rounds: int
    seconds: float
    floor_seconds: float
    seconds_per_cell: float
    ratio_to_floor: float


#: The guarantee whose quick-budget checks :func:`benchmark_evaluation` evaluates, and at
#: how many replicates a cell (10 blocks: the store is simulated first, in a few seconds).
EVALUATION_BENCH = ("gr21.thm3", 1000)


def benchmark_evaluation(tmp_dir, *, rounds: int = 3, seed: int = 0) -> EvaluationBench:
    """Time the evaluation of :data:`EVALUATION_BENCH`'s checks against reading their blocks."""
    from pathlib import Path

    from calcheck.simulations.engine import load_outcome, run_experiments
    from calcheck.simulations.store import ResultStore

    from ..catalog import all_checks

    guarantee, reps = EVALUATION_BENCH
    checks = [c for c in all_checks("quick") if c.guarantee == guarantee]
    experiments = list({e.key: e for c in checks for e in c.simulations()}.values())
    with ResultStore(Path(tmp_dir) / "evaluation.sqlite", compress=False) as store:
        run_experiments(experiments, reps, seed, store)
        spent, floor = [], []
        for _ in range(rounds):
            t0 = time.perf_counter()
            for check in checks:
                for exp in check.simulations():
                    load_outcome(store, exp, reps, seed)
            floor.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            for check in checks:
                check.evaluate(store, reps, seed)
            spent.append(time.perf_counter() - t0)
    cells = sum(c.n_cells() for c in checks)
    blocks = sum(len(c.simulations()) for c in checks) * (reps // BLOCK_REPS)
    best, base = min(spent), min(floor)
    return EvaluationBench(
        guarantee, len(checks), cells, blocks, rounds, best, base, best / cells, best / base
    )


#: Sizes of the single-fit benchmark.
SINGLE_FIT_SIZES = (1_000, 100_000, 1_000_000)
#: Recalibration points per replicate of the recalibration benchmark.
RECALIBRATION_N = 10_000
#: The Dirichlet-scaling benchmark: gr22 Table 2's CIFAR-100 size, 100 of its 2000 iterations.
DIRICHLET_ARGS = {"n": 5000, "n_classes": 100, "max_iter": 100, "repeats": 10}


@dataclass(frozen=True)
class BenchReport:
    """Every hot path of ``calcheck bench`` against its floor, measured in one run."""

    cell: BenchResult
    single_fit: tuple[SingleFitResult, ...]
    recalibration: object  # klm19_recalibration.RecalibrationBenchResult
    dirichlet: object  # multiclass_scaling.DirichletFitBenchmark
    main_process: object = None  # MainProcessBench
    evaluation: object = None  # EvaluationBench


def run_benchmarks(
    n=10_000, n_bins=10, *, calibrator="umd", law="uniform_half", rounds=15, seed=0
) -> BenchReport:
    """The coverage cell, single fits, a recalibration cell and a Dirichlet-scaling fit.

    ``n``, ``law`` and ``rounds`` configure the coverage cell; ``calibrator`` and ``n_bins``
    the cell and the single fits; the recalibration cell
    runs at ``RECALIBRATION_N`` points with ``n_bins``; the Dirichlet fit with
    ``DIRICHLET_ARGS`` (its floor: the fit's evaluations times one evaluation's cost).
    """
    cell = benchmark_cell(n, n_bins, calibrator=calibrator, law=law, rounds=rounds, seed=seed)
    # more rounds at small n, where a round takes microseconds and the machine's noise more
    single = tuple(
        benchmark_single_fit(
            m, n_bins, calibrator=calibrator, rounds=max(5, 100_000 // m), seed=seed
        )
        for m in SINGLE_FIT_SIZES
    )
    from calcheck.theory_checks.catalog import paper_benchmark

    recal = paper_benchmark("klm19", "benchmark_recalibration_cell")(
        RECALIBRATION_N, n_bins, seed=seed
    )
    from calcheck.simulations.calibrators.multiclass_scaling import benchmark_dirichlet_fit

    # the timed fit stops at its iteration cap on purpose: its warning would be noise here
    quiet = logging.getLogger("calcheck.simulations.calibrators.multiclass_scaling")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    try:
        dirichlet = benchmark_dirichlet_fit(**DIRICHLET_ARGS, seed=seed)
    finally:
        quiet.setLevel(level)
    import tempfile

    with tempfile.TemporaryDirectory(prefix="calcheck-bench-") as tmp:
        main = benchmark_main_process(tmp, seed=seed)
        evaluation = benchmark_evaluation(tmp, seed=seed)
    return BenchReport(cell, single, recal, dirichlet, main, evaluation)


def bench_text(report: BenchReport) -> str:
    """The report as the CLI prints it: times and, for each, the ratio to its floor."""
    c, r, d = report.cell, report.recalibration, report.dirichlet
    lines = [
        f"coverage cell: {c.calibrator} on {c.law}, n={c.n}, B={c.n_bins}, "
        f"{c.rounds} rounds of 100 replicates (medians)",
        f"  full replicate (draw, sort, fit, exact ground truth): "
        f"{c.seconds_per_replicate * 1e6:9.1f} us",
        f"  draw + argsort (order the pairs):                      "
        f"{c.argsort_baseline_seconds_per_replicate * 1e6:9.1f} us   "
        f"ratio {c.ratio_to_argsort_baseline:.2f}",
        f"  draw + np.sort (scores only):                          "
        f"{c.sort_baseline_seconds_per_replicate * 1e6:9.1f} us   "
        f"ratio {c.ratio_to_sort_baseline:.2f}",
        f"single fit + predict of {c.calibrator}, B={c.n_bins} (medians of interleaved rounds):",
    ]
    for one in report.single_fit:
        lines.append(
            f"  n={one.n:>9,}: fit + predict {one.fit_predict_seconds * 1e3:8.2f} ms, draw + "
            f"argsort {one.argsort_baseline_seconds * 1e3:8.2f} ms, ratio "
            f"{one.ratio_to_argsort_baseline:.2f} ({one.rounds} rounds)"
        )
    lines += [
        f"klm19 recalibration replicate, {r.law}, n={r.n:,}, B={r.n_bins} (three Platt fits, "
        f"two binnings, exact CE^2; medians of {r.rounds} rounds of 100):",
        f"  full replicate {r.seconds_per_replicate * 1e3:8.2f} ms, draw + one log-loss Platt "
        f"fit {r.floor_seconds_per_replicate * 1e3:8.2f} ms, ratio {r.ratio_to_floor:.2f}",
        f"Dirichlet scaling fit (gr22 Table 2 size: n={d.n:,}, L={d.n_classes}, "
        f"{d.n_parameters:,} parameters; {d.n_iterations} L-BFGS iterations):",
        f"  fit {d.fit_seconds:6.2f} s, {d.n_evaluations} evaluations x "
        f"{d.seconds_per_evaluation * 1e3:.1f} ms = {d.predicted_seconds:6.2f} s, ratio "
        f"{d.fit_seconds / d.predicted_seconds:.2f}",
    ]
    m = report.main_process
    if m is not None:
        lines += [
            f"a run's main process, {m.blocks:,} blocks of {m.payload_bytes / 1e3:.1f} kB handed "
            "over at full speed (unpickle, batch, commit):",
            f"  {m.seconds_per_block * 1e6:8.1f} us a block, a ceiling of "
            f"{m.ceiling_blocks_per_second:,.0f} blocks/s whatever the workers; sqlite's "
            f"inserts alone {m.floor_seconds_per_block * 1e6:.1f} us, ratio {m.ratio_to_floor:.2f}",
        ]
    e = report.evaluation
    if e is not None:
        lines += [
            f"evaluating {e.guarantee}'s {e.checks} checks from a store ({e.cells} cells, "
            f"{e.blocks:,} blocks; what an evaluation process does; minima of {e.rounds} rounds):",
            f"  {e.seconds:6.3f} s ({e.seconds_per_cell * 1e3:.1f} ms a cell), reading the same "
            f"blocks alone {e.floor_seconds:6.3f} s, ratio {e.ratio_to_floor:.2f}",
        ]
    return "\n".join(lines)
