"""Laws (exact ground truth) and metrics (exact and plug-in)."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import integrate, stats

from calcheck.simulations.calibrators import BinningBatch
from calcheck.simulations.laws import (
    LAWS,
    BinaryLaw,
    ConditionalMean,
    ScoreLaw,
    law_from_spec,
    laws_of_family,
)
from calcheck.simulations.metrics import (
    conditional_max_error,
    exact_bin_errors,
    fixed_width_reliability,
    lp_ece,
    marginal_validity,
    plugin_conditional_validity,
    plugin_validity,
    validity_curve,
)


@pytest.mark.parametrize(
    ("a", "b", "eta"),
    [
        (1.0, 1.0, ConditionalMean("logistic", {"slope": 3.0, "intercept": -0.5})),
        (0.5, 2.0, ConditionalMean("logistic", {"slope": 2.0})),
        (2.0, 5.0, ConditionalMean("sine", {"frequency": 4.0})),
        (0.1, 5.0, ConditionalMean("power", {"exponent": 0.5})),
        (3.0, 1.5, ConditionalMean("step", {"threshold": 0.3})),
        (1.0, 1.0, ConditionalMean("sine")),
        (0.1, 5.0, ConditionalMean("logistic")),
        (0.7, 0.7, ConditionalMean("sine", {"frequency": 6.0})),
    ],
)
def test_interval_moment_matches_quadrature(a, b, eta):
    law = BinaryLaw(ScoreLaw(a, b), eta)
    edges = [(0.0, 0.13), (0.13, 0.5), (0.5, 0.91), (0.91, 1.0), (0.0, 1.0)]
    for lo, hi in edges:
        mass, moment = law.interval_moments(lo, 0, hi, 0)
        f = stats.beta(a, b).pdf
        want, _ = integrate.quad(
            lambda s, f=f: eta(s) * f(s),
            lo,
            hi,
            limit=1000,
            epsabs=1e-14,
            epsrel=1e-13,
            points=[0.3] if lo < 0.3 < hi else None,
        )
        assert mass == pytest.approx(stats.beta(a, b).cdf(hi) - stats.beta(a, b).cdf(lo))
        assert moment == pytest.approx(want, abs=1e-10)


def test_atoms_lexicographic_fractions():
    law = LAWS["two_atoms"]  # atoms 0.2 (eta 0.1) and 0.8 (eta 0.9), mass 1/2 each
    mass, moment = law.interval_moments(0.2, 0.3, 0.8, 0.6)
    assert mass == pytest.approx(0.5 * 0.7 + 0.5 * 0.6)
    assert moment == pytest.approx(0.5 * 0.7 * 0.1 + 0.5 * 0.6 * 0.9)
    mass, _ = law.interval_moments(0.2, 0.3, 0.2, 0.5)  # a bin inside one atom
    assert mass == pytest.approx(0.5 * 0.2)
    mass, _ = law.interval_moments(0.2, 0.0, 0.2, 0.0)  # [0.2, 0.2) without tie-breaking
    assert mass == 0


def test_partition_masses_sum_to_one_with_atoms_at_0_and_1():
    law = LAWS["mixture_atoms"]  # atoms at 0, 0.5, 1
    lo_s = np.array([0.0, 0.2, 0.5, 0.5])
    lo_u = np.array([0.0, 0.0, 0.0, 0.4])
    hi_s = np.array([0.2, 0.5, 0.5, 1.0])
    hi_u = np.array([0.0, 0.0, 0.4, 1.0])
    mass, moment = law.interval_moments(lo_s, lo_u, hi_s, hi_u)
    assert mass.sum() == pytest.approx(1.0)
    assert mass[0] >= 0.1  # atom at 0 is in the first bin
    assert moment.sum() == pytest.approx(0.6 * (stats.beta(2, 2).moment(2)) + 0.2 * 0.25 + 0.1)


@pytest.mark.parametrize("name", sorted(laws_of_family("binary")))
def test_sampling_matches_exact_mean(name):
    law = LAWS[name]
    s, y = law.sample(200_000, np.random.default_rng(0))
    mass, moment = law.interval_moments(0.0, 0.0, 1.0, 1.0)
    assert mass == pytest.approx(1.0)
    assert np.all((s >= 0) & (s <= 1))
    assert np.all((y >= 0) & (y <= 1))
    # 200K draws of a [0, 1] variable: s.e. <= 0.0012; 5 s.e. tolerance.
    assert y.mean() == pytest.approx(moment, abs=0.006)


def test_law_spec_validation():
    law = law_from_spec(
        {"scores": {"kind": "beta", "a": 2, "b": 5}, "eta": {"kind": "logistic", "slope": 2.0}},
        "mine",
    )
    assert law.name == "mine"
    assert law.scores.a == 2
    atoms = law_from_spec({"scores": {"kind": "atoms", "atoms": [0.1, 0.9]}})
    assert atoms.scores.atom_probs == (0.5, 0.5)
    for bad, match in [
        ({"scores": {"kind": "cauchy"}}, "scores kind"),
        ({"scores": {"kind": "beta", "a": -1, "b": 1}}, "a and b"),
        ({"eta": {"kind": "power", "scale": 3.0}}, "eta must map"),
        ({"eta": {"kind": "power", "slope": 3.0}}, "unknown parameters"),
        ({"labels": "gaussian"}, "labels"),
        ({"scores": {"kind": "atoms", "atoms": [0.1, 1.5]}}, "atoms must lie"),
        ({"scores": {"kind": "uniform", "atoms": [0.1]}}, r"unknown key\(s\) \['atoms'\]"),
        ({"Eta": {"kind": "constant"}}, r"unknown key\(s\) \['Eta'\].*allowed"),
        (
            {"scores": {"kind": "atoms", "atoms": [0.1, 0.9], "atom_probs": [0.3, 0.3]}},
            "kind = 'mixture'",
        ),
        ({"eta": {"kind": "sine", "amplitude": 0.6, "frequency": 2000.0}}, "eta must map"),
        ({"concentration": True}, "finite number"),
    ]:
        with pytest.raises(ValueError, match=match):
            law_from_spec(bad)


def _batch(edges, values, keys):
    r = len(edges) - 1
    lo = np.array(edges[:-1], dtype=float)[None]
    hi = np.array(edges[1:], dtype=float)[None]
    up_u = np.zeros((1, r))
    up_u[0, -1] = 1.0
    return BinningBatch(
        lo,
        np.zeros((1, r)),
        hi,
        up_u,
        np.array([values], dtype=float),
        np.array([keys], dtype=float),
        np.ones((1, r)),
    )


def test_merging_equal_outputs_by_hand():
    law = BinaryLaw(ScoreLaw(), ConditionalMean("power"))  # uniform scores, eta(s) = s
    # Bins [0, .5), [.5, .8), [.8, 1]: masses .5, .3, .2; means .25, .65, .9.
    merged = exact_bin_errors(_batch([0, 0.5, 0.8, 1], [0.3, 0.3, 0.9], [0.3, 0.3, 0.9]), law)
    assert merged.mass[0] == pytest.approx([0.5, 0.3, 0.2])
    assert merged.bin_mean[0] == pytest.approx([0.25, 0.65, 0.9])
    # Output 0.3 merges bins 1-2: E[Y | h = .3] = (.125 + .195) / .8 = .4.
    assert merged.error[0] == pytest.approx([0.1, 0.1, 0.0], abs=1e-12)
    distinct = exact_bin_errors(_batch([0, 0.5, 0.8, 1], [0.3, 0.3, 0.9], [0, 1, 2]), law)
    assert distinct.error[0] == pytest.approx([0.05, 0.35, 0.0], abs=1e-12)


def test_example1_golden_values():
    """gr21 Example 1: l1 = 0.11, l2 = sqrt(0.013); V = 0, 0.9, 1 on the three ranges."""
    err, mass = np.array([[0.1, 0.2]]), np.array([[0.9, 0.1]])
    assert lp_ece(err, mass, 1)[0] == pytest.approx(0.11)
    assert lp_ece(err, mass, 2)[0] == pytest.approx(np.sqrt(0.013))
    assert lp_ece(err, mass, np.inf)[0] == pytest.approx(0.2)
    assert marginal_validity(err, mass, [0.05, 0.1, 0.15, 0.2])[0] == pytest.approx(
        [0, 0.9, 0.9, 1]
    )
    assert conditional_max_error(err)[0] == pytest.approx(0.2)


def test_figure_1a_validity_and_auc():
    """Fig. 1(a): ten bins of mass 0.1; V(0.04) = 0.9, V(0.03) = 0.8, l1-ECE about 0.023."""
    err = 1e-3 * np.array([[1.5, 2, 8, 16, 17, 19, 22, 29, 39, 71]])
    mass = np.full((1, 10), 0.1)
    v = marginal_validity(err, mass, [0.03, 0.04])[0]
    assert v == pytest.approx([0.8, 0.9])
    l1 = lp_ece(err, mass, 1)[0]
    assert l1 == pytest.approx(0.02245)
    assert round(l1, 3) in (0.022, 0.023)
    grid = np.linspace(0, 1, 200_001)
    auc = np.trapezoid(validity_curve(err, mass, grid), grid)
    assert 1 - auc == pytest.approx(l1, abs=1e-5)  # AUC identity (catalog A6)


def test_plugin_estimators_by_hand():
    pred = np.array([0.2, 0.2, 0.8, 0.8])
    y = np.array([0, 1, 1, 1.0])  # plug-in means 0.5 and 1.0: errors .3, .3, .2, .2
    assert plugin_validity(pred, y, [0.1, 0.25, 0.3]).tolist() == [0.0, 0.5, 1.0]
    assert plugin_conditional_validity(pred, y, [0.25, 0.3]).tolist() == [0.0, 1.0]
    with pytest.raises(ValueError, match="same length"):
        plugin_validity(pred, y[:3], 0.1)
    with pytest.raises(ValueError, match="NaN"):
        plugin_validity(np.array([0.2, np.nan, 0.8, 0.8]), y, 0.1)
    with pytest.raises(ValueError, match=r"predictions must lie in \[0, 1\]"):
        plugin_conditional_validity(np.array([0.2, np.inf, 0.8, 0.8]), y, 0.1)
    with pytest.raises(ValueError, match="NaN"):
        fixed_width_reliability(pred, np.array([0, np.nan, 1, 1.0]), 10)


@given(
    st.lists(st.tuples(st.floats(0, 1), st.floats(0.01, 1)), min_size=1, max_size=12),
    st.floats(1, 8),
    st.floats(0, 1),
)
def test_property_prop1_and_domination(pairs, p, eps):
    err = np.array([[e for e, _ in pairs]])
    w = np.array([[m for _, m in pairs]])
    w = w / w.sum()
    # Proposition 1: lp-ECE is non-decreasing in p and bounded by the max error.
    assert lp_ece(err, w, 1)[0] <= lp_ece(err, w, p)[0] + 1e-12
    assert lp_ece(err, w, p)[0] <= conditional_max_error(err)[0] + 1e-12
    # Conditional validity is dominated by marginal validity (catalog A7).
    assert float(conditional_max_error(err)[0] <= eps) <= marginal_validity(err, w, eps)[0] + 1e-12
