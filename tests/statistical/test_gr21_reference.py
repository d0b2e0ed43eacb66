"""Statistical tier: gr21 reference values and lemmas, exact truth, for every seed.

Each test uses root seed ``20211 + seed`` (conftest's ``seed`` fixture) and a 4-standard-
error tolerance (a false alarm of about 6e-5 per test and seed).
"""

import numpy as np
import pytest

from calcheck.bounds import gr21
from calcheck.simulations.calibrators import UniformMassBinning, ZadroznyElkanBinning
from calcheck.simulations.engine import load_outcome, run_experiments
from calcheck.simulations.experiments.binning import BinningExperiment
from calcheck.simulations.laws import LAWS
from calcheck.simulations.metrics import exact_bin_errors, lp_ece, marginal_validity
from calcheck.simulations.provenance import generator
from calcheck.simulations.store import ResultStore

pytestmark = pytest.mark.statistical


def _cell_data(calibrator, law, n, b, seed, reps=4000):
    store = ResultStore(":memory:")
    exp = BinningExperiment(calibrator, LAWS[law], n, b)
    run_experiments([exp], reps, 20211 + seed, store, n_jobs=2)
    return load_outcome(store, exp, reps, 20211 + seed)


def test_reference_failure_rates_at_eta_half(seed):
    """Catalog §4 T3/T4 (exact binomial computation, B = 10, alpha = 0.1, eta = 1/2, n = 1K):
    conditional failure about 0.012 and marginal failure about 0.0154.
    Tolerance: 4 Monte Carlo standard errors at R = 4000."""
    d = _cell_data({"name": "randomized_umd"}, "uniform_half", 1000, 10, seed)
    eps2 = gr21.thm3_conditional_eps(1000, 10, 0.1)
    fail_cond = np.mean(d.max_error > eps2)
    assert fail_cond == pytest.approx(0.012, abs=4 * np.sqrt(0.012 * 0.988 / 4000))
    q = marginal_validity(d.error, d.mass, gr21.thm4_marginal_eps(1000, 10, 0.1))
    se = q.std() / np.sqrt(q.size)
    assert 1 - q.mean() == pytest.approx(0.0154, abs=4 * se + 1e-4)


@pytest.mark.parametrize(("n", "catalog"), [(100, 0.161), (21, 0.463), (29, 0.346)])
def test_reference_expected_ece(n, catalog, seed):
    """Catalog §4 T4 check (b) (author's simulation, 20K reps): E[l2-ECE] at B = 10, eta = 1/2.
    Tolerance: 4 standard errors of our mean plus 4 of the catalog's (same spread)."""
    d = _cell_data({"name": "randomized_umd"}, "uniform_half", n, 10, seed)
    l2 = lp_ece(d.error, d.mass, 2)
    se = l2.std() / np.sqrt(l2.size)
    assert l2.mean() == pytest.approx(catalog, abs=4 * se + 4 * l2.std() / np.sqrt(20000) + 5e-4)
    assert l2.mean() <= gr21.thm4_ece_mean_bound(n, 10)  # the stated bound holds here too


def test_reference_no_tie_breaking_failure(seed):
    """Catalog §4 T3 stress (i): two atoms, B = 3, n = 3000, no jitter: mean max error 0.40."""
    d = _cell_data({"name": "umd", "tie_breaking": "none"}, "two_atoms", 3000, 3, seed, 500)
    assert d.max_error.mean() == pytest.approx(0.40, abs=0.01)
    fixed = _cell_data({"name": "umd"}, "two_atoms", 3000, 3, seed, 500)
    assert fixed.max_error.mean() < gr21.thm3_conditional_eps(3000, 3, 0.1)


def test_lemma2_umd_unbiased_and_zadrozny_elkan_biased(seed):
    """Lemma 2: given the edges, UMD averages iid draws from the bin, so its bin value is
    unbiased for the bin bias. Negative control (catalog §4 L2): Zadrozny-Elkan also averages
    the upper boundary point, whose mean under eta(s) = s is the edge itself, so its values
    are biased upwards by about (edge - Pi_b) / (m + 1) = 0.05 / 20 = 0.0025.
    Same data for both; 20000 x 9 bins give a standard error of about 2.3e-4."""
    law = LAWS["uniform_identity"]
    rng = generator(20211 + seed, "lemma2")
    s, y = law.sample((20000, 200), rng)
    bias = {}
    for cls in (UniformMassBinning, ZadroznyElkanBinning):
        batch = cls(10).fit_batch(s, y, 10, rng)
        signed = (batch.values - exact_bin_errors(batch, law).bin_mean)[:, :-1]  # last bins agree
        bias[cls.name] = (signed.mean(), signed.std() / np.sqrt(signed.size))
    mean, se = bias["umd"]
    assert abs(mean) < 4 * se
    mean, se = bias["zadrozny_elkan"]
    assert mean > 4 * se
    assert mean == pytest.approx(0.0025, abs=4 * se)


def test_auc_identity_on_simulated_maps(seed):
    """Catalog A6: E[l1-ECE] = 1 - int_0^1 V(eps) d eps, both from exact ground truth."""
    d = _cell_data({"name": "randomized_umd"}, "uniform_logistic", 500, 10, seed, 500)
    grid = np.linspace(0, 1, 20001)
    v = marginal_validity(d.error, d.mass, grid).mean(axis=0)
    auc = np.sum((v[1:] + v[:-1]) / 2 * np.diff(grid))
    assert 1 - auc == pytest.approx(lp_ece(d.error, d.mass, 1).mean(), abs=1e-4)
