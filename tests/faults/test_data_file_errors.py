"""S3: a damaged data file gives one line naming the file, what is wrong and what to do."""

from __future__ import annotations

import numpy as np
import pytest

from calcheck.figures.data import load_cifar10_vgg16, load_cifar_logits, load_credit


def test_a_credit_file_cut_mid_row_names_the_file_and_the_row(tmp_path):
    path = tmp_path / "credit.csv"
    rows = [",".join(["1"] * 25)] * 3 + [",".join(["1"] * 19)]
    path.write_text("h\nh\n" + "\n".join(rows) + "\n")
    with pytest.raises(ValueError, match=r"credit\.csv") as info:
        load_credit(path)
    text = str(info.value)
    assert f"data file {str(path)!r} is damaged or not credit.csv" in text
    assert "the number of columns changed from 25 to 19 at row 4" in text
    assert "usecols" not in text  # numpy's hint is not ours to give
    assert "replace it with a fresh copy of the UCI" in text


def test_a_truncated_npy_names_the_file(tmp_path):
    folder = tmp_path / "cifar10_resnet50"
    folder.mkdir()
    rng = np.random.default_rng(0)
    for part, n in (("val", 20), ("test", 30)):
        np.save(folder / f"{part}_logits.npy", rng.normal(size=(n, 10)))
        np.save(folder / f"{part}_labels.npy", rng.integers(0, 10, n))
    bad = folder / "test_logits.npy"
    bad.write_bytes(bad.read_bytes()[:300])
    with pytest.raises(
        ValueError,
        match=r"test_logits\.npy' is damaged or not a \.npy array: "
        r"Failed to read all data for array.*replace it with a fresh copy",
    ):
        load_cifar_logits("cifar10", "resnet50", tmp_path)
    (folder / "val_labels.npy").write_bytes(b"")
    with pytest.raises(ValueError, match=r"val_labels\.npy' is damaged .*No data left in file"):
        load_cifar_logits("cifar10", "resnet50", tmp_path)


def test_a_pickle_in_place_of_an_array_names_the_file(tmp_path):
    np.save(tmp_path / "test_probs.npy", np.array([{"a": 1}], dtype=object))
    np.save(tmp_path / "test_labels.npy", np.zeros(1, dtype=int))
    with pytest.raises(ValueError, match=r"test_probs\.npy' is damaged or not a \.npy array"):
        load_cifar10_vgg16(tmp_path)
