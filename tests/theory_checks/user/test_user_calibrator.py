"""A calibrator of your own stands in for the method (issue 24, item 3)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import calcheck
from calcheck.testing import assert_guarantee_holds, assert_guarantee_violated
from calcheck.theory_checks.cli.main import main

sklearn_isotonic = pytest.importorskip("sklearn.isotonic")


class Isotonic:
    """scikit-learn's isotonic regression as a calibrator (the issue's five lines)."""

    def fit(self, scores, labels):
        self.iso_ = sklearn_isotonic.IsotonicRegression(out_of_bounds="clip").fit(scores, labels)
        return self

    def predict(self, scores):
        return self.iso_.predict(scores)


def claimed_ece(n, alpha):
    """A user's claim: the l1-ECE of isotonic regression is within this w.p. 1 - alpha."""
    return np.sqrt(np.log(2 / alpha) / (2 * n ** (2 / 3)))


def claimed_ece_x01(n, alpha):
    return 0.1 * claimed_ece(n, alpha)


ARGS = {"n": 1000, "n_bins": 10, "alphas": (0.1,), "reps": 300, "rng": 0}


def test_isotonic_claim_consistent_and_a_wrong_claim_flagged():
    mine = calcheck.define_guarantee("mine.iso", claimed_ece, method=Isotonic(), event="ece")
    wrong = calcheck.define_guarantee(
        "mine.iso.x01", claimed_ece_x01, method=Isotonic(), event="ece"
    )
    laws = ["uniform_logistic", "skewed_beta", "two_atoms"]
    ok = calcheck.verify(mine, laws, **ARGS)
    assert ok.verdict == "consistent"
    assert len(ok.cells) == 3
    bad = calcheck.verify(wrong, laws, **ARGS, expect="violated")
    assert bad.verdict == "violated"
    assert bad.passed
    # the same cells, bit for bit, from two worker processes
    two = calcheck.verify(mine, laws, **ARGS, n_jobs=2)
    assert two.cells == ok.cells


def test_testing_helpers_with_a_calibrator():
    mine = calcheck.define_guarantee("mine.iso.h", claimed_ece, method=Isotonic(), event="ece")
    wrong = calcheck.define_guarantee(
        "mine.iso.h.x01", claimed_ece_x01, method=Isotonic(), event="ece"
    )
    assert_guarantee_holds(mine, "uniform_half", n=500, n_bins=10, reps=200, rng=1)
    assert_guarantee_violated(wrong, "uniform_half", n=500, n_bins=10, reps=200, rng=1)


def test_a_conditional_claim_on_isotonic_fails_where_level_sets_are_small():
    # Hoeffding per level set would need every level set to hold n / B points: isotonic
    # regression's do not, and calcheck says so
    def per_bin_hoeffding(n, n_bins, alpha):
        return np.sqrt(np.log(2 * n_bins / alpha) / (2 * (n / n_bins - 1)))

    g = calcheck.define_guarantee(
        "mine.iso.cond", per_bin_hoeffding, method=Isotonic(), event="conditional"
    )
    res = calcheck.verify(g, "uniform_logistic", **ARGS, expect="violated")
    assert res.verdict == "violated"


def test_scaling_binning_is_a_method():
    from calcheck.theory_checks.catalog import methods

    assert "scaling_binning" in methods()

    def loose(n, n_bins, alpha):
        return 0.5  # every output within 0.5 of its truth: true on a benign law

    g = calcheck.define_guarantee("mine.sb", loose, method="scaling_binning", event="conditional")
    res = calcheck.verify(g, "uniform_logistic", n=600, n_bins=5, alphas=(0.1,), reps=200, rng=0)
    assert res.verdict == "consistent"


def test_the_klm19_authors_package_as_a_calibrator():
    calibration = pytest.importorskip("calibration")

    class AuthorsScalingBinning:
        """uncertainty-calibration's PlattBinnerCalibrator (klm19's code) in fit/predict."""

        def __init__(self, n_bins=10):
            self.n_bins = n_bins

        def fit(self, scores, labels):
            self.cal_ = calibration.PlattBinnerCalibrator(len(scores), self.n_bins)
            self.cal_.train_calibration(np.clip(scores, 1e-6, 1 - 1e-6), labels)
            return self

        def predict(self, scores):
            return np.asarray(self.cal_.calibrate(np.clip(scores, 1e-6, 1 - 1e-6)), float)

    def ece_claim(n, alpha):
        return 0.1

    g = calcheck.define_guarantee(
        "mine.klm19code", ece_claim, method=AuthorsScalingBinning(), event="ece"
    )
    ok = calcheck.verify(g, "uniform_logistic", n=600, n_bins=10, alphas=(0.1,), reps=200, rng=0)
    assert ok.verdict == "consistent"
    tight = calcheck.define_guarantee(
        "mine.klm19code.tight",
        lambda n, alpha: 1e-4,
        method=AuthorsScalingBinning(),
        event="ece",
    )
    bad = calcheck.verify(
        tight,
        "uniform_logistic",
        n=600,
        n_bins=10,
        alphas=(0.1,),
        reps=200,
        rng=0,
        expect="violated",
    )
    assert bad.verdict == "violated"


def test_study_file_names_a_calibrator_as_module_class(tmp_path):
    (tmp_path / "my_calibrators_x.py").write_text(
        "import numpy as np\n\n"
        "class FixedBins:\n"
        "    def __init__(self, n_bins):\n"
        "        self.n_bins = n_bins\n\n"
        "    def fit(self, s, y):\n"
        "        b = np.minimum((s * self.n_bins).astype(int), self.n_bins - 1)\n"
        "        c = np.bincount(b, minlength=self.n_bins)\n"
        "        t = np.bincount(b, y, minlength=self.n_bins)\n"
        "        self.v_ = np.where(c > 0, t / np.maximum(c, 1), 0.5)\n"
        "        return self\n\n"
        "    def predict(self, s):\n"
        "        return self.v_[np.minimum((s * self.n_bins).astype(int), self.n_bins - 1)]\n\n"
        "def radius(n, n_bins, alpha):\n"
        "    return np.sqrt(np.log(2 * n_bins / alpha) / (2 * (n / n_bins / 2)))\n"
    )
    study = tmp_path / "s.toml"
    study.write_text(
        'guarantee = "mine.fixed"\nbound = "my_calibrators_x:radius"\n'
        'method = "my_calibrators_x:FixedBins"\nmethod_options = { n_bins = 10 }\n'
        'event = "conditional"\ncontrols = [0.5]\nlaws = ["uniform_half"]\nreps = 300\n'
        "alphas = [0.1]\n[grid]\nn = [1000]\nn_bins = [10]\n"
    )
    out = tmp_path / "out"
    assert main(["run", "--study", str(study), "--out", str(out)]) == 0
    checks = {c["id"]: c for c in json.loads((out / "results.json").read_text())["checks"]}
    assert checks["study:mine.fixed"]["verdict"] == "consistent"
    assert checks["study:mine.fixed.control.times_0.5"]["verdict"] == "violated"
