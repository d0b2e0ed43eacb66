"""Processes below a pid, read from /proc (the run-safety and interruption tests share it)."""

from __future__ import annotations

from pathlib import Path


def children(pid: int) -> set[int]:
    """Every live process below ``pid``."""
    found, frontier = set(), {pid}
    while frontier:
        nxt = set()
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            if ppid in frontier and int(entry.name) not in found:
                nxt.add(int(entry.name))
        found |= nxt
        frontier = nxt
    return found


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie does not)."""
    try:
        state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"
