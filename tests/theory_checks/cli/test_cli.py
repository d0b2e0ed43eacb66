"""CLI: list, bound, run (checks and study files), bench, errors."""

import json

import pytest

from calcheck.bounds import registry
from calcheck.theory_checks.cli.main import main


def _json_out(capsys, argv):
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_list_json_covers_every_guarantee(capsys):
    out = _json_out(capsys, ["list", "--json"])
    ids = {g["id"] for g in out["guarantees"]}
    assert ids == {g.id for g in registry.all_guarantees()}
    for g in out["guarantees"]:
        # a paper's guarantee has checks; one defined at run time by another test has none
        assert g["checks"] or registry.is_user_defined(g["id"]), g["id"]
    assert any(c["expect"] == "violated" for c in out["checks"])
    assert main(["list"]) == 0
    assert "gr21.thm3.control.no_tie_breaking" in capsys.readouterr().out


def test_bound_text_and_json(capsys):
    assert main(["bound", "gr21.thm3", "--n", "3000", "--n-bins", "10", "--alpha", "0.1"]) == 0
    assert float(capsys.readouterr().out) == pytest.approx(0.0941279, abs=1e-7)
    out = _json_out(
        capsys,
        [
            "bound",
            "gr21.thm4.marginal",
            "--n",
            "1500",
            "--n-bins",
            "10",
            "--alpha",
            "0.1",
            "--json",
        ],
    )
    assert out["value"] == pytest.approx(0.10026, abs=1e-5)
    assert out["informative"]
    assert out["arguments"] == {"n": 1500, "n_bins": 10, "alpha": 0.1, "delta": 0.0}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["bound", "gr21.thm3", "--n", "10", "--n-bins", "10", "--alpha", "0.1"], "n must be >="),
        (["bound", "gr21.thm3", "--n", "100", "--n-bins", "10", "--alpha", "1.5"], "alpha"),
        (["bound", "gr21.thm3", "--n", "100", "--n-bins", "10"], "needs --alpha"),
        (["bound", "gr21.nothing", "--n", "100"], "unknown guarantee"),
        (
            [
                "bound",
                "gr21.thm3",
                "--n",
                "100",
                "--n-bins",
                "10",
                "--alpha",
                "0.1",
                "--delta",
                "0.1",
            ],
            "does not take --delta",
        ),
        (
            ["bound", "gr21.thm3", "--n", "100", "n=500", "--n-bins", "10", "--alpha", "0.1"],
            "given twice",
        ),
        (["run", "--checks", "gr99.*"], "matches no check"),
        (["run", "--study", "/nonexistent/study.toml"], "study file not found"),
    ],
)
def test_errors_exit_2_with_message(capsys, argv, message):
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_run_subset_writes_results_and_report(tmp_path, capsys):
    out = tmp_path / "res"
    argv = [
        "run",
        "--checks",
        "gr21.thm3",
        "--reps",
        "300",
        "--seed",
        "1",
        "--out",
        str(out),
        "--json",
    ]
    data = _json_out(capsys, argv)
    ids = {c["id"] for c in data["checks"]}
    assert ids == {
        "gr21.thm3",
        "gr21.thm3.control.wrong_bound",
        "gr21.thm3.control.no_tie_breaking",
        "gr21.thm3.control.times_0.7",
    }
    assert data["all_passed"]
    assert data["meta"]["seed"] == 1
    cell = data["checks"][0]["cells"][0]
    assert {"coverage", "ci_low", "ci_high", "p_value", "tightness", "shortfall_90"} <= set(cell)
    assert (out / "results.json").exists()
    assert (out / "report.md").exists()
    assert "gr21.thm3" in (out / "report.md").read_text()
    # Resuming from the same store gives the same verdicts.
    again = _json_out(capsys, argv)
    assert again["checks"] == data["checks"]


def test_study_file(tmp_path, capsys):
    study = tmp_path / "study.toml"
    study.write_text("""
guarantee = "gr21.thm4.marginal"
reps = 300
alphas = [0.1]

[law]
name = "beta25_platt"
scores = { kind = "beta", a = 2.0, b = 5.0 }
eta = { kind = "logistic", slope = 2.0, intercept = -0.5 }

[grid]
n = [200, 500]
n_bins = [5]
""")
    data = _json_out(capsys, ["run", "--study", str(study), "--out", str(tmp_path / "o"), "--json"])
    (check,) = data["checks"]
    assert check["id"] == "study:gr21.thm4.marginal"
    assert check["verdict"] == "consistent"
    assert [(c["n"], c["n_bins"], c["law"]) for c in check["cells"]] == [
        (200, 5, "beta25_platt"),
        (500, 5, "beta25_platt"),
    ]
    bad = tmp_path / "bad.toml"
    bad.write_text(
        'guarantee = "gr21.thm3"\n[law]\nscores = { kind = "cauchy" }\n[grid]\nn = [100]\n'
    )
    assert main(["run", "--study", str(bad), "--out", str(tmp_path / "b")]) == 2
    assert "scores kind" in capsys.readouterr().err


def test_bench_json(capsys, monkeypatch):
    from calcheck.theory_checks.running import bench

    monkeypatch.setattr(bench, "SINGLE_FIT_SIZES", (1_000, 3_000))  # seconds, not 15
    monkeypatch.setattr(bench, "RECALIBRATION_N", 300)
    small = {"n": 200, "n_classes": 4, "max_iter": 5, "repeats": 2}
    monkeypatch.setattr(bench, "DIRICHLET_ARGS", small)
    monkeypatch.setattr(bench, "EVALUATION_BENCH", ("gr21.thm3", 200))
    out = _json_out(capsys, ["bench", "--n", "2000", "--rounds", "2", "--json"])
    assert out["seconds_per_replicate"] > 0
    assert out["ratio_to_argsort_baseline"] > 0
    assert [r["n"] for r in out["single_fit"]] == [1_000, 3_000]
    assert out["recalibration"]["ratio_to_floor"] > 0
    assert out["dirichlet"]["n_parameters"] == 4 * 5
    # every line the text prints is in the JSON: the main process's ceiling, the evaluation
    assert out["main_process"]["ceiling_blocks_per_second"] > 0
    assert out["main_process"]["ratio_to_floor"] > 0
    evaluation = out["evaluation"]
    assert (evaluation["guarantee"], evaluation["checks"]) == ("gr21.thm3", 4)
    assert evaluation["blocks"] > 0
    assert evaluation["ratio_to_floor"] == evaluation["seconds"] / evaluation["floor_seconds"]


def test_recalibration_benchmark_is_a_ratio_to_draw_and_one_fit():
    from calcheck.simulations.experiments.klm19_recalibration import (
        benchmark_recalibration_cell,
    )

    res = benchmark_recalibration_cell(300, 10, rounds=1, seed=2)
    assert (res.n, res.n_bins, res.rounds) == (300, 10, 1)
    assert res.ratio_to_floor == res.seconds_per_replicate / res.floor_seconds_per_replicate
    with pytest.raises(ValueError, match="n must be >= "):
        benchmark_recalibration_cell(20, 10)
    with pytest.raises(ValueError, match="rounds"):
        benchmark_recalibration_cell(300, rounds=0)


def test_bound_json_is_valid_json_with_an_infinite_value(capsys):
    argv = ["bound", "gpr20.thm4", "n_bin=0,10", "variance=0.1,0.1", "--n-bins", "2"]
    assert main([*argv, "--alpha", "0.1", "--json"]) == 0

    def refuse(name):
        raise AssertionError(f"bare {name} in JSON output")

    out = json.loads(capsys.readouterr().out, parse_constant=refuse)
    assert out["value"][0] == "inf"


def test_help_states_defaults_and_blocks(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "rounded up to blocks of 100" in text
    assert "(default: 20210718)" in text
    assert "(default: loky)" in text


def test_figures_data_is_the_data_root(tmp_path, capsys):
    csv = tmp_path / "credit.csv"
    csv.write_text("x")
    assert main(["figures", "gr21.fig3", "--data", str(csv), "--out", str(tmp_path / "f")]) == 2
    assert "--data must be the data folder" in capsys.readouterr().err


def test_single_fit_benchmark_is_a_ratio_to_draw_and_argsort():
    from calcheck.theory_checks.running.bench import benchmark_single_fit

    res = benchmark_single_fit(2_000, 10, rounds=2, seed=1)
    assert (res.n, res.rounds) == (2_000, 2)
    assert min(res.fit_predict_seconds, res.argsort_baseline_seconds) > 0
    assert res.ratio_to_argsort_baseline == res.fit_predict_seconds / res.argsort_baseline_seconds
    with pytest.raises(ValueError, match="rounds"):
        benchmark_single_fit(2_000, rounds=0)


def test_a_closed_pipe_stops_quietly():
    # `calcheck list | head -1`: the reader goes away; no traceback on stderr
    import subprocess
    import sys

    proc = subprocess.Popen(
        [sys.executable, "-m", "calcheck", "list"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**__import__("os").environ, "CALCHECK_PLUGINS": "0"},
    )
    proc.stdout.readline()
    proc.stdout.close()
    with proc.stderr:
        err = proc.stderr.read().decode()
    proc.wait(timeout=60)
    assert "Traceback" not in err
    assert "BrokenPipeError" not in err


@pytest.mark.parametrize("command", ["run", "search", "figures"])
def test_a_jobs_value_that_is_no_integer_is_named_in_words(command, capsys):
    with pytest.raises(SystemExit) as info:
        main([command, "--jobs", "x"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "argument --jobs: expected a positive integer or -1, got 'x'" in err
    assert "_positive_int" not in err


def test_list_prints_the_shipped_laws_and_the_study_schema(capsys):
    from calcheck import LAWS

    assert main(["list", "--laws"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == list(LAWS)
    assert main(["list", "--laws", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0] == {
        "name": "uniform_half",
        "family": "BinaryLaw",
        "law": repr(LAWS["uniform_half"]),
    }
    assert main(["list", "--study-schema"]) == 0
    out = capsys.readouterr().out
    assert "| `guarantee` |" in out
    assert "[search]" in out
