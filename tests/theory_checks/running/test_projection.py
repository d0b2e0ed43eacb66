"""The projection of a recorded run to K workers (Amdahl's law), hand-computed."""

import json

import pytest

from calcheck.theory_checks.cli.main import main
from calcheck.theory_checks.running.projection import project_cores


def _recorded(tmp_path, **cpu):
    record = {
        "wall_seconds_before_report": 190.0,
        "main_process_seconds": 6.0,
        "main_thread_seconds": 5.0,
        "simulation_seconds": 330.0,
        "evaluation_seconds": 24.0,
        "evaluation_processes": 2,
        "side_processes_seconds": 46.0,
        "first_block_stored_at_seconds": 2.5,
        "last_block_stored_at_seconds": 188.5,
    }
    record.update(cpu)
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"meta": {"jobs": 2, "cpu": record}, "checks": []}))
    return path


def test_the_projection_is_amdahl_s_law_with_its_inputs(tmp_path):
    # S = 2.5 + (190 - 188.5) = 4; P = 330 + 46 + 6 = 382; M = 6
    p = project_cores(_recorded(tmp_path), 16)
    assert (p.serial_seconds, p.parallel_cpu_seconds, p.main_process_seconds) == (4.0, 382.0, 6.0)
    assert p.recorded_projection_seconds == pytest.approx(4 + 382 / 2)
    assert p.projected_seconds == pytest.approx(4 + 382 / 16)
    assert p.recorded_workers == 2
    text = p.summary()
    assert "T(2) = 195.0 s (recorded 190.0 s, ratio 1.03)" in text
    assert "T(16) = 27.9 s" in text


def test_the_main_process_bounds_the_projection_from_below(tmp_path):
    # a main process of 40 CPU-s outlasts the spread work on 64 workers (382 / 64 = 6 s)
    p = project_cores(_recorded(tmp_path, main_process_seconds=40.0), 64)
    assert p.projected_seconds == pytest.approx(4 + 40)


def test_the_folder_of_a_run_is_read_too(tmp_path):
    _recorded(tmp_path)
    assert project_cores(tmp_path, 4).cores == 4


@pytest.mark.parametrize("cores", [0, -2, 2.5, True])
def test_cores_must_be_a_positive_integer(tmp_path, cores):
    with pytest.raises(ValueError, match="cores must be a positive integer"):
        project_cores(_recorded(tmp_path), cores)


def test_a_run_without_a_cpu_record_is_refused_in_words(tmp_path, capsys):
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"meta": {"jobs": 2}, "checks": []}))
    with pytest.raises(ValueError, match="no CPU record"):
        project_cores(path, 16)
    assert main(["bench", "--project-cores", "16", "--results", str(path)]) == 2
    assert capsys.readouterr().err.startswith("calcheck: error: ")
    with pytest.raises(ValueError, match="cannot read a run's results"):
        project_cores(tmp_path / "missing.json", 16)


def test_the_command_prints_the_projection_as_text_and_json(tmp_path, capsys):
    path = _recorded(tmp_path)
    assert main(["bench", "--project-cores", "16", "--results", str(path)]) == 0
    assert "T(16) = 27.9 s" in capsys.readouterr().out
    assert main(["bench", "--project-cores", "16", "--results", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["projected_seconds"] == pytest.approx(27.875)
    assert main(["bench", "--project-cores", "0", "--results", str(path)]) == 2
    assert "--project-cores must be a positive integer" in capsys.readouterr().err
