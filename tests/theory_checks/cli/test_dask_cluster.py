"""`calcheck run --scheduler ADDRESS` on a real dask cluster (a scheduler and two workers
started as separate processes on localhost) gives results bit-identical to --jobs 1."""

import json
import shutil
import subprocess
import time

import pytest

from calcheck.theory_checks.cli import run as cli_run
from calcheck.theory_checks.cli.main import main

pytest.importorskip("distributed")

SELECTION = ["run", "--checks", "gr21.thm3", "gpr20.thm4", "--reps", "300", "--seed", "5"]


@pytest.fixture
def cluster(tmp_path):
    dask = shutil.which("dask") or pytest.skip("the dask command is not installed")
    info = tmp_path / "scheduler.json"
    common = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "cwd": tmp_path}
    procs = [
        subprocess.Popen(
            [
                dask,
                "scheduler",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--dashboard-address",
                ":0",
                "--scheduler-file",
                str(info),
            ],
            **common,
        )
    ]
    try:
        deadline = time.monotonic() + 60
        while not info.is_file():
            assert time.monotonic() < deadline, "the dask scheduler did not start"
            time.sleep(0.2)
        time.sleep(0.5)
        address = json.loads(info.read_text())["address"]
        for _ in range(2):
            procs.append(
                subprocess.Popen(
                    [dask, "worker", address, "--nthreads", "1", "--no-dashboard"], **common
                )
            )
        from distributed import Client

        with Client(address, timeout=30) as client:
            client.wait_for_workers(2, timeout=60)
        yield address
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()


def _verdicts(out):
    data = json.loads((out / "results.json").read_text())
    return [
        (c["id"], [(cell["successes"], cell["trials"]) for cell in c["cells"]])
        for c in data["checks"]
    ]


def test_a_run_on_a_dask_cluster_matches_one_job(cluster, tmp_path, capsys):
    remote, local = tmp_path / "remote", tmp_path / "local"
    assert main([*SELECTION, "--scheduler", cluster, "--out", str(remote)]) == 0
    assert main([*SELECTION, "--jobs", "1", "--out", str(local)]) == 0
    assert _verdicts(remote) == _verdicts(local)
    meta = json.loads((remote / "results.json").read_text())["meta"]
    assert meta["backend"] == "dask"
    assert meta["scheduler"] == cluster


def test_an_unreachable_scheduler_is_a_clear_error(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(cli_run, "SCHEDULER_TIMEOUT", 2)
    argv = [*SELECTION, "--scheduler", "tcp://127.0.0.1:9", "--out", str(tmp_path / "o")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "the dask scheduler 'tcp://127.0.0.1:9': connection refused" in err
