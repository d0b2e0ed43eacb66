"""Why two gr21 CREDIT findings do not hold: the base model and the methods on the whole pool.

Not a figure of the paper: it explains Fig. 3. The Platt-scaled logistic model ``g`` of
Sec. 2.2 is calibrated on average but not within its deciles (its top decile predicts about
0.54 where 0.70 is observed, deciles 5-8 predict about 0.2 where 0.13-0.15 is observed). A
second sigmoid cannot repair a miscalibration that is not logistic, so scaling-binning (whose
bins average *scaled scores*) keeps a bias of about 0.16 in its top bin at every n, while
UMD's bins average *labels*. Isotonic regression is as close as UMD on the pool at n = 3K
(l1 gap about 0.018), but from 3K to 7K UMD's gap shrinks (to 0.013) while isotonic's
stays, and its levels multiply (18 to 31), so a 5K test set estimates them with a growing
standard error: its plug-in validity area (Fig. 3) falls 0.026-0.036 below UMD's at 5K-7K.

Each method is fitted on ``n`` points drawn from split C as in Fig. 3 and assessed on the rest
of C (10K-12K points): ``gap`` is the pool-weighted mean of |output - observed frequency| over
the method's output levels (the l1-ECE on the pool).
"""

from __future__ import annotations

import numpy as np

from calcheck.simulations.provenance import generator

from ..cache import cached
from ..data import credit_base_model, data_file, load_credit
from ..plotting import new_figure
from .credit import make_method

ID = "gr21.credit_base"
CAPTION = (
    "CREDIT (gr21 Sec. 2.2, explaining Fig. 3): (a) the Platt-scaled base model by decile "
    "of split C, mean prediction against observed frequency; (b) output levels of randomized "
    "UMD, double-dipped scaling-binning and isotonic regression (B = 10, n = 3K, first "
    "repetition) against the observed frequency on the rest of split C."
)
METHODS = ("randomized_umd", "scaling_binning_double_dipped", "isotonic")
N_VALUES = (3000, 7000)
REPS = 10
N_TEST = 5000


def _levels(pred, labels):
    vals, inv = np.unique(pred, return_inverse=True)
    count = np.bincount(inv)
    return vals, np.bincount(inv, weights=labels) / count, count


def _run(seed, path):
    x, y = load_credit(path)
    split = credit_base_model(x, y, rng=generator(seed, "gr21.credit.split"))
    s, t = split.pool_scores, split.pool_labels
    out = {}
    deciles = np.array_split(np.argsort(s, kind="stable"), 10)
    out["decile_pred"] = np.array([s[d].mean() for d in deciles])
    out["decile_obs"] = np.array([t[d].mean() for d in deciles])
    for n in N_VALUES:
        for name in METHODS:
            gap, top_pred, top_obs, levels, test_se = (np.empty(REPS) for _ in range(5))
            for r in range(REPS):
                rng = generator(seed, "gr21.credit_base", n, r)
                idx = rng.permutation(s.size)
                cal, rest = idx[:n], idx[n:]
                h = make_method(name, 10, rng).fit(s[cal], t[cal])
                pred = h.predict(s[rest], rng=rng)
                vals, obs, count = _levels(pred, t[rest])
                gap[r] = np.sum(count * np.abs(vals - obs)) / count.sum()
                top_pred[r], top_obs[r] = vals[-1], obs[-1]
                levels[r] = vals.size
                # standard error of a level's frequency estimated from a 5K test set, averaged
                # over test points: the noise of Fig. 3's plug-in validity
                m = np.bincount(np.searchsorted(vals, pred[:N_TEST]), minlength=vals.size)
                se = np.sqrt(obs * (1 - obs) / np.maximum(m, 1))
                test_se[r] = np.sum(m * se) / N_TEST
                if r == 0 and n == N_VALUES[0]:
                    out[f"levels/{name}/pred"], out[f"levels/{name}/obs"] = vals, obs
                    out[f"levels/{name}/count"] = count
            for key, v in (
                ("gap", gap),
                ("top_pred", top_pred),
                ("top_obs", top_obs),
                ("levels", levels),
                ("test_se", test_se),
            ):
                out[f"{key}/{name}/{n}"] = v
    return out


def compute(cache_dir=None, *, seed=2021, data_root=None, **_):
    """Base-model deciles and each method's levels on the pool (cached)."""
    path = data_file(data_root, "credit.csv")
    return cached(
        "gr21-credit-base",
        {"seed": seed, "data": str(path), "reps": REPS},
        lambda: _run(seed, path),
        cache_dir,
    )


def draw(data):
    """(a) base model by decile; (b) each method's levels at n = 3K against the pool."""
    fig, axes = new_figure(2, width=4.2, height=3.8)
    ax = axes[0, 0]
    ax.plot([0, 1], [0, 1], "k--", linewidth=0.8)
    ax.plot(data["decile_pred"], data["decile_obs"], "o-", color="tab:grey", label="base g")
    ax.set_xlabel("mean prediction in decile")
    ax.set_ylabel("observed frequency")
    ax.set_title("(a) Platt-scaled base model, deciles of split C", fontsize=9)
    ax.set_xlim(0, 0.8)
    ax.set_ylim(0, 0.8)
    ax.legend(fontsize=7)
    ax = axes[0, 1]
    ax.plot([0, 1], [0, 1], "k--", linewidth=0.8)
    for name, color, marker in zip(
        METHODS, ("tab:blue", "tab:purple", "tab:green"), "osD", strict=True
    ):
        n = N_VALUES[0]
        gap = float(np.mean(data[f"gap/{name}/{n}"]))
        ax.scatter(
            data[f"levels/{name}/pred"],
            data[f"levels/{name}/obs"],
            s=8 + 60 * data[f"levels/{name}/count"] / data[f"levels/{name}/count"].max(),
            color=color,
            marker=marker,
            alpha=0.8,
            label=f"{name.replace('_', ' ')} (pool l1 gap {gap:.3f})",
        )
    ax.set_xlabel("output level")
    ax.set_ylabel("observed frequency on the rest of split C")
    ax.set_title(f"(b) levels at n = {N_VALUES[0]:,} (marker area = points)", fontsize=9)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.legend(fontsize=6, loc="upper left")
    return fig


def findings(data):
    """What explains the two Fig. 3 findings that do not hold (each a test that can fail)."""
    gap = {(m, n): float(np.mean(data[f"gap/{m}/{n}"])) for m in METHODS for n in N_VALUES}
    top = {
        n: (
            float(np.mean(data[f"top_pred/scaling_binning_double_dipped/{n}"])),
            float(np.mean(data[f"top_obs/scaling_binning_double_dipped/{n}"])),
        )
        for n in N_VALUES
    }
    base_top = (float(data["decile_pred"][-1]), float(data["decile_obs"][-1]))
    test_se = {
        (m, n): float(np.mean(data[f"test_se/{m}/{n}"]))
        for m in ("isotonic", "randomized_umd")
        for n in N_VALUES
    }
    return [
        {
            "claim": "the base model is miscalibrated within its top decile (observed - "
            "predicted > 0.1)",
            "value": base_top,
            "holds": base_top[1] - base_top[0] > 0.1,
        },
        {
            "claim": "scaling-binning keeps a top-bin bias > 0.1 at n = 3K and 7K (a sigmoid "
            "refit cannot repair it), while UMD's pool gap is below 0.02",
            "value": {"top (pred, obs)": top, "pool gap": {str(k): v for k, v in gap.items()}},
            "holds": all(o - p > 0.1 for p, o in top.values())
            and all(gap[("randomized_umd", n)] < 0.02 for n in N_VALUES),
        },
        {
            "claim": "from n = 3K to 7K, UMD's pool gap shrinks (by more than 0.003) while "
            "isotonic's does not, and a 5K test set estimates isotonic's levels with a "
            "growing standard error (more levels)",
            "value": {
                "pool gap": {str(k): v for k, v in gap.items() if k[0] != METHODS[1]},
                "test-set standard error": {str(k): v for k, v in test_se.items()},
            },
            "holds": gap[("randomized_umd", 3000)] - gap[("randomized_umd", 7000)] > 0.003
            and gap[("isotonic", 3000)] - gap[("isotonic", 7000)] <= 0.003
            and test_se[("isotonic", 7000)] > test_se[("isotonic", 3000)],
        },
    ]


__all__ = ["CAPTION", "ID", "compute", "draw", "findings"]
