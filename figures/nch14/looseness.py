"""How loose is nch14 Theorem 3.1? The MCE bound beside the smallest certified eps.

Hist (equal-frequency histogram binning, calcheck's Zadrozny-Elkan binning: all n points,
bins at the order statistics of ranks ceil(b (n + 1) / B)): given the edges, each bin's
inner label sum is Bin(m_b - 1, Pi_b) and its upper edge point's label has a mean of its
own, whatever the law (gr21 Lemma 2), so the probability that the population MCE is at most
eps is bounded below over every law by the worst Pi_b and edge mean in each bin
(:mod:`calcheck.simulations.certified_coverage`). Theorem 3.1 as printed (exponent
n eps^2 / (2B), eq. 3) and with eq. (1)'s Hoeffding exponent are compared with the smallest
eps whose certified coverage reaches 1 - alpha (no single c is the worst law).

Naeini, M. P., Cooper, G. F. and Hauskrecht, M. (2014). Binary classifier calibration:
non-parametric approach. arXiv:1401.3390. Theorem 3.1, eqs. (1)-(3).
"""

from __future__ import annotations

import numpy as np
from matplotlib.ticker import NullLocator

from calcheck.bounds import nch14
from calcheck.simulations.certified_coverage import certified_coverage, smallest_certified_eps
from calcheck.simulations.exact_coverage import looseness_grid

from ..plotting import new_figure

ID = "nch14.looseness"
CAPTION = (
    "How loose is Theorem 3.1 over every law (certified: Lemma 2's binomial bins at their "
    "worst bias, computed exactly). Top: "
    "the MCE bound as printed, sqrt(2B log(2B/alpha)/n), and with eq. (1)'s exponent, "
    "sqrt(B log(2B/alpha)/(2n)), beside the smallest eps whose certified probability of "
    "MCE <= eps reaches 1 - alpha (alpha = 0.1), for Hist (equal-frequency bins) against n. "
    "Bottom: the ratio for B in {5, 10, 20} and alpha in {0.05, 0.1}; a valid bound has "
    "ratio >= 1."
)
N_VALUES = (1000, 3000, 10_000)
BINS = (5, 10, 20)
ALPHAS = (0.05, 0.1)
SCHEME = "zadrozny_elkan"

#: key -> (panel title, theorem eps)
THEOREMS = {
    "thm31": ("Theorem 3.1 as printed (eq. 3)", nch14.thm31_mce_bound),
    "thm31_hoeffding": ("Theorem 3.1, eq. (1)'s exponent", nch14.thm31_mce_bound_hoeffding),
}
_COLORS = {5: "tab:blue", 10: "tab:orange", 20: "tab:green"}
_STYLES = {0.05: ("-", "o"), 0.1: (":", "s")}


def _certified(n, b, a):
    return smallest_certified_eps(n, b, a, scheme=SCHEME)


def compute(cache_dir=None, **_):
    """Bound, certified eps, ratio and the worst failure probability at the bound."""
    out = {"n_values": np.array(N_VALUES), "bins": np.array(BINS), "alphas": np.array(ALPHAS)}
    for key, (_, bound) in THEOREMS.items():
        for name, values in looseness_grid(bound, _certified, N_VALUES, BINS, ALPHAS).items():
            out[f"{key}/{'certified' if name == 'exact' else name}"] = values

        def failure(n, b, a, bound=bound):
            return 1.0 - certified_coverage(n, b, bound(n, b, a), scheme=SCHEME).value

        out[f"{key}/failure"] = looseness_grid(failure, failure, N_VALUES, BINS, ALPHAS)["theorem"]
    return out


def findings(data):
    """Per form: every ratio >= 1 (a real test), the ratio range and the true failure."""
    found = []
    for key, (title, _) in THEOREMS.items():
        ratio, failure = data[f"{key}/ratio"], data[f"{key}/failure"]
        found += [
            {
                "claim": f"{title}: the smallest eps certified for every law never exceeds "
                "the bound (every ratio >= 1)",
                "value": float(ratio.min()),
                "holds": bool(np.all(ratio >= 1.0)),
            },
            {
                "claim": f"{title}: ratio bound / certified eps over n in {N_VALUES}, "
                f"B in {BINS}, alpha in {ALPHAS}",
                "value": {"min": round(float(ratio.min()), 4), "max": round(float(ratio.max()), 4)},
                "status": "reported",
            },
            {
                "claim": f"{title}: largest probability over every law that MCE exceeds the "
                "bound "
                f"(alpha = {ALPHAS[0]}, {ALPHAS[1]})",
                "value": {
                    str(a): [float(f"{f(failure[..., i]):.3g}") for f in (np.min, np.max)]
                    for i, a in enumerate(ALPHAS)
                },
                "status": "reported",
            },
        ]
    return found


def draw(data):
    """Top: bound and certified eps against n (alpha = 0.1); bottom: their ratio."""
    fig, axes = new_figure(ncols=len(THEOREMS), nrows=2, width=4.6, height=3.4)
    n = data["n_values"]
    i01 = list(data["alphas"]).index(0.1)
    for col, (key, (title, _)) in enumerate(THEOREMS.items()):
        top, bottom = axes[0, col], axes[1, col]
        for j, b in enumerate(data["bins"]):
            c = _COLORS[int(b)]
            top.plot(n, data[f"{key}/theorem"][:, j, i01], "-o", color=c, label=f"bound, B={b}")
            top.plot(
                n, data[f"{key}/certified"][:, j, i01], "--^", color=c, label=f"certified, B={b}"
            )
            for i, a in enumerate(data["alphas"]):
                ls, mk = _STYLES[float(a)]
                r = data[f"{key}/ratio"][:, j, i]
                bottom.plot(n, r, linestyle=ls, marker=mk, color=c, label=f"B={b}, alpha={a:g}")
        top.set_title(title, fontsize=9)
        top.set_yscale("log")
        top.set_ylabel(r"$\varepsilon$ reaching $1-\alpha$ ($\alpha$ = 0.1)")
        bottom.axhline(1.0, color="black", linewidth=0.8)
        bottom.set_ylim(0.9, max(1.8, float(np.max(data[f"{key}/ratio"])) * 1.08))
        bottom.set_ylabel(r"bound / certified $\varepsilon$")
        for ax in (top, bottom):
            ax.set_xscale("log")
            ax.set_xlabel("calibration points n")
            ax.set_xticks(n, [f"{int(v) // 1000}K" for v in n])
            ax.xaxis.set_minor_locator(NullLocator())
            ax.legend(fontsize=6, ncol=2)
    return fig
