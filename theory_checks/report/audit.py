"""``calcheck audit``: one row per check of what its verdict rests on.

For every check of a run (``results.json``): its role, how the ledger counts it and why
(:func:`calcheck.theory_checks.results.evidence.ledger`), its kind, the statistic it reads, the
rung of the evidence ladder that decided its verdict, its same-path mutant and whether it
was caught, its power (the smallest wrong claim it would have caught), its critical factor
f* (the smallest multiple of the bound that still holds), its powerless cells, the check
that implies it and any tolerance it sets other than its kind's default, with the reason. A
guarantee whose mutant was not caught *cannot fail on this design*: the audit says so, and
the run fails on it unless the check is reclassified (an identity, with its reason).
"""

from __future__ import annotations

from .summary import text_table

__all__ = [
    "AUDIT_HEADERS",
    "DEFAULT_TOLERANCES",
    "audit_problems",
    "audit_rows",
    "audit_table",
    "cell_rows",
    "check_results",
    "critical_factor_text",
    "tolerance_text",
    "tuned_without_reason",
]

AUDIT_HEADERS = (
    "check",
    "role",
    "counted as",
    "kind",
    "statistic",
    "verdict",
    "decided by",
    "mutant",
    "caught",
    "power",
    "f*",
    "powerless",
    "implied by",
    "tolerance",
)

#: The default tolerance of each series kind (a check that sets another is listed).
DEFAULT_TOLERANCES = {"rate": ("slack", 0.05), "exponent": ("tolerance", 0.1)}


_TEXT = (str, type(None))
_NUMBER = (int, float, type(None))
#: What the audit reads of each check's record: key -> (JSON types allowed, required).
_CHECK_FIELDS = {
    "id": ((str,), True),
    "role": ((str,), True),
    "verdict": ((str,), True),
    "counted_as": (_TEXT, False),
    "kind": (_TEXT, False),
    "event": (_TEXT, False),
    "decided_by": (_TEXT, False),
    "mutant": ((dict, type(None)), False),
    "power": ((str, int, float, type(None)), False),
    "powerless": ((list, type(None)), False),
    "implied_by": (_TEXT, False),
    "cells": ((list, type(None)), False),
    "slack": (_NUMBER, False),
    "tolerance": (_NUMBER, False),
    "tolerance_reason": (_TEXT, False),
}
#: What the audit reads of a mutant: key -> (JSON types allowed, required).
_MUTANT_FIELDS = {
    "claim": ((str,), True),
    "caught": ((bool,), True),
    "detail": (_TEXT, False),
}
_JSON_NAMES = {
    dict: "an object",
    list: "a list",
    str: "a string",
    bool: "true or false",
    int: "a number",
    float: "a number",
    type(None): "null",
}


def _json_kind(value) -> str:
    """A JSON value in words, echoed briefly: ``a list [1, 2]``."""
    return f"{_JSON_NAMES.get(type(value), type(value).__name__)} {_snippet(value)}"


def _snippet(value, limit: int = 60) -> str:
    """``value`` as short text (its repr, cut to ``limit`` characters)."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _check_fields(record: dict, fields: dict, where: str) -> None:
    for key, (types, required) in fields.items():
        if key not in record:
            if required:
                raise ValueError(f"{where} has no {key!r}")
            continue
        value = record[key]
        # bool is an int to Python, not a number to JSON
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            wanted = " or ".join(dict.fromkeys(_JSON_NAMES[t] for t in types))
            raise ValueError(f"{where}.{key} must be {wanted}, got {_json_kind(value)}")


def check_results(data) -> None:
    """Raise ValueError saying what of a ``results.json`` the audit cannot read.

    The audit reads ``checks`` (a list of objects with ``id``, ``role`` and ``verdict``;
    their mutant, cells and tolerances where given) and ``headline`` (an object, its
    ``text``); the message names the first field that is missing or of another type.
    """
    if not isinstance(data, dict):
        raise ValueError(f"its top level must be an object, got {_json_kind(data)}")
    if "checks" not in data:
        raise ValueError("it has no 'checks'")
    if not isinstance(data["checks"], list):
        raise ValueError(f"'checks' must be a list, got {_json_kind(data['checks'])}")
    for i, record in enumerate(data["checks"]):
        where = f"checks[{i}]"
        if not isinstance(record, dict):
            raise ValueError(f"{where} must be an object, got {_json_kind(record)}")
        _check_fields(record, _CHECK_FIELDS, where)
        if record.get("mutant") is not None:
            _check_fields(record["mutant"], _MUTANT_FIELDS, f"{where}.mutant")
        for j, cell in enumerate(record.get("cells") or ()):
            if not isinstance(cell, dict):
                raise ValueError(f"{where}.cells[{j}] must be an object, got {_json_kind(cell)}")
    headline = data.get("headline")
    if headline is not None and not isinstance(headline, dict):
        raise ValueError(f"'headline' must be an object, got {_json_kind(headline)}")
    if headline is not None:
        _check_fields(headline, {"text": (_TEXT, False)}, "headline")


def audit_rows(data: dict) -> list[dict]:
    """One dict per check of a run's ``results.json`` data (keys ``AUDIT_HEADERS``).

    ``calcheck audit --json`` adds ``cells``: each coverage cell's rung of the evidence
    ladder and its critical factors (:func:`cell_rows`).
    """
    rows = []
    for c in data["checks"]:
        mutant = c.get("mutant")
        rows.append(
            {
                "check": c["id"],
                "role": c["role"],
                "counted as": c.get("counted_as") or c["role"],
                "kind": c.get("kind") or "coverage",
                "statistic": c.get("event", ""),
                "verdict": c["verdict"],
                "decided by": c.get("decided_by") or "-",
                "mutant": None if mutant is None else mutant["claim"],
                "caught": None if mutant is None else bool(mutant["caught"]),
                "power": c.get("power") or "-",
                "f*": critical_factor_text(c),
                "powerless": len(c.get("powerless") or ()),
                "implied by": c.get("implied_by"),
                "tolerance": tolerance_text(c),
            }
        )
    return rows


def cell_rows(data: dict) -> dict:
    """Check id -> its coverage cells' rung and critical factors (``audit --json``)."""
    out = {}
    for c in data["checks"]:
        if (c.get("kind") or "coverage") != "coverage":
            continue
        out[c["id"]] = [
            {
                "experiment": cell.get("experiment"),
                "alpha": cell.get("alpha"),
                "tier": cell.get("tier"),
                "coverage": cell.get("coverage"),
                "claimed": cell.get("claimed"),
                "exact_coverage": cell.get("exact_coverage"),
                "certified_coverage": cell.get("certified_coverage"),
                "critical_factor": cell.get("ratio_quantile"),
                "critical_factor_ci": cell.get("critical_factor_ci"),
                "exact_factor": cell.get("exact_factor"),
                "certified_factor": cell.get("certified_factor"),
            }
            for cell in c.get("cells") or ()
        ]
    return out


def critical_factor_text(record: dict) -> str:
    """A guarantee's f*: the largest over its cells, by its best route ("-" elsewhere).

    The certified factor (over every law at the cell's sizes) where it exists, else the
    exact one on the cell's law, else the Monte Carlo quantile with its interval.
    """
    if record.get("role") != "guarantee" or (record.get("kind") or "coverage") != "coverage":
        return "-"
    best = None
    for cell in record.get("cells") or ():
        value, route = _cell_factor(cell)
        if isinstance(value, int | float) and (best is None or value > best[0]):
            best = (float(value), route)
    return "-" if best is None else f"{best[0]:.3f} ({best[1]})"


def _cell_factor(cell: dict):
    for key, route in (("certified_factor", "certified"), ("exact_factor", "exact")):
        if isinstance(cell.get(key), int | float):
            return cell[key], route
    return cell.get("ratio_quantile"), "monte carlo"


def tolerance_text(record: dict) -> str:
    """A series check's tolerance where it is not its kind's default, with the reason given."""
    kind = record.get("kind") or "coverage"
    if kind not in DEFAULT_TOLERANCES:
        return "-"
    key, default = DEFAULT_TOLERANCES[kind]
    value = record.get(key)
    if value is None or value == default:
        return "-"
    reason = record.get("tolerance_reason") or "NO REASON GIVEN"
    return f"{key} {value:g} (default {default:g}): {reason}"


def tuned_without_reason(data: dict) -> list[str]:
    """Checks whose tolerance differs from the default with no reason stated."""
    return [r["check"] for r in audit_rows(data) if r["tolerance"].endswith("NO REASON GIVEN")]


def audit_problems(data: dict) -> list[str]:
    """Guarantees that cannot fail on their design, and tolerances tuned without a reason."""
    out = [
        f"{c['id']}: mutant not caught ({c['mutant']['claim']}: {c['mutant'].get('detail')})"
        for c in data["checks"]
        if c["role"] == "guarantee" and c.get("mutant") and not c["mutant"]["caught"]
    ]
    out += [
        f"{i}: a tolerance other than the default, no reason given"
        for i in tuned_without_reason(data)
    ]
    return out


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
