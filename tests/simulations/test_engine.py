"""Engine: seed protocol, bit-identity across jobs/backends, resume, code stamps."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import numpy as np
import pytest

from calcheck.simulations import collector
from calcheck.simulations.engine import BLOCK_REPS, load_outcome, run_experiments, simulate_block
from calcheck.simulations.experiments.binning import BinningExperiment
from calcheck.simulations.laws import LAWS
from calcheck.simulations.store import ResultStore

CELLS = [
    BinningExperiment({"name": "randomized_umd"}, LAWS["uniform_half"], 300, 10),
    BinningExperiment({"name": "umd", "tie_breaking": "lexicographic"}, LAWS["two_atoms"], 200, 5),
    BinningExperiment({"name": "zadrozny_elkan"}, LAWS["beta_labels"], 120, 6),
]
REPS = 4 * BLOCK_REPS


def _payloads(store, cells=CELLS, seed=7):
    return [load_outcome(store, c, REPS, seed) for c in cells]


def _assert_identical(a, b):
    for pa, pb in zip(a, b, strict=True):
        da, db = pa.arrays(), pb.arrays()
        assert da.keys() == db.keys()
        for k in da:
            assert np.array_equal(da[k], db[k], equal_nan=True), k


@pytest.fixture(scope="module")
def reference():
    store = ResultStore(":memory:")
    run_experiments(CELLS, REPS, 7, store, n_jobs=1)
    return _payloads(store)


def test_block_is_deterministic_and_blocks_differ():
    a = simulate_block(CELLS[0], 7, 0)
    b = simulate_block(CELLS[0], 7, 0)
    c = simulate_block(CELLS[0], 7, 1)
    assert np.array_equal(a.error, b.error, equal_nan=True)
    assert not np.array_equal(a.error, c.error, equal_nan=True)
    assert a.error.shape == (BLOCK_REPS, 10)
    assert a.mass.sum(axis=1) == pytest.approx(1)


def test_cell_key_depends_on_content_only():
    same = BinningExperiment({"name": "randomized_umd"}, LAWS["uniform_half"], 300, 10)
    assert same.key == CELLS[0].key
    assert (
        BinningExperiment({"name": "randomized_umd"}, LAWS["uniform_half"], 301, 10).key
        != CELLS[0].key
    )


@pytest.mark.parametrize(
    ("n_jobs", "backend", "per_task", "batch"),
    [
        (2, "loky", None, None),
        (2, "loky", 1, 1),
        (2, "threading", 3, 5),
        (1, "sequential", 2, 1),
        (1, "sequential", None, 7),
    ],
)
def test_bit_identical_across_jobs_backends_task_and_batch_sizes(
    reference, n_jobs, backend, per_task, batch, monkeypatch
):
    if batch is not None:  # blocks per committed batch (and per heartbeat)
        monkeypatch.setattr(collector, "BATCH_BLOCKS", batch)
    store = ResultStore(":memory:")
    run_experiments(CELLS, REPS, 7, store, n_jobs=n_jobs, backend=backend, blocks_per_task=per_task)
    _assert_identical(reference, _payloads(store))


def test_dask_backend_bit_identical(reference):
    pytest.importorskip("distributed")
    store = ResultStore(":memory:")
    run_experiments(CELLS, REPS, 7, store, n_jobs=2, backend="dask")
    _assert_identical(reference, _payloads(store))


def test_resume_after_interruption_gives_same_numbers(reference, tmp_path, monkeypatch):
    monkeypatch.setattr(collector, "BATCH_BLOCKS", 1)  # a commit per block: 5 of 12 kept
    path = tmp_path / "store.sqlite"
    seen = []

    def stop_after_five(key, block):
        seen.append((key, block))
        if len(seen) == 5:
            raise KeyboardInterrupt

    with ResultStore(path) as store, pytest.raises(KeyboardInterrupt):
        run_experiments(
            CELLS, REPS, 7, store, n_jobs=1, blocks_per_task=1, on_block=stop_after_five
        )
    with ResultStore(path) as store:
        stats = run_experiments(CELLS, REPS, 7, store, n_jobs=2)
        assert (stats.computed, stats.reused, stats.stale) == (12 - 5, 5, 0)
        _assert_identical(reference, _payloads(store))
        assert run_experiments(CELLS, REPS, 7, store).computed == 0


def test_killed_cli_run_resumes_to_identical_results(tmp_path):
    """SIGKILL a real `calcheck run` mid-way, run it again, compare with a clean run."""
    args = [
        sys.executable,
        "-m",
        "calcheck",
        "run",
        "--checks",
        "gr21.thm4.marginal",
        "--reps",
        "500",
        "--seed",
        "3",
        "--jobs",
        "1",  # what is tested is the resume: one process is enough, and cheaper
    ]
    killed = tmp_path / "killed"
    proc = subprocess.Popen(
        [*args, "--out", str(killed)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    db = killed / "store.sqlite"
    deadline = time.time() + 120
    n_blocks = 0
    while time.time() < deadline and proc.poll() is None:
        if db.exists():
            try:
                with sqlite3.connect(db) as con:
                    n_blocks = con.execute("SELECT COUNT(*) FROM blocks").fetchone()[0]
            except sqlite3.OperationalError:
                n_blocks = 0
            if n_blocks >= 3:
                break
        time.sleep(0.05)
    if proc.poll() is not None:
        pytest.skip("the run finished before it could be killed")
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not (killed / "results.json").exists()
    subprocess.run([*args, "--out", str(killed)], check=True, stdout=subprocess.DEVNULL)
    clean = tmp_path / "clean"
    subprocess.run([*args, "--out", str(clean)], check=True, stdout=subprocess.DEVNULL)
    a = json.loads((killed / "results.json").read_text())["checks"]
    b = json.loads((clean / "results.json").read_text())["checks"]
    assert a == b


def test_argument_validation():
    store = ResultStore(":memory:")
    with pytest.raises(ValueError, match="backend"):
        run_experiments(CELLS, REPS, 7, store, backend="spark")
    with pytest.raises(ValueError, match="reps"):
        run_experiments(CELLS, 0, 7, store)
    with pytest.raises(ValueError, match="seed"):
        run_experiments(CELLS, REPS, -1, store)
    with pytest.raises(ValueError, match="n_jobs"):
        run_experiments(CELLS, REPS, 7, store, n_jobs=0)
    with pytest.raises(ValueError, match="n must be an integer >= 1"):
        BinningExperiment({"name": "umd"}, LAWS["uniform_half"], 0, 10)
    with pytest.raises(ValueError, match="calibrator name"):
        BinningExperiment({"name": "platt"}, LAWS["uniform_half"], 100, 10)
    with pytest.raises(ValueError, match="not stored"):
        load_outcome(store, CELLS[0], REPS, 99)


def test_changed_code_stamp_reuses_nothing(reference, tmp_path, monkeypatch):
    """Blocks stored by other code (another code stamp) are never reused: all recomputed."""
    path = tmp_path / "store.sqlite"
    with ResultStore(path) as store:
        first = run_experiments(CELLS, REPS, 7, store)
        assert (first.computed, first.reused) == (12, 0)
        assert run_experiments(CELLS, REPS, 7, store).reused == 12
    monkeypatch.setattr(BinningExperiment, "code_stamp", property(lambda self: "0.0+changed"))
    with ResultStore(path) as store:
        stats = run_experiments(CELLS, REPS, 7, store)
        assert (stats.computed, stats.reused, stats.stale) == (12, 0, 12)
        _assert_identical(reference, _payloads(store))  # same seeds, same numbers


def test_code_stamp_depends_on_the_experiment_module_and_generic_code():
    paths = BinningExperiment.code_paths()
    assert "simulations/experiments/binning.py" in paths
    assert "simulations/laws" in paths
    from calcheck.simulations.experiments.gpr20 import StreamExperiment

    assert "bounds" in StreamExperiment.code_paths()  # it evaluates its bound inside
    assert (
        CELLS[0].code_stamp.split("+")[-1]
        != StreamExperiment((0.5,), (10,)).code_stamp.split("+")[-1]
    )


def test_heartbeat_counts_work_by_measured_cost_and_ends_at_one(monkeypatch):
    monkeypatch.setattr(collector, "BATCH_BLOCKS", 1)  # a heartbeat per block
    cheap = BinningExperiment({"name": "umd"}, LAWS["uniform_half"], 50, 5)
    dear = BinningExperiment({"name": "umd"}, LAWS["uniform_half"], 20000, 5)
    beats = []
    run_experiments(
        [cheap, dear],
        REPS,
        7,
        ResultStore(":memory:"),
        heartbeat=lambda done, total, work: beats.append((done, total, work)),
        on_estimate=lambda estimate: None,
    )
    works = [w for _, _, w in beats]
    assert all(0 <= w <= 1 for w in works)
    assert works[-1] == pytest.approx(1.0)
    # one timing block of each cell, then (one job, in order) the cheap cell's other three
    # (one task): 5 of 8 blocks, but little more than one of the dear cell's four blocks of work
    done, total, work = next(b for b in beats if b[0] == 5)
    assert (done, total) == (5, 8)
    assert work < 0.4
