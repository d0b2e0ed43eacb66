"""Verdicts: exact binomial test, Clopper-Pearson interval, power statement."""

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from calcheck.theory_checks.results.verdicts import (
    clopper_pearson,
    coverage_verdict,
    detectable_shortfall,
)


def test_verdict_matches_scipy_and_statsmodels_oracle():
    v = coverage_verdict(1780, 2000, 0.9, level=1e-3)
    assert v.p_value == pytest.approx(stats.binomtest(1780, 2000, 0.9, alternative="less").pvalue)
    lo, hi = proportion_confint(1780, 2000, alpha=0.05, method="beta")  # Clopper-Pearson
    assert (v.ci_low, v.ci_high) == pytest.approx((lo, hi), rel=1e-9)
    assert v.coverage == 0.89
    assert not v.violated


@pytest.mark.parametrize(("k", "r"), [(0, 4000), (3999, 4000), (1780, 2000), (7, 7)])
def test_cached_interval_and_p_value_are_scipys_bit_for_bit(k, r):
    # computed once per (successes, trials): asked twice, and equal (==) to scipy's own call
    ci = stats.binomtest(k, r, 0.5).proportion_ci(confidence_level=0.95, method="exact")
    assert clopper_pearson(k, r, 0.95) == clopper_pearson(k, r, 0.95) == (ci.low, ci.high)
    for _ in range(2):
        v = coverage_verdict(k, r, 0.9)
        assert (v.ci_low, v.ci_high) == (ci.low, ci.high)
        assert v.p_value == stats.binomtest(k, r, 0.9, alternative="less").pvalue
    # keyed on every argument: another level or claim right after is its own computation
    wide = stats.binomtest(k, r, 0.5).proportion_ci(confidence_level=0.99, method="exact")
    assert clopper_pearson(k, r, 0.99) == (wide.low, wide.high)
    v = coverage_verdict(k, r, 0.99, ci_level=0.99)
    assert (v.ci_low, v.ci_high) == (wide.low, wide.high)
    assert v.p_value == stats.binomtest(k, r, 0.99, alternative="less").pvalue


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((3.0, 10, 0.95), "successes must be an integer, got 3.0"),
        ((3, True, 0.95), "trials must be an integer, got True"),
        ((11, 10, 0.95), "need 0 <= successes <= trials and trials >= 1, got 11, 10"),
        ((0, 0, 0.95), "need 0 <= successes <= trials and trials >= 1, got 0, 0"),
        ((3, 10, 1.0), "confidence must lie in \\(0, 1\\), got 1.0"),
    ],
)
def test_clopper_pearson_refuses_bad_arguments(args, message):
    with pytest.raises(ValueError, match=message):
        clopper_pearson(*args)


def test_clear_violation_and_boundaries():
    assert coverage_verdict(1500, 2000, 0.9).violated
    full = coverage_verdict(50, 50, 0.95)
    assert not full.violated
    assert full.ci_high == 1.0
    assert coverage_verdict(50, 50, 1.0).p_value == 1.0
    assert coverage_verdict(49, 50, 1.0).violated
    for args, match in [
        ((5, 4, 0.9), "successes"),
        ((1, 2, 0.0), "claimed"),
        ((1, 2, 0.5), "level"),
    ]:
        with pytest.raises(ValueError, match=match):
            coverage_verdict(*args, level=2.0 if match == "level" else 1e-3)


def test_false_alarm_rate_is_at_most_level():
    """Under H0 (coverage exactly as claimed) the test rejects with probability <= level."""
    level, trials, claimed = 0.01, 1000, 0.9
    k = np.arange(trials + 1)
    reject = np.array(
        [
            stats.binomtest(int(x), trials, claimed, alternative="less").pvalue < level
            for x in k[:900]
        ]
        + [False] * (trials + 1 - 900)
    )
    size = stats.binom.pmf(k, trials, claimed)[reject].sum()
    assert size <= level
    assert size > level / 3  # and it is not needlessly conservative


def test_power_statement():
    trials, claimed, level = 2000, 0.9, 1e-3 / 36
    d = detectable_shortfall(trials, claimed, level)
    v = coverage_verdict(1, trials, claimed, level=level)
    assert v.shortfall_90 == pytest.approx(d)
    # The critical count rejects with probability 0.9 at claimed - d.
    k = max(x for x in range(trials) if stats.binom.cdf(x, trials, claimed) < level)
    assert stats.binom.cdf(k, trials, claimed - d) == pytest.approx(0.9, abs=1e-6)
    assert 0.02 < d < 0.05
    assert detectable_shortfall(8000, claimed, level) < d  # more replicates, more power
    assert detectable_shortfall(2, 0.9, 1e-3) == 0.9  # P(0 successes) = 0.01: none rejects
