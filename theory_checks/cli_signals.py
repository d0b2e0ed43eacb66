"""SIGINT and SIGTERM in the command line: one line, exit 128 + signal, nothing swallowed.

Every sub-command runs inside :func:`stop_on_signals`. The first SIGINT or SIGTERM raises
:class:`Interrupted`, a ``BaseException`` like ``KeyboardInterrupt``: no ``except
Exception`` on the way out (a data check, a retry, a cleanup) can mistake it for an error
and carry on. A second signal while the command unwinds (Ctrl-C pressed twice) is ignored,
so the command still ends with its one line and no traceback. A signal handled inside a
finalizer or a weakref callback, where Python ignores exceptions, is delivered again (a
figures run once went on to its end, exit 0, after "Exception ignored in ..."). Worker processes are
stopped on the way out (joblib terminates them; they also exit when their parent dies).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from contextlib import contextmanager

__all__ = ["Interrupted", "interrupted_status", "interruption_behind", "stop_on_signals"]


class Interrupted(BaseException):
    """SIGINT or SIGTERM received (``signum`` says which)."""

    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum


@contextmanager
def stop_on_signals():
    """SIGINT and SIGTERM raise :class:`Interrupted` once, in the main thread."""
    raised = []

    def handler(signum, frame):
        if raised:
            return
        raised.append(signum)
        raise Interrupted(signum)

    def swallowed(unraisable):
        # raised inside a finalizer or weakref callback, where Python ignores exceptions
        # ("Exception ignored in ..."): deliver it again, to land in ordinary code
        if raised and isinstance(unraisable.exc_value, Interrupted):
            raised.clear()
            # from another thread, a moment later: raised in here, it would be ignored again
            again = threading.Timer(0.05, os.kill, (os.getpid(), unraisable.exc_value.signum))
            again.daemon = True
            again.start()
            return
        previous_hook(unraisable)

    previous = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    previous_hook, sys.unraisablehook = sys.unraisablehook, swallowed
    try:
        yield
    finally:
        sys.unraisablehook = previous_hook
        for s, h in previous.items():
            signal.signal(s, h)


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
    signum = getattr(exc, "signum", signal.SIGINT)
    name = signal.Signals(signum).name
    print(f"calcheck: interrupted ({name}); {kept}", file=sys.stderr, flush=True)
    return 128 + signum
