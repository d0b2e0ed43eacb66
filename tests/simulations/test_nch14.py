"""nch14: the exact population AUC loss, the staircase, and the finite-n experiment."""

import numpy as np
import pytest

from calcheck.simulations.calibrators.binning import uniform_mass_fit_sorted
from calcheck.simulations.experiments.nch14 import AucLimitExperiment, AucLossExperiment
from calcheck.simulations.laws import LAWS
from calcheck.simulations.laws.binary import staircase_law
from calcheck.simulations.metrics.auc import auc_loss, population_auc_loss


def _mann_whitney(z, s):
    """Plug-in AUC with ties 1/2 (nch14 eq. 11) by ranks."""
    from scipy.stats import rankdata

    r = rankdata(s)
    m = z.sum()
    return (r[z == 1].sum() - m * (m + 1) / 2) / (m * (z.size - m))


def test_exact_loss_matches_a_large_monte_carlo():
    # catalog G11: B = 10, N = 60, uniform scores, c(y) = y (our own draw).
    law = LAWS["uniform_identity"]
    rng = np.random.default_rng(0)
    s = np.sort(rng.random((1, 60)), axis=1)
    y = (rng.random((1, 60)) < s).astype(float)
    fit = uniform_mass_fit_sorted(s, np.zeros_like(s), y, 10, include_upper=True)
    loss, loss1, loss2 = auc_loss(law, fit.lower_s, fit.upper_s, fit.values)
    assert loss[0] == pytest.approx(loss1[0] + loss2[0])
    m = 2_000_000
    ys = rng.random(m)
    z = (rng.random(m) < ys).astype(int)
    edges = np.concatenate([fit.lower_s[0], [1.0]])
    out = fit.values[0][np.clip(np.searchsorted(edges, ys, side="right") - 1, 0, 9)]
    mc = _mann_whitney(z, ys) - _mann_whitney(z, out)
    # Monte Carlo standard error of a difference of two AUCs on 2e6 points: < 3e-4
    assert loss[0] == pytest.approx(mc, abs=1e-3)


def test_identity_law_limit_by_hand():
    # c(y) = y, B quantile bins of U(0, 1): Loss_1 = 0; within a bin of width w at position
    # t the pair term is w^4 / 12 + ..., so the limit is small; B = 1 gives AUC(y) - 1/2.
    law = LAWS["uniform_identity"]
    assert population_auc_loss(law, 1)[0] == pytest.approx(5 / 6 - 0.5, abs=1e-9)
    loss, loss1, _ = population_auc_loss(law, 10)
    assert loss1 == 0.0
    assert 0 < loss < 0.05


def test_staircase_attains_the_bound_and_sine_gains():
    for b in (2, 5, 10, 20):
        loss = population_auc_loss(staircase_law(b), b)[0]
        assert 1 / (2 * b) * (1 - 1e-3) < loss <= 1 / (2 * b)
    assert population_auc_loss(LAWS["uniform_sine"], 10)[0] < 0  # binning gains AUC
    with pytest.raises(ValueError, match="theta_k"):
        staircase_law(10, base=0.999, step=0.01)
    with pytest.raises(ValueError, match="atoms"):
        AucLimitExperiment(LAWS["two_atoms"], 10)


def test_limit_experiment_equal_width_breaks_equal_masses():
    e = AucLimitExperiment(LAWS["skewed_beta"], 10, "equal_width")
    out = e.simulate(np.random.default_rng(0), 3)
    assert np.all(out.loss == out.loss[0])  # deterministic
    assert out.loss[0] > 0.05 * 4  # far above 1/(2B)
    s = e.symbols()
    assert s["bin_masses"].sum() == pytest.approx(1.0)
    with pytest.raises(ValueError, match="binning"):
        AucLimitExperiment(LAWS["skewed_beta"], 10, "quantiles")


def test_finite_n_loss_approaches_the_limit():
    e = AucLossExperiment(staircase_law(5), 5, (50, 50_000))
    out = e.simulate(np.random.default_rng(1), 100)
    small, large = out.loss.mean(axis=0)
    assert small < large  # few points per bin: thetahat ties and misorders hide the loss
    assert large == pytest.approx(0.1, abs=0.005)
    assert e.symbols()["limit"] == pytest.approx(0.1, rel=1e-3)
    ident = AucLossExperiment(LAWS["uniform_identity"], 20, (100,)).simulate(
        np.random.default_rng(2), 200
    )
    # catalog G11's table: B = 20, N = 100: mean loss 0.053, above 1/(2B) in every run
    assert ident.loss.mean() == pytest.approx(0.053, abs=0.01)
    assert (ident.loss > 0.025).mean() > 0.9


def test_bin_parts_experiment():
    from calcheck.simulations.experiments.nch14 import BinPartsExperiment

    out = BinPartsExperiment(LAWS["uniform_logistic"], 500, 10).simulate(
        np.random.default_rng(3), 200
    )
    assert np.all(out.excess <= 1e-12)  # eq. (2) surely
    assert np.mean(out.excess_min > 1e-12) > 0.5  # the min in place of the max fails
    assert np.all(out.mass_error >= 0)
    with pytest.raises(ValueError, match="n"):
        BinPartsExperiment(LAWS["uniform_half"], 10, 10)


def test_eq22_identity_by_hand_on_unequal_masses():
    """nch14.thm34.unequal is an identity: loss and eq. (22)'s bound, computed by hand.

    Scores Beta(2, 1) (density 2s), c(s) = s, equal-width bins [0, 1/2), [1/2, 1]: masses
    1/4 and 3/4, positive masses m_K = 1/12 and 7/12, negative masses 1/6 and 1/6,
    pi1 pi0 = 2/9. Same-bin correctly ordered pairs: int int_{a<s<t<b} 2t t 2s (1 - s)
    = 13/1440 and 103/1440; Loss_2 = sum (d_K - m_K neg_K / 2) / (pi1 pi0) = 9/80 (AUC 0.8
    against 0.6875 for the binned map), Loss_1 = 0; eq. (22)'s bound sum m_K neg_K /
    (2 pi1 pi0) = 1/4.
    """
    from calcheck.bounds import registry
    from calcheck.simulations.laws.binary import BinaryLaw
    from calcheck.simulations.laws.eta import ConditionalMean, ScoreLaw

    law = BinaryLaw(ScoreLaw(2.0, 1.0), ConditionalMean("linear"), name="beta21_identity")
    e = AucLimitExperiment(law, 2, "equal_width")
    s = e.symbols()
    assert s["bin_masses"] == pytest.approx([1 / 4, 3 / 4], abs=1e-12)
    assert s["bin_rates"] == pytest.approx([1 / 3, 7 / 9], abs=1e-12)
    out = e.simulate(np.random.default_rng(0), 2)
    assert out.loss1 == pytest.approx([0.0, 0.0], abs=1e-12)
    assert out.loss2 == pytest.approx([9 / 80] * 2, abs=1e-7)
    assert out.loss == pytest.approx([9 / 80] * 2, abs=1e-7)
    bound = registry.get("nch14.thm34.unequal").function(s["bin_masses"], s["bin_rates"])
    assert float(bound) == pytest.approx(1 / 4, abs=1e-12)


def _eq2_by_definition(v, w, t):
    """Eq. (2)'s excess from the definitions, one output bin at a time (plain loops).

    ``o_i`` (mean output) and ``e_i`` (mean truth) are the mass-weighted means over the
    output bin's input bins; the excess is ``max_i (|o_i - e_i| - max_t |v_t - theta_t|)``
    (and with min_t), over the 10 equal-frequency output bins and one bin per output value.
    """
    order = np.argsort(v, kind="stable")
    v, w, t = v[order], w[order], t[order]
    mid = np.cumsum(w) - w / 2
    partitions = ([min(int(m * 10), 9) for m in mid], [float(x) for x in v])
    excess, excess_min = -np.inf, -np.inf
    for labels in partitions:
        for g in set(labels):
            idx = [i for i, lab in enumerate(labels) if lab == g]
            mass = sum(w[i] for i in idx)
            if mass <= 0:
                continue
            o = sum(w[i] * v[i] for i in idx) / mass
            e = sum(w[i] * t[i] for i in idx) / mass
            errs = [abs(v[i] - t[i]) for i in idx]
            excess = max(excess, abs(o - e) - max(errs))
            excess_min = max(excess_min, abs(o - e) - min(errs))
    return excess, excess_min


@pytest.mark.parametrize("name", ["uniform_logistic", "two_atoms"])
def test_eq2_identity_bookkeeping_matches_the_definitions(name):
    """nch14.eq2 is an identity: its vectorised bookkeeping equals a loop over output bins."""
    from calcheck.simulations.calibrators.edges import sort_scores
    from calcheck.simulations.experiments.nch14 import BinPartsExperiment

    law, n, b, reps = LAWS[name], 60, 6, 40
    out = BinPartsExperiment(law, n, b).simulate(np.random.default_rng(5), reps)
    # the experiment's draws, replayed
    rng = np.random.default_rng(5)
    s, u = sort_scores(law.sample_scores((reps, n), rng), rng, tie_breaking="lexicographic")
    y = law.sample_labels(s, rng)
    fit = uniform_mass_fit_sorted(s, u, y, b, include_upper=True)
    eta, moment = law.interval_moments(fit.lower_s, fit.lower_u, fit.upper_s, fit.upper_u)
    theta = np.where(eta > 0, moment / np.where(eta > 0, eta, 1.0), fit.values)
    for r in range(reps):
        excess, excess_min = _eq2_by_definition(fit.values[r], eta[r], theta[r])
        assert out.excess[r] == pytest.approx(excess, abs=1e-12)
        assert out.excess_min[r] == pytest.approx(excess_min, abs=1e-12)
        assert excess <= 1e-12  # eq. (2): a weighted mean is at most its largest term
