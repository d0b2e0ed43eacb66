"""gr22 Table 4.

TL-ECE and TL-MCE of focal-loss models (CIFAR-10; CIFAR-100 focal logits are not available).
"""

from __future__ import annotations

from ._tables import make

ID = "gr22.table4"
CAPTION = (
    "Table 4: TL-ECE and TL-MCE of focal-loss models (CIFAR-10; CIFAR-100 focal logits are "
    "not available); calibrated on val (n = 5000), evaluated on test (n = 10000), B = 15. "
    "Each cell: ours (paper); shading: |ours - paper| / tolerance."
)
compute, draw, findings, cache_tasks = make("table4", ("tl_ece", "tl_mce"))
__all__ = ["CAPTION", "ID", "cache_tasks", "compute", "draw", "findings"]
