"""The report's pictures drawn beside the run: in a process of their own, or in a thread.

A process draws them where the run has more than one worker and enough pictures (the main
process's interpreter lock stays free for the run); the files must be the thread's, byte for
byte, and an interrupted run must leave neither a process nor a half-written file behind.
"""

import json
import os
import time
from types import SimpleNamespace

import pytest
from process_tree import alive

from calcheck.simulations.parallel import SidePool
from calcheck.theory_checks.cli.main import main
from calcheck.theory_checks.report import picture_drawer
from calcheck.theory_checks.report.picture_drawer import PictureDrawer, picture_processes


@pytest.fixture(scope="module")
def run_entries(tmp_path_factory):
    """A small run's check entries (as results.json has them) and its folder."""
    out = tmp_path_factory.mktemp("run")
    checks = ["nch14.thm34", "klm19.lem43", "gr21.thm3"]
    assert (
        main(["run", "--checks", *checks, "--reps", "200", "--jobs", "2", "--out", str(out)]) == 0
    )
    data = json.loads((out / "results.json").read_text())
    return data["checks"], data["meta"]["reps"], out


def _draw(entries, reps, folder, processes, monkeypatch):
    monkeypatch.setattr(picture_drawer, "check_entry", lambda entry: entry)
    checks = [SimpleNamespace(guarantee=e["guarantee"]) for e in entries]
    drawer = PictureDrawer(checks, folder, reps, processes=processes)
    for i, entry in enumerate(entries):
        drawer.result(i, entry)
    return drawer


def _gone(pid: int, seconds: float = 10.0) -> bool:
    end = time.monotonic() + seconds
    while alive(pid):
        if time.monotonic() > end:
            return False
        time.sleep(0.05)
    return True


def test_a_process_draws_the_threads_pictures_byte_for_byte(run_entries, tmp_path, monkeypatch):
    entries, reps, out = run_entries
    drawn = {}
    for processes in (0, 1):
        folder = tmp_path / f"p{processes}"
        drawn[processes] = _draw(entries, reps, folder, processes, monkeypatch).finish()
    assert drawn[0] == drawn[1]
    assert len(drawn[0]) == 5  # gr21.thm3, klm19.lem43 (+ _vc), nch14.thm34 (+ _unequal)
    for name in drawn[0].values():
        thread_png = (tmp_path / "p0" / name).read_bytes()
        assert (tmp_path / "p1" / name).read_bytes() == thread_png
        assert (out / "plots" / name).read_bytes() == thread_png  # the CLI's
    assert not list(tmp_path.rglob("*.tmp"))


def test_an_interrupted_drawer_stops_its_process_and_leaves_whole_pictures(
    run_entries, tmp_path, monkeypatch
):
    entries, reps, _ = run_entries
    monkeypatch.setattr(picture_drawer, "check_entry", lambda entry: entry)
    checks = [SimpleNamespace(guarantee=e["guarantee"]) for e in entries]
    drawer = PictureDrawer(checks, tmp_path, reps, processes=1)
    pid = drawer._pool.submit(os.getpid).result()
    for i, entry in enumerate(entries):
        drawer.result(i, entry)
    drawer.close()  # at once
    assert _gone(pid)
    assert not list(tmp_path.rglob("*.tmp"))  # a picture is whole or absent
    for png in tmp_path.rglob("*.png"):
        data = png.read_bytes()
        assert data.startswith(b"\x89PNG")
        assert data.endswith(b"IEND\xaeB`\x82")


def test_work_not_taken_by_a_process_is_dropped():
    # loky queues at most one item per process ahead of the one running: of 12, at least 9
    # are still pending and cancelled
    pool = SidePool(1)
    futures = [pool.submit(time.sleep, 0.3) for _ in range(12)]
    assert sum(f.cancel() for f in futures) >= 9
    pool.shutdown()
    assert all(f.done() for f in futures)


_HELD_POOL = """
import os, signal, sys, time
from calcheck.simulations.parallel import SidePool
signal.signal(signal.SIGINT, lambda *_: None)  # this process survives the group's Ctrl-C
pool = SidePool(1)
print(pool.submit(os.getpid).result(), flush=True)
time.sleep(120)
"""


def test_the_side_process_ignores_ctrl_c_and_dies_with_the_run(tmp_path):
    import signal
    import subprocess
    import sys

    proc = subprocess.Popen(
        [sys.executable, "-c", _HELD_POOL],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        child = int(proc.stdout.readline())
        os.killpg(proc.pid, signal.SIGINT)  # a terminal's Ctrl-C reaches the whole group
        time.sleep(1.0)
        assert alive(child), "the side process died of the Ctrl-C"  # it ignores SIGINT
        proc.kill()  # the run dies without a word
        assert _gone(child), "the side process outlived the run"
        err = proc.communicate(timeout=10)[1]
        # (loky's resource tracker may say it cleans up after a run killed with -9)
        assert "KeyboardInterrupt" not in err, err
        assert "Traceback" not in err, err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def test_side_pool_runs_in_another_process_that_stops_with_it():
    pool = SidePool(1)
    pid = pool.submit(os.getpid).result()
    assert pid != os.getpid()
    assert pool.submit(pow, 2, 10).result() == 1024
    pool.shutdown()
    assert _gone(pid)
    pool.shutdown()  # a second time: nothing to do


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_side_pool_refuses_a_bad_number_of_processes(bad):
    with pytest.raises(ValueError, match=f"processes must be a positive integer, got {bad!r}"):
        SidePool(bad)


@pytest.mark.parametrize(
    ("jobs", "pictures", "processes"),
    [(1, 60, 0), (2, 60, 1), (8, 60, 1), (16, 60, 2), (64, 60, 4), (16, 7, 0), (2, 8, 1)],
)
def test_picture_processes_by_workers_and_pictures(jobs, pictures, processes):
    # a few pictures are drawn in a thread: starting a process costs about 1 CPU-s
    assert picture_processes(jobs, pictures) == processes


def test_a_picture_drawn_from_the_same_entries_is_kept_not_drawn_again(tmp_path, monkeypatch):
    # a rerun reads most results from records: their pictures are not drawn a second time
    from calcheck.theory_checks.report import pictures

    entry = {
        "id": "gr21.thm3",
        "guarantee": "gr21.thm3",
        "expect": "consistent",
        "kind": "coverage",
        "cells": [],
    }
    drawn = []

    def draw(gid, own, controls, reps):
        drawn.append(gid)
        import matplotlib.pyplot as plt

        return plt.figure(figsize=(1, 1))

    monkeypatch.setattr(pictures, "_draw", draw)
    task = ("gr21.thm3", [entry], [], [], 1000, tmp_path)
    assert pictures._draw_one(*task) == ("gr21.thm3", "gr21_thm3.png")
    assert pictures._draw_one(*task) == ("gr21.thm3", "gr21_thm3.png")
    assert drawn == ["gr21.thm3"]  # kept: same entries, same code
    changed = ("gr21.thm3", [{**entry, "expect": "violated"}], [], [], 1000, tmp_path)
    pictures._draw_one(*changed)
    assert drawn == ["gr21.thm3", "gr21.thm3"]  # other entries: drawn again
    (tmp_path / "gr21_thm3.png").unlink()
    pictures._draw_one(*changed)
    assert len(drawn) == 3  # the picture gone: drawn again, whatever its key says


def test_a_killed_side_pool_does_not_wait_for_its_work():
    import time

    pool = SidePool(1)
    pool.submit(time.sleep, 60)
    time.sleep(1.0)  # the worker has taken it
    started = time.monotonic()
    pool.shutdown(kill=True)
    assert time.monotonic() - started < 20


def test_a_picture_whose_saving_failed_has_no_key_left(tmp_path, monkeypatch):
    # the old key goes before the new picture: a drawing cut short is drawn again
    from calcheck.theory_checks.report import pictures

    entry = {"id": "g.x", "guarantee": "g.x", "expect": "consistent", "kind": "coverage"}
    entry["cells"] = []

    def draw(gid, own, controls, reps):
        import matplotlib.pyplot as plt

        return plt.figure(figsize=(1, 1))

    monkeypatch.setattr(pictures, "_draw", draw)
    pictures._draw_one("g.x", [entry], [], [], 1000, tmp_path)
    assert (tmp_path / ".g_x.png.key").is_file()

    def killed(fig, folder, gid):
        raise KeyboardInterrupt

    monkeypatch.setattr(pictures, "_save", killed)
    other = {**entry, "expect": "violated"}
    with pytest.raises(KeyboardInterrupt):
        pictures._draw_one("g.x", [other], [], [], 1000, tmp_path)
    assert not (tmp_path / ".g_x.png.key").exists()
