"""The docs site's generated pages (docs/_ext/calcheck_docs.py) cover every guarantee.

The run report links each guarantee to ``papers/<paper>.html#guarantee-<id>``; these tests
check, without building the site, that every registered guarantee of the five papers has
that anchor on its paper's page, that the counts the pages show are the catalog's, and that
the hand-written paper pages include every generated part.
"""

import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"
sys.path.insert(0, str(DOCS / "_ext"))

import calcheck_docs  # noqa: E402

from calcheck.bounds import registry  # noqa: E402
from calcheck.theory_checks.catalog import all_checks  # noqa: E402
from calcheck.theory_checks.report.doclinks import guarantee_doc_anchor, guarantee_doc_url  # noqa: E402

PAPERS = tuple(calcheck_docs.PAPER_TITLES)


@pytest.mark.parametrize("paper", PAPERS)
def test_every_guarantee_has_its_anchor_on_its_paper_page(paper):
    page = calcheck_docs.guarantees_page(paper)
    for g in registry.guarantees_of(paper):
        assert f"({guarantee_doc_anchor(g.id)})=" in page, g.id


@pytest.mark.parametrize("paper", PAPERS)
def test_paper_page_includes_every_generated_part(paper):
    text = (DOCS / "papers" / f"{paper}.md").read_text()
    for part in ("roles", "counterexamples", "figures", "not_covered", "guarantees"):
        assert f"../_generated/{paper}_{part}.md" in text, part


def test_counts_are_the_catalogs():
    counts = calcheck_docs.counts()
    assert counts["n_checks_quick"] == str(len(all_checks("quick")))
    assert counts["n_guarantees"] == str(len(registry.all_guarantees()))


def test_report_links_need_a_site_and_skip_plugin_papers():
    assert guarantee_doc_url("gr21.thm3", None) is None
    url = guarantee_doc_url("gr21.thm4.ece_mean", "file:///site")
    assert url == "file:///site/papers/gr21.html#guarantee-gr21-thm4-ece-mean"
    assert guarantee_doc_url("ex23.thm1", "file:///site") is None
