"""Copy a ``calcheck search --power`` run into the docs: ``docs/measurements/search/``.

Usage: ``python docs/tools/record_power.py OUT_FOLDER [OUT_FOLDER ...] --command "..."
--wall-seconds S --commit SHA``. Each folder's ``search/power.json`` rows are concatenated;
rows whose reference is the exact worst case of a binary guarantee get it recomputed by the
current :func:`calcheck.theory_checks.search.driver.analytic_reference` (the searches themselves do
not depend on it), rows of :data:`~calcheck.theory_checks.catalog.search_sweep.POWER_ROWS` whose
reference depends on the law found (top-label) get each seed's recomputed at its law
(:func:`calcheck.theory_checks.search.power.top_label_reference`), and every table row is
re-rendered.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
from pathlib import Path

from calcheck.simulations.laws.families import get_family
from calcheck.theory_checks.search.driver import analytic_reference, resolve_target
from calcheck.theory_checks.search.power import POWER_ROWS, SearchPower, top_label_reference

HERE = Path(__file__).resolve().parent.parent
_ROWS = {row[0]: row for row in POWER_ROWS}


def main() -> None:
    """Read the runs, recompute the references, write the measurement files."""
    parser = argparse.ArgumentParser()
    parser.add_argument("folders", nargs="+")
    parser.add_argument("--command", required=True)
    parser.add_argument("--wall-seconds", type=float, required=True)
    parser.add_argument("--commit", required=True)
    args = parser.parse_args()
    rows = []
    for folder in args.folders:
        for d in json.loads((Path(folder) / "search" / "power.json").read_text()):
            guarantee, bound = resolve_target(d["target"])
            ref = analytic_reference(guarantee, bound, d["grid"], d["alpha"])
            records = tuple(d["records"])
            if ref is not None:
                records = tuple({**r, "reference": ref["failure"]} for r in records)
            elif d["target"] in _ROWS:  # per seed, at the class weights found
                _, family, opts, grid, alpha, _ = _ROWS[d["target"]]
                fam = get_family(family, **opts)
                records = tuple(
                    {
                        **r,
                        "reference": top_label_reference(d["target"], fam, grid, alpha, r["theta"]),
                    }
                    for r in records
                )
            p = SearchPower(
                d["target"],
                d["guarantee"],
                d["family"],
                d["grid"],
                d["alpha"],
                d["criterion"],
                d["budget"],
                None if ref is None else ref["failure"],
                records,
                d["seconds"],
            )
            rows.append(p.to_dict())
    out = HERE / "measurements" / "search"
    out.mkdir(parents=True, exist_ok=True)
    (out / "power.json").write_text(json.dumps(rows, indent=1) + "\n")
    meta = {
        "command": args.command,
        "commit": args.commit,
        "wall_seconds": args.wall_seconds,
        "cpus": os.cpu_count(),
        "date_utc": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M"),
    }
    (out / "power_run.json").write_text(json.dumps(meta, indent=1) + "\n")
    for r in rows:
        print(r["row"])  # noqa: T201 (a script: it reports what it recorded)


if __name__ == "__main__":
    main()
