"""Run reports: a machine-readable results file and a human-readable table."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

from .checks import CheckResult

__all__ = ["format_table", "results_to_dict", "write_report"]


def _clean(x):
    if isinstance(x, float) and not math.isfinite(x):
        return None if math.isnan(x) else ("inf" if x > 0 else "-inf")
    return x


def _cell_dict(c) -> dict:
    v = dataclasses.asdict(c.verdict)
    return {
        "law": c.law, "n": c.n, "n_bins": c.n_bins, "alpha": c.alpha, "bound": c.bound,
        "verdict": "violated" if c.verdict.violated else "consistent",
        **{k: _clean(val) for k, val in v.items()},
        "estimate": c.estimate, "empirical_quantile": _clean(c.empirical_quantile),
        "tightness": _clean(c.tightness), "empty_bins": c.empty_bins,
    }


def results_to_dict(results: list[CheckResult], meta: dict) -> dict:
    """Every verdict of a run, JSON-able."""
    checks = []
    for r in results:
        ch = r.check
        checks.append({
            "id": ch.id, "guarantee": ch.guarantee, "description": ch.description,
            "calibrator": ch.calibrator, "metric": ch.metric, "bound_mode": ch.bound_mode,
            "expect": ch.expect, "verdict": r.verdict, "passed": r.passed,
            "reps": r.reps, "false_alarm": r.false_alarm,
            "per_cell_level": r.cells[0].verdict.level if r.cells else None,
            "laws": ch.law_specs(),
            "cells": [_cell_dict(c) for c in r.cells],
        })
    return {"meta": meta, "all_passed": all(r.passed for r in results), "checks": checks}


def _summary_row(r: CheckResult) -> tuple:
    worst = min(r.cells, key=lambda c: (c.verdict.p_value, c.verdict.coverage - c.verdict.claimed))
    v = worst.verdict
    tight = [c.tightness for c in r.cells if math.isfinite(c.tightness)]
    tight_txt = f"{min(tight):.2f}-{max(tight):.2f}" if tight else "-"
    status = "ok" if r.passed else "FAIL"
    kind = "control" if r.check.is_control else "check"
    alpha = "-" if worst.alpha is None else f"{worst.alpha:g}"
    return (r.check.id, kind, f"{r.verdict} ({status})", str(len(r.cells)),
            f"{worst.law} n={worst.n} B={worst.n_bins} a={alpha}",
            f"{v.coverage:.4f} [{v.ci_low:.4f}, {v.ci_high:.4f}]",
            f"{worst.verdict.claimed:.4f}", tight_txt)


_HEADERS = ("check", "kind", "verdict", "cells", "worst cell", "coverage [95% CP]", "claimed",
            "tightness")


def format_table(results: list[CheckResult], *, markdown: bool = False) -> str:
    """One row per check: its verdict and its worst cell (smallest p-value)."""
    rows = [_summary_row(r) for r in results]
    if markdown:
        lines = ["| " + " | ".join(_HEADERS) + " |", "|" + "---|" * len(_HEADERS)]
        lines += ["| " + " | ".join(row) + " |" for row in rows]
        return "\n".join(lines)
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(_HEADERS)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return "\n".join([fmt.format(*_HEADERS), fmt.format(*("-" * w for w in widths))]
                     + [fmt.format(*row) for row in rows])


def write_report(results: list[CheckResult], out_dir, meta: dict) -> dict:
    """Write ``results.json`` and ``report.md`` into ``out_dir``; return the paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    data = results_to_dict(results, meta)
    json_path = out / "results.json"
    json_path.write_text(json.dumps(data, indent=1, sort_keys=False, default=_clean))
    n_fail = sum(not r.passed for r in results)
    md = [
        "# calcheck run report", "",
        f"Root seed {meta.get('seed')}, {meta.get('reps')} replicates per cell, false-alarm rate "
        f"{meta.get('false_alarm')} per check (Bonferroni over its cells), calcheck "
        f"{meta.get('version')}.", "",
        f"**{len(results) - n_fail} of {len(results)} checks as expected** "
        "(guarantees consistent, negative controls violated).", "",
        "Coverage is the fraction of replicates in which the guaranteed event held; *claimed* is "
        "1 - alpha (1 - bound for expectation guarantees); tightness is the bound divided by the "
        "empirical (1 - alpha)-quantile of the error (by the mean l2-ECE for expectations).", "",
        format_table(results, markdown=True), "",
        f"Regenerate: `{meta.get('command', 'calcheck run')}`", "",
    ]
    md_path = out / "report.md"
    md_path.write_text("\n".join(md))
    return {"json": str(json_path), "markdown": str(md_path)}
