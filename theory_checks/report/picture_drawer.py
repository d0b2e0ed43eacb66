"""The report's pictures drawn while the run simulates, as each guarantee's checks end.

A picture (:mod:`.pictures`) takes about half a second of CPU to draw, and a quick run has
about sixty: drawn after the last block they were most of what a run did after it. So each
guarantee's picture is drawn as soon as the last of its checks is evaluated (or read from
the store's records), from the same entries ``results.json`` gets.

Where the run has more than one worker and at least :data:`MIN_PICTURES_FOR_A_PROCESS`
guarantees (a picture each, at most), they are drawn in a process of their own
(:class:`calcheck.simulations.parallel.SidePool`; one per 8 workers, at most 4). Drawn in a
thread of the main process they held its interpreter lock for about 30 s of a quick run:
half of the main process's work, and on many cores the run's serial part. Otherwise (``--jobs
1``: one process asked for; or a few guarantees, where starting the process, about 1 CPU-s
for matplotlib's import, costs more than it spares) a thread draws them. What is left at
the end (nothing, unless a picture failed, where its error is only logged) is drawn
then, and an error there is reported. The pictures are the same files either way.
"""

from __future__ import annotations

import logging
import queue
import threading
from pathlib import Path

from calcheck.simulations.parallel import SidePool

from .files import check_entry
from .pictures import _draw_one, picture_tasks

__all__ = ["MIN_PICTURES_FOR_A_PROCESS", "PictureDrawer", "picture_processes"]

logger = logging.getLogger(__name__)


#: Fewest guarantees (pictures, at most one each: about 0.5 CPU-s) drawn in a process.
MIN_PICTURES_FOR_A_PROCESS = 8


def picture_processes(n_jobs: int, pictures: int) -> int:
    """Processes that draw up to ``pictures`` beside ``n_jobs`` workers (0: a thread draws)."""
    if n_jobs <= 1 or pictures < MIN_PICTURES_FOR_A_PROCESS:
        return 0
    return min(4, max(1, n_jobs // 8))


class PictureDrawer:
    """Draw guarantees' pictures in the background as their checks' results come.

    ``checks`` are the run's checks (in order), ``folder`` the pictures' folder, ``reps``
    the replicates per cell (the pictures say it), ``processes`` the processes that draw
    them (0: a thread of this process, :func:`picture_processes`). Call :meth:`result` with
    each check's index and result, :meth:`finish` at the end (it waits for the pictures and
    returns ``{guarantee id: file name}``), :meth:`close` on the way out of an interrupted
    run.
    """

    def __init__(self, checks: list, folder, reps, *, processes: int = 0):
        self.guarantee_of = [c.guarantee for c in checks]
        self.members: dict[str, list[int]] = {}
        for i, gid in enumerate(self.guarantee_of):
            self.members.setdefault(gid, []).append(i)
        self.folder, self.reps = Path(folder), reps
        self.entries: dict[int, dict] = {}
        self.drawn: dict[str, str] = {}
        self._futures: dict[str, object] = {}
        self._pool = SidePool(processes) if processes else None
        self._queue: queue.Queue = queue.Queue()
        self._stop = threading.Event()
        self._thread = None
        if self._pool is None:
            self._thread = threading.Thread(
                target=self._work, daemon=True, name="calcheck-pictures"
            )
            self._thread.start()

    def result(self, i: int, result) -> None:
        """Check ``i`` has its result: start its guarantee's picture once all of them have."""
        self.entries[i] = check_entry(result)
        gid = self.guarantee_of[i]
        if not all(j in self.entries for j in self.members[gid]):
            return
        if self._pool is None:
            self._queue.put(gid)
            return
        for task in self._tasks(gid):
            if task[0] in self._futures:
                continue  # a run retried on a moved-aside store: the same picture again
            try:
                self._futures[task[0]] = self._pool.submit(_draw_one, *task)
            except Exception:  # drawn at the end, where an error is reported
                logger.debug("the picture of %s was not started", gid, exc_info=True)

    def _tasks(self, gid: str) -> list[tuple]:
        entries = [self.entries[j] for j in self.members[gid]]
        return picture_tasks(entries, self.reps, self.folder)

    def _work(self) -> None:
        while not self._stop.is_set():
            try:
                gid = self._queue.get(timeout=0.1)
            except queue.Empty:
                continue
            if gid is None:
                return
            try:
                for task in self._tasks(gid):
                    name = _draw_one(*task)[1]
                    self.drawn[task[0]] = name
            except Exception:  # drawn again at the end, where an error is reported
                logger.debug("the picture of %s failed in the thread", gid, exc_info=True)

    def finish(self) -> dict[str, str]:
        """Wait for the pictures started so far; ``{guarantee id: file name}`` drawn."""
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join()
        for gid, future in self._futures.items():
            try:
                self.drawn[gid] = future.result()[1]
            except Exception:  # drawn again at the end, where an error is reported
                logger.debug("the picture of %s failed in its process", gid, exc_info=True)
        if self._pool is not None:
            self._pool.shutdown()
        logger.info("%d guarantee pictures drawn while the run simulated", len(self.drawn))
        return dict(self.drawn)

    def close(self) -> None:
        """Stop drawing (an interrupted run): those not yet handed to a process are dropped.

        A thread finishes the picture it draws; a process, those it has taken (loky queues
        up to one more per process: at most 2 x processes + 1 pictures, about 0.5 s each).
        """
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        for future in self._futures.values():
            future.cancel()  # those not started
        if self._pool is not None:
            self._pool.shutdown()
