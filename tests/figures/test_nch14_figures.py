"""nch14 figures: the AUC loss, Fig. 1-2, Tables 1-2 at small size; the unavailable Table 3."""

import numpy as np
import pytest

from calcheck.figures.nch14 import FIGURES, auc
from calcheck.figures.registry import UNAVAILABLE, select_figures


def test_auc_figure_findings_at_small_size():
    data = auc.compute(None, reps=5, seed=1)
    found = auc.findings(data)
    assert all(f["holds"] for f in found if f["holds"] is not None)
    assert found[-1]["holds"] is None  # finite n is reported, not judged
    assert len(auc.draw(data).axes) == 2


def test_table3_is_listed_as_unavailable_and_fig2_is_drawn():
    assert "KDD-98" in UNAVAILABLE["nch14.table3"]
    with pytest.raises(ValueError, match="KDD-98"):
        select_figures(["nch14.table3"])
    assert "nch14.fig2" in FIGURES
    assert "nch14.fig2" not in UNAVAILABLE


def test_stand_in_law_and_exact_quadratic_form():
    pytest.importorskip("sklearn")
    from sklearn.svm import SVC

    from calcheck.figures.nch14._circles import _quadratic_form, circles

    x, z = circles(4000, np.random.default_rng(0), factor=0.35, noise=0.0)
    r = np.hypot(x[:, 0], x[:, 1])
    assert np.allclose(r[z == 1], 0.35)
    assert np.allclose(r[z == 0], 1.0)
    assert abs(z.mean() - 0.5) < 0.03  # Bernoulli(1/2) labels
    x, z = circles(300, np.random.default_rng(1))
    model = SVC(kernel="poly", degree=2, gamma=0.5, coef0=0.0).fit(x, z)
    a, v, c = _quadratic_form(model)
    d = np.einsum("ij,jk,ik->i", x, a, x) + x @ v + c
    assert np.allclose(d, model.decision_function(x), atol=1e-10)


def test_tie_order_of_the_evaluation_by_hand():
    from calcheck.figures.nch14._circles import METRICS, run_metrics

    # 20 tied predictions 0.5, labels alternating: 10 bins of 2 hold one of each class in
    # the given order (ECE 0), but 2 of one class when listed class by class (ECE = 0.5).
    s, z = np.full(20, 0.5), np.tile([0, 1], 10)
    m = run_metrics(lambda p: p, s, z)
    ece = METRICS.index("ece")
    assert m.shape == (2, 5)
    assert m[0, ece] == 0.0
    assert m[1, ece] == 0.5
    assert m[1, METRICS.index("mce")] == 0.5
    assert m[0, METRICS.index("auc")] == m[1, METRICS.index("auc")] == 0.5


def test_judge_tolerance_by_hand():
    from calcheck.figures.nch14._judge import cell_findings, judge

    runs = np.array([[[0.10]], [[0.30]]])  # mean 0.2, sd 0.1414
    cells = judge(runs, runs, np.array([[0.6]]), paper_runs=1)
    tol = 2 * 0.1414214 * np.sqrt(1 + 1 / 2) + 0.005
    assert cells[0]["tol"] == pytest.approx(tol, rel=1e-6)
    assert not cells[0]["within"]
    found = cell_findings(cells, "T", ("m",), ("c",), {("m", "c"): "because"})
    assert found[1]["holds"] is False
    assert found[3]["explanation"].startswith("because")
    assert judge(runs, runs, np.array([[0.45]]), paper_runs=1)[0]["within"]


def test_tables_and_fig2_at_small_size():
    pytest.importorskip("sklearn")
    from calcheck.figures.nch14 import _standin, fig2, table1, table2

    d1 = table1.compute(None, reps=2, seed=1)
    assert d1["linear"].shape == d1["linear_byclass"].shape == (2, 5, 6)
    found = table1.findings(d1)
    assert found[0]["holds"] is None  # the side-by-side table
    assert all(f.get("explanation") for f in found if f["holds"] is False)
    assert next(f for f in found if "raise the AUC" in f["claim"])["holds"]
    assert next(f for f in found if "no degenerate" in f["claim"])["holds"]
    assert len(table1.draw(d1).axes) == 2
    d2 = table2.compute(None, reps=1, seed=1)
    assert d2["quadratic"].shape == (1, 3, 6)
    assert d2["linear_b10"].shape == (1, 3)
    assert all(f.get("explanation") for f in table2.findings(d2) if f["holds"] is False)
    assert len(table2.draw(d2).axes) == 4
    d3 = fig2.compute(None, seed=1)
    assert all(f["holds"] for f in fig2.findings(d3))
    assert fig2.draw(d3).axes
    value, means = _standin.criterion(0.35, 0.125, reps=1)
    assert 0 < value < 0.05
    assert means["linear"].shape == (5, 2)


def test_rates_study_runs_small_and_reports_without_judging():
    from calcheck.figures.nch14 import rates

    data = rates.compute(reps=5, seed=3)
    assert data["kde"].shape == (len(rates.N_VALUES), 5)
    found = rates.findings(data)
    assert {f["status"] for f in found} == {"reported"}
    slope = found[0]["value"]["slope"]
    assert -1.0 < slope < 0.0  # the KDE error falls with n
    # equal-frequency and equal-width errors are exact ECEs of fitted maps: in [0, 1]
    for key in ("uniform_logistic/ef/ece", "skewed_beta/ew/mce"):
        assert np.all((data[key] >= 0) & (data[key] <= 1))
    assert rates.draw(data) is not None
