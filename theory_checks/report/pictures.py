"""One small picture per guarantee for the HTML report, drawn from ``results.json``.

One panel per alpha: the failure rate of the guaranteed event (1 - coverage, log scale)
against n, the law (and B) holding the worst cell in colour with 95% Clopper-Pearson bars
and labelled, the other laws faint, the allowed rate (1 - claimed) dashed, the negative
controls grey crosses (they must lie above it). No failure at all is drawn at half a
replicate. Right: the tightness of each cell of the own checks (bound over the
claimed-level quantile of the error; 1 means the bound is exactly what the law needs, below
1 the bound fails), on a log scale, the law the bound fits most closely in colour. Rate
checks: the thresholds n* against the claimed rate h on log-log axes, dotted the slope-1
line through the fitted constant (a claim that holds keeps each series on or below it).
Exponent, mean and trade-off checks have their lines in the report instead.
"""

from __future__ import annotations

import logging
import os
from collections import defaultdict
from pathlib import Path

from calcheck.simulations.files import atomic_write_text

__all__ = ["draw_guarantee_pictures", "picture_tasks", "plot_coverage"]

logger = logging.getLogger(__name__)


def _series(cells, xkey="n"):
    """Cells grouped into lines: one per (law, B, alpha); per (law, alpha) against B."""
    groups = defaultdict(list)
    for c in cells:
        groups[(c["law"], c["n_bins"] if xkey != "n_bins" else "*", c["alpha"])].append(c)
    order = "n_bins" if xkey == "n_bins" else "n"
    return {k: sorted(v, key=lambda c: c[order]) for k, v in groups.items()}


def _label(key) -> str:
    law, n_bins, alpha = key
    return f"{law}, B={n_bins}" + ("" if alpha is None else f", a={alpha:g}")


def _plain_log_axis(axis, values):
    from matplotlib.ticker import FixedLocator, NullFormatter, NullLocator

    ticks = []
    for v in sorted(set(values)):  # labels closer than a factor 1.4 would overlap
        if not ticks or v >= 1.4 * ticks[-1]:
            ticks.append(v)
    if len(ticks) > 6:
        ticks = ticks[:: max(1, len(ticks) // 5)]
    axis.set_major_locator(FixedLocator(ticks))
    axis.set_major_formatter(lambda v, _: f"{v:g}")
    axis.set_minor_locator(NullLocator())
    axis.set_minor_formatter(NullFormatter())


_TIGHTNESS_CAP = 100.0
# a white halo keeps a label readable over the faint lines
_HALO = {"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none", "alpha": 0.85}
_X_LABEL = {"n": "n", "n_bins": "B (a limit: no sample)", "index": "cell"}


def _x(cell, key, j) -> float:
    return float(j + 1) if key == "index" else float(cell[key])


def _x_axis(checks: list) -> str:
    """Plot against n; against B for checks without a sample (limits: n = 0)."""
    cells = [c for check in checks for c in check["cells"]]
    if all(c["n"] > 0 for c in cells):
        return "n"
    return "n_bins" if all(c["n_bins"] > 0 for c in cells) else "index"


def _worst_key(series: dict):
    """The series holding the worst cell: smallest p-value, then smallest margin."""

    def badness(cells):
        return min((c["p_value"], c["coverage"] - c["claimed"]) for c in cells)

    return min(series, key=lambda k: badness(series[k]))


def _own_series(own: list, xkey: str) -> dict:
    """The lines of the own checks, their cells merged per (law, B, alpha) across checks."""
    series = {}
    for check in own:
        for key, cells in _series(check["cells"], xkey).items():
            series.setdefault(key, []).extend(cells)
    return series


def _worst_line(ax, key, cells, n, fail, floor) -> None:
    """The worst series in colour with its 95% Clopper-Pearson bars, labelled in the corner."""
    import numpy as np

    lo = np.maximum(1 - np.array([c["ci_high"] for c in cells]), floor)
    hi = np.maximum(1 - np.array([c["ci_low"] for c in cells]), floor)
    ax.errorbar(
        n,
        fail,
        yerr=[fail - lo, hi - fail],
        fmt="o-",
        ms=4,
        lw=1.6,
        color="C3",
        capsize=2,
        zorder=5,
    )
    label = f"worst: {key[0]}" + ("" if key[1] == "*" else f", B={key[1]}")
    ax.text(
        0.03,
        0.97,
        label,
        transform=ax.transAxes,
        ha="left",
        va="top",
        fontsize=7,
        color="C3",
        zorder=6,
        bbox=_HALO,
    )


def _tightness_points(n, cells) -> list[tuple]:
    """``(x, tightness)`` of the cells with a positive tightness, capped for the panel."""
    return [
        (x, min(c["tightness"], _TIGHTNESS_CAP))
        for x, c in zip(n, cells, strict=True)
        if isinstance(c["tightness"], float) and c["tightness"] > 0
    ]


def _law_lines(ax, mine: dict, alpha, xkey: str, floor: float) -> tuple[list, dict]:
    """One alpha's own series on its panel, the worst last (on top); ``(xs, tightness)``.

    ``xs``: every x drawn; ``tightness``: series key -> :func:`_tightness_points`, for the
    series that have any.
    """
    import numpy as np

    worst = _worst_key(mine)
    xs, tight_series = [], {}
    for key, cells in sorted(mine.items(), key=lambda kv: kv[0] == worst):
        n = np.array([_x(c, xkey, j) for j, c in enumerate(cells)], dtype=float)
        xs += list(n)
        fail = np.maximum(1 - np.array([c["coverage"] for c in cells]), floor)
        is_worst = key == worst
        if is_worst:
            _worst_line(ax, key, cells, n, fail, floor)
        else:
            ax.plot(n, fail, "o-", ms=2, lw=0.8, color="0.7", zorder=2)
        allowed = [1 - c["claimed"] for c in cells]
        if alpha is None or is_worst:  # the allowance: constant per alpha
            ax.plot(n, allowed, "--", lw=1.0, color="C3" if is_worst else "0.6", zorder=4)
        ok = _tightness_points(n, cells)
        if ok:
            tight_series[key] = ok
    return xs, tight_series


def _control_lines(ax, controls: list, alpha, xkey: str, floor: float) -> list:
    """The negative controls of one alpha as grey crosses; every x drawn."""
    xs = []
    for check in controls:
        for key, cells in _series(check["cells"], xkey).items():
            if key[2] != alpha:
                continue
            n = [_x(c, xkey, j) for j, c in enumerate(cells)]
            xs += n
            fail = [max(1 - c["coverage"], floor) for c in cells]
            ax.plot(n, fail, "x:", ms=4, lw=0.8, color="0.45", zorder=3)
    return xs


def _label_failure_axes(ax, alpha, n_laws: int, xkey: str, floor: float, reps) -> None:
    """Log scale from below the floor to above 1; the title says alpha, lines, replicates."""
    ax.set_yscale("log")
    ax.set_ylim(floor / 1.5, 1.5)
    ax.set_ylabel("failure rate of the event", fontsize=8)
    title = "" if alpha is None else f"alpha = {alpha:g}: "
    lines = f"{n_laws} laws" + (" x B" if xkey != "n_bins" else "")
    ax.set_title(f"{title}{lines}, {reps} replicates per point", fontsize=8)


def _tightness_lines(tight_ax, tight_series: dict) -> None:
    """The law the bound fits most closely in colour and labelled, the others faint."""
    if not tight_series:
        return
    closest = min(tight_series, key=lambda k: min(t for _, t in tight_series[k]))
    for key, points in sorted(tight_series.items(), key=lambda kv: kv[0] == closest):
        x, t = zip(*points, strict=True)
        if key == closest:
            tight_ax.plot(x, t, "o-", ms=4, lw=1.6, color="C0", zorder=5)
            alpha = "" if key[2] is None else f", a={key[2]:g}"
            where = "" if key[1] == "*" else f", B={key[1]}"
            tight_ax.text(
                0.97,
                0.97,
                f"closest: {key[0]}{where}{alpha}",
                transform=tight_ax.transAxes,
                ha="right",
                va="top",
                fontsize=7,
                color="C0",
                zorder=6,
                bbox=_HALO,
            )
        else:
            tight_ax.plot(x, t, "o-", ms=2, lw=0.8, color="0.7")


def _legend(fig, ax, controls: list) -> None:
    """The figure's legend below the panels, its handles drawn empty on ``ax``."""
    handles = [
        ax.plot([], [], "o-", color="C3", label="worst law (95% CP bars)")[0],
        ax.plot([], [], "o-", color="0.7", label="other laws")[0],
        ax.plot([], [], "--", color="C3", label="allowed (1 - claimed)")[0],
    ]
    if controls:
        control = "negative controls (must be above)"
        handles.append(ax.plot([], [], "x:", color="0.45", label=control)[0])
    # below the panels: loc="best" searched every drawn vertex for a free corner and took
    # about 3 s per picture (minutes for a full report); here the legend hides nothing
    fig.legend(handles=handles, loc="outside lower center", ncols=4, fontsize=7, frameon=False)


def _label_tightness_axes(tight_ax, all_t: list) -> None:
    """The line at 1 (exact), a log scale holding every point, label and title."""
    tight_ax.axhline(1.0, color="black", lw=0.8)
    tight_ax.set_yscale("log")
    if all_t:
        tight_ax.set_ylim(min(0.8, min(all_t) / 1.2), max(1.25, max(all_t) * 1.2))
    tight_ax.set_ylabel("bound / error quantile", fontsize=8)
    tight_ax.set_title(f"tightness (1: exact; < 1 fails; cap {_TIGHTNESS_CAP:g})", fontsize=8)


def _shared_x_axes(axes, xkey: str, all_n: list) -> None:
    """Every panel on the same log x axis, plain tick labels, margins around every x."""
    for ax in axes:
        ax.set_xscale("log")
        ax.set_xlabel(_X_LABEL[xkey], fontsize=8)
        ax.tick_params(labelsize=8)
        if all_n:
            _plain_log_axis(ax.xaxis, all_n)
            ax.set_xlim(min(all_n) / 1.35, max(all_n) * 1.35)


def _tightness_ticks(tight_ax) -> None:
    """Fixed, plainly labelled ticks on the tightness axis (no minor ones)."""
    from matplotlib.ticker import FixedLocator, NullLocator

    tight_ax.yaxis.set_major_locator(FixedLocator([0.5, 0.8, 1, 1.5, 2, 3, 5, 10, 20, 50, 100]))
    tight_ax.yaxis.set_major_formatter(lambda v, _: f"{v:g}")
    tight_ax.yaxis.set_minor_locator(NullLocator())


def _draw(gid: str, own: list, controls: list, reps):
    """Failure rate against n, one panel per alpha, and the tightness.

    Each panel answers one question: does the worst law stay below the allowed rate? The
    series holding the worst cell (smallest p-value) is drawn in colour and labelled; the
    other laws are faint grey, the negative controls grey crosses (they must lie above the
    allowance). The tightness panel highlights the law the bound fits most closely.
    """
    from matplotlib.figure import Figure

    xkey = _x_axis(own + controls)
    floor = 0.5 / reps if reps else 1e-4  # no failure at all: drawn at half a replicate
    series = _own_series(own, xkey)
    alphas = sorted({k[2] for k in series}, key=lambda a: -1.0 if a is None else -a)
    fig = Figure(figsize=(3.3 * len(alphas) + 3.3, 3.2), layout="constrained")
    axes = fig.subplots(1, len(alphas) + 1, width_ratios=(*([1.2] * len(alphas)), 1))
    fail_axes, tight_ax = axes[:-1], axes[-1]
    all_n, tight_series = [], {}
    for ax, alpha in zip(fail_axes, alphas, strict=True):
        mine = {k: v for k, v in series.items() if k[2] == alpha}
        xs, tight = _law_lines(ax, mine, alpha, xkey, floor)
        all_n += xs
        tight_series.update(tight)
        all_n += _control_lines(ax, controls, alpha, xkey, floor)
        _label_failure_axes(ax, alpha, len(mine), xkey, floor, reps)
    _tightness_lines(tight_ax, tight_series)
    _legend(fig, fail_axes[0], controls)
    fig.suptitle(gid, fontsize=9)
    # each series' key holds its alpha: no panel's points replace another's
    _label_tightness_axes(tight_ax, [t for ok in tight_series.values() for _, t in ok])
    _shared_x_axes((*fail_axes, tight_ax), xkey, all_n)
    _tightness_ticks(tight_ax)
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
    fig.savefig(tmp, dpi=110, format="png")  # about 1000 px wide: text readable at 100%
    os.replace(tmp, folder / name)
    return name


#: Sources of the pictures: a change redraws every one (with matplotlib's version, see
#: :func:`_picture_key`).
_PICTURE_SOURCES = ("theory_checks/report/pictures.py",)


def _picture_key(gid, own, controls, rates, reps) -> str:
    """What a picture is drawn from: its entries, the drawing code and matplotlib's version."""
    import matplotlib

    from calcheck.simulations.provenance import code_stamp, content_key

    return content_key(
        {
            "picture": [gid, own, controls, rates, reps],
            "code": code_stamp(*_PICTURE_SOURCES),
            "matplotlib": matplotlib.__version__,
        }
    )


def _key_file(folder: Path, name: str) -> Path:
    return folder / f".{name}.key"


def _drawn_already(folder: Path, name: str, key: str) -> bool:
    """Whether ``name`` in ``folder`` was drawn from what ``key`` hashes (and is still there)."""
    try:
        return (folder / name).is_file() and _key_file(folder, name).read_text() == key
    except (OSError, UnicodeDecodeError):
        return False


def _draw_one(gid, own, controls, rates, reps, folder) -> tuple[str, str]:
    """One guarantee's picture, drawn and saved: ``(gid, file name)``.

    A picture already in ``folder`` that was drawn from the same entries by the same code
    (its key beside it, ``.<name>.key``) is kept rather than drawn again: a rerun reads most
    results from the store's records, and drawing them all again took about 25 CPU-s of a
    quick run. The old key is removed before the picture is replaced and the new one written
    after it, so a picture cut short is drawn again. (The key does not cover a user's
    matplotlibrc.)
    """
    folder = Path(folder)
    name = f"{gid.replace('.', '_')}.png"
    key = _picture_key(gid, own, controls, rates, reps)
    if _drawn_already(folder, name, key):
        return gid, name
    fig = _draw(gid, own, controls, reps) if own else _draw_rates(gid, rates, reps)
    # the old key goes first: a process killed between the picture and its key leaves a
    # picture without one (drawn again), never a new picture beside an old key
    _key_file(folder, name).unlink(missing_ok=True)
    saved = _save(fig, folder, gid)
    atomic_write_text(_key_file(folder, name), key)
    return gid, saved


def picture_tasks(checks: list, reps, folder) -> list[tuple]:
    """The pictures of these check entries (``results.json``'s), as ``_draw_one`` arguments.

    One per guarantee with coverage checks of its own (its controls drawn with them), or
    with consistent rate checks; in the order of the checks.
    """
    by_guarantee: dict[str, tuple[list, list]] = {}
    rates: dict[str, list] = {}
    for check in checks:
        if check.get("kind") == "rate" and check["expect"] == "consistent":
            rates.setdefault(check["guarantee"], []).append(check)
            continue
        if check.get("kind") not in (None, "coverage") or not check.get("cells"):
            continue  # exponent, mean and trade-off checks: their lines are in the report
        own, controls = by_guarantee.setdefault(check["guarantee"], ([], []))
        (controls if check["expect"] == "violated" else own).append(check)
    tasks = [(g, own, ctl, [], reps, folder) for g, (own, ctl) in by_guarantee.items() if own]
    drawn_ids = {t[0] for t in tasks}
    tasks += [(g, [], [], rs, reps, folder) for g, rs in rates.items() if g not in drawn_ids]
    return tasks


def draw_guarantee_pictures(results: dict, folder, skip=frozenset()) -> dict[str, str]:
    """Draw one PNG per guarantee with coverage checks into ``folder``; ``{id: file name}``.

    Each file is written to a temporary name and renamed (atomic). Guarantees in ``skip``
    (drawn already, :mod:`.picture_drawer`) are left out.
    """
    folder = Path(folder)
    reps = results.get("meta", {}).get("reps")
    tasks = [t for t in picture_tasks(results["checks"], reps, folder) if t[0] not in skip]
    drawn = dict(_draw_one(*task) for task in tasks)
    logger.info("%d guarantee pictures in %s", len(drawn), folder)
    return drawn


# ------------------------------------------------------------- coverage against a grid key
def plot_coverage(results, x: str = "n", ax=None):
    """Coverage against ``x`` (n, or any grid key), with Clopper-Pearson intervals and the claim.

    :meth:`CheckResult.plot <calcheck.theory_checks.checks.check.CheckResult.plot>` draws
    every cell of one result on its own row; this draws how the coverage moves along a grid:
    one line per law and per value of the other grid keys (and per check, where there are
    several), each cell's interval as a bar, the claimed probability dashed and the flagged
    cells in red. Cells of several results join one line where they differ only in ``x``
    (``verify`` called once per n, say).

    Parameters
    ----------
    results : CheckResult, RunResult or sequence of CheckResult
        Coverage results (``verify``'s, ``run_checks``'s); one with several grid points is
        enough.
    x : str, default "n"
        The grid key along the horizontal axis: ``"n"``, ``"n_bins"``, ``"alpha"`` or a
        grid parameter of the experiments (``"points_per_bin"``, ``"n1"``...). A range over
        a factor of 10 or more is drawn on a log scale.
    ax : matplotlib Axes, optional
        Drawn on a new figure when omitted (its legend below the axes).

    Returns
    -------
    matplotlib Axes

    Raises
    ------
    ValueError
        For a result that is no coverage result, no results, or an ``x`` that no cell has
        (the message lists the keys they have) or that is not a number.

    Examples
    --------
    >>> from calcheck import verify
    >>> from calcheck.theory_checks.report.pictures import plot_coverage
    >>> result = verify("gr21.thm3", "uniform_half", n=[200, 500, 1000], n_bins=10, reps=200, rng=0)
    >>> ax = plot_coverage(result, x="n")
    >>> ax.get_xlabel()
    'n'
    """
    checked = _coverage_results(results)
    series = _coverage_series(checked, x)
    own = ax is None
    if own:
        from matplotlib.figure import Figure

        ax = Figure(figsize=(6.4, 4.2), layout="constrained").subplots()
    _draw_coverage(ax, series, x)
    ids = sorted({r.check.id for r in checked})
    failed = sum(not r.passed for r in checked)
    status = "as expected" if not failed else f"{failed} of {len(checked)} NOT as expected"
    shown = ", ".join(ids[:3]) + (f" and {len(ids) - 3} more" if len(ids) > 3 else "")
    ax.set_title(f"{shown}: coverage against {x} ({status})", fontsize=9)
    if own:  # a figure of our own: the legend goes below the axes, outside the data
        ax.figure.legend(fontsize=7, loc="outside lower center", ncol=2, frameon=False)
    else:
        ax.legend(fontsize=7, loc="best")
    return ax


def _coverage_results(results) -> list:
    """``results`` as a list of coverage results, refusing anything else."""
    if hasattr(results, "cells") and hasattr(results, "check"):
        items = [results]
    elif hasattr(results, "results") and not isinstance(results, dict):  # a RunResult
        items = list(results.results)
    elif isinstance(results, list | tuple):
        items = list(results)
    else:
        raise ValueError(
            "results must be a CheckResult, a RunResult or a sequence of CheckResults, got "
            f"{type(results).__name__}"
        )
    if not items:
        raise ValueError("results is empty: give at least one coverage result")
    for item in items:
        if getattr(item, "kind", None) != "coverage" or not getattr(item, "cells", None):
            what = getattr(getattr(item, "check", None), "id", type(item).__name__)
            raise ValueError(
                f"results: {what} is no coverage result with cells (kind "
                f"{getattr(item, 'kind', None)!r}); plot_coverage draws coverage checks"
            )
    return items


def _grid_point(cell, experiment) -> dict:
    """The grid values of a cell: the experiment's own (scalars), then alpha.

    n and B come from the cell only where the experiment has no field of that name
    (gpr20's n is n1 + n2: a line along n1 must not split on it).
    """
    import numpy as np

    fields = getattr(experiment, "__dict__", {}) if experiment is not None else {}
    point = {
        k: v.item() if isinstance(v, np.generic) else v
        for k, v in fields.items()
        if not k.startswith("_") and isinstance(v, int | float | str | np.number)
    }
    point["alpha"] = cell.alpha
    return point


def _cell_x(cell, point: dict, x: str):
    if x in point:
        return point[x]
    return getattr(cell, x) if x in ("n", "n_bins") else None


def _coverage_series(results: list, x: str) -> dict:
    """``{(check id, law, other grid values): [(x, cell), ...]}``, each sorted along x."""
    series: dict[tuple, list] = defaultdict(list)
    keys: set[str] = {"n", "n_bins"}
    for result in results:
        by_label = {e.label(): e for e in result.check.experiments}
        for cell in result.cells:
            point = _grid_point(cell, by_label.get(cell.experiment))
            keys |= set(point)
            value = _cell_x(cell, point, x)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValueError(f"x must be a numeric grid key; {x!r} is {value!r}")
            rest = tuple(sorted((k, v) for k, v in point.items() if k != x))
            series[(result.check.id, cell.law, rest)].append((float(value), cell))
    if not series:
        raise ValueError(f"x must be a grid key of the cells, one of {sorted(keys)}; got {x!r}")
    return {k: sorted(v, key=lambda p: p[0]) for k, v in series.items()}


def _series_labels(series: dict) -> dict:
    """A short label per line: its law, and of the rest only what differs between lines."""
    ids = {k[0] for k in series}
    varying = {
        name
        for name in {n for k in series for n, _ in k[2]}
        if len({dict(k[2]).get(name) for k in series}) > 1
    }
    labels = {}
    for key in series:
        check_id, law, rest = key
        parts = [check_id] if len(ids) > 1 else []
        parts += [law]
        parts += [
            f"{'B' if n == 'n_bins' else 'a' if n == 'alpha' else n}={v:g}"
            if isinstance(v, int | float)
            else f"{n}={v}"
            for n, v in rest
            if n in varying
        ]
        labels[key] = ", ".join(parts)
    return labels


def _draw_coverage(ax, series: dict, x: str) -> None:
    """The lines, their intervals, the claims and the flagged cells; the axes' labels."""
    import numpy as np

    labels = _series_labels(series)
    # a claim constant along every line (1 - alpha) is one black line per value, labelled;
    # one that moves with x (1 - bound) is dashed in its line's colour
    flat = all(len({c.verdict.claimed for _, c in cells}) == 1 for cells in series.values())
    claims = sorted({c.verdict.claimed for cells in series.values() for _, c in cells})
    xs_all, flagged = [], False
    for i, (key, points) in enumerate(series.items()):
        colour = f"C{i % 10}"
        xs = np.array([p[0] for p in points])
        v = [c.verdict for _, c in points]
        cov = np.array([t.coverage for t in v])
        err = [cov - np.array([t.ci_low for t in v]), np.array([t.ci_high for t in v]) - cov]
        ax.errorbar(xs, cov, yerr=err, fmt="o-", ms=4, lw=1, capsize=3, color=colour)
        ax.plot([], [], "o-", color=colour, label=labels[key])  # a legend entry without bars
        if not flat:
            ax.plot(xs, [t.claimed for t in v], "--", lw=1, color=colour)
        bad = np.array([c.violated for _, c in points])
        if bad.any():
            ax.scatter(xs[bad], cov[bad], s=60, facecolor="none", edgecolor="tab:red", zorder=3)
            flagged = True
        xs_all += list(xs)
    if flat:
        for claimed in claims:
            ax.axhline(claimed, ls="--", lw=1, color="black")
            if len(claims) > 1:
                ax.annotate(
                    f"claimed {claimed:g}",
                    (0.01, claimed),
                    xycoords=("axes fraction", "data"),
                    xytext=(0, 2),
                    textcoords="offset points",
                    fontsize=7,
                )
        ax.plot([], [], "--", lw=1, color="black", label="claimed")
    else:
        ax.plot([], [], "--", color="grey", label="claimed (in each line's colour)")
    if flagged:
        ax.scatter([], [], s=60, facecolor="none", edgecolor="tab:red", label="violated")
    positive = [v for v in xs_all if v > 0]
    if len(positive) == len(xs_all) and max(xs_all) >= 10 * min(xs_all):
        ax.set_xscale("log")
        _plain_log_axis(ax.xaxis, xs_all)
    levels = {c.verdict.ci_level for cells in series.values() for _, c in cells}
    level = f"{100 * levels.pop():g}% " if len(levels) == 1 else ""
    ax.set_xlabel(_X_LABEL.get(x, x) if x != "n_bins" else "B (bins)")
    ax.set_ylabel(f"coverage, {level}Clopper-Pearson interval", fontsize=8)
    ax.tick_params(labelsize=7)
