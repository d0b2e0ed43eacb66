"""Validity-plot panels and findings shared by the CREDIT figures of gr21."""

from __future__ import annotations

import numpy as np

from ..data import data_file
from ..plotting import new_figure, validity_plot
from ._style import METHOD_STYLES, theorem4_curve
from .credit import credit_experiment

N_ALL = (500, 1000, 2000, 3000, 4000, 5000, 7000)


def compute_credit(cache_dir, *, reps=100, seed=2021, data_root=None, **_):
    """The CREDIT experiment at every n of Figs. 1(b), 3, 4 and 5 (one cached computation)."""
    path = data_file(data_root, "credit.csv")
    return credit_experiment(N_ALL, reps=reps, seed=seed, path=path, cache_dir=cache_dir)


AUC_RANGE = 0.1  # findings compare areas under the mean curves on eps in [0, 0.1]


def panels(data, n_values, methods, kinds, *, theory=True, n_bins=10, xmax=0.15, title=""):
    """A grid of validity plots: one row per kind (marginal / conditional), one column per n."""
    fig, axes = new_figure(len(n_values), len(kinds))
    eps = data["eps"]
    for i, kind in enumerate(kinds):
        for j, n in enumerate(n_values):
            ax = axes[i, j]
            for m in methods:
                style = METHOD_STYLES[m]
                validity_plot(
                    ax,
                    eps,
                    data[f"{kind}/{m}/{n}"],
                    color=style["color"],
                    label=style["label"],
                    conditional=kind == "conditional",
                )
            if theory:
                theorem4_curve(ax, eps, n, n_bins, conditional=kind == "conditional")
            ax.set_xlim(0, xmax)
            ax.set_title(f"{title}{kind}, n = {n:,}")
    axes[0, -1].legend(fontsize=7, loc="lower right")
    return fig


def auc(data, kind, method, n):
    eps = data["eps"]
    keep = eps <= AUC_RANGE + 1e-12
    v = data[f"{kind}/{method}/{n}"].mean(axis=0)[keep]
    return float(np.sum((v[1:] + v[:-1]) / 2 * np.diff(eps[keep])) / AUC_RANGE)


def value_at(data, kind, method, n, e):
    i = int(np.argmin(np.abs(data["eps"] - e)))
    return float(data[f"{kind}/{method}/{n}"].mean(axis=0)[i])


#: Why a CREDIT finding does not hold: measured in the figure gr21.credit_base.
EXPLAIN = {
    "isotonic": "on the rest of split C isotonic's l1 gap is UMD's at 3K (about 0.018) but "
    "stays there while UMD's shrinks to 0.013 at 7K, and its levels multiply (18 to 31), "
    "so a 5K test set estimates them with a growing standard error: its plug-in area falls "
    "below UMD's by more than 0.01 from 5K on (figure gr21.credit_base)",
    "fixed_width": "not explained (it held when the statuses were recorded)",
    "scaling_binning_double_dipped": "the Platt-scaled base model is miscalibrated within "
    "its deciles (top decile 0.54 predicted, 0.70 observed; deciles 5-8 about 0.2 predicted, "
    "0.13-0.15 observed); a second sigmoid cannot repair that, so scaling-binning's top bin "
    "stays 0.16 below the observed frequency at 3K and 7K and its pool l1 gap stays near "
    "0.057 while UMD's is 0.013-0.019 (figure gr21.credit_base)",
}


def credit_findings(data, n_values=N_ALL):
    """The qualitative CREDIT findings of gr21 §4, each with its numbers (holds or not)."""
    out = []
    rows = [
        (n, auc(data, "marginal", "randomized_umd", n), auc(data, "marginal", "ums", n))
        for n in n_values
    ]
    out.append(
        {
            "claim": "UMD above UMS at every n (mean marginal validity, area on [0, 0.1])",
            "value": {
                str(n): {"randomized_umd": round(a, 4), "ums": round(b, 4)} for n, a, b in rows
            },
            "holds": all(a > b for _, a, b in rows),
        }
    )
    for m in ("isotonic", "fixed_width"):
        per_n = {}
        ok = True
        for n in (1000, 3000, 5000, 7000):
            mm, mu = auc(data, "marginal", m, n), auc(data, "marginal", "randomized_umd", n)
            cm, cu = auc(data, "conditional", m, n), auc(data, "conditional", "randomized_umd", n)
            per_n[str(n)] = {
                "marginal": round(mm, 4),
                "marginal_umd": round(mu, 4),
                "conditional": round(cm, 4),
                "conditional_umd": round(cu, 4),
            }
            ok &= (mm >= mu - 0.01) and (cm < cu)
        out.append(
            {
                "claim": f"{m} good marginally (area within 0.01 of UMD or above) but worse "
                "conditionally (area below UMD's)",
                "value": per_n,
                "holds": ok,
                **({} if ok else {"explanation": EXPLAIN[m]}),
            }
        )
    sb = {
        str(n): {
            "scaling_binning_double_dipped": round(
                value_at(data, "marginal", "scaling_binning_double_dipped", n, e), 4
            ),
            "randomized_umd": round(value_at(data, "marginal", "randomized_umd", n, e), 4),
            "eps": e,
        }
        for n, e in ((3000, 0.07), (7000, 0.05))
    }
    out.append(
        {
            "claim": "scaling-binning competitive with UMD at n = 3K for eps > 0.05; UMD "
            "better at n = 7K (marginal V)",
            "value": sb,
            "holds": abs(sb["3000"]["scaling_binning_double_dipped"] - sb["3000"]["randomized_umd"])
            <= 0.05
            and sb["7000"]["randomized_umd"] >= sb["7000"]["scaling_binning_double_dipped"],
            "explanation": EXPLAIN["scaling_binning_double_dipped"],
        }
    )
    return out
