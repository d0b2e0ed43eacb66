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

__all__ = [
    "ROLES",
    "VALID_FORMS",
    "check_role",
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

#: A printed claim that fails (guarantee id) -> the valid form the suite checks beside it.
VALID_FORMS = {
    "gpr20.cor3": "gpr20.cor3.max_halfwidth",
    "gpr20.g4": "gpr20.g4.corrected",
}

#: How each role is counted in a run's summary: (noun, what "as expected" means).
_COUNTED = {
    "guarantee": ("guarantees", "consistent"),
    "control": ("negative controls", "caught"),
    "counterexample": ("printed claims", "fail as printed"),
    "hypothesis": ("dropped hypotheses", "as stated"),
    "identity": ("identities (hold by construction)", "checked exactly"),
}


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
