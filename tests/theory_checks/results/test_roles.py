"""Roles of results: findings first, and a counterexample that stops failing is news (#26)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from calcheck.theory_checks import catalog
from calcheck.theory_checks.cli.main import main
from calcheck.theory_checks.results.roles import ROLES, role_count_text, role_of

#: The printed claims the quick budget checks as printed (and finds false).
COUNTEREXAMPLES = {
    "gpr20.cor3.control.counterexample",
    "gpr20.g4.control.counterexample",
    "klm19.gi5.hist.control.merged",
}
HYPOTHESES = {
    "gr21.thm3.control.no_tie_breaking",
    "gr22.alg10.occupancy.control.atoms",
    "gr21.lem1.control.no_tie_breaking",
    "gpr20.thm5.control.atoms_without_tie_breaking",
    "nch14.thm31.hoeffding.equal_width",
    "nch14.thm34.equal_width",
}
#: Results that hold by construction of the code (issue 35): checked exactly by unit tests.
IDENTITIES = {
    "nch14.eq2",
    "nch14.thm34.unequal",
    "klm19.prop33",
    "klm19.ex32",
    "gr22.prop4",
    "gr22.accuracy",
    "gr22.accuracy.top_k",
    "gpr20.prop2",
}


@pytest.fixture(scope="module")
def quick():
    return {c.id: c for c in catalog.all_checks("quick")}


def test_every_check_has_a_role_that_fits_its_expectation(quick):
    roles = {cid: role_of(c) for cid, c in quick.items()}
    assert set(roles.values()) == set(ROLES)  # every role is used, identities included
    assert {k for k, r in roles.items() if r == "counterexample"} == COUNTEREXAMPLES
    assert {k for k, r in roles.items() if r == "hypothesis"} == HYPOTHESES
    assert {k for k, r in roles.items() if r == "identity"} == IDENTITIES
    # an identity has no control: every check of its guarantee is an identity
    identity_ids = {quick[k].guarantee for k in IDENTITIES}
    for cid, c in quick.items():
        if c.guarantee in identity_ids:
            assert roles[cid] == "identity", cid
    for cid, c in quick.items():
        assert c.expect in ROLES[roles[cid]], cid


def test_a_role_that_contradicts_expect_is_refused(quick):
    base = quick["gr21.thm3"]
    with pytest.raises(ValueError, match="a counterexample expects violated"):
        dataclasses.replace(base, role="counterexample")
    with pytest.raises(ValueError, match="role must be one of"):
        dataclasses.replace(base, role="finding")
    assert dataclasses.replace(base, role="hypothesis").role == "hypothesis"


def test_role_counts_read_older_results_without_roles():
    records = [
        {"expect": "consistent", "passed": True},
        {"expect": "violated", "passed": True},
        {"expect": "violated", "passed": False, "role": "counterexample"},
    ]
    assert role_count_text(records) == (
        "1 of 1 guarantees consistent, 1 of 1 negative controls caught, "
        "0 of 1 printed claims fail as printed"
    )


def test_printed_claims_lead_and_a_counterexample_that_holds_fails_the_run(
    quick, monkeypatch, tmp_path, capsys
):
    out = tmp_path / "run"
    assert main(["run", "--checks", "gpr20.cor3", "--reps", "300", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "Printed claims that fail" in text
    # the printed form fails: its check on laws where it holds is not a verified guarantee,
    # its valid form is (the ledger's rule)
    assert "1 of 1 guarantees verified" in text
    assert "1 checks of failing printed claims on laws where they hold (gpr20.cor3)" in text
    assert "1 of 1 printed claims fail as printed" in text
    data = json.loads((out / "results.json").read_text())
    assert {c["id"]: c["role"] for c in data["checks"]}["gpr20.cor3.control.counterexample"] == (
        "counterexample"
    )
    (claim,) = data["printed_claims"]
    assert claim["guarantee"] == "gpr20.cor3"
    assert claim["fails"]
    assert claim["valid_form"]["guarantee"] == "gpr20.cor3.max_halfwidth"
    assert claim["valid_form"]["verdict"] == "consistent"
    report = (out / "report.md").read_text()
    assert report.index("## Printed claims that fail") < report.index("## Every check")
    html = (out / "report.html").read_text()
    assert html.index("Printed claims that fail") < html.index("<h2>Summary")

    # the printed claim on a law where it holds: the counterexample stops failing -> exit 1
    holding = dataclasses.replace(
        quick["gpr20.cor3.control.counterexample"],
        experiments=quick["gpr20.cor3"].experiments[:1],
    )
    monkeypatch.setattr(catalog, "all_checks", lambda budget="quick": [holding])
    out2 = tmp_path / "run2"
    assert main(["run", "--checks", holding.id, "--reps", "300", "--out", str(out2)]) == 1
    text = capsys.readouterr().out
    assert "NO LONGER FAILS" in text
    assert "0 of 1 printed claims fail as printed" in text
