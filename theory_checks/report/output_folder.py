"""The report page of an output folder, and the check that it can be read back.

``calcheck run``, ``search`` and ``figures`` write into one folder (``--out``):
``results.json``, ``plots/``, ``figures/index.json``, ``search/index.json``. The page that
shows them all is rendered from that layout here, its one home.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from .html import write_html

__all__ = ["check_read_back", "render_folder_report"]


def render_folder_report(folder, *, page=None, results: bool = True, figures_index=None):
    """Write the report page of ``folder``; the path written, or None when nothing to show.

    Parameters
    ----------
    folder : path
        The output folder (``--out`` of ``calcheck run``).
    page : path, optional
        Where the page goes (default ``folder / "report.html"``).
    results : bool
        Whether the page reads ``folder / "results.json"`` (a run about to rewrite it does
        not).
    figures_index : path, optional
        The figures' index (default ``folder / "figures" / "index.json"``; ``calcheck
        figures --out`` may put it elsewhere).
    """
    folder = Path(folder)
    return write_html(
        folder / "report.html" if page is None else page,
        results_json=folder / "results.json" if results else None,
        figures_index=folder / "figures" / "index.json" if figures_index is None else figures_index,
        pictures=folder / "plots",
        searches=folder / "search" / "index.json",
    )


def check_read_back(folder, *, results: bool = True) -> None:
    """Before any work: the files of earlier commands that the report reads back are sound.

    The report (re-rendered at the end of ``run`` and ``search``) reads ``results.json``
    (unless ``results`` is False: a run rewrites it), the figures' and the searches'
    index, perhaps edited by hand since; it is rendered now into a scratch folder, so a
    damaged one is one line naming the file before the work, not after it.
    """
    with tempfile.TemporaryDirectory(prefix="calcheck-check-") as scratch:
        render_folder_report(folder, page=Path(scratch) / "report.html", results=results)
