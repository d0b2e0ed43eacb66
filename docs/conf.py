"""Sphinx configuration of calcheck's documentation site.

Build: ``python -m pip install -e ".[docs]" && python -m sphinx -W --keep-going -b html docs
docs/_build/html``. The gallery (``docs/examples/plot_*.py``) runs during the build; the
per-paper check tables and counts are generated from the registry (``_ext/calcheck_docs.py``),
so no count in these pages is typed by hand.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))
# The gallery's examples and the generated pages see the built-in papers only: an installed
# plugin paper (the test fixture, say) must not change the site.
os.environ.setdefault("CALCHECK_PLUGINS", "0")
os.environ.setdefault("MPLBACKEND", "Agg")

import calcheck  # noqa: E402

project = "calcheck"
author = "the calcheck developers"
copyright = "2026, the calcheck developers"
release = calcheck.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    # MathJax served from the site itself (_static/mathjax), not a CDN: math renders offline
    "sphinx-mathjax-offline",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
    "sphinx_design",
    "calcheck_docs",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_generated", "examples/README.txt", "Thumbs.db", ".DS_Store"]
templates_path = ["_templates"]
html_static_path = ["_static"]

# -- references: nitpicky, with the names Sphinx cannot resolve offline (no intersphinx: the
# build must not need the network) listed once here.
nitpicky = True
nitpick_ignore_regex = [
    (r"py:.*", r"(numpy|np|scipy|matplotlib|pathlib|collections|typing|dask|joblib)\..*"),
    (r"py:.*", r"(array_like|array-like|ndarray|callable|optional|default|sequence|mapping)"),
    (r"py:.*", r"(int|float|str|bool|dict|list|tuple|None|object|bytes|type|Path)"),
    (r"py:.*", r"(of|or|and|each|shape|the|a|an|one|in|same|as|per|any)"),
    # internal layers the API reference does not document (the public surface and the
    # guarantees are documented; a reference into the machinery stays plain text)
    (r"py:.*", r"calcheck\.(simulations|figures)\..*"),
    (r"py:.*", r"calcheck\.bounds\.(registry|plugins|_validation|_concentration|inverse)(\..*)?"),
    (
        r"py:.*",
        r"calcheck\.theory_checks\.(catalog|study|cli|running\.(runner|controls|records|bench)"
        r"|checks\.(events|budgets|methods)|report\.(files|html|summary|pictures)"
        r"|results\.(power|roles)|series\.(means|tradeoff))(\..*)?",
    ),
]

# -- myst (Markdown pages)
myst_enable_extensions = ["colon_fence", "deflist", "dollarmath"]
myst_heading_anchors = 3
# the generated per-guarantee sections are included under a level-2 heading
suppress_warnings = ["myst.header", "ref.citation"]

# -- autodoc / autosummary / numpydoc
autosummary_generate = True
autodoc_typehints = "none"
autodoc_member_order = "bysource"
numpydoc_show_class_members = False
numpydoc_xref_param_type = False
numpydoc_validation_checks = set()

# -- sphinx-gallery: every example runs at build time (small replicate counts)
sphinx_gallery_conf = {
    "examples_dirs": "examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "abort_on_example_error": True,
    "download_all_examples": False,
    "remove_config_comments": True,
    "show_memory": False,
    "min_reported_time": 1,
    # two examples at a time (joblib processes): the build waits for the longest, not the sum
    "parallel": 2,
}

# -- HTML
html_theme = "pydata_sphinx_theme"
html_title = f"calcheck {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_context = {"default_mode": "light"}
html_show_sourcelink = False
html_css_files = ["custom.css"]
# wide tables: no left navigation on the paper pages and the coverage table
html_sidebars = {"papers/*": [], "coverage": []}

# -- counts generated from the catalog (``{{ n_checks_quick }}`` in the pages)
import calcheck_docs  # noqa: E402

myst_enable_extensions.append("substitution")
myst_substitutions = calcheck_docs.counts()
