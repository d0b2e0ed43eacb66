"""gr22 CIFAR reproduction: Base columns of Tables 2-5 (3 decimals; shared/data/README.md
confirms them from the same files), the TS column and Fig. 1's stated numbers.
"""

import pytest

from calcheck.figures.data import default_data_dir, load_cifar_logits
from calcheck.simulations.calibrators import MulticlassTemperatureScaling, softmax, top_label
from calcheck.simulations.metrics import (
    plugin_classwise_ece,
    plugin_reliability_mce,
    plugin_top_label_errors,
)

CIFAR = default_data_dir() / "cifar_logits"


needs_cifar = pytest.mark.skipif(not CIFAR.is_dir(), reason=f"CIFAR logits not at {CIFAR}")


@needs_cifar
def test_cifar_base_columns_match_tables():
    """Base columns of Tables 2-5 to 3 decimals (TL-MCE: the reliability-diagram max)."""
    from calcheck.figures.gr22._cifar import PAPER

    for (table, metric), rows in PAPER.items():
        for (ds, arch), cols in rows.items():
            d = load_cifar_logits(ds, arch)
            p = softmax(d.test_logits)
            c, h = top_label(p)
            if metric == "tl_ece":
                got = plugin_top_label_errors(c, h, d.test_labels).tl_ece
            elif metric == "tl_mce":
                got = plugin_reliability_mce(c, h, d.test_labels)
            else:
                got = 100 * plugin_classwise_ece(p, d.test_labels)
            assert round(got, 2 if metric == "cw_ece" else 3) == pytest.approx(cols["base"]), (
                table,
                metric,
                ds,
                arch,
            )


@needs_cifar
def test_cifar_ts_column_matches_with_focal_calibration_rule():
    from calcheck.figures.gr22._cifar import PAPER

    for ds in ("cifar10", "focal_cifar10"):
        table = "table2" if ds == "cifar10" else "table4"
        for arch in ("resnet50", "wide_resnet"):
            d = load_cifar_logits(ds, arch)
            ts = MulticlassTemperatureScaling(objective="ece_grid")
            q = ts.fit(softmax(d.val_logits), d.val_labels).predict_proba(softmax(d.test_logits))
            c, h = top_label(q)
            got = plugin_top_label_errors(c, h, d.test_labels).tl_ece
            assert round(got, 3) == pytest.approx(PAPER[(table, "tl_ece")][(ds, arch)]["ts"])


@needs_cifar
def test_fig1_stated_numbers():
    from calcheck.figures.gr22 import fig1

    found = fig1.findings(fig1.compute())
    assert all(f["holds"] for f in found), found
