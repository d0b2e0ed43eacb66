"""Exact evidence first (issue 35, part 5): a cell with an exact probability is decided by it.

Hand-checked facts: the route applies exactly to uniform-mass binning (and top-label binning
class by class) on a constant-eta binary law with a fixed radius and the conditional or
marginal event; its value is the module's exact coverage; a Monte Carlo coverage far from
it is an error; and the issue's user bound (Bernstein-type, times 0.6, at n = 10^4) is
violated by its exact coverage 0.8931 where 2000 replicates alone are not significant.
"""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import numpy as np
import pytest

import calcheck
from calcheck.simulations.exact_coverage import (
    exact_coverage,
    layout_coverage,
)
from calcheck.simulations.exact_top_label import top_label_exact_coverage
from calcheck.simulations.experiments.binning import BinningExperiment
from calcheck.simulations.experiments.gr22 import TopLabelBinningExperiment
from calcheck.simulations.laws import LAWS, BinaryLaw, ConditionalMean, ScoreLaw
from calcheck.theory_checks.checks.check import CellResult
from calcheck.theory_checks.checks.events import Marginal, MeanAtMost, Within
from calcheck.theory_checks.checks.exact_evidence import (
    constant_eta,
    cross_check,
    exact_route,
    with_exact_evidence,
)
from calcheck.theory_checks.results.verdicts import coverage_verdict

UMD = {"name": "umd", "tie_breaking": "lexicographic"}


def issue_bound(n, n_bins, alpha):
    """The issue's user bound: 0.6 (sqrt(2 (1/4) L / m) + 3 L / m), L = log(2B/alpha)."""
    big_l = np.log(2 * n_bins / alpha)
    m = np.floor(n / n_bins) - 1
    return 0.6 * (np.sqrt(2 * 0.25 * big_l / m) + 3 * big_l / m)


def test_constant_eta_of_laws():
    assert constant_eta(LAWS["uniform_half"]) == 0.5
    for name in ("uniform_logistic", "two_atoms", "mixture_atoms", "beta_labels"):
        assert constant_eta(LAWS[name]) is None, name
    step = BinaryLaw(eta=ConditionalMean("step", {"low": 0.3, "high": 0.3}))
    assert constant_eta(step) == 0.3
    atoms = BinaryLaw(
        ScoreLaw(atoms=(0.2, 0.8), atom_probs=(0.5, 0.5)),
        ConditionalMean("constant", {"value": 0.4}),
        atom_eta=(0.4, 0.4),
    )
    assert constant_eta(atoms) == 0.4
    assert constant_eta(dataclasses.replace(atoms, atom_eta=(0.4, 0.41))) is None
    assert constant_eta(BinaryLaw(eta=ConditionalMean("constant", {"value": 0.0}))) is None


def test_route_applies_exactly_where_the_exact_coverage_does():
    half = LAWS["uniform_half"]
    exp = BinningExperiment(UMD, half, 1000, 10)
    route = exact_route(exp, Within("max_error"))
    assert route is not None
    assert route.event == "conditional"
    assert "constant eta 0.5" in route.text
    assert "gr21 Lemma 2" in route.text
    assert route.coverage(0.1) == pytest.approx(exact_coverage(1000, 10, 0.5, 0.1), abs=1e-15)
    ze = BinningExperiment({"name": "zadrozny_elkan"}, half, 200, 10)
    marginal = exact_route(ze, Marginal())
    assert marginal.coverage(0.12) == pytest.approx(
        exact_coverage(200, 10, 0.5, 0.12, event="marginal", scheme="zadrozny_elkan"),
        abs=1e-15,
    )
    refused = [
        (exp, Within("l2_ece")),
        (exp, MeanAtMost("l2_ece")),
        (BinningExperiment(UMD, LAWS["uniform_logistic"], 1000, 10), Within("max_error")),
        (BinningExperiment(UMD, LAWS["beta_labels"], 1000, 10), Within("max_error")),
        (BinningExperiment({"name": "randomized_umd", "delta": 1e-3}, half, 1000, 10), Marginal()),
        (BinningExperiment({"name": "umd", "tie_breaking": "none"}, half, 1000, 10), Marginal()),
        (BinningExperiment(UMD, half, 15, 10), Within("max_error")),  # n < 2B
    ]
    for experiment, event in refused:
        assert exact_route(experiment, event) is None, (experiment.label(), event)


def test_top_label_route_is_the_per_class_product():
    law = LAWS["tl_balanced_half"]
    exp = TopLabelBinningExperiment(law, 2000, 10)
    counts, bins = law.class_counts(2000), exp.bins_per_class()
    for event, name in ((Within("max_error"), "conditional"), (Marginal(), "marginal")):
        route = exact_route(exp, event)
        assert "5 predicted classes" in route.text
        want = top_label_exact_coverage(counts, bins, law.class_probs, 0.5, 0.08, event=name)
        assert route.coverage(0.08) == pytest.approx(want, abs=1e-14)
    assert (
        exact_route(TopLabelBinningExperiment(LAWS["tl_imbalanced"], 2000, 10), Marginal()) is None
    )


def _cell(successes, trials, claimed=0.9):
    verdict = coverage_verdict(successes, trials, claimed, level=1e-3)
    return CellResult("uniform_half", 1000, 10, 0.1, 0.1, verdict, 0.0, 1.0, 1.0, 0)


def test_a_radius_per_replicate_or_an_event_without_route_leaves_the_cell_alone():
    check = SimpleNamespace(id="x", event=Within("max_error"))
    exp = BinningExperiment(UMD, LAWS["uniform_half"], 1000, 10)
    cell = _cell(3700, 4000)
    assert with_exact_evidence(check, exp, 0.1, np.full(4000, 0.1), cell) is cell
    assert with_exact_evidence(check, exp, 0.1, np.inf, cell) is cell
    ece = SimpleNamespace(id="x", event=Within("l1_ece"))
    assert with_exact_evidence(ece, exp, 0.1, 0.1, cell) is cell
    eps = 0.1023  # not on a jump (0.1 is: |60/100 - 1/2|)
    exact = exact_coverage(1000, 10, 0.5, eps)
    done = with_exact_evidence(check, exp, 0.1, np.float64(eps), _cell(round(exact * 4000), 4000))
    assert done.exact_coverage == pytest.approx(exact)
    assert done.exact_route.startswith("exact:")


def test_a_radius_on_a_jump_of_the_exact_coverage_is_left_to_the_monte_carlo():
    check = SimpleNamespace(id="x", event=Within("max_error"))
    exp = BinningExperiment(UMD, LAWS["uniform_half"], 1000, 10)  # bins of 99 and 100 labels
    cell = _cell(3700, 4000)
    out = with_exact_evidence(check, exp, 0.1, 0.5 - 40 / 100, cell)  # |40/100 - 1/2|
    assert out.exact_coverage is None
    assert out.exact_route == ""
    # the certified bound is not a jump function of the radius: it stays
    assert out.certified_coverage is not None


def test_disagreement_beyond_monte_carlo_error_is_an_error():
    with pytest.raises(RuntimeError, match=r"mine\.x.*cell c: exact coverage 0\.500000.*990/1000"):
        cross_check("mine.x", "c", 0.5, 990, 1000)
    cross_check("mine.x", "c", 0.9, 880, 1000)  # 2.1 standard errors: Monte Carlo error
    check = SimpleNamespace(id="gr21.thm3", event=Within("max_error"))
    exp = BinningExperiment(UMD, LAWS["uniform_half"], 1000, 10)
    with pytest.raises(RuntimeError, match=r"gr21\.thm3.*umd/uniform_half/n=1000/B=10"):
        with_exact_evidence(check, exp, 0.1, 0.0517, _cell(4000, 4000))


def test_layout_coverage_refuses_bad_input():
    for kwargs, name in (
        ({"counts": [0, 3]}, "counts"),
        ({"etas": [0.5, 1.0]}, "etas"),
        ({"weights": [0.5, 0.6]}, "weights"),
        ({"event": "joint"}, "event"),
    ):
        args = {"counts": [3, 3], "weights": [0.5, 0.5], "etas": [0.5, 0.5], "eps": 0.2}
        with pytest.raises(ValueError, match=name):
            layout_coverage(**(args | kwargs))


def test_verify_gives_the_exact_verdict_on_the_issues_bound():
    """Issue 35: 0.6 x a Bernstein-type bound at n = 10^4, B = 10, alpha = 0.1."""
    mine = calcheck.define_guarantee(
        "mine.bernstein_x06", issue_bound, method="umd", event="conditional"
    )
    exact = calcheck.exact_coverage(mine, n=10**4, n_bins=10, alpha=0.1)
    assert round(exact.coverage, 4) == 0.8931
    assert not exact.holds
    result = calcheck.verify(mine, "uniform_half", n=10**4, n_bins=10, reps=2000, rng=0)
    cell = result.cells[0]
    assert not cell.verdict.violated  # 2000 replicates alone do not see a shortfall of 0.007
    assert cell.exact_coverage == pytest.approx(exact.coverage, abs=1e-12)
    assert "constant eta 0.5" in cell.exact_route
    assert cell.violated
    assert result.verdict == "violated"
    assert not result.passed
    # a law whose eta is not constant has no exact route: the Monte Carlo decides there
    other = calcheck.verify(mine, "uniform_logistic", n=10**4, n_bins=10, reps=500, rng=0)
    assert other.cells[0].exact_coverage is None


def test_the_python_api_pages_exact_evidence_block_runs_and_says_what_it_prints():
    from pathlib import Path

    page = Path(__file__).resolve().parents[3] / "docs" / "user_guide" / "python_api.md"
    section = page.read_text().split("## Exact evidence first", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    namespace: dict = {}
    exec(compile(code, "python_api.md", "exec"), namespace)
    cell = namespace["cell"]
    assert namespace["result"].verdict == "violated"
    assert "# 0.8931 < 0.9" in code
    assert round(cell.exact_coverage, 4) == 0.8931
    assert "# 0.24:" in code
    assert round(cell.verdict.p_value, 2) == 0.24
    assert cell.exact_route.startswith("exact: constant eta 0.5, product of binomials over 10")
