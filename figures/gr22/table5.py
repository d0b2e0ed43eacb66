"""gr22 Table 5.

CW-ECE x 100 of focal-loss models (CIFAR-10 only; the paper's CIFAR-100 rows copy Table 3,).
"""

from __future__ import annotations

from ._tables import make

ID = "gr22.table5"
CAPTION = (
    "Table 5: CW-ECE x 100 of focal-loss models (CIFAR-10 only; the paper's CIFAR-100 rows "
    "copy Table 3); calibrated on val (n = 5000), evaluated on test (n = "
    "10000), B = 15. Each cell: ours (paper); shading: |ours - paper| / tolerance."
)
compute, draw, findings, cache_tasks = make("table5", ("cw_ece",))
__all__ = ["CAPTION", "ID", "cache_tasks", "compute", "draw", "findings"]
