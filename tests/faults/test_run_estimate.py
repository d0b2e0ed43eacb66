"""The run's time estimate: how it blends the start estimate and the rate, and how it fared."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from calcheck.theory_checks.cli import progress as cli_progress

ROOT = Path(__file__).resolve().parents[2]


def test_the_time_left_blends_the_start_estimate_and_the_rate_by_the_share_done(monkeypatch):
    clock_times = iter([0.0, 10.0])
    monkeypatch.setattr(cli_progress.time, "monotonic", lambda: next(clock_times))
    clock = cli_progress.Clock(report_seconds=5.0)
    # at 10 s: 100 s of simulation expected, then 5 s of report: 115 s in all
    assert clock.expect(100.0) == 105.0
    assert clock.expected == 115.0
    # at 60 s with 40% of the work done, the rate says 60 s more (+5 s of report), the
    # start estimate 115 - 60 = 55 s: 0.4 * 65 + 0.6 * 55 = 59 s
    assert clock.left(60.0, 60.0, 0.4) == pytest.approx(59.0)
    assert clock.record()["progress_lines"] == [[60.0, 0.4, 59.0]]


def test_without_a_start_estimate_the_rate_alone_says_it():
    clock = cli_progress.Clock(report_seconds=3.0)
    assert clock.left(clock.start + 10, 20.0, 0.5) == 23.0


def test_the_recorded_quick_run_was_estimated_within_30_percent_of_its_wall_time():
    # docs/measurements/quick.json: a quick run measured by docs/tools/record_run.py on an
    # idle machine, with the estimates the run printed (results.json's meta["estimate"])
    record = json.loads((ROOT / "docs" / "measurements" / "quick.json").read_text())
    estimate, wall = record["estimate"], record["wall_seconds"]
    assert not record["loaded"], record["loaded_because"]
    assert abs(estimate["expected_total_seconds"] - wall) <= 0.3 * wall
    assert estimate["progress_lines"], "the run printed no time left"
    for elapsed, share, left in estimate["progress_lines"]:
        assert abs(elapsed + left - wall) <= 0.3 * wall, (elapsed, share, left, wall)
