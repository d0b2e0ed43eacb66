"""Bounded work: plan and search check their sizes before any work (issue 47, S1/S2 unbounded).

`calcheck plan --shortfall 1e-300` printed nothing for 237 s (757 MB) before a refusal,
`--shortfall 1e-12` took 119 s, and `--shortfall 1e-6 --max-reps 1e15` grew past 2.6 GB and
then advised "lower --reps", a flag plan does not have. Now a size that cannot be planned is
refused in one line at once, with the largest size that fits, and an accepted plan is the
exhaustive search's answer in seconds. A search's --reps, --evaluations and budget are
checked against memory and a ceiling of simulated points before any simulation.
"""

from __future__ import annotations

import re
import time
import tracemalloc
import warnings

import numpy as np
import pytest
from scipy import stats

from calcheck.simulations import memory
from calcheck.simulations.search import SearchBudget
from calcheck.theory_checks.cli.main import main
from calcheck.theory_checks.results.verdicts import critical_count
from calcheck.theory_checks.running import plan as planning
from calcheck.theory_checks.running.plan import (
    MAX_REPS_LIMIT,
    MIN_SHORTFALL,
    critical_counts,
    plan,
)
from calcheck.theory_checks.search.driver import MAX_SEARCH_POINTS, search


def _timed(call, **kwargs):
    """``(result or the ValueError raised, seconds, peak traced MB)`` of ``call(**kwargs)``."""
    tracemalloc.start()
    start = time.perf_counter()
    try:
        out = call(**kwargs)
    except ValueError as exc:
        out = exc
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1] / 1e6
    tracemalloc.stop()
    return out, seconds, peak


# ----------------------------------------------------------------------------- plan
@pytest.mark.parametrize("shortfall", ["1e-300", "1e-12", "1e-6", "9e-5"])
def test_a_shortfall_too_small_to_plan_is_refused_in_one_line_at_once(shortfall, capsys):
    # before: 237 s (1e-300) and 119 s (1e-12) of exhaustive search, then "needs more than
    # max_reps"; now a rule read off the argument, saying the smallest shortfall it plans
    start = time.perf_counter()
    assert main(["plan", "--shortfall", shortfall]) == 2
    assert time.perf_counter() - start < 1.0
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(
        f"calcheck: error: shortfall must be at least 0.0001, got {float(shortfall)!r}"
    )
    assert "0.0001 is the smallest shortfall it plans" in err
    assert "by the normal approximation" in err


def test_the_replicates_a_tiny_shortfall_needs_are_said_without_overflow():
    with pytest.raises(ValueError, match=r"needs about 1\.7e\+600 replicates"):
        plan(shortfall=1e-300)


def test_a_true_coverage_too_close_to_the_claim_says_the_largest_that_fits():
    with pytest.raises(ValueError, match=r"^true_coverage must be at most 0\.8999, 0\.0001 below"):
        plan(true_coverage=0.89999999)


def test_max_reps_past_the_limit_is_refused_naming_only_plan_s_own_arguments(capsys):
    # before: past 2.6 GB, then "not enough memory ...; lower --reps" (no such flag)
    start = time.perf_counter()
    argv = ["plan", "--shortfall", "1e-6", "--max-reps", "1000000000000000"]
    assert main(argv) == 2
    assert time.perf_counter() - start < 1.0
    err = capsys.readouterr().err
    assert err == (
        "calcheck: error: max_reps must be an integer in [2, 1000000000] (the largest count "
        "plan searches), got 1000000000000000\n"
    )
    assert "--reps" not in err
    with pytest.raises(ValueError, match=r"max_reps must be an integer in \[2, 1000000000\]"):
        plan(shortfall=0.05, max_reps=np.int64(10**12))


def test_needing_more_than_max_reps_is_refused_with_the_estimate():
    out, seconds, _ = _timed(plan, shortfall=3e-4)  # needs about 1.9e7 > 10**7
    assert isinstance(out, ValueError)
    assert seconds < 1.0
    assert "needs more than max_reps = 10000000 replicates (about 1.9e+07 by" in str(out)
    assert "raise max_reps (plan searches up to 1000000000)" in str(out)
    out, _, _ = _timed(plan, alpha=0.5, shortfall=1e-4, false_alarm=1e-300, max_reps=10**9)
    assert "needs more than max_reps = 1000000000 replicates (about 3.7e+10" in str(out)
    assert "the most plan searches; or plan a larger shortfall" in str(out)


# The most work a plan accepts: the smallest shortfall at the largest count, where a
# binomial tail near its middle is dearest (power 0.5, claimed 0.5, R about 9e8)
NEAR_THE_LIMITS = [
    {"alpha": 0.5, "shortfall": 1e-4, "power": 0.5, "false_alarm": 9.8e-10},
    {"alpha": 0.5, "shortfall": 1e-4, "power": 0.9, "false_alarm": 1.18e-6},
    {"alpha": 0.1, "shortfall": 1e-4, "power": 0.5, "false_alarm": 7.6e-24},
    {"alpha": 0.1, "shortfall": 1e-4, "power": 1 - 1e-9, "false_alarm": 1e-3},
    {"alpha": 1e-3, "shortfall": 1e-4, "power": 0.9, "false_alarm": 1e-300},
]


@pytest.mark.parametrize("kwargs", NEAR_THE_LIMITS)
def test_an_accepted_plan_near_the_limits_answers_in_seconds(kwargs):
    out, seconds, peak = _timed(plan, max_reps=MAX_REPS_LIMIT, **kwargs)
    assert not isinstance(out, ValueError), out
    assert seconds < 10.0, seconds
    assert peak < 80, peak
    assert out.reps <= out.horizon <= MAX_REPS_LIMIT
    assert out.shortfall == pytest.approx(MIN_SHORTFALL, rel=1e-9)


def _exhaustive(claimed, p1, power, level, max_reps):
    """The search as it was: the exact power at every count from 1 (the quantile, corrected)."""
    r = np.arange(1, max_reps + 1)
    c = stats.binom.ppf(level, r, claimed).astype(np.int64) - 1
    while (bad := (c >= 0) & (stats.binom.cdf(c, r, claimed) >= level)).any():
        c = np.where(bad, c - 1, c)
    while (bad := (c < r) & (stats.binom.cdf(c + 1, r, claimed) < level)).any():
        c = np.where(bad, c + 1, c)
    pw = np.where(c >= 0, stats.binom.cdf(c, r, p1), 0.0)
    first = int(np.flatnonzero(pw >= power)[0]) + 1
    horizon = min(max(2 * first, first + 200), max_reps)
    below = np.flatnonzero(pw[:horizon] < power)
    reps = int(below[-1]) + 2 if below.size else 1
    return first, horizon, reps, float(pw[reps - 1])


@pytest.mark.parametrize(
    ("alpha", "shortfall", "power", "false_alarm", "cells"),
    [
        (0.5, 0.01, 0.5, 0.05, 1),  # claimed 1/2: long plateaus, a deep sawtooth
        (0.1, 0.01, 0.9, 1e-3, 1),
        (0.05, 0.01, 0.99, 1e-3, 20),
        (0.01, 0.005, 0.8, 0.05, 1),
        (0.3, 0.02, 0.999, 1e-30, 3),
        (0.5, 0.3, 0.01, 1e-3, 1),  # a power within the level's reach: a handful of counts
    ],
)
def test_the_plan_is_the_exhaustive_search_s(alpha, shortfall, power, false_alarm, cells):
    got = plan(alpha=alpha, shortfall=shortfall, power=power, false_alarm=false_alarm, cells=cells)
    want = _exhaustive(got.claimed, got.true_coverage, power, got.level, 2 * got.horizon + 10)
    assert (got.first_reps, got.horizon, got.reps, got.achieved_power) == want


def test_critical_counts_match_the_verdict_at_extreme_levels_and_claims():
    rng = np.random.default_rng(1)
    reps = np.unique(np.concatenate([np.arange(1, 200), rng.integers(200, 10**9, 30)]))
    for claimed, level in ((0.5, 1e-300), (1 - 1e-12, 1e-3), (0.9, 1e-30), (0.1, 0.999)):
        got = critical_counts(reps, claimed, level)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the scalar verdict's quantile warns at 1e-300
            want = [critical_count(int(r), claimed, level) for r in reps]
        assert got.tolist() == want, (claimed, level)


def test_the_tail_bounds_hold_on_a_sample_of_tails():
    # Zubkov-Serov: Phi(g(c)) <= P(Bin(n, p) <= c) <= Phi(g(c + 1)); checked on about a
    # million (c, n, p) with n up to 2e11 when written; here a sample, to 1e-14
    rng = np.random.default_rng(3)
    for n in (1, 2, 7, 40, 1000, 10**6, 10**9):
        for p in (*rng.uniform(0.0, 1.0, 6), 0.5, 0.999, 1e-6):
            if n <= 1000:
                c = np.arange(-1, n + 1)
            else:
                sd = np.sqrt(n * p * (1 - p))
                c = np.clip((n * p + rng.normal(0, 4, 300) * sd).astype(np.int64), -1, n)
            tail = np.where(c >= 0, stats.binom.cdf(c, n, p), 0.0)
            lower, upper = planning._tail_bounds(c, np.full(c.shape, n), p)
            assert np.all(lower <= tail + 1e-14), (n, p)
            assert np.all(tail <= upper + 1e-14), (n, p)


def test_a_bound_factor_s_sizes_are_checked_before_its_exact_coverage():
    out, seconds, _ = _timed(plan, bound_factor=0.5, guarantee="gr21.thm3", n=10**7, n_bins=900_000)
    assert isinstance(out, ValueError)
    assert seconds < 1.0
    assert str(out) == (
        "n_bins = 900000 is too large for plan's exact coverage (about 100 bytes a bin, 90 MB, "
        "against plan's 80 MB); the largest n_bins that fits is 800000"
    )


def _bernstein(counts, variances, alpha):
    log = np.log(4 * counts.shape[-1] / alpha)
    m = np.where(counts >= 2, counts, 2.0)
    radius = np.sqrt(2 * variances * m / (m - 1) * log / m) + 3.0 * log / m
    return np.where(counts >= 2, 0.25 * radius, np.inf)


def test_a_data_radius_is_sized_by_its_table_and_skips_the_certificate():
    from calcheck import define_guarantee

    eb = define_guarantee("bounded.eb", _bernstein, method="umd", event="conditional")
    out, seconds, _ = _timed(plan, bound_factor=1.0, guarantee=eb, n=10**6, n_bins=10)
    assert isinstance(out, ValueError)
    assert seconds < 1.0
    assert "a table of 1000010 radii" in str(out)
    assert str(out).endswith("the largest n that fits with n_bins = 10 is about 999990")
    # the exact coverage alone: before, its certificate over every law took 223 s here
    out, seconds, peak = _timed(plan, bound_factor=1.0, guarantee=eb, n=999_990, n_bins=10)
    assert not isinstance(out, ValueError), out
    assert seconds < 10.0, seconds
    assert peak < 80, peak


# --------------------------------------------------------------------------- search
SEARCH = ["search", "gr21.thm3", "--family", "beta_piecewise", "--n", "1000", "--n-bins", "10"]


def test_search_reps_that_cannot_fit_are_refused_before_any_simulation(
    tmp_path, capsys, monkeypatch
):
    # before: --reps 1000000000 simulated for minutes with no output, growing past 340 MB
    monkeypatch.setattr(memory, "available_bytes", lambda: 8 * 2**30)
    start = time.perf_counter()
    argv = [*SEARCH, "--reps", "1000000000", "--jobs", "2", "--out", str(tmp_path)]
    assert main(argv) == 2
    assert time.perf_counter() - start < 5.0
    err = capsys.readouterr().err
    assert err == (
        "calcheck: error: the search of gr21.thm3: reps = 1000000000 replicates of 10 bins, "
        "held at once in each of 2 worker(s), need about 640.0 GB (4 arrays of reps x n_bins "
        "float64), more than the 8.6 GB available; the largest reps that fits is 13421772\n"
    )
    assert not (tmp_path / "search" / "index.json").exists()


def test_search_evaluations_past_the_ceiling_are_refused_with_the_most_that_fit(tmp_path, capsys):
    # before: --evaluations 10**12 started a search estimated at 11 million hours
    start = time.perf_counter()
    argv = [*SEARCH, "--evaluations", "1000000000000", "--jobs", "1", "--out", str(tmp_path)]
    assert main(argv) == 2
    assert time.perf_counter() - start < 5.0
    err = capsys.readouterr().err
    assert err.startswith(
        "calcheck: error: the search of gr21.thm3: about 2000000000003 evaluations of 200 "
        "replicates and 3 re-checks of 4000, at 1000 simulated points a replicate, are about "
        "4e+17 points, more than the 1e+13 a search may simulate"
    )
    assert err.endswith("the most evaluations with reps = 200 is about 24999968\n")


def test_search_reps_past_the_ceiling_say_the_largest_reps_that_fits(tmp_path, capsys):
    argv = [*SEARCH, "--reps", "30000000", "--jobs", "1", "--out", str(tmp_path)]
    assert main(argv) == 2
    assert capsys.readouterr().err.endswith(
        "the largest reps that fits with these evaluations is 17152600, the most evaluations "
        "with reps = 30000000 is about 165\n"
    )


def test_a_budget_from_python_is_checked_by_its_own_field_names(monkeypatch):
    monkeypatch.setattr(memory, "available_bytes", lambda: 8 * 2**30)
    grid = {"n": 1000, "n_bins": 10}
    huge_fresh = SearchBudget("huge", population=5, generations=1, reps=100, fresh_reps=10**10)
    with pytest.raises(ValueError, match="fresh_reps = 10000000000 replicates of 10 bins"):
        search("gr21.thm3", "beta_piecewise", grid=grid, budget=huge_fresh, baseline=False)
    wide = SearchBudget("wide", population=10**8, generations=1, reps=100, fresh_reps=100)
    ceiling = re.escape(f"more than the {MAX_SEARCH_POINTS:.0e} a search may simulate")
    with pytest.raises(ValueError, match=ceiling):
        search("gr21.thm3", "beta_piecewise", grid=grid, budget=wide, baseline=False)
    small_n = {"n": 20, "n_bins": 2}  # cheap points, but every law kept: the history
    with pytest.raises(ValueError, match=r"evaluations = 200000000 need about 60\.0 GB"):
        search("gr21.thm3", "beta_piecewise", grid=small_n, budget=wide, baseline=False)


@pytest.mark.parametrize(
    "arguments",
    [
        ["--shortfall", "1e-300"],
        ["--shortfall", "1e-12"],
        ["--shortfall", "1e-6", "--max-reps", "1000000000000000"],
        # a bound factor's n and n_bins are checked before the registry and exact coverage
        [
            "--bound-factor",
            "0.5",
            "--guarantee",
            "gr21.thm3",
            "--n",
            "100000000000",
            "--n-bins",
            "10",
        ],
    ],
)
def test_the_command_refuses_before_the_catalog_and_scipy_stats_load(arguments):
    """The whole process answers within a second: the command's imports are lazy.

    Measured in a fresh interpreter (0.2-0.4 s on the 2-core machine, against 1.2 s when
    every command's module was imported first); asserted as the modules the refusal
    leaves unloaded rather than as a time, which a loaded machine would stretch.
    """
    import subprocess
    import sys

    program = (
        "import sys\n"
        "from calcheck._entry import main\n"
        f"sys.argv = ['calcheck', 'plan', *{arguments!r}]\n"
        "status = main()\n"
        "heavy = [m for m in ('scipy.stats', 'calcheck.bounds.registry', "
        "'calcheck.simulations.engine', 'calcheck.theory_checks.cli.run') if m in sys.modules]\n"
        "print('LOADED', heavy, 'STATUS', status)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=120
    )
    assert "LOADED [] STATUS 2" in done.stdout, done.stdout + done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("calcheck: error: "), done.stderr
