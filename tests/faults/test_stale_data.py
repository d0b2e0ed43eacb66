"""S1.2: a figure's cached data is recomputed when a data file it read changes.

A tiny synthetic ``credit.csv`` (500 rows) runs gr21's CREDIT experiment (the data of
Figs. 1(b), 3-5) into a cache; flipping every label, or emptying the file, must not read the
cached result back.
"""

from __future__ import annotations

import json
import logging

import numpy as np
import pytest

from calcheck.figures.data import data_digest
from calcheck.figures.gr21.credit import credit_experiment

ROWS = 500


def _write_credit(path, *, flip=False):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(ROWS, 23))
    y = (rng.random(ROWS) < 1 / (1 + np.exp(-2 * x[:, 0]))).astype(int)
    y = 1 - y if flip else y
    body = np.column_stack([np.arange(ROWS), np.round(x, 3), y])
    header = ",".join(f"X{i}" for i in range(25))
    np.savetxt(path, body, delimiter=",", fmt="%g", header=f"{header}\n{header}", comments="")


def _experiment(path, cache):
    return credit_experiment(
        [100],
        methods=("ums",),
        reps=2,
        n_test=100,
        sizes=(150, 100, 250),
        path=path,
        cache_dir=cache,
    )


def test_changed_labels_recompute_and_say_which_file(tmp_path, caplog):
    data, cache = tmp_path / "credit.csv", tmp_path / "cache"
    _write_credit(data)
    first = _experiment(data, cache)
    (meta,) = cache.glob("gr21-credit-*.json")
    assert json.loads(meta.read_text())["data_files"] == {str(data): data_digest(data)}
    again = _experiment(data, cache)  # unchanged: read back
    assert np.array_equal(again["marginal/ums/100"], first["marginal/ums/100"])
    _write_credit(data, flip=True)
    with caplog.at_level(logging.WARNING, logger="calcheck"):
        flipped = _experiment(data, cache)
    assert not np.array_equal(flipped["marginal/ums/100"], first["marginal/ums/100"])
    assert f"gr21-credit: recomputed: data file {data} changed" in caplog.text
    assert len(list(cache.glob("gr21-credit-*.npz"))) == 1  # the entry was replaced


def test_an_emptied_file_is_never_read_back_from_the_cache(tmp_path):
    data, cache = tmp_path / "credit.csv", tmp_path / "cache"
    _write_credit(data)
    _experiment(data, cache)
    data.write_text("")
    with pytest.raises(ValueError, match=r"credit\.csv' holds no data rows \(it is empty\)"):
        _experiment(data, cache)


def test_nested_recorders_with_equal_contents_each_keep_their_reads():
    # list.remove compared by equality: the inner recorder's exit removed the outer one
    # (both empty), and gr22 later stopped with "list.remove(x): x not in list"
    from calcheck.figures.data import note_reads, recording_reads

    with recording_reads() as outer:
        with recording_reads() as inner:
            note_reads({"a": "1"})
        note_reads({"b": "2"})
    assert inner == {"a": "1"}
    assert outer == {"a": "1", "b": "2"}
