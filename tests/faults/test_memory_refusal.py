"""The memory estimate refuses sizes that cannot fit, before any allocation (issue 38)."""

import pytest

from calcheck.simulations import memory
from calcheck.simulations.memory import MemoryRefused, check_fits, largest_fitting, needed_bytes


def test_needed_bytes_by_hand():
    # 2 arrays x 30e6 x 200 x 8 bytes = 96e9
    assert needed_bytes(n=30_000_000, reps=200, arrays=2) == 96e9


def test_largest_fitting_by_hand():
    # 7.6e9 / (2 * 200 * 8) = 2375000 exactly
    assert largest_fitting(reps=200, arrays=2, available=7_600_000_000) == 2_375_000
    assert largest_fitting(reps=10**9, arrays=2, available=1000) == 0


def test_check_fits_refuses_with_the_largest_size():
    with pytest.raises(MemoryRefused, match=r"^study: n = 30000000 with reps = 200 needs") as info:
        check_fits(n=30_000_000, reps=200, arrays=2, what="study", available=7_600_000_000)
    message = str(info.value)
    assert "about 96.0 GB (2 arrays of n x reps float64)" in message
    assert "more than the 7.6 GB available; the largest n that fits is 2375000" in message
    assert isinstance(info.value, ValueError)


def test_check_fits_accepts_what_fits():
    check_fits(n=2_375_000, reps=200, arrays=2, what="study", available=7_600_000_000)


def test_check_fits_when_no_n_fits():
    with pytest.raises(MemoryRefused, match="no n fits with reps = 1000000000; lower reps"):
        check_fits(n=1, reps=10**9, arrays=2, what="x", available=1000)


def test_unknown_memory_skips_the_check(monkeypatch):
    monkeypatch.setattr(memory, "available_bytes", lambda: None)
    check_fits(n=10**15, reps=100, arrays=5, what="x")
    assert largest_fitting(reps=100, arrays=5) is None


def test_available_bytes_is_read_here():
    found = memory.available_bytes()
    assert found is None or found > 0


class _Experiment:
    """Stands in for an experiment: n = 1000 points, cost 2000 per replicate, 10 bins."""

    n_total = 1000
    cost = 2000
    n_bins = 10


def test_experiments_are_sized_by_block_and_worker():
    # 10 arrays x (2000 / 1000) per n = 20 per n; 100 replicates x 2 workers = 200;
    # 20 x 1000 x 200 x 8 bytes = 32 MB; with 16 MB available the largest n is
    # floor(16e6 / (20 x 200 x 8)) = 500
    with pytest.raises(MemoryRefused, match=r"needs about 32\.0 MB .* largest n that fits is 500$"):
        memory.check_experiments_fit([_Experiment()], n_jobs=2, what="t", available=16_000_000)
    memory.check_experiments_fit([_Experiment()], n_jobs=1, what="t", available=16_000_000)


def test_a_cells_outcome_is_sized_by_reps_and_bins():
    # 4 arrays x 10 bins x 10**6 reps x 8 bytes = 320 MB > 100 MB; the block needs 16 MB
    with pytest.raises(MemoryRefused, match=r"n_bins = 10 with reps = 1000000 needs about 320\.0"):
        memory.check_experiments_fit([_Experiment()], reps=10**6, what="t", available=10**8)


def test_minus_one_jobs_counts_every_core():
    import os

    assert memory._workers(-1) == (os.cpu_count() or 1)
    assert memory._workers(3) == 3
    assert memory._workers("x") == 1  # the engine refuses it with its own message


def test_the_full_budget_fits_where_it_ran():
    # The full budget ran with a largest process of 1.9 GB (budgets page, 2026-11-26); its
    # recalibration cells' cost is a time weight (60 x the grid's points), which once sized
    # their memory at 81 GB and refused `calcheck run --budget full` on a 24 GB machine.
    from calcheck.theory_checks.catalog import all_checks

    experiments = {e.key: e for c in all_checks("full") for e in c.simulations()}.values()
    memory.check_experiments_fit(experiments, reps=20_000, n_jobs=2, what="run", available=8e9)


def test_a_recalibration_block_is_sized_by_its_largest_n_as_measured():
    import tracemalloc

    from calcheck.simulations.engine import simulate_block
    from calcheck.simulations.experiments.klm19_recalibration import RecalibrationExperiment
    from calcheck.simulations.laws.recalibration import platt_law

    exp = RecalibrationExperiment(platt_law(), 10, (600, 6000))
    assert exp.memory_points == 6000
    tracemalloc.start()
    try:
        simulate_block(exp, 1, 0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    estimate = memory.needed_bytes(n=exp.memory_points, reps=100, arrays=memory.BLOCK_ARRAYS)
    assert peak <= estimate <= 3 * peak  # about 7 arrays held, 10 estimated
