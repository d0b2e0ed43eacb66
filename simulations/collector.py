"""The main process of a run: rows from the workers, committed in batches, progress kept.

A worker returns the blocks it simulated already packed, each with its digest
(:func:`calcheck.simulations.payload.pack_block`). The main process only appends them to a
batch and inserts the batch in one transaction once it is :data:`BATCH_SECONDS` old or
:data:`BATCH_BLOCKS` long (:meth:`Collector.flush`): packing, digesting and committing each
block in the main process would cap a run at about 240 blocks/s whatever the number of
workers. ``calcheck bench`` measures the ceiling
(:func:`calcheck.theory_checks.running.bench.benchmark_main_process`).

A killed run loses the blocks of the last uncommitted batch (at most ``BATCH_SECONDS`` of
results); an interrupted one commits it on the way out. Results do not depend on the
batches: every block has its own seed.
"""

from __future__ import annotations

import time

from .payload import signals_held

__all__ = ["BATCH_BLOCKS", "BATCH_SECONDS", "Collector", "Progress"]

#: A batch of blocks is committed once it is this many seconds old ...
BATCH_SECONDS = 0.2
#: ... or holds this many blocks.
BATCH_BLOCKS = 2000


class Progress:
    """The share of a run's work (CPU time) done, for its progress line.

    Measured for the blocks done; for those left, their estimated seconds (``weight``)
    times their kind's measured / estimated ratio so far (overall ratio for a new kind).
    """

    def __init__(self, kind_of, weight, left):
        self.kind_of, self.weight = kind_of, weight
        self.cpu, self.committed = {}, {}
        self.reweigh(left)

    def reweigh(self, left):
        """Blocks left per experiment; every block weighed by the current ``weight``."""
        self.est_left = dict.fromkeys(self.kind_of.values(), 0.0)
        for key, n in left.items():
            self.est_left[self.kind_of[key]] += n * self.weight[key]
        self.est_done = {}
        for key, n in self.committed.items():
            kind = self.kind_of[key]
            self.est_done[kind] = self.est_done.get(kind, 0.0) + n * self.weight[key]

    def account(self, kind, seconds):
        """CPU seconds measured for blocks of ``kind``."""
        self.cpu[kind] = self.cpu.get(kind, 0.0) + seconds

    def commit(self, key, n=1):
        """``n`` blocks of experiment ``key`` stored."""
        kind, w = self.kind_of[key], self.weight[key]
        self.committed[key] = self.committed.get(key, 0) + n
        self.est_left[kind] = max(0.0, self.est_left[kind] - n * w)
        self.est_done[kind] = self.est_done.get(kind, 0.0) + n * w

    def share(self) -> float:
        """Work done / (done + left), in [0, 1]."""
        seen = [k for k in self.cpu if self.est_done.get(k, 0.0) > 0]
        est = sum(self.est_done[k] for k in seen)
        overall = sum(self.cpu[k] for k in seen) / est if est > 0 else 1.0
        done = sum(self.cpu.values())
        left = sum(
            w * (self.cpu[k] / self.est_done[k] if k in seen else overall)
            for k, w in self.est_left.items()
        )
        return done / (done + left) if done + left > 0 else 1.0


class Collector:
    """Receive ``(cell_key, rows, cpu_seconds)`` results; commit them in batches.

    ``rows`` are ``(block, reps, payload, digest)``; ``on_block``, ``heartbeat``,
    ``on_cell_done`` and ``bar`` (a tqdm bar) are set by the run. After each commit: ``on_block(key,
    block)`` per block, ``heartbeat(done, total, share)`` once, ``on_cell_done(key)`` for
    each experiment whose blocks are now all stored (its checks may read them).
    """

    def __init__(self, store, root_seed, stamps, n_blocks, done, kind_of, weight, total):
        self.store, self.root_seed, self.stamps = store, root_seed, stamps
        self.n_blocks, self.done, self.kind_of, self.total = n_blocks, done, kind_of, total
        self.progress = Progress(kind_of, weight, {k: n_blocks - len(d) for k, d in done.items()})
        self.on_block = self.heartbeat = self.on_cell_done = self.bar = None
        self.count = 0
        self.by_kind: dict = {}  # kind -> (blocks computed, core-seconds)
        self.pending: list = []
        self.started = time.monotonic()

    def receive(self, result) -> None:
        """One worker's result: account its time, add its rows to the batch."""
        key, rows, seconds = result
        kind = self.kind_of[key]
        blocks, spent = self.by_kind.get(kind, (0, 0.0))
        self.by_kind[kind] = (blocks + len(rows), spent + seconds)
        self.progress.account(kind, seconds)
        seed, code = self.root_seed, self.stamps[key]
        self.pending += [(seed, key, code, *row) for row in rows]
        if len(self.pending) >= BATCH_BLOCKS or time.monotonic() - self.started >= BATCH_SECONDS:
            self.flush()

    def flush(self, callbacks: bool = True) -> None:
        """Commit the batch (one transaction), then tell the callbacks.

        ``callbacks=False`` (on the way out of an interrupted run) only counts the blocks.
        """
        self.started = time.monotonic()
        if not self.pending:
            return
        rows, self.pending = self.pending, []
        completed = []
        with signals_held():  # the rows and the run's account of them stay together
            self.store.put_rows(rows)
            for row in rows:
                key, block = row[1], row[3]
                self.done[key].add(block)
                self.progress.commit(key)
                if len(self.done[key]) == self.n_blocks:
                    completed.append(key)
            self.count += len(rows)
            if self.on_block is not None:
                for row in rows:
                    self.on_block(row[1], row[3])
        if self.bar is not None:
            self.bar.update(len(rows))
        if not callbacks:
            return
        if self.heartbeat is not None:
            self.heartbeat(self.count, self.total, self.progress.share())
        if self.on_cell_done is not None:
            for key in completed:
                self.on_cell_done(key)
