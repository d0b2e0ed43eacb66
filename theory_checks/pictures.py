"""One small picture per guarantee for the HTML report, drawn from ``results.json``.

Left: the failure rate of the guaranteed event (1 - coverage, log scale) against n, one line
per (law, B, alpha), with 95% Clopper-Pearson bars and the allowed rate (1 - claimed)
dashed; the guarantee's own checks in colour, its negative controls in grey crosses (they
must lie above their allowance). No failure at all is drawn at half a replicate. Right: the
tightness of each cell of the own checks (bound over the claimed-level quantile of the
error; 1 means the bound is exactly what the law needs, below 1 the bound fails), on a log
scale. Rate checks: the thresholds n* against the claimed rate h on log-log axes, dotted
the slope-1 line through the fitted constant (a claim that holds keeps each series on or
below it). Exponent, mean and trade-off checks have their lines in the report instead.
"""

from __future__ import annotations

import logging
import os
from collections import defaultdict
from pathlib import Path

__all__ = ["draw_guarantee_pictures"]

logger = logging.getLogger(__name__)


def _series(cells):
    groups = defaultdict(list)
    for c in cells:
        groups[(c["law"], c["n_bins"], c["alpha"])].append(c)
    return {k: sorted(v, key=lambda c: c["n"]) for k, v in groups.items()}


def _label(key) -> str:
    law, n_bins, alpha = key
    return f"{law}, B={n_bins}" + ("" if alpha is None else f", a={alpha:g}")


def _plain_log_axis(axis, values):
    from matplotlib.ticker import FixedLocator, NullFormatter, NullLocator

    ticks = sorted(set(values))
    if len(ticks) > 6:
        ticks = ticks[:: max(1, len(ticks) // 5)]
    axis.set_major_locator(FixedLocator(ticks))
    axis.set_major_formatter(lambda v, _: f"{v:g}")
    axis.set_minor_locator(NullLocator())
    axis.set_minor_formatter(NullFormatter())


_TIGHTNESS_CAP = 100.0
_X_LABEL = {"n": "n", "n_bins": "B (a limit: no sample)", "index": "cell"}


def _x(cell, key, j) -> float:
    return float(j + 1) if key == "index" else float(cell[key])


def _x_axis(checks: list) -> str:
    """Plot against n; against B for checks without a sample (limits: n = 0)."""
    cells = [c for check in checks for c in check["cells"]]
    if all(c["n"] > 0 for c in cells):
        return "n"
    return "n_bins" if all(c["n_bins"] > 0 for c in cells) else "index"


def _draw(gid: str, own: list, controls: list, reps):
    import numpy as np
    from matplotlib.figure import Figure

    xkey = _x_axis(own + controls)
    floor = 0.5 / reps if reps else 1e-4  # no failure at all: drawn at half a replicate
    fig = Figure(figsize=(8.0, 2.9), layout="constrained")
    fail_ax, tight_ax = fig.subplots(1, 2, width_ratios=(1.6, 1))
    colours = iter(f"C{i % 10}" for i in range(1000))
    all_n, all_t = [], []
    index = 0
    for check in own:
        series = _series(check["cells"])
        for key, cells in series.items():
            colour = next(colours)
            n = np.array([_x(c, xkey, j) for j, c in enumerate(cells)], dtype=float)
            all_n += list(n)
            n = n * 1.025 ** (index % 9 - 4)  # spread series sharing an n, so each shows
            index += 1
            fail = np.maximum(1 - np.array([c["coverage"] for c in cells]), floor)
            lo = np.maximum(1 - np.array([c["ci_high"] for c in cells]), floor)
            hi = np.maximum(1 - np.array([c["ci_low"] for c in cells]), floor)
            fail_ax.errorbar(
                n,
                fail,
                yerr=[fail - lo, hi - fail],
                fmt="o-",
                ms=3,
                lw=1,
                color=colour,
                capsize=2,
            )
            allowed = [1 - c["claimed"] for c in cells]
            fail_ax.plot(n, allowed, "--", marker="_", ms=12, lw=0.8, color=colour)
            # a bound far above what the law needs (an error near 0) is drawn at the cap
            ok = [
                (x, min(c["tightness"], _TIGHTNESS_CAP))
                for x, c in zip(n, cells, strict=True)
                if isinstance(c["tightness"], float) and c["tightness"] > 0
            ]
            if ok:
                tight_ax.plot(*zip(*ok, strict=True), "o-", ms=3, lw=1, color=colour)
                all_t += [t for _, t in ok]
            if len(own) * len(series) <= 6:
                fail_ax.plot([], [], "o-", color=colour, label=_label(key))
    for check in controls:
        for cells in _series(check["cells"]).values():
            n = [_x(c, xkey, j) for j, c in enumerate(cells)]
            all_n += n
            fail = [max(1 - c["coverage"], floor) for c in cells]
            fail_ax.plot(n, fail, "x:", ms=4, lw=0.8, color="0.55")
    if controls:
        fail_ax.plot([], [], "x:", color="0.55", label="negative controls (must be above)")
    fail_ax.plot([], [], "--", color="0.3", lw=0.8, label="allowed (1 - claimed)")
    fail_ax.set_xscale("log")
    fail_ax.set_yscale("log")
    fail_ax.set_ylim(floor / 1.5, 1.5)
    fail_ax.set_xlabel(_X_LABEL[xkey])
    fail_ax.set_ylabel("failure rate of the event")
    fail_ax.set_title(f"{gid}: failures, {reps} replicates per point", fontsize=8)
    # below both panels: loc="best" searched every drawn vertex for a free corner and took
    # about 3 s per picture (minutes for a full report); here the legend hides nothing
    handles, labels = fail_ax.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=4, fontsize=6, frameon=False)
    tight_ax.axhline(1.0, color="black", lw=0.8)
    tight_ax.set_xscale("log")
    tight_ax.set_yscale("log")
    if all_t:
        tight_ax.set_ylim(min(0.8, min(all_t) / 1.2), max(1.25, max(all_t) * 1.2))
    tight_ax.set_xlabel(_X_LABEL[xkey])
    tight_ax.set_ylabel("bound / error quantile")
    tight_ax.set_title(
        f"tightness (1: exact; < 1: fails; capped at {_TIGHTNESS_CAP:g})", fontsize=8
    )
    for ax in (fail_ax, tight_ax):
        ax.tick_params(labelsize=7)
        if all_n:
            _plain_log_axis(ax.xaxis, all_n)
            ax.set_xlim(min(all_n) / 1.35, max(all_n) * 1.35)
    from matplotlib.ticker import FixedLocator, NullLocator

    tight_ax.yaxis.set_major_locator(FixedLocator([0.5, 0.8, 1, 1.5, 2, 3, 5, 10, 20, 50, 100]))
    tight_ax.yaxis.set_major_formatter(lambda v, _: f"{v:g}")
    tight_ax.yaxis.set_minor_locator(NullLocator())
    return fig


def _draw_rates(gid: str, checks: list, reps):
    """Rate checks: n* against h on log-log axes, with the slope-1 line through c_fit."""
    import numpy as np
    from matplotlib.figure import Figure

    fig = Figure(figsize=(5.0, 2.9), layout="constrained")
    ax = fig.subplots()
    i = 0
    for check in checks:
        for s in check["series"]:
            h = np.asarray(s["h"], dtype=float)
            y = np.array([v if isinstance(v, int | float) else np.nan for v in s["n_star"]])
            colour = f"C{i % 10}"
            i += 1
            label = (
                f"{s['name']} (slope {s['slope']:.2f})"
                if isinstance(s["slope"], float)
                else s["name"]
            )
            ax.loglog(h, y, "o-", ms=3, lw=1, color=colour, label=label[:60])
            if isinstance(s.get("c_fit"), float) and np.isfinite(s["c_fit"]):
                ax.loglog(h, s["c_fit"] * h, ":", lw=0.8, color=colour)
    ax.set_xlabel("h (the claimed rate, constant 1)")
    ax.set_ylabel("threshold n*")
    ax.set_title(f"{gid}: n* against h, {reps} replicates per point", fontsize=8)
    ax.legend(fontsize=5, loc="upper left", frameon=False)
    ax.tick_params(labelsize=7)
    return fig


def _save(fig, folder: Path, gid: str) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    name = f"{gid.replace('.', '_')}.png"
    tmp = folder / f".{name}.tmp"
    fig.savefig(tmp, dpi=90, format="png")
    os.replace(tmp, folder / name)
    return name


def draw_guarantee_pictures(results: dict, folder) -> dict[str, str]:
    """Draw one PNG per guarantee with coverage checks into ``folder``; ``{id: file name}``.

    Each file is written to a temporary name and renamed (atomic).
    """
    folder = Path(folder)
    by_guarantee: dict[str, tuple[list, list]] = {}
    rates: dict[str, list] = {}
    for check in results["checks"]:
        if check.get("kind") == "rate" and check["expect"] == "consistent":
            rates.setdefault(check["guarantee"], []).append(check)
            continue
        if check.get("kind") or not check.get("cells"):
            continue  # exponent, mean and trade-off checks: their lines are in the report
        own, controls = by_guarantee.setdefault(check["guarantee"], ([], []))
        (controls if check["expect"] == "violated" else own).append(check)
    reps = results.get("meta", {}).get("reps")
    drawn = {}
    for gid, (own, controls) in by_guarantee.items():
        if own:
            drawn[gid] = _save(_draw(gid, own, controls, reps), folder, gid)
    for gid, checks in rates.items():
        if gid not in drawn:
            drawn[gid] = _save(_draw_rates(gid, checks, reps), folder, gid)
    logger.info("%d guarantee pictures in %s", len(drawn), folder)
    return drawn
