"""Links from a run's report to the guarantees' sections of the docs site (one home).

Each paper's page of the docs site (``docs/papers/<paper>.md``) has one section per
guarantee, labelled ``guarantee-<id with dots as dashes>``. The report links there when it
knows where the site is: ``CALCHECK_DOCS_URL`` (a URL or folder of a built site), else the
site built in a source checkout (``docs/_build/html``). Without either, guarantees are shown
unlinked, and the report says how to get the links.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..catalog import PAPERS

__all__ = ["docs_base_url", "guarantee_doc_anchor", "guarantee_doc_url"]

#: The papers that have a page on the docs site (plugin papers have none).
DOCUMENTED_PAPERS = tuple(PAPERS)


def guarantee_doc_anchor(guarantee_id: str) -> str:
    """The label of a guarantee's section on its paper's page (``guarantee-gr21-thm3``)."""
    return "guarantee-" + guarantee_id.lower().replace(".", "-").replace("_", "-")


def docs_base_url() -> str | None:
    """Where the built docs site is: ``CALCHECK_DOCS_URL``, else a source checkout's build."""
    configured = os.environ.get("CALCHECK_DOCS_URL")
    if configured is not None and configured.strip():
        text = configured.strip().rstrip("/")
        if "://" in text:
            return text
        return Path(text).resolve().as_uri()
    built = Path(__file__).resolve().parents[2] / "docs" / "_build" / "html"
    if (built / "index.html").is_file():
        return built.as_uri()
    return None


def guarantee_doc_url(guarantee_id: str, base: str | None) -> str | None:
    """The URL of a guarantee's section, or None (unknown site or an undocumented paper)."""
    paper = guarantee_id.split(".")[0]
    if base is None or paper not in DOCUMENTED_PAPERS:
        return None
    return f"{base}/papers/{paper}.html#{guarantee_doc_anchor(guarantee_id)}"
