"""Exact coverage at constant eta: brute force, properties, and the project's Monte Carlo.

The Monte Carlo side runs the experiments the checks run (BinningExperiment with the
calibrators of gr21 / nch14, TopLabelBinningExperiment of gr22) through the engine's seeded
block protocol, and counts with the checks' own events (Within("max_error"), Marginal()).
"""

import itertools
import math

import numpy as np
import pytest

from calcheck.bounds import gr21, gr22, nch14
from calcheck.simulations.engine import simulate_block
from calcheck.simulations.exact_coverage import (
    bin_point_counts,
    bin_within_probability,
    exact_coverage,
    expected_bin_masses,
    smallest_exact_eps,
)
from calcheck.simulations.exact_top_label import smallest_top_label_eps, top_label_exact_coverage
from calcheck.simulations.experiments.base import BinOutcome
from calcheck.simulations.experiments.binning import BinningExperiment
from calcheck.simulations.experiments.gr22 import TopLabelBinningExperiment
from calcheck.simulations.laws import LAWS
from calcheck.simulations.laws.binary import BinaryLaw, ConditionalMean, ScoreLaw
from calcheck.simulations.laws.multiclass import TopLabelLaw
from calcheck.theory_checks.checks.events import Marginal, Within

ROOT_SEED = 2024
BLOCKS = 20  # 2000 replicates per setting
Z_MAX = 4.0


# ------------------------------------------------------------------- brute force
def _brute_force(n, n_bins, eta, eps, scheme):
    """Enumerate all 2^n label vectors in rank order: (conditional, marginal) coverage."""
    ranks = [(b * (n + 1) + n_bins - 1) // n_bins for b in range(n_bins + 1)]
    sets = []
    for b in range(n_bins):
        hi = ranks[b + 1] - 1 if scheme == "umd" else min(ranks[b + 1], n)
        sets.append(range(ranks[b], hi))  # 0-based ranks A_{b-1}+1 .. hi (1-based)
    masses = [(ranks[b + 1] - ranks[b]) / (n + 1) for b in range(n_bins)]
    cond = marg = 0.0
    for y in itertools.product((0, 1), repeat=n):
        k = sum(y)
        p = eta**k * (1 - eta) ** (n - k)
        ok = [abs(sum(y[i] for i in s) / len(s) - eta) <= eps + 1e-12 for s in sets]
        cond += p * all(ok)
        marg += p * sum(w for w, o in zip(masses, ok, strict=True) if o)
    return cond, marg


@pytest.mark.parametrize(
    ("n", "n_bins", "eta", "scheme"),
    [
        (6, 1, 0.5, "umd"),
        (8, 2, 0.3, "umd"),
        (11, 3, 0.5, "zadrozny_elkan"),
        (12, 4, 0.7, "umd"),
        (10, 2, 1 / 3, "zadrozny_elkan"),
    ],
)
def test_matches_brute_force(n, n_bins, eta, scheme):
    counts = bin_point_counts(n, n_bins, scheme)
    cands = sorted({abs(k / m - eta) for m in counts for k in range(m + 1)})
    # every jump point (closed events), and points between them
    grid = [*cands, *[(a + b) / 2 for a, b in itertools.pairwise(cands)], 0.0, 1.0]
    for eps in grid:
        cond, marg = _brute_force(n, n_bins, eta, eps, scheme)
        got_c = exact_coverage(n, n_bins, eta, eps, scheme=scheme)
        got_m = exact_coverage(n, n_bins, eta, eps, event="marginal", scheme=scheme)
        assert got_c == pytest.approx(cond, abs=1e-13), eps
        assert got_m == pytest.approx(marg, abs=1e-13), eps


def test_single_bin_by_hand():
    # B = 1, n = 2: A_0 = 0, A_1 = n + 1 = 3, so UMD averages both labels (ranks 1..2).
    assert bin_point_counts(2, 1).tolist() == [2]
    # K ~ Bin(2, 1/2): |K/2 - 1/2| is 1/2 w.p. 1/2 and 0 w.p. 1/2.
    assert exact_coverage(2, 1, 0.5, 0.0) == pytest.approx(0.5)
    assert exact_coverage(2, 1, 0.5, 0.49) == pytest.approx(0.5)
    assert exact_coverage(2, 1, 0.5, 0.5) == 1.0
    assert smallest_exact_eps(2, 1, 0.5, 0.5) == 0.0
    assert smallest_exact_eps(2, 1, 0.5, 0.4) == 0.5
    # Bin(3, 0.3): P(K = 1) = 3 * 0.3 * 0.49 = 0.441 is within 0.04 of 0.3 (1/3 - 0.3)
    assert bin_within_probability(3, 0.3, 0.04) == pytest.approx(0.441)


def test_bin_layouts_follow_algorithm_1():
    # n = 1000, B = 10: A_b = ceil(1001 b / 10) = 101, 201, ..., 901, 1001.
    assert bin_point_counts(1000, 10).tolist() == [100] + [99] * 9
    assert bin_point_counts(1000, 10, "zadrozny_elkan").tolist() == [101] + [100] * 8 + [99]
    assert bin_point_counts(49, 22).sum() == 49 + 1 - 22
    assert bin_point_counts(49, 22).min() == (49 + 1) // 22 - 1
    assert bin_point_counts(49, 22, "zadrozny_elkan").sum() == 49
    assert expected_bin_masses(49, 22).sum() == pytest.approx(1.0)


@pytest.mark.parametrize("event", ["conditional", "marginal"])
@pytest.mark.parametrize(("n", "n_bins", "eta"), [(100, 5, 0.5), (333, 7, 0.13), (40, 20, 0.9)])
def test_monotone_in_eps_and_in_unit_interval(n, n_bins, eta, event):
    eps = np.linspace(-0.1, 1.1, 2001)
    cov = exact_coverage(n, n_bins, eta, eps, event=event)
    assert cov.shape == eps.shape
    assert np.all(np.isfinite(cov))
    assert np.all((cov >= 0) & (cov <= 1))
    assert np.all(np.diff(cov) >= -1e-15)
    assert cov[0] == 0.0
    assert cov[-1] == 1.0
    # conditional <= marginal (gr21 A7)
    other = exact_coverage(n, n_bins, eta, eps, event="marginal")
    assert np.all(exact_coverage(n, n_bins, eta, eps) <= other + 1e-12)


@pytest.mark.parametrize("event", ["conditional", "marginal"])
@pytest.mark.parametrize("scheme", ["umd", "zadrozny_elkan"])
def test_smallest_eps_is_the_first_jump_reaching_the_level(event, scheme):
    for n, n_bins, eta, alpha in [(1000, 10, 0.5, 0.1), (300, 4, 0.27, 0.05), (60, 30, 0.5, 0.2)]:
        s = smallest_exact_eps(n, n_bins, eta, alpha, event=event, scheme=scheme)
        kw = {"event": event, "scheme": scheme}
        assert exact_coverage(n, n_bins, eta, s, **kw) >= 1 - alpha
        below = np.nextafter(s, -1.0) - 1e-9 * (s > 0)
        assert exact_coverage(n, n_bins, eta, below, **kw) < 1 - alpha
        m = bin_point_counts(n, n_bins, scheme)
        # a jump point: |k/m_b - eta| for some bin size and count
        jumps = [np.abs(np.arange(mb + 1) / mb - eta) for mb in m]
        assert any(np.isclose(j, s, atol=1e-15).any() for j in jumps)


def test_theorem_radii_dominate_the_exact_ones():
    # At eta = 1/2 (the worst case) the theorems' eps must be >= the exact smallest eps.
    for n, b, a in itertools.product((1000, 3000), (5, 10), (0.05, 0.1)):
        assert gr21.thm3_conditional_eps(n, b, a) >= smallest_exact_eps(n, b, 0.5, a)
        exact_m = smallest_exact_eps(n, b, 0.5, a, event="marginal")
        assert gr21.thm4_marginal_eps(n, b, a) >= exact_m
        ze = smallest_exact_eps(n, b, 0.5, a, scheme="zadrozny_elkan")
        assert nch14.thm31_mce_bound(n, b, a) >= ze
    # catalog values (gr21 T3/T4 tightness): failure ~0.012 / ~0.015 at B = 10, alpha = 0.1
    for n in (1000, 3000, 7000):
        cond = exact_coverage(n, 10, 0.5, gr21.thm3_conditional_eps(n, 10, 0.1))
        marg = exact_coverage(n, 10, 0.5, gr21.thm4_marginal_eps(n, 10, 0.1), event="marginal")
        assert 1 - cond == pytest.approx(0.012, abs=0.001)
        assert 1 - marg == pytest.approx(0.015, abs=0.001)


def test_top_label_reduces_to_per_class_binning():
    eps = np.array([0.05, 0.1, 0.2])
    one = top_label_exact_coverage([400], [40], [1.0], 0.5, eps)
    np.testing.assert_allclose(one, exact_coverage(400, 40, 0.5, eps))
    probs, counts, bins, etas = [0.5, 0.3, 0.2], [500, 300, 200], [50, 30, 20], [0.5, 0.3, 0.8]
    cond = top_label_exact_coverage(counts, bins, probs, etas, eps)
    per_class = zip(counts, bins, etas, strict=True)
    prod = np.prod([exact_coverage(c, b, e, eps) for c, b, e in per_class], axis=0)
    np.testing.assert_allclose(cond, prod)
    marg = top_label_exact_coverage(counts, bins, probs, etas, eps, event="marginal")
    mix = sum(
        p * exact_coverage(c, b, e, eps, event="marginal")
        for p, c, b, e in zip(probs, counts, bins, etas, strict=True)
    )
    np.testing.assert_allclose(marg, mix)
    s = smallest_top_label_eps([400], [40], [1.0], 0.5, 0.1, event="marginal")
    assert s == smallest_exact_eps(400, 40, 0.5, 0.1, event="marginal")


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: exact_coverage(10, 6, 0.5, 0.1), "n must be >= 2"),
        (lambda: exact_coverage(10, 0, 0.5, 0.1), "n_bins"),
        (lambda: exact_coverage(10.5, 2, 0.5, 0.1), "n must be an integer"),
        (lambda: exact_coverage(10, 2, 0.0, 0.1), "eta must be a constant in"),
        (lambda: exact_coverage(10, 2, 1.0, 0.1), "1.0"),
        (lambda: exact_coverage(10, 2, "x", 0.1), "eta must be a constant in .* got 'x'"),
        (lambda: exact_coverage(10, 2, 0.5, float("nan")), "eps"),
        (lambda: exact_coverage(10, 2, 0.5, [[0.1]]), "eps"),
        (lambda: exact_coverage(10, 2, 0.5, 0.1, event="joint"), "event must be one of"),
        (lambda: exact_coverage(10, 2, 0.5, 0.1, scheme="ums"), "'ums'"),
        (lambda: smallest_exact_eps(10, 2, 0.5, 0.0), "alpha must be a number in .* got 0.0"),
        (lambda: smallest_exact_eps(10, 2, 0.5, True), "alpha"),
        (lambda: bin_within_probability(0, 0.5, 0.1), "m must be"),
        (lambda: top_label_exact_coverage([10], [2, 2], [1.0], 0.5, 0.1), "bins_per_class"),
        (lambda: top_label_exact_coverage([10, 10], [2, 2], [0.5, 0.6], 0.5, 0.1), "sum to 1"),
        (lambda: top_label_exact_coverage([10, 10], [2, 2], [0.5, 0.5], [0.5, 2], 0.1), "2"),
    ],
)
def test_input_validation(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# ------------------------------------------------------- agreement with Monte Carlo
def _run(experiment) -> BinOutcome:
    return BinOutcome.concatenate(simulate_block(experiment, ROOT_SEED, k) for k in range(BLOCKS))


def _z(estimate, exact, se):
    return (estimate - exact) / se


def _constant_law(eta, scores=None, name="const"):
    return BinaryLaw(
        scores or ScoreLaw(), ConditionalMean("constant", {"value": eta}), name=f"{name}_{eta}"
    )


_UMD = {"name": "umd", "tie_breaking": "lexicographic"}
_RUMD = {"name": "randomized_umd", "delta": 0.0}
_RUMD_AS_RETURNED = {"name": "randomized_umd", "delta": 0.0, "outputs": "as_returned"}
_ZE = {"name": "zadrozny_elkan", "tie_breaking": "lexicographic"}
_ATOMS = ScoreLaw(atoms=(0.2, 0.8), atom_probs=(0.5, 0.5))

# (what, calibrator, law, n, B, eta, event, scheme, eps)
SETTINGS = [
    (
        "gr21.thm3",
        _UMD,
        LAWS["uniform_half"],
        200,
        10,
        0.5,
        "conditional",
        "umd",
        0.6 * gr21.thm3_conditional_eps(200, 10, 0.1),
    ),
    (
        "gr21.thm4.marginal",
        _RUMD,
        LAWS["uniform_half"],
        1000,
        10,
        0.5,
        "marginal",
        "umd",
        0.6 * gr21.thm4_marginal_eps(1000, 10, 0.1),
    ),
    (
        "gr21.thm4.conditional.as_returned",
        _RUMD_AS_RETURNED,
        _constant_law(0.3, ScoreLaw(0.1, 5.0)),
        300,
        5,
        0.3,
        "conditional",
        "umd",
        0.7 * gr21.thm4_conditional_eps(300, 5, 0.1),
    ),
    (
        "gr21.thm4.marginal (two atoms)",
        _RUMD,
        _constant_law(0.3, _ATOMS),
        150,
        5,
        0.3,
        "marginal",
        "umd",
        0.6 * gr21.thm4_marginal_eps(150, 5, 0.1),
    ),
    (
        "nch14.thm31",
        _ZE,
        LAWS["uniform_half"],
        200,
        10,
        0.5,
        "conditional",
        "zadrozny_elkan",
        0.6 * nch14.thm31_mce_bound_hoeffding(200, 10, 0.1),
    ),
    (
        "nch14.eq9",
        _ZE,
        _constant_law(0.3),
        100,
        5,
        0.3,
        "marginal",
        "zadrozny_elkan",
        0.6 * nch14.eq1_bin_rate_radius(100, 5, 0.1),
    ),
]


def _agreement(what, calibrator, law, n, n_bins, eta, event, scheme, eps):
    exp = BinningExperiment(calibrator, law, n, n_bins)
    out = _run(exp)
    exact = exact_coverage(n, n_bins, eta, eps, event=event, scheme=scheme)
    rows = []
    if event == "conditional":
        success = Within("max_error").evaluate(exp, out, eps, None).success
        rows.append(("indicator", success.mean(), math.sqrt(exact * (1 - exact) / out.reps)))
    else:
        values = Marginal().evaluate(exp, out, eps, None)
        rb = out.marginal_probability(eps)
        se = math.sqrt(exact * (1 - exact) / out.reps)
        rows.append(("test point", values.success.mean(), se))
        rows.append(("Rao-Blackwell", values.estimate, rb.std(ddof=1) / math.sqrt(out.reps)))
    return exact, rows


@pytest.mark.parametrize("setting", SETTINGS, ids=[s[0] for s in SETTINGS])
def test_exact_agrees_with_monte_carlo(setting):
    exact, rows = _agreement(*setting)
    assert 0.3 < exact < 0.97  # a discriminating coverage, not 0 or 1
    for name, estimate, se in rows:
        assert abs(_z(estimate, exact, se)) < Z_MAX, (setting[0], name, estimate, exact, se)


_TL_LAW = TopLabelLaw(
    (0.5, 0.3, 0.2),
    (_constant_law(0.5), _constant_law(0.3, ScoreLaw(2.0, 1.0)), _constant_law(0.8, _ATOMS)),
    "tl_constants",
)


@pytest.mark.parametrize(
    ("law", "n", "k", "etas"),
    [(LAWS["tl_balanced_half"], 2000, 10, [0.5] * 5), (_TL_LAW, 1000, 10, [0.5, 0.3, 0.8])],
    ids=["tl_balanced_half", "tl_constants"],
)
def test_top_label_agrees_with_monte_carlo(law, n, k, etas):
    exp = TopLabelBinningExperiment(law, n, k)
    out = _run(exp)
    counts, bins = exp.law.class_counts(n), exp.bins_per_class()
    probs = list(law.class_probs)
    r = out.reps
    # gr22 Theorem 1 marginal (all classes): Rao-Blackwellised estimate
    eps1 = 0.6 * gr22.thm1_marginal_eps(k, 0.1)
    exact = top_label_exact_coverage(counts, bins, probs, etas, eps1, event="marginal")
    rb = out.marginal_probability(eps1)
    assert abs(_z(rb.mean(), exact, rb.std(ddof=1) / math.sqrt(r))) < Z_MAX
    # per class (what the proof establishes): conditional within the class's own bins
    stop = np.cumsum(bins)
    for lab in (0, len(bins) - 1):
        cols = slice(stop[lab] - bins[lab], stop[lab])
        eps = 0.8 * gr22.thm1_marginal_eps(k, 0.1)
        exact_l = exact_coverage(int(counts[lab]), int(bins[lab]), etas[lab], eps)
        hit = (np.nan_to_num(out.error[:, cols], nan=np.inf) <= eps).all(axis=1)
        se = math.sqrt(exact_l * (1 - exact_l) / r)
        assert abs(_z(hit.mean(), exact_l, se)) < Z_MAX, (lab, hit.mean(), exact_l)


@pytest.mark.parametrize("fig_id", ["gr21.looseness", "gr22.looseness", "nch14.looseness"])
def test_looseness_figures_find_every_theorem_valid(fig_id):
    from calcheck.figures.registry import get_figure

    mod = get_figure(fig_id)
    data = mod.compute()
    found = mod.findings(data)
    judged = [f for f in found if "holds" in f]
    assert len(judged) == 2
    assert all(f["holds"] for f in judged), judged
    for key in mod.THEOREMS:
        assert np.all(data[f"{key}/ratio"] >= 1.0)
        assert np.all((data[f"{key}/failure"] >= 0) & (data[f"{key}/failure"] <= 0.1))
