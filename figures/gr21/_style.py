"""gr21 figure styles: the methods' colours and labels, and the Theorem 4 theory curve.

Gupta, C. and Ramdas, A. (2021). Distribution-free calibration guarantees for histogram
binning without sample splitting. ICML. Sec. 4 (Figs. 3-5) and Theorem 4, eq. (11).
"""

from __future__ import annotations

from calcheck.bounds import gr21

__all__ = ["METHOD_STYLES", "theorem4_curve"]

#: Colours and labels of the methods compared in Sec. 4.
METHOD_STYLES = {
    "randomized_umd": {"color": "tab:blue", "label": "UMD (randomized, Alg. 2)"},
    "ums": {"color": "tab:orange", "label": "UMS (50:50 split)"},
    "fixed_width": {"color": "tab:green", "label": "fixed-width binning"},
    "isotonic": {"color": "tab:purple", "label": "isotonic regression"},
    "scaling_binning_double_dipped": {
        "color": "tab:brown",
        "label": "scaling-binning (double-dipped)",
    },
    "exact": {"color": "black", "label": "exact V (known law)"},
    "plugin": {"color": "tab:red", "label": "plug-in V (test sample)"},
}


def theorem4_curve(ax, eps, n, n_bins, *, conditional=False, delta=0.0, **style):
    """Draw the Theorem 4 theory curve (reconstructed: eq. (11) solved for alpha)."""
    v = gr21.thm4_validity_curve(eps, n, n_bins, delta=delta, conditional=conditional)
    style = {
        "color": "black",
        "linestyle": "--",
        "linewidth": 1.2,
        "label": "Theorem 4 (reconstructed)",
        **style,
    }
    ax.plot(eps, v, **style)
    return ax
