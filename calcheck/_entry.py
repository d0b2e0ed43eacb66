"""The ``calcheck`` command's entry point: a Ctrl-C while it starts is one line too.

Importing the command line takes about a second (numpy, scipy, the catalog). SIGINT and
SIGTERM raise :class:`~calcheck.theory_checks.cli.signals.Interrupted` from the first
instruction, so a signal that arrives while the imports run ends the command like one that
arrives later (one line, exit 128 + signal) rather than with a traceback.
"""

import sys
import time

#: When the command started (``time.monotonic``): a run's clock counts from here, imports
#: included.
STARTED = time.monotonic()


def main() -> int:
    """Install the signal handlers, import the command line and run it."""
    from calcheck.theory_checks.cli.signals import (
        Interrupted,
        interrupted_status,
        interruption_behind,
        received_signal,
        stop_on_signals,
    )

    try:
        with stop_on_signals():
            from calcheck.theory_checks.cli.main import main as cli_main

            # the command installs its own handlers (and its own line) once it has parsed
            # its arguments; these hold until then and after it returns
            return cli_main()
    except BaseException as exc:
        # (an interrupted extension module raises ImportError, its cause the interruption)
        interruption = interruption_behind(exc)
        if interruption is None and received_signal() is not None:
            # numpy interrupted while it initialises raises an ImportError that has lost it
            interruption = Interrupted(received_signal())
        if interruption is None:
            raise
        return interrupted_status(interruption, "nothing was written; rerun the same command")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
