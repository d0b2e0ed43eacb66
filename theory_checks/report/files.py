"""Run reports: a machine-readable results file, a markdown table and the one summary.

The summary (worst cell, tightness range) is what both the markdown and the HTML report
show.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import time
from pathlib import Path

from calcheck.simulations.files import atomic_write_text, json_text

from ..checks.check import CheckResult
from ..results.evidence import cell_tier, check_tier, ledger
from ..results.implied import implied_by
from ..results.roles import headline, role_count_text, role_of
from .audit import audit_table
from .summary import (
    SUMMARY_HEADERS,
    number_text,
    printed_claim_lines,
    printed_claims,
    summary_row,
    text_table,
)

__all__ = [
    "SUMMARY_HEADERS",
    "format_table",
    "printed_claim_lines",
    "printed_claims",
    "rate_lines",
    "results_to_dict",
    "summary_row",
    "vacuity_lines",
    "with_tiers",
    "write_report",
]


def _check_dict(r) -> dict:
    """The keys every result shares: the check protocol (:mod:`.protocol`)."""
    ch = r.check
    mutant = getattr(r, "mutant", None)
    return {
        "id": ch.id,
        "guarantee": ch.guarantee,
        "description": ch.description,
        "event": ch.metric,
        "bound_mode": ch.bound_mode,
        "expect": ch.expect,
        "role": role_of(ch),
        "kind": r.kind,
        "verdict": r.verdict,
        "passed": r.passed,
        "reps": r.reps,
        "false_alarm": r.false_alarm,
        "mutant": None if mutant is None else dataclasses.asdict(mutant),
        "power": r.power_text(),
        "powerless": list(r.powerless),
        "experiments": ch.law_specs(),
    }


def check_entry(r) -> dict:
    """A check's entry of ``results.json`` but its ``implied_by`` (that needs every result)."""
    return {**_check_dict(r), **r.evidence()}


def with_tiers(entry: dict) -> dict:
    """A check entry with the rung of each cell (``tier``) and of its verdict (``decided_by``)."""
    claim = entry.get("claim", "")
    if entry.get("kind", "coverage") == "coverage":
        entry["cells"] = [{**c, "tier": cell_tier(c, claim)} for c in entry.get("cells") or ()]
    entry["decided_by"] = check_tier(entry)
    return entry


def results_to_dict(results: list, meta: dict) -> dict:
    """Every verdict of a run, JSON-able: the protocol's keys plus each kind's evidence."""
    implied = implied_by(results)
    checks = [
        with_tiers({**_check_dict(r), "implied_by": implied.get(r.check.id), **r.evidence()})
        for r in results
    ]
    counted = ledger(checks)
    for c in checks:
        c["counted_as"] = counted[c["id"]]["counted_as"]
        c["ledger_rule"] = counted[c["id"]]["rule"]
    return {
        "meta": meta,
        "all_passed": all(r.passed for r in results),
        "roles": role_count_text(checks),
        "headline": headline(checks),
        "printed_claims": printed_claims(checks),
        "checks": checks,
    }


#: Columns of the one-row-per-check summary (markdown, terminal and HTML).
def vacuity_lines(data: dict) -> list[str]:
    """One line per check with cells (or series points) that have no power, and why."""
    lines = []
    for c in data["checks"]:
        if c.get("vacuity"):
            lines.append(f"{c['id']}: {c['vacuity']}")
        elif c.get("powerless"):
            lines.append(f"{c['id']}: {'; '.join(c['powerless'])}")
    return lines


def rate_lines(data: dict) -> list[str]:
    """The fitted exponents of every rate and exponent check, one line per series."""
    lines = []
    for c in data["checks"]:
        if c["expect"] == "violated":  # a control fits the same data to a wrong h
            continue
        if c.get("kind") in ("mean", "tradeoff"):
            continue
        if c.get("kind") == "exponent":
            for s in c["series"]:
                e_lo, e_hi = s["exponent_ci"]
                lines.append(
                    f"{c['id']} | {s['name']}: E ~ {s['varying']}^{s['exponent']:.2f} "
                    f"[{e_lo:.2f}, {e_hi:.2f}] (claimed {s['claimed']:.2f}), "
                    f"c = {s['c_fit']:.3g}"
                )
            continue
        for s in c.get("series", ()):
            if s.get("verdict") == "inconclusive":
                lines.append(
                    f"{c['id']} | {s['name']}: inconclusive ({s['unbracketed']} of "
                    f"{len(s['theta'])} thresholds off the grid)"
                )
                continue
            e_lo, e_hi = s["exponent_ci"]
            lines.append(
                f"{c['id']} | {s['name']}: n* ~ {s['varying']}^{number_text(s['exponent'])} "
                f"[{number_text(e_lo)}, {number_text(e_hi)}], "
                f"c = max n*/h = {number_text(s['c_fit'], '.3g')}"
            )
    return lines


def format_table(
    results: list[CheckResult], *, markdown: bool = False, data: dict | None = None
) -> str:
    """One row per check: its verdict and its worst cell (a flagged one, else smallest p).

    ``data``: the run's :func:`results_to_dict` when the caller has it (not computed again).
    """
    data = results_to_dict(results, {}) if data is None else data
    rows = [summary_row(c) for c in data["checks"]]
    return text_table(SUMMARY_HEADERS, rows, markdown=markdown)


def _signature(data: dict) -> tuple:
    meta = data.get("meta", {})
    ids = sorted(c["id"] for c in data.get("checks", ()))
    return (ids, meta.get("seed"), meta.get("reps"), meta.get("false_alarm"))


def keep_previous(out: Path, data: dict) -> Path | None:
    """Move an earlier run's report aside if it answered another question; return where.

    A rerun of the same selection (same checks, seed, replicates and false-alarm rate)
    refreshes the report in place; a different one would silently replace it, so the old
    ``results.json``, ``report.md`` and ``report.html`` are copied to ``previous/<time>/``.
    """
    old = out / "results.json"
    if not old.is_file():
        return None
    try:
        previous = json.loads(old.read_text())
    except (OSError, ValueError):
        previous = {}
    if previous and _signature(previous) == _signature(data):
        return None
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    dest = out / "previous" / stamp
    n = 1
    while dest.exists():
        n += 1
        dest = out / "previous" / f"{stamp}-{n}"
    dest.mkdir(parents=True)
    # copies, not moves: until the new files replace them atomically, the old ones stay
    # in place (a failed write then loses nothing)
    for name in ("results.json", "report.md", "report.html"):
        if (out / name).is_file():
            shutil.copy2(out / name, dest / name)
    return dest


def seed_text(meta: dict) -> str:
    """The root seed of a report's results, or that it was not given (results from Python)."""
    seed = meta.get("seed")
    return "not given" if seed is None else str(seed)


def _md_section(head: str, items: list[str]) -> list[str]:
    """A Markdown block ``head``, blank line, ``items``, blank line; nothing without items."""
    return [head, "", *items, ""] if items else []


def _md_heading(results: list, data: dict, meta: dict, title: str | None) -> list[str]:
    """The title, what the run was (seed, replicates, false-alarm rate) and its headline."""
    n_fail = sum(not r.passed for r in results)
    return [
        f"# {'calcheck run report' if title is None else title}",
        "",
        f"Root seed {seed_text(meta)}, {meta.get('reps')} replicates per cell, false-alarm rate "
        f"{meta.get('false_alarm')} per check (Bonferroni over its cells), calcheck "
        f"{meta.get('version')}.",
        "",
        f"**{len(results) - n_fail} of {len(results)} checks as expected**: "
        f"{data['headline']['text']}.",
        "",
        *_md_section(
            "## Printed claims that fail",
            [
                f"- {line.strip()}" if not line.startswith("    ") else f"  - {line.strip()}"
                for line in printed_claim_lines(data["printed_claims"])
            ],
        ),
    ]


def _md_every_check(results: list, data: dict) -> list[str]:
    """The table of every check, how to read it, its powerless cells and fitted rates."""
    return [
        "## Every check",
        "",
        "Coverage is the fraction of replicates in which the guaranteed event held; *claimed* is "
        "1 - alpha (1 - bound for expectation guarantees); the p-value is the exact one-sided "
        "binomial test of coverage >= claimed (violated below the per-cell level); tightness "
        "is how many times larger the bound is than the claimed-level quantile of the error "
        "(than the mean, for expectations); *detects x k*: at this budget the check would flag "
        "the bound multiplied by any factor below k (its best cell; '-' where the event is not "
        "error <= bound).",
        "",
        format_table(results, markdown=True, data=data),
        "",
        *_md_section(
            "Cells without power (a check none of whose cells has power is *vacuous*, never a "
            "pass):",
            [f"- {line}" for line in vacuity_lines(data)],
        ),
        *_md_section(
            "Rate checks: the threshold n* (coverage 1 - delta) against the varied parameter "
            "(95% bootstrap intervals); the verdict is the slope of log n* on log h.",
            [f"- {line}" for line in rate_lines(data)],
        ),
    ]


def _md_audit(data: dict, meta: dict) -> list[str]:
    """The audit table, how to read it, and the command that regenerates the results."""
    return [
        "## Audit",
        "",
        "One row per check: the same-path mutant (the claim tightened on the same draws) and "
        "whether the check caught it, its power, its powerless cells and the check that "
        "implies it on the same draws (`calcheck audit` prints this table).",
        "",
        audit_table(data, markdown=True),
        "",
        f"Regenerate: `{meta.get('command', 'calcheck run')}`",
        "",
    ]


def _report_markdown(results: list, data: dict, meta: dict, title: str | None = None) -> str:
    """The text of ``report.md``: headline, every check, audit (:func:`write_report` writes it).

    ``data``: :func:`results_to_dict` of ``results`` and ``meta``; ``title``: the heading
    (default "calcheck run report").
    """
    md = [
        *_md_heading(results, data, meta, title),
        *_md_every_check(results, data),
        *_md_audit(data, meta),
    ]
    return "\n".join(md)


def write_report(
    results: list[CheckResult],
    out_dir,
    meta: dict,
    *,
    data=None,
    title: str | None = None,
    markdown: bool = True,
) -> dict:
    """Write ``results.json`` and ``report.md`` into ``out_dir``; return the paths.

    An earlier report of a different selection is kept (:func:`keep_previous`); its folder
    is returned under ``"previous"``. ``data``: :func:`results_to_dict` of ``results`` and
    ``meta`` when the caller has it (not computed again). ``title``: the report's heading
    (default "calcheck run report"); ``markdown=False`` writes ``results.json`` only
    (``"markdown"`` is then None).
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    data = results_to_dict(results, meta) if data is None else data
    kept = keep_previous(out, data)
    json_path = out / "results.json"
    atomic_write_text(json_path, json_text(data, indent=1))
    md_path = out / "report.md"
    if markdown:
        atomic_write_text(md_path, _report_markdown(results, data, meta, title))
    return {
        "json": str(json_path),
        "markdown": str(md_path) if markdown else None,
        "previous": None if kept is None else str(kept),
    }
