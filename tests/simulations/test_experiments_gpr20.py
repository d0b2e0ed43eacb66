"""gpr20 experiments: typed outcomes, a direct loop, degenerate cases, job invariance."""

import numpy as np
import pytest

from calcheck.bounds import gpr20
from calcheck.simulations.engine import load_outcome, run_experiments
from calcheck.simulations.experiments.gpr20 import (
    BinBernoulliExperiment,
    BinningRadiusExperiment,
    StreamExperiment,
)
from calcheck.simulations.experiments.gpr20_adversary import (
    AdversaryScalingExperiment,
    CIWidthExperiment,
)
from calcheck.simulations.experiments.gpr20_shift import ShiftExperiment
from calcheck.simulations.laws import LAWS
from calcheck.simulations.laws.shift import SHIFT_LAWS, LinearShiftLaw
from calcheck.simulations.store import ResultStore
from calcheck.theory_checks.checks.events import Exceeds, Within, constant, stated


def test_stream_experiment_matches_a_direct_loop():
    exp = StreamExperiment((0.3,), (50,), (0.1,), "thm6_intermediate", "one")
    out = exp.simulate(np.random.default_rng(11), 3)
    rng = np.random.default_rng(11)
    y = (rng.random((3, 50)) < 0.3).astype(float)
    for r in range(3):
        ybar_prev, v, worst = 0.5, 0.0, 0.0
        for t in range(1, 51):
            v += (y[r, t - 1] - ybar_prev) ** 2
            ybar = y[r, :t].mean()
            hw = gpr20.thm6_halfwidth_intermediate(t, v, 1, 0.1)
            worst = max(worst, abs(ybar - 0.3) / hw)
            ybar_prev = ybar
        assert out.ratio[r, 0] == pytest.approx(worst, rel=1e-12)


def test_bin_bernoulli_degenerate_probabilities_always_covered():
    exp = BinBernoulliExperiment((5, 50), (0.0, 1.0))
    out = exp.simulate(np.random.default_rng(0), 200)
    radius = stated().radius("gpr20.thm4", exp.symbols(out), 0.1)
    values = Within("error").evaluate(exp, out, radius, 0.1)
    assert values.success.all()
    assert (values.ratio == 0).all()


def test_adversary_truths():
    platt = AdversaryScalingExperiment("platt", 500)
    out = platt.simulate(np.random.default_rng(1), 200)
    lb = stated().radius("gpr20.thm3", platt.symbols(out), 0.1)
    # Injective map, truth Y: the error is |Y - h| with h near 1/2, far above 0.2.
    assert Exceeds("test_error").evaluate(platt, out, lb, 0.1).success.mean() > 0.95
    binning = AdversaryScalingExperiment("fixed_width", 500)
    out = binning.simulate(np.random.default_rng(1), 200)
    assert Exceeds("test_error").evaluate(binning, out, lb, 0.1).success.mean() < 0.05


def test_binning_radius_under_the_adversary_is_covered():
    exp = BinningRadiusExperiment(LAWS["adversary_q"], {"name": "fixed_width"}, 1000, 10)
    out = exp.simulate(np.random.default_rng(4), 100)
    radius = stated().radius("gpr20.cor3.max_halfwidth", exp.symbols(out), 0.1)
    assert Within("max_error").evaluate(exp, out, radius, 0.1).success.mean() > 0.9


def test_ci_width_experiment_on_atoms():
    exp = CIWidthExperiment("atomwise_eb", LAWS["two_atoms"], 400)
    out = exp.simulate(np.random.default_rng(2), 300)
    assert exp.statistic(out, "width", 0.1).max() < 1.0  # atoms are seen: informative
    covered = Within("miss_ratio").evaluate(
        exp, out, constant("covers", 1.0).radius("gpr20.cor1", {}, 0.1), 0.1
    )
    assert covered.success.mean() > 0.9


def test_interval_coverage_is_exact_at_the_ends():
    # An interval that ends exactly at the truth covers it (no rounding at the ends).
    exp = CIWidthExperiment("bin_thm4", LAWS["uniform_half"], 10)

    class Out:
        count = np.array([0])
        estimate = np.array([1.0])
        truth = np.array([1.0])

    assert exp.statistic(Out, "miss_ratio", 0.1)[0] <= 1.0


def test_experiment_results_identical_for_any_jobs(tmp_path):
    exps = [
        ShiftExperiment(SHIFT_LAWS["shift_sine"], 500, 5, partition="uniform_mass", n_edge=100),
        StreamExperiment((0.5, 0.2), (100, 100), (0.1,)),
    ]
    outcomes = []
    for jobs in (1, 2):
        store = ResultStore(tmp_path / f"s{jobs}.sqlite")
        run_experiments(exps, 300, 9, store, n_jobs=jobs, blocks_per_task=1)
        outcomes.append([load_outcome(store, e, 300, 9).arrays() for e in exps])
    for a, b in zip(*outcomes, strict=True):
        for k in a:
            np.testing.assert_array_equal(a[k], b[k])


def test_experiment_validation():
    with pytest.raises(ValueError, match="radius"):
        StreamExperiment((0.5,), (5,), (0.1,), radius="nope")
    with pytest.raises(ValueError, match="method"):
        AdversaryScalingExperiment("isotonic", 100)
    with pytest.raises(ValueError, match="c0"):
        LinearShiftLaw(1.0)
    with pytest.raises(ValueError, match="n_edge"):
        ShiftExperiment(SHIFT_LAWS["shift_sine"], 100, 10, partition="uniform_mass")
    with pytest.raises(ValueError, match="family linear_shift"):
        ShiftExperiment(LAWS["uniform_half"], 100, 10)
    with pytest.raises(ValueError, match="binary labels"):
        BinningRadiusExperiment(LAWS["beta_labels"], {"name": "fixed_width"}, 100, 10)
