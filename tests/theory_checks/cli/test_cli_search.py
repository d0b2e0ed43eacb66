"""``calcheck search``: one search stored and drawn in the report; bad input refused."""

import json

import pytest

from calcheck.theory_checks.cli.main import main


def test_search_finds_a_wrong_bound_violated_and_stores_it(tmp_path, capsys):
    out = tmp_path / "res"  # what is tested is what a search stores, not its size
    argv = [
        "search",
        "gr21.thm3.control.wrong_bound",
        "--family",
        "atoms",
        "--family-opt",
        "k=2",
        "--n",
        "200",
        "--n-bins",
        "5",
        "--out",
        str(out),
        "--evaluations",
        "40",
        "--jobs",
        "1",
    ]
    assert main(argv) == 0  # a wrong bound: success means a violating law was found
    text = capsys.readouterr().out
    assert "fresh seed: violated" in text
    index = json.loads((out / "search" / "index.json").read_text())
    (entry,) = index["searches"]
    assert entry["found"] is True
    assert (out / "search" / entry["picture"]).stat().st_size > 10_000
    record = json.loads((out / "search" / f"{entry['name']}.json").read_text())
    assert record["search"]["fresh"]["verdict"]["trials"] == 4000
    page = (out / "report.html").read_text()
    assert "Worst laws found" in page
    assert f"search/{entry['picture']}" in page


@pytest.mark.parametrize(
    "argv",
    [
        ["search"],  # no target
        ["search", "gr21.thm3"],  # no family
        ["search", "gr21.thm3", "--family", "atoms", "--n", "100", "--grid", "n=100"],
        ["search", "--all", "gr21.thm3"],
    ],
)
def test_search_refuses_incomplete_or_contradictory_input(argv, tmp_path, capsys):
    assert main([*argv, "--out", str(tmp_path)]) == 2
    assert "calcheck search:" in capsys.readouterr().err


def test_search_refuses_unknown_targets_and_family_options(tmp_path):
    with pytest.raises(SystemExit):
        main(["search", "gr21.thm3", "--family", "nope", "--out", str(tmp_path)])
    with pytest.raises(SystemExit):
        main(
            [
                "search",
                "gr21.thm3",
                "--family",
                "atoms",
                "--family-opt",
                "k",
                "--out",
                str(tmp_path),
            ]
        )
    assert (
        main(
            [
                "search",
                "gr99.x",
                "--family",
                "atoms",
                "--n",
                "100",
                "--n-bins",
                "5",
                "--out",
                str(tmp_path),
            ]
        )
        == 2
    )


STUDY = """
guarantee = "gr21.thm3"
alphas = [0.1]

[search]
family = "atoms"
options = { k = 2 }
target = "gr21.thm3.control.wrong_bound"

[grid]
n = [200]
n_bins = [5, 10]
"""


def test_a_study_file_search_table_runs_one_search_per_cell(tmp_path, capsys):
    from calcheck.theory_checks.study.files import load_search_study

    path = tmp_path / "s.toml"
    path.write_text(STUDY)
    runs = load_search_study(path)
    assert [r["grid"] for r in runs] == [{"n": 200, "n_bins": 5}, {"n": 200, "n_bins": 10}]
    assert {r["target"] for r in runs} == {"gr21.thm3.control.wrong_bound"}
    assert runs[0]["family_options"] == {"k": 2}
    assert runs[0]["criterion"] == "failure"
    small = ["--evaluations", "20", "--reps", "100", "--jobs", "1"]  # two searches, not their size
    assert main(["search", "--study", str(path), "--out", str(tmp_path / "o"), *small]) == 0
    index = json.loads((tmp_path / "o" / "search" / "index.json").read_text())
    assert len(index["searches"]) == 2
    # a study with a [search] table and no law is not a run
    assert main(["run", "--study", str(path), "--out", str(tmp_path / "r")]) == 2
    assert "calcheck search --study" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (('family = "atoms"', 'famly = "atoms"'), "unknown keys in [search]"),
        (("options = { k = 2 }", "seed = -1"), "seed must be"),
        (("options = { k = 2 }", 'options = "k=2"'), "options must be a table"),
    ],
)
def test_a_study_search_table_rejects_bad_keys(tmp_path, extra, message):
    import re

    from calcheck.theory_checks.study.files import load_search_study

    path = tmp_path / "s.toml"
    path.write_text(STUDY.replace(*extra))
    with pytest.raises(ValueError, match=re.escape(message)):
        load_search_study(path)


def test_a_control_that_changes_the_method_is_not_searched_as_the_guarantee():
    from calcheck.theory_checks.search.driver import resolve_target

    with pytest.raises(ValueError, match="changes the method"):
        resolve_target("gr21.thm3.control.no_tie_breaking")
    assert resolve_target("gr21.thm3.control.wrong_bound")[0] == "gr21.thm3"
