"""A resumed run says it checks its stored blocks; its time left ignores that time (issue 38)."""

from __future__ import annotations

from calcheck.theory_checks.cli import progress as run_progress
from calcheck.theory_checks.cli.main import main


def test_time_left_is_measured_from_the_first_block_stored(monkeypatch, capsys):
    # a resume spent 50 s checking stored blocks before its first new block; the run then
    # does 9.9% of the work in 30 s: 90% left takes about 30 * 0.9 / 0.099 = 273 s, not
    # 80 * 0.9 / 0.1 (the old arithmetic counted the checking as simulation)
    clock = iter([0.0, 50.0, 80.0])
    monkeypatch.setattr(run_progress.time, "monotonic", lambda: next(clock))
    beat = run_progress.heartbeat(every=30.0)
    beat(1, 1000, 0.001)  # first block stored at 50 s: the origin
    beat(100, 1000, 0.1)
    first, last = capsys.readouterr().err.strip().splitlines()
    assert "left" not in first  # nothing measured yet
    assert last.startswith("calcheck: 100 of 1000 blocks stored (10%), 10% of the work, 3.3 ")
    assert f"about {run_progress.format_duration(30 * 0.9 / 0.099)} left" in last


def test_reweighing_the_work_restarts_the_measurement(monkeypatch, capsys):
    clock = iter([0.0, 10.0, 20.0, 60.0])
    monkeypatch.setattr(run_progress.time, "monotonic", lambda: next(clock))
    beat = run_progress.heartbeat(every=30.0)
    beat(2, 100, 0.02)
    beat(3, 100, 0.01)  # the timing blocks weighed the work anew: share fell
    beat(50, 100, 0.41)
    err = capsys.readouterr().err.strip()
    assert f"about {run_progress.format_duration(40 * 0.59 / 0.40)} left" in err


def test_a_resumed_run_says_it_checks_its_stored_blocks(tmp_path, capsys):
    argv = ["run", "--checks", "gr21.thm3", "--no-progress", "--out", str(tmp_path)]
    assert main([*argv, "--reps", "200", "--keep-replicates"]) == 0
    assert "resuming" not in capsys.readouterr().err
    assert main([*argv, "--reps", "300", "--keep-replicates"]) == 0
    err = capsys.readouterr().err
    assert "calcheck: resuming: checking the digests of the " in err
    assert "blocks stored in " in err
