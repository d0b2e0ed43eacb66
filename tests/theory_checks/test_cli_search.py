"""``calcheck search``: one search stored and drawn in the report; bad input refused."""

import json

import pytest

from theory_checks.cli import main


def test_search_finds_a_wrong_bound_violated_and_stores_it(tmp_path, capsys):
    out = tmp_path / "res"
    argv = ["search", "gr21.thm3.control.wrong_bound", "--family", "atoms", "--family-opt",
            "k=2", "--n", "200", "--n-bins", "5", "--out", str(out)]  # fmt: skip
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
        main(["search", "gr21.thm3", "--family", "atoms", "--family-opt", "k", "--out",
              str(tmp_path)])  # fmt: skip
    assert main(["search", "gr99.x", "--family", "atoms", "--n", "100", "--n-bins", "5",
                 "--out", str(tmp_path)]) == 2  # fmt: skip
