"""The verdict table's rows and the printed claims that fail: one home for a check's numbers.

:func:`summary_row` turns one check of ``results.json`` into the strings of the terminal,
Markdown and HTML tables; :func:`printed_claims` gathers the checks of role
``counterexample`` (:mod:`calcheck.theory_checks.results.roles`) with the paper's words and the
evidence, which every report shows first.
"""

from __future__ import annotations

import math

from calcheck.bounds import registry

from ..catalog.valid_forms import VALID_FORMS
from ..results.evidence import cell_tier, is_sure_claim

__all__ = [
    "P_FLOOR",
    "SUMMARY_HEADERS",
    "number_text",
    "p_value_text",
    "printed_claim_lines",
    "printed_claims",
    "summary_row",
    "text_table",
]


SUMMARY_HEADERS = (
    "check",
    "role",
    "verdict",
    "cells",
    "worst cell",
    "coverage [95% CP]",
    "claimed",
    "p-value",
    "tightness",
    "detects",
)


def _worst(cells: list[dict]) -> dict:
    # A flagged cell first, then the smallest p-value and margin (CheckResult.worst_cell's rule)
    return min(
        cells,
        key=lambda x: (x["verdict"] != "violated", x["p_value"], x["coverage"] - x["claimed"]),
    )


def number_text(x, spec=".2f") -> str:
    """``x`` formatted with ``spec``; results hold "inf" / None where a threshold left its grid."""
    return format(x, spec) if isinstance(x, int | float) else str(x)


def _rate_row(check: dict) -> tuple[str, ...]:
    # The series with the largest lower slope bound plays the worst cell.
    def key(s):
        lower = s["slope_lower"]
        measured = s.get("verdict") != "inconclusive"
        return (measured, lower if isinstance(lower, int | float) else -math.inf)

    worst = max(check["series"], key=key)
    status = "as expected" if check["passed"] else "NOT as expected"
    lo, hi = worst["slope_ci"]
    censored = f"; {worst['unbracketed']} n* off the grid" if worst["unbracketed"] else ""
    return (
        check["id"],
        f"rate {check['role']}",
        f"{check['verdict']} ({status})",
        f"{len(check['series'])} series",
        worst["name"],
        f"slope {number_text(worst['slope'])} [{number_text(lo)}, {number_text(hi)}]",
        f"<= {1 + check['slack']:g}",
        f"lower {number_text(worst['slope_lower'])}{censored}",
        f"c={number_text(worst['c_fit'], '.3g')}",
    )


def _exponent_row(check: dict) -> tuple[str, ...]:
    # The series whose excess-exponent interval is farthest from 0 plays the worst cell.
    worst = max(check["series"], key=lambda s: min(abs(x) for x in s["excess_ci"]))
    status = "as expected" if check["passed"] else "NOT as expected"
    lo, hi = worst["exponent_ci"]
    return (
        check["id"],
        f"exponent {check['role']}",
        f"{check['verdict']} ({status})",
        f"{len(check['series'])} series",
        worst["name"],
        f"exponent {worst['exponent']:.2f} [{lo:.2f}, {hi:.2f}]",
        f"{worst['claimed']:.2f} +- {check['tolerance']:g}",
        f"excess [{worst['excess_ci'][0]:+.2f}, {worst['excess_ci'][1]:+.2f}]",
        f"c={worst['c_fit']:.3g}",
    )


def _mean_row(check: dict) -> tuple[str, ...]:
    # The experiment with the largest |z| plays the worst cell.
    def largest(s):
        return max(abs(z) if isinstance(z, int | float) else math.inf for z in s["z"])

    worst = max(check["series"], key=largest)
    status = "as expected" if check["passed"] else "NOT as expected"
    cells = sum(len(s["z"]) for s in check["series"])
    return (
        check["id"],
        f"mean {check['role']}",
        f"{check['verdict']} ({status})",
        str(cells),
        worst["name"],
        f"|z| = {number_text(largest(worst))}",
        "mean 0",
        f"level {worst['level']:.2g}",
        f"detects {min(s['detectable'][0] for s in check['series']):.2g}+",
    )


def _tradeoff_row(check: dict) -> tuple[str, ...]:
    # the narrowest member plays the worst cell
    worst = min(check["series"], key=lambda m: m["median_width"])
    status = "as expected" if check["passed"] else "NOT as expected"
    bad = sum(m["verdict"] == "violated" for m in check["series"])
    lo, hi = worst["coverage_ci"]
    return (
        check["id"],
        f"trade-off {check['role']}",
        f"{check['verdict']} ({status})",
        f"{len(check['series'])} members",
        f"{worst['name']} a={worst['alpha']:g}: width {worst['median_width']:.3f}",
        f"{worst['coverage']:.4f} [{lo:.4f}, {hi:.4f}] on {worst['valid_law']}",
        "wide or invalid",
        f"{bad} narrow and valid",
        f"level {worst['level']:.2g}",
    )


def summary_row(check: dict) -> tuple[str, ...]:
    """One check of :func:`results_to_dict` as the strings of :data:`SUMMARY_HEADERS`.

    Each kind of the check protocol has its row (:data:`ROWS`, by the record's ``kind``).
    """
    kind = check.get("kind") or "coverage"  # a results.json written before kinds existed
    return ROWS[kind](check)


def _detects(check: dict) -> str:
    k = [c["detectable_factor"] for c in check["cells"]]
    k = [x for x in k if isinstance(x, int | float)]
    return f"x{max(k):.2f}" if k else "-"


def _coverage_text(cell: dict, claim: str) -> str:
    """Coverage with its interval; a sure claim's replicates are not trials: no interval."""
    if is_sure_claim(claim):
        return f"{cell['successes']} of {cell['trials']} hold (deterministic)"
    return f"{cell['coverage']:.4f} [{cell['ci_low']:.4f}, {cell['ci_high']:.4f}]"


def _coverage_row(check: dict) -> tuple[str, ...]:
    worst = _worst(check["cells"])
    tight = [x["tightness"] for x in check["cells"] if isinstance(x["tightness"], float)]
    alpha = "-" if worst["alpha"] is None else f"{worst['alpha']:g}"
    status = "as expected" if check["passed"] else "NOT as expected"
    return (
        check["id"],
        check["role"],
        f"{check['verdict']} ({status})",
        str(len(check["cells"])),
        f"{worst['law']} n={worst['n']} B={worst['n_bins']} a={alpha}",
        _coverage_text(worst, check.get("claim", ""))
        + (
            f"; exact {worst['exact_coverage']:.4f}"
            if worst.get("exact_coverage") is not None
            else ""
        ),
        f"{worst['claimed']:.4f}",
        p_value_text(worst, check.get("claim", "")),
        f"{min(tight):.2f}-{max(tight):.2f}" if tight else "-",
    )


#: p-values below this print as "< 1e-300" (scipy's binomial test underflows to 0 there).
P_FLOOR = 1e-300


def p_value_text(cell: dict, claim: str = "") -> str:
    """A cell's p-value as printed: what decided it where no test did, never a bare 0.

    A cell decided by its certified or exact probability shows that (the test is only a
    cross-check there); a p-value below :data:`P_FLOOR` prints as ``< 1e-300``; a claim of
    certainty is decided by whether any replicate failed.
    """
    tier = cell.get("tier") or cell_tier(cell, claim)
    if tier in ("certified", "exact"):
        value = cell["certified_coverage" if tier == "certified" else "exact_coverage"]
        return f"{tier} {value:.4f} decides"
    p = cell["p_value"]
    if cell.get("claimed", 0.0) >= 1.0:
        return "0 (a failure, claimed surely)" if p == 0 else "1 (no failure)"
    return f"< {P_FLOOR:g}" if p < P_FLOOR else f"{p:.3g}"


def text_table(headers, rows, *, markdown: bool = False) -> str:
    """``rows`` (sequences of strings) under ``headers``: aligned plain text, or Markdown."""
    if markdown:
        lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
        lines += ["| " + " | ".join(x.replace("|", "\\|") for x in row) + " |" for row in rows]
        return "\n".join(lines)
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(headers)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return "\n".join(
        [fmt.format(*headers), fmt.format(*("-" * w for w in widths))]
        + [fmt.format(*row) for row in rows]
    )


#: Kind of check (:mod:`~calcheck.theory_checks.results.protocol`) -> its summary row.
ROWS = {
    "coverage": lambda c: (*_coverage_row(c), _detects(c)),
    "rate": lambda c: (*_rate_row(c), "-"),
    "exponent": lambda c: (*_exponent_row(c), "-"),
    "mean": lambda c: (*_mean_row(c), "-"),
    "tradeoff": lambda c: (*_tradeoff_row(c), "-"),
}


def _no_p(check: dict, text: str) -> bool:
    """Whether the row's last number is not a p-value (a series, or an exact decision)."""
    return check.get("kind") not in (None, "coverage") or text.endswith("decides")


def printed_claims(checks: list[dict]) -> list[dict]:
    """The printed claims of papers that the run checked as printed (role counterexample).

    Each with the paper's words (the guarantee's label and statement), the evidence (the
    check's worst cell and numbers), whether it failed as expected, and the valid form the
    suite checks beside it (:data:`~calcheck.theory_checks.catalog.valid_forms.VALID_FORMS`), with
    its verdict when the run holds it.
    """
    by_id = {c["id"]: c for c in checks}
    out = []
    for c in checks:
        if c["role"] != "counterexample":
            continue
        g = registry.get(c["guarantee"])
        row = summary_row(c)
        entry = {
            "id": c["id"],
            "guarantee": g.id,
            "label": g.label,
            "statement": g.statement,
            "evidence": c["description"],
            "verdict": c["verdict"],
            "fails": bool(c["passed"]),
            "where": row[4],
            "numbers": f"{row[5]} vs claimed {row[6]} "
            + (f"({row[7]})" if _no_p(c, row[7]) else f"(p = {row[7]})"),
            "valid_form": None,
        }
        valid = VALID_FORMS.get(g.id)
        if valid is not None:
            v = registry.get(valid)
            entry["valid_form"] = {
                "guarantee": v.id,
                "label": v.label,
                "statement": v.statement,
                "verdict": by_id[valid]["verdict"] if valid in by_id else None,
            }
        out.append(entry)
    return out


def printed_claim_lines(claims: list[dict]) -> list[str]:
    """Plain-text lines of :func:`printed_claims` (terminal and Markdown)."""
    lines = []
    for p in claims:
        head = "fails as printed" if p["fails"] else "NO LONGER FAILS (news: check it)"
        lines.append(
            f"{p['guarantee']} ({p['label']}): {head}; {p['where']}: {p['numbers']}. "
            f"Evidence: {p['evidence']}."
        )
        if p["valid_form"]:
            v = p["valid_form"]
            verdict = f": {v['verdict']}" if v["verdict"] else ""
            lines.append(f"    valid form {v['guarantee']} ({v['label']}){verdict}")
    return lines
