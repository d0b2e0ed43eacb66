"""gr22 Figures 2 and 5-8: estimated ECE / MCE against the number of bins B = 5..25."""

from __future__ import annotations

import numpy as np

from ..data import CIFAR_MODELS
from ..plotting import new_figure
from ._cifar import ARCH_LABELS, BINS, METHOD_LABELS, compute_models

COLORS = {
    "base": "tab:grey",
    "ts": "tab:orange",
    "vs": "tab:green",
    "ds": "tab:purple",
    "nhb": "tab:brown",
    "tlhb": "tab:blue",
    "cwhb": "tab:red",
}
METRIC_LABELS = {"tl_ece": "TL-ECE", "tl_mce": "TL-MCE", "cw_ece": "CW-ECE", "conf_ece": "conf-ECE"}


def compute_for(datasets):
    def compute(cache_dir=None, *, seed=2022, data_root=None, **_):
        return compute_models(
            datasets, bins=BINS, seed=seed, cache_dir=cache_dir, data_root=data_root
        )

    return compute


def draw_grid(data, panels, methods, *, styles=None):
    """One row per (dataset, metric), one column per architecture, one line per method."""
    fig, axes = new_figure(len(CIFAR_MODELS), len(panels), width=3.3, height=2.6)
    for i, (ds, metric) in enumerate(panels):
        for j, arch in enumerate(CIFAR_MODELS):
            ax = axes[i, j]
            bins = data[f"{ds}/{arch}/bins"]
            for method in methods:
                for m, ls in (styles or {metric: "-"}).items():
                    ax.plot(
                        bins,
                        data[f"{ds}/{arch}/{method}/{m}"],
                        ls,
                        color=COLORS[method],
                        linewidth=1.2,
                        label=f"{METHOD_LABELS[method]} {METRIC_LABELS[m]}",
                    )
            ax.set_title(f"{ds} {ARCH_LABELS[arch]}", fontsize=8)
            ax.set_xlabel("number of bins B")
            ax.set_ylabel(METRIC_LABELS[metric] if styles is None else "estimated ECE")
    axes[0, 0].legend(fontsize=6)
    return fig


def best_fraction(data, ds, metric, method, rivals, *, slack=0.0):
    """Fraction of (architecture, B) where ``method`` is within ``slack`` of the best."""
    hits = total = 0
    for arch in CIFAR_MODELS:
        ours = data[f"{ds}/{arch}/{method}/{metric}"]
        best = np.min([data[f"{ds}/{arch}/{m}/{metric}"] for m in rivals], axis=0)
        hits += int(np.sum(ours <= best + slack))
        total += ours.size
    return hits / total


def make(datasets, metrics, hb):
    """Compute / draw / findings of one ablation figure (Figs. 5-8): every method vs B."""
    methods = ("base", "ts", "vs", "ds", "nhb", hb)

    def draw(data):
        return draw_grid(data, [(ds, m) for ds in datasets for m in metrics], methods)

    def findings(data):
        return [
            {
                "claim": f"{ds} {m}: fraction of (architecture, B) where {hb} is best / "
                f"within 0.002 of the best",
                "value": [
                    best_fraction(data, ds, m, hb, methods),
                    best_fraction(data, ds, m, hb, methods, slack=0.002),
                ],
                "holds": None,
            }
            for ds in datasets
            for m in metrics
        ]

    return compute_for(tuple(datasets)), draw, findings
