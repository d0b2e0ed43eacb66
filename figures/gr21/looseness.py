"""How loose are gr21 Theorems 3 and 4? The theorem's eps beside the smallest certified eps.

Given the edges, the bin label sums of UMD are independent Bin(m_b, Pi_b) whatever the law
(Lemma 2), so the coverage of an eps is bounded below over **every** law by the worst Pi_b in
each bin (:mod:`calcheck.simulations.certified_coverage`); the smallest eps whose certified
coverage reaches 1 - alpha is what a theorem could state at these sizes for every law. No
single eta is the worst law (eta = 1/2 is not: the binomial cut-offs cross integers), so the
comparison is with the certificate, not with one law.
Theorem 3's eps (eq. 8; Theorem 4's eps2 is the same at delta = 0) is compared with the
certified conditional radius, Theorem 4's eps1 (eq. 11) with the certified marginal radius.

Gupta, C. and Ramdas, A. (2021). Distribution-free calibration guarantees for histogram
binning without sample splitting. ICML. Lemma 2, Theorem 3 (eq. 8), Theorem 4 (eq. 11).
"""

from __future__ import annotations

import numpy as np
from matplotlib.ticker import NullLocator

from calcheck.bounds import gr21
from calcheck.simulations.certified_coverage import certified_coverage, smallest_certified_eps
from calcheck.simulations.exact_coverage import looseness_grid

from ..plotting import new_figure

ID = "gr21.looseness"
CAPTION = (
    "How loose is each bound over every law (certified: Lemma 2's binomial bins at their "
    "worst bias, computed exactly, no Monte Carlo). Top: eps of Theorem 3 (conditional, "
    "eq. 8) and of Theorem 4 (marginal eps1, eq. 11) against n, beside the smallest eps "
    "whose certified coverage reaches 1 - alpha, alpha = 0.1. Bottom: their ratio for B in "
    "{5, 10, 20} and alpha in {0.05, 0.1}; a valid bound has ratio >= 1."
)
N_VALUES = (1000, 3000, 10_000)
BINS = (5, 10, 20)
ALPHAS = (0.05, 0.1)

#: key -> (panel title, theorem eps, the event certified)
THEOREMS = {
    "thm3": ("Theorem 3, conditional (eq. 8)", gr21.thm3_conditional_eps, "conditional"),
    "thm4_marginal": ("Theorem 4, marginal eps1 (eq. 11)", gr21.thm4_marginal_eps, "marginal"),
}
_COLORS = {5: "tab:blue", 10: "tab:orange", 20: "tab:green"}
_STYLES = {0.05: ("-", "o"), 0.1: (":", "s")}


def _certified(event):
    # randomized UMD in the delta -> 0 limit (Theorems 3-4): every bin its own output
    return lambda n, b, a: smallest_certified_eps(n, b, a, event=event, pooled=False)


def _worst_failure(bound, event):
    """The largest failure probability over every law at the theorem's eps (certified)."""
    return np.array(
        [
            [
                [
                    1.0 - certified_coverage(n, b, bound(n, b, a), event=event, pooled=False).value
                    for a in ALPHAS
                ]
                for b in BINS
            ]
            for n in N_VALUES
        ]
    )


def compute(cache_dir=None, **_):
    """Theorem eps, certified eps, their ratio and the worst failure at the theorem's eps."""
    out = {"n_values": np.array(N_VALUES), "bins": np.array(BINS), "alphas": np.array(ALPHAS)}
    for key, (_, bound, event) in THEOREMS.items():
        grid = looseness_grid(bound, _certified(event), N_VALUES, BINS, ALPHAS)
        for name, values in grid.items():
            out[f"{key}/{'certified' if name == 'exact' else name}"] = values
        out[f"{key}/failure"] = _worst_failure(bound, event)
    return out


def findings(data):
    """Per theorem: every ratio >= 1 (a real test), the ratio range and the true failure."""
    found = []
    for key, (title, _, _) in THEOREMS.items():
        ratio, failure = data[f"{key}/ratio"], data[f"{key}/failure"]
        found.append(
            {
                "claim": f"{title}: the smallest eps certified for every law never exceeds "
                "the theorem's (every ratio >= 1)",
                "value": float(ratio.min()),
                "holds": bool(np.all(ratio >= 1.0)),
            }
        )
        found.append(
            {
                "claim": f"{title}: ratio theorem eps / certified eps over n in {N_VALUES}, "
                f"B in {BINS}, alpha in {ALPHAS}",
                "value": {"min": round(float(ratio.min()), 4), "max": round(float(ratio.max()), 4)},
                "status": "reported",
            }
        )
        found.append(
            {
                "claim": f"{title}: largest failure probability over every law at the "
                "theorem's eps "
                f"(alpha = {ALPHAS[0]}, {ALPHAS[1]})",
                "value": {
                    str(a): [
                        round(float(failure[..., k].min()), 5),
                        round(float(failure[..., k].max()), 5),
                    ]
                    for k, a in enumerate(ALPHAS)
                },
                "status": "reported",
            }
        )
    return found


def draw(data):
    """Top: eps against n (alpha = 0.1); bottom: the ratio for every (B, alpha)."""
    fig, axes = new_figure(ncols=len(THEOREMS), nrows=2, width=4.6, height=3.4)
    n = data["n_values"]
    k01 = list(data["alphas"]).index(0.1)
    for col, (key, (title, _, _)) in enumerate(THEOREMS.items()):
        top, bottom = axes[0, col], axes[1, col]
        for j, b in enumerate(data["bins"]):
            c = _COLORS[int(b)]
            top.plot(n, data[f"{key}/theorem"][:, j, k01], "-o", color=c, label=f"theorem, B={b}")
            top.plot(
                n, data[f"{key}/certified"][:, j, k01], "--^", color=c, label=f"certified, B={b}"
            )
            for k, a in enumerate(data["alphas"]):
                ls, mk = _STYLES[float(a)]
                bottom.plot(
                    n,
                    data[f"{key}/ratio"][:, j, k],
                    linestyle=ls,
                    marker=mk,
                    color=c,
                    label=f"B={b}, alpha={a:g}",
                )
        top.set_title(title, fontsize=9)
        top.set_xscale("log")
        top.set_yscale("log")
        top.set_xlabel("calibration points n")
        top.set_ylabel(r"$\varepsilon$ reaching $1-\alpha$ ($\alpha$ = 0.1)")
        top.legend(fontsize=6, ncol=2)
        bottom.axhline(1.0, color="black", linewidth=0.8)
        bottom.set_xscale("log")
        bottom.set_ylim(0.9, max(1.8, float(np.max(data[f"{key}/ratio"])) * 1.08))
        bottom.set_xlabel("calibration points n")
        bottom.set_ylabel(r"theorem $\varepsilon$ / certified $\varepsilon$")
        bottom.legend(fontsize=6, ncol=2)
        for ax in (top, bottom):
            ax.set_xticks(n, [f"{int(v) // 1000}K" for v in n])
            ax.xaxis.set_minor_locator(NullLocator())
    return fig
