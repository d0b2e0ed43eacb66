"""Exponent checks and the Theorem 4.1 event: validation, a run, the report row, the plot."""

import numpy as np
import pytest

from calcheck.bounds.klm19_scaling import thm41_ce_sq_bound
from calcheck.simulations.experiments.klm19_recalibration import (
    RecalibrationExperiment,
    smallest_thirds_size,
)
from calcheck.simulations.laws.recalibration import platt_law, sine_platt_law
from calcheck.simulations.store import ResultStore
from calcheck.theory_checks.catalog import klm19
from calcheck.theory_checks.report.files import rate_lines, results_to_dict, summary_row
from calcheck.theory_checks.running.runner import run_checks
from calcheck.theory_checks.series.exponents import (
    N_BOOT,
    ExponentCheck,
    ExponentSeries,
    _bootstrap_means,
)
from calcheck.theory_checks.series.rates import RateCheck, RateSeries, SquaredCEWithin


@pytest.mark.parametrize("reps", [1, 37, 4000])
def test_bootstrap_means_are_the_one_shot_gather_bit_for_bit(reps):
    # the resamples are averaged 64 rows at a time: the same numbers as gathering them all,
    # and the same draws left in the stream after it
    values = np.random.default_rng(reps).lognormal(size=reps)
    rng, one_shot = np.random.default_rng(7), np.random.default_rng(7)
    expected = values[one_shot.integers(0, reps, size=(N_BOOT, reps))].mean(axis=1)
    assert np.array_equal(_bootstrap_means(values, rng), expected)
    assert rng.random() == one_shot.random()


def test_exponent_check_validation():
    exp = RecalibrationExperiment(platt_law(), 10, (500, 1000))
    with pytest.raises(ValueError, match="not a rate claim"):
        ExponentCheck("x", "klm19.prop33", (), "sb")
    with pytest.raises(ValueError, match="at least 3"):
        ExponentSeries("n", "n", (exp, exp))
    with pytest.raises(ValueError, match="at least 3"):
        ExponentSeries("B", "n_bins", (exp, exp))


def test_platt_rate_and_its_control_on_shared_data(tmp_path):
    pair = [c for c in klm19.checks("quick") if c.id.startswith("klm19.gi1")]
    assert [c.id for c in pair] == ["klm19.gi1", "klm19.gi1.control.sqrt_n"]
    with ResultStore(tmp_path / "s.sqlite") as store:
        run = run_checks(pair, store, reps=300, root_seed=7, n_jobs=1)
    assert run.stats.experiments == 1
    check, control = run.results
    assert (check.verdict, control.verdict) == ("consistent", "violated")
    (s,) = check.series
    assert -1.15 < s.exponent < -0.85
    assert s.claimed == pytest.approx(-1.0)
    assert 0.2 < s.c_fit < 0.35  # E[CE^2] ~ 0.27 / n for log-loss Platt on platt(2, 1)
    data = results_to_dict(run.results, {})
    row = summary_row(data["checks"][0])
    assert row[1] == "exponent guarantee"
    assert "exponent" in row[5]
    assert summary_row(data["checks"][1])[1] == "exponent control"
    assert len(rate_lines(data)) == 1  # controls are not repeated
    assert "excess" in repr(check)
    assert len(check.plot().get_lines()) == 2


def test_theorem41_event_is_the_registered_bound():
    exp = RecalibrationExperiment(sine_platt_law(), 10, (200, 400), eps_sq=1e-3)
    out = exp.simulate(np.random.default_rng(0), 20)
    s = exp.symbols(out)
    bound = thm41_ce_sq_bound(s["min_ce_sq"], s["eps_sq"])
    np.testing.assert_array_equal(SquaredCEWithin("sb").success(exp, out), out.sb <= bound)
    ignored = SquaredCEWithin("sb", factor=0.0).success(exp, out)
    np.testing.assert_array_equal(ignored, out.sb <= 1e-3)


def test_a_grid_starting_at_the_smallest_size_is_censored(tmp_path):
    # At B = 100 and eps^2 = 0.05 the smallest n the split accepts already meets the event:
    # n* is only known to lie at or below it -- not a measured threshold (issue 35: such
    # points decided klm19.thm41's B sweep). The series is inconclusive, never violated.
    series = RateSeries(
        "large B",
        "n_bins",
        tuple(
            RecalibrationExperiment(
                platt_law(), b, (smallest_thirds_size(b), 2 * smallest_thirds_size(b)), 0.05
            )
            for b in (100, 150, 200)
        ),
    )
    check = RateCheck("start", "klm19.thm41", (series,), SquaredCEWithin("sb"))
    with ResultStore(tmp_path / "s.sqlite") as store:
        (result,) = run_checks([check], store, reps=100, root_seed=1).results
    (s,) = result.series
    assert s.unbracketed == 3
    assert s.inconclusive
    assert result.verdict == "inconclusive"


def test_definition52_mean_check_and_its_control(tmp_path):
    from calcheck.bounds.klm19 import def52_conditional_mean
    from calcheck.simulations.experiments.klm19 import EstimatorRateExperiment
    from calcheck.simulations.laws.binned import binned_model
    from calcheck.theory_checks.catalog.klm19 import _debiased_error, _plugin_error
    from calcheck.theory_checks.series.means import MeanZeroCheck

    # hand-computed: bins with n_s >= 2 only; (0.5 - 0.25)^2 * 2/4 + (0.3 - 0.3)^2 * 2/4
    assert def52_conditional_mean([0.5, 0.3, 0.9], [0.25, 0.3, 0.1], [2, 2, 0]) == 0.03125
    assert def52_conditional_mean([0.5, 0.3], [0.25, 0.3], [1, 3]) == 0.0  # n_s = 1 drops
    with pytest.raises(ValueError, match="counts"):
        def52_conditional_mean([0.5], [0.2], [0])
    exps = (EstimatorRateExperiment(binned_model("half", 30, 0.01), (60, 240, 960)),)
    pair = [
        MeanZeroCheck("m", "klm19.def52", exps, _debiased_error),
        MeanZeroCheck("c", "klm19.def52", exps, _plugin_error, "violated"),
    ]
    with ResultStore(tmp_path / "s.sqlite") as store:
        check, control = run_checks(pair, store, reps=2000, root_seed=5).results
    assert (check.verdict, control.verdict) == ("consistent", "violated")
    (cells,) = check.series
    assert cells.detectable[0] < 0.01 * 0.2  # a bias of a fifth of E^2 is detectable
    data = results_to_dict([check, control], {})
    assert summary_row(data["checks"][0])[1] == "mean guarantee"
    assert rate_lines(data) == []
    assert "detectable bias" in repr(check)
