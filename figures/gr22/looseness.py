"""How loose is gr22 Theorem 1? eps_1 and eps_2 beside the smallest certified eps.

TL-HB (Algorithm 8) runs randomized UMD on each predicted class with ``B_l = floor(n_l / k)``
bins. Given the class counts and the edges, each bin's inner label sum is Bin(m_b, Pi_b)
whatever the law (gr21 Lemma 2, class by class), so coverage is bounded below over every law
with those class counts by the worst Pi_b in each bin
(:mod:`calcheck.simulations.certified_coverage`). Marginal: eps_1 (eq. 8) against the
certified per-class marginal radius (the proof's per-class statement). Conditional: eps_2
(eq. 9, n the total) against the certified radius for L = 5 classes of n_l points each.

Gupta, C. and Ramdas, A. (2022). Top-label calibration and multiclass-to-binary reductions.
ICLR. Algorithm 8, Theorem 1 (eqs. 8-9).
"""

from __future__ import annotations

import numpy as np
from matplotlib.ticker import NullLocator

from calcheck.bounds import gr22
from calcheck.simulations.certified_coverage import (
    certified_bins,
    certified_coverage,
    certified_layout,
    smallest_certified_eps,
    smallest_layout_eps,
)
from calcheck.simulations.exact_coverage import looseness_grid

from ..plotting import new_figure

ID = "gr22.looseness"
CAPTION = (
    "How loose is Theorem 1 of TL-HB over every law with these class counts (certified: "
    "Lemma 2's binomial bins at their worst bias, computed exactly). "
    "Points per bin k = n_l / B_l for n_l in {1K, 3K, 10K} points per class and B_l in "
    "{5, 10, 20} bins. Left: eps_1 (eq. 8) beside the smallest eps whose certified per-class "
    "marginal coverage reaches 1 - alpha. Right: eps_2 (eq. 9, n = 5 n_l) beside the "
    "certified conditional radius of L = 5 classes. Bottom: the ratios (alpha = 0.05, "
    "0.1); a valid bound has ratio >= 1."
)
N_VALUES = (1000, 3000, 10_000)  # points per class n_l
BINS = (5, 10, 20)  # bins per class B_l, i.e. k = n_l // B_l
ALPHAS = (0.05, 0.1)
N_CLASSES = 5


def _marginal_eps(n_l, b, a):
    return gr22.thm1_marginal_eps(n_l // b, a)


def _conditional_eps(n_l, b, a):
    return gr22.thm1_conditional_eps(N_CLASSES * n_l, n_l // b, a)


def _bins_per_class(n_l, b):
    return n_l // (n_l // b)  # B_l = floor(n_l / k), k = floor(n_l / B)


def _classes(n_l, b):
    """The bins of L classes of n_l points each, side by side (given the class counts)."""
    return certified_bins(n_l, _bins_per_class(n_l, b)) * N_CLASSES


def _certified_marginal(n_l, b, a):
    # TL-HB runs randomized UMD per class (delta -> 0): every bin its own output
    return smallest_certified_eps(n_l, _bins_per_class(n_l, b), a, event="marginal", pooled=False)


def _certified_conditional(n_l, b, a):
    return smallest_layout_eps(_classes(n_l, b), 1.0 - a)


def _failure_marginal(n_l, b, a):
    eps = _marginal_eps(n_l, b, a)
    k = _bins_per_class(n_l, b)
    return 1.0 - certified_coverage(n_l, k, eps, event="marginal", pooled=False).value


def _failure_conditional(n_l, b, a):
    return 1.0 - certified_layout(_classes(n_l, b), _conditional_eps(n_l, b, a)).value


#: key -> (title, theorem eps, certified eps, worst failure at the theorem's eps)
THEOREMS = {
    "thm1_marginal": (
        "Theorem 1, marginal eps_1 (eq. 8), per class",
        _marginal_eps,
        _certified_marginal,
        _failure_marginal,
    ),
    "thm1_conditional": (
        "Theorem 1, conditional eps_2 (eq. 9), L = 5",
        _conditional_eps,
        _certified_conditional,
        _failure_conditional,
    ),
}
_STYLES = {0.05: ("-", "o"), 0.1: (":", "s")}


def compute(cache_dir=None, **_):
    """Theorem eps, certified eps, ratio and worst failure at the theorem's eps, per (n_l, B_l)."""
    out = {"n_values": np.array(N_VALUES), "bins": np.array(BINS), "alphas": np.array(ALPHAS)}
    out["k"] = np.array([[n // b for b in BINS] for n in N_VALUES])
    for key, (_, bound, certified, failure) in THEOREMS.items():
        for name, values in looseness_grid(bound, certified, N_VALUES, BINS, ALPHAS).items():
            out[f"{key}/{'certified' if name == 'exact' else name}"] = values
        out[f"{key}/failure"] = looseness_grid(failure, failure, N_VALUES, BINS, ALPHAS)["theorem"]
    return out


def findings(data):
    """Per statement: every ratio >= 1 (a real test), the ratio range and the true failure."""
    found = []
    for key, (title, *_) in THEOREMS.items():
        ratio, failure = data[f"{key}/ratio"], data[f"{key}/failure"]
        found += [
            {
                "claim": f"{title}: the smallest eps certified for every law never exceeds "
                "the theorem's (every ratio >= 1)",
                "value": float(ratio.min()),
                "holds": bool(np.all(ratio >= 1.0)),
            },
            {
                "claim": f"{title}: ratio theorem eps / certified eps over n_l in {N_VALUES}, "
                f"B_l in {BINS}, alpha in {ALPHAS}",
                "value": {"min": round(float(ratio.min()), 4), "max": round(float(ratio.max()), 4)},
                "status": "reported",
            },
            {
                "claim": f"{title}: largest failure probability over every law at the "
                "theorem's eps "
                f"(alpha = {ALPHAS[0]}, {ALPHAS[1]})",
                "value": {
                    str(a): [round(float(f(failure[..., i])), 5) for f in (np.min, np.max)]
                    for i, a in enumerate(ALPHAS)
                },
                "status": "reported",
            },
        ]
    return found


def draw(data):
    """Top: eps against k (alpha = 0.1); bottom: the ratio against k for both alphas."""
    fig, axes = new_figure(ncols=len(THEOREMS), nrows=2, width=4.6, height=3.4)
    k = data["k"].ravel()
    order = np.argsort(k)
    k_sorted = k[order]
    i01 = list(data["alphas"]).index(0.1)
    for col, (key, (title, *_)) in enumerate(THEOREMS.items()):
        top, bottom = axes[0, col], axes[1, col]
        theorem = data[f"{key}/theorem"][..., i01].ravel()[order]
        certified = data[f"{key}/certified"][..., i01].ravel()[order]
        top.plot(k_sorted, theorem, "-o", color="tab:red", label="theorem")
        top.plot(k_sorted, certified, "--^", color="black", label="certified (smallest eps)")
        for i, a in enumerate(data["alphas"]):
            ls, mk = _STYLES[float(a)]
            r = data[f"{key}/ratio"][..., i].ravel()[order]
            bottom.plot(k_sorted, r, linestyle=ls, marker=mk, color="tab:red", label=f"alpha={a:g}")
        top.set_title(title, fontsize=9)
        top.set_yscale("log")
        top.set_ylabel(r"$\varepsilon$ reaching $1-\alpha$ ($\alpha$ = 0.1)")
        bottom.axhline(1.0, color="black", linewidth=0.8)
        bottom.set_ylim(0.9, max(1.8, float(np.max(data[f"{key}/ratio"])) * 1.08))
        bottom.set_ylabel(r"theorem $\varepsilon$ / certified $\varepsilon$")
        for ax in (top, bottom):
            ax.set_xscale("log")
            ax.set_xlabel("points per bin k = n_l / B_l")
            ax.xaxis.set_minor_locator(NullLocator())
            ticks = np.unique(k_sorted)
            ax.set_xticks(ticks, [str(v) for v in ticks], fontsize=7, rotation=45)
            ax.legend(fontsize=7)
    return fig
