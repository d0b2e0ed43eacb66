"""gr22 Figure 1: confidence vs top-label reliability diagram, ResNet-50 on CIFAR-10."""

from __future__ import annotations

import numpy as np

from calcheck.simulations.calibrators import softmax, top_label
from calcheck.simulations.metrics import top_label_reliability

from ..data import data_file, load_cifar_logits
from ..plotting import new_figure

ID = "gr22.fig1"
CAPTION = (
    "Figure 1 (Sec. 2.1): ResNet-50 (Brier loss) on the CIFAR-10 test set, 10 "
    "equal-width bins. Stars: confidence reliability diagram (conf_b, acc_b); plus "
    "signs: top-label diagram (conf_b, conf_b +- Delta_b), Delta_b the class-weighted "
    "mean of |acc_{b,l} - conf_{b,l}|; bars: fraction of points per bin. Right: "
    "per-class (confidence, accuracy) in bins 6 [0.5, 0.6) and 10 [0.9, 1]."
)
N_BINS = 10
__all__ = ["CAPTION", "ID", "compute", "draw", "findings"]


def compute(cache_dir=None, *, data_root=None, **_):
    """Compute (or read from the cache) the figure's data."""
    d = load_cifar_logits("cifar10", "resnet50", data_file(data_root, "cifar_logits"))
    c, h = top_label(softmax(d.test_logits))
    y = d.test_labels
    out = {f"rel/{k}": v for k, v in top_label_reliability(c, h, y, n_bins=N_BINS).items()}
    b = np.minimum((h * N_BINS).astype(int), N_BINS - 1)
    for j in (5, 9):
        rows = []
        for lab in range(10):
            m = (b == j) & (c == lab)
            if m.any():
                rows.append((lab, h[m].mean(), (y[m] == lab).mean(), m.sum()))
        out[f"bin{j + 1}"] = np.array(rows, dtype=float)
    return out


def findings(data):
    """The paper's stated findings with the numbers found and whether they hold."""
    frac = dict(zip(data["rel/bin"].astype(int), data["rel/fraction"], strict=True))
    conf = dict(zip(data["rel/bin"].astype(int), data["rel/conf"], strict=True))
    acc = dict(zip(data["rel/bin"].astype(int), data["rel/acc"], strict=True))
    b6, b10 = data["bin6"], data["bin10"]
    # The paper numbers classes from 1: its class l is 0-based label l - 1.
    cls1 = b6[b6[:, 0] == 0]
    cls8 = b6[b6[:, 0] == 7]
    cls4 = b10[b10[:, 0] == 3]
    return [
        {
            "claim": "nearly 92% of points in bin [0.9, 1]",
            "value": float(frac.get(9, 0)),
            "holds": bool(abs(frac.get(9, 0) - 0.92) < 0.01),
        },
        {
            "claim": "no points in bin [0, 0.1)",
            "value": float(frac.get(0, 0)),
            "holds": 0 not in frac,
        },
        {
            "claim": "bin 6 overall confidence 0.545",
            "value": float(conf.get(5, np.nan)),
            "holds": bool(abs(conf.get(5, np.nan) - 0.545) < 0.005),
        },
        {
            "claim": "bin 6: accuracy about 0.2 when class 1 (label 0) is predicted",
            "value": float(cls1[0, 2]) if cls1.size else float("nan"),
            "holds": bool(cls1.size and abs(cls1[0, 2] - 0.2) < 0.05),
        },
        {
            "claim": "bin 6: accuracy about 0.9 when class 8 (label 7) is predicted",
            "value": float(cls8[0, 2]) if cls8.size else float("nan"),
            "holds": bool(cls8.size and abs(cls8[0, 2] - 0.9) < 0.05),
        },
        {
            "claim": "bin 10: confidence miscalibration about 0.01",
            "value": float(abs(acc.get(9) - conf.get(9))),
            "holds": bool(abs(abs(acc.get(9) - conf.get(9)) - 0.01) < 0.005),
        },
        {
            "claim": "bin 10: class 4 (label 3) predicted for about 8% of points, "
            "miscalibration about 0.05",
            "value": float(abs(cls4[0, 2] - cls4[0, 1])) if cls4.size else 0.0,
            "holds": bool(
                cls4.size
                and abs(abs(cls4[0, 2] - cls4[0, 1]) - 0.05) < 0.01
                and abs(cls4[0, 3] / 10000 - 0.08) < 0.01
            ),
        },
    ]


def draw(data):
    """Draw the figure from computed data; returns a matplotlib Figure."""
    fig, axes = new_figure(2, width=4.6)
    ax, bx = axes[0, 0], axes[0, 1]
    conf, acc, gap = data["rel/conf"], data["rel/acc"], data["rel/tl_gap"]
    ax.plot([0, 1], [0, 1], color="grey", linewidth=0.8, linestyle=":")
    ax.plot(conf, acc, "*", color="tab:blue", markersize=9, label="confidence (acc_b)")
    ax.plot(
        conf,
        np.where(acc > conf, conf + gap, conf - gap),
        "+",
        color="tab:red",
        markersize=10,
        mew=2,
        label="top-label (conf_b +- Delta_b)",
    )
    twin = ax.twinx()
    twin.bar(
        (data["rel/bin"] + 0.5) / N_BINS, data["rel/fraction"], width=0.09, alpha=0.25, color="grey"
    )
    twin.set_ylim(0, 1)
    twin.set_ylabel("fraction of test points")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("confidence h(x)")
    ax.set_ylabel("accuracy")
    ax.legend(loc="upper left", fontsize=7)
    bx.plot([0.4, 1], [0.4, 1], color="grey", linewidth=0.8, linestyle=":")
    for key, marker in (("bin6", "o"), ("bin10", "s")):
        rows = data[key]
        sc = bx.scatter(
            rows[:, 1],
            rows[:, 2],
            c=rows[:, 0],
            cmap="tab10",
            vmin=0,
            vmax=9,
            marker=marker,
            s=12 + 200 * rows[:, 3] / rows[:, 3].sum(),
            label=f"{key[:3]} {key[3:]}",
        )
        for lab, x, yv, _ in rows:
            bx.annotate(
                str(int(lab)), (x, yv), fontsize=6, xytext=(2, 2), textcoords="offset points"
            )
    fig.colorbar(sc, ax=bx, label="predicted label (0-based; paper class = label + 1)")
    bx.set_xlabel("mean confidence of the class in the bin")
    bx.set_ylabel("accuracy of the class in the bin")
    bx.legend(fontsize=7)
    return fig
