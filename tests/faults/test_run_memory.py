"""``calcheck run`` refuses, before any block, cells whose blocks cannot fit in memory."""

from __future__ import annotations

import sqlite3

from calcheck.simulations import memory
from calcheck.theory_checks.cli.main import main


def test_a_run_whose_workers_cannot_hold_their_blocks_is_refused(tmp_path, capsys, monkeypatch):
    # issue 38: sizes are refused by an estimate before any allocation, counting --jobs workers
    monkeypatch.setattr(memory, "available_bytes", lambda: 20 * 2**20)
    out = tmp_path / "out"
    argv = ["run", "--checks", "gr21.thm3", "--reps", "1000", "--jobs", "2", "--out", str(out)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("calcheck: error: the run: n = "), err
    assert "2 worker(s)" in err
    assert "the largest n that fits is" in err
    with sqlite3.connect(out / "store.sqlite") as con:  # opened, nothing simulated
        assert con.execute("SELECT COUNT(*) FROM blocks").fetchone() == (0,)
