"""``calcheck run``'s progress: its estimate line, its heartbeat, and the time left.

The start estimate is the timing probes' extrapolation of the simulation's CPU time over the
workers (:class:`calcheck.simulations.engine.RunEstimate`) plus the report after the last
block (``REPORT_SECONDS`` and ``PICTURE_SECONDS`` per guarantee picture over the workers).
While the run goes, :class:`Clock` blends that estimate with the measured rate.
"""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

from ..search.progress import format_duration

__all__ = [
    "LIMIT_BYTES",
    "LIMIT_SECONDS",
    "PICTURE_SECONDS",
    "REPORT_SECONDS",
    "Clock",
    "confirm",
    "heartbeat",
]

#: A run estimated beyond 6 hours or 20 GB of store (or beyond the free disk) needs --yes.
LIMIT_SECONDS = 6 * 3600.0
LIMIT_BYTES = 20 * 10**9

#: CPU seconds of one guarantee's picture (drawn while the run simulates, so they share the
#: workers' cores), and seconds of the report's files after the last block: what the start
#: estimate adds to the simulation's (measured on the idle 2-core Xeon, 2026-11-27: 63
#: pictures in 30 s on one core, the report's files in about 2 s).
PICTURE_SECONDS = 0.5
REPORT_SECONDS = 2.0


class Clock:
    """The run's time left: the start estimate, then more and more the measured rate.

    At the estimate (after the timing probes) the run expects ``elapsed + simulation +
    report`` seconds in all. Later, the rate extrapolates the share of the simulation's
    work done (CPU time, :class:`calcheck.simulations.collector.Progress`) to its end; the
    time left is ``share * by_rate + (1 - share) * by_start``: early on, when the rate has
    seen a few cheap cells, the start estimate carries it. The report's seconds are added
    to both.
    """

    def __init__(self, report_seconds: float, start: float | None = None):
        # ``start``: when the command started (its imports count), else now
        self.start = time.monotonic() if start is None else start
        self.report = report_seconds
        self.expected = None  # total seconds expected at the estimate
        self.estimated_at = self.simulation = None
        #: ``[seconds since the start, share of the work, seconds left]`` per progress line
        self.trace: list = []
        self.first_block = self.last_block = None  # seconds since the start

    def block(self, now: float, done: int, total: int) -> None:
        """A batch of blocks stored: remember when the first and the last one were."""
        if self.first_block is None:
            self.first_block = round(now - self.start, 2)
        if done == total:
            self.last_block = round(now - self.start, 2)

    def expect(self, simulation_seconds: float) -> float:
        """The total the run expects from now: the start estimate's wall time."""
        self.estimated_at = time.monotonic() - self.start
        self.simulation = simulation_seconds
        self.expected = self.estimated_at + simulation_seconds + self.report
        return simulation_seconds + self.report

    def left(self, now: float, by_rate: float, share: float) -> float:
        """Seconds left, from the rate's extrapolation of the simulation and the share done."""
        by_rate += self.report
        if self.expected is None:
            return by_rate
        by_start = max(0.0, self.expected - (now - self.start))
        left = share * by_rate + (1 - share) * by_start
        self.trace.append([round(now - self.start, 2), round(share, 4), round(left, 2)])
        return left

    def record(self) -> dict:
        """What the run estimated, for ``results.json`` (a measured run checks it)."""
        return {
            "estimated_at_seconds": self.estimated_at,
            "simulation_estimate_seconds": self.simulation,
            "report_estimate_seconds": self.report,
            "expected_total_seconds": self.expected,
            "first_block_stored_at_seconds": self.first_block,
            "last_block_stored_at_seconds": self.last_block,
            "progress_lines": self.trace,
        }


def heartbeat(every: float = 30.0, clock: Clock | None = None, lines: bool = True):
    """A line on stderr every ``every`` seconds where no progress bar is drawn (not a tty).

    Rate and time left are measured from the first block this process stores: not from
    its start (a resumed run first checks every stored block, which may take a minute and
    is no simulation), and not over blocks read from the store. A change of the work's
    weights (after the timing blocks) restarts the measurement. ``clock`` blends the
    time left with the start estimate (:class:`Clock`) and keeps its trace; ``lines``
    False (a progress bar is drawn) prints nothing.
    """
    start = last = time.monotonic()
    origin = None  # (time, blocks, share of the work) at the first block stored

    def beat(done, total, work_done=None):
        nonlocal last, origin
        now = time.monotonic()
        if clock is not None:
            clock.block(now, done, total)
        share = done / total if work_done is None else work_done
        if origin is None or share < origin[2]:
            origin = (now, done, share)
        if now - last >= every or done == total:
            last = now
            t0, done0, share0 = origin
            rate = (done - done0) / (now - t0) if now > t0 else 0.0
            # time left from the share of the estimated work done (blocks differ in cost by
            # orders of magnitude, so a block count would promise minutes too few)
            left = ""
            if 0 < done < total and share > share0 and now > t0:
                by_rate = (now - t0) * (1 - share) / (share - share0)
                seconds = by_rate if clock is None else clock.left(now, by_rate, share)
                left = f", about {format_duration(seconds)} left"
            work = (
                f", {100 * share:.0f}% of the work"
                if work_done is not None and done < total
                else ""
            )
            msg = (
                f"{done} of {total} blocks stored ({100 * done / total:.0f}%){work}, "
                f"{rate:.1f} blocks/s, {format_duration(now - start)}{left}"
            )
            if lines:
                print(f"calcheck: {msg}; a killed run resumes", file=sys.stderr, flush=True)

    return beat


def confirm(
    confirmed: bool,
    out: Path,
    keep: bool = True,
    clock: Clock | None = None,
    workers: str | None = None,
):
    """The ``on_estimate`` hook: print the estimate, refuse beyond the limits unless --yes.

    The store estimate counts every block; without ``--keep-replicates`` blocks are deleted
    as results are recorded, so it bounds the peak and the final store is far smaller.
    ``workers`` says how many workers and why (the run's first progress line says it).
    """

    def check(estimate):
        free = shutil.disk_usage(out).free
        seconds = estimate.seconds if clock is None else clock.expect(estimate.seconds)
        line = (
            f"calcheck: {estimate.blocks} more blocks to simulate ({estimate.stored} stored, "
            f"{estimate.calibration_blocks} of them timed): about {format_duration(seconds)} on "
            + (f"{estimate.workers} worker(s)" if workers is None else workers)
            + (
                f" (simulation {format_duration(estimate.seconds)}, then the report)"
                if clock is not None
                else ""
            )
            + ", "
            + ("about " if keep else "at most ")
            + f"{estimate.bytes / 1e6:.0f} MB of store"
            + ("" if keep else " while it runs (blocks are deleted once results are recorded)")
            + f" ({free / 1e9:.0f} GB free)"
        )
        print(line, file=sys.stderr, flush=True)
        over = []
        if estimate.seconds > LIMIT_SECONDS:
            over.append(f"longer than {LIMIT_SECONDS / 3600:.0f} h")
        if estimate.bytes > LIMIT_BYTES:
            over.append(f"more than {LIMIT_BYTES / 1e9:.0f} GB")
        if estimate.bytes > free:
            over.append(f"more than the {free / 1e9:.1f} GB free in {out}")
        if over and not confirmed:
            raise ValueError(
                f"the run is estimated {' and '.join(over)}; rerun with --yes to run it "
                "anyway, or lower --reps (the calibration blocks are stored and reused)"
            )

    return check
