"""docs/coverage.md: every catalog item has a status, and the summary counts are the rows'."""

import re
from pathlib import Path

COVERAGE = Path(__file__).resolve().parents[1] / "docs" / "coverage.md"
STATUSES = ("checked", "reproduced", "not covered")


def _cells(line: str) -> list[str]:
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]


def _rows_by_paper() -> dict:
    rows: dict = {}
    paper = None
    for line in COVERAGE.read_text().splitlines():
        head = re.match(r"^## (\w+) — ", line)
        if head:
            paper = head.group(1)
            rows[paper] = []
        elif paper and re.match(r"^\| \d+ \|", line):
            rows[paper].append(_cells(line))
    return rows


def _summary() -> dict:
    text = COVERAGE.read_text().split("## Summary", 1)[1].split("\n## ", 1)[0]
    out = {}
    for line in text.splitlines():
        cells = _cells(line) if line.startswith("|") else []
        if cells and cells[0].strip("*") not in ("paper", "---", ""):
            out[cells[0].strip("*")] = [int(c.strip("*")) for c in cells[1:]]
    return out


def test_every_row_has_a_status_and_the_summary_counts_are_the_rows():
    rows = _rows_by_paper()
    summary = _summary()
    assert set(rows) == set(summary) - {"total"}
    totals = [0] * 6
    for paper, items in rows.items():
        statuses = [r[2] for r in items]
        assert all(s in STATUSES for s in statuses), (paper, set(statuses) - set(STATUSES))
        numbers = [int(r[0]) for r in items]
        assert numbers == list(range(1, len(items) + 1)), f"{paper}: rows not numbered 1..N"
        not_built = sum("not built yet" in r[3].lower() for r in items if r[2] == "not covered")
        counts = [
            len(items),
            statuses.count("checked"),
            statuses.count("reproduced"),
            statuses.count("not covered"),
            not_built,
            0,  # absent: every item has one of the three statuses
        ]
        assert summary[paper] == counts, (paper, summary[paper], counts)
        totals = [a + b for a, b in zip(totals, counts, strict=True)]
    assert summary["total"] == totals


def test_not_covered_rows_give_a_reason():
    for paper, items in _rows_by_paper().items():
        for r in items:
            if r[2] == "not covered":
                assert len(r[3]) > 10, (paper, r[0], r[1])
