"""Index of paper figures: id -> module -> caption, and their regeneration."""

from __future__ import annotations

import json
import logging
import os
import time
from importlib import import_module
from pathlib import Path

from calcheck.simulations.files import atomic_write_text, json_text
from calcheck.simulations.provenance import package_version

from .cache import figure_code_stamp
from .data import recording_reads

__all__ = [
    "FIGURE_MODULES",
    "PAPERS",
    "UNAVAILABLE",
    "figure_modules",
    "fill_caches",
    "get_figure",
    "regenerate",
    "select_figures",
    "unavailable",
]

logger = logging.getLogger(__name__)

#: Paper key -> package of its figures (each defines ``FIGURES``: id -> module).
PAPERS = ("gr21", "gpr20", "gr22", "klm19", "nch14")

FIGURE_MODULES = {
    fid: mod
    for paper in PAPERS
    for fid, mod in import_module(f"calcheck.figures.{paper}").FIGURES.items()
}

#: Figure id -> why it cannot be regenerated (a paper package's ``UNAVAILABLE``).
UNAVAILABLE = {
    fid: why
    for paper in PAPERS
    for fid, why in getattr(import_module(f"calcheck.figures.{paper}"), "UNAVAILABLE", {}).items()
}


def _plugin_items(name: str) -> dict:
    """A dict attribute (``FIGURES``, ``UNAVAILABLE``) of the plugin papers, own ids only."""
    from calcheck.bounds.registry import plugin_papers

    return {
        fid: value
        for key, module in plugin_papers().items()
        for fid, value in getattr(module, name, {}).items()
        if fid.startswith(key + ".")
    }


def figure_modules() -> dict:
    """Figure id -> module path: the built-in papers', then the plugin papers'."""
    return FIGURE_MODULES | _plugin_items("FIGURES")


def unavailable() -> dict:
    """Figure id -> why it cannot be regenerated (plugin papers' included)."""
    return UNAVAILABLE | _plugin_items("UNAVAILABLE")


def get_figure(fig_id: str):
    """The module of a figure id."""
    why, modules = unavailable(), figure_modules()
    if fig_id in why:
        raise ValueError(f"figure {fig_id} cannot be regenerated: {why[fig_id]}")
    if fig_id not in modules:
        raise ValueError(f"unknown figure id {fig_id!r}; known: {sorted(modules)}")
    return import_module(modules[fig_id])


def select_figures(patterns) -> list[str]:
    """Figure ids matching ids or prefixes (``gr21`` selects every gr21 figure)."""
    why, modules = unavailable(), figure_modules()
    if not patterns:
        return list(modules)
    missing = [p for p in patterns if p in why]
    if missing:
        raise ValueError("; ".join(f"figure {p} cannot be regenerated: {why[p]}" for p in missing))
    chosen = [f for f in modules if any(f == p or f.startswith(p + ".") for p in patterns)]
    if not chosen:
        raise ValueError(f"{patterns!r} matches no figure; known: {sorted(modules)}")
    return chosen


def _fill_one(task, log_level):
    """Run one cache task ``(key, fill)`` in a worker; returns ``(key, seconds)``."""
    from calcheck.simulations.parallel import LOG_FORMAT

    if not logging.getLogger().handlers:  # a fresh worker: log as the main process does
        logging.basicConfig(level=log_level, format=LOG_FORMAT)
    key, fill = task
    t0 = time.perf_counter()
    fill()
    return key, time.perf_counter() - t0


def fill_caches(fig_ids, cache_dir, *, reps=100, seed=2021, data_root=None, jobs=2, on_task=None):
    """Fill the figures' cache entries in parallel, before the figures are computed.

    A figure module may define ``cache_tasks(cache_dir, reps=, seed=, data_root=)``: its
    expensive, independent cache entries as ``(key, fill)`` pairs (gr22: one per network,
    whose Dirichlet fit on CIFAR-100 takes about a minute). The tasks of all ``fig_ids``
    (one per key) run on ``jobs`` worker processes; each ``fill()`` computes its entry and
    writes it to ``cache_dir`` atomically (or reads it, if cached), and the figures then read
    them. Every entry is computed by the same deterministic code as without workers (the
    fits run single-threaded), so the figures do not depend on ``jobs``.

    ``on_task(key, seconds, done, total)`` is called as each task ends (progress).

    Returns
    -------
    int
        The number of tasks run.
    """
    if not isinstance(jobs, int) or isinstance(jobs, bool) or (jobs < 1 and jobs != -1):
        raise ValueError(f"jobs must be a positive integer or -1, got {jobs!r}")
    tasks: dict = {}
    for fig_id in fig_ids:
        make_tasks = getattr(get_figure(fig_id), "cache_tasks", None)
        if make_tasks is not None:
            for key, fill in make_tasks(cache_dir, reps=reps, seed=seed, data_root=data_root):
                tasks.setdefault(key, fill)
    if not tasks:
        return 0
    from contextlib import ExitStack

    from calcheck.simulations.parallel import parallel_results

    with ExitStack() as stack:
        results = parallel_results(
            _fill_one,
            [(task, logging.getLogger().getEffectiveLevel()) for task in tasks.items()],
            jobs,
            "loky",
            stack,
        )
        for done, (key, seconds) in enumerate(results, start=1):
            logger.info("cache entry %s filled in %.1f s", key, seconds)
            if on_task is not None:
                on_task(key, seconds, done, len(tasks))
    return len(tasks)


def regenerate(
    fig_ids,
    out_dir,
    *,
    reps=100,
    seed=2021,
    data_root=None,
    formats=("png", "pdf"),
    command="calcheck figures",
    on_figure=None,
    jobs=1,
    on_task=None,
) -> list[dict]:
    """Compute (or read from the cache), draw and save figures; write ``index.json``.

    ``on_figure(entry, done, total)`` is called after each figure is saved (progress).
    ``jobs`` other than 1 first fills the figures' independent cache entries on that many
    worker processes (:func:`fill_caches`, which calls ``on_task``); the figures are the
    same for any ``jobs``.

    Returns
    -------
    list of dict
        One entry per figure: id, module, caption, files, findings, seconds, command,
        reps, seed, code and ``data_files`` (each data file read: path -> size and hash).
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    cache_dir = out / "cache"
    # what a figure's computation (and its cache entries) depends on besides its id
    settings = {"reps": reps, "seed": seed, "data_root": data_root}
    if jobs != 1:
        fill_caches(fig_ids, cache_dir, **settings, jobs=jobs, on_task=on_task)
    entries = []
    for fig_id in fig_ids:
        entries.append(_regenerate_one(fig_id, out, cache_dir, settings, formats, command))
        logger.info("%s done in %.1f s", fig_id, entries[-1]["seconds"])
        if on_figure is not None:
            on_figure(entries[-1], len(entries), len(fig_ids))
    _write_index(out, entries)
    return entries


def _regenerate_one(fig_id, out: Path, cache_dir: Path, settings: dict, formats, command) -> dict:
    """Compute (or read from the cache), draw and save one figure; its ``index.json`` entry.

    ``settings``: the ``reps``, ``seed`` and ``data_root`` the figure is computed with.
    """
    mod = get_figure(fig_id)
    t0 = time.perf_counter()
    with recording_reads() as reads:
        data = mod.compute(cache_dir, **settings)
    fig = mod.draw(data)
    fig.suptitle(fig_id, fontsize=9, x=0.01, ha="left")
    files = _save_figure(fig, out, fig_id, formats)
    found = mod.findings(data) if hasattr(mod, "findings") else []
    return {
        "id": fig_id,
        "module": mod.__name__,
        "caption": mod.CAPTION,
        "files": files,
        "findings": found,
        "seconds": round(time.perf_counter() - t0, 2),
        "command": f"{command} {fig_id}",
        "reps": settings["reps"],
        "seed": settings["seed"],
        "code": _code(fig_id, mod),
        "data_files": dict(sorted(reads.items())),
    }


def _save_figure(fig, out: Path, fig_id: str, formats) -> list[str]:
    """Save ``fig`` in each format into ``out``; the file names."""
    files = []
    for fmt in formats:
        path = out / f"{fig_id.replace('.', '_')}.{fmt}"
        tmp = out / f".{path.name}.tmp"
        fig.savefig(tmp, dpi=130, format=fmt)
        os.replace(tmp, path)  # atomic: a killed run never leaves half a figure
        files.append(path.name)
    return files


def _write_index(out: Path, entries: list[dict]) -> None:
    """Merge ``entries`` into ``out/index.json`` (replacing those of the same ids), by id."""
    index = out / "index.json"
    previous = json.loads(index.read_text())["figures"] if index.is_file() else []
    merged = {e["id"]: e for e in previous} | {e["id"]: e for e in entries}
    atomic_write_text(
        index,
        json_text(
            {"version": package_version(), "figures": [merged[k] for k in sorted(merged)]},
            indent=1,
            default=_json_default,
        ),
    )


def _code(fig_id: str, module) -> str:
    """The figure's code stamp; a plugin's figure adds the hash of its module's source."""
    from calcheck.simulations.experiments.base import foreign_source_hash

    outside = foreign_source_hash(module)
    stamp = figure_code_stamp(fig_id)
    return stamp if outside is None else f"{stamp}+{outside}"


def _json_default(x):
    import numpy as np

    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    raise TypeError(f"not JSON serialisable: {type(x)}")
