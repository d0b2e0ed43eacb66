"""nch14 Figure 1: a hypothetical reliability curve (illustrative, no data).

The paper's Fig. 1 shows a calibration curve above the diagonal, with "about 0.57" observed
at predicted 0.5. calcheck draws the smooth curve ``c(p) = sigma(logit(p) + 0.28)``, which
passes through (0.5, 0.57) and lies above the diagonal on (0, 1): ours, illustrative.
"""

from __future__ import annotations

import numpy as np

from ..plotting import new_figure

ID = "nch14.fig1"
CAPTION = (
    "A hypothetical reliability curve (illustrative, as the paper's): observed frequency of "
    "Z = 1 against the predicted probability, c(0.5) = 0.57, above the diagonal (Fig. 1)."
)
_SHIFT = float(np.log(0.57 / 0.43))  # logit(0.57): the curve passes through (0.5, 0.57)


def compute(cache_dir, *, reps=100, seed=2021, data_root=None, **_):
    """The curve on a grid (no data, no randomness)."""
    p = np.linspace(0.001, 0.999, 400)
    return {"p": p, "c": 1.0 / (1.0 + np.exp(-(np.log(p / (1 - p)) + _SHIFT)))}


def findings(data):
    """The two stated features of the schematic."""
    c_half = float(np.interp(0.5, data["p"], data["c"]))
    return [
        {
            "claim": "at predicted 0.5 the outcome occurs in about 0.57 of the instances",
            "value": round(c_half, 3),
            "holds": bool(abs(c_half - 0.57) < 0.005),
        },
        {
            "claim": "the curve lies above the diagonal (probabilities too low)",
            "value": round(float(np.min(data["c"] - data["p"])), 4),
            "holds": bool(np.all(data["c"] > data["p"])),
        },
    ]


def draw(data):
    """The curve and the diagonal."""
    fig, axes = new_figure(1)
    ax = axes[0, 0]
    ax.plot(data["p"], data["c"], "k-", label="calibration curve")
    ax.plot([0, 1], [0, 1], "k:", label="ideal")
    ax.plot([0.5], [0.57], "o", color="tab:red")
    ax.set_xlabel("predicted probability")
    ax.set_ylabel("observed frequency of Z = 1")
    ax.legend(fontsize=8)
    return fig
