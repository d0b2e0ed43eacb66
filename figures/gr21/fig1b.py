"""gr21 Figure 1(b): validity plots of UMS (left) and UMD (right) on CREDIT for several n."""

from __future__ import annotations

from ..plotting import new_figure, validity_plot
from ._panels import compute_credit as compute  # noqa: F401 (the module's compute)
from ._style import METHOD_STYLES

ID = "gr21.fig1b"
CAPTION = (
    "Plug-in validity plots of UMS (50:50, left) and randomized UMD (right) with B = 10 on "
    "CREDIT for n in {500, 1K, 2K, 4K}: mean and std-dev-of-mean over repetitions of "
    "(n calibration, 5K test) drawn from split C (Fig. 1(b))."
)
N_VALUES = (500, 1000, 2000, 4000)


def findings(data):
    """The paper's stated findings with the numbers found and whether they hold."""
    from ._panels import value_at

    ums, umd = (value_at(data, "marginal", m, 1000, 0.05) for m in ("ums", "randomized_umd"))
    return [
        {
            "claim": "n = 1000, eps = 0.05: UMS V about 0.63",
            "value": ums,
            "holds": abs(ums - 0.63) <= 0.05,
        },
        {
            "claim": "n = 1000, eps = 0.05: UMD V about 0.79",
            "value": umd,
            "holds": abs(umd - 0.79) <= 0.05,
        },
        {
            "claim": "UMD reaches (0.1, 0.1)-marginal calibration at n = 500",
            "value": value_at(data, "marginal", "randomized_umd", 500, 0.1),
            "holds": value_at(data, "marginal", "randomized_umd", 500, 0.1) >= 0.9,
        },
        {
            "claim": "UMS reaches (0.1, 0.1)-marginal calibration at n = 1000",
            "value": value_at(data, "marginal", "ums", 1000, 0.1),
            "holds": value_at(data, "marginal", "ums", 1000, 0.1) >= 0.9,
        },
    ]


def draw(data):
    """Draw the figure from computed data; returns a matplotlib Figure."""
    fig, axes = new_figure(2)
    colors = ("tab:red", "tab:orange", "tab:green", "tab:blue")
    for ax, method in zip(axes[0], ("ums", "randomized_umd"), strict=True):
        for n, c in zip(N_VALUES, colors, strict=True):
            validity_plot(
                ax, data["eps"], data[f"marginal/{method}/{n}"], color=c, label=f"n = {n:,}"
            )
        ax.set_xlim(0, 0.15)
        ax.set_title(METHOD_STYLES[method]["label"])
        ax.legend(loc="lower right", fontsize=8)
    return fig
