"""The report's pictures drawn while the run simulates, as each guarantee's checks end.

A picture (:mod:`.pictures`) takes about half a second to draw, and a quick run has about
sixty: drawn after the last block they were most of what a run did after it. The run's main
process mostly waits for its workers meanwhile, so a thread of its own draws each
guarantee's picture as soon as the last of its checks is evaluated (or read from the store's
records), from the same entries ``results.json`` gets. What is left at the end (nothing,
unless a picture failed in the thread, where its error is only logged) is drawn then, and
an error there is reported. The pictures are the same files either way.
"""

from __future__ import annotations

import logging
import queue
import threading
from pathlib import Path

from .pictures import _draw_one, picture_tasks
from .report import check_entry

__all__ = ["PictureDrawer"]

logger = logging.getLogger(__name__)


class PictureDrawer:
    """Draw guarantees' pictures in a background thread as their checks' results come.

    ``checks`` are the run's checks (in order), ``folder`` the pictures' folder, ``reps``
    the replicates per cell (the pictures say it). Call :meth:`result` with each check's
    index and result, :meth:`finish` at the end (it waits for the thread and returns
    ``{guarantee id: file name}``), :meth:`close` on the way out of an interrupted run.
    """

    def __init__(self, checks: list, folder, reps):
        self.guarantee_of = [c.guarantee for c in checks]
        self.members: dict[str, list[int]] = {}
        for i, gid in enumerate(self.guarantee_of):
            self.members.setdefault(gid, []).append(i)
        self.folder, self.reps = Path(folder), reps
        self.entries: dict[int, dict] = {}
        self.drawn: dict[str, str] = {}
        self._queue: queue.Queue = queue.Queue()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._work, daemon=True, name="calcheck-pictures")
        self._thread.start()

    def result(self, i: int, result) -> None:
        """Check ``i`` has its result: queue its guarantee's picture once all of them have."""
        self.entries[i] = check_entry(result)
        gid = self.guarantee_of[i]
        if all(j in self.entries for j in self.members[gid]):
            self._queue.put(gid)

    def _work(self) -> None:
        while not self._stop.is_set():
            try:
                gid = self._queue.get(timeout=0.1)
            except queue.Empty:
                continue
            if gid is None:
                return
            entries = [self.entries[j] for j in self.members[gid]]
            try:
                for task in picture_tasks(entries, self.reps, self.folder):
                    name = _draw_one(*task)[1]
                    self.drawn[task[0]] = name
            except Exception:  # drawn again at the end, where an error is reported
                logger.debug("the picture of %s failed in the thread", gid, exc_info=True)

    def finish(self) -> dict[str, str]:
        """Wait for the pictures queued so far; ``{guarantee id: file name}`` drawn."""
        self._queue.put(None)
        self._thread.join()
        logger.info("%d guarantee pictures drawn while the run simulated", len(self.drawn))
        return dict(self.drawn)

    def close(self) -> None:
        """Stop the thread (an interrupted run): the picture being drawn is finished."""
        self._stop.set()
        self._thread.join(timeout=5)
