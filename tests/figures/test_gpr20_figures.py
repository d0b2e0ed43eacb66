"""gpr20 App. D.4 covariate-shift figures on a small setting."""

import numpy as np
import pytest

# ------------------------------------------------------------------ reference values


def test_covariate_shift_figure_small():
    pytest.importorskip("sklearn")
    from calcheck.figures.gpr20 import _shift, fig2a, fig2b, fig3

    small = {
        "train": 1500,
        "ratio": 300,
        "edges": 200,
        "estimates": 800,
        "test": 3000,
        "alt_source": 500,
        "alt_target": 500,
    }
    data = _shift.compute_shift(None, reps=2, seed=1, sizes=small, n_trees=10)
    again = _shift.compute_shift(None, reps=2, seed=1, sizes=small, n_trees=10)
    for m in _shift.METHODS:
        assert data[f"{m}/ece"].shape == (2,)
        assert data[f"{m}/mp"].shape == (2, 10)
        assert np.all((data[f"{m}/ece"] >= 0) & (data[f"{m}/ece"] <= 1))
        np.testing.assert_array_equal(data[f"{m}/ece"], again[f"{m}/ece"])
    for mod, k in ((fig2a, 1), (fig2b, 2), (fig3, 1)):
        assert mod.draw(data) is not None
        assert len(mod.findings(data)) == k
