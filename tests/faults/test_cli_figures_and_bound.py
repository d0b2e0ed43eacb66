"""`calcheck figures` refuses bad --reps and missing packages before work; `bound` flags vacuity."""

from __future__ import annotations

import sys

import pytest

from calcheck.theory_checks.cli.main import main


@pytest.mark.parametrize("reps", ["0", "-3"])
def test_reps_below_one_is_refused(tmp_path, capsys, reps):
    # issue 38: --reps 0 gave "Mean of empty slice" warnings, null findings and exit 0
    with pytest.raises(SystemExit) as stop:
        main(["figures", "gr21.fig1a", "--reps", reps, "--out", str(tmp_path)])
    assert stop.value.code == 2
    assert f"argument --reps: expected a positive integer, got '{reps}'" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_a_missing_optional_package_is_named_before_any_figure_runs(tmp_path, capsys, monkeypatch):
    # issue 38: ModuleNotFoundError after the first figure of `calcheck figures klm19 nch14`
    monkeypatch.setitem(sys.modules, "sklearn", None)  # import sklearn raises ImportError
    out = tmp_path / "figs"
    assert main(["figures", "klm19.fig1", "nch14", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("calcheck: error: nch14.fig2, nch14.table1, nch14.table2 need "), err
    assert "python -m pip install scikit-learn" in err
    assert len(err.strip().splitlines()) == 1
    assert not out.exists() or not list(out.rglob("*.png"))


def test_a_vacuous_bound_value_says_so_on_stderr(capsys):
    # issue 38: n = 20, B = 10 printed 1.63 with no note
    assert main(["bound", "gr21.thm3", "--n", "20", "--n-bins", "10", "--alpha", "0.1"]) == 0
    out, err = capsys.readouterr()
    assert out.strip() == "1.62762"
    assert "a value >= 1 says nothing about an error in [0, 1]" in err
    assert main(["bound", "gr21.thm3", "--n", "2000", "--n-bins", "10", "--alpha", "0.1"]) == 0
    assert capsys.readouterr().err == ""


def test_an_allocation_beyond_memory_is_one_line(tmp_path, capsys, monkeypatch):
    # gr21.fig3 --reps 100000000 holds (methods x reps x 201) results: numpy refuses 749 GiB
    # before allocating; here a figure run that does the same (no data needed)
    import numpy as np

    from calcheck.figures import registry

    def too_big(*args, **kwargs):
        return np.empty((5, 100_000_000, 201))

    monkeypatch.setattr(registry, "regenerate", too_big)
    assert main(["figures", "gr21.fig2", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("calcheck: error: not enough memory (Unable to allocate "), err
    assert "lower --reps" in err
    assert len(err.strip().splitlines()) == 1


def test_the_memory_line_names_only_the_command_s_own_flags(capsys, monkeypatch):
    # plan has no --reps: its line names --max-reps (it used to say "lower --reps" for all)
    from calcheck.theory_checks.cli import plan as plan_command

    def too_big(**kwargs):
        raise MemoryError("Unable to allocate 9.00 EiB")

    monkeypatch.setattr(plan_command, "plan", too_big)
    assert main(["plan", "--shortfall", "0.05"]) == 2
    err = capsys.readouterr().err
    assert "lower --max-reps" in err, err
    assert "--reps " not in err, err
    assert len(err.strip().splitlines()) == 1
