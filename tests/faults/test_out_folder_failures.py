"""--out problems are one line before any work; outputs read back name the file (issue 38, S2)."""

from __future__ import annotations

import json
import os

import pytest

from calcheck.theory_checks.cli.main import main

RUN = ["run", "--checks", "gr21.thm3", "--reps", "200", "--no-progress"]
SEARCH = ["search", "gr21.thm3", "--family", "atoms", "--n", "100", "--n-bins", "5"]


@pytest.mark.parametrize("name", ["store.sqlite", "results.json", ".calcheck.lock"])
def test_a_folder_where_run_writes_a_file_is_refused_before_work(tmp_path, capsys, name):
    # results.json's traceback came only after the whole run
    (tmp_path / name).mkdir()
    assert main([*RUN, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"calcheck: error: --out {str(tmp_path)!r} holds a folder {name!r} where the command "
        "writes a file; move it away or choose another folder\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]  # nothing simulated


def test_search_out_that_is_a_file_is_one_line(tmp_path, capsys):
    out = tmp_path / "f"
    out.write_text("x")
    assert main([*SEARCH, "--out", str(out)]) == 2
    assert capsys.readouterr().err.startswith(f"calcheck: error: --out {str(out)!r} is a file")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_search_out_read_only_is_one_line(tmp_path, capsys):
    tmp_path.chmod(0o500)
    try:
        assert main([*SEARCH, "--out", str(tmp_path / "o")]) == 2
    finally:
        tmp_path.chmod(0o700)
    assert "calcheck: error: cannot write in --out" in capsys.readouterr().err


def test_search_out_with_a_folder_for_its_index_is_one_line(tmp_path, capsys):
    (tmp_path / "search" / "index.json").mkdir(parents=True)
    assert main([*SEARCH, "--out", str(tmp_path)]) == 2
    assert "holds a folder 'index.json' where the command writes a file" in (
        capsys.readouterr().err
    )


@pytest.mark.parametrize(
    ("where", "text", "said"),
    [
        ("search/index.json", '[{"name": 3}', "Expecting ',' delimiter"),
        ("search/index.json", '{"searches": 3}', "TypeError: 'int' object is not iterable"),
        ("results.json", '{"checks": 3}', "TypeError: 'int' object is not iterable"),
    ],
    ids=["index-not-json", "index-edited", "results-edited"],
)
def test_an_edited_output_read_back_by_search_names_the_file(tmp_path, capsys, where, text, said):
    path = tmp_path / where
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    assert main([*SEARCH, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith(f"calcheck: error: {str(path)!r} is not "), err
    assert said in err
    assert err.endswith("delete it (it is rewritten) or choose another --out")
    json.dumps(err)  # one plain line
