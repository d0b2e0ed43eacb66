"""Status of the papers' stated findings, and the record that catches regressions.

Every finding a figure module returns (``findings(data)``: dicts with ``claim``, ``value``,
``holds`` and optionally ``explanation`` and ``status``) has one status:

``holds`` / ``does not hold``
    judged against the paper's statement (a finding that does not hold carries the
    explanation found);
``reported``
    a number printed beside the paper's, with no statement to judge it against;
``by construction``
    true because the figure is rebuilt from the paper's own numbers (nothing to verify);
``not judgeable``
    the paper's statement cannot be checked on the data we have (the explanation says why);
``unstable``
    the verdict rests on a number that rounding can move across the paper's threshold (a
    fit with no optimum whose cell lies within its measured optimiser noise of the
    threshold; the explanation gives the noise and how it was measured). Another machine
    may find ``holds`` or ``does not hold``: a change to or from ``unstable`` is not a
    regression, so it never fails ``calcheck figures``.

``findings_status.json`` next to this module records the status of each finding of each
figure, with the repetitions and seed it was found at and the explanation of every finding
that does not hold or cannot be judged; ``calcheck figures`` at those
settings compares the findings it regenerates with the record and fails only when a status
changes (a regression, or a fix to record with ``--record-findings``).
"""

from __future__ import annotations

import json
from pathlib import Path

from calcheck.simulations.files import atomic_write_text, json_text

__all__ = [
    "NEEDS_EXPLANATION",
    "RECORD",
    "STATUSES",
    "UNSTABLE",
    "changed_statuses",
    "record_statuses",
    "status",
]

STATUSES = ("holds", "does not hold", "reported", "by construction", "not judgeable", "unstable")
#: Statuses that must say why (the explanation found, why it cannot be judged, the noise).
NEEDS_EXPLANATION = ("does not hold", "not judgeable", "unstable")
#: A change from or to this status is not a regression (see the module docstring).
UNSTABLE = "unstable"
#: The recorded statuses: figure id -> claim -> status.
RECORD = Path(__file__).with_name("findings_status.json")


def status(finding: dict) -> str:
    """The status of one finding (its ``status`` if given, else from ``holds``)."""
    given = finding.get("status")
    if given is not None:
        if given not in STATUSES:
            raise ValueError(f"finding status must be one of {STATUSES}, got {given!r}")
        return given
    holds = finding.get("holds")
    return "reported" if holds is None else "holds" if holds else "does not hold"


def _load(path) -> dict:
    path = Path(path)
    return json.loads(path.read_text()) if path.is_file() else {}


def changed_statuses(entries, record=None) -> list[tuple[str, str, str, str]]:
    """``(figure, claim, recorded, now)`` for every finding whose status changed.

    Only figures regenerated with the recorded repetitions and seed are compared (other
    settings answer another question: a change there is not a regression). Findings not in
    the record are new, not changes; figures not regenerated are not looked at; a change
    from or to ``unstable`` is not a change (rounding decides it, see the module docstring).
    """
    recorded = _load(RECORD if record is None else record)
    changes = []
    for e in entries:
        entry = recorded.get(e["id"], {})
        if (entry.get("reps"), entry.get("seed")) != (e.get("reps"), e.get("seed")):
            continue
        before = entry.get("statuses", {})
        for f in e["findings"]:
            now = status(f)
            was = before.get(f["claim"])
            if was is not None and was != now and UNSTABLE not in (was, now):
                changes.append((e["id"], f["claim"], before[f["claim"]], now))
    return changes


def record_statuses(entries, record=None) -> Path:
    """Write the statuses of these figures' findings into the record (others are kept)."""
    record = RECORD if record is None else record
    recorded = _load(record)
    for e in entries:
        recorded[e["id"]] = {
            "reps": e.get("reps"),
            "seed": e.get("seed"),
            "statuses": {f["claim"]: status(f) for f in e["findings"]},
            "explanations": {
                f["claim"]: f.get("explanation") or ""
                for f in e["findings"]
                if status(f) in NEEDS_EXPLANATION
            },
        }
    return atomic_write_text(record, json_text(recorded, indent=1, sort_keys=True) + "\n")
