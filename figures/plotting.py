"""Plotting helpers: validity plots, the Theorem 4 curve, reliability diagrams, eps-vs-B.

Every function draws on a given matplotlib ``Axes`` and returns it; none calls
``plt.show()``. Figure modules create figures with :func:`new_figure`, which uses the
object-oriented API only, so everything works headless (no pyplot state, no display).
"""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from calcheck.simulations.calibrators.edges import fixed_width_bin_index

__all__ = [
    "eps_vs_bins",
    "new_figure",
    "reliability_diagram",
    "validity_plot",
]


def new_figure(ncols=1, nrows=1, *, width=4.6, height=3.6):
    """A figure and its axes array, without pyplot (safe headless and in threads)."""
    fig = Figure(figsize=(width * ncols, height * nrows), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False)
    return fig, axes


def validity_plot(
    ax, eps, curves, *, sem=None, label=None, color=None, linestyle="-", conditional=False
):
    """Draw a validity curve ``V(eps)`` (a step function), optionally with a ±sem band.

    Parameters
    ----------
    ax : matplotlib Axes
    eps : array_like
        Grid of eps values.
    curves : array_like
        ``V`` on the grid: one curve, or an array (runs, grid) whose mean is drawn with the
        standard deviation of the mean as a band when ``sem`` is None.
    sem : array_like, optional
        Band half-width; computed from ``curves`` when it has several runs.
    conditional : bool
        Label the y axis for a conditional validity plot.

    Returns
    -------
    ax
    """
    eps = np.asarray(eps, dtype=float)
    v = np.asarray(curves, dtype=float)
    if v.ndim == 2:
        if sem is None and v.shape[0] > 1:
            sem = v.std(axis=0, ddof=1) / np.sqrt(v.shape[0])
        v = v.mean(axis=0)
    if v.shape != eps.shape:
        raise ValueError(f"curves must have the shape of eps {eps.shape}, got {v.shape}")
    (line,) = ax.step(
        eps, v, where="post", label=label, color=color, linestyle=linestyle, linewidth=1.4
    )
    if sem is not None:
        sem = np.asarray(sem, dtype=float)
        ax.fill_between(
            eps, v - sem, v + sem, step="post", color=line.get_color(), alpha=0.25, linewidth=0
        )
    ax.set_xlabel(r"$\varepsilon$")
    ax.set_ylabel(
        r"conditional validity $V(\varepsilon)$" if conditional else r"validity $V(\varepsilon)$"
    )
    ax.set_ylim(-0.02, 1.02)
    ax.grid(alpha=0.3)
    return ax


def reliability_diagram(ax, predictions, labels, *, n_bins=None, label=None, color=None):
    """Reliability diagram of a binning map with bin-mass bars.

    Each distinct prediction (or each of ``n_bins`` equal-width bins for continuous
    predictions) is a point at (mean prediction, mean label); bars on a twin axis show the
    fraction of test points per point.
    """
    p = np.asarray(predictions, dtype=float)
    y = np.asarray(labels, dtype=float)
    if n_bins is None:
        keys, inverse = np.unique(p, return_inverse=True)
    else:
        inverse = fixed_width_bin_index(p, n_bins)
        keys = np.arange(n_bins)
    counts = np.bincount(inverse, minlength=len(keys)).astype(float)
    keep = counts > 0
    mean_p = np.bincount(inverse, weights=p, minlength=len(keys))[keep] / counts[keep]
    mean_y = np.bincount(inverse, weights=y, minlength=len(keys))[keep] / counts[keep]
    ax.plot([0, 1], [0, 1], color="grey", linewidth=0.8, linestyle=":")
    ax.plot(mean_p, mean_y, marker="o", label=label, color=color)
    twin = ax.twinx()
    twin.bar(mean_p, counts[keep] / counts.sum(), width=0.02, alpha=0.3, color=color or "grey")
    twin.set_ylabel("fraction of test points")
    twin.set_ylim(0, 1)
    ax.set_xlabel("prediction h(x)")
    ax.set_ylabel("mean label")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    return ax


def eps_vs_bins(ax, n_values, bins, *, bound, alpha=0.1, highlight=(), ylabel=r"$\varepsilon$"):
    """Eps of a bound ``bound(n, B, alpha)`` against B for several n.

    ``highlight`` holds (n, B) pairs to mark with their value.
    """
    bins = np.asarray(bins)
    for n in n_values:
        ok = bins <= n // 2
        ax.plot(bins[ok], bound(n, bins[ok], alpha), label=f"n = {n:,}")
    for n, b in highlight:
        e = bound(n, b, alpha)
        ax.plot([b], [e], marker="o", color="black")
        ax.annotate(f"{e:.3f}", (b, e), textcoords="offset points", xytext=(4, -10), fontsize=8)
    ax.set_xlabel("number of bins B")
    ax.set_ylabel(f"{ylabel}, $\\alpha$ = {alpha:g}")
    ax.grid(alpha=0.3)
    return ax
