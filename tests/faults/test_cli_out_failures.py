"""``calcheck run --out D``: what the run writes or reads back at its end is checked first.

Before (issue 38, S2): a file ``D/plots`` gave a FileExistsError traceback after the whole
run, a file ``D/previous`` a traceback when an earlier report was kept, and a hand-edited
``D/search/index.json`` (read back by the report) was named only after the run. (Folders
where ``store.sqlite``, ``results.json`` or ``.calcheck.lock`` go: test_out_folder_failures.)
"""

from __future__ import annotations

import pytest

from calcheck.theory_checks.cli.main import main

RUN = ["run", "--checks", "gr21.thm3", "--reps", "200", "--no-progress"]


@pytest.mark.parametrize("name", ["plots", "previous"])
def test_a_file_where_the_run_keeps_a_folder_is_refused_before_work(tmp_path, capsys, name):
    (tmp_path / name).write_text("x")
    assert main([*RUN, "--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        f"calcheck: error: --out {str(tmp_path)!r} holds a file {name!r} where the run keeps "
        "a folder; move it away or choose another folder\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]  # nothing simulated


@pytest.mark.parametrize("where", ["search/index.json", "figures/index.json"])
def test_an_edited_index_read_back_is_refused_before_work(tmp_path, capsys, where):
    path = tmp_path / where
    path.parent.mkdir()
    path.write_text("[")
    assert main([*RUN, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"calcheck: error: {str(path)!r} is not the ")
    assert err.endswith("; delete it (it is rewritten) or choose another --out\n")
    assert not (tmp_path / "store.sqlite").exists()


def test_a_damaged_results_json_is_no_obstacle_to_a_run(tmp_path, capsys):
    # the run rewrites it (and keeps a copy of an earlier one): not read back as the report's
    (tmp_path / "results.json").write_text("{")
    assert main([*RUN, "--out", str(tmp_path)]) == 0
    assert "calcheck: error" not in capsys.readouterr().err
