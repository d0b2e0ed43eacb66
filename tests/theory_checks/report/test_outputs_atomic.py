"""Outputs are written atomically; selectors and bound inputs are never silently dropped."""

import errno
import json

import pytest

import calcheck.simulations.files as io
from calcheck.bounds import gr22
from calcheck.simulations.files import atomic_write_text
from calcheck.theory_checks.cli.main import main


def test_a_failed_write_leaves_the_previous_file_whole(tmp_path, monkeypatch):
    target = tmp_path / "results.json"
    atomic_write_text(target, json.dumps({"run": 1}))

    def full_disk(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(io.os, "fsync", full_disk)
    with pytest.raises(OSError, match="No space"):
        atomic_write_text(target, json.dumps({"run": 2, "pad": "x" * 10000}))
    assert json.loads(target.read_text()) == {"run": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["results.json"]  # no temp file left


def test_reports_survive_a_full_disk_mid_run(tmp_path, monkeypatch, capsys):
    out = tmp_path / "out"
    assert main(["run", "--checks", "gr21.thm3", "--reps", "100", "--out", str(out)]) == 0
    before = {p.name: p.read_text() for p in out.glob("report.*")}
    before["results.json"] = (out / "results.json").read_text()

    def full_disk(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(io.os, "fsync", full_disk)
    capsys.readouterr()
    assert main(["run", "--checks", "gr21.thm3", "--reps", "200", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "no space left" in err
    assert "results.json" in err
    assert "Traceback" not in err
    for name, text in before.items():
        assert (out / name).read_text() == text


def test_every_check_selector_must_match(tmp_path, capsys):
    assert (
        main(["run", "--checks", "gr21.thm3", "nope", "--reps", "100", "--out", str(tmp_path)]) != 0
    )
    assert "['nope'] matches no check" in capsys.readouterr().err


def test_no_bins_at_all_is_an_error_not_nan():
    with pytest.raises(ValueError, match="bins_per_class"):
        gr22.thm1_conditional_eps_data_dependent([5, 5], [0, 0], 0.1)


def test_multiclass_metrics_and_binning_refuse_nan():
    import numpy as np

    from calcheck.simulations.calibrators.edges import fixed_width_bin_index
    from calcheck.simulations.metrics.multiclass import (
        plugin_classwise_ece,
        plugin_reliability_mce,
        plugin_top_label_errors,
    )

    y = np.array([0, 1])
    with pytest.raises(ValueError, match="probs"):
        plugin_classwise_ece(np.array([[0.5, 0.5], [np.nan, 1.0]]), y)
    with pytest.raises(ValueError, match="confidence"):
        plugin_reliability_mce(y, np.array([0.5, np.nan]), y)
    with pytest.raises(ValueError, match="confidence"):
        plugin_top_label_errors(y, np.array([0.5, np.inf]), y)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        fixed_width_bin_index(np.array([0.2, 1.5]), 10)


def test_a_run_of_another_selection_keeps_the_previous_report(tmp_path, capsys):
    out = tmp_path / "out"
    args = ["run", "--reps", "100", "--out", str(out)]
    assert main([*args, "--checks", "gr21.thm3"]) == 0
    assert main([*args, "--checks", "gr21.thm3"]) == 0  # same selection: refreshed in place
    assert not (out / "previous").exists()
    assert main([*args, "--checks", "gr21.cor1"]) == 0
    assert "was kept in" in capsys.readouterr().out
    (kept,) = (out / "previous").iterdir()
    old = json.loads((kept / "results.json").read_text())
    assert {c["id"] for c in old["checks"]} == {
        "gr21.thm3",
        "gr21.thm3.control.wrong_bound",
        "gr21.thm3.control.no_tie_breaking",
        "gr21.thm3.control.times_0.7",
    }
    assert (kept / "report.md").is_file()
    new = json.loads((out / "results.json").read_text())
    assert all(c["id"].startswith("gr21.cor1") for c in new["checks"])


def test_unusable_out_folders_and_damaged_stores_are_clear_errors(tmp_path, capsys):
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    for out in (a_file, a_file / "sub"):
        assert main(["run", "--checks", "gr21.thm3", "--reps", "100", "--out", str(out)]) != 0
        assert "not a folder" in capsys.readouterr().err
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "store.sqlite").write_bytes(b"garbage" * 50)
    assert main(["run", "--checks", "gr21.thm3", "--reps", "100", "--out", str(bad)]) != 0
    assert "is damaged or not a calcheck store" in capsys.readouterr().err


def test_multiclass_scaling_refuses_empty_data_strings_and_more_classes():
    import numpy as np

    from calcheck.simulations.calibrators import DirichletScaling, MulticlassTemperatureScaling

    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(3), size=40)
    y = rng.integers(0, 3, 40)
    with pytest.raises(ValueError, match="at least one row"):
        MulticlassTemperatureScaling().fit(np.zeros((0, 3)), np.zeros(0, dtype=int))
    with pytest.raises(ValueError, match="labels must be integers"):
        DirichletScaling().fit(p, np.array(["a"] * 40))
    fitted = DirichletScaling().fit(p, y)
    with pytest.raises(ValueError, match="fitted with 3"):
        fitted.predict_proba(rng.dirichlet(np.ones(4), size=5))


def test_a_run_without_a_terminal_reports_progress_on_stderr(tmp_path, capsys):
    assert main(["run", "--checks", "gr21.thm3", "--reps", "100", "--out", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert "blocks stored (100%)" in err
    assert "resumes" in err


def test_the_report_opens_with_a_summary_and_draws_each_guarantee(tmp_path, capsys):
    out = tmp_path / "out"
    assert (
        main(["run", "--checks", "gr21.thm3", "gr21.cor1", "--reps", "200", "--out", str(out)]) == 0
    )
    assert (out / "plots" / "gr21_thm3.png").stat().st_size > 1000
    assert (out / "plots" / "gr21_cor1.png").is_file()
    page = (out / "report.html").read_text()
    assert page.index("<h2>Summary</h2>") < page.index("<h2>Theory checks</h2>")
    assert "2 of 2 guarantees verified" in page
    # gr21.thm3.control.times_0.7 repeats the mutant ladder on thm3's draws: not a control
    assert "2 of 2 negative controls caught" in page
    assert "1 controls that repeat a mutant rung" in page
    assert "1 of 1 dropped hypotheses as stated" in page  # no tie-breaking on atoms
    assert "plots/gr21_thm3.png" in page
    assert "200 replicates per point" in page


def test_atomic_outputs_get_the_usual_file_mode(tmp_path):
    import os

    mask = os.umask(0)
    os.umask(mask)
    fresh = atomic_write_text(tmp_path / "a.json", "{}")
    assert fresh.stat().st_mode & 0o777 == 0o666 & ~mask  # not mkstemp's private 0600
    existing = tmp_path / "b.json"
    existing.write_text("{}")
    existing.chmod(0o640)
    assert atomic_write_text(existing, "[]").stat().st_mode & 0o777 == 0o640


def test_pictures_for_limits_and_rate_checks(tmp_path, capsys):
    # no sample (n = 0): drawn against B; a rate check: n* against h (no warning either way)
    out = tmp_path / "out"
    main(["run", "--checks", "nch14.thm34", "klm19.lem43", "--reps", "200", "--out", str(out)])
    assert (out / "plots" / "nch14_thm34.png").stat().st_size > 1000
    assert (out / "plots" / "klm19_lem43.png").stat().st_size > 1000
    assert "plots/klm19_lem43.png" in (out / "report.html").read_text()
