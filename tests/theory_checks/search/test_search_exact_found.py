"""``search`` reports found whenever its exact reference fails (issue 35, part 5).

The issue's case: a user bound, 0.6 x (sqrt(2 (1/4) L / m) + 3 L / m) with L = log(2B/alpha),
m = floor(n/B) - 1, at n = 10^4, B = 10, alpha = 0.1. Its exact coverage at the worst
constant eta is about 0.893 < 0.9 (a violating law, found exactly), while the search's
replicates on beta_piecewise laws, re-checked on a fresh seed of 400 replicates, do not
see a shortfall of 0.007: the search used to print "exact failure 0.1069" and return
found=False.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import calcheck
from calcheck.simulations.search import SearchBudget

TINY = SearchBudget("tiny", 5, 1, 100, 400, refine=2)
GRID = {"n": 10**4, "n_bins": 10}


def issue_bound(n, n_bins, alpha):
    """0.6 x a Bernstein-type radius at variance 1/4 (the issue's user bound)."""
    big_l = np.log(2 * n_bins / alpha)
    m = np.floor(n / n_bins) - 1
    return 0.6 * (np.sqrt(2 * 0.25 * big_l / m) + 3 * big_l / m)


@pytest.fixture(scope="module")
def result():
    mine = calcheck.define_guarantee(
        "mine.bernstein_x06", issue_bound, method="umd", event="conditional"
    )
    return calcheck.search(
        mine, "beta_piecewise", grid=GRID, alpha=0.1, budget=TINY, seed=0, baseline=False
    )


def test_found_when_the_exact_reference_fails(result):
    ref = result.reference
    assert ref["failure"] > 0.1
    assert ref["coverage"] == pytest.approx(1 - ref["failure"])
    assert ref["claimed"] == pytest.approx(0.9)
    assert ref["holds"] is False
    assert result.exact_fails
    assert result.found
    assert "exact reference" in result.found_by
    text = result.summary()
    assert f"exact failure {ref['failure']:.4f}" in text
    assert "< claimed 0.9: violated" in text
    assert "found: exact reference" in text


def test_not_found_when_neither_route_fails(result):
    """The same record with a reference that holds and a consistent fresh seed: not found."""
    fresh = dataclasses.replace(result.search.fresh, outcome="consistent")
    ok = dataclasses.replace(
        result,
        search=dataclasses.replace(result.search, fresh=fresh),
        reference=result.reference | {"coverage": 0.95, "failure": 0.05, "holds": True},
    )
    assert not ok.exact_fails
    assert not ok.found
    assert ok.found_by == ""
    assert "found: no" in ok.summary()
    assert ">= claimed 0.9: holds" in ok.summary()
    # a fresh-seed violation alone is found, as before
    flagged = dataclasses.replace(
        ok,
        search=dataclasses.replace(ok.search, fresh=dataclasses.replace(fresh, outcome="violated")),
    )
    assert flagged.found
    assert flagged.found_by == "fresh seed"
