"""The one check protocol (issue 35): mutants, powerless cells, implied checks, the audit."""

from __future__ import annotations

import json

import numpy as np
import pytest

from calcheck import define_guarantee, verify
from calcheck.simulations.laws import BINARY_LAWS
from calcheck.simulations.store import ResultStore
from calcheck.theory_checks.catalog import for_law
from calcheck.theory_checks.checks.events import MUTANT_FACTORS, Within, statistic_sup
from calcheck.theory_checks.cli.main import main
from calcheck.theory_checks.report.audit import audit_problems, audit_rows
from calcheck.theory_checks.report.files import results_to_dict
from calcheck.theory_checks.results.implied import implied_by
from calcheck.theory_checks.results.protocol import VERDICTS
from calcheck.theory_checks.results.roles import headline
from calcheck.theory_checks.running.runner import run_checks


def _radius(n, n_bins, alpha):  # gr21 Theorem 3's radius, written by hand
    return np.sqrt(np.log(2 * n_bins / alpha) / (2 * (np.floor(n / n_bins) - 1)))


def test_a_guarantee_carries_a_same_path_mutant_that_its_check_catches():
    mine = define_guarantee("proto.thm3", _radius, method="umd", event="conditional")
    result = verify(mine, "uniform_logistic", n=1000, n_bins=10, reps=1000, rng=0)
    assert result.verdict == "consistent"
    assert result.passed
    m = result.mutant
    assert m.caught
    assert m.factor in MUTANT_FACTORS
    # the mutant is the largest ladder factor below the check's detectable factor
    assert m.factor < result.detectable_factor
    larger = [f for f in MUTANT_FACTORS if f > m.factor]
    assert all(f >= result.detectable_factor for f in larger)
    assert result.verdict in VERDICTS


def test_a_bound_that_cannot_fail_on_its_design_does_not_pass():
    # 0.5 is below the statistic's range, so no replicate holds by construction; but at
    # n = 20000 a max error near 0.03 never reaches even 0.05 times it: the mutant is not
    # caught, and the guarantee is "cannot fail on this design", never "verified"
    loose = define_guarantee(
        "proto.loose", lambda n, n_bins, alpha: 0.5 + 0 * n, method="umd", event="conditional"
    )
    result = verify(loose, "skewed_beta", n=20000, n_bins=10, reps=300, rng=0)
    assert result.verdict in ("consistent", "vacuous")
    assert not result.passed
    data = results_to_dict([result], {})
    assert data["headline"]["guarantees_verified"] == 0
    if result.verdict == "consistent":
        assert not result.mutant.caught
        assert data["headline"]["cannot_fail_on_design"] == [result.check.id]
        assert audit_problems(data)
    else:  # its certified coverage rounds to 1: powerless, whatever the replicates
        assert data["headline"]["vacuous"] == [result.check.id]


def test_a_radius_reaching_the_statistics_range_is_powerless():
    assert statistic_sup("max_error") == 1.0
    assert statistic_sup("miss_ratio") == float("inf")
    trivial = define_guarantee(
        "proto.trivial", lambda n, n_bins, alpha: 1.0 + 0 * n, method="umd", event="conditional"
    )
    result = verify(trivial, "uniform_half", n=200, n_bins=10, reps=300, rng=0)
    assert result.verdict == "vacuous"
    assert not result.passed
    (note,) = result.powerless
    assert "cannot be exceeded in any replicate (300 of 300)" in note
    assert "reaches the statistic's largest value" in note
    assert result.cells[0].vacuous_replicates == 300


def test_within_marks_radius_at_the_range_as_vacuous_per_replicate():
    class Exp:
        def statistic(self, outcome, name, alpha):
            return np.array([[0.2, 0.1], [0.9, 0.3]])

    v = Within("max_error").evaluate(Exp(), None, np.array([[1.0, 1.0], [0.5, 1.2]]), 0.1)
    np.testing.assert_array_equal(v.vacuous, [True, False])
    np.testing.assert_array_equal(v.success, [True, False])


def test_a_weaker_radius_on_the_same_draws_is_implied_and_counted_apart():
    strong = define_guarantee("proto.strong", _radius, method="umd", event="conditional")
    weak = define_guarantee(
        "proto.weak",
        lambda n, n_bins, alpha: 1.5 * _radius(n, n_bins, alpha),
        method="umd",
        event="conditional",
    )
    law = BINARY_LAWS["uniform_logistic"]
    grid = {"n": (1000,), "n_bins": (10,)}
    checks = [
        for_law(strong.id, law, grid=grid, alphas=(0.1,), check_id="proto.strong"),
        for_law(weak.id, law, grid=grid, alphas=(0.1,), check_id="proto.weak"),
    ]
    with ResultStore(":memory:") as store:
        results = run_checks(checks, store, reps=500, root_seed=4).results
    assert implied_by(results) == {"proto.weak": "proto.strong"}
    data = results_to_dict(results, {})
    h = data["headline"]
    assert h["guarantees"] == 1
    assert h["implied"] == {"proto.weak": "proto.strong"}
    rows = {r["check"]: r for r in audit_rows(data)}
    assert rows["proto.weak"]["implied by"] == "proto.strong"


def test_headline_counts_only_what_could_have_failed():
    records = [
        {
            "id": "g",
            "role": "guarantee",
            "expect": "consistent",
            "verdict": "consistent",
            "passed": True,
            "mutant": {"caught": True},
            "powerless": [],
        },
        {
            "id": "g2",
            "role": "guarantee",
            "expect": "consistent",
            "verdict": "consistent",
            "passed": False,
            "mutant": {"caught": False},
            "powerless": ["x"],
        },
        {
            "id": "i",
            "role": "identity",
            "expect": "consistent",
            "verdict": "consistent",
            "passed": True,
            "mutant": None,
            "powerless": [],
        },
        {
            "id": "c",
            "role": "control",
            "expect": "violated",
            "verdict": "inconclusive",
            "passed": False,
            "mutant": None,
            "powerless": [],
        },
    ]
    h = headline(records)
    assert (h["guarantees_verified"], h["guarantees"]) == (1, 2)
    assert h["cannot_fail_on_design"] == ["g2"]
    assert (h["identities_checked"], h["controls_caught"]) == (1, 0)
    assert h["inconclusive"] == ["c"]
    assert h["powerless_cells"] == 1
    assert h["text"].startswith("1 of 2 guarantees verified")
    assert "1 guarantees cannot fail on this design" in h["text"]


def test_audit_command(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["run", "--checks", "gr21.thm3", "--reps", "300", "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["audit", "--results", str(out), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    row = next(r for r in data["rows"] if r["check"] == "gr21.thm3")
    assert row["role"] == "guarantee"
    assert row["caught"] is True
    assert row["mutant"].startswith("the stated bound times")
    assert row["counted as"] == "guarantee"
    assert row["f*"].endswith("(certified)")  # uniform-mass binning: a law-free f*
    assert data["problems"] == []
    # each cell's rung of the evidence ladder and its critical factors
    cells = data["cells"]["gr21.thm3"]
    assert {c["tier"] for c in cells} <= {"certified", "exact", "monte_carlo", "powerless"}
    half = [c for c in cells if "uniform_half/n=200/" in c["experiment"] and c["alpha"] == 0.05]
    assert half[0]["tier"] == "certified"
    assert 0.95 <= half[0]["certified_coverage"] <= half[0]["exact_coverage"]
    assert half[0]["certified_factor"] >= half[0]["exact_factor"] > 0
    assert main(["audit", "--results", str(tmp_path / "nowhere")]) == 2
    assert "calcheck run" in capsys.readouterr().err


@pytest.mark.parametrize("kind", ["rate", "exponent", "mean", "tradeoff"])
def test_every_kind_has_the_protocol(kind):
    from calcheck.theory_checks.series.exponents import ExponentCheckResult
    from calcheck.theory_checks.series.means import MeanZeroCheckResult
    from calcheck.theory_checks.series.rates import RateCheckResult
    from calcheck.theory_checks.series.tradeoff import TradeoffCheckResult

    cls = {
        "rate": RateCheckResult,
        "exponent": ExponentCheckResult,
        "mean": MeanZeroCheckResult,
        "tradeoff": TradeoffCheckResult,
    }[kind]
    assert cls.kind == kind
    for name in ("evidence", "power_text", "powerless"):
        assert hasattr(cls, name)


def test_assert_guarantee_holds_refuses_a_check_that_cannot_fail():
    from calcheck.testing import assert_guarantee_holds

    loose = define_guarantee(
        "proto.loose2", lambda n, n_bins, alpha: 0.95 + 0 * n, method="umd", event="conditional"
    )
    # its certified coverage rounds to 1: powerless (vacuous) before any mutant is tried
    with pytest.raises(AssertionError, match=r"cannot fail on it|but is vacuous"):
        assert_guarantee_holds(loose, "uniform_half", n=20000, n_bins=10, reps=300, rng=0)


def test_within_mutant_is_the_event_at_the_tightened_radius():
    # the shortcut (worst ratio <= factor) is the event re-evaluated at factor * radius
    rng = np.random.default_rng(3)
    stat = rng.uniform(0, 0.2, size=(500, 4))
    stat[:5] = 0.0

    class Exp:
        def statistic(self, outcome, name, alpha):
            return stat

    radius = np.array([0.1, 0.15, 0.0, np.inf])
    event = Within("max_error")
    values = event.evaluate(Exp(), None, radius, 0.1)
    for f in MUTANT_FACTORS:
        fast, _ = event.evaluate_mutant(Exp(), None, radius, 0.1, f, values)
        slow = event.evaluate(Exp(), None, radius * f, 0.1).success
        np.testing.assert_array_equal(fast, slow)


def test_repeated_checks_options_add_up(tmp_path, capsys):
    out = tmp_path / "o"
    main(
        [
            "run",
            "--checks",
            "gr21.thm3",
            "--checks",
            "nch14.eq2",
            "--reps",
            "200",
            "--out",
            str(out),
            "--json",
        ]
    )
    ids = {c["id"] for c in json.loads(capsys.readouterr().out)["checks"]}
    assert "gr21.thm3" in ids
    assert "nch14.eq2" in ids


def test_a_looser_rate_on_the_same_thresholds_is_implied():
    from calcheck.theory_checks.catalog import all_checks

    checks = [c for c in all_checks("quick") if c.id in ("klm19.lem43", "klm19.lem43.vc")]
    with ResultStore(":memory:") as store:
        results = run_checks(checks, store, reps=300, root_seed=1).results
    # B^2 log(B/delta) over B log(B/delta) is B: nondecreasing along the B series
    assert implied_by(results) == {"klm19.lem43.vc": "klm19.lem43"}
