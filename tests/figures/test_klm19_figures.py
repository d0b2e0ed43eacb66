"""klm19 figures: the CIFAR-10 VGG16 loader, the unavailable Fig. 2(a), findings at small size."""

import numpy as np
import pytest

from calcheck.figures.data import default_data_dir, load_cifar10_vgg16
from calcheck.figures.klm19 import app_e, fig1, fig2b, fig3a, fig3b, fig4b
from calcheck.figures.klm19._common import plugin_rows
from calcheck.figures.registry import UNAVAILABLE, get_figure, select_figures
from calcheck.theory_checks.cli.main import main

VGG = default_data_dir() / "cifar10_vgg16_probs"
needs_vgg = pytest.mark.skipif(not VGG.is_dir(), reason=f"CIFAR-10 VGG16 data not at {VGG}")


@needs_vgg
def test_loader_matches_the_data_readme():
    probs, labels = load_cifar10_vgg16()
    assert probs.shape == (10000, 10)
    assert probs.dtype == np.float64
    assert (probs.argmax(axis=1) == labels).mean() == pytest.approx(0.9359)


def test_loader_error_names_the_file(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"test_probs\.npy"):
        load_cifar10_vgg16(tmp_path)


def test_figure_2a_is_listed_as_unavailable(capsys):
    assert "ImageNet" in UNAVAILABLE["klm19.fig2a"]
    with pytest.raises(ValueError, match="ImageNet"):
        select_figures(["klm19.fig2a"])
    with pytest.raises(ValueError, match="ImageNet"):
        get_figure("klm19.fig2a")
    assert main(["figures", "--list"]) == 0
    assert "klm19.fig2a  not available" in capsys.readouterr().out
    assert set(select_figures(["klm19"])) == {
        "klm19.fig1",
        "klm19.fig2b",
        "klm19.fig3a",
        "klm19.fig3b",
        "klm19.fig4a",
        "klm19.fig4b",
        "klm19.appE",
    }


def test_plugin_rows_merges_tied_outputs_by_hand():
    # bins 0 and 1 both output 0.5: one level set with labels (1, 0, 0, 1) -> CE 0;
    # bin 2 outputs 0.9 on labels (1, 1): (0.9 - 1)^2 with weight 2/6.
    values = np.array([[0.5, 0.5, 0.9]])
    bins = np.array([[0, 0, 1, 1, 2, 2]])
    labels = np.array([1.0, 0, 0, 1, 1, 1])
    ce, mse = plugin_rows(values, bins, labels)
    assert ce[0] == pytest.approx(2 / 6 * 0.01)
    assert mse[0] == pytest.approx((4 * 0.25 + 2 * 0.01) / 6)


def test_toy_and_synthetic_figures_at_small_size():
    data = fig1.compute(None, seed=3)
    assert all(f["holds"] for f in fig1.findings(data))
    assert len(fig1.draw(data).axes) == 3
    small = app_e.compute(None, reps=5, seed=1)
    found = {f["claim"]: f for f in app_e.findings(small)}
    assert found["fixed n, varying B: scaling-binning's squared CE is nearly constant"]["holds"]
    assert len(app_e.draw(small).axes) == 3


@needs_vgg
def test_cifar_figures_reproduce_the_stated_findings_at_small_size():
    d3 = fig3a.compute(None, reps=10, seed=2)
    assert d3["ce/sb"].shape == (10, len(fig3a.B_VALUES))
    lower = next(f for f in fig3a.findings(d3) if f["claim"].startswith("scaling-binning has"))
    assert lower["holds"]
    assert fig3b.findings(d3)[0]["value"]["gain"] > 0
    d4 = fig4b.compute(None, reps=5, seed=2)
    assert fig4b.findings(d4)[0]["holds"]  # debiased below plug-in at every n, B = 100
    d2 = fig2b.compute(None, reps=5, seed=2)
    assert np.all(d2["plugin/ce"] >= 0)
    for f in (fig2b, fig3a, fig3b, fig4b):
        assert f.draw(d2 if f is fig2b else d3 if f in (fig3a, fig3b) else d4).axes
