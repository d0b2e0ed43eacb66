"""Checks evaluated beside the workers: the main process schedules, commits and assembles.

A check's evaluation reads its cells' blocks back, computes each event, the exact binomial
verdicts, its mutant's rungs and power (and, for a rate or exponent check, its bootstraps):
about 25 CPU-s of a quick run, which in the main process made it the run's serial part
(on 16 workers the simulation itself is about 30 s). So where a run records its results
(``calcheck run``) and has more than one worker, each check whose blocks are all stored is
handed to :class:`Evaluations`: processes of their own
(:class:`~calcheck.simulations.parallel.SidePool`, as many as the run's workers) that open
the store read-only (sqlite's write-ahead log lets them read while the main process
commits) and return the result as its record's text (:func:`~.records.encode_result`, the
one codec of results). The main process decodes it with its own check
(:func:`~.records.decode_result`), so a result computed there is the one a rerun reads
from its record, bit for bit, for any ``--jobs``, backend or batch size.

Elsewhere (one worker, the threading or sequential backend, a store in memory, a run
without records) the main process evaluates, as it always did; so does it the checks of a
guarantee defined at run time or by a plugin paper (:func:`evaluable_beside`): those live
in this process's registry, which a fresh process does not hold.
"""

from __future__ import annotations

import time

from calcheck.simulations.parallel import SidePool, attributed_call, usable_cpus

from .records import encode_result

__all__ = [
    "Evaluations",
    "cells_of",
    "evaluable_beside",
    "evaluate_encoded",
    "evaluation_processes",
]

#: Backends whose workers are processes of this machine or a cluster's (others: none).
_PARALLEL_BACKENDS = ("loky", "dask")


def evaluation_processes(n_jobs, backend: str, store, records: bool) -> int:
    """Processes that evaluate checks beside a run's ``n_jobs`` workers (0: the main process).

    As many as the run's workers, at most the CPUs this process may use: re-evaluating a
    full store (a rerun after a bound changed) then uses every one of them, and during a
    simulation they take turns with it (a quick run's evaluations are about 5% of its CPU).
    None for a store in memory or without write permission (opened immutable: another
    process could not open it to read in a read-only folder), nor for an ``n_jobs`` the
    engine refuses (it says why).
    """
    path = getattr(store, "path", ":memory:")
    if not records or backend not in _PARALLEL_BACKENDS or path == ":memory:":
        return 0
    if getattr(store, "read_only", False):
        return 0
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs < -1 or n_jobs == 0:
        return 0
    cpus = usable_cpus()
    workers = cpus if n_jobs < 0 else min(n_jobs, cpus)
    return workers if workers > 1 else 0


def evaluable_beside(check) -> bool:
    """Whether ``check`` can be evaluated in another process: its guarantee is a paper's.

    A guarantee of ``calcheck.define_guarantee`` or of a plugin paper is registered in this
    process only (a fresh process would not know its id); its checks are evaluated here.
    """
    from calcheck.bounds import registry

    gid = getattr(check, "guarantee", None)
    if not isinstance(gid, str) or registry.is_user_defined(gid):
        return False
    return gid.split(".", 1)[0] in registry.PAPERS


#: The store each evaluation process reads, by path (opened once per process).
_READERS: dict = {}


def _reader(path: str):
    from calcheck.simulations.store import ResultStore

    store = _READERS.get(path)
    if store is None:
        store = _READERS[path] = ResultStore.reader(path)
    return store


def cells_of(check) -> list[tuple[str, str]]:
    """``(key, code stamp)`` of each experiment ``check`` reads, in its order."""
    return [(e.key, e.code_stamp) for e in check.simulations()]


class _ParentsCells:
    """A store reader that reads each cell under the key and code stamp the parent gave it.

    An experiment's stamp hashes source files when it is asked for: a process that computes
    it again could find them edited since the run started (the engine hands its workers
    the parent's stamps for the same reason), and its blocks would not be found.
    """

    def __init__(self, store, here: list, parents: list):
        self.store = store
        self.cells = dict(zip(here, parents, strict=True))

    def load(self, root_seed, cell_key: str, code: str, blocks) -> dict:
        key, stamp = self.cells.get((cell_key, code), (cell_key, code))
        return self.store.load(root_seed, key, stamp, blocks)


def evaluate_encoded(check, store_path: str, cells: list, settings: tuple):
    """``(record text, CPU seconds)`` of ``check`` evaluated from the store at ``store_path``.

    ``cells`` are :func:`cells_of` the check in the main process, ``settings`` the run's
    ``(reps, root_seed, false_alarm)``. Runs in an evaluation process; an exception of the
    user's code (a bound of a study evaluated on the cells) becomes its one line there, as
    in a simulation worker.
    """
    start = time.process_time()
    store = _ParentsCells(_reader(store_path), cells_of(check), cells)
    result = attributed_call(check.evaluate, store, *settings)
    return encode_result(result), time.process_time() - start


def _warm_up() -> int:
    """Import what an evaluation needs, while the run starts (returns this process's id)."""
    import os

    import scipy.stats  # noqa: F401  (the verdicts' exact intervals)

    from ..checks import check  # noqa: F401  (the events, verdicts and evidence)
    from ..series import exponents, rates  # noqa: F401

    return os.getpid()


class Evaluations:
    """Checks evaluated in ``processes`` processes, their results collected as they end.

    :meth:`submit` hands check ``i`` over; :meth:`finished` returns ``(i, record text)`` of
    those done since the last call, without waiting, or at least one of them with ``wait``
    (an error of an evaluation is raised there; ``cpu_seconds`` adds up their CPU time);
    :meth:`close` stops the processes (those not started are dropped; ``kill``: those
    running too).
    """

    def __init__(self, processes: int, store_path: str, reps: int, root_seed: int, false_alarm):
        self.pool = SidePool(processes)
        self.store_path, self.reps, self.root_seed = store_path, reps, root_seed
        self.false_alarm = false_alarm
        self.pending: dict = {}  # future -> check index
        self.submitted = 0
        self.cpu_seconds = 0.0
        for _ in range(processes):  # start them now: their imports overlap the run's start
            self.pool.submit(_warm_up)

    def submit(self, i: int, check) -> None:
        """Evaluate check ``i`` in a process."""
        settings = (self.reps, self.root_seed, self.false_alarm)
        future = self.pool.submit(
            evaluate_encoded, check, self.store_path, cells_of(check), settings
        )
        self.pending[future] = i
        self.submitted += 1

    def finished(self, wait: bool = False) -> list[tuple[int, str]]:
        """``(i, record text)`` of every evaluation done (all of them, with ``wait``)."""
        from concurrent.futures import FIRST_COMPLETED
        from concurrent.futures import wait as wait_for

        if not self.pending:
            return []
        if wait:
            done, _ = wait_for(list(self.pending), return_when=FIRST_COMPLETED)
        else:
            done = [f for f in self.pending if f.done()]
        out = []
        for future in done:
            i = self.pending.pop(future)
            text, seconds = future.result()
            self.cpu_seconds += seconds
            out.append((i, text))
        return sorted(out)

    def close(self, kill: bool = False) -> None:
        """Drop what has not started and stop the processes (``kill``: at once)."""
        for future in self.pending:
            future.cancel()
        self.pending.clear()
        self.pool.shutdown(kill=kill)
