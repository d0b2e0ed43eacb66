"""gr22 Figure 7.

Brier models, CW-ECE (ablation of Table 3), against the number of bins.
"""

from __future__ import annotations

from ._ablation import make

ID = "gr22.fig7"
CAPTION = (
    "Figure 7: Brier models, CW-ECE (ablation of Table 3); every method against B = 5..25 "
    "(estimation bins for continuous methods, HB bins per class for HB, unbinned)."
)
compute, draw, findings, cache_tasks = make(
    (
        "cifar10",
        "cifar100",
    ),
    ("cw_ece",),
    "cwhb",
)
__all__ = ["CAPTION", "ID", "cache_tasks", "compute", "draw", "findings"]
