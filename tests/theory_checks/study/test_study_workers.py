"""A study's own modules reach the parallel workers: `calcheck search/run --study --jobs 2`.

The bound lives in ``mybound.py`` beside the study file and imports ``myhelper.py`` (beside
it too) only when it is called, so it runs where the folder is on the import path: in the
command's process and in its loky workers. Each command runs in a fresh interpreter from
another folder (the study's folder is not the working directory) on a tiny budget.
"""

from __future__ import annotations

import subprocess
import sys
import uuid

import pytest

STUDY = """guarantee = "mine.thm1"
bound = "{bound}:radius"
method = "{method}"
event = "conditional"
alphas = [0.1]

[law]
scores = {{ kind = "beta", a = 2.0, b = 5.0 }}
eta = {{ kind = "constant", value = 0.5 }}

[grid]
n = [200]
n_bins = [4]

[search]
family = "beta_piecewise"
options = {{ k = 2 }}
evaluations = 10
reps = 100
"""
BOUND = """def radius(n, n_bins, alpha):
    from {helper} import hoeffding  # imported when called, in whichever process calls it

    return hoeffding(n, n_bins, alpha)
"""
HELPER = """import math


def hoeffding(n, n_bins, alpha):
    return math.sqrt(math.log(2 * n_bins / alpha) / (2 * (n // n_bins - 1)))
"""
CALIBRATOR = """import numpy as np


class Cal:
    def fit(self, s, y):
        from {helper} import hoeffding  # in the worker that fits it

        self.m = float(np.mean(y)) + 0 * hoeffding(100, 1, 0.1)
        return self

    def predict(self, s):
        return np.full(np.shape(s), self.m)
"""


def _study(tmp_path, method="umd"):
    """The study folder (unique module names: nothing cached from another test)."""
    tag = uuid.uuid4().hex[:8]
    folder = tmp_path / "study"
    folder.mkdir()
    names = {"bound": f"mybound_{tag}", "helper": f"myhelper_{tag}", "cal": f"mycal_{tag}"}
    (folder / f"{names['bound']}.py").write_text(BOUND.format(**names))
    (folder / f"{names['helper']}.py").write_text(HELPER)
    (folder / f"{names['cal']}.py").write_text(CALIBRATOR.format(**names))
    method = f"{names['cal']}:Cal" if method == "own" else method
    (folder / "s.toml").write_text(STUDY.format(bound=names["bound"], method=method))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    return folder / "s.toml", elsewhere


def _calcheck(args, cwd):
    return subprocess.run(
        [sys.executable, "-m", "calcheck", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.mark.slow  # about 6 s: a fresh interpreter and two loky workers
def test_search_study_with_two_jobs_imports_the_users_modules(tmp_path):
    study, cwd = _study(tmp_path)
    done = _calcheck(["search", "--study", str(study), "--jobs", "2", "--out", "o"], cwd)
    assert done.returncode == 0, done.stderr[-800:]
    assert "No module named" not in done.stderr
    assert "calcheck: about " in done.stderr  # the estimate, before the search
    assert "budget quick, 10 evaluations x 100" in done.stdout  # the table's sizes
    assert "found: no" in done.stdout  # the stated bound holds


@pytest.mark.slow  # about 6 s
def test_run_study_with_two_jobs_imports_the_users_calibrator_and_its_helper(tmp_path):
    study, cwd = _study(tmp_path, method="own")
    done = _calcheck(
        ["run", "--study", str(study), "--jobs", "2", "--reps", "200", "--out", "o"], cwd
    )
    assert done.returncode == 0, done.stderr[-800:]
    assert "No module named" not in done.stderr
    assert "1 of 1 checks as expected" in done.stdout


def test_a_study_folder_left_on_the_path_does_not_shadow_the_next_one(tmp_path):
    """Each study's folder stays on the path (last); the next study's module is its own."""
    import sys

    from calcheck.theory_checks.study.imports import import_object

    first, second = tmp_path / "a", tmp_path / "b"
    for folder, value in ((first, 1), (second, 2)):
        folder.mkdir()
        (folder / "shadowmod.py").write_text(f"VALUE = {value}\n")
    try:
        assert import_object("shadowmod:VALUE", "bound", first) == 1
        sys.modules.pop("shadowmod")
        assert import_object("shadowmod:VALUE", "bound", second) == 2
        sys.modules.pop("shadowmod")  # the second study again (both folders now on the path)
        assert import_object("shadowmod:VALUE", "bound", second) == 2
    finally:
        sys.modules.pop("shadowmod", None)
        for folder in (first, second):
            while str(folder) in sys.path:
                sys.path.remove(str(folder))
