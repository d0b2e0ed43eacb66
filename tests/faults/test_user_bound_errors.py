"""S2/S3: a study's own bound that raises, returns None or the wrong shape: one line, exit 2.

Each line names the guarantee, the bound (``module:function``), the keywords it was called
with and what to do, through ``calcheck run --study`` (no traceback, no numpy message).
"""

from __future__ import annotations

import sys

import pytest

from calcheck.theory_checks.cli.main import main
from calcheck.theory_checks.user.guarantees import _forget_all

BOUNDS = """\
import numpy as np


def boom(n, n_bins, alpha):
    return 1 / 0


def nothing(n, n_bins, alpha):
    return None


def three(n, n_bins, alpha):
    return np.full(3, 0.5)
"""
STUDY = """\
guarantee = "mine.{name}"
bound = "badbounds:{name}"
method = "umd"
event = "conditional"
reps = 100
alphas = [0.1]
law = "uniform_half"
[grid]
n = [200]
n_bins = [5]
"""
WHERE = "at n=200, n_bins=5, alpha=0.1 (badbounds:{name})"


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("boom", "raised ZeroDivisionError: division by zero {where}; fix the bound"),
        ("nothing", "returned None {where}; a bound must return a number >= 0"),
        (
            "three",
            "returned an array of shape (3,) {where}; expected a number (the shape of its inputs)",
        ),
    ],
)
def test_a_bad_bound_gives_one_line_naming_it(tmp_path, capsys, name, said):
    (tmp_path / "badbounds.py").write_text(BOUNDS)
    (tmp_path / "s.toml").write_text(STUDY.format(name=name))
    try:
        status = main(["run", "--study", str(tmp_path / "s.toml"), "--out", str(tmp_path / "o")])
    finally:
        sys.modules.pop("badbounds", None)
        _forget_all()
    err = capsys.readouterr().err.strip().splitlines()
    expected = f"calcheck: error: the bound of mine.{name} " + said.format(
        where=WHERE.format(name=name)
    )
    assert (status, err[-1]) == (2, expected)
    assert not any("Traceback" in line or "broadcast" in line for line in err)
