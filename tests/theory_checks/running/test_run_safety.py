"""Interrupted, concurrent, huge and damaged runs end with a clear line, never a traceback
or a leftover process (issue: nothing lost, nothing silently wrong)."""

import fcntl
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

import calcheck.simulations.store as store_module
from calcheck.theory_checks.cli.main import main

RUN = ["run", "--checks", "gr21.thm3", "--reps", "100"]


def _start_parallel_run(out: Path, settle: float = 1.0):
    cmd = [sys.executable, "-m", "calcheck", "run", "--checks", "gr21", "--reps", "20000"]
    proc = subprocess.Popen(
        [*cmd, "--jobs", "2", "--out", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, as a command typed in a terminal
    )
    deadline = time.monotonic() + 120
    while len(_children(proc.pid)) < 3:  # two workers and a resource tracker
        assert proc.poll() is None, proc.stderr.read()
        assert time.monotonic() < deadline, "the parallel run never started its workers"
        time.sleep(0.05)
    time.sleep(settle)
    return proc


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc")
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_a_killed_parallel_run_leaves_no_process_behind(tmp_path, sig):
    proc = _start_parallel_run(tmp_path / "out")
    kids = _children(proc.pid)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=30)  # reads and closes the pipe
    deadline = time.monotonic() + 10
    while any(_alive(k) for k in kids) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not [k for k in kids if _alive(k)], "calcheck processes outlived the run by 10 s"
    if sig == signal.SIGTERM:
        assert proc.returncode == 128 + signal.SIGTERM
        assert "interrupted (SIGTERM)" in err
        assert "rerun the same command to resume" in err
        assert "Traceback" not in err
        assert "cancelled" not in err


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc")
@pytest.mark.parametrize("settle", [0.0, 1.0], ids=["workers_starting", "running"])
def test_ctrl_c_is_one_clean_line_like_sigterm_and_leaves_no_process_behind(tmp_path, settle):
    # a terminal's Ctrl-C sends SIGINT to the whole foreground process group: the run and
    # its workers, even workers still importing (issue: exit 130 with joblib's "tasks ...
    # cancelled" warning and without the line that says how to resume)
    proc = _start_parallel_run(tmp_path / "out", settle)
    kids = _children(proc.pid)
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    deadline = time.monotonic() + 10
    while any(_alive(k) for k in kids) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = [k for k in kids if _alive(k)]
    assert not left, f"calcheck processes {left} outlived the run by 10 s; stderr:\n{err}"
    # each message carries the run's stderr: a failure under load says what happened
    assert proc.returncode == 128 + signal.SIGINT, f"exit {proc.returncode}; stderr:\n{err}"
    assert "interrupted (SIGINT)" in err, err
    assert "rerun the same command to resume" in err, err
    for bad in ("Traceback", "KeyboardInterrupt", "cancelled", "UserWarning"):
        assert bad not in err, err


def test_a_second_run_into_the_same_out_refuses(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    with open(out / ".calcheck.lock", "a+") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        held.write("4242")
        held.flush()
        assert main([*RUN, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "another calcheck run (pid 4242)" in err
    assert main([*RUN, "--out", str(out)]) == 0  # released: the next run goes ahead


def test_huge_reps_are_refused_before_simulating(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["run", "--checks", "gr21.thm3", "--reps", "1000000000000", "--out", str(out)])
    assert "reps must be at most 1e+08" in capsys.readouterr().err
    # one worker: one cell's outcome (16 GB) held at once, where two evaluating processes
    # would hold two and be refused for memory before the estimate
    huge = ["--reps", "50000000", "--jobs", "1", "--out", str(out)]
    assert main(["run", "--checks", "gr21.thm3", *huge]) == 2
    err = capsys.readouterr().err
    assert "more blocks to simulate (" in err  # the estimate is printed
    assert "rerun with --yes" in err
    assert "Traceback" not in err
    with sqlite3.connect(out / "store.sqlite") as con:  # only the calibration blocks ran
        assert 0 < con.execute("SELECT COUNT(*) FROM blocks").fetchone()[0] < 10


def test_a_read_only_store_re_renders_and_refuses_new_work(tmp_path, capsys, monkeypatch):
    out = tmp_path / "out"
    assert main([*RUN, "--out", str(out)]) == 0
    first = (out / "report.md").read_text()
    real_access = os.access
    monkeypatch.setattr(
        store_module.os,
        "access",
        lambda p, mode: False if str(p).endswith("store.sqlite") else real_access(p, mode),
    )
    (out / "report.md").unlink()
    assert main([*RUN, "--out", str(out)]) == 0
    assert (out / "report.md").read_text() == first
    capsys.readouterr()
    assert main(["run", "--checks", "gr21.thm3", "--reps", "200", "--out", str(out)]) == 2
    assert "is read-only and lacks" in capsys.readouterr().err


@pytest.mark.parametrize("damage", ["truncated", "garbage_header", "malformed_pages"])
def test_a_damaged_store_is_a_clear_error_and_can_be_moved_aside(tmp_path, capsys, damage):
    out = tmp_path / "out"
    assert main(["run", "--checks", "gr21.thm3", "--reps", "300", "--out", str(out)]) == 0
    db = out / "store.sqlite"
    with sqlite3.connect(db) as con:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = bytearray(db.read_bytes())
    if damage == "truncated":
        data = data[: len(data) // 3]
    elif damage == "garbage_header":
        data[:100] = os.urandom(100)
    else:
        for page in range(2, len(data) // 4096):
            data[page * 4096 : page * 4096 + 64] = b"\xff" * 64
    db.write_bytes(bytes(data))
    capsys.readouterr()
    assert main(["run", "--checks", "gr21.thm3", "--reps", "300", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "damaged" in err
    assert "--move-damaged-store" in err
    assert "Traceback" not in err
    argv = ["run", "--checks", "gr21.thm3", "--reps", "300", "--out", str(out)]
    assert main([*argv, "--move-damaged-store"]) == 0
    assert list(out.glob("store.damaged-*.sqlite"))
    assert "was moved to" in capsys.readouterr().err


def test_a_full_disk_while_storing_is_a_clear_error(tmp_path, capsys, monkeypatch):
    class FullDisk:
        def __init__(self, con):
            self.con = con

        def execute(self, sql, *args):
            if sql.startswith("INSERT OR REPLACE INTO blocks"):
                raise sqlite3.OperationalError("database or disk is full")
            return self.con.execute(sql, *args)

        def executemany(self, sql, *args):  # a batch of blocks
            if sql.startswith("INSERT OR REPLACE INTO blocks"):
                raise sqlite3.OperationalError("database or disk is full")
            return self.con.executemany(sql, *args)

        def __getattr__(self, name):
            return getattr(self.con, name)

        def __enter__(self):
            return self.con.__enter__()

        def __exit__(self, *exc):
            return self.con.__exit__(*exc)

    real_open = store_module.ResultStore._open

    def open_on_a_full_disk(self):
        real_open(self)
        self._con = FullDisk(self._con)

    monkeypatch.setattr(store_module.ResultStore, "_open", open_on_a_full_disk)
    assert main([*RUN, "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "disk is full while writing the store" in err
    assert "rerun the same command" in err
