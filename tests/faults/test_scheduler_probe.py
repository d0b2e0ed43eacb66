"""``--scheduler`` at an address that is no dask scheduler: one line within seconds (issue 38).

Before: a port that accepts and never answers hung the run with no output (> 100 s), an
HTTP server gave "Unable to allocate 3.07 EiB", a refused port waited 33 s.
"""

from __future__ import annotations

import socket
import threading
import time

import pytest

from calcheck.simulations import parallel
from calcheck.simulations.parallel import probe_dask_scheduler
from calcheck.theory_checks.cli.main import main


class _Server:
    """A local TCP server in a thread: ``reply`` is what it does with each connection."""

    def __init__(self, reply):
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.reply = reply
        self.conns = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(conn)
            self.reply(conn)

    def close(self):
        for c in self.conns:
            c.close()
        self.sock.close()


def _silent(conn):
    pass


def _http(conn):
    def answer():
        conn.settimeout(5)
        try:
            conn.recv(1024)
            conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
        except OSError:
            pass

    threading.Thread(target=answer, daemon=True).start()


def _closes(conn):
    conn.close()


@pytest.fixture
def server(request):
    s = _Server(request.param)
    yield s
    s.close()


@pytest.mark.parametrize(
    ("server", "said"),
    [
        (_silent, "accepts connections but did not answer in 1 s"),
        (_http, "an HTTP server answers there"),
        (_closes, "closed the connection without answering"),
    ],
    indirect=["server"],
    ids=["silent", "http", "closes"],
)
def test_a_port_that_is_no_scheduler_is_named_within_the_timeout(server, said):
    start = time.monotonic()
    with pytest.raises(ValueError, match="is not a dask scheduler: " + said):
        probe_dask_scheduler(f"tcp://127.0.0.1:{server.port}", timeout=0.5)
    assert time.monotonic() - start < 3


def test_a_refused_port_says_refused_at_once():
    with socket.create_server(("127.0.0.1", 0)) as s:
        port = s.getsockname()[1]  # closed when the block ends: nothing listens there
    start = time.monotonic()
    with pytest.raises(ValueError, match=r"connection refused \(nothing listens on port"):
        probe_dask_scheduler(f"127.0.0.1:{port}")
    assert time.monotonic() - start < 2


@pytest.mark.parametrize("address", ["localhost", "tcp://host:notaport", "tcp://:8786"])
def test_an_address_without_a_port_is_refused(address):
    with pytest.raises(ValueError, match="must be HOST:PORT or tcp://HOST:PORT"):
        probe_dask_scheduler(address)


@pytest.mark.parametrize("server", [_silent], indirect=True)
def test_run_says_it_in_one_line(server, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(parallel, "PROBE_SECONDS", 0.5)
    argv = ["run", "--checks", "gr21.thm3", "--reps", "200", "--out", str(tmp_path)]
    start = time.monotonic()
    assert main([*argv, "--scheduler", f"127.0.0.1:{server.port}"]) == 2
    assert time.monotonic() - start < 20
    err = capsys.readouterr().err.strip()
    assert err.startswith("calcheck: error: the dask scheduler '127.0.0.1:")
    assert "is not a dask scheduler: accepts connections but did not answer in 1 s" in err
    assert len(err.splitlines()) == 1


def test_a_real_scheduler_passes_the_probe():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=0,
        processes=False,
        dashboard_address=None,
        host="127.0.0.1",
        protocol="tcp",
    ) as cluster:
        probe_dask_scheduler(cluster.scheduler_address)
