"""nch14, not a paper figure: the AUC loss of histogram binning against B and against n/B.

Theorem 3.4 bounds the loss by 1/(2B) as n/B -> infinity. Left: the exact limit (population
quantile bins, true rates) for the staircase law, where it is attained, and for smooth,
step and non-monotone laws, next to 1/(2B). Right: the exact loss of Zadrozny-Elkan
histogram binning fitted on n points, mean over repetitions, against n/B, for c(y) = y and
the staircase at B = 20: with few points per bin the loss exceeds 1/(2B) (ties and
misorderings of the bin rates), which an asymptotic statement allows.
"""

from __future__ import annotations

import numpy as np
from matplotlib.ticker import NullFormatter

from calcheck.simulations.experiments.nch14 import AucLossExperiment
from calcheck.simulations.laws import LAWS
from calcheck.simulations.laws.binary import staircase_law
from calcheck.simulations.metrics.auc import population_auc_loss
from calcheck.simulations.provenance import generator

from ..cache import cached
from ..plotting import new_figure

ID = "nch14.auc"
CAPTION = (
    "AUC loss of equal-frequency histogram binning (ties 1/2): left, the exact limit "
    "n/B -> infinity against B for the staircase (attains 1/(2B)) and smooth, step and sine "
    "laws; right, the exact loss of maps fitted on n points against n/B at B = 20 (mean "
    "over `reps` repetitions), next to 1/(2B) (Theorem 3.4; not a figure of the paper)."
)
B_VALUES = (2, 3, 5, 10, 20, 50)
LIMIT_LAWS = ("uniform_identity", "uniform_logistic", "skewed_beta", "uniform_step", "uniform_sine")
RATIOS = (2, 5, 10, 20, 50, 100, 300, 1000, 3000)


def compute(cache_dir, *, reps=100, seed=2021, data_root=None, **_):
    """Limits against B and finite-n losses against n/B."""

    def run():
        out = {"B": np.array(B_VALUES), "ratio": np.array(RATIOS)}
        out["limit/staircase"] = np.array(
            [population_auc_loss(staircase_law(b), b)[0] for b in B_VALUES]
        )
        for name in LIMIT_LAWS:
            out[f"limit/{name}"] = np.array(
                [population_auc_loss(LAWS[name], b)[0] for b in B_VALUES]
            )
        for name, law in (
            ("uniform_identity", LAWS["uniform_identity"]),
            ("staircase", staircase_law(20)),
        ):
            exp = AucLossExperiment(law, 20, tuple(20 * r for r in RATIOS))
            res = exp.simulate(generator(seed, "nch14.auc", name), reps)
            out[f"finite/{name}/mean"] = res.loss.mean(axis=0)
            out[f"finite/{name}/above"] = (res.loss > 1 / 40).mean(axis=0)
            out[f"finite/{name}/loss1_pos"] = (res.loss1 > 0).mean(axis=0)
        return out

    return cached("nch14-auc", {"reps": reps, "seed": seed}, run, cache_dir)


def findings(data):
    """Tightness in the limit, the finite-n excess, the gain on a non-monotone law."""
    bound = 1 / (2 * data["B"])
    stairs = data["limit/staircase"] / bound
    ident = data["finite/uniform_identity/mean"]
    return [
        {
            "claim": "in the limit the staircase attains 1/(2B) (catalog: 0.2496 / 0.0996 / "
            "0.0497 / 0.0242 at N = 10^6, B = 2, 5, 10, 20)",
            "value": {
                f"B={b}": round(float(v), 5)
                for b, v in zip(data["B"], data["limit/staircase"], strict=True)
            },
            "holds": bool(np.all((stairs > 0.99) & (stairs <= 1.0))),
        },
        {
            "claim": "every limit is <= 1/(2B)",
            "value": {
                name: round(float(np.max(data[f"limit/{name}"] / bound)), 4) for name in LIMIT_LAWS
            },
            "holds": bool(all(np.all(data[f"limit/{k}"] <= bound) for k in LIMIT_LAWS)),
            "explanation": "value: largest ratio loss / (1/(2B)) over B",
        },
        {
            "claim": "binning gains AUC on a non-monotone law (sine c)",
            "value": [round(float(v), 4) for v in data["limit/uniform_sine"]],
            "holds": bool(np.any(data["limit/uniform_sine"] < 0)),
        },
        {
            "claim": "Loss_1 <= 0 (pairs in different bins) with a frequency that tends to 1 "
            "as n/B grows (c(y) = y, B = 20)",
            "value": {
                f"n/B={r}": round(float(1 - v), 3)
                for r, v in zip(
                    data["ratio"], data["finite/uniform_identity/loss1_pos"], strict=True
                )
            },
            "holds": bool(
                data["finite/uniform_identity/loss1_pos"][-1]
                < data["finite/uniform_identity/loss1_pos"][0]
            ),
            "explanation": "value: fraction of fitted maps with Loss_1 <= 0; slow, since "
            "adjacent bin rates differ by about 1/B and their estimates by sqrt(B/n)",
        },
        {
            "claim": "finite n, c(y) = y, B = 20: mean loss above 1/(2B) = 0.025 at n/B = 5 "
            "(catalog at N = 100: 0.053), below it from n/B ~ 20",
            "value": {
                f"n/B={r}": round(float(v), 4) for r, v in zip(data["ratio"], ident, strict=True)
            },
            "holds": None,
            "explanation": "reported: Theorem 3.4 is asymptotic and says nothing at finite n",
        },
    ]


def draw(data):
    """Left: limits against B; right: finite-n mean loss against n/B (B = 20)."""
    fig, axes = new_figure(2)
    ax = axes[0, 0]
    b = data["B"]
    ax.loglog(b, 1 / (2 * b), "k--", label="1/(2B)")
    ax.loglog(b, data["limit/staircase"], "o-", color="tab:red", label="staircase")
    colors = ("tab:blue", "tab:orange", "tab:green", "tab:purple")
    for name, color in zip(LIMIT_LAWS[:-1], colors, strict=True):
        v = data[f"limit/{name}"]
        # a loss of 0 (the step law once no bin straddles the step; quadrature leaves ~1e-12)
        ax.loglog(
            b,
            np.where(v > 1e-9, v, np.nan),
            "o-",
            ms=3,
            color=color,
            label=name + (" (0 where absent)" if np.any(v <= 1e-9) else ""),
        )
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xticks(b, labels=[str(x) for x in b])
    ax.set_xlabel("bins B (sine law: a gain, not drawn)")
    ax.set_ylabel("AUC loss, limit n/B -> inf")
    ax.legend(fontsize=7)
    ax = axes[0, 1]
    r = data["ratio"]
    ax.axhline(1 / 40, color="k", ls="--", label="1/(2B), B = 20")
    for name, color in (("uniform_identity", "tab:blue"), ("staircase", "tab:red")):
        ax.semilogx(r, data[f"finite/{name}/mean"], "o-", color=color, label=name)
    ax.axhline(0, color="0.7", lw=0.8)
    ax.set_xlabel("points per bin n/B (B = 20)")
    ax.set_ylabel("mean AUC loss, fitted maps")
    ax.legend(fontsize=7)
    return fig
