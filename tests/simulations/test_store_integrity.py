"""Store integrity: a damaged or misplaced block is detected, recomputed and reported;
a reader never makes the writer fail."""

import sqlite3

import numpy as np
import pytest

from calcheck.simulations.payload import _pack, _unpack
from calcheck.simulations.store import ResultStore
from calcheck.theory_checks.catalog import all_checks
from calcheck.theory_checks.running.runner import run_checks


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


def test_load_reads_the_row_another_writer_replaced(tmp_path):
    path = tmp_path / "store.sqlite"
    with ResultStore(path) as store:
        store.put(1, "cell", "code", 0, {"x": np.arange(4.0)})
        np.testing.assert_array_equal(store.load(1, "cell", "code", [0])["x"], np.arange(4.0))
        other = ResultStore(path)
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


@pytest.mark.parametrize("compress", [True, False])
def test_the_block_format_round_trips_every_plain_dtype_and_shape(compress):
    arrays = {
        "f": np.linspace(0, 1, 6).reshape(3, 2),
        "i": np.arange(3, dtype=np.int32),
        "b": np.array([True, False, True]),
        "c": np.array([1 + 2j, 3, 4j]),
        "big": np.arange(3, dtype=">f8"),
    }
    back = _unpack(_pack(arrays, compress))
    assert list(back) == list(arrays)
    for name, a in arrays.items():
        assert back[name].dtype == a.dtype
        assert back[name].shape == a.shape
        np.testing.assert_array_equal(back[name], a)


def test_payloads_of_older_stores_npz_are_still_read():
    import io

    buf = io.BytesIO()
    np.savez_compressed(buf, x=np.arange(5.0), y=np.ones(5, dtype=bool))
    back = _unpack(buf.getvalue())
    np.testing.assert_array_equal(back["x"], np.arange(5.0))
    assert back["y"].dtype == bool


def test_the_block_format_refuses_object_arrays_and_a_lying_header():
    from calcheck.simulations.payload import _decoded

    with pytest.raises(ValueError, match="dtype object"):
        _pack({"o": np.array([None, 1], dtype=object)})
    good = _pack({"x": np.arange(4.0)}, compress=False)
    assert _decoded(good, 4) is not None
    assert _decoded(good[:-8], 4) is None  # truncated: the header says 32 bytes
    assert _decoded(good.replace(b"<f8", b"|O8"), 4) is None
    assert _decoded(good, 5) is None  # replicate count


def test_put_rows_commits_a_batch_at_once(tmp_path):
    from calcheck.simulations.payload import pack_block

    rows = [
        (1, "cell", "code", b, *pack_block(1, "cell", "code", b, {"x": np.full(4, b)}, False))
        for b in range(3)
    ]
    with ResultStore(tmp_path / "store.sqlite") as store:
        store.put_rows(rows)
        assert store.done_blocks(1, "cell", "code") == {0, 1, 2}
        np.testing.assert_array_equal(
            store.load(1, "cell", "code", [2, 0])["x"], [2, 2, 2, 2, 0, 0, 0, 0]
        )
