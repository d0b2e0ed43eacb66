"""gr22 Table 2.

TL-ECE and TL-MCE of Brier-loss models (CIFAR-10, CIFAR-100).
"""

from __future__ import annotations

from ._tables import make

ID = "gr22.table2"
CAPTION = (
    "Table 2: TL-ECE and TL-MCE of Brier-loss models (CIFAR-10, CIFAR-100); calibrated on "
    "val (n = 5000), evaluated on test (n = 10000), B = 15. Each cell: ours (paper); "
    "shading: |ours - paper| / tolerance."
)
compute, draw, findings, cache_tasks = make("table2", ("tl_ece", "tl_mce"))
__all__ = ["CAPTION", "ID", "cache_tasks", "compute", "draw", "findings"]
