"""gr22 Figure 6.

Focal-loss CIFAR-10 models, TL-ECE and TL-MCE (ablation of Table 4), against the number of
bins.
"""

from __future__ import annotations

from ._ablation import best_fraction, compute_for, draw_grid

ID = "gr22.fig6"
CAPTION = ("Figure 6: focal-loss CIFAR-10 models, TL-ECE and TL-MCE (ablation of Table 4); every "
           "method against B = 5..25 (estimation bins for continuous methods, HB bins per class "
           "for HB, unbinned).")
DATASETS = ("focal_cifar10", )
METRICS = ("tl_ece", "tl_mce", )
METHODS = ("base", "ts", "vs", "ds", "nhb", "tlhb")
compute = compute_for(DATASETS)
__all__ = ["CAPTION", "ID", "compute", "draw", "findings"]


def draw(data):
    return draw_grid(data, [(ds, m) for ds in DATASETS for m in METRICS], METHODS)


def findings(data):
    out = []
    for ds in DATASETS:
        for m in METRICS:
            frac = best_fraction(data, ds, m, "tlhb", METHODS)
            near = best_fraction(data, ds, m, "tlhb", METHODS, slack=0.002)
            out.append({"claim": f"{ds} {m}: fraction of (architecture, B) where "
                                 f"tlhb is best / within 0.002 of the best",
                        "value": [frac, near], "holds": None})
    return out
