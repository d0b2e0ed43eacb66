"""Laws: per-atom eta, piecewise eta (exact integrals), exact range checks, the table parser."""

import json

import numpy as np
import pytest
from scipy import integrate, stats

from calcheck.simulations.laws import LAWS, BinaryLaw, ConditionalMean, ScoreLaw, law_from_spec

FAMILIES = {"binary", "linear_shift", "top_label", "dirichlet_affine", "adversary"}


def test_atom_eta_gives_each_atom_its_own_mean():
    law = BinaryLaw(
        ScoreLaw(1.0, 1.0, (0.2, 0.7), (0.3, 0.1)), ConditionalMean("power"), atom_eta=(0.9, 0.05)
    )
    # Bin [0.1, 0.5): continuous mass 0.6 * 0.4, moment 0.6 * (0.5^2 - 0.1^2) / 2, plus the
    # whole atom at 0.2 (mass 0.3, eta 0.9): hand-computed.
    mass, moment = law.interval_moments(0.1, 0.0, 0.5, 0.0)
    assert mass == pytest.approx(0.6 * 0.4 + 0.3)
    assert moment == pytest.approx(0.6 * (0.25 - 0.01) / 2 + 0.3 * 0.9)
    # An edge at the atom 0.7 with U = 0.25: a quarter of the atom falls below it.
    mass, moment = law.interval_moments(0.5, 0.0, 0.7, 0.25)
    assert mass == pytest.approx(0.6 * 0.2 + 0.1 * 0.25)
    assert moment == pytest.approx(0.6 * (0.49 - 0.25) / 2 + 0.1 * 0.25 * 0.05)


def test_labels_at_atoms_use_the_atom_eta():
    law = BinaryLaw(
        ScoreLaw(atoms=(0.2, 0.7), atom_probs=(0.5, 0.5)),
        ConditionalMean("constant", {"value": 0.5}),
        atom_eta=(0.9, 0.05),
    )
    s, y = law.sample(40_000, np.random.default_rng(0))
    for atom, want in ((0.2, 0.9), (0.7, 0.05)):
        k, m = int(y[s == atom].sum()), int((s == atom).sum())
        # exact two-sided binomial test at level 1e-6: holds for any seed but once in 1e6
        assert stats.binomtest(k, m, want).pvalue > 1e-6


@pytest.mark.parametrize(("a", "b"), [(1.0, 1.0), (2.0, 5.0)])
@pytest.mark.parametrize(
    "eta",
    [
        ConditionalMean("piecewise_constant", {"knots": [0.3, 0.6], "values": [0.1, 0.9, 0.2]}),
        ConditionalMean(
            "piecewise_linear", {"knots": [0, 0.3, 0.8, 1], "values": [0, 0.9, 0.2, 1]}
        ),
    ],
)
def test_piecewise_integrals_are_exact(a, b, eta):
    # Closed forms (CDF differences) against adaptive quadrature split at the knots: both are
    # exact to rounding, so 1e-10 leaves room only for quad's own error.
    scores = ScoreLaw(a, b)
    pdf = stats.beta(a, b).pdf
    for lo, hi in ((0.0, 1.0), (0.1, 0.45), (0.3, 0.6), (0.65, 0.99)):
        want, _ = integrate.quad(
            lambda s: eta(s) * pdf(s),
            lo,
            hi,
            points=[0.3, 0.6, 0.8],
            epsabs=1e-13,
            epsrel=1e-13,
            limit=200,
        )
        assert float(eta.integral(lo, hi, scores)) == pytest.approx(want, abs=1e-10)


def test_knot_belongs_to_the_left_piece_as_in_step():
    pc = ConditionalMean("piecewise_constant", {"knots": [0.5], "values": [0.2, 0.8]})
    step = ConditionalMean("step", {"threshold": 0.5, "low": 0.2, "high": 0.8})
    s = np.array([0.0, 0.5, 0.5000001, 1.0])
    np.testing.assert_array_equal(pc(s), step(s))


@pytest.mark.parametrize(
    ("kind", "params"),
    [
        ("sine", {"amplitude": 0.6, "frequency": 2000.0}),
        ("power", {"scale": 1.5}),
        ("linear", {"intercept": 0.5, "slope": 0.6}),
        ("piecewise_linear", {"knots": [0, 1], "values": [0.0, 1.2]}),
        ("piecewise_constant", {"knots": [0.5], "values": [-0.1, 0.5]}),
    ],
)
def test_eta_range_is_checked_exactly(kind, params):
    with pytest.raises(ValueError, match="eta must map"):
        ConditionalMean(kind, params)


def test_valid_etas_pass_and_report_their_range():
    assert ConditionalMean("sine", {"amplitude": 0.45}).range() == pytest.approx((0.05, 0.95))
    # a slow sine never reaches its lowest point on [0, 1]
    low, high = ConditionalMean("sine", {"amplitude": 0.4, "frequency": 0.1}).range()
    assert low == pytest.approx(0.5)
    assert high == pytest.approx(0.5 + 0.4 * np.sin(0.2 * np.pi))


@pytest.mark.parametrize(
    ("table", "match"),
    [
        ({"family": "binary", "etta": {"kind": "constant"}}, r"\['etta'\]"),
        ({"family": "top_label", "class_probs": [0.5, 0.5]}, "classes"),
        ({"family": "linear_shift", "c0": 0.5, "drift": 1}, r"\['drift'\]"),
        ({"family": "dirichlet_affine", "shrink": 2.0}, "shrink"),
        ({"family": "gaussian"}, "family must be one of"),
        ({"scores": {"kind": "beta", "a": "2", "b": 1}}, "finite number"),
        ({"scores": {"kind": "atoms", "atoms": [0.1]}, "atom_eta": [0.5, 0.5]}, "one value per"),
    ],
)
def test_bad_tables_are_refused_by_name(table, match):
    with pytest.raises(ValueError, match=match):
        law_from_spec(table, "t")


def test_tables_of_every_family_round_trip():
    binary = law_from_spec(
        {
            "scores": {"kind": "mixture", "a": 2.0, "b": 2.0, "atoms": [0.5], "atom_probs": [0.2]},
            "eta": {"kind": "piecewise_linear", "knots": [0, 1], "values": [0.1, 0.8]},
            "atom_eta": [0.95],
        },
        "b",
    )
    assert binary.spec()["atom_eta"] == [0.95]
    shift = law_from_spec({"family": "linear_shift", "c0": 0.3, "eta": {"kind": "sine"}}, "s")
    assert shift.upper == pytest.approx(1.3)
    top = law_from_spec(
        {
            "family": "top_label",
            "class_probs": [0.5, 0.3, 0.2],
            "classes": [{"eta": {"kind": "constant", "value": 0.7}}] * 3,
        },
        "t",
    )
    assert top.n_classes == 3
    cw = law_from_spec(
        {"family": "dirichlet_affine", "concentration": [2, 1, 1], "shrink": 0.5}, "c"
    )
    assert cw.n_classes == 3
    assert law_from_spec("two_atoms") is LAWS["two_atoms"]
    with pytest.raises(ValueError, match="unknown law name"):
        law_from_spec("three_atoms")


@pytest.mark.parametrize("name", sorted(LAWS))
def test_every_shipped_law_has_a_family_and_a_json_spec(name):
    law = LAWS[name]
    assert law.family in FAMILIES
    json.dumps(law.spec())
