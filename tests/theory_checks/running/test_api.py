"""Python API (verify) and the regression-test assertions (calcheck.testing)."""

import pytest

from calcheck.simulations.laws import LAWS
from calcheck.testing import (
    assert_guarantee_holds,
    assert_guarantee_violated,
)
from calcheck.theory_checks.running.verify import verify


def test_verify_returns_a_readable_result_with_a_plot():
    r = verify("gr21.thm3", LAWS["uniform_logistic"], n=[300, 1000], n_bins=10, reps=200, rng=0)
    assert r.passed
    assert r.verdict == "consistent"
    assert len(r.cells) == 2
    text = repr(r)
    assert "gr21.thm3" in text
    assert "coverage" in text
    assert "claimed" in text
    ax = r.plot()
    assert ax.get_title().startswith("study:gr21.thm3")


def test_verify_is_reproducible_and_independent_of_jobs():
    a = verify("gr21.thm4.marginal", LAWS["two_atoms"], n=200, n_bins=5, reps=200, rng=3)
    b = verify("gr21.thm4.marginal", LAWS["two_atoms"], n=200, n_bins=5, reps=200, rng=3, n_jobs=2)
    assert [c.verdict for c in a.cells] == [c.verdict for c in b.cells]


def test_regression_assertions_on_theoretical_constants():
    # The stated Theorem 3 radius holds on a Platt curve ...
    assert_guarantee_holds(
        "gr21.thm3", LAWS["uniform_logistic"], n=1000, n_bins=10, reps=500, rng=0
    )
    # ... and Corollary 3 as printed (hw at the fewest-point bin) is caught on its
    # counterexample, where that bin has V^ = 0.
    assert_guarantee_violated(
        "gpr20.cor3", LAWS["cor3_counterexample"], n=3000, n_bins=2, reps=1000, rng=0
    )


def test_assertion_message_states_coverage_interval_and_claim():
    with pytest.raises(AssertionError, match=r"coverage .* \[95% CP .*\] vs claimed"):
        assert_guarantee_holds(
            "gpr20.cor3", LAWS["cor3_counterexample"], n=3000, n_bins=2, reps=1000, rng=0
        )


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: verify("gpr20.thm3", LAWS["adversary_q"], n=100, reps=100), "adversary Q"),
        (lambda: verify("gr21.nothing", LAWS["uniform_half"], n=100, n_bins=5), "unknown"),
        (lambda: verify("gr21.thm3", LAWS["tl_atoms"], n=100, n_bins=5), "family binary"),
        (lambda: verify("gr21.thm3", LAWS["uniform_half"], n=100, n_bins=5, reps=0), "reps"),
        (lambda: verify("gr21.thm3", LAWS["uniform_half"], n=100, nbins=5), "grid parameters"),
        (lambda: verify("gr21.thm3", LAWS["uniform_half"], n=100.5, n_bins=5), "n must be"),
    ],
)
def test_bad_input_is_refused_with_a_clear_message(call, match):
    with pytest.raises(ValueError, match=match):
        call()
