"""Figures: plotting layer, stated numbers, CREDIT loader and findings, CLI, HTML report."""

import json

import numpy as np
import pytest
from matplotlib.axes import Axes

from calcheck.bounds import gr21
from calcheck.figures import plotting
from calcheck.figures.data import credit_base_model, default_data_dir, load_credit
from calcheck.figures.gr21 import fig1a, fig2
from calcheck.figures.gr21._panels import credit_findings
from calcheck.figures.gr21._style import theorem4_curve
from calcheck.figures.gr21.credit import EPS_GRID, credit_experiment
from calcheck.figures.registry import FIGURE_MODULES, get_figure, select_figures
from calcheck.simulations.calibrators import (
    DoubleDippedScalingBinning,
    IsotonicBinning,
    UniformMassBinning,
)
from calcheck.theory_checks.cli.main import main

CREDIT = default_data_dir() / "credit.csv"
needs_credit = pytest.mark.skipif(not CREDIT.is_file(), reason=f"CREDIT data not found at {CREDIT}")


def test_plotting_helpers_return_axes_headless():
    _, axes = plotting.new_figure(2)
    eps = np.linspace(0, 0.2, 11)
    runs = np.random.default_rng(0).random((5, 11)).cumsum(axis=1) / 11
    assert isinstance(plotting.validity_plot(axes[0, 0], eps, runs, label="x"), Axes)
    assert isinstance(theorem4_curve(axes[0, 0], eps, 3000, 10), Axes)
    p = np.repeat([0.2, 0.5, 0.8], 10)
    y = (np.arange(30) % 2).astype(float)
    assert isinstance(plotting.reliability_diagram(axes[0, 1], p, y), Axes)
    assert isinstance(
        plotting.eps_vs_bins(axes[0, 1], [1000], np.arange(1, 20), bound=gr21.thm3_conditional_eps),
        Axes,
    )
    with pytest.raises(ValueError, match="shape of eps"):
        plotting.validity_plot(axes[0, 0], eps, runs[:, :5])


def test_fig1a_stated_numbers():
    data = fig1a.compute()
    assert data["l1_ece"][0] == pytest.approx(0.02245)  # caption: about 0.023
    assert data["one_minus_auc"][0] == pytest.approx(0.02245, abs=2e-5)  # grid error
    assert all(f["holds"] for f in fig1a.findings(data))


def test_fig2_caption_points():
    data = fig2.compute()
    assert data["caption_points"] == pytest.approx([0.1076, 0.0729, 0.0579], abs=5e-5)
    assert all(f["holds"] for f in fig2.findings(data))


def test_isotonic_and_scaling_binning_by_hand():
    iso = IsotonicBinning().fit([0.1, 0.2, 0.3, 0.4], [0, 1, 0, 1])
    # PAV: 0, (1 + 0)/2 pooled, 1 -> bins [0, .2), [.2, .4), [.4, 1].
    assert iso.bin_values_ == pytest.approx([0.0, 0.5, 1.0])
    assert iso.predict([0.05, 0.25, 0.4, 1.0]).tolist() == pytest.approx([0, 0.5, 1, 1])
    tied = IsotonicBinning().fit([0.3, 0.3, 0.3, 0.6], [1, 0, 0, 1])
    assert tied.bin_values_ == pytest.approx([1 / 3, 1.0])
    s = np.linspace(0.05, 0.85, 9)
    sb = DoubleDippedScalingBinning(3).fit(s, np.zeros(9))
    umd = UniformMassBinning(3).fit(s, s)
    assert sb.bin_values_ == pytest.approx(umd.bin_values_)  # means of scores, UMD bins


def test_loader_error_names_file(tmp_path):
    missing = tmp_path / "nope.csv"
    with pytest.raises(FileNotFoundError, match=r"nope\.csv"):
        load_credit(missing)
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\nc,d\n1,2\n")
    with pytest.raises(ValueError, match=r"does not look like credit\.csv"):
        load_credit(bad)


@needs_credit
def test_credit_loader_and_base_model():
    x, y = load_credit(CREDIT)
    assert x.shape == (30000, 23)
    assert set(np.unique(y)) == {0.0, 1.0}
    assert y.mean() == pytest.approx(0.2212, abs=1e-4)  # data README: about 22% ones
    split = credit_base_model(x, y, rng=np.random.default_rng(0))
    assert split.pool_scores.shape == (15000,)
    # Platt scaling on B makes the pool's mean score close to its default rate.
    assert split.pool_scores.mean() == pytest.approx(split.pool_labels.mean(), abs=0.02)


@needs_credit
def test_credit_findings_on_regenerated_data(tmp_path):
    """§4 findings on 25 repetitions (the paper uses 100). At 100 repetitions UMD - UMS in
    mean validity area is 8.8 to 11.4 standard errors above 0 at every n, so 25 keep z > 4."""
    n_values = (500, 1000, 3000, 5000, 7000)
    data = credit_experiment(n_values, reps=25, cache_dir=tmp_path)
    assert data["marginal/randomized_umd/1000"].shape == (25, EPS_GRID.size)
    found = {f["claim"].split(" (")[0]: f for f in credit_findings(data, n_values)}
    assert found["UMD above UMS at every n"]["holds"]
    for f in found.values():  # every finding is reported with its numbers
        assert f["value"]
        assert isinstance(f["holds"], bool)
    # Isotonic and fixed-width fail conditionally: far below UMD at every n.
    for key, f in found.items():
        if key.startswith(("isotonic", "fixed_width")):
            assert all(v["conditional"] < v["conditional_umd"] - 0.2 for v in f["value"].values())
    # Cached: a second call reads the file instead of recomputing.
    assert len(list(tmp_path.glob("gr21-credit-*.npz"))) == 1
    again = credit_experiment(n_values, reps=25, cache_dir=tmp_path)
    assert np.array_equal(again["marginal/ums/500"], data["marginal/ums/500"])


def test_figure_index_and_selection(capsys):
    assert set(select_figures(["gr21"])) == {f for f in FIGURE_MODULES if f.startswith("gr21.")}
    assert set(select_figures(["gpr20"])) == {
        "gpr20.fig2a",
        "gpr20.fig2b",
        "gpr20.fig3",
        "gpr20.cor1_frontier",
    }
    assert select_figures(["gr21.fig2"]) == ["gr21.fig2"]
    with pytest.raises(ValueError, match="matches no figure"):
        select_figures(["gr99"])
    for fig_id in FIGURE_MODULES:
        mod = get_figure(fig_id)
        assert fig_id == mod.ID
        assert mod.CAPTION
        assert callable(mod.draw)
        assert callable(mod.compute)
    assert main(["figures", "--list"]) == 0
    assert "calcheck.figures.gr21.fig3" in capsys.readouterr().out


def test_figures_cli_and_html(tmp_path, capsys):
    out = tmp_path / "res" / "figures"
    assert (
        main(["figures", "gr21.fig1a", "gr21.fig2", "gr21.twin", "--reps", "3", "--out", str(out)])
        == 0
    )
    for name in ("gr21_fig1a.png", "gr21_fig2.pdf", "gr21_twin.png", "index.json", "index.html"):
        assert (out / name).is_file(), name
    index = json.loads((out / "index.json").read_text())
    assert [f["id"] for f in index["figures"]] == ["gr21.fig1a", "gr21.fig2", "gr21.twin"]
    page = (out / "index.html").read_text()
    assert "<img src='gr21_fig2.png'" in page
    assert "calcheck figures gr21.fig2" in page
    # After a run, the run's page shows the verdicts and the figures together.
    capsys.readouterr()
    assert (
        main(["run", "--checks", "gr21.cor1", "--reps", "200", "--out", str(tmp_path / "res")]) == 0
    )
    report = (tmp_path / "res" / "report.html").read_text()
    assert "gr21.cor1.control.wrong_bound" in report
    assert "figures/gr21_fig1a.png" in report


def test_figures_fail_only_when_a_finding_changes_status(tmp_path, monkeypatch, capsys):
    import json

    from calcheck.figures import findings

    record = tmp_path / "findings_status.json"
    monkeypatch.setattr(findings, "RECORD", record)
    argv = ["figures", "gr21.fig1a", "--out", str(tmp_path / "f")]
    assert main([*argv, "--record-findings"]) == 0
    recorded = json.loads(record.read_text())
    statuses = recorded["gr21.fig1a"]["statuses"]
    assert set(statuses.values()) == {"by construction"}
    assert main(argv) == 0  # unchanged: success
    claim = next(iter(statuses))
    statuses[claim] = "holds"
    record.write_text(json.dumps(recorded))
    capsys.readouterr()
    assert main(argv) == 1
    out = capsys.readouterr().out
    assert f"CHANGED gr21.fig1a: {claim}: recorded 'holds', now 'by construction'" in out
    # other repetitions answer another question: not compared
    assert main([*argv, "--reps", "7"]) == 0


def test_recorded_findings_that_do_not_hold_are_explained():
    """Every finding recorded as not holding (or not judgeable) carries its explanation."""
    import json

    from calcheck.figures.findings import NEEDS_EXPLANATION, RECORD, STATUSES

    recorded = json.loads(RECORD.read_text())
    missing = []
    for fig, entry in recorded.items():
        assert set(entry["statuses"].values()) <= set(STATUSES), fig
        for claim, st in entry["statuses"].items():
            if st in NEEDS_EXPLANATION and not entry.get("explanations", {}).get(claim):
                missing.append(f"{fig}: {claim}")
    assert not missing, "unexplained findings:\n" + "\n".join(missing)
