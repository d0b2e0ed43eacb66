"""What a person sees of a search: the worst law drawn, a stored record, a report section.

:func:`save_search` writes one search (:class:`~calcheck.theory_checks.search.result.SearchResult`)
into ``<out>/search/``: ``<name>.json`` (the record), ``<name>.png`` (the law found: score
density and eta, the random-sampling law beside it) and ``index.json`` (every search of
that folder, newest last per name), each atomically. :func:`search_section` renders them
for the HTML report (:func:`calcheck.theory_checks.report.html.write_html`). :func:`sweep` runs the
quick search on every searchable guarantee and its wrong-bound controls (the README's table).
"""

from __future__ import annotations

import html
import json
import logging
import os
import re
from pathlib import Path

import numpy as np

from calcheck.simulations.files import atomic_write_text, json_text, read_back, writable_folder
from calcheck.simulations.laws.families import get_family

from ..catalog.search_sweep import KNOWN_FALSE, NOT_SEARCHED, SWEEP

__all__ = [
    "KNOWN_FALSE",
    "SWEEP",
    "check_search_folder",
    "draw_law",
    "save_search",
    "search_section",
    "stored_name",
    "sweep",
    "sweep_table",
]

logger = logging.getLogger(__name__)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)


def draw_law(ax, law, *, color="tab:red", label="law found"):
    """Score density (histogram of a fixed-seed draw, atoms as stems) and eta on one axis."""
    if getattr(law, "family", None) != "binary":
        ax.text(0.5, 0.5, f"no picture for {law.family} laws", ha="center", va="center")
        return
    scores = law.scores
    cont = 1.0 - float(sum(scores.atom_probs))
    grid = np.linspace(0.0, 1.0, 401)
    twin = ax.twinx()
    if cont > 1e-12:
        from scipy.stats import beta

        dens = cont * beta.pdf(grid[1:-1], scores.a, scores.b)
        twin.fill_between(grid[1:-1], dens, color="0.85", label="score density (continuous)")
        ax.plot(grid, law.conditional_mean(grid), color=color, linewidth=1.6, label=label)
    if scores.atoms:
        etas = law.atom_means()
        twin.vlines(scores.atoms, 0, scores.atom_probs, color="0.5", linewidth=3, label="atom mass")
        ax.plot(scores.atoms, etas, "o", color=color, markersize=6, label=f"{label}: atom eta")
    ax.axhline(0.5, color="k", linestyle=":", linewidth=0.8)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlim(0, 1)
    ax.set_xlabel("score s")
    ax.set_ylabel("eta(s) = E[Y | S = s]")
    twin.set_ylabel("score density / atom mass", color="0.4")
    ax.set_zorder(twin.get_zorder() + 1)
    ax.patch.set_visible(False)


def _picture(result, family, path: Path) -> Path | None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    found = [f for f in (result.search, result.random) if f is not None]
    fig, axes = plt.subplots(1, len(found), figsize=(4.4 * len(found), 3.3), squeeze=False)
    for ax, f in zip(axes[0], found, strict=True):
        draw_law(ax, family.law(np.asarray(f.theta)), label=f.method)
        v = f.fresh.verdict
        ax.set_title(
            f"{f.method}: fresh {f.fresh.outcome}, failure {f.fresh.failure_rate:.4f}\n"
            f"coverage {v.coverage:.4f} [{v.ci_low:.4f}, {v.ci_high:.4f}], claimed "
            f"{v.claimed:.3f}",
            fontsize=8,
        )
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=6, loc="upper left")
    fig.suptitle(f"{result.target} on {family.name}", fontsize=9)
    fig.tight_layout()
    tmp = path.with_name(f".{path.name}.tmp.png")
    fig.savefig(tmp, dpi=110)
    plt.close(fig)
    os.replace(tmp, path)
    return path


def stored_name(target: str, family, grid: dict, alpha: float, seed: int) -> str:
    """The name (without suffix) of a search's record and picture under ``<out>/search/``."""
    grid_text = "_".join(f"{k}{v}" for k, v in grid.items())
    return _slug(f"{target}-{family.name}-{grid_text}-a{float(alpha):g}-s{seed}")


def check_search_folder(out_dir, searches) -> Path:
    """Before any work: ``<out_dir>/search`` can take the files of ``searches``.

    ``searches`` holds ``(target, family, grid, alpha, seed)`` of each search to be stored.
    A file in the way of the folder, or a folder where its index or a search's record or
    picture goes, raises ValueError naming it (not an IsADirectoryError after the search).
    """
    names = [stored_name(*s) for s in searches]
    files = ["index.json", *(f"{name}{ext}" for name in names for ext in (".json", ".png"))]
    return writable_folder(Path(out_dir) / "search", "--out", files=files)


def save_search(result, family, out_dir) -> dict:
    """Store one search in ``<out_dir>/search/`` (record, picture, index); return its entry."""
    folder = Path(out_dir) / "search"
    folder.mkdir(parents=True, exist_ok=True)
    name = stored_name(result.target, family, result.grid, result.alpha, result.seed)
    record = result.to_dict() | {"seconds": round(result.seconds, 2)}
    atomic_write_text(folder / f"{name}.json", json_text(record, indent=1))
    png = _picture(result, family, folder / f"{name}.png")
    entry = {
        "name": name,
        "target": result.target,
        "family": family.name,
        "summary": result.summary(),
        "found": result.found,
        "picture": None if png is None else png.name,
    }
    index_path = folder / "index.json"
    with read_back(index_path, "the index of stored searches"):
        index = json.loads(index_path.read_text()) if index_path.is_file() else {"searches": []}
        index["searches"] = [e for e in index["searches"] if e["name"] != name] + [entry]
    atomic_write_text(index_path, json_text(index, indent=1))
    return entry


def search_section(index_path, rel: str) -> str:
    """HTML of every stored search: the law found (picture) and both fresh-seed verdicts."""
    index = json.loads(Path(index_path).read_text())
    parts = [
        "<h2>Worst laws found (adversarial search)</h2><p class='small'>Each search "
        "maximises the failure rate or tightness of one guarantee over a law family with "
        "common random numbers; the law found is then re-checked on a fresh root seed "
        "(exact binomial verdict). Random sampling of the family at the same budget is "
        "shown beside it. Curves: eta(s); grey: score density, bars: atom masses.</p>"
    ]
    for e in index["searches"]:
        parts.append(f"<h3>{html.escape(e['target'])} on {html.escape(e['family'])}</h3>")
        parts.append(f"<pre class='small'>{html.escape(e['summary'])}</pre>")
        if e.get("picture"):
            parts.append(f"<img class='law' src='{rel}{e['picture']}' alt='{e['name']}'>")
    return "".join(parts)


def _controls():
    """The catalog controls of searchable guarantees that change only the bound."""
    from .driver import _catalog_controls, resolve_target

    out = []
    stated = {row[0]: row for row in SWEEP}
    for cid in sorted(_catalog_controls()):
        try:
            guarantee, _ = resolve_target(cid)
        except ValueError:
            continue
        if guarantee in stated:
            # the guarantee's criterion: mean_ratio reaches eta = 1/2, where a scaled bound
            # fails first (failure alone stopped short of it on nch14.eq9 x 0.6)
            _, fam, opts, grid, alpha, criterion, *own = stated[guarantee]
            out.append((cid, fam, opts, grid, alpha, criterion, *own))
    return tuple(out)


def sweep(*, out_dir=None, seed=0, n_jobs=1, backend="loky", budget="quick", progress=None):
    """Run the quick search on :data:`SWEEP` and on every wrong-bound control of it.

    Returns
    -------
    list of (row, SearchResult or None, str)
        The row, its result (None when not searchable) and, if not, why.
    """
    from ..catalog import studiable
    from .driver import search

    rows = (*SWEEP, *_controls())
    if out_dir is not None:  # before any search: a folder where one's files go is refused
        check_search_folder(
            out_dir, [(r[0], get_family(r[1], **r[2]), r[3], r[4], seed) for r in rows]
        )
    done = []
    for i, row in enumerate(rows):
        target, fam_name, opts, grid, alpha, criterion, *own = row
        family = get_family(fam_name, **opts)
        try:
            result = search(
                target,
                family,
                grid=dict(grid),
                alpha=alpha,
                budget=own[0] if own and budget == "quick" else budget,
                criterion=criterion,
                seed=seed,
                n_jobs=n_jobs,
                backend=backend,
            )
        except (ValueError, TypeError) as exc:
            # one row's failure is reported in the table, not lost with the others
            logger.error("search of %s failed: %s", target, exc)
            done.append((row, None, f"error: {exc}"))
            continue
        if out_dir is not None:
            save_search(result, family, out_dir)
        done.append((row, result, ""))
        if progress is not None:
            progress(target, i + 1, len(rows), result)
    covered = {r[0] for r in SWEEP}
    for gid, adapter in sorted(studiable().items()):
        if gid not in covered:
            why = NOT_SEARCHED.get(gid, f"no sweep row ({'/'.join(adapter.families)} laws)")
            done.append(((gid, None, None, None, None, None), None, why))
    return done


def _suite_worst(results: dict | None, target: str, grid: dict, alpha: float) -> str:
    """The suite's hand-picked laws: the worst cell of the same check in a run's results."""
    if not results:
        return ""
    check = next((c for c in results.get("checks", []) if c["id"] == target), None)
    if check is None or not check.get("cells"):
        return "(not in the run)"
    cells = [c for c in check["cells"] if c.get("alpha") == alpha] or check["cells"]
    same = [c for c in cells if all(c.get(k) == v for k, v in grid.items() if k in c)]
    pool = [c for c in (same or cells) if c.get("coverage") is not None]
    if not pool:
        return ""
    worst = max(pool, key=lambda c: 1.0 - c["coverage"])
    where = ", ".join(f"{k}={worst[k]}" for k in ("n", "n_bins") if worst.get(k) is not None)
    return (
        f"{worst['law']} ({where}{'' if same else '; other cells'}): failure "
        f"{1.0 - worst['coverage']:.4f}, tightness {_g(worst.get('tightness'))}"
    )


def _g(x) -> str:
    """A number of a JSON record (non-finite numbers are stored tagged, or as strings)."""
    if isinstance(x, dict) and set(x) == {"__float__"}:  # theory_checks.results.export's tag
        x = float(x["__float__"])
    return f"{x:.3g}" if isinstance(x, int | float) else str(x)


def _fresh(f: dict) -> str:
    v, fr = f["fresh"]["verdict"], f["fresh"]
    return (
        f"{fr['outcome']}, failure {fr['failure_rate']:.4f} [{1 - v['ci_high']:.4f}, "
        f"{1 - v['ci_low']:.4f}], tightness {_g(fr['tightness'])}"
    )


def record_row(rec: dict, results: dict | None = None) -> str:
    """One markdown row of a stored search record (:meth:`SearchResult.to_dict`)."""
    grid = ", ".join(f"{k}={v}" for k, v in rec["grid"].items())
    law = {k: v for k, v in rec["search"]["law"].items() if k != "family"}
    law_txt = ", ".join(
        f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}" for k, v in law.items()
    )
    if rec["target"] in KNOWN_FALSE and rec["search"]["fresh"]["outcome"] == "violated":
        law_txt += f" (stated form known false: {KNOWN_FALSE[rec['target']]})"
    b = rec["budget"]
    if b["name"] != "quick":
        grid += f" (budget {b['population'] * (b['generations'] + 1)} x {b['reps']}, fresh "
        grid += f"{b['fresh_reps']})"
    ref = "" if not rec.get("reference") else f"{rec['reference']['failure']:.4f}"
    rnd = _fresh(rec["random"]) if rec.get("random") else ""
    suite = _suite_worst(results, rec["target"], rec["grid"], rec["alpha"])
    return (
        f"| {rec['target']} | {rec['family']['family']}, {grid}, {rec['alpha']:g} | {law_txt} | "
        f"{_fresh(rec['search'])} | {rnd} | {ref} | {suite} |"
    )


def sweep_table(done, results: dict | None = None) -> str:
    """Markdown table of a sweep (the README's).

    ``results`` (a run's ``results.json``) adds the worst of the suite's own laws beside
    each search.
    """
    lines = [
        "| target | family, grid, alpha | search: law found | fresh seed (search) | "
        "random sampling, fresh seed | worst constant eta, exact | suite's worst law (run) |",
        "|---|---|---|---|---|---|---|",
    ]
    for row, res, why in done:
        if res is None:
            lines.append(f"| {row[0]} | not searched: {why} | | | | | |")
        else:
            lines.append(record_row(res.to_dict(), results))
    return "\n".join(lines)
