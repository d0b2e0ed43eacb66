"""Parallel execution of simulation tasks: joblib backends, workers that die with the run.

The engine (:mod:`calcheck.simulations.engine`) and the search
(:mod:`calcheck.simulations.search`) hand their tasks here. Loky workers watch their parent
and exit the moment it dies (even by SIGKILL), and ignore SIGINT: the main process
handles an interruption and stops them.
"""

from __future__ import annotations

import functools
from contextlib import ExitStack, contextmanager

__all__ = [
    "DASK_SCHEMES",
    "LOG_FORMAT",
    "SidePool",
    "UserCodeError",
    "attributed_call",
    "attributed_error",
    "exit_with_parent",
    "parallel_results",
    "probe_dask_scheduler",
    "usable_cpus",
    "user_code_error",
    "workers_spawned_ignoring_sigint",
]

#: Format of calcheck's log lines: the CLI's, and that of worker processes that log.
LOG_FORMAT = "%(levelname)s %(name)s: %(message)s"


def usable_cpus() -> int:
    """The CPUs this process may run on: the default number of workers of every command.

    ``os.process_cpu_count`` (Python 3.13), else the scheduler affinity (a container or
    ``taskset`` limits it), else ``os.cpu_count``. Results are identical for any number.
    """
    import os

    count = getattr(os, "process_cpu_count", None)
    if count is not None:
        return max(1, count() or 1)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def exit_with_parent(parent_pid: int, generation: int = 0):
    """Worker initializer (loky): exit as soon as the run's main process dies (even by SIGKILL).

    loky's workers otherwise wait for work forever once their parent is gone. They are
    direct children of the main process, so their parent id changes the moment it dies
    (they are reparented before it is reaped); a daemon thread polls for that.
    ``generation`` is not used here: a new value makes loky start fresh workers (see
    :func:`parallel_results`). A worker
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


class UserCodeError(ValueError):
    """The user's code (a calibrator, a law's eta, a plugin's bound or experiment) raised.

    Its message is one line: what raised, the exception and the user's ``file:line``
    (:func:`user_code_error`). Made where the code ran (a worker, whose traceback the main
    process does not get) and picklable, so every backend reports it alike.
    """


#: Top-level packages that are not the user's code: calcheck's dependencies and the
#: workers' plumbing (the standard library is recognised apart). A frame of these between
#: calcheck and the user's code is neither what raised nor where.
_LIBRARIES = frozenset(
    {
        "cloudpickle",
        "dask",
        "distributed",
        "joblib",
        "loky",
        "matplotlib",
        "mpmath",
        "numpy",
        "scipy",
        "sklearn",
        "statsmodels",
        "threadpoolctl",
        "tqdm",
    }
)
#: Methods a calibrator is called by (their frames name "the calibrator").
_CALIBRATOR_METHODS = ("fit", "predict", "predict_proba")


def _module_of(frame) -> str:
    return str(frame.f_globals.get("__name__") or "")


@functools.cache
def _python_folders() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The standard library's folders, and the installed packages' (which lie inside them)."""
    import sysconfig

    paths = sysconfig.get_paths()
    return (
        tuple({paths["stdlib"], paths["platstdlib"]}),
        tuple({paths["purelib"], paths["platlib"]}),
    )


def _is_users(frame) -> bool:
    """Whether a frame runs the user's code: neither calcheck's, a library's nor Python's.

    The standard library is recognised by its folder, not by module name: a user's module
    may be called ``code`` or ``test``.
    """
    top = _module_of(frame).partition(".")[0]
    if not top or top == "calcheck" or top in _LIBRARIES:
        return False
    file = frame.f_code.co_filename
    if file.startswith("<frozen"):  # importlib's bootstrap
        return False
    stdlib, installed = _python_folders()
    return not file.startswith(stdlib) or file.startswith(installed)


def _location(frame, lineno: int) -> str:
    """``file:line`` of a frame; the module's file where the code came by value (a worker)."""
    file = frame.f_code.co_filename
    if file.startswith("<"):  # cloudpickle sends code by value as "<dynamic-code>"
        file = frame.f_globals.get("__file__") or file
    return f"{file}:{lineno}"


def _interruption_in(exc: BaseException) -> bool:
    """Whether an interruption (KeyboardInterrupt, calcheck's Interrupted) is behind ``exc``."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if not isinstance(exc, Exception):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


def _user_frames(exc: BaseException) -> list:
    """``(frame, lineno)`` of the user's code in ``exc``'s traceback, outermost first."""
    import traceback

    return [(f, n) for f, n in traceback.walk_tb(exc.__traceback__) if _is_users(f)]


def user_code_error(what: str, exc: BaseException) -> UserCodeError:
    """The one line of the user's code that raised: ``<what> raised <Error>: <msg> (file:line)``.

    ``file:line`` is the innermost frame of the user's code in the traceback (the line that
    raised, or called the library that did); left out where no such frame is found.
    """
    try:
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    except Exception:  # an exception whose __str__ fails still gets its line
        message = ""
    frames = _user_frames(exc)
    where = f" ({_location(*frames[-1])})" if frames else ""
    said = f": {message}" if message else ""
    return UserCodeError(f"{what} raised {type(exc).__name__}{said}{where}")


def _role(frames, exc: BaseException) -> str:
    """What the outermost user frame is to calcheck: a calibrator, a law's eta, a function."""
    import traceback

    from calcheck.bounds.guarantee import Guarantee

    from .laws.callable_eta import CallableMean

    entry = frames[0][0]
    code = entry.f_code
    name = f"{_module_of(entry)}.{code.co_qualname}"
    if code.co_name in _CALIBRATOR_METHODS and "self" in code.co_varnames[:1]:
        return f"the calibrator {name}"
    callers = [f for f, _ in traceback.walk_tb(exc.__traceback__)]
    caller = _module_of(callers[callers.index(entry) - 1]) if callers.index(entry) else ""
    if caller == CallableMean.__module__:
        return f"the law's eta {name}"
    if caller == Guarantee.__module__:  # a registered bound evaluated (a plugin's)
        return f"the bound {name}"
    if code.co_name == "simulate":
        return f"the experiment {name}"
    return f"the function {name}"


def attributed_error(exc: BaseException) -> UserCodeError | None:
    """``exc`` as a :class:`UserCodeError` where the user's code raised it, else None.

    The user's code is a frame of the traceback outside calcheck, its libraries and the
    standard library (a calibrator's ``fit``, a law's eta, a plugin's experiment); calcheck's
    own errors (raised in its frames), a UserCodeError already made, a MemoryError and an
    interruption behind the error are left as they are.
    """
    # memory running out is the run's size, wherever it struck: the command line says so in
    # its own words, with the flags that lower it
    if isinstance(exc, UserCodeError | MemoryError) or _interruption_in(exc):
        return None
    frames = _user_frames(exc)
    if not frames:
        return None
    return user_code_error(_role(frames, exc), exc)


def attributed_call(function, *args):
    """``function(*args)``, an exception of the user's code raised as its one line.

    Tasks run through it in the workers (and in the main process): a worker's traceback
    does not reach the main process, so the line is made where the code ran.
    """
    try:
        return function(*args)
    except Exception as exc:
        error = attributed_error(exc)
        if error is None:
            raise
        raise error from exc


#: joblib's warnings when a generator of results is closed before its tasks are all used.
_CANCELLED = r"\d+ tasks (which were still being processed|have been successfully executed)"


def parallel_results(chunk, tasks, n_jobs, backend, stack: ExitStack, generation: int = 0):
    """``chunk(*task)`` of every task (a tuple of arguments), as a generator of results.

    Backends: loky (workers that exit with their parent and ignore SIGINT), dask (a local
    cluster unless a client exists), threading, sequential. ``stack`` owns the contexts.
    loky keeps its workers from one call to the next in a process; a new ``generation``
    replaces them (workers that imported a user's module keep it even after it changed).
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
                backend="loky",
                initializer=exit_with_parent,
                initargs=(os.getpid(), generation),
            )
        )
        parallel = joblib.Parallel(n_jobs=n_jobs, return_as="generator_unordered")
    else:
        parallel = joblib.Parallel(n_jobs=n_jobs, backend=backend, return_as="generator_unordered")
    # an exception of the user's code becomes its one line in the worker (attributed_call)
    calls = (joblib.delayed(attributed_call)(chunk, *task) for task in tasks)
    if backend != "loky":
        return parallel(calls)
    with _sigint_blocked():
        return parallel(calls)


@contextmanager
def _sigint_blocked():
    """SIGINT held back from this thread while loky starts its workers, and never lost.

    A Ctrl-C in a terminal signals the whole process group. A worker still importing when
    it arrives would print a KeyboardInterrupt traceback of its own (the initializer that
    ignores SIGINT has not run yet), so each worker is spawned while SIGINT is ignored: a
    process inherits an ignored signal, and the worker ignores SIGINT from its first
    instruction. Ignoring is confined to the spawn itself (a C call, see
    ``_spawn_ignoring_sigint``), with SIGINT blocked around it: a SIGINT that arrives
    meanwhile stays pending and reaches the run when the block ends. (Ignoring SIGINT for
    the whole start lost it: multiprocessing's resource tracker unblocks SIGINT while it
    starts, and a signal arriving then, while ignored, was discarded.) Threads that loky
    starts here inherit the block, so the signal is delivered to this thread.
    """
    import signal
    import threading

    if not hasattr(signal, "pthread_sigmask") or threading.current_thread() is not (
        threading.main_thread()
    ):
        yield
        return
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        with workers_spawned_ignoring_sigint():
            yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)


@contextmanager
def workers_spawned_ignoring_sigint():
    """Loky workers spawned in this context ignore SIGINT from their first instruction.

    Only the spawn itself (from the main thread) runs with SIGINT ignored; see
    ``_spawn_ignoring_sigint``. Used where results are collected in the main thread
    (the search), so a Ctrl-C is not held back while the work runs.
    """
    try:
        from joblib.externals.loky.backend import fork_exec as spawner
    except ImportError:  # pragma: no cover - another joblib layout: spawn as it does
        spawner = None
    original = getattr(spawner, "fork_exec", None)
    if original is None:  # pragma: no cover
        yield
        return
    spawner.fork_exec = _spawn_ignoring_sigint(original)
    try:
        with _trackers_quiet_about_leaks():
            yield
    finally:
        spawner.fork_exec = original


@contextmanager
def _trackers_quiet_about_leaks():
    """Resource trackers started in this context clean up after a killed run without warning.

    loky starts a resource tracker process beside its workers (and multiprocessing one of its
    own). When the run dies by SIGKILL, it cannot unregister its semaphores and memmapping
    folders; the tracker then unlinks them, as it should, but first warns ("There appear to
    be 8 leaked semlock objects to clean up at shutdown: {...}") on the terminal, in the
    middle of the resumed run. Nothing leaks: the warning is noise to the user. A tracker
    reads its warning filters from its command line, which copies ``sys.warnoptions``, so a
    filter for the trackers' own modules is there while loky starts it, and only then.
    """
    import sys

    try:
        from joblib.externals.loky.backend import resource_tracker
    except ImportError:  # pragma: no cover - another joblib layout
        modules = ["multiprocessing.resource_tracker"]
    else:
        modules = [resource_tracker.main.__module__, "multiprocessing.resource_tracker"]
    # -W takes no colon inside a field: the message is matched from its start
    options = [f"ignore:resource_tracker:UserWarning:{m}" for m in modules]
    added = [o for o in options if o not in sys.warnoptions]
    sys.warnoptions.extend(added)
    try:
        yield
    finally:
        for option in added:
            if option in sys.warnoptions:
                sys.warnoptions.remove(option)


def _spawn_ignoring_sigint(fork_exec):
    """``fork_exec`` (loky's worker spawn) run with SIGINT blocked, then ignored.

    Linux keeps a blocked signal pending even while it is ignored, and restoring the
    handler keeps it; only a SIGINT already pending would be discarded by ignoring it, so
    then the worker is spawned as it is (and the run stops at once anyway).
    """
    import functools
    import signal
    import threading

    @functools.wraps(fork_exec)
    def spawn(*args, **kwargs):
        if threading.current_thread() is not threading.main_thread():
            return fork_exec(*args, **kwargs)  # a replacement worker: dispositions are not ours
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            if signal.SIGINT in signal.sigpending():
                return fork_exec(*args, **kwargs)
            handler = signal.signal(signal.SIGINT, signal.SIG_IGN)
            try:
                return fork_exec(*args, **kwargs)
            finally:
                signal.signal(
                    signal.SIGINT, signal.default_int_handler if handler is None else handler
                )
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)

    return spawn


class SidePool:
    """Processes for work beside a run's own, such as drawing the report's pictures.

    A loky process pool of ``processes`` workers, started at the first :meth:`submit`, whose
    workers are those of the run's own pool in every respect that matters on the way out:
    spawned ignoring SIGINT, and exiting the moment the main process dies (even by SIGKILL).
    It keeps work that holds Python's interpreter lock (matplotlib) out of the main
    process, which on many cores is the run's serial part.
    """

    def __init__(self, processes: int = 1):
        if isinstance(processes, bool) or not isinstance(processes, int) or processes < 1:
            raise ValueError(f"processes must be a positive integer, got {processes!r}")
        self.processes = processes
        self._executor = None

    def submit(self, fn, *args):
        """``fn(*args)`` in a worker: a ``concurrent.futures.Future``."""
        if self._executor is not None:
            return self._executor.submit(fn, *args)
        import os

        from joblib.externals.loky.process_executor import ProcessPoolExecutor

        # loky spawns the workers in the first submit: from this thread, SIGINT blocked
        with _sigint_blocked():
            self._executor = ProcessPoolExecutor(
                self.processes, initializer=exit_with_parent, initargs=(os.getpid(),)
            )
            return self._executor.submit(fn, *args)

    def shutdown(self, kill: bool = False) -> None:
        """Wait for the work submitted, then stop the workers (cancel futures to drop work).

        The work a worker has taken, and up to one more item per worker, which loky queues
        ahead, cannot be cancelled: ``kill`` stops the workers at once instead (on the way
        out of an interrupted or failed run, whose work in flight is not wanted). An
        interruption while it waits leaves the pool to the next call (the run's way out
        calls it again).
        """
        if self._executor is not None:
            self._executor.shutdown(wait=True, kill_workers=kill)
            self._executor = None


#: Seconds a --scheduler gets to accept a connection, then to answer it.
PROBE_SECONDS = 5.0


#: The address schemes dask's client knows (``distributed.comm.registry``).
DASK_SCHEMES = ("tcp", "tls", "ucx", "inproc", "ws", "wss")


def probe_dask_scheduler(
    address: str, timeout: float | None = None, what: str = "--scheduler"
) -> None:
    """Raise ValueError unless a dask scheduler answers at ``address`` within ``timeout`` s.

    ``timeout`` None is ``PROBE_SECONDS``; ``what`` names the address in the messages (the
    flag, or ``verify``'s keyword ``scheduler``).

    A dask scheduler speaks first: on a new TCP connection it sends its handshake (a
    msgpack frame naming ``compression``) at once. So the probe connects, waits for that,
    and says which of refused / timed out / not a dask scheduler it met, instead of
    dask's own client waiting 30 s for a closed port, hanging on a port that accepts and
    never answers, or reading an HTTP reply as a frame length ("Unable to allocate 3.07
    EiB"). Addresses other than ``tcp://`` (tls, ucx, inproc) are left to dask.
    """
    import socket

    timeout = PROBE_SECONDS if timeout is None else timeout
    scheme, sep, rest = address.rpartition("://")
    if sep and scheme not in DASK_SCHEMES:
        # dask's own refusal is a traceback from deep in tornado that names no flag
        dashboard = " (an http:// address is a dashboard's)" if scheme.startswith("http") else ""
        raise ValueError(
            f"{what} must be a dask scheduler's address, tcp://HOST:PORT or HOST:PORT (dask's "
            f"default port is 8786), got {address!r}: dask knows no scheme {scheme!r}"
            f"{dashboard}; its schemes: {', '.join(DASK_SCHEMES)}"
        )
    if sep and scheme != "tcp":
        return
    host, colon, port_text = rest.rpartition(":")
    try:
        port = int(port_text)
    except ValueError:
        port = -1
    if not colon or not host or not 0 < port < 65536:
        raise ValueError(
            f"{what} must be HOST:PORT or tcp://HOST:PORT (dask's default port is 8786), "
            f"got {address!r}"
        )
    where = f"the dask scheduler {address!r}"
    try:
        conn = socket.create_connection((host.strip("[]"), port), timeout=timeout)
    except ConnectionRefusedError:
        raise ValueError(
            f"{where}: connection refused (nothing listens on port {port}); start it "
            "(`dask scheduler`) or check the address"
        ) from None
    except TimeoutError:
        raise ValueError(
            f"{where}: timed out after {timeout:g} s connecting (a firewall, or no such "
            "host); check the address"
        ) from None
    except OSError as exc:
        raise ValueError(f"{where}: cannot connect ({exc.strerror or exc})") from None
    import time

    waited = time.monotonic()
    with conn:
        conn.settimeout(timeout)
        try:
            first = conn.recv(256)
        except TimeoutError:
            first = None
        except OSError as exc:
            raise ValueError(f"{where}: the connection failed ({exc.strerror or exc})") from None
        if first and b"compression" in first:
            return  # a dask handshake
        if first is None:  # silent: an HTTP server waits for a request
            try:
                conn.sendall(b"HEAD / HTTP/1.0\r\n\r\n")
                first = conn.recv(256)
            except (TimeoutError, OSError):
                first = None
    if first is None:
        said = f"accepts connections but did not answer in {time.monotonic() - waited:.0f} s"
    elif not first:
        said = "closed the connection without answering"
    elif first.startswith(b"HTTP/"):
        said = "an HTTP server answers there (a dashboard? the scheduler's port is usually 8786)"
    else:
        said = f"something else answers there ({first[:24]!r})"
    raise ValueError(f"{where} is not a dask scheduler: {said}; check the address")
