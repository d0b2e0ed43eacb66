"""Checks evaluated beside the workers: the same results, read under the parent's stamps."""

from types import SimpleNamespace

import pytest

from calcheck.simulations.engine import run_experiments
from calcheck.simulations.parallel import usable_cpus
from calcheck.simulations.store import ResultStore
from calcheck.theory_checks.catalog import all_checks
from calcheck.theory_checks.running.evaluation import (
    cells_of,
    evaluate_encoded,
    evaluation_processes,
)
from calcheck.theory_checks.running.records import encode_result
from calcheck.theory_checks.running.runner import run_checks

REPS = 200
#: Stand-ins for a store: only its path and whether it is read-only matter here.
ON_DISK = SimpleNamespace(path="/x/store.sqlite", read_only=False)
IN_MEMORY = SimpleNamespace(path=":memory:", read_only=False)


def _checks():
    return [c for c in all_checks("quick") if c.guarantee == "gr21.thm3"][:3]


def test_evaluation_processes_only_where_a_run_records_on_a_file_with_workers():
    workers = min(2, usable_cpus())
    expected = workers if workers > 1 else 0
    assert evaluation_processes(2, "loky", ON_DISK, True) == expected
    assert evaluation_processes(2, "dask", ON_DISK, True) == expected
    assert evaluation_processes(1, "loky", ON_DISK, True) == 0
    assert evaluation_processes(2, "loky", ON_DISK, False) == 0
    assert evaluation_processes(2, "threading", ON_DISK, True) == 0
    assert evaluation_processes(2, "loky", IN_MEMORY, True) == 0
    # a store without write permission is opened immutable: another process could not read it
    read_only = SimpleNamespace(path="/x/store.sqlite", read_only=True)
    assert evaluation_processes(2, "loky", read_only, True) == 0
    # an n_jobs the engine refuses (with its own message) starts none
    for bad in (None, "2", 0, -2, True):
        assert evaluation_processes(bad, "loky", ON_DISK, True) == 0
    assert evaluation_processes(-1, "loky", ON_DISK, True) == (
        usable_cpus() if usable_cpus() > 1 else 0
    )


def test_a_check_is_read_under_the_stamps_the_parent_gave(tmp_path, monkeypatch):
    # an evaluation process that computes a stamp again may find the sources edited since
    # the run started: it reads the cells under the main process's keys and stamps
    check = _checks()[0]
    path = tmp_path / "store.sqlite"
    with ResultStore(path) as store:
        run_experiments(check.simulations(), REPS, 7, store)
        expected = encode_result(check.evaluate(store, REPS, 7))
    parents = cells_of(check)
    kind = type(check.simulations()[0])
    monkeypatch.setattr(kind, "code_stamp", property(lambda self: "edited since"))
    text, seconds = evaluate_encoded(check, str(path), parents, (REPS, 7, 1e-3))
    assert text == expected
    assert seconds > 0
    with pytest.raises(ValueError, match="is not stored"):
        evaluate_encoded(check, str(path), cells_of(check), (REPS, 7, 1e-3))


def test_a_reader_sees_what_the_writer_commits_after_it_opened(tmp_path):
    check = _checks()[0]
    path = tmp_path / "store.sqlite"
    with ResultStore(path) as store:
        store.set_meta("opened", True)
        reader = ResultStore.reader(path)
        run_experiments(check.simulations(), REPS, 7, store)  # committed after it opened
        exp = check.simulations()[0]
        arrays = reader.load(7, exp.key, exp.code_stamp, range(REPS // 100))
        assert len(next(iter(arrays.values()))) == REPS
        assert reader.read_only
        reader.close()


def test_results_evaluated_in_processes_are_those_of_the_main_process(tmp_path):
    checks = _checks()
    one = run_checks(
        checks, ResultStore(tmp_path / "one.sqlite"), reps=REPS, root_seed=3, records=True
    )
    two = run_checks(
        checks,
        ResultStore(tmp_path / "two.sqlite"),
        reps=REPS,
        root_seed=3,
        records=True,
        n_jobs=2,
    )
    assert one.evaluation_processes == 0
    assert two.evaluation_processes == evaluation_processes(2, "loky", ON_DISK, True)
    assert [encode_result(r) for r in one.results] == [encode_result(r) for r in two.results]
    if two.evaluation_processes:
        assert two.evaluation_cpu_seconds > 0
        # the result is the main process's check, decoded (as a rerun reads its record)
        assert all(r.check is c for r, c in zip(two.results, checks, strict=True))


def test_each_evaluating_process_holds_a_cell_s_outcome_in_the_memory_check():
    from calcheck.simulations.memory import MemoryRefused, check_experiments_fit

    experiments = _checks()[0].simulations()[:1]
    # 10 bins x 100,000 replicates x 4 arrays x 8 bytes = 32 MB a cell's outcome (its
    # blocks, 100 replicates of n = 200 in one worker, about 1.6 MB)
    check_experiments_fit(experiments, reps=100_000, what="the run", available=40_000_000)
    with pytest.raises(MemoryRefused, match="in each of 2 evaluating processes"):
        check_experiments_fit(
            experiments, reps=100_000, what="the run", available=40_000_000, evaluators=2
        )
