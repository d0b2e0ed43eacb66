"""A run's report from Python results: the files ``calcheck run`` writes, from your results.

:func:`report` takes the results of :func:`calcheck.verify`, of
:func:`~calcheck.theory_checks.running.runner.run_checks` or read back with ``from_json`` and writes
the same ``results.json``, ``report.md``, ``report.html`` and per-guarantee pictures
(``plots/``) as ``calcheck run --out`` does for the same checks: the same functions write
them (:func:`~calcheck.theory_checks.report.files.write_report`,
:func:`~calcheck.theory_checks.report.html.write_html`), every file atomically.
"""

from __future__ import annotations

from pathlib import Path

from calcheck.simulations.files import writable_folder
from calcheck.simulations.provenance import package_version

__all__ = ["FORMATS", "report"]

#: What :func:`report` can write: ``"all"`` (markdown, HTML and its pictures), ``"markdown"``
#: or ``"html"``; ``results.json`` is always written (the HTML page is read from it).
FORMATS = ("all", "markdown", "html")
#: Said where the CLI names its command line (results from Python have none).
FROM_PYTHON = "the Python code that made these results (calcheck.report)"


def _results(results) -> list:
    """A result, a RunResult or a sequence of results, as a non-empty list of results."""
    if hasattr(results, "results") and hasattr(results, "stats"):  # a RunResult
        results = results.results
    items = list(results) if isinstance(results, list | tuple) else [results]
    if not items:
        raise ValueError("results is empty: pass the results of verify or run_checks")
    for i, r in enumerate(items):
        if not all(hasattr(r, a) for a in ("check", "verdict", "passed", "evidence")):
            raise ValueError(
                f"results[{i}] is of type {type(r).__name__}, not a check's result (a CheckResult "
                "of calcheck.verify, a series check's result or a RunResult's results)"
            )
    ids = [r.check.id for r in items]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        raise ValueError(f"results holds check ids {twice} more than once; one result per check")
    return items


def _one(values, what: str):
    """The common value of ``values``, or all of them in words if they differ."""
    distinct = sorted(set(values))
    if len(distinct) == 1:
        return distinct[0]
    return ", ".join(f"{v:g}" for v in distinct) + f" ({what})"


def report(results, out, *, format="all", title=None, seed=None, command=None) -> dict:
    """Write the report of ``results`` into the folder ``out``, as ``calcheck run`` does.

    Parameters
    ----------
    results : CheckResult, RunResult or sequence of results
        Results of :func:`calcheck.verify`, ``run_checks`` or ``from_json`` (a result read
        back without its live check reports the same).
    out : str or Path
        Folder to write into (created). An earlier report there of other checks is copied
        to ``out/previous/<time>/`` first, as the CLI does.
    format : {"all", "markdown", "html"}, default "all"
        Which report to write beside ``results.json`` (a report of the other format
        already in ``out`` is left as it is).
    title : str, optional
        Heading of the report (default: the CLI's, "calcheck run report" / "calcheck report").
    seed : int, optional
        The root seed the results were computed with (the results do not hold it), shown in
        the report; "not given" without it.
    command : str, optional
        What regenerates the results, shown in the report (default: a note that they come
        from Python).

    Returns
    -------
    dict
        The paths written, by kind: ``"json"`` and ``"markdown"`` or ``"html"`` and
        ``"plots"`` (both with ``"all"``), and ``"previous"`` where an earlier report was kept.

    Raises
    ------
    ValueError
        For an empty ``results`` or an item that is not a check's result, a check id twice,
        an unknown ``format`` or a ``title`` that is not a string, or an ``out`` that is a
        file or not writable (the message names it).

    Examples
    --------
    >>> import tempfile
    >>> from calcheck import verify
    >>> from calcheck.theory_checks.report.from_results import report
    >>> result = verify("gr21.thm3", "uniform_logistic", n=1000, n_bins=10, reps=200, rng=0)
    >>> paths = report(result, tempfile.mkdtemp(), seed=0, format="markdown")
    >>> sorted(paths)
    ['json', 'markdown']
    """
    from .files import results_to_dict, write_report

    items = _results(results)
    folder = _report_folder(out, format, title)
    meta = _meta(items, seed, command)
    data = results_to_dict(items, meta)
    md = format in ("all", "markdown")
    paths = write_report(items, folder, meta, data=data, title=title, markdown=md)
    written = {"json": Path(paths["json"])}
    if paths["previous"] is not None:
        written["previous"] = Path(paths["previous"])
    if md:
        written["markdown"] = Path(paths["markdown"])
    if format in ("all", "html"):
        written["html"] = _write_html_page(data, folder, paths["json"], title)
        written["plots"] = folder / "plots"
    return written


def _report_folder(out, format, title) -> Path:
    """The folder ``out`` (created), refusing an unknown ``format`` or a ``title`` not a string.

    Raises ValueError naming the argument, also for an ``out`` that is a file, not
    writable, or holds a file named ``plots`` (the report's pictures folder).
    """
    if format not in FORMATS:
        raise ValueError(f"format must be one of {list(FORMATS)}, got {format!r}")
    if title is not None and not isinstance(title, str):
        raise ValueError(f"title must be a string, got {title!r}")
    folder = writable_folder(out, "out", files=("results.json", "report.md", "report.html"))
    if (folder / "plots").exists() and not (folder / "plots").is_dir():
        raise ValueError(
            f"out {str(folder)!r} holds a file 'plots' where the report keeps a "
            "folder; move it away or choose another folder"
        )
    return folder


def _meta(items: list, seed, command) -> dict:
    """The report's ``meta``: what the results and the caller say of how they were made."""
    return {
        "seed": seed,
        "reps": _one([r.reps for r in items], "differs by check"),
        "false_alarm": _one([float(r.false_alarm) for r in items], "differs by check"),
        "version": package_version(),
        "command": FROM_PYTHON if command is None else str(command),
    }


def _write_html_page(data: dict, folder: Path, results_json, title) -> Path | None:
    """Draw the pictures into ``folder/plots`` and write ``report.html``; its path."""
    from .html import write_html
    from .pictures import draw_guarantee_pictures

    draw_guarantee_pictures(data, folder / "plots")
    return write_html(
        folder / "report.html",
        results_json=results_json,
        pictures=folder / "plots",
        # as the CLI's: the figures and searches stored in the same folder, if any
        figures_index=folder / "figures" / "index.json",
        searches=folder / "search" / "index.json",
        title=title,
    )
