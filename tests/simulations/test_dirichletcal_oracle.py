"""Oracle: gr22's DS / VS cells against ``dirichletcal``, the code the paper ran (issue 38 S1.6).

``tests/fixtures/dirichletcal/`` holds dirichletcal 0.5.3's fits (``FullDirichletCalibrator()``
and ``VectorScaling()``, default settings, fitted on the val softmax) with their provenance,
made by ``make_reference.py`` there under Python 3.12 (dirichletcal needs >= 3.12 and jax).
These tests need neither: they rebuild dirichletcal's calibrated test probabilities from the
stored parameters with calcheck's own model (``softmax(W log p + b)``), check them against the
summary statistics of dirichletcal's own ``predict_proba``, and compare calcheck's estimators
with the script's independent numpy estimators and with the paper's cells. The last test
refits with dirichletcal itself where it is importable (skipped otherwise).
"""

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from calcheck.figures.data import data_file, load_cifar_logits
from calcheck.figures.gr22 import _stability
from calcheck.figures.gr22._cifar import PAPER
from calcheck.simulations.calibrators import DirichletScaling, VectorScaling, softmax, top_label
from calcheck.simulations.metrics import plugin_classwise_ece, plugin_top_label_errors

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "dirichletcal"
REFERENCE = json.loads((FIXTURES / "reference.json").read_text())  # committed with the tests
TINY = np.finfo(np.float64).tiny  # dirichletcal clips probabilities at tiny before the log
#: largest difference of a calibrated probability from dirichletcal's where both converge
ORACLE_ATOL = 1e-4


def _data(ds, arch):
    root = data_file(None, "cifar_logits")
    if not (root / f"{ds}_{arch}").is_dir():
        pytest.skip(f"CIFAR logits not available at {root}")
    return root, load_cifar_logits(ds, arch, root)


def _rebuilt(entry, pt):
    """dirichletcal's calibrated probabilities, from its stored parameters, by calcheck's model.

    Both are ``softmax(W x + b)`` with a full ``(L, L)`` matrix relative to the last class
    (``ref_row``). DS: ``x = log p``. VS: ``x = log p - log p_L`` (dirichletcal's
    ``VectorScaling`` scales log-ratios to the last class, not ``log p``: ``W`` diagonal plus a
    last column of -1), i.e. ``W log p`` with ``W[:, -1]`` lowered by the row sums of ``W``.
    """
    params = np.load(FIXTURES / entry["params_file"])
    w = params["coef"].copy()
    if entry["method"] == "vs":
        w[:, -1] -= params["coef"].sum(axis=1)
    cal = DirichletScaling(clip=TINY)
    cal.coef_ = np.concatenate([w.ravel(), params["intercept"]])
    cal.n_classes_ = pt.shape[1]
    return cal.predict_proba(pt)


@pytest.mark.parametrize("key", sorted(REFERENCE))
def test_reference_provenance_is_complete_and_matches_the_data(key):
    entry = REFERENCE[key]
    prov = entry["provenance"]
    for field in ("dirichletcal", "jax", "numpy", "scipy", "python", "command", "date"):
        assert prov[field], field
    root, _ = _data(entry["dataset"], entry["arch"])
    for part, digest in prov["data_sha256"].items():
        path = root / f"{entry['dataset']}_{entry['arch']}" / f"{part}.npy"
        assert hashlib.sha256(path.read_bytes()).hexdigest() == digest, path


@pytest.mark.parametrize("key", sorted(REFERENCE))
def test_calcheck_estimators_agree_on_dirichletcal_outputs(key):
    entry = REFERENCE[key]
    _, d = _data(entry["dataset"], entry["arch"])
    q = _rebuilt(entry, softmax(d.test_logits))
    ref, y = entry["test"], d.test_labels
    # the rebuilt probabilities are dirichletcal's own (its predict_proba's statistics)
    assert np.mean(q.argmax(1) == y) == ref["accuracy"]
    np.testing.assert_allclose(q.mean(0), ref["class_means"], rtol=1e-9, atol=1e-12)
    assert q.max(1).mean() == pytest.approx(ref["mean_top_probability"], rel=1e-9)
    # calcheck's estimators equal the script's independent numpy ones
    c, h = top_label(q)
    errors = plugin_top_label_errors(c, h, y, n_bins=15)
    assert plugin_classwise_ece(q, y, n_bins=15) == pytest.approx(ref["cw_ece_b15"], abs=1e-12)
    assert errors.tl_ece == pytest.approx(ref["tl_ece_b15"], abs=1e-12)
    assert errors.conf_ece == pytest.approx(ref["conf_ece_b15"], abs=1e-12)


def _paper(entry, metric):
    ds, arch, method = entry["dataset"], entry["arch"], entry["method"]
    table = {
        ("cw_ece", False): "table3",
        ("tl_ece", False): "table2",
        ("cw_ece", True): "table5",
        ("tl_ece", True): "table4",
    }[(metric, ds == "focal_cifar10")]
    return PAPER[(table, metric)][(ds, arch)][method]


_NO_OPTIMUM = "cifar100/resnet110/ds"  # DS on CIFAR-100: L-BFGS's last iterate, no optimum
_CONVERGED = sorted(k for k in REFERENCE if not k.startswith("cifar100/") or k.endswith("/vs"))


@pytest.mark.parametrize("key", _CONVERGED)
def test_dirichletcal_reproduces_the_papers_cells(key):
    """Where the fit has an optimum, dirichletcal gives the paper's cells (printed digits)."""
    entry = REFERENCE[key]
    ref = entry["test"]
    assert 100 * ref["cw_ece_b15"] == pytest.approx(_paper(entry, "cw_ece"), abs=0.0051)
    assert ref["tl_ece_b15"] == pytest.approx(_paper(entry, "tl_ece"), abs=0.0006)


def test_dirichletcal_ds_on_cifar100_is_near_the_paper_but_not_reproducible():
    """No optimum: dirichletcal's own iterate gives CW-ECE x100 0.732 here, 0.720 (= the
    paper's) on the issue filer's machine; calcheck's iterate (ds_noise.json) is further off."""
    entry = REFERENCE[_NO_OPTIMUM]
    ours = json.loads(_stability.NOISE_RECORD.read_text())["fits"][_NO_OPTIMUM]["baseline"]
    oracle, paper = 100 * entry["test"]["cw_ece_b15"], _paper(entry, "cw_ece")
    assert abs(oracle - paper) <= 0.05  # the tolerance of Table 3
    assert abs(oracle - paper) < abs(100 * ours["cw_ece"][10] - paper)
    assert entry["test"]["tl_ece_b15"] == pytest.approx(_paper(entry, "tl_ece"), abs=0.006)


@pytest.mark.parametrize("key", ["cifar10/resnet110/ds", "focal_cifar10/wide_resnet/ds"])
def test_calcheck_ds_reaches_dirichletcal_where_an_optimum_exists(key):
    """DS on 10 classes converges: calcheck's fit gives dirichletcal's map."""
    entry = REFERENCE[key]
    _, d = _data(entry["dataset"], entry["arch"])
    pv, pt = softmax(d.val_logits), softmax(d.test_logits)
    cal = DirichletScaling().fit(pv, d.val_labels)
    assert cal.n_iter_ < cal.max_iter  # converged
    q = cal.predict_proba(pt)
    np.testing.assert_allclose(q, _rebuilt(entry, pt), atol=ORACLE_ATOL)
    assert plugin_classwise_ece(q, d.test_labels) == pytest.approx(
        entry["test"]["cw_ece_b15"], abs=2e-6
    )


@pytest.mark.xfail(
    reason="calcheck's VectorScaling scales log p (w log p + b); dirichletcal's, which the "
    "paper ran, scales log-ratios to the last class (w (log p - log p_L) + b): another "
    "model (CIFAR-10 ResNet-110 CW-ECE x100: 0.390 vs its 0.418, the paper 0.42)",
)
def test_calcheck_vs_is_dirichletcals_vs():
    entry = REFERENCE["cifar10/resnet110/vs"]
    _, d = _data(entry["dataset"], entry["arch"])
    pv, pt = softmax(d.val_logits), softmax(d.test_logits)
    q = VectorScaling().fit(pv, d.val_labels).predict_proba(pt)
    np.testing.assert_allclose(q, _rebuilt(entry, pt), atol=ORACLE_ATOL)


def test_dirichletcal_refit_matches_the_reference():
    """Runs dirichletcal itself (Python >= 3.12 with the package; skipped otherwise)."""
    dirichletcal = pytest.importorskip("dirichletcal", reason="dirichletcal is not installed")
    key = "cifar10/resnet110/ds"
    entry = REFERENCE[key]
    _, d = _data(entry["dataset"], entry["arch"])
    cal = dirichletcal.FullDirichletCalibrator().fit(softmax(d.val_logits), d.val_labels)
    q = np.asarray(cal.predict_proba(softmax(d.test_logits)), dtype=float)
    np.testing.assert_allclose(q.mean(0), entry["test"]["class_means"], rtol=1e-6, atol=1e-9)
    assert plugin_classwise_ece(q, d.test_labels) == pytest.approx(
        entry["test"]["cw_ece_b15"], abs=1e-6
    )
