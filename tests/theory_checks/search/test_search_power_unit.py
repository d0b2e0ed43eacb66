"""SearchPower's counts and table row, by hand; the CLI's --power argument checks."""

from __future__ import annotations

import pytest

from calcheck.theory_checks.cli.main import main
from calcheck.theory_checks.search.power import TABLE_HEADER, SearchPower, power_table


def _record(failure, low, high, outcome, stated, reference=0.027):
    return {
        "seed": 0,
        "theta": [0.5],
        "failure": failure,
        "failure_low": low,
        "failure_high": high,
        "outcome": outcome,
        "stated_outcome": stated,
        "stated_failure": 0.001,
        "reference": reference,
    }


def test_counts_by_hand():
    records = (
        _record(0.027, 0.022, 0.032, "violated", "consistent"),  # reached
        _record(0.016, 0.012, 0.020, "violated", "consistent"),  # flagged, short of it
        _record(0.040, 0.034, 0.046, "violated", "violated"),  # above the reference
        _record(0.008, 0.005, 0.011, "consistent", "consistent"),
    )
    p = SearchPower(
        "g.times_0.8",
        "g",
        "fam",
        {"n": 1000, "n_bins": 20},
        0.01,
        "mean_ratio",
        "quick",
        0.027,
        records,
        8.0,
    )
    assert (p.seeds, p.flagged, p.reached, p.above, p.stated_consistent) == (4, 3, 2, 1, 3)
    row = p.row()
    want = "| g.times_0.8 (0.01) | fam (n=1000, n_bins=20) | 0.0270 > alpha | 3/4 | 2/4 (1) |"
    assert row == want + " 3/4 | 2.0 |"
    assert power_table([p]).splitlines()[0] == TABLE_HEADER.splitlines()[0]
    assert p.to_dict()["row"] == row
    # without a reference for every record, nothing is claimed about reaching it
    q = SearchPower(
        "g",
        "g",
        "fam",
        {},
        0.1,
        "failure",
        "quick",
        None,
        (_record(0.1, 0.09, 0.11, "violated", "violated", None),),
    )
    assert q.reached is None
    assert q.above is None


@pytest.mark.parametrize(
    "argv",
    [
        ["search", "--power", "--all"],
        ["search", "--power", "gr21.thm3", "--family", "beta_piecewise"],
        ["search", "--power", "--seeds", "0"],
        ["search", "--rate", "klm19.nope"],
        ["search", "--rate", "klm19.thm53", "--power"],
    ],
)
def test_power_argument_errors(argv, capsys):
    assert main(argv) == 2
    assert "calcheck search" in capsys.readouterr().err
