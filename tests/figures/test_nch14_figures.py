"""nch14 figure: the AUC loss against B and n/B at small size; the unavailable Table 3."""

import pytest

from figures.nch14 import auc
from figures.registry import UNAVAILABLE, select_figures


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
