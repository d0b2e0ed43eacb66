"""A search says what it will cost, shows its progress, and is sized by evaluations and reps.

Tiny searches (n = 200, a few tens of evaluations of 100 replicates): each takes about a
second.
"""

from __future__ import annotations

import logging
import re

import pytest

from calcheck.simulations.search import SearchBudget, get_search_budget
from calcheck.theory_checks.cli.main import main
from calcheck.theory_checks.search.driver import search
from calcheck.theory_checks.search.progress import show_progress

TINY = SearchBudget("tiny", 5, 1, 100, 400)
GRID = {"n": 200, "n_bins": 4}


def test_the_estimate_counts_every_evaluation_and_is_logged(caplog):
    seen = []
    with caplog.at_level(logging.INFO, logger="calcheck.theory_checks.search.driver"):
        r = search("gr21.thm3", "beta_piecewise", grid=GRID, budget=TINY, on_estimate=seen.append)
    (estimate,) = seen
    # benign start points, then the search (with the comparison with eta = 1/2), then random
    # sampling: what the bar counts is what was evaluated
    assert estimate.evaluations == len(r.benign) + r.search.evaluations + r.random.evaluations
    assert (estimate.reps, estimate.fresh_reps, estimate.rechecks) == (100, 400, 2)
    assert estimate.measured_on == len(r.benign) == 3
    assert estimate.seconds > 0
    line = estimate.line()
    assert re.match(
        r"about \d+ evaluations of 100 replicates at n=200, n_bins=4, and 2 re-checks "
        r"of 400; about \d+ s \(.* s an evaluation, measured on the first 3; 1 "
        r"worker\)$",
        line,
    ), line
    assert line in caplog.text


def test_the_bar_is_drawn_when_asked_and_not_when_stderr_is_no_terminal(capsys):
    search("gr21.thm3", "beta_piecewise", grid=GRID, budget=TINY, baseline=False, progress=True)
    assert "calcheck search" in capsys.readouterr().err  # the tqdm bar's label
    # pytest's captured stderr is no terminal: the default draws nothing
    search("gr21.thm3", "beta_piecewise", grid=GRID, budget=TINY, baseline=False)
    assert capsys.readouterr().err == ""
    assert show_progress(None) is False
    assert show_progress(True) is True
    with pytest.raises(ValueError, match="progress must be True, False or None, got 'yes'"):
        search("gr21.thm3", "beta_piecewise", grid=GRID, budget=TINY, progress="yes")


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("name", "", "SearchBudget name must be a non-empty string, got ''"),
        ("population", 4, "SearchBudget population must be an integer >= 5, got 4"),
        ("generations", 0, "SearchBudget generations must be an integer >= 1, got 0"),
        ("reps", 1.5, "SearchBudget reps must be an integer >= 1, got 1.5"),
        ("fresh_reps", 0, "SearchBudget fresh_reps must be an integer >= 1, got 0"),
        ("refine", -1, "SearchBudget refine must be an integer >= 0, got -1"),
    ],
)
def test_a_budget_names_the_field_it_refuses(field, value, message):
    kw = {"name": "b", "population": 5, "generations": 1, "reps": 100, "fresh_reps": 100}
    with pytest.raises(ValueError, match=re.escape(message)):
        SearchBudget(**{**kw, field: value})


@pytest.mark.parametrize(("dim", "evaluations"), [(1, 10), (1, 50), (2, 100), (5, 100), (5, 300)])
def test_a_budget_sized_by_evaluations_spends_that_many(dim, evaluations):
    quick = get_search_budget("quick")
    sized = quick.sized(evaluations=evaluations, reps=50, dim=dim)
    assert sized.total_evaluations(dim) == evaluations
    assert (sized.reps, sized.fresh_reps) == (50, quick.fresh_reps)
    assert sized.name == f"quick, {evaluations} evaluations x 50"
    assert quick.sized() is quick
    assert SearchBudget.named("quick") is quick
    with pytest.raises(ValueError, match="SearchBudget evaluations must be an integer >= 10"):
        quick.sized(evaluations=9, dim=dim)


def test_the_command_line_sizes_a_search_and_says_its_estimate(tmp_path, capsys):
    argv = [
        "search",
        "gr21.thm3",
        "--family",
        "beta_piecewise",
        "--family-opt",
        "k=1",
        "--n",
        "200",
        "--n-bins",
        "4",
        "--out",
        str(tmp_path),
    ]
    assert main([*argv, "--evaluations", "12", "--reps", "100"]) == 0
    out = capsys.readouterr()
    assert re.search(
        r"^calcheck: about \d+ evaluations of 100 replicates at n=200, n_bins=4", out.err, re.M
    ), out.err
    assert "budget quick, 12 evaluations x 100:" in out.out


@pytest.mark.parametrize(
    ("extra", "line"),
    [
        (
            ["--evaluations", "3"],
            "calcheck: error: --evaluations must be an integer >= 10, got 3 "
            "(the least search: a population of 5 over 2 generations)",
        ),
        (["--reps", "0"], "calcheck: error: --reps must be an integer >= 1, got 0"),
    ],
)
def test_sizes_below_a_search_are_one_line(extra, line, tmp_path, capsys):
    argv = ["search", "gr21.thm3", "--family", "beta_piecewise", "--n", "200", "--n-bins", "4"]
    assert main([*argv, *extra, "--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip() == line


def test_sizes_are_refused_where_the_budgets_are_fixed(tmp_path, capsys):
    assert main(["search", "--all", "--reps", "100", "--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip() == (
        "calcheck: error: --evaluations and --reps size a single search or a --study's; "
        "--all, --power and --rate keep their own budgets (give --budget)"
    )
