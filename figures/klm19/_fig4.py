"""klm19 Figure 4: mean-squared error of the plug-in and debiased squared-CE estimators.

Sec. 5.1: the 10,000 CIFAR-10 test images are split into S_C (3,000: recalibrate and
discretise with marginal scaling-binning, B bins per class) and S_E (7,000: evaluation).
The reference E^2 is the plug-in squared marginal CE on all of S_E (itself an estimate,
slightly upward-biased, which favours the plug-in; catalog Sec. 9 item 15). For each n,
n points are drawn with replacement from S_E; the error of each estimate is its squared
deviation from the reference, averaged over resamples.
"""

from __future__ import annotations

import numpy as np

from calcheck.simulations.calibrators.scaling_binning import MarginalScalingBinning
from calcheck.simulations.metrics.binned import debiased_sq_ce, plugin_sq_ce
from calcheck.simulations.provenance import generator

from ..cache import cached
from ..plotting import new_figure
from ._common import load

N_VALUES = (2000, 3000, 4000, 5000, 6000, 7000)
ESTIMATORS = ("plugin", "debiased")


def compute_fig4(n_bins, cache_dir, *, reps=100, seed=2021, data_root=None):
    """Squared errors ``(10 reps, len(N_VALUES))`` of both estimators against the reference."""
    probs, labels = load(data_root)
    resamples = 10 * reps  # the paper: 1,000

    def run():
        rng = generator(seed, "klm19.fig4", n_bins)
        perm = rng.permutation(labels.size)
        cal, ev = perm[:3000], perm[3000:]
        model = MarginalScalingBinning(n_bins, split="none", loss="log").fit(
            probs[cal], labels[cal]
        )
        out_ev = model.predict_proba(probs[ev])
        classes = probs.shape[1]
        groups, values = [], []
        for k in range(classes):
            v, inv = np.unique(out_ev[:, k], return_inverse=True)
            groups.append(inv)
            values.append(v)
        y_ev = labels[ev]

        def estimate(idx):
            est = {e: np.zeros(idx.shape[0]) for e in ESTIMATORS}
            r = idx.shape[0]
            for k in range(classes):
                g = groups[k][idx]
                m = values[k].size
                flat = (g + m * np.arange(r)[:, None]).ravel()
                counts = np.bincount(flat, minlength=r * m).reshape(r, m)
                hits = (y_ev[idx] == k).astype(float).ravel()
                sums = np.bincount(flat, weights=hits, minlength=r * m).reshape(r, m)
                est["plugin"] += plugin_sq_ce(values[k], counts, sums) / classes
                est["debiased"] += debiased_sq_ce(values[k], counts, sums) / classes
            return est

        reference = float(estimate(np.arange(ev.size)[None])["plugin"][0])
        err = {e: np.zeros((resamples, len(N_VALUES))) for e in ESTIMATORS}
        for j, n in enumerate(N_VALUES):
            est = estimate(rng.integers(0, ev.size, size=(resamples, n)))
            for e in ESTIMATORS:
                err[e][:, j] = (est[e] - reference) ** 2
        return {"n": np.array(N_VALUES), "reference": np.array(reference), **err}

    return cached(
        f"klm19-fig4-B{n_bins}", {"reps": reps, "seed": seed, "n_bins": n_bins}, run, cache_dir
    )


def summary(data, estimator):
    """Mean squared error and its 90% half-width over resamples."""
    x = data[estimator]
    return x.mean(axis=0), 1.645 * x.std(axis=0, ddof=1) / np.sqrt(x.shape[0])


def findings_fig4(data, n_bins):
    """Sec. 5.1: the debiased estimator has lower MSE, especially at small n or large B."""
    pl, _ = summary(data, "plugin")
    db, _ = summary(data, "debiased")
    ratio = pl / db
    return [
        {
            "claim": f"B = {n_bins}: the debiased estimator has lower MSE at every n",
            "value": {"plugin / debiased MSE": [round(float(r), 2) for r in ratio]},
            "holds": bool(np.all(db < pl)),
        },
        {
            "claim": f"B = {n_bins}: the advantage is largest at small n",
            "value": {
                "ratio at n = 2000": round(float(ratio[0]), 2),
                "at n = 7000": round(float(ratio[-1]), 2),
            },
            "holds": bool(ratio[0] >= ratio[-1]),
        },
        {
            "claim": f"B = {n_bins}: reference squared marginal CE on S_E (7,000 points)",
            "value": float(data["reference"]),
            "holds": None,
        },
    ]


def draw_fig4(data, n_bins):
    """MSE of both estimators against n, 90% intervals."""
    fig, axes = new_figure(1)
    ax = axes[0, 0]
    for e, color in zip(ESTIMATORS, ("tab:red", "tab:blue"), strict=True):
        mean, half = summary(data, e)
        ax.errorbar(data["n"], mean, yerr=half, color=color, marker="o", ms=3, capsize=2, label=e)
    ax.set_yscale("log")
    ax.set_xlabel("evaluation points n")
    ax.set_ylabel("MSE of the squared-CE estimate")
    ax.set_title(f"B = {n_bins} bins per class", fontsize=9)
    ax.legend(fontsize=8)
    return fig


def panel(n_bins: int, letter: str):
    """``(CAPTION, compute, findings, draw)`` of Fig. 4(letter), B = ``n_bins``."""
    caption = (
        "Mean-squared error of the plug-in and debiased estimates of the squared marginal CE "
        f"of scaling-binning (B = {n_bins} per class, recalibrated on 3,000 CIFAR-10 points) "
        "against the number of evaluation points n, resampled with replacement from the "
        f"other 7,000 (10 x reps resamples; paper: 1,000); 90% intervals (Fig. 4({letter}))."
    )

    def compute(cache_dir, *, reps=100, seed=2021, data_root=None, **_):
        """Squared errors of both estimators at every n."""
        return compute_fig4(n_bins, cache_dir, reps=reps, seed=seed, data_root=data_root)

    def findings(data):
        """The paper's Sec. 5.1 statements with the numbers found."""
        return findings_fig4(data, n_bins)

    def draw(data):
        """MSE against n."""
        return draw_fig4(data, n_bins)

    return caption, compute, findings, draw
