"""An interruption while the store checks its blocks is never taken for a damaged block.

Issue 38, S1.3: ``_decoded``'s ``except Exception`` caught the CLI's interruption (then an
``Exception``), deleted a sound block as "damaged" and carried on; every later signal was
ignored. Now the interruption propagates and the block stays.
"""

from __future__ import annotations

import numpy as np
import pytest

from calcheck.simulations import payload as payload_module
from calcheck.simulations.store import ResultStore
from calcheck.theory_checks.cli.signals import Interrupted


def _store_with_a_block(path):
    with ResultStore(path) as store:
        store.put(7, "cell", "code", 0, {"x": np.arange(5.0)})


@pytest.mark.parametrize("raised", [KeyboardInterrupt(), Interrupted(2)], ids=["sigint", "cli"])
def test_an_interruption_while_checking_blocks_propagates_and_deletes_nothing(
    tmp_path, monkeypatch, raised
):
    path = tmp_path / "store.sqlite"
    _store_with_a_block(path)

    def interrupted(payload):
        raise raised

    monkeypatch.setattr(payload_module, "_unpack", interrupted)
    with ResultStore(path) as store, pytest.raises(type(raised)):
        store.done_blocks(7, "cell", "code")
    monkeypatch.undo()
    with ResultStore(path) as store:
        assert store.done_blocks(7, "cell", "code") == {0}
        assert store.damaged == []


def test_a_malformed_payload_is_still_damaged(tmp_path, monkeypatch):
    path = tmp_path / "store.sqlite"
    _store_with_a_block(path)

    def malformed(payload):
        raise ValueError("not an npz")

    monkeypatch.setattr(payload_module, "_unpack", malformed)
    with ResultStore(path) as store:
        assert store.done_blocks(7, "cell", "code") == set()
        assert len(store.damaged) == 1


def test_the_cli_interruption_is_not_an_exception():
    # no ``except Exception`` anywhere can swallow it
    assert not issubclass(Interrupted, Exception)


def test_an_interruption_inside_a_finalizer_is_delivered_again():
    # Python ignores an exception raised in __del__ or a weakref callback ("Exception
    # ignored in ..."): a Ctrl-C handled there was lost and the command ran to its end
    import os
    import signal

    from calcheck.theory_checks.cli.signals import stop_on_signals

    class Dies:
        def __del__(self):
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(10_000):  # the handler runs here, inside the finalizer
                pass

    def work():
        with stop_on_signals():
            Dies()  # collected at once
            for _ in range(10**8):  # the signal delivered again lands here
                pass

    with pytest.raises(Interrupted):
        work()


def test_an_interruption_dropped_by_the_code_it_lands_in_is_delivered_again():
    # C code that clears the error it met (an extension module interrupted while it
    # initialises) drops the interruption; later signals were then ignored as "second" ones
    # and a figures run went on for minutes (CI, stop 41)
    import os
    import signal
    import time

    from calcheck.theory_checks.cli.signals import received_signal, stop_on_signals

    def work():
        with stop_on_signals():
            try:
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(1)
            except BaseException:  # dropped, as such code does
                pass
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:  # delivered again within a second
                time.sleep(0.01)

    started = time.monotonic()
    with pytest.raises(Interrupted):
        work()
    assert time.monotonic() - started < 3
    assert received_signal() == signal.SIGINT


def test_a_reported_interruption_is_not_delivered_again(capsys):
    import os
    import signal
    import time

    from calcheck.theory_checks.cli.signals import interrupted_status, stop_on_signals

    statuses = []
    with stop_on_signals():
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(1)
        except Interrupted as exc:
            statuses.append(interrupted_status(exc, "kept"))
        time.sleep(0.6)  # three looks of the watcher: nothing raised
    assert statuses == [130]
    assert capsys.readouterr().err.count("interrupted (SIGINT)") == 1
