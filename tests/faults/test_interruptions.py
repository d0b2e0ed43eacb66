"""Ctrl-C (SIGINT to the process group) at 1, 5 and 10 s into run, search, figures and a resume.

Each case starts the three interruptions at once (three processes, the signals 1, 5 and 10 s
after their starts) so that the module costs about as long as its slowest command. What
must hold for every one: exit status 130, exactly one ``interrupted (SIGINT)`` line that
says how to go on, no traceback or warning, no process left behind, and every block in the
store still sound (an interruption is never taken for a damaged block: issue 38, S1.3).
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from process_tree import alive as _alive
from process_tree import children as _children

from calcheck.simulations import store as store_module

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc"),
]

AT = (1.0, 5.0, 10.0)

RUN = ["run", "--checks", "gr21", "--reps", "400000", "--jobs", "2", "--progress"]
SEARCH = [
    "search",
    "gr21.thm3",
    "--family",
    "atoms",
    "--n",
    "20000",
    "--n-bins",
    "10",
    "--budget",
    "full",
]
SEARCH += ["--jobs", "2"]
FIGURES = ["figures", "gpr20.cor1_frontier", "--reps", "1000000"]  # no data needed


def _start(args, out: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "calcheck", *args, "--out", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, as a command typed in a terminal
    )


def _holds_a_block(path: Path) -> bool:
    """Whether the store at ``path`` holds a block (read-only: never creates the database)."""
    if not path.is_file():
        return False
    try:
        con = sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True, timeout=1.0)
        try:
            return con.execute("SELECT 1 FROM blocks LIMIT 1").fetchone() is not None
        finally:
            con.close()
    except sqlite3.DatabaseError:  # the table not made yet, or the writer holds a lock
        return False


def _interrupt_each(runs, *, once_stored=False) -> list[tuple[int, str, set[int]]]:
    """Start every ``(args, out, at)`` at once; SIGINT each group ``at`` s after the start.

    With ``once_stored``, not before its store holds a block either (at most 120 s: on a
    loaded machine the first block of three runs at once may take longer than any fixed time).
    """
    procs = [_start(args, out) for args, out, _ in runs]
    try:
        started = time.monotonic()
        kids = [set() for _ in procs]
        for i in sorted(range(len(runs)), key=lambda i: runs[i][2]):
            args, out, at = runs[i]
            while time.monotonic() - started < at or (
                once_stored and not _holds_a_block(out / "store.sqlite")
            ):
                if time.monotonic() - started > 120:
                    pytest.fail(f"{args[0]} stored no block in 120 s")
                if procs[i].poll() is not None:
                    break  # reported below
                for j, p in enumerate(procs):
                    kids[j] |= _children(p.pid)
                time.sleep(0.1)
            if procs[i].poll() is not None:
                err = procs[i].communicate()[1]
                pytest.fail(f"{args[0]} ended before {at} s (exit {procs[i].returncode}):\n{err}")
            kids[i] |= _children(procs[i].pid)
            os.killpg(procs[i].pid, signal.SIGINT)
        results = []
        for p, k in zip(procs, kids, strict=True):
            _, err = p.communicate(timeout=120)
            deadline = time.monotonic() + 10
            while any(_alive(c) for c in k) and time.monotonic() < deadline:
                time.sleep(0.2)
            results.append((p.returncode, err, {c for c in k if _alive(c)}))
        return results
    finally:  # a failed start: stop the others and close their pipes
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
            p.communicate()


def _assert_one_clean_line(code, err, left, when):
    when = when if isinstance(when, str) else f"{when:g} s"  # seconds, or a moment in words
    lines = [line for line in err.splitlines() if "interrupted" in line]
    assert code == 128 + signal.SIGINT, f"at {when}: exit {code}\n{err}"
    assert len(lines) == 1, f"at {when}:\n{err}"
    assert lines[0].startswith("calcheck: interrupted (SIGINT); "), err
    assert "rerun the same command" in lines[0], err
    assert err.rstrip().endswith(lines[0]), f"the line is the last one at {when}:\n{err}"
    for bad in ("Traceback", "KeyboardInterrupt", "Warning", "cancelled", "damaged"):
        assert bad not in err, f"at {when}:\n{err}"
    assert not left, f"processes outlived the command by 10 s at {when}: {left}"


def _blocks(path: Path) -> list[tuple]:
    if not path.is_file():
        return []
    con = sqlite3.connect(path)
    try:
        return con.execute(
            "SELECT root_seed, cell_key, code, block, reps, digest, payload FROM blocks"
        ).fetchall()
    finally:
        con.close()


def _assert_sound(path: Path):
    for root_seed, cell_key, code, block, reps, digest, payload in _blocks(path):
        assert store_module.ResultStore._sound(
            root_seed, cell_key, code, block, reps, digest, payload
        ), f"block {block} of {cell_key} is not sound"


def test_ctrl_c_at_1_5_and_10_s_in_run_search_and_figures(tmp_path):
    # ten commands at once (three of each interrupted at 1, 5 and 10 s): about 10 s
    commands = {"run": RUN, "search": SEARCH, "figures": FIGURES}
    runs = [(args, tmp_path / f"{name}{t:g}", t) for name, args in commands.items() for t in AT]
    runs.append((SEARCH[:-2], tmp_path / "search-one-job", 5.0))  # without --jobs too
    for (args, out, at), (code, err, left) in zip(runs, _interrupt_each(runs), strict=True):
        _assert_one_clean_line(code, err, left, f"{args[0]} {at:g} s")
        if args[0] in ("run", "figures"):
            assert "to resume" in err or "nothing was written" in err  # (still starting)
        _assert_sound(out / "store.sqlite")


def test_ctrl_c_while_a_resumed_run_checks_and_extends_its_store(tmp_path):
    outs = [tmp_path / f"at{t:g}" for t in AT]
    # a store with blocks in it (each run interrupted once it stored one), then resumed and
    # interrupted
    first = _interrupt_each([(RUN, out, 1.0) for out in outs], once_stored=True)
    for code, err, left in first:
        _assert_one_clean_line(code, err, left, "its first block")
    before = [len(_blocks(out / "store.sqlite")) for out in outs]
    assert min(before) > 0, "no block was stored before the resume"
    resumed = _interrupt_each([(RUN, out, t) for out, t in zip(outs, AT, strict=True)])
    for when, out, n, (code, err, left) in zip(AT, outs, before, resumed, strict=True):
        _assert_one_clean_line(code, err, left, when)
        _assert_sound(out / "store.sqlite")
        assert len(_blocks(out / "store.sqlite")) >= n, "a stored block was deleted"


def test_sigterm_to_a_parallel_search_is_one_line(tmp_path):
    proc = _start(SEARCH, tmp_path / "out")
    time.sleep(6)
    kids = _children(proc.pid)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=90)
    deadline = time.monotonic() + 10
    while any(_alive(k) for k in kids) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert err.strip().splitlines()[-1].startswith("calcheck: interrupted (SIGTERM); "), err
    for bad in ("Traceback", "Warning", "joblib"):
        assert bad not in err, err
    assert not [k for k in kids if _alive(k)]
