"""How loose is a bound? Its radius beside the smallest radius certified for every law.

A looseness figure sets, on a grid of sizes ``(n, B, alpha)``, the radius eps that a paper's
statement gives beside the smallest eps whose coverage is certified over every law at those
sizes (:mod:`calcheck.simulations.certified_coverage`): a ratio below 1 refutes the
statement, a ratio above 1 is what it gives away. It also reports the largest failure
probability over every law at the statement's own eps. The comparison is with the
certificate, not with one law, because no single law is the worst at every size.

A paper's module states what is paper specific in a :class:`LoosenessFigure` (its
statements, sizes and words) and delegates to :func:`looseness_data`,
:func:`looseness_findings` and :func:`draw_looseness`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from matplotlib.ticker import NullLocator

from calcheck.simulations.certified_coverage import certified_coverage, smallest_certified_eps
from calcheck.simulations.exact_coverage import looseness_grid

from .plotting import new_figure

__all__ = [
    "LoosenessFigure",
    "Statement",
    "Wording",
    "certified_statement",
    "draw_looseness",
    "five_decimals",
    "looseness_data",
    "looseness_findings",
    "three_significant",
]

#: The x axes a looseness figure can be drawn against.
X_AXES = ("n", "points_per_bin")
#: Colours of the bin counts, in the order of the figure's ``bins``.
BIN_COLORS = ("tab:blue", "tab:orange", "tab:green")
#: Line style and marker of each alpha in the ratio panels.
ALPHA_STYLES = {0.05: ("-", "o"), 0.1: (":", "s")}
#: The alpha of the top panels (the radii themselves).
TOP_ALPHA = 0.1
EPS_AXIS_LABEL = r"$\varepsilon$ reaching $1-\alpha$ ($\alpha$ = 0.1)"


@dataclass(frozen=True)
class Statement:
    """One bound of a paper, as functions ``f(n, n_bins, alpha) -> float`` on the grid.

    Attributes
    ----------
    title : str
        The panel's title; the findings' claims start with it.
    bound : callable
        The statement's radius eps.
    certified : callable
        The smallest eps whose coverage of the same event is certified for every law.
    failure : callable
        The largest failure probability over every law at the statement's eps.
    """

    title: str
    bound: Callable
    certified: Callable
    failure: Callable


def certified_statement(title, bound, **coverage) -> Statement:
    """A statement about one uniform-mass binning event of ``n`` points in ``n_bins`` bins.

    ``coverage`` names the event for both
    :func:`~calcheck.simulations.certified_coverage.smallest_certified_eps` and
    :func:`~calcheck.simulations.certified_coverage.certified_coverage` (``event``,
    ``scheme``, ``pooled``), so that the radius and the failure certify the same event.
    """

    def certified(n, n_bins, alpha):
        return smallest_certified_eps(n, n_bins, alpha, **coverage)

    def failure(n, n_bins, alpha):
        return 1.0 - certified_coverage(n, n_bins, bound(n, n_bins, alpha), **coverage).value

    return Statement(title, bound, certified, failure)


def five_decimals(probability) -> float:
    """A failure probability rounded to 5 decimals (for those of order 1e-2)."""
    return round(float(probability), 5)


def three_significant(probability) -> float:
    """A failure probability to 3 significant digits (for those far below 1e-5)."""
    return float(f"{probability:.3g}")


@dataclass(frozen=True)
class Wording:
    """The words of a looseness figure's labels and claims; the defaults speak of a theorem.

    Attributes
    ----------
    bound : str
        The legend label of the statement's radius.
    never_exceeds : str
        What the certified eps never exceeds, in the validity claim.
    ratio : str
        The numerator of the ratio, in the ratio claim.
    ratio_axis : str
        The y label of the ratio panels.
    failure : str
        The failure claim, after the title.
    failure_value : callable
        How a failure probability is reported.
    """

    bound: str = "theorem"
    never_exceeds: str = "the theorem's"
    ratio: str = "theorem eps"
    ratio_axis: str = r"theorem $\varepsilon$ / certified $\varepsilon$"
    failure: str = "largest failure probability over every law at the theorem's eps"
    failure_value: Callable = five_decimals


@dataclass(frozen=True)
class LoosenessFigure:
    """What a paper's looseness figure compares, on which grid, and in which words.

    Attributes
    ----------
    statements : dict
        Key (the data's prefix) -> :class:`Statement`, one column of panels each.
    n_values, bins, alphas : tuple
        The grid; alphas must hold 0.1 (the top panels) and only alphas of
        :data:`ALPHA_STYLES`.
    wording : Wording
        The words of the labels and claims.
    size_names : tuple of str
        What ``n`` and ``B`` are called in the claims and axis labels (``("n_l", "B_l")``
        for sizes per class).
    x_axis : str
        ``"n"`` (one line per bin count) or ``"points_per_bin"`` (``k = n // B``, every
        grid point on one line).
    """

    statements: dict
    n_values: tuple
    bins: tuple
    alphas: tuple
    wording: Wording = field(default_factory=Wording)
    size_names: tuple = ("n", "B")
    x_axis: str = "n"

    def __post_init__(self):
        if self.x_axis not in X_AXES:
            raise ValueError(f"x_axis must be one of {X_AXES}, got {self.x_axis!r}")


def _on_grid(function, figure) -> np.ndarray:
    """``function(n, n_bins, alpha)`` on the figure's grid, shape (n, B, alpha)."""
    shape = (len(figure.n_values), len(figure.bins), len(figure.alphas))
    values = np.empty(shape)
    for i, j, k in np.ndindex(*shape):
        args = (int(figure.n_values[i]), int(figure.bins[j]), float(figure.alphas[k]))
        values[i, j, k] = float(function(*args))
    return values


def looseness_data(figure) -> dict:
    """Statement eps, certified eps, their ratio and the worst failure at the statement's eps.

    Returns
    -------
    dict of ndarray
        The grid (``n_values``, ``bins``, ``alphas``; ``k`` = n // B when drawn against
        points per bin) and, per statement key, ``key/theorem``, ``key/certified``,
        ``key/ratio`` and ``key/failure``, each of shape (n, B, alpha).
    """
    out = {
        "n_values": np.array(figure.n_values),
        "bins": np.array(figure.bins),
        "alphas": np.array(figure.alphas),
    }
    if figure.x_axis == "points_per_bin":
        out["k"] = np.array([[n // b for b in figure.bins] for n in figure.n_values])
    for key, statement in figure.statements.items():
        grid = looseness_grid(
            statement.bound, statement.certified, figure.n_values, figure.bins, figure.alphas
        )
        for name, values in grid.items():
            out[f"{key}/{'certified' if name == 'exact' else name}"] = values
        out[f"{key}/failure"] = _on_grid(statement.failure, figure)
    return out


def looseness_findings(figure, data) -> list[dict]:
    """Per statement: every ratio >= 1 (a real test), the ratio range and the true failure."""
    words = figure.wording
    n_name, b_name = figure.size_names
    grid = f"{n_name} in {figure.n_values}, {b_name} in {figure.bins}, alpha in {figure.alphas}"
    alphas = ", ".join(str(a) for a in figure.alphas)
    found = []
    for key, statement in figure.statements.items():
        ratio, failure = data[f"{key}/ratio"], data[f"{key}/failure"]
        found += [
            {
                "claim": f"{statement.title}: the smallest eps certified for every law never "
                f"exceeds {words.never_exceeds} (every ratio >= 1)",
                "value": float(ratio.min()),
                "holds": bool(np.all(ratio >= 1.0)),
            },
            {
                "claim": f"{statement.title}: ratio {words.ratio} / certified eps over {grid}",
                "value": {"min": round(float(ratio.min()), 4), "max": round(float(ratio.max()), 4)},
                "status": "reported",
            },
            {
                "claim": f"{statement.title}: {words.failure} (alpha = {alphas})",
                "value": {
                    str(a): [words.failure_value(f(failure[..., i])) for f in (np.min, np.max)]
                    for i, a in enumerate(figure.alphas)
                },
                "status": "reported",
            },
        ]
    return found


@dataclass(frozen=True)
class _XAxis:
    """How both panels of a column show their x axis (log scale, fixed ticks, a legend)."""

    label: str
    ticks: np.ndarray
    tick_labels: list
    tick_style: dict
    legend_style: dict

    def apply(self, ax):
        ax.set_xscale("log")
        ax.set_xlabel(self.label)
        ax.set_xticks(self.ticks, self.tick_labels, **self.tick_style)
        ax.xaxis.set_minor_locator(NullLocator())
        ax.legend(**self.legend_style)


def _lines_against_n(top, bottom, data, key, figure) -> _XAxis:
    """One colour per bin count: radii at alpha = 0.1 (top), ratios for every alpha."""
    n = data["n_values"]
    at_top = list(data["alphas"]).index(TOP_ALPHA)
    n_name, b_name = figure.size_names
    for j, b in enumerate(data["bins"]):
        color = BIN_COLORS[j]
        theorem, certified = data[f"{key}/theorem"], data[f"{key}/certified"]
        bound_label = f"{figure.wording.bound}, {b_name}={b}"
        top.plot(n, theorem[:, j, at_top], "-o", color=color, label=bound_label)
        top.plot(n, certified[:, j, at_top], "--^", color=color, label=f"certified, {b_name}={b}")
        for i, a in enumerate(data["alphas"]):
            linestyle, marker = ALPHA_STYLES[float(a)]
            bottom.plot(
                n,
                data[f"{key}/ratio"][:, j, i],
                linestyle=linestyle,
                marker=marker,
                color=color,
                label=f"{b_name}={b}, alpha={a:g}",
            )
    tick_labels = [f"{int(v) // 1000}K" for v in n]
    return _XAxis(f"calibration points {n_name}", n, tick_labels, {}, {"fontsize": 6, "ncol": 2})


def _lines_against_points_per_bin(top, bottom, data, key, figure) -> _XAxis:
    """Every grid point on one line, sorted by k = n // B (the size the bound depends on)."""
    k = data["k"].ravel()
    order = np.argsort(k)
    k_sorted = k[order]
    at_top = list(data["alphas"]).index(TOP_ALPHA)
    theorem = data[f"{key}/theorem"][..., at_top].ravel()[order]
    certified = data[f"{key}/certified"][..., at_top].ravel()[order]
    top.plot(k_sorted, theorem, "-o", color="tab:red", label=figure.wording.bound)
    top.plot(k_sorted, certified, "--^", color="black", label="certified (smallest eps)")
    for i, a in enumerate(data["alphas"]):
        linestyle, marker = ALPHA_STYLES[float(a)]
        ratio = data[f"{key}/ratio"][..., i].ravel()[order]
        bottom.plot(
            k_sorted,
            ratio,
            linestyle=linestyle,
            marker=marker,
            color="tab:red",
            label=f"alpha={a:g}",
        )
    ticks = np.unique(k_sorted)
    n_name, b_name = figure.size_names
    return _XAxis(
        f"points per bin k = {n_name} / {b_name}",
        ticks,
        [str(v) for v in ticks],
        {"fontsize": 7, "rotation": 45},
        {"fontsize": 7},
    )


def _label_panels(top, bottom, title, ratio, ratio_axis):
    """The y axes of one column: log radii on top, the ratio above a line at 1 below."""
    top.set_title(title, fontsize=9)
    top.set_yscale("log")
    top.set_ylabel(EPS_AXIS_LABEL)
    bottom.axhline(1.0, color="black", linewidth=0.8)
    bottom.set_ylim(0.9, max(1.8, float(np.max(ratio)) * 1.08))
    bottom.set_ylabel(ratio_axis)


#: x axis -> what draws a column's lines and says how to show that axis.
_LINE_DRAWERS = {"n": _lines_against_n, "points_per_bin": _lines_against_points_per_bin}


def draw_looseness(figure, data):
    """One column per statement. Top: eps at alpha = 0.1; bottom: the ratio for every alpha."""
    fig, axes = new_figure(ncols=len(figure.statements), nrows=2, width=4.6, height=3.4)
    draw_lines = _LINE_DRAWERS[figure.x_axis]
    for col, (key, statement) in enumerate(figure.statements.items()):
        top, bottom = axes[0, col], axes[1, col]
        x_axis = draw_lines(top, bottom, data, key, figure)
        _label_panels(top, bottom, statement.title, data[f"{key}/ratio"], figure.wording.ratio_axis)
        for ax in (top, bottom):
            x_axis.apply(ax)
    return fig
