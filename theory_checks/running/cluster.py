"""A run on an existing dask cluster: ``calcheck run --scheduler`` and ``verify(scheduler=...)``.

Both connect a dask client to the scheduler for the length of the run; the engine's dask
backend (:func:`calcheck.simulations.parallel.parallel_results`) then sends its tasks there
instead of starting a local cluster. Results do not depend on where the blocks are computed.
"""

from __future__ import annotations

from contextlib import contextmanager

__all__ = ["SCHEDULER_TIMEOUT", "dask_scheduler"]

#: Seconds dask's client waits for a scheduler that the probe found answering.
SCHEDULER_TIMEOUT = 30


@contextmanager
def dask_scheduler(address, backend, *, flag="scheduler", timeout=None):
    """Connect a dask client to ``address`` for the block; yield the backend to run with.

    Parameters
    ----------
    address : str or None
        The scheduler, ``tcp://HOST:PORT`` or ``HOST:PORT``; None runs on ``backend`` as
        given, with no client.
    backend : str
        The backend asked for: with a scheduler, only ``"dask"`` or the default
        ``"loky"`` (which the scheduler replaces by ``"dask"``).
    flag : str
        How the caller names the scheduler in its messages (``"--scheduler"`` on the
        command line, ``"scheduler"`` for :func:`~calcheck.theory_checks.running.verify.verify`).
    timeout : float, optional
        Seconds dask's client waits to connect; None is :data:`SCHEDULER_TIMEOUT`.

    Yields
    ------
    str
        ``backend`` without a scheduler, ``"dask"`` with one.

    Raises
    ------
    ValueError
        Where ``address`` is no string, the backend is another one, dask.distributed is
        not installed, or nothing that answers as a dask scheduler is there (refused, timed
        out, another server: said in seconds, before dask's own client waits).
    """
    if address is None:
        yield backend
        return
    if not isinstance(address, str) or not address.strip():
        raise ValueError(
            f"{flag} must be a dask scheduler's address such as 'tcp://10.0.0.5:8786' (a "
            "cluster's scheduler_address, a client's scheduler.address), got "
            f"{type(address).__name__}: {address!r}"
        )
    if backend not in ("loky", "dask"):
        raise ValueError(f"{flag} needs --backend dask, got --backend {backend}")
    try:
        from distributed import Client
    except ImportError:
        raise ValueError(
            f"{flag} needs dask.distributed: python -m pip install 'dask[distributed]'"
        ) from None
    from calcheck.simulations.parallel import probe_dask_scheduler

    probe_dask_scheduler(address, what=flag)  # refused / timed out / not a scheduler, in seconds
    try:
        client = Client(address, timeout=SCHEDULER_TIMEOUT if timeout is None else timeout)
    except (OSError, TimeoutError) as exc:
        raise ValueError(f"cannot reach the dask scheduler {address!r}: {exc}") from None
    with client:
        yield "dask"
