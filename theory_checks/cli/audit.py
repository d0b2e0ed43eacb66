"""``calcheck audit``: the audit of a run's ``results.json`` on the terminal (or as JSON)."""

from __future__ import annotations

import json
from pathlib import Path

from calcheck.simulations.files import json_text

from ..report.audit import audit_problems, audit_rows, audit_table, cell_rows, check_results
from .arguments import DEFAULT_OUT, add_json_argument

__all__ = ["add_audit_arguments", "cmd_audit"]


def add_audit_arguments(s) -> None:
    """The options of ``calcheck audit``."""
    s.add_argument(
        "--results",
        default=DEFAULT_OUT,
        help="a run's output folder or its results.json",
    )
    add_json_argument(s, "print the rows as JSON")


def cmd_audit(args) -> int:
    """``calcheck audit``: print the audit of a run's results (exit 1 on a problem)."""
    path = Path(args.results)
    if path.is_dir():
        path = path / "results.json"
    if not path.is_file():
        raise FileNotFoundError(
            f"no results at {str(path)!r}: run `calcheck run --out {path.parent}` first, "
            "or name a run's results.json with --results"
        )
    try:
        data = json.loads(path.read_text())
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror or exc}") from None
    except (ValueError, RecursionError) as exc:  # not JSON (or nested beyond reading)
        raise ValueError(f"{path} is not a calcheck run's results.json ({exc})") from None
    try:
        check_results(data)  # what the audit reads, named where it is wrong
    except ValueError as exc:
        raise ValueError(f"{path} is not a calcheck run's results.json: {exc}") from None
    rows = audit_rows(data)
    problems = audit_problems(data)
    if args.json:
        out = {"results": str(path), "rows": rows, "cells": cell_rows(data), "problems": problems}
        print(json_text(out, indent=1))
    else:
        print(audit_table(data))
        headline = data.get("headline")  # an object where present (check_results)
        head = None if headline is None else headline.get("text")
        if head:
            print(f"\n{head}.")
        if problems:
            print("\nGuarantees that cannot fail on this design (reclassify or redesign them):")
            print("\n".join(f"  {line}" for line in problems))
    return 1 if problems else 0
