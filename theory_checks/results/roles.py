"""The role of a check's result: what a reader learns from it (one home).

``kind`` names how a check is computed (coverage, rate, exponent...); the *role* says what
its verdict means:

``guarantee``
    a stated or corrected guarantee: it must come out consistent;
``control``
    a deliberately wrong bound or setting (a negative control): it must come out violated,
    and shows that the check has the power to catch it;
``counterexample``
    a printed claim of a paper, checked as printed, that fails: it must come out violated,
    and the suite shows the evidence first (a counterexample that stops failing is news:
    the run exits 1);
``hypothesis``
    what happens when a theorem's hypothesis is dropped (expected as the check states);
``identity``
    a result that holds by construction of the code (both sides from the same arrays or
    the same function: a triangle inequality, Jensen on one measure, a function compared
    with itself). It is checked exactly, as code (a unit test of the implementation),
    listed apart as "holds by construction", never counted among verified guarantees and
    given no control: no data could make it fail.

A check without an explicit role takes ``guarantee`` if it expects consistent and
``control`` if it expects violated.
"""

from __future__ import annotations

from .evidence import STRENGTH, ledger

__all__ = [
    "ROLES",
    "check_role",
    "headline",
    "headline_parts",
    "headline_text",
    "role_count_text",
    "role_of",
]

#: Role -> the verdicts it may expect.
ROLES = {
    "guarantee": ("consistent",),
    "control": ("violated",),
    "counterexample": ("violated",),
    "hypothesis": ("consistent", "violated"),
    "identity": ("consistent",),
}

#: How each role is counted in a run's summary: (noun, what "as expected" means).
_COUNTED = {
    "guarantee": ("guarantees", "consistent"),
    "control": ("negative controls", "caught"),
    "counterexample": ("printed claims", "fail as printed"),
    "hypothesis": ("dropped hypotheses", "as stated"),
    "identity": ("identities (hold by construction)", "checked exactly"),
}


def headline(checks) -> dict:
    """What a run's verdicts say, counting only what could have failed.

    ``checks`` are result dicts (``role``, ``passed``, ``verdict``, ``mutant``,
    ``implied_by``, ``powerless``, ``cells``). How each counts is derived by the rules of
    :func:`calcheck.theory_checks.results.evidence.ledger`: guarantees count as *verified* only when
    consistent with their same-path mutant caught, grouped by the rung that decided them
    (certified for every law, exact on the law, Monte Carlo); a guarantee claimed surely
    counts as an identity, one whose printed form fails as a printed claim, one implied by
    another apart; a control that repeats a mutant rung is not an extra control.
    """
    led = ledger(checks)

    def counted(kind):
        return [c for c in checks if led[c["id"]]["counted_as"] == kind]

    own = counted("guarantee")
    verified = [c for c in own if c["verdict"] == "consistent" and _caught(c)]
    identities = counted("identity")
    out = {
        "guarantees_verified": len(verified),
        "guarantees": len(own),
        "verified_by_tier": {t: sum(led[c["id"]]["tier"] == t for c in verified) for t in STRENGTH},
        "verified_cells_by_tier": _cells_by_tier(verified),
        "cannot_fail_on_design": [
            c["id"] for c in own if c["verdict"] == "consistent" and not _caught(c)
        ],
        "guarantees_violated": [c["id"] for c in own if c["verdict"] == "violated"],
        "controls_caught": sum(bool(c["passed"]) for c in counted("control")),
        "controls": len(counted("control")),
        "mutant_rungs": [c["id"] for c in counted("mutant rung")],
        "printed_claims_fail": sum(bool(c["passed"]) for c in counted("counterexample")),
        "printed_claims": len(counted("counterexample")),
        "printed_claims_where_they_hold": [c["id"] for c in counted("printed claim fails")],
        "hypotheses_as_stated": sum(bool(c["passed"]) for c in counted("hypothesis")),
        "hypotheses": len(counted("hypothesis")),
        "identities_checked": sum(bool(c["passed"]) for c in identities),
        "identities": len(identities),
        "implied": {c["id"]: c["implied_by"] for c in counted("implied")},
        "powerless_cells": sum(len(c.get("powerless") or ()) for c in checks),
        "vacuous": [c["id"] for c in checks if c["verdict"] == "vacuous"],
        "inconclusive": [c["id"] for c in checks if c["verdict"] == "inconclusive"],
    }
    out["text"] = headline_text(out)
    return out


def _cells_by_tier(records) -> dict:
    """Cells of the given checks on each rung (a record without tiers counts none)."""
    out = {t: 0 for t in (*STRENGTH, "powerless")}
    for c in records:
        for cell in c.get("cells") or ():
            if cell.get("tier") in out:
                out[cell["tier"]] += 1
    return out


def _caught(record) -> bool:
    mutant = record.get("mutant")
    return mutant is None or bool(mutant.get("caught"))


def _tier_text(h: dict) -> str:
    by = h.get("verified_by_tier") or {}
    parts = [
        f"{by.get('certified', 0)} certified for every law at the sizes run",
        f"{by.get('exact', 0)} exact on their laws",
        f"{by.get('monte_carlo', 0)} by Monte Carlo with the power each states",
    ]
    cells = h.get("verified_cells_by_tier") or {}
    if any(cells.values()):
        parts.append(
            f"their cells: {cells.get('certified', 0)} certified, {cells.get('exact', 0)} "
            f"exact, {cells.get('monte_carlo', 0)} Monte Carlo, "
            f"{cells.get('powerless', 0)} powerless"
        )
    return "; ".join(parts)


def headline_text(h: dict) -> str:
    """The headline as one sentence, then what is counted apart."""
    parts = [
        f"{h['guarantees_verified']} of {h['guarantees']} guarantees verified "
        f"(consistent with a same-path mutant caught; decided: {_tier_text(h)})"
    ]
    if h["controls"]:
        parts.append(f"{h['controls_caught']} of {h['controls']} negative controls caught")
    if h["printed_claims"]:
        parts.append(
            f"{h['printed_claims_fail']} of {h['printed_claims']} printed claims fail as printed"
        )
    if h["hypotheses"]:
        parts.append(
            f"{h['hypotheses_as_stated']} of {h['hypotheses']} dropped hypotheses as stated"
        )
    return ", ".join(parts) + _apart_text(h)


def _apart_text(h: dict) -> str:
    apart = []
    if h["cannot_fail_on_design"]:
        apart.append(f"{len(h['cannot_fail_on_design'])} guarantees cannot fail on this design")
    where = h.get("printed_claims_where_they_hold") or ()
    if where:
        apart.append(
            f"{len(where)} checks of failing printed claims on laws where they hold "
            f"({', '.join(where)})"
        )
    if h["identities"]:
        apart.append(
            f"{h['identities_checked']} of {h['identities']} identities and limits checked "
            "exactly (claimed surely: hold by construction, never guarantees)"
        )
    if h["implied"]:
        apart.append(f"{len(h['implied'])} implied by a stronger claim on the same draws")
    if h.get("mutant_rungs"):
        apart.append(
            f"{len(h['mutant_rungs'])} controls that repeat a mutant rung (not counted as controls)"
        )
    if h["powerless_cells"]:
        apart.append(f"{h['powerless_cells']} powerless cells or points listed")
    if h["vacuous"]:
        apart.append(f"{len(h['vacuous'])} vacuous")
    if h["inconclusive"]:
        apart.append(f"{len(h['inconclusive'])} inconclusive")
    return f"; apart: {', '.join(apart)}" if apart else ""


def headline_parts(text: str) -> list[str]:
    """The headline's items: split at the commas outside parentheses (one item each)."""
    parts, depth, start = [], 0, 0
    text = text.replace("; apart: ", ", ")
    for i, ch in enumerate(text):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return [p for p in parts if p]


def role_count_text(checks) -> str:
    """``"67 of 67 guarantees consistent, 73 of 73 negative controls caught, ..."``.

    ``checks`` are result dicts (``role``, ``passed``); roles absent from the run are left
    out.
    """
    parts = []
    for role, (noun, outcome) in _COUNTED.items():
        mine = [c for c in checks if _role_of_record(c) == role]
        if mine:
            ok = sum(bool(c["passed"]) for c in mine)
            vacuous = sum(c.get("verdict") == "vacuous" for c in mine)
            no_power = f" ({vacuous} vacuous: no power)" if vacuous else ""
            parts.append(f"{ok} of {len(mine)} {noun} {outcome}{no_power}")
    return ", ".join(parts)


def _role_of_record(record: dict) -> str:
    # a results.json written before roles existed has none: read it off expect
    return record.get("role") or ("control" if record["expect"] == "violated" else "guarantee")


def check_role(check) -> None:
    """Raise ValueError for a role that is unknown or contradicts the check's ``expect``."""
    role = getattr(check, "role", "")
    if role == "":
        return
    if role not in ROLES:
        raise ValueError(f"role must be one of {sorted(ROLES)} (or ''), got {role!r}")
    if check.expect not in ROLES[role]:
        raise ValueError(
            f"check {check.id!r}: a {role} expects {' or '.join(ROLES[role])}, "
            f"got expect={check.expect!r}"
        )


def role_of(check) -> str:
    """The role of a check (explicit, or read off ``expect``)."""
    role = getattr(check, "role", "")
    if role:
        return role
    return "control" if check.expect == "violated" else "guarantee"
