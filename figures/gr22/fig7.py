"""gr22 Figure 7.

Brier models, CW-ECE (ablation of Table 3), against the number of bins.
"""

from __future__ import annotations

from ._ablation import best_fraction, compute_for, draw_grid

ID = "gr22.fig7"
CAPTION = ("Figure 7: Brier models, CW-ECE (ablation of Table 3); every method against B = 5..25 "
           "(estimation bins for continuous methods, HB bins per class for HB, unbinned).")
DATASETS = ("cifar10", "cifar100", )
METRICS = ("cw_ece", )
METHODS = ("base", "ts", "vs", "ds", "nhb", "cwhb")
compute = compute_for(DATASETS)
__all__ = ["CAPTION", "ID", "compute", "draw", "findings"]


def draw(data):
    return draw_grid(data, [(ds, m) for ds in DATASETS for m in METRICS], METHODS)


def findings(data):
    out = []
    for ds in DATASETS:
        for m in METRICS:
            frac = best_fraction(data, ds, m, "cwhb", METHODS)
            near = best_fraction(data, ds, m, "cwhb", METHODS, slack=0.002)
            out.append({"claim": f"{ds} {m}: fraction of (architecture, B) where "
                                 f"cwhb is best / within 0.002 of the best",
                        "value": [frac, near], "holds": None})
    return out
