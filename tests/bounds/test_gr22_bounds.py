"""gr22 bounds: delta, the data-dependent radius, validation, registry, Proposition 4."""

import numpy as np
import pytest

from calcheck.bounds import gr22, gr22_union, registry


def test_delta_adds_and_thm2_aliases():
    assert gr22.thm1_marginal_eps(50, 0.1, delta=1e-3) == pytest.approx(
        gr22.thm1_marginal_eps(50, 0.1) + 1e-3
    )
    assert gr22.thm2_marginal_eps(50, 0.1) == gr22.thm1_marginal_eps(50, 0.1)
    # Theorem 2(a) with alpha_l = alpha / L (catalog G13).
    assert gr22.thm2_ece_hp_eps(5000, 50, 0.1, 10) == pytest.approx(
        np.sqrt(np.log(2 * 5000 * 10 / (50 * 0.1)) / (2 * 49))
    )
    assert gr22.thm2_ece_mean_bound(np.array([50, 20, 100])) == pytest.approx(np.sqrt(1 / 40))


def test_data_dependent_radius_never_exceeds_stated():
    """Catalog G7: eps_2' <= eps_2 (B <= n/k and floor(n_l/B_l) >= k)."""
    rng = np.random.default_rng(0)
    for _ in range(200):
        k = int(rng.integers(2, 60))
        counts = rng.integers(k, 20 * k, size=int(rng.integers(3, 12)))
        bins = counts // k
        a = float(rng.uniform(0.01, 0.5))
        dd = gr22.thm1_conditional_eps_data_dependent(counts, bins, a)
        assert dd <= gr22.thm1_conditional_eps(int(counts.sum()), k, a) + 1e-12


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: gr22.thm1_marginal_eps(1, 0.1), "points_per_bin"),
        (lambda: gr22.thm1_marginal_eps(10, 1.5), "alpha"),
        (lambda: gr22.thm1_conditional_eps(5, 10, 0.1), "n must be >= points_per_bin"),
        (lambda: gr22.thm1_conditional_eps_data_dependent([10, 3], [2, 2], 0.1), "n_l >= 2 B_l"),
        (lambda: gr22.thm1_marginal_eps(10, 0.1, delta=-1), "delta"),
        (lambda: gr22.discrete_top_label_errors([0.5], [0], [1.5], [0.5]), "confidence"),
    ],
)
def test_bound_validation(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_registry_has_gr22_guarantees():
    ids = {g.id for g in registry.all_guarantees() if g.paper == "gr22"}
    assert {
        "gr22.thm1.marginal",
        "gr22.thm1.conditional",
        "gr22.thm1.ece_hp",
        "gr22.thm1.ece_mean",
        "gr22.thm2.marginal",
        "gr22.thm2.conditional",
        "gr22.thm2.ece_hp",
        "gr22.thm2.ece_mean",
        "gr22.prop4",
        "gr22.accuracy",
        "gr22.eq13",
        "gr22.eq14",
    } <= ids


def test_joint_class_wise_radii_by_hand():
    """Catalog G15, eqs. (13)/(14) with alpha_l = alpha / L: by hand, natural logs."""
    # (13): sqrt(log(2 * 10 / 0.1) / (2 * 9)) = sqrt(log(200) / 18) = 0.542541...
    assert gr22_union.eq13_joint_marginal_eps(10, 0.1, 10) == pytest.approx(0.5425412102)
    # (14): sqrt(log(2 * 1000 * 10 / (10 * 0.1)) / 18) = sqrt(log(20000) / 18) = 0.741750...
    assert gr22_union.eq14_joint_conditional_eps(1000, 10, 0.1, 10) == pytest.approx(0.7417504654)
    # (14) is Theorem 2(a)'s radius; both are the per-class radii at alpha / L
    assert gr22_union.eq14_joint_conditional_eps(5000, 50, 0.1, 7) == pytest.approx(
        gr22.thm2_ece_hp_eps(5000, 50, 0.1, 7)
    )
    assert gr22_union.eq13_joint_marginal_eps(20, 0.05, 4, delta=1e-3) == pytest.approx(
        gr22.thm2_marginal_eps(20, 0.05 / 4) + 1e-3
    )
    with pytest.raises(ValueError, match="n_classes"):
        gr22_union.eq13_joint_marginal_eps(10, 0.1, 1)


def test_prop4_on_random_instances_and_equality_when_c_is_a_function_of_h():
    rng = np.random.default_rng(1)
    prob = rng.dirichlet(np.ones(20), size=500)
    c = rng.integers(0, 4, size=(500, 20))
    h = rng.choice([0.3, 0.5, 0.7], size=(500, 20))
    p = rng.random((500, 20))
    conf, tl, conf_mce, tl_mce = gr22.discrete_top_label_errors(prob, c, h, p)
    assert np.all(conf <= tl + 1e-12)
    assert np.all(conf_mce <= tl_mce + 1e-12)
    assert np.mean(conf < tl - 1e-9) > 0.5  # strict on most instances
    # catalog G1: equality when c is a function of h
    c_of_h = (h * 10).astype(int) % 4
    conf2, tl2, _, _ = gr22.discrete_top_label_errors(prob, c_of_h, h, p)
    np.testing.assert_allclose(conf2, tl2, atol=1e-12)
