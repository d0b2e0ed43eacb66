"""Synthetic twin of the gr21 validity plots: exact V next to its plug-in estimate.

On a law with exact ground truth, randomized UMD (B = 10) at n = 3K and 7K: the exact
validity curve (mean over replicates of the exact V of each fitted map) against the plug-in
estimate from a 5K test sample (gr21 eq. (6)), with the Theorem 4 curve. The plug-in curve
lies below the exact one: this is why the paper's
plug-in plots can cross the theory curve.
"""

from __future__ import annotations

import numpy as np

from calcheck.simulations.calibrators import RandomizedUniformMassBinning
from calcheck.simulations.laws import BinaryLaw, ConditionalMean, ScoreLaw
from calcheck.simulations.metrics import (
    exact_bin_errors,
    marginal_validity,
    plugin_conditional_validity,
    plugin_validity,
)
from calcheck.simulations.provenance import generator

from ..cache import cached
from ..plotting import new_figure, validity_plot
from ._style import METHOD_STYLES, theorem4_curve

ID = "gr21.twin"
CAPTION = (
    "Synthetic twin: randomized UMD (B = 10) on scores ~ Beta(2, 5) with a Platt-curve "
    "eta (slope 1.5, intercept -0.3), n = 3K and 7K. Exact marginal and conditional "
    "validity (known law) against the plug-in estimates from 5K test points, with the "
    "Theorem 4 curve; the plug-in curves lie below the exact ones."
)
LAW = BinaryLaw(
    ScoreLaw(2.0, 5.0),
    ConditionalMean("logistic", {"slope": 1.5, "intercept": -0.3}),
    name="beta25_platt",
)
N_VALUES = (3000, 7000)
EPS = np.round(np.arange(0, 0.2 + 1e-9, 0.001), 3)


def _run(reps, n_test, seed):
    out = {"eps": EPS}
    for n in N_VALUES:
        exact_m, exact_c = np.empty((reps, EPS.size)), np.empty((reps, EPS.size))
        plug_m, plug_c = np.empty_like(exact_m), np.empty_like(exact_m)
        for r in range(reps):
            rng = generator(seed, "gr21.twin", n, r)
            s, y = LAW.sample(n, rng)
            h = RandomizedUniformMassBinning(10, rng=rng).fit(s, y)
            err = exact_bin_errors(h.batch_, LAW)
            exact_m[r] = marginal_validity(err.error, err.mass, EPS)[0]
            exact_c[r] = (np.nanmax(err.error) <= EPS).astype(float)
            ts, ty = LAW.sample(n_test, rng)
            pred = h.predict(ts, rng=rng)
            plug_m[r] = plugin_validity(pred, ty, EPS)
            plug_c[r] = plugin_conditional_validity(pred, ty, EPS)
        out |= {
            f"marginal/exact/{n}": exact_m,
            f"marginal/plugin/{n}": plug_m,
            f"conditional/exact/{n}": exact_c,
            f"conditional/plugin/{n}": plug_c,
        }
    return out


def compute(cache_dir, *, reps=100, seed=2021, n_test=5000, **_):
    """Compute (or read from the cache) the figure's data."""
    params = {"reps": reps, "seed": seed, "n_test": n_test, "law": LAW.spec()}
    return cached("gr21-twin", params, lambda: _run(reps, n_test, seed), cache_dir)


def findings(data):
    """The paper's stated findings with the numbers found and whether they hold."""
    out = []
    for n in N_VALUES:
        gap = data[f"marginal/exact/{n}"].mean(0) - data[f"marginal/plugin/{n}"].mean(0)
        i = int(np.argmin(np.abs(data["eps"] - 0.05)))
        exact = float(data[f"marginal/exact/{n}"].mean(0)[i])
        plugin = float(data[f"marginal/plugin/{n}"].mean(0)[i])
        out.append(
            {
                "claim": f"n = {n}: plug-in V(eps) below exact V(eps) on average "
                "(the plug-in estimate is biased downwards, Sec. 2.1)",
                "value": {
                    "exact_V(0.05)": round(exact, 4),
                    "plugin_V(0.05)": round(plugin, 4),
                    "mean_gap_over_eps": round(float(gap.mean()), 4),
                },
                "holds": bool(gap.mean() > 0),
            }
        )
    return out


def draw(data):
    """Draw the figure from computed data; returns a matplotlib Figure."""
    fig, axes = new_figure(len(N_VALUES), 2)
    for i, kind in enumerate(("marginal", "conditional")):
        for j, n in enumerate(N_VALUES):
            ax = axes[i, j]
            for src in ("exact", "plugin"):
                st = METHOD_STYLES[src]
                validity_plot(
                    ax,
                    data["eps"],
                    data[f"{kind}/{src}/{n}"],
                    color=st["color"],
                    label=st["label"],
                    conditional=kind == "conditional",
                )
            theorem4_curve(ax, data["eps"], n, 10, conditional=kind == "conditional")
            ax.set_xlim(0, 0.12)
            ax.set_title(f"{kind}, n = {n:,}")
    axes[0, -1].legend(fontsize=7, loc="lower right")
    return fig
