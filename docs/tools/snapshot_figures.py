"""Copy regenerated paper figures into the docs site, with the numbers they were found at.

Usage (from the repository root, after ``calcheck figures`` has written its folder)::

    calcheck figures --out /tmp/figures            # every figure (needs ../shared/data)
    python docs/tools/snapshot_figures.py /tmp/figures

For each figure of the run's ``index.json`` it copies the PNG to ``docs/_static/figures/`` and
records, in ``docs/_static/figures/index.json``, the caption, the repetitions, seed and code
stamp, the date and each stated finding with the value found and its status. Each paper's
page shows the picture and the table "stated finding | found | status" from that file
(``docs/_ext/calcheck_docs.py``), so the numbers on the site are the run's, not typed.
Only the figures of the given run are replaced; the others are kept.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEST = ROOT / "docs" / "_static" / "figures"


def _status(finding: dict) -> str:
    given = finding.get("status")
    if given is not None:
        return given
    holds = finding.get("holds")
    return "reported" if holds is None else "holds" if holds else "does not hold"


def snapshot(run_folder: Path) -> dict:
    """Copy the run's PNGs and merge its figures into the site's index; return the index."""
    run = json.loads((run_folder / "index.json").read_text())
    DEST.mkdir(parents=True, exist_ok=True)
    index_path = DEST / "index.json"
    index = json.loads(index_path.read_text()) if index_path.is_file() else {}
    stamp = datetime.now(UTC).strftime("%Y-%m-%d")
    for fig in run["figures"]:
        png = next((f for f in fig["files"] if f.endswith(".png")), None)
        if png is None:
            continue
        shutil.copyfile(run_folder / png, DEST / png)
        index[fig["id"]] = {
            "png": png,
            "caption": fig["caption"],
            "reps": fig.get("reps"),
            "seed": fig.get("seed"),
            "code": fig.get("code"),
            "date": stamp,
            "findings": [
                {
                    "claim": f["claim"],
                    "value": f.get("value"),
                    "status": _status(f),
                    "explanation": f.get("explanation", ""),
                }
                for f in fig.get("findings", [])
            ],
        }
    with tempfile.NamedTemporaryFile("w", dir=DEST, delete=False, suffix=".tmp") as f:
        json.dump(dict(sorted(index.items())), f, indent=1)
        f.write("\n")
    os.replace(f.name, index_path)
    return index


def main(argv=None) -> int:
    """Command line: ``snapshot_figures.py RUN_FOLDER``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_folder", type=Path, help="the --out folder of calcheck figures")
    args = parser.parse_args(argv)
    if not (args.run_folder / "index.json").is_file():
        parser.error(f"no index.json in {args.run_folder} (run calcheck figures --out there)")
    index = snapshot(args.run_folder)
    print(f"{len(index)} figures in {DEST}")  # noqa: T201 (a script: it says what it did)
    return 0


if __name__ == "__main__":
    sys.exit(main())
