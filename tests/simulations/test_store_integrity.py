"""Store integrity: a damaged or misplaced block is detected, recomputed and reported;
a reader never makes the writer fail."""

import sqlite3

import numpy as np
import pytest

from calcheck.simulations.store import ResultStore, _pack, _unpack
from calcheck.theory_checks.catalog import all_checks
from calcheck.theory_checks.runner import run_checks


def _run(path, reps=200):
    checks = [c for c in all_checks("quick") if c.id == "gr21.thm3"]
    with ResultStore(path) as store:
        return run_checks(checks, store, reps=reps, root_seed=11)


def test_truncated_and_copied_blocks_are_recomputed(tmp_path):
    path = tmp_path / "store.sqlite"
    first = _run(path)
    con = sqlite3.connect(path)
    rows = con.execute("SELECT rowid, cell_key, payload FROM blocks ORDER BY rowid").fetchall()
    # truncate one block to 50 replicates (its header still says 100)
    arrays = {k: v[:50] for k, v in _unpack(rows[0][2]).items()}
    con.execute("UPDATE blocks SET payload = ? WHERE rowid = ?", (_pack(arrays), rows[0][0]))
    # copy another cell's payload over a block
    other = next(r for r in rows if r[1] != rows[1][1])
    con.execute("UPDATE blocks SET payload = ? WHERE rowid = ?", (other[2], rows[1][0]))
    con.commit()
    con.close()
    second = _run(path)
    assert second.stats.damaged == 2
    assert second.stats.computed == 2
    a, b = first.results[0], second.results[0]
    assert [c.verdict.successes for c in a.cells] == [c.verdict.successes for c in b.cells]


def test_a_reader_does_not_block_the_writer(tmp_path):
    path = tmp_path / "store.sqlite"
    with ResultStore(path) as store:
        store.put(1, "cell", "code", 0, {"x": np.zeros(3)})
        reader = sqlite3.connect(path, timeout=0.1)
        reader.execute("BEGIN")
        assert reader.execute("SELECT COUNT(*) FROM blocks").fetchone()[0] == 1  # holds a read
        store.put(1, "cell", "code", 1, {"x": np.ones(3)})  # must not raise 'database is locked'
        reader.rollback()
        reader.close()
        assert store.done_blocks(1, "cell", "code") == {0, 1}


def test_load_takes_cached_arrays_only_for_the_row_it_wrote(tmp_path):
    path = tmp_path / "store.sqlite"
    with ResultStore(path) as store:
        store.put(1, "cell", "code", 0, {"x": np.arange(4.0)})
        np.testing.assert_array_equal(store.load(1, "cell", "code", [0])["x"], np.arange(4.0))
        # another writer replaces the row with a sound block: the file wins over the cache
        other = ResultStore(path, cache_bytes=0)
        other.put(1, "cell", "code", 0, {"x": np.full(4, 7.0)})
        other.close()
        np.testing.assert_array_equal(store.load(1, "cell", "code", [0])["x"], np.full(4, 7.0))


def test_load_refuses_a_damaged_row_even_if_its_arrays_are_cached(tmp_path):
    path = tmp_path / "store.sqlite"
    with ResultStore(path) as store:
        store.put(1, "cell", "code", 0, {"x": np.arange(4.0)})
        con = sqlite3.connect(path)
        con.execute("UPDATE blocks SET payload = ?", (_pack({"x": np.arange(4.0)[:2]}),))
        con.commit()
        con.close()
        with pytest.raises(ValueError, match="damaged"):
            store.load(1, "cell", "code", [0])


def test_the_cache_is_bounded_and_emptied_by_drop_blocks(tmp_path):
    with ResultStore(tmp_path / "store.sqlite", cache_bytes=100) as store:
        for b in range(5):
            store.put(1, "cell", "code", b, {"x": np.full(4, float(b))})  # 32 bytes each
        assert store._cache_size <= 100
        assert len(store._cache) == 3
        loaded = store.load(1, "cell", "code", range(5))["x"]
        np.testing.assert_array_equal(loaded, np.repeat(np.arange(5.0), 4))
        store.drop_blocks(1, "cell", "code")
        assert store._cache_size == 0
        assert not store._cache


def test_cache_bytes_is_validated(tmp_path):
    with pytest.raises(ValueError, match="cache_bytes"):
        ResultStore(tmp_path / "s.sqlite", cache_bytes=-1)
