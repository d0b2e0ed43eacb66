"""gr22 Figure 5.

Brier models, TL-ECE and TL-MCE (ablation of Table 2), against the number of bins.
"""

from __future__ import annotations

from ._ablation import make

ID = "gr22.fig5"
CAPTION = (
    "Figure 5: Brier models, TL-ECE and TL-MCE (ablation of Table 2); every method against "
    "B = 5..25 (estimation bins for continuous methods, HB bins per class for HB, "
    "unbinned)."
)
compute, draw, findings, cache_tasks = make(
    (
        "cifar10",
        "cifar100",
    ),
    (
        "tl_ece",
        "tl_mce",
    ),
    "tlhb",
)
__all__ = ["CAPTION", "ID", "cache_tasks", "compute", "draw", "findings"]
