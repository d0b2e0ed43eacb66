"""nch14's study forms (issue 12): every probabilistic guarantee on a user's binary law.

Each adapter runs Hist (Zadrozny-Elkan equal-frequency bins, lexicographic ties) with the
event of the suite's own check; on a law and grid point of the suite, its experiment is the
suite's, so the outcome is bit-identical.
"""

from __future__ import annotations

import dataclasses

import pytest

from calcheck.simulations.laws import LAWS
from calcheck.simulations.laws.binary import BinaryLaw
from calcheck.simulations.laws.eta import ConditionalMean, ScoreLaw
from calcheck.simulations.store import ResultStore
from calcheck.theory_checks.catalog import for_law, refused, studiable
from calcheck.theory_checks.catalog import nch14 as catalog
from calcheck.theory_checks.running.runner import run_checks

GIDS = (
    "nch14.eq9",
    "nch14.thm31",
    "nch14.thm31.hoeffding",
    "nch14.thm33",
    "nch14.thm33.hoeffding",
    "nch14.thm33.variance",
)
# a law of one's own: Beta(2, 3) scores with two atoms and a non-monotone eta
USER = BinaryLaw(
    ScoreLaw(2.0, 3.0, (0.3, 0.9), (0.1, 0.1)),
    ConditionalMean("piecewise_linear", {"knots": (0.0, 0.5, 1.0), "values": (0.1, 0.7, 0.4)}),
    name="user_binary",
    atom_eta=(0.95, 0.05),
)


def _run(checks, reps=200, seed=3):
    with ResultStore(":memory:") as store:
        return run_checks(checks, store, reps=reps, root_seed=seed).results


def test_every_probabilistic_guarantee_is_studiable_and_none_is_refused_for_issue_12():
    adapters = studiable()
    for gid in GIDS:
        assert gid in adapters
        assert gid not in refused()
        a = adapters[gid]
        assert (a.families, a.grid_keys) == (("binary",), ("n", "n_bins"))
    assert "issue 12" not in " ".join(refused().values())
    assert "nch14.cor32" in refused()  # a rate claim stays refused


@pytest.mark.parametrize("gid", GIDS)
def test_study_runs_on_a_user_law(gid):
    check = for_law(gid, USER, grid={"n": [100, 400], "n_bins": [5]}, alphas=(0.1,))
    assert [e.calibrator for e in check.experiments] == [catalog._HIST] * 2
    (res,) = _run([check], reps=100)
    assert res.verdict == "consistent"
    assert [c.n for c in res.cells] == [100, 400]
    assert all(c.law == "user_binary" and c.bound > 0 for c in res.cells)


@pytest.mark.parametrize("gid", GIDS)
def test_study_matches_the_suites_own_check_bit_for_bit(gid):
    """On the suite's law and grid point the study form is the suite's check, cell by cell."""
    (own,) = [c for c in catalog.checks("quick") if c.id == gid]
    law = LAWS["skewed_beta"]
    cell = [e for e in own.experiments if e.law == law and (e.n, e.n_bins) == (200, 10)]
    own = dataclasses.replace(own, experiments=tuple(cell), alphas=own.alphas[:1])
    study = for_law(gid, law, grid={"n": [200], "n_bins": [10]}, alphas=own.alphas)
    assert study.event == own.event
    assert study.claim == own.claim
    assert study.experiments == own.experiments
    a, b = _run([own, study])
    assert a.cells == b.cells
    assert a.verdict == b.verdict == "consistent"


# Issue 26: Theorem 3.4, eq. (22) and Loss_2 in the limit, eqs. (2) and (10) on a user's law.
# Uniform scores, labels deterministic within each half (0 then 1): theta = 0.4, 0.6 on the
# two quantile bins at B = 2, within-bin AUC 1, so the loss is 0.24 = 0.96 / (2B).
STEPS = BinaryLaw(
    ScoreLaw(),
    ConditionalMean("piecewise_constant", {"knots": (0.3, 0.5, 0.7), "values": (0, 1, 0, 1)}),
    name="user_steps",
)
SMOOTH = dataclasses.replace(USER, scores=ScoreLaw(2.0, 3.0), atom_eta=(), name="user_smooth")
LIMIT = ("nch14.thm34", "nch14.loss2", "nch14.thm34.unequal")


@pytest.mark.parametrize("gid", LIMIT)
def test_limit_study_holds_and_its_control_is_flagged_on_the_same_law(gid):
    from calcheck.theory_checks.checks.check import with_sharper_controls

    check = for_law(gid, (STEPS, SMOOTH), grid={"n_bins": [2, 5]}, alphas=(0.1,))
    # eq. (22) is an identity (no control); the bound times 0.9 still probes its tightness
    assert check.role == ("identity" if gid == "nch14.thm34.unequal" else "")
    (near,) = [c for c in check.experiments if (c.law, c.n_bins) == (STEPS, 2)]
    near_only = dataclasses.replace(check, experiments=(near,), role="")
    control = with_sharper_controls([near_only], {check.id: 0.9})[1]
    res, ctl = _run([check, control], reps=10)
    assert res.verdict == "consistent"
    assert ctl.verdict == "violated"
    (cell,) = ctl.cells
    assert cell.bound == pytest.approx(0.9 * (0.25 if gid != "nch14.thm34.unequal" else 0.24))


@pytest.mark.parametrize("gid", LIMIT)
def test_limit_study_refuses_a_law_that_breaks_a_hypothesis(gid):
    for law, match in (
        (USER, "hypothesis H3"),
        (LAWS["beta_labels"], "binary labels"),
        (dataclasses.replace(SMOOTH, eta=ConditionalMean("constant", {"value": 0.0})), "both"),
    ):
        with pytest.raises(ValueError, match=f"{gid} on law .*{match}"):
            for_law(gid, law, grid={"n_bins": [2]}, alphas=(0.1,))


def test_limit_study_is_the_suites_check_on_its_law():
    (own,) = [c for c in catalog.checks("quick") if c.id == "nch14.thm34"]
    law = LAWS["uniform_logistic"]
    cell = tuple(e for e in own.experiments if e.law == law and e.n_bins == 5)
    study = for_law("nch14.thm34", law, grid={"n_bins": [5]}, alphas=(0.1,))
    assert study.experiments == cell
    assert (study.event, study.claim) == (own.event, "one")


def test_eq2_and_eq10_studies_on_a_law_with_atoms_and_their_controls():
    from calcheck.theory_checks.checks.check import with_sharper_controls

    grid = {"n": [100, 1000], "n_bins": [5]}
    eq2 = for_law("nch14.eq2", USER, grid=grid, alphas=(0.1,), check_id="study:eq2")
    eq10 = for_law("nch14.eq10", USER, grid=grid, alphas=(0.1,), check_id="study:eq10")
    assert eq2.experiments == eq10.experiments  # one simulation for both
    assert eq2.role == "identity"  # eq. (2) holds by construction: no control
    quarter = with_sharper_controls([eq10], {eq10.id: 0.25})[1]
    results = _run([eq2, eq10, quarter], reps=400)
    assert [r.verdict for r in results] == ["consistent", "consistent", "violated"]
    assert all(r.passed for r in results)
    assert {c.law for r in results for c in r.cells} == {"user_binary"}
