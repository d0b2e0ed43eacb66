"""Statistical tier: every check of the suite at CI size, for every seed in conftest's range.

CI-sized by default (1000 replicates per cell); CALCHECK_FULL=1 runs the quick budget of
`calcheck run`, CALCHECK_FULL=full the full one; CALCHECK_SEEDS=all every seed of the range.
"""

import pytest
from conftest import STAT_BUDGET, STAT_REPS

from calcheck.bounds import registry
from calcheck.simulations.store import ResultStore
from calcheck.theory_checks.catalog import all_checks
from calcheck.theory_checks.checks.budgets import BUDGETS
from calcheck.theory_checks.results.roles import role_of
from calcheck.theory_checks.running.runner import run_checks

pytestmark = [pytest.mark.statistical, pytest.mark.slow]


@pytest.fixture(scope="module")
def suite_results(seed):
    store = ResultStore(":memory:")
    reps = STAT_REPS or BUDGETS[STAT_BUDGET].reps
    return run_checks(
        all_checks(STAT_BUDGET), store, reps=reps, root_seed=20211 + seed, n_jobs=2
    ).results


def test_every_guarantee_holds_and_every_control_is_flagged(suite_results):
    # a guarantee passes only with its same-path mutant caught (it could have failed)
    failed = [
        (r.check.id, r.verdict, None if r.mutant is None else r.mutant.caught)
        for r in suite_results
        if not r.passed
    ]
    assert failed == [], failed
    controls = [r for r in suite_results if r.check.is_control]
    assert controls
    assert all(r.verdict == "violated" for r in controls)
    # The power statement: every cell of a positive check detects a modest shortfall.
    for r in suite_results:
        if not r.check.is_control:
            assert all(c.verdict.shortfall_90 < 0.1 for c in r.cells), r.check.id


def test_every_registered_guarantee_has_a_check_and_a_control():
    # a control on the guarantee's own path: a negative control, or the same-path mutant
    # every check of role guarantee carries; an identity (holds by construction) has none
    checks = all_checks("quick")
    for g in registry.all_guarantees():
        mine = [c for c in checks if c.guarantee == g.id]
        assert any(not c.is_control for c in mine), g.id
        if all(role_of(c) == "identity" for c in mine if not c.is_control):
            assert not any(c.is_control for c in mine), g.id
            continue
        assert any(c.is_control or role_of(c) == "guarantee" for c in mine), g.id
