"""SIGINT and SIGTERM in the command line: one line, exit 128 + signal, nothing swallowed.

Every sub-command runs inside :func:`stop_on_signals`. The first SIGINT or SIGTERM raises
:class:`Interrupted`, a ``BaseException`` like ``KeyboardInterrupt``: no ``except
Exception`` on the way out (a data check, a retry, a cleanup) can mistake it for an error
and carry on. A second signal while the command unwinds (Ctrl-C pressed twice) is ignored,
so the command still ends with its one line and no traceback.

An interruption is never lost. A signal's exception is raised wherever the main thread is,
and some code drops it: C code that clears the error it met (an extension module
initialising, which then raises an ``ImportError`` of its own), or a finalizer, whose
exceptions Python only reports ("Exception ignored in ..."). A figures run once went on
for minutes after a Ctrl-C that landed in such a place, every later Ctrl-C ignored as a
"second" one. So a watcher thread keeps a weak reference to the :class:`Interrupted` it
raised; if that exception is gone (freed) before the command has said
:func:`interrupted_status`, nothing is handling it, and the signal is delivered again.
Worker processes are stopped on the way out (joblib terminates them; they also exit when
their parent dies).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
import weakref
from contextlib import contextmanager

__all__ = [
    "Interrupted",
    "interrupted_status",
    "interruption_behind",
    "received_signal",
    "stop_on_signals",
]

#: Seconds between the watcher's looks at the interruption it raised.
WATCH_SECONDS = 0.2


class Interrupted(BaseException):
    """SIGINT or SIGTERM received (``signum`` says which)."""

    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum


class _Interruption:
    """What this process did with the signals it received (one per command)."""

    def __init__(self):
        self.depth = 0  # nested stop_on_signals contexts now active
        self.signum = None  # the signal of the interruption raised, if any
        self.raised = None  # weak reference to the Interrupted raised
        self.redelivering = False  # the signal was sent again; the next one raises
        self.reported = False  # interrupted_status said it: nothing left to watch
        self.watcher = None


_STATE = _Interruption()


def _handler(signum, frame):
    state = _STATE
    if state.signum is not None and not state.redelivering:
        return  # a second signal while the command unwinds
    state.signum, state.redelivering = signum, False
    if state.watcher is None or not state.watcher.is_alive():
        state.watcher = threading.Thread(target=_watch, daemon=True, name="calcheck-interrupt")
        state.watcher.start()
    # no local name for it: this frame is in its traceback, and a reference from here would
    # keep a dropped exception alive (a cycle), hiding it from the watcher
    raise _watched(Interrupted(signum))


def _watched(exc: Interrupted) -> Interrupted:
    _STATE.raised = weakref.ref(exc)
    return exc


def _watch():
    """Deliver the signal again if its exception was dropped before it was reported."""
    state = _STATE
    while state.depth > 0 and not state.reported:
        time.sleep(WATCH_SECONDS)
        if state.reported or state.depth == 0 or state.redelivering:
            continue
        if state.raised is not None and state.raised() is None:
            state.redelivering = True
            os.kill(os.getpid(), state.signum)


@contextmanager
def stop_on_signals():
    """SIGINT and SIGTERM raise :class:`Interrupted` once, in the main thread."""
    state = _STATE
    if state.depth == 0:  # a new command: nothing received yet
        state.signum = state.raised = None
        state.redelivering = state.reported = False

    def swallowed(unraisable):
        # raised inside a finalizer or weakref callback, where Python ignores exceptions
        # ("Exception ignored in ..."): not printed; the watcher delivers it again
        if isinstance(unraisable.exc_value, Interrupted):
            return
        previous_hook(unraisable)

    previous = {s: signal.signal(s, _handler) for s in (signal.SIGINT, signal.SIGTERM)}
    previous_hook, sys.unraisablehook = sys.unraisablehook, swallowed
    state.depth += 1
    try:
        yield
    finally:
        state.depth -= 1
        sys.unraisablehook = previous_hook
        for s, h in previous.items():
            signal.signal(s, h)


def received_signal() -> int | None:
    """The signal the current command was interrupted by (None if none).

    Where an interruption was dropped on its way out (an extension module interrupted while
    it initialises raises an ``ImportError`` with no trace of it), this still says that the
    command was interrupted.
    """
    return _STATE.signum


def interruption_behind(exc: BaseException) -> BaseException | None:
    """The interruption an exception stands for, if any (else None).

    A signal that arrives inside library code can come out as another exception: numpy's
    ``savez`` closing its zip file raises ``ValueError`` while an interruption unwinds, an
    extension module interrupted while it initialises raises ``ImportError``. The
    interruption is then its cause or context; such an error is an interruption, not a
    failure to report.
    """
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, Interrupted | KeyboardInterrupt):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


def interrupted_status(exc: BaseException, kept: str) -> int:
    """Print the one line for an interruption and return the exit status (128 + signal).

    ``kept`` says what was kept and how to go on (``"... ; rerun the same command to
    resume"``). A ``KeyboardInterrupt`` is a SIGINT that reached Python's own handler.
    """
    _STATE.reported = True
    signum = getattr(exc, "signum", signal.SIGINT)
    name = signal.Signals(signum).name
    print(f"calcheck: interrupted ({name}); {kept}", file=sys.stderr, flush=True)
    return 128 + signum
