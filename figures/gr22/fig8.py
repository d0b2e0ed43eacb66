"""gr22 Figure 8.

Focal-loss CIFAR-10 models, CW-ECE (ablation of Table 5), against the number of bins.
"""

from __future__ import annotations

from ._ablation import make

ID = "gr22.fig8"
CAPTION = (
    "Figure 8: focal-loss CIFAR-10 models, CW-ECE (ablation of Table 5); every method "
    "against B = 5..25 (estimation bins for continuous methods, HB bins per class for HB, "
    "unbinned)."
)
compute, draw, findings, cache_tasks = make(("focal_cifar10",), ("cw_ece",), "cwhb")
__all__ = ["CAPTION", "ID", "cache_tasks", "compute", "draw", "findings"]
