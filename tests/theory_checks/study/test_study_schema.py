"""The study file's schema is one table: the parser checks against it, the docs print it."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from calcheck.theory_checks.study.files import (
    SEARCH_SCHEMA,
    STUDY_SCHEMA,
    load_search_study,
    load_study,
    schema_markdown,
)

DOCS = Path(__file__).resolve().parents[3] / "docs"
STUDY = """guarantee = "gr21.thm3"

[grid]
n = [200]
n_bins = [5]

[search]
family = "beta_piecewise"
"""


def _write(tmp_path, text) -> Path:
    path = tmp_path / "s.toml"
    path.write_text(text)
    return path


def test_an_unknown_top_level_key_is_refused_with_the_schemas_keys(tmp_path):
    path = _write(tmp_path, "famly = 1\n" + STUDY)
    message = f"unknown keys in study file {str(path)!r}: ['famly']; allowed: {list(STUDY_SCHEMA)}"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        load_study(path)


def test_an_unknown_search_key_is_refused_with_the_schemas_keys(tmp_path):
    path = _write(tmp_path, STUDY + "budgt = 'full'\n")
    message = f"unknown keys in [search]: ['budgt']; allowed: {list(SEARCH_SCHEMA)}"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        load_search_study(path)


def test_the_search_defaults_are_those_the_schema_states(tmp_path):
    (run,) = load_search_study(_write(tmp_path, STUDY))
    assert run["target"] == "gr21.thm3"  # "the guarantee"
    assert (run["budget"], run["criterion"], run["seed"]) == ("quick", "failure", 0)
    assert (run["evaluations"], run["reps"]) == (None, None)  # "the budget's"
    assert run["alpha"] == 0.1
    assert "[0.1]" in STUDY_SCHEMA["alphas"].default
    for key in ("budget", "criterion", "seed"):
        assert str(run[key]) in SEARCH_SCHEMA[key].default


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("evaluations = 5", "[search] evaluations must be an integer >= 10, got 5"),
        ("reps = 0", "[search] reps must be an integer >= 1, got 0"),
        ('budget = "huge"', "[search] budget must be one of ['quick', 'full'], got 'huge'"),
        (
            'criterion = "max"',
            "[search] criterion must be one of ['soft_failure', 'failure', "
            "'tightness', 'mean_ratio'], got 'max'",
        ),
        ("target = 3", "[search] target must be a string, got 3"),
    ],
)
def test_bad_search_values_are_one_line(line, message, tmp_path):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        load_search_study(_write(tmp_path, STUDY + line + "\n"))


def test_the_sizes_of_a_search_table_reach_the_search(tmp_path):
    (run,) = load_search_study(_write(tmp_path, STUDY + "evaluations = 20\nreps = 100\n"))
    assert (run["evaluations"], run["reps"]) == (20, 100)


def test_the_docs_page_prints_every_key_from_the_schema():
    text = schema_markdown()
    for schema in (STUDY_SCHEMA, SEARCH_SCHEMA):
        for name, key in schema.items():
            assert f"| `{name}` | {key.type} | {key.default} | {key.meaning} |" in text
    assert "| `guarantee` | string | required |" in text
    sys.path.insert(0, str(DOCS / "_ext"))
    try:
        import calcheck_docs
    finally:
        sys.path.remove(str(DOCS / "_ext"))
    assert calcheck_docs.study_schema_page() == text
    page = (DOCS / "user_guide" / "studies.md").read_text()
    assert "```{include} ../_generated/study_schema.md" in page
