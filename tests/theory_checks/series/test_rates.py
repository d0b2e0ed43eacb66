"""Rate checks: validation, a run through the store, the report row and the plot."""

import pytest

from calcheck.simulations.store import ResultStore
from calcheck.theory_checks.catalog import klm19
from calcheck.theory_checks.report.files import rate_lines, results_to_dict, summary_row
from calcheck.theory_checks.running.runner import run_checks
from calcheck.theory_checks.series.rates import RateCheck, RateSeries


def test_rate_check_refuses_non_rate_guarantees_and_short_series():
    series = klm19._balance_series(False)
    with pytest.raises(ValueError, match="not a rate guarantee"):
        RateCheck("x", "gr21.thm3", series, klm19.Balanced(2.0))
    with pytest.raises(ValueError, match="at least 3"):
        RateSeries("short", "n_bins", series[0].experiments[:2])


def test_lemma43_rate_and_control_on_shared_data(tmp_path):
    pair = [c for c in klm19.checks("quick") if c.id.startswith("klm19.lem43")][:2]
    with ResultStore(tmp_path / "s.sqlite") as store:
        run = run_checks(pair, store, reps=1000, root_seed=7, n_jobs=1)
    assert run.stats.experiments == 6  # the control reads the check's experiments
    check, control = run.results
    assert check.verdict == "consistent"
    assert control.verdict == "violated"
    (s,) = check.series
    assert 1.1 < s.exponent < 1.3  # n* ~ B ln(B/delta): exponent above 1 on B = 10-3000
    assert 3 < s.c_fit < 5.2  # on its way to the large-deviation constant 5.2
    data = results_to_dict(run.results, {})
    assert summary_row(data["checks"][0])[1] == "rate guarantee"
    assert len(rate_lines(data)) == 1  # controls are not repeated
    assert "slope on log h" in repr(check)
    ax = check.plot()
    assert len(ax.get_lines()) == 2


def test_a_grid_that_does_not_bracket_the_threshold_gives_no_consistent_verdict(tmp_path):
    # Grids that start above every threshold would make any rate look consistent: the
    # censored thresholds are counted, left out of the fit, and the series (with fewer
    # than 3 measured thresholds) is inconclusive: neither consistent nor violated.
    from calcheck.simulations.experiments.klm19 import BinBalanceExperiment

    high = RateSeries(
        "grids above n*",
        "n_bins",
        tuple(BinBalanceExperiment(b, (200 * b, 400 * b)) for b in (10, 30, 100)),
    )
    check = RateCheck("too_high", "klm19.lem43", (high,), klm19.Balanced(2.0))
    with ResultStore(tmp_path / "s.sqlite") as store:
        (result,) = run_checks([check], store, reps=200, root_seed=3).results
    assert result.series[0].unbracketed == 3
    assert result.series[0].censored == (True, True, True)
    assert result.verdict == "inconclusive"
    assert not result.passed
    assert "inconclusive" in repr(result)
    assert result.powerless == (
        "grids above n*: inconclusive: 3 threshold(s) off the grid "
        "(n_bins=10, n_bins=30, n_bins=100)",
    )
