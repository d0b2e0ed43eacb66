"""How loose is gr22 Theorem 1? eps_1 and eps_2 beside the exact smallest eps at eta = 1/2.

TL-HB (Algorithm 8) runs randomized UMD on each predicted class with ``B_l = floor(n_l / k)``
bins. With ``P(Y = c(X) | X) = 1/2`` (the law ``tl_balanced_half``: Bernoulli(1/2) in every
bin) the bin label sums are independent binomials, so coverage is exact
(:mod:`calcheck.simulations.exact_coverage`). Marginal: eps_1 (eq. 8) against the exact per-class
marginal radius (the proof's per-class statement). Conditional: eps_2 (eq. 9, n the total)
against the exact radius for L = 5 equally likely classes of n_l points each.

Gupta, C. and Ramdas, A. (2022). Top-label calibration and multiclass-to-binary reductions.
ICLR. Algorithm 8, Theorem 1 (eqs. 8-9).
"""

from __future__ import annotations

import numpy as np
from matplotlib.ticker import NullLocator

from calcheck.bounds import gr22
from calcheck.simulations.exact_coverage import (
    exact_coverage,
    looseness_grid,
    smallest_exact_eps,
)
from calcheck.simulations.exact_top_label import smallest_top_label_eps, top_label_exact_coverage

from ..plotting import new_figure

ID = "gr22.looseness"
CAPTION = (
    "How loose is Theorem 1 of TL-HB (eta = 1/2 in every class; exact binomial computation). "
    "Points per bin k = n_l / B_l for n_l in {1K, 3K, 10K} points per class and B_l in "
    "{5, 10, 20} bins. Left: eps_1 (eq. 8) beside the smallest eps whose exact per-class "
    "marginal coverage reaches 1 - alpha. Right: eps_2 (eq. 9, n = 5 n_l) beside the exact "
    "conditional radius of L = 5 equally likely classes. Bottom: the ratios (alpha = 0.05, "
    "0.1); a valid bound has ratio >= 1."
)
N_VALUES = (1000, 3000, 10_000)  # points per class n_l
BINS = (5, 10, 20)  # bins per class B_l, i.e. k = n_l // B_l
ALPHAS = (0.05, 0.1)
ETA = 0.5
N_CLASSES = 5


def _marginal_eps(n_l, b, a):
    return gr22.thm1_marginal_eps(n_l // b, a)


def _conditional_eps(n_l, b, a):
    return gr22.thm1_conditional_eps(N_CLASSES * n_l, n_l // b, a)


def _layout(n_l, b):
    k = n_l // b
    return [n_l] * N_CLASSES, [n_l // k] * N_CLASSES, [1.0 / N_CLASSES] * N_CLASSES


def _exact_marginal(n_l, b, a):
    return smallest_exact_eps(n_l, n_l // (n_l // b), ETA, a, event="marginal")


def _exact_conditional(n_l, b, a):
    return smallest_top_label_eps(*_layout(n_l, b), ETA, a)


def _failure_marginal(n_l, b, a):
    eps = _marginal_eps(n_l, b, a)
    return 1.0 - exact_coverage(n_l, n_l // (n_l // b), ETA, eps, event="marginal")


def _failure_conditional(n_l, b, a):
    return 1.0 - top_label_exact_coverage(*_layout(n_l, b), ETA, _conditional_eps(n_l, b, a))


#: key -> (title, theorem eps, exact eps, exact failure at the theorem's eps)
THEOREMS = {
    "thm1_marginal": (
        "Theorem 1, marginal eps_1 (eq. 8), per class",
        _marginal_eps,
        _exact_marginal,
        _failure_marginal,
    ),
    "thm1_conditional": (
        "Theorem 1, conditional eps_2 (eq. 9), L = 5",
        _conditional_eps,
        _exact_conditional,
        _failure_conditional,
    ),
}
_STYLES = {0.05: ("-", "o"), 0.1: (":", "s")}


def compute(cache_dir=None, **_):
    """Theorem eps, exact eps, ratio and exact failure at the theorem's eps, per (n_l, B_l)."""
    out = {"n_values": np.array(N_VALUES), "bins": np.array(BINS), "alphas": np.array(ALPHAS)}
    out["k"] = np.array([[n // b for b in BINS] for n in N_VALUES])
    for key, (_, bound, exact, failure) in THEOREMS.items():
        for name, values in looseness_grid(bound, exact, N_VALUES, BINS, ALPHAS).items():
            out[f"{key}/{name}"] = values
        out[f"{key}/failure"] = looseness_grid(failure, failure, N_VALUES, BINS, ALPHAS)["theorem"]
    return out


def findings(data):
    """Per statement: every ratio >= 1 (a real test), the ratio range and the true failure."""
    found = []
    for key, (title, *_) in THEOREMS.items():
        ratio, failure = data[f"{key}/ratio"], data[f"{key}/failure"]
        found += [
            {
                "claim": f"{title}: the exact smallest eps never exceeds the theorem's "
                "(every ratio >= 1, eta = 1/2)",
                "value": float(ratio.min()),
                "holds": bool(np.all(ratio >= 1.0)),
            },
            {
                "claim": f"{title}: ratio theorem eps / exact eps over n_l in {N_VALUES}, "
                f"B_l in {BINS}, alpha in {ALPHAS}",
                "value": {"min": round(float(ratio.min()), 4), "max": round(float(ratio.max()), 4)},
                "status": "reported",
            },
            {
                "claim": f"{title}: exact failure probability at the theorem's eps "
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
        exact = data[f"{key}/exact"][..., i01].ravel()[order]
        top.plot(k_sorted, theorem, "-o", color="tab:red", label="theorem")
        top.plot(k_sorted, exact, "--^", color="black", label="exact (smallest eps)")
        for i, a in enumerate(data["alphas"]):
            ls, mk = _STYLES[float(a)]
            r = data[f"{key}/ratio"][..., i].ravel()[order]
            bottom.plot(k_sorted, r, linestyle=ls, marker=mk, color="tab:red", label=f"alpha={a:g}")
        top.set_title(title, fontsize=9)
        top.set_yscale("log")
        top.set_ylabel(r"$\varepsilon$ reaching $1-\alpha$ ($\alpha$ = 0.1)")
        bottom.axhline(1.0, color="black", linewidth=0.8)
        bottom.set_ylim(0.9, max(1.8, float(np.max(data[f"{key}/ratio"])) * 1.08))
        bottom.set_ylabel(r"theorem $\varepsilon$ / exact $\varepsilon$")
        for ax in (top, bottom):
            ax.set_xscale("log")
            ax.set_xlabel("points per bin k = n_l / B_l")
            ax.xaxis.set_minor_locator(NullLocator())
            ticks = np.unique(k_sorted)
            ax.set_xticks(ticks, [str(v) for v in ticks], fontsize=7, rotation=45)
            ax.legend(fontsize=7)
    return fig
