"""Parametric law families (issue 14): valid laws, exact truth, validation, CRN."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import integrate, stats

from calcheck.simulations.experiments.binning import BinningExperiment
from calcheck.simulations.laws.families import FAMILIES, get_family
from calcheck.simulations.search import simulate_crn


def _thetas(fam, count=5, seed=0):
    rng = np.random.default_rng(seed)
    lo, hi = np.asarray(fam.lower), np.asarray(fam.upper)
    return [*fam.benign, *(lo + (hi - lo) * rng.random((count, fam.dim)))]


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_every_family_builds_valid_laws(name):
    fam = get_family(name)
    assert len(fam.names) == fam.dim == len(fam.bounds)
    assert len(fam.benign) >= 2
    for theta in _thetas(fam):
        law = fam.law(theta)
        assert law.family == fam.law_family
        described = fam.describe(theta)
        assert described["family"] == fam.name
        assert set(fam.names) <= set(described)


def _binary_moment_by_quadrature(law, lo, hi):
    """Mass and first moment of [lo, hi) by quadrature (continuous) and atom sums."""
    sc = law.scores
    wc = sc.continuous_weight
    mass = moment = 0.0
    if wc > 0:
        pdf = stats.beta(sc.a, sc.b).pdf
        brk = list(law.eta.params.get("knots", ())) if "knots" in law.eta.params else None
        mass += wc * (sc.cdf(hi) - sc.cdf(lo))
        with warnings.catch_warnings():  # a logistic eta near 0 is steep: roundoff notes
            warnings.simplefilter("ignore", integrate.IntegrationWarning)
            val, _ = integrate.quad(
                lambda s: float(law.eta(s)) * pdf(s),
                max(lo, 1e-12),
                min(hi, 1 - 1e-12),
                points=brk,
                limit=200,
                epsabs=1e-11,
            )
        moment += wc * val
    for atom, p, e in zip(sc.atoms, sc.atom_probs, law.atom_means(), strict=True):
        if lo < atom < hi:
            mass, moment = mass + p, moment + p * e
    return mass, moment


@pytest.mark.parametrize("name", ["atoms", "beta_piecewise", "mixture", "staircase"])
def test_binary_families_have_exact_bin_moments(name):
    fam = get_family(name)
    edges = np.linspace(0.0, 1.0, 8) + 0.013  # away from the benign atoms
    lo, hi = np.r_[0.0, edges[:-1]], edges
    for theta in _thetas(fam, 3):
        law = fam.law(theta)
        mass, moment = law.interval_moments(lo, 0.0, hi, 0.0)
        for i in range(lo.size):
            if any(a in (lo[i], hi[i]) for a in law.scores.atoms):
                continue
            m, mom = _binary_moment_by_quadrature(law, lo[i], hi[i])
            assert mass[i] == pytest.approx(m, abs=1e-9)
            assert moment[i] == pytest.approx(mom, abs=1e-8)


def test_atomic_masses_sum_to_exactly_one_and_merge():
    fam = get_family("atoms", k=3)
    law = fam.law([0.3, 0.3, 0.7, 0.2, 0.6, 0.9, 0.0, 1.0, 0.4])
    assert law.scores.continuous_weight == 0.0
    assert sum(law.scores.atom_probs) == 1.0
    assert law.scores.atoms == (0.3, 0.7)  # equal positions merged, eta mass-weighted
    assert law.atom_eta[0] == pytest.approx(0.75)


def test_top_label_and_binned_model_truth():
    tl = get_family("top_label", n_classes=3).law([0.5, 0.5, 1, 0.2, 0.6, 0.5, 0.5, 0.0, 1.0])
    assert tl.class_probs == pytest.approx((0.25, 0.25, 0.5))
    mass, moment = tl.laws[0].interval_moments(0.0, 0.0, 1.0, 1.0)
    assert (mass, moment) == (pytest.approx(1.0), pytest.approx(0.4))  # mean of 0.2..0.6
    bm = get_family("binned_model", n_bins=2).law([0.2, 0.8, 0.25, 0.75, 0.1, 0.5])
    assert bm.ce_sq == pytest.approx(0.25 * 0.01 + 0.75 * 0.09)


def test_staircase_family_contains_nch14_staircase():
    from calcheck.simulations.laws.binary import staircase_law

    fam = get_family("staircase", n_bins=4)
    law = fam.law([0.5, 0.501, 0.502, 0.503, 0.0, 1.0])
    ref = staircase_law(4)
    s = np.linspace(0, 1, 1001)
    assert np.array_equal(law.eta(s), ref.eta(s))


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: get_family("atoms").law([0.5] * 8), "takes 9 parameters"),
        (lambda: get_family("atoms").law([1.5] + [0.5] * 8), "parameter pos_1"),
        (lambda: get_family("beta_piecewise").law([0.5] * 4 + [np.nan]), "parameter eta_5"),
        (lambda: get_family("nope"), "law family must be one of"),
        (lambda: get_family("atoms", k=0), "k must be an integer"),
        (lambda: get_family("atoms", j=2), "family 'atoms'"),
        (lambda: get_family("top_label", n_classes=2), "n_classes"),
    ],
)
def test_validation_names_the_parameter(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_common_random_numbers_across_theta():
    fam = get_family("beta_piecewise", k=3)
    cal = {"name": "umd", "tie_breaking": "lexicographic"}
    a = BinningExperiment(cal, fam.law([0.1, 0.5, 0.9]), 50, 5)
    b = BinningExperiment(cal, fam.law([0.2, 0.5, 0.8]), 50, 5)
    oa, ob = simulate_crn(a, 7, 200), simulate_crn(b, 7, 200)
    assert np.array_equal(oa.mass, ob.mass)  # same scores: the same draws for both laws
    assert np.array_equal(simulate_crn(a, 7, 200).error, oa.error)
    assert not np.array_equal(simulate_crn(a, 8, 200).mass, oa.mass)


def test_linear_shift_family_has_exact_target_truth():
    fam = get_family("linear_shift")
    edges = np.linspace(0.0, 1.0, 6)
    for theta in _thetas(fam, 4):
        law = fam.law(theta)
        p = fam.params(theta)
        assert (law.lower, law.upper) == (1 - p["c0"], 1 + p["c0"])
        lo, hi = law.eta.range()
        assert 0.0 <= lo <= hi <= 1.0
        mean = law.target_bin_mean(edges[:-1], edges[1:])
        for i in range(edges.size - 1):
            mom, _ = integrate.quad(lambda x, w=law: w.eta(x) * w.weight(x), edges[i], edges[i + 1])
            mass, _ = integrate.quad(law.weight, edges[i], edges[i + 1])
            assert mean[i] == pytest.approx(mom / mass, abs=1e-10)
    # amp = 0: a constant eta = center, whatever the frequency
    law = fam.law([0.5, 0.5, 0.0, 3.0])
    assert np.all(law.eta(np.linspace(0, 1, 11)) == 0.5)


def test_dirichlet_affine_family_draws_the_dirichlet_law_by_inversion():
    fam = get_family("dirichlet_affine", n_classes=3)
    theta = [0.8, 1.0, -1.0, 0.0]  # a = (2, 0.5, 1)
    law = fam.law(theta)
    assert law.concentration == (2.0, 0.5, 1.0)
    assert law.shrink == 0.8
    assert law.spec()["sampler"] == "gamma_inversion"
    g, y = law.sample(40000, np.random.default_rng(1))
    assert g.shape == (40000, 3)
    assert np.allclose(g.sum(axis=1), 1.0)
    assert np.all(g > 0)
    for lab, a in enumerate(law.concentration):
        assert stats.kstest(g[:, lab], stats.beta(a, 3.5 - a).cdf).pvalue > 1e-3
        # exact class-wise truth: P(Y = l) = E[eta_l(g_l)] of the binary class law
        mass, moment = law.class_law(lab).interval_moments(0.0, 0.0, 1.0, 1.0)
        assert mass == pytest.approx(1.0)
        assert np.mean(y == lab) == pytest.approx(moment, abs=0.01)


def test_new_families_consume_random_numbers_independently_of_theta():
    for fam in (get_family("linear_shift"), get_family("dirichlet_affine", n_classes=4)):
        states = []
        for theta in _thetas(fam, 3):
            law, rng = fam.law(theta), np.random.default_rng(11)
            if fam.law_family == "linear_shift":
                law.sample_labels(law.sample_source((3, 50), rng), rng)
            else:
                law.sample((3, 50), rng)
            states.append(rng.bit_generator.state["state"]["state"])
        assert len(set(states)) == 1
    # the same uniforms: with equal concentrations the score vectors are equal for any shrink
    fam = get_family("dirichlet_affine")
    g1, _ = fam.law([0.2, 1.0, 0.0, -1.0]).sample(100, np.random.default_rng(4))
    g2, _ = fam.law([0.9, 1.0, 0.0, -1.0]).sample(100, np.random.default_rng(4))
    assert np.array_equal(g1, g2)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: get_family("linear_shift").law([0.95, 0.5, 0.5, 1.0]), "parameter c0"),
        (lambda: get_family("linear_shift").law([0.5, 0.5, 1.5, 1.0]), "parameter amp"),
        (lambda: get_family("linear_shift").law([0.5, 0.5, 0.5]), "takes 4 parameters"),
        (lambda: get_family("dirichlet_affine").law([0.0, 1, 1, 1]), "parameter shrink"),
        (lambda: get_family("dirichlet_affine").law([1, 1, 1, np.nan]), "parameter log2_a_3"),
        (lambda: get_family("dirichlet_affine", n_classes=2), "n_classes"),
        (lambda: get_family("linear_shift", k=2), "family 'linear_shift'"),
    ],
)
def test_new_families_validation_names_the_parameter(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_new_families_benign_laws_are_far_from_eta_half():
    fam = get_family("linear_shift")
    for theta in fam.benign:
        lo, hi = fam.law(theta).eta.range()
        assert hi < 0.35 or lo > 0.65
    fam = get_family("dirichlet_affine", n_classes=4)
    for theta in fam.benign:
        law = fam.law(theta)
        for lab in range(law.n_classes):
            cl = law.class_law(lab)  # eta linear in g_l: its mean E[eta(g_l)] far from 1/2
            _, moment = cl.interval_moments(0.0, 0.0, 1.0, 1.0)
            assert abs(moment - 0.5) > 0.3
