"""Worst constants of rate claims (issue 27): objective, search, fresh re-measure, controls."""

import math
from dataclasses import dataclass

import numpy as np
import pytest

from calcheck.theory_checks.catalog import rate_targets
from calcheck.theory_checks.catalog.klm19_rate_targets import motif_family
from calcheck.theory_checks.search.rates import (
    RateObjective,
    get_target,
    markdown_table,
    measure_threshold,
    rate_worst_law,
    sweep_fit,
)

TARGETS = rate_targets()


@dataclass(frozen=True)
class _Stub:
    """Coverage 0, 1/2, 1, 1 on the grid 10, 20, 40, 80 (h = 10, delta = 0.1)."""

    def point(self, theta):
        return "p"

    def point_delta(self, point):
        return 0.1

    def rate(self, point):
        return 10.0

    def successes(self, point, seed, reps):
        s = np.zeros((reps, 4), dtype=bool)
        s[: reps // 2, 1] = True
        s[:, 2:] = True
        return s, (10, 20, 40, 80)


def test_objective_interpolates_the_crossing_in_log_n():
    # 0.9 is crossed between 20 (coverage 1/2) and 40 (coverage 1) at 80% of the way in
    # log n: n* = 20 * 2^0.8 = 34.82, c = n*/h = 3.482
    assert RateObjective(_Stub(), 0, 100)(np.zeros(1)) == pytest.approx(20 * 2**0.8 / 10)


def test_one_bin_is_always_balanced_so_n_star_is_the_grid_start():
    # B = 1: the single bin has mass 1, so coverage is 1 at every n; the grid starts at
    # n = 1, h = 1 * ln(1/0.1), c = 1/ln(10)
    m = measure_threshold("klm19.lem43", (1, 0.1), seed=3, reps=100)
    assert m.n_star == 1.0
    assert m.c == pytest.approx(1 / math.log(10))
    assert m.censored == "below"


def test_deterministic_labels_with_equal_gaps_make_the_plugin_exact():
    # y_b in {0, 1} and equal shares of E^2: every |s_b - y_b| = E, so the plug-in equals
    # E^2 at any counts and the event holds from the first grid n: c = grid[0] / h
    t = TARGETS["klm19.thm53"]
    theta = (1.0,) * 5 + (0.0, 1.0, 0.0, 1.0, 0.0) + (1.0,) * 5 + (1.0,) * 5
    law = t.point(theta)
    assert law.ce_sq == pytest.approx(t.ce_sq, rel=1e-6)
    assert law.min_mass_ratio >= 0.5
    c = RateObjective(t, 5, 100)(np.asarray(theta))
    assert c == pytest.approx(t.grid(law)[0] / t.rate(law))


def test_motif_family_fixes_e2_and_the_mass_floor_for_any_theta():
    fam = motif_family(20, 0.005)
    rng = np.random.default_rng(0)
    for _ in range(20):
        law = fam.law(rng.random(fam.dim))
        assert law.ce_sq == pytest.approx(0.005, rel=1e-6)
        assert law.min_mass_ratio >= 0.5 - 1e-12
    with pytest.raises(ValueError, match="ce_sq"):
        motif_family(20, 0.01)


def test_tiny_seeded_search_finds_at_least_the_benign_c_and_is_reproducible():
    kw = dict(
        population=5, generations=1, reps=100, fresh_reps=200, sweep=False, seed=2, fresh_seed=9
    )
    r = rate_worst_law("klm19.thm53", **kw)
    t = TARGETS["klm19.thm53"]
    benign = max(RateObjective(t, 2, 100)(np.asarray(b)) for b in t.family.benign)
    assert r.c_search >= benign
    assert r.evaluations == 10
    assert r.c_validation > 0
    assert r.fresh.reps == 200
    assert len(r.hand_picked) == 4
    assert r.c_search == rate_worst_law("klm19.thm53", **kw).c_search
    assert "klm19.thm53" in r.summary()
    assert markdown_table([r]).splitlines()[2].startswith("| klm19.thm53")


def test_a_wrong_rate_makes_the_constant_drift():
    # Lemma 4.3 at its own rate B ln(B/delta): slope ~1.05 (lower-order terms, the catalog's
    # slack 0.1); claimed at the rate B (no log): n*/B grows with ln B, slope ~1.2
    t = TARGETS["klm19.lem43"]
    points = t.sweep((1.0, -1.0))
    right = sweep_fit(t, points, seed=4, reps=400)
    wrong = sweep_fit(t, points, seed=4, reps=400, rate=lambda p: float(p[0]))
    assert not right.finding
    assert wrong.finding
    assert wrong.thresholds[-1].c > 2 * wrong.thresholds[0].c
    # Theorem 5.3 (plug-in) claimed at log(B/delta)/E^2 (no power of B) on the sweep
    # (B, E^2) = (20, 0.005) x (1, 4, 16) and (1, 1/4, 1/16): its n* grows as B/E^2
    t53 = TARGETS["klm19.thm53"]
    half = (1.0,) * 5 + (0.5,) * 5 + (1.0,) * 5 + (1.0,) * 5
    pts = t53.sweep(half)
    ok = sweep_fit(t53, pts, seed=4, reps=300)
    bad = sweep_fit(
        t53, pts, seed=4, reps=300, rate=lambda law: np.log(law.n_bins / 0.1) / law.ce_sq
    )
    assert not ok.finding
    assert bad.finding
    assert bad.slope > ok.slope + 0.5


def test_validation():
    with pytest.raises(ValueError, match="check_id must be one of"):
        get_target("klm19.thm41")
    with pytest.raises(ValueError, match="fresh_seed must differ"):
        rate_worst_law("klm19.lem43", seed=1, fresh_seed=1)
    with pytest.raises(ValueError, match="validation_seed must differ"):
        rate_worst_law("klm19.lem43", seed=1, fresh_seed=2, validation_seed=1)
    with pytest.raises(ValueError, match="reps must be a positive integer"):
        measure_threshold("klm19.lem43", (10, 0.1), seed=1, reps=0)
