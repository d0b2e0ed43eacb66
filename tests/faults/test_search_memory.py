"""``calcheck search`` refuses an n whose blocks cannot fit, before allocating (issue 38, S1.5)."""

from __future__ import annotations

from calcheck.simulations import memory
from calcheck.theory_checks.cli.main import main


def test_a_huge_n_is_refused_with_the_largest_that_fits(tmp_path, capsys, monkeypatch):
    # `calcheck search --n 30000000` grew to 16 GB RSS with no output; on this machine it
    # now says so in about a second (here the memory available is fixed at 1 GiB)
    monkeypatch.setattr(memory, "available_bytes", lambda: 2**30)
    argv = ["search", "gr21.thm3", "--family", "atoms", "--n", "30000000", "--n-bins", "10"]
    assert main([*argv, "--jobs", "2", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("calcheck: error: the search of gr21.thm3: n = 30000000 with reps = 200")
    assert "2 worker(s)" in err
    assert "the largest n that fits is" in err
    assert not (tmp_path / "search" / "index.json").exists()
