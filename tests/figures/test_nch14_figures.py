"""nch14 figure: the AUC loss against B and n/B at small size; the unavailable Table 3."""

import pytest

from calcheck.figures.nch14 import auc
from calcheck.figures.registry import UNAVAILABLE, select_figures


def test_auc_figure_findings_at_small_size():
    data = auc.compute(None, reps=5, seed=1)
    found = auc.findings(data)
    assert all(f["holds"] for f in found if f["holds"] is not None)
    assert found[-1]["holds"] is None  # finite n is reported, not judged
    assert len(auc.draw(data).axes) == 2


def test_table3_is_listed_as_unavailable():
    assert "KDD-98" in UNAVAILABLE["nch14.table3"]
    with pytest.raises(ValueError, match="KDD-98"):
        select_figures(["nch14.table3"])


def test_tables_at_small_size():
    pytest.importorskip("sklearn")
    from calcheck.figures.nch14 import table1, table2

    d1 = table1.compute(None, reps=2, seed=1)
    assert d1["linear"].shape == (2, 5, 6)
    found = table1.findings(d1)
    assert found[0]["holds"] is None  # the side-by-side table
    assert next(f for f in found if "raise the AUC" in f["claim"])["holds"]
    assert len(table1.draw(d1).axes) == 2
    d2 = table2.compute(None, reps=2, seed=1)
    assert d2["quadratic"].shape == (2, 3, 6)
    assert len(table2.draw(d2).axes) == 2


def test_figure1_is_the_stated_schematic():
    from calcheck.figures.nch14 import fig1

    data = fig1.compute(None)
    assert all(f["holds"] for f in fig1.findings(data))
    assert fig1.draw(data).axes
