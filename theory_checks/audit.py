"""``calcheck audit``: one row per check of what its verdict rests on.

For every check of a run (``results.json``): its role and kind, the statistic it reads, its
same-path mutant and whether it was caught, its power (the smallest wrong claim it would
have caught), its powerless cells and the check that implies it on the same draws. A
guarantee whose mutant was not caught *cannot fail on this design*: the audit says so, and
the run fails on it unless the check is reclassified (an identity, with its reason).
"""

from __future__ import annotations

from .summary import text_table

__all__ = ["AUDIT_HEADERS", "audit_problems", "audit_rows", "audit_table"]

AUDIT_HEADERS = (
    "check",
    "role",
    "kind",
    "statistic",
    "verdict",
    "mutant",
    "caught",
    "power",
    "powerless",
    "implied by",
)


def audit_rows(data: dict) -> list[dict]:
    """One dict per check of a run's ``results.json`` data (keys ``AUDIT_HEADERS``)."""
    rows = []
    for c in data["checks"]:
        mutant = c.get("mutant")
        rows.append(
            {
                "check": c["id"],
                "role": c["role"],
                "kind": c.get("kind") or "coverage",
                "statistic": c.get("event", ""),
                "verdict": c["verdict"],
                "mutant": None if mutant is None else mutant["claim"],
                "caught": None if mutant is None else bool(mutant["caught"]),
                "power": c.get("power") or "-",
                "powerless": len(c.get("powerless") or ()),
                "implied by": c.get("implied_by"),
            }
        )
    return rows


def audit_problems(data: dict) -> list[str]:
    """Guarantees that cannot fail on their design (mutant not caught), one line each."""
    return [
        f"{c['id']}: mutant not caught ({c['mutant']['claim']}: {c['mutant']['detail']})"
        for c in data["checks"]
        if c["role"] == "guarantee" and c.get("mutant") and not c["mutant"]["caught"]
    ]


def _cell(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "NO"
    return str(value)


def audit_table(data: dict, *, markdown: bool = False) -> str:
    """The audit as a plain-text or Markdown table."""
    rows = [[_cell(r[h]) for h in AUDIT_HEADERS] for r in audit_rows(data)]
    return text_table(AUDIT_HEADERS, rows, markdown=markdown)
