"""gr22 Figures 10 and 11 (App. G.1-G.2): Sierpinski and grid bins of the triangle."""

import numpy as np

from calcheck.figures.gr22 import fig10, fig11
from calcheck.figures.registry import UNAVAILABLE, select_figures


def test_fig10_sierpinski_counts_and_the_printed_typo():
    data = fig10.compute(None, seed=1)
    assert [len(data[f"q{q}/vertices"]) for q in (1, 2, 3)] == [4, 13, 40]
    found = fig10.findings(data)
    assert [f["holds"] for f in found] == [True, False, True, True, True]  # 14 is a typo
    assert "typo" in found[1]["explanation"]
    assert np.isclose(data["q3/area"].sum(), 1.0)
    assert len(fig10.draw(data).axes) == 4


def test_fig11_grid_bins_equal_areas():
    data = fig11.compute(None, seed=1)
    assert data["K4/vertices"].shape == (16, 3, 3)
    assert data["K5/vertices"].shape == (25, 3, 3)
    assert all(f["holds"] for f in fig11.findings(data))
    assert len(fig11.draw(data).axes) == 2


def test_fig10_fig11_are_listed_and_fig12_is_not():
    assert select_figures(["gr22.fig10", "gr22.fig11"]) == ["gr22.fig10", "gr22.fig11"]
    assert "gr22.fig10" not in UNAVAILABLE
    assert "COVTYPE" in UNAVAILABLE["gr22.fig12"]
