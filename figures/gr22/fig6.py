"""gr22 Figure 6.

Focal-loss CIFAR-10 models, TL-ECE and TL-MCE (ablation of Table 4), against the number of
bins.
"""

from __future__ import annotations

from ._ablation import make

ID = "gr22.fig6"
CAPTION = (
    "Figure 6: focal-loss CIFAR-10 models, TL-ECE and TL-MCE (ablation of Table 4); every "
    "method against B = 5..25 (estimation bins for continuous methods, HB bins per class "
    "for HB, unbinned)."
)
compute, draw, findings, cache_tasks = make(
    ("focal_cifar10",),
    (
        "tl_ece",
        "tl_mce",
    ),
    "tlhb",
)
__all__ = ["CAPTION", "ID", "cache_tasks", "compute", "draw", "findings"]
