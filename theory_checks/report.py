"""Run reports: a machine-readable results file, a markdown table and the one summary.

The summary (worst cell, tightness range) is what both the markdown and the HTML report
show.
"""

from __future__ import annotations

import dataclasses
import json
import math
import shutil
import time
from pathlib import Path

from calcheck.bounds import registry
from calcheck.simulations._io import atomic_write_text, json_text

from .check import CheckResult
from .exponents import ExponentCheckResult
from .means import MeanZeroCheckResult
from .rates import is_rate_result
from .roles import VALID_FORMS, role_count_text, role_of
from .tradeoff import TradeoffCheckResult

__all__ = [
    "SUMMARY_HEADERS",
    "format_table",
    "printed_claim_lines",
    "printed_claims",
    "rate_lines",
    "results_to_dict",
    "summary_row",
    "vacuity_lines",
    "write_report",
]


def _clean(x):
    if isinstance(x, float) and not math.isfinite(x):
        return None if math.isnan(x) else ("inf" if x > 0 else "-inf")
    return x


def _cell_dict(c) -> dict:
    v = dataclasses.asdict(c.verdict)
    return {
        "experiment": c.experiment,
        "law": c.law,
        "n": c.n,
        "n_bins": c.n_bins,
        "alpha": c.alpha,
        "bound": _clean(c.bound),
        "verdict": (
            "violated" if c.verdict.violated else "consistent" if c.has_power else "vacuous"
        ),
        **{k: _clean(val) for k, val in v.items()},
        "estimate": c.estimate,
        "ratio_quantile": _clean(c.ratio_quantile),
        "tightness": _clean(c.tightness),
        "detectable_factor": _clean(c.detectable_factor),
        "empty_bins": c.empty_bins,
        "vacuous_replicates": c.vacuous_replicates,
        "no_power": c.no_power or None,
    }


def _series_dict(s) -> dict:
    return {
        "name": s.name,
        "varying": s.varying,
        "theta": list(s.theta),
        "n_star": [_clean(x) for x in s.n_star],
        "h": list(s.h),
        "slope": _clean(s.slope),
        "slope_ci": [_clean(x) for x in s.slope_ci],
        "slope_lower": _clean(s.slope_lower),
        "level": s.level,
        "exponent": _clean(s.exponent),
        "exponent_ci": [_clean(x) for x in s.exponent_ci],
        "c_fit": _clean(s.c_fit),
        "unbracketed": s.unbracketed,
        "verdict": "violated" if s.violated else "consistent",
    }


def _exponent_series_dict(s) -> dict:
    return {
        "name": s.name,
        "varying": s.varying,
        "theta": list(s.theta),
        "means": list(s.means),
        "h": list(s.h),
        "exponent": s.exponent,
        "exponent_ci": list(s.exponent_ci),
        "claimed": s.claimed,
        "excess": s.excess,
        "excess_ci": list(s.excess_ci),
        "level": s.level,
        "c_fit": s.c_fit,
        "verdict": "violated" if s.violated else "consistent",
    }


def _check_dict(r) -> dict:
    """The keys every result shares (coverage checks and rate checks)."""
    ch = r.check
    return {
        "id": ch.id,
        "guarantee": ch.guarantee,
        "description": ch.description,
        "event": ch.metric,
        "bound_mode": ch.bound_mode,
        "expect": ch.expect,
        "role": role_of(ch),
        "verdict": r.verdict,
        "passed": r.passed,
        "reps": r.reps,
        "false_alarm": r.false_alarm,
        "experiments": ch.law_specs(),
    }


def results_to_dict(results: list[CheckResult], meta: dict) -> dict:
    """Every verdict of a run, JSON-able."""
    checks = []
    for r in results:
        ch = r.check
        if isinstance(r, MeanZeroCheckResult):
            extra = {
                "kind": "mean",
                "claim": "E[stat] = 0 in every cell (two-sided z-tests, Bonferroni)",
                "series": [
                    {
                        "name": s.name,
                        "n_grid": list(s.n_grid),
                        "means": list(s.means),
                        "z": [_clean(x) for x in s.z],
                        "detectable": list(s.detectable),
                        "level": s.level,
                        "verdict": "violated" if s.violated else "consistent",
                    }
                    for s in r.series
                ],
                "cells": [],
            }
        elif isinstance(r, TradeoffCheckResult):
            extra = {
                "kind": "tradeoff",
                "claim": "every member wide (P(width >= 1/2) >= 1 - 2 alpha) or invalid",
                "series": [m.as_dict() for m in r.series],
                "cells": [],
            }
        elif isinstance(r, ExponentCheckResult):
            extra = {
                "kind": "exponent",
                "claim": f"E[stat] ~ h: excess exponent within +-{ch.tolerance:g}",
                "tolerance": ch.tolerance,
                "series": [_exponent_series_dict(s) for s in r.series],
                "cells": [],
            }
        elif is_rate_result(r):
            extra = {
                "kind": "rate",
                "claim": f"n*/h bounded: slope of log n* on log h <= 1 + {ch.slack:g}",
                "delta": ch.delta,
                "slack": ch.slack,
                "series": [_series_dict(s) for s in r.series],
                "cells": [],
            }
        else:
            extra = {
                "claim": ch.claim,
                "per_cell_level": r.cells[0].verdict.level if r.cells else None,
                "vacuity": r.vacuity_note() or None,
                "cells": [_cell_dict(c) for c in r.cells],
            }
        checks.append({**_check_dict(r), **extra})
    return {
        "meta": meta,
        "all_passed": all(r.passed for r in results),
        "roles": role_count_text(checks),
        "printed_claims": printed_claims(checks),
        "checks": checks,
    }


def printed_claims(checks: list[dict]) -> list[dict]:
    """The printed claims of papers that the run checked as printed (role counterexample).

    Each with the paper's words (the guarantee's label and statement), the evidence (the
    check's worst cell and numbers), whether it failed as expected, and the valid form the
    suite checks beside it (:data:`~theory_checks.roles.VALID_FORMS`), with its verdict when
    the run holds it.
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
            + (f"({row[7]})" if c.get("kind") else f"(p = {row[7]})"),
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


#: Columns of the one-row-per-check summary (markdown, terminal and HTML).
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
    # Smallest p-value, then smallest margin over the claim (CheckResult.worst_cell's rule).
    return min(cells, key=lambda x: (x["p_value"], x["coverage"] - x["claimed"]))


def _num(x, spec=".2f") -> str:
    # results hold "inf" / None where a threshold left its grid
    return format(x, spec) if isinstance(x, int | float) else str(x)


def _rate_row(check: dict) -> tuple[str, ...]:
    # The series with the largest lower slope bound plays the worst cell.
    def key(s):
        lower = s["slope_lower"]
        return (s["unbracketed"], lower if isinstance(lower, int | float) else -math.inf)

    worst = max(check["series"], key=key)
    status = "as expected" if check["passed"] else "NOT as expected"
    lo, hi = worst["slope_ci"]
    censored = f"; {worst['unbracketed']} n* outside grid" if worst["unbracketed"] else ""
    return (
        check["id"],
        f"rate {check['role']}",
        f"{check['verdict']} ({status})",
        f"{len(check['series'])} series",
        worst["name"],
        f"slope {_num(worst['slope'])} [{_num(lo)}, {_num(hi)}]",
        f"<= {1 + check['slack']:g}",
        f"lower {_num(worst['slope_lower'])}{censored}",
        f"c={_num(worst['c_fit'], '.3g')}",
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
        f"|z| = {_num(largest(worst))}",
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


def vacuity_lines(data: dict) -> list[str]:
    """One line per check with cells that have no power (why, and which cells)."""
    return [f"{c['id']}: {c['vacuity']}" for c in data["checks"] if c.get("vacuity")]


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
            e_lo, e_hi = s["exponent_ci"]
            lines.append(
                f"{c['id']} | {s['name']}: n* ~ {s['varying']}^{_num(s['exponent'])} "
                f"[{_num(e_lo)}, {_num(e_hi)}], c = max n*/h = {_num(s['c_fit'], '.3g')}"
            )
    return lines


def summary_row(check: dict) -> tuple[str, ...]:
    """One check of :func:`results_to_dict` as the strings of :data:`SUMMARY_HEADERS`."""
    if check.get("kind") == "rate":
        return (*_rate_row(check), "-")
    if check.get("kind") == "exponent":
        return (*_exponent_row(check), "-")
    if check.get("kind") == "mean":
        return (*_mean_row(check), "-")
    if check.get("kind") == "tradeoff":
        return (*_tradeoff_row(check), "-")
    return (*_coverage_row(check), _detects(check))


def _detects(check: dict) -> str:
    k = [c["detectable_factor"] for c in check["cells"]]
    k = [x for x in k if isinstance(x, int | float)]
    return f"x{max(k):.2f}" if k else "-"


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
        f"{worst['coverage']:.4f} [{worst['ci_low']:.4f}, {worst['ci_high']:.4f}]",
        f"{worst['claimed']:.4f}",
        f"{worst['p_value']:.3g}",
        f"{min(tight):.2f}-{max(tight):.2f}" if tight else "-",
    )


def format_table(results: list[CheckResult], *, markdown: bool = False) -> str:
    """One row per check: its verdict and its worst cell (smallest p-value)."""
    rows = [summary_row(c) for c in results_to_dict(results, {})["checks"]]
    if markdown:
        lines = ["| " + " | ".join(SUMMARY_HEADERS) + " |", "|" + "---|" * len(SUMMARY_HEADERS)]
        lines += ["| " + " | ".join(row) + " |" for row in rows]
        return "\n".join(lines)
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(SUMMARY_HEADERS)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return "\n".join(
        [fmt.format(*SUMMARY_HEADERS), fmt.format(*("-" * w for w in widths))]
        + [fmt.format(*row) for row in rows]
    )


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


def write_report(results: list[CheckResult], out_dir, meta: dict) -> dict:
    """Write ``results.json`` and ``report.md`` into ``out_dir``; return the paths.

    An earlier report of a different selection is kept (:func:`keep_previous`); its folder
    is returned under ``"previous"``.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    data = results_to_dict(results, meta)
    kept = keep_previous(out, data)
    json_path = out / "results.json"
    atomic_write_text(json_path, json_text(data, indent=1))
    n_fail = sum(not r.passed for r in results)
    md = [
        "# calcheck run report",
        "",
        f"Root seed {meta.get('seed')}, {meta.get('reps')} replicates per cell, false-alarm rate "
        f"{meta.get('false_alarm')} per check (Bonferroni over its cells), calcheck "
        f"{meta.get('version')}.",
        "",
        f"**{len(results) - n_fail} of {len(results)} checks as expected**: {data['roles']}.",
        "",
        *(
            ["## Printed claims that fail", ""]
            + [
                f"- {line.strip()}" if not line.startswith("    ") else f"  - {line.strip()}"
                for line in printed_claim_lines(data["printed_claims"])
            ]
            + [""]
            if data["printed_claims"]
            else []
        ),
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
        format_table(results, markdown=True),
        "",
        *(
            [
                "Cells without power (a check none of whose cells has power is *vacuous*, "
                "never a pass):",
                "",
            ]
            + [f"- {line}" for line in vacuity_lines(data)]
            + [""]
            if vacuity_lines(data)
            else []
        ),
        *(
            [
                "Rate checks: the threshold n* (coverage 1 - delta) against the varied parameter "
                "(95% bootstrap intervals); the verdict is the slope of log n* on log h.",
                "",
            ]
            + [f"- {line}" for line in rate_lines(data)]
            + [""]
            if rate_lines(data)
            else []
        ),
        f"Regenerate: `{meta.get('command', 'calcheck run')}`",
        "",
    ]
    md_path = out / "report.md"
    atomic_write_text(md_path, "\n".join(md))
    return {
        "json": str(json_path),
        "markdown": str(md_path),
        "previous": None if kept is None else str(kept),
    }
