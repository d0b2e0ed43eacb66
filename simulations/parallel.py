"""Parallel execution of simulation tasks: joblib backends, workers that die with the run.

The engine (:mod:`calcheck.simulations.engine`) and the search
(:mod:`calcheck.simulations.search`) hand their tasks here. Loky workers watch their parent
and exit the moment it dies (even by SIGKILL), and ignore SIGINT: the main process
handles an interruption and stops them.
"""

from __future__ import annotations

from contextlib import ExitStack, contextmanager

__all__ = ["LOG_FORMAT", "exit_with_parent", "parallel_results"]

#: Format of calcheck's log lines: the CLI's, and that of worker processes that log.
LOG_FORMAT = "%(levelname)s %(name)s: %(message)s"


def exit_with_parent(parent_pid: int):
    """Worker initializer (loky): exit as soon as the run's main process dies (even by SIGKILL).

    loky's workers otherwise wait for work forever once their parent is gone. They are
    direct children of the main process, so their parent id changes the moment it dies
    (they are reparented before it is reaped); a daemon thread polls for that. A worker
    whose parent died while it was starting exits at once. Workers ignore SIGINT: the main
    process handles an interruption and stops them.
    """
    import os
    import signal
    import threading
    import time

    if os.getppid() != parent_pid:
        os._exit(1)
    # Ctrl-C in a terminal signals the whole process group: the main process stops the run
    # (and these workers) with one line; a worker must not print a KeyboardInterrupt of its own
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    def watch():
        while os.getppid() == parent_pid:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, daemon=True, name="calcheck-watchdog").start()


#: joblib's warnings when a generator of results is closed before its tasks are all used.
_CANCELLED = r"\d+ tasks (which were still being processed|have been successfully executed)"


def parallel_results(chunk, tasks, root_seed, n_jobs, backend, stack: ExitStack):
    """``chunk(experiment, root_seed, blocks)`` of every task, as a generator of results.

    Backends: loky (workers that exit with their parent and ignore SIGINT), dask (a local
    cluster unless a client exists), threading, sequential. ``stack`` owns the contexts.
    """
    import os
    import warnings

    import joblib

    # a run that stops early (interrupted, or an error storing a block) closes the generator
    # with tasks unfinished; joblib then warns that they were cancelled: the run says so itself
    stack.enter_context(warnings.catch_warnings())
    warnings.filterwarnings("ignore", _CANCELLED, UserWarning)
    if backend == "dask":
        try:
            from distributed import Client, LocalCluster, get_client
        except ImportError as exc:  # pragma: no cover - depends on the extra
            raise ValueError(
                "backend 'dask' needs the distributed extra: python -m pip install "
                "'dask[distributed]' (or, in a calcheck clone, python -m pip install "
                "'.[distributed]')"
            ) from exc
        try:
            get_client()
        except ValueError:
            workers = n_jobs if n_jobs > 0 else None
            cluster = stack.enter_context(
                LocalCluster(
                    n_workers=workers, threads_per_worker=1, dashboard_address=None, processes=True
                )
            )
            stack.enter_context(Client(cluster))
        stack.enter_context(joblib.parallel_config(backend="dask"))
        parallel = joblib.Parallel(return_as="generator_unordered")
    elif backend == "loky":
        # loky replaces a worker whose resident memory stays 300 MB above its first task's
        # (after a large cell the allocator keeps freed pages) and warns that "a worker
        # stopped": expected here, and no result depends on which worker computes a block
        warnings.filterwarnings("ignore", "A worker stopped while some jobs", UserWarning)
        # every worker watches its parent from the moment it starts, before any task
        stack.enter_context(
            joblib.parallel_config(
                backend="loky", initializer=exit_with_parent, initargs=(os.getpid(),)
            )
        )
        parallel = joblib.Parallel(n_jobs=n_jobs, return_as="generator_unordered")
    else:
        parallel = joblib.Parallel(n_jobs=n_jobs, backend=backend, return_as="generator_unordered")
    calls = (joblib.delayed(chunk)(exp, root_seed, blocks) for exp, blocks in tasks)
    if backend != "loky":
        return parallel(calls)
    with _sigint_blocked():
        return parallel(calls)


@contextmanager
def _sigint_blocked():
    """SIGINT ignored (and held back from this process) while loky starts its workers.

    A Ctrl-C in a terminal signals the whole process group. A worker still importing when
    it arrives would print a KeyboardInterrupt traceback of its own (the initializer that
    ignores SIGINT has not run yet); a process inherits an ignored signal, so the workers
    started here ignore SIGINT from their first instruction. Meanwhile SIGINT is also
    blocked in this thread, so that one arriving here is delivered to the run on exit
    rather than lost (multiprocessing's resource tracker may unblock it while it starts).
    """
    import signal
    import threading

    if not hasattr(signal, "pthread_sigmask") or threading.current_thread() is not (
        threading.main_thread()
    ):
        yield
        return
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    handler = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, handler)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
