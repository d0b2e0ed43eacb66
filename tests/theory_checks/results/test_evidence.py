"""The evidence ladder and the ledger: rules on hand-built records (no simulation)."""

import pytest

from calcheck.theory_checks.results.evidence import cell_tier, check_tier, ledger
from calcheck.theory_checks.results.roles import headline


def _cell(**kw):
    base = {"claimed": 0.9, "no_power": None, "exact_coverage": None, "certified_coverage": None}
    base.update(kw)
    base.setdefault("verdict", "consistent")
    return base


@pytest.mark.parametrize(
    ("claim", "cell", "tier"),
    [
        ("one", _cell(certified_coverage=1.0), "deterministic"),
        ("1-alpha", _cell(no_power="too few replicates"), "powerless"),
        ("1-alpha", _cell(certified_coverage=0.95, exact_coverage=0.99), "certified"),
        ("1-alpha", _cell(certified_coverage=0.85, exact_coverage=0.99), "exact"),
        ("1-alpha", _cell(certified_coverage=0.85), "monte_carlo"),
        ("1-alpha", _cell(), "monte_carlo"),
    ],
)
def test_a_cell_is_placed_by_its_own_evidence(claim, cell, tier):
    assert cell_tier(cell, claim) == tier


def test_a_check_names_the_weakest_rung_that_held_or_the_strongest_that_flagged():
    cells = [_cell(certified_coverage=0.95), _cell(exact_coverage=0.95), _cell()]
    consistent = {"kind": "coverage", "claim": "1-alpha", "verdict": "consistent", "cells": cells}
    assert check_tier(consistent) == "monte_carlo"
    flagged = [_cell(), _cell(exact_coverage=0.8, verdict="violated")]
    violated = {"kind": "coverage", "claim": "1-alpha", "verdict": "violated", "cells": flagged}
    assert check_tier(violated) == "exact"
    none = {
        "kind": "coverage",
        "claim": "1-alpha",
        "verdict": "vacuous",
        "cells": [_cell(no_power="x")],
    }
    assert check_tier(none) == "powerless"
    assert check_tier({"kind": "rate", "cells": []}) == "monte_carlo"


def _record(i, guarantee, role, **kw):
    record = {
        "id": i,
        "guarantee": guarantee,
        "role": role,
        "expect": "violated" if role in ("control", "counterexample") else "consistent",
        "kind": "coverage",
        "claim": "1-alpha",
        "bound_mode": "stated",
        "event": "within(max_error)",
        "experiments": {"e1": {}, "e2": {}},
        "verdict": "violated" if role in ("control", "counterexample") else "consistent",
        "passed": True,
        "mutant": {"caught": True} if role == "guarantee" else None,
        "implied_by": None,
        "powerless": [],
        "cells": [_cell(certified_coverage=0.95)],
    }
    record.update(kw)
    return record


def test_the_ledger_derives_how_each_check_counts():
    checks = [
        _record("a", "a", "guarantee"),
        _record("a.control.times_0.7", "a", "control", bound_mode="times_0.7"),
        _record("a.control.surely", "a", "control", claim="one", experiments={"e1": {}}),
        _record("a.control.wrong_n", "a", "control", bound_mode="n_times_B"),
        _record("p", "p", "guarantee"),
        _record("p.control.counterexample", "p", "counterexample"),
        _record("s", "s", "guarantee", claim="one", mutant=None),
        _record("w", "w", "guarantee", implied_by="a"),
    ]
    led = ledger(checks)
    assert led["a"]["counted_as"] == "guarantee"
    assert led["a"]["tier"] == "certified"
    assert led["a.control.times_0.7"]["counted_as"] == "mutant rung"
    assert led["a.control.surely"]["counted_as"] == "mutant rung"
    assert led["a.control.wrong_n"]["counted_as"] == "control"
    assert led["p"]["counted_as"] == "printed claim fails"
    assert led["s"]["counted_as"] == "identity"
    assert led["w"]["counted_as"] == "implied"
    h = headline(checks)
    assert (h["guarantees"], h["guarantees_verified"]) == (1, 1)
    assert h["verified_by_tier"]["certified"] == 1
    assert (h["controls"], h["identities"], h["printed_claims"]) == (1, 1, 1)
    assert h["mutant_rungs"] == ["a.control.times_0.7", "a.control.surely"]
    assert h["printed_claims_where_they_hold"] == ["p"]
    assert "1 certified for every law at the sizes run" in h["text"]


def test_the_headline_splits_into_items_at_commas_outside_parentheses():
    from calcheck.theory_checks.results.roles import headline_parts

    text = "2 of 2 guarantees verified (a, b; c), 1 of 1 controls caught; apart: 3 implied (x, y)"
    assert headline_parts(text) == [
        "2 of 2 guarantees verified (a, b; c)",
        "1 of 1 controls caught",
        "3 implied (x, y)",
    ]
