"""Embedded on-disk store of Monte Carlo results (sqlite3, blocks committed in batches).

A block is identified by ``(root_seed, cell_key, code, block_index)``: the seed, the
experiment's content key, the code stamp of the code that simulated it (package version +
source hash, :mod:`calcheck.simulations.provenance`) and its index. Its payload is a set of
named numpy arrays in calcheck's block format (:func:`_pack`: a JSON header and the arrays'
bytes; lossless, no pickle), deflated with zlib unless the run deletes its blocks once their
results are recorded (``compress=False``); payloads of older stores (``.npz``) are still read.
Because every block is a deterministic function of its identity, a run that is killed and
started again recomputes only the missing blocks and ends with the same numbers; blocks
written by other code are never read.

A run writes blocks in batches: its workers pack each block and compute its digest
(:func:`pack_block`), and the main process inserts the rows of a batch in one transaction
(:meth:`ResultStore.put_rows`), with SIGINT and SIGTERM held back until the transaction ends.
A killed run loses the blocks of its last uncommitted batch, never more, and never half a
block.

Every block carries a SHA-256 digest of its identity and payload, and its replicate count;
both are verified when the run decides which blocks it can reuse. A block that does not
match (truncated, altered, or copied from another cell) is deleted, recomputed and counted
(:attr:`ResultStore.damaged`). File stores use SQLite's write-ahead log with a busy timeout,
so a reader (another process querying the store) never makes a running writer fail.

Besides blocks, the store keeps *results*: a check's evaluated result as text under a content
key (:mod:`calcheck.theory_checks.running.records` says what the key covers), with its digest. Once
every check of a run that reads a cell has its result recorded, the run may drop the cell's blocks
(:meth:`ResultStore.drop_blocks`) and :meth:`ResultStore.compact` returns the space to the
file system.

A store file without write permission opens read-only: a report can be re-rendered from it
when it already holds every block (:attr:`ResultStore.read_only`). SQLite errors never leave
this module raw: a damaged file raises :class:`StoreDamaged`, a full disk :class:`StoreFull`
(both ``ValueError`` subclasses whose message says what to do), and so does any I/O
error of SQLite's (a file-size limit, a disk quota, a failing device).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
from functools import wraps
from pathlib import Path

import numpy as np

from .payload import _decoded, _digest, pack_block, signals_held

__all__ = ["ResultStore", "StoreDamaged", "StoreFull", "pack_block", "signals_held"]

logger = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS blocks (
    root_seed TEXT NOT NULL,
    cell_key TEXT NOT NULL,
    code TEXT NOT NULL,
    block INTEGER NOT NULL,
    reps INTEGER NOT NULL,
    payload BLOB NOT NULL,
    digest TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (root_seed, cell_key, code, block)
);
CREATE TABLE IF NOT EXISTS cells (
    cell_key TEXT PRIMARY KEY,
    description TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS results (
    key TEXT PRIMARY KEY,
    check_id TEXT NOT NULL,
    payload TEXT NOT NULL,
    digest TEXT NOT NULL
);
"""


class StoreDamaged(ValueError):
    """The store file is damaged or not a calcheck store (its message says what to do)."""


class StoreFull(ValueError):
    """No room to write the store: a full disk, a file-size limit or a quota (blocks kept).

    Also raised for SQLite's other I/O errors: the blocks already committed are kept.
    """


#: SQLite's primary result codes of a write that found no room: SQLITE_FULL (no space;
#: some systems report a quota so), SQLITE_IOERR (a write refused: a file-size limit gives
#: EFBIG, a quota EDQUOT, a failing device EIO, all reported as "disk I/O error").
_SQLITE_FULL, _SQLITE_IOERR = 13, 10


def _no_room(exc: sqlite3.Error) -> bool:
    """Whether SQLite failed for want of room (or of a working disk) to write the store."""
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code & 0xFF in (_SQLITE_FULL, _SQLITE_IOERR)
    text = str(exc)
    return "full" in text or "disk I/O error" in text


def _translated(method):
    """Turn SQLite's errors into :class:`StoreDamaged` / :class:`StoreFull` with advice."""

    @wraps(method)
    def wrapper(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except sqlite3.OperationalError as exc:
            text = str(exc)
            if _no_room(exc):
                said = (
                    "the disk is full while writing the store"
                    if "full" in text
                    else "no room to write the store"
                )
                raise StoreFull(
                    f"{said} {self.path!r} ({text}: no space, a file-size limit (ulimit -f) "
                    "or a disk quota); the blocks stored so far are kept: free space (or "
                    "raise the limit) and rerun the same command to resume"
                ) from None
            if "readonly" in text or "read-only" in text:
                raise ValueError(
                    f"the store {self.path!r} is read-only and the run needs to write to it; "
                    "make it writable or choose another --out"
                ) from None
            raise
        except sqlite3.DatabaseError as exc:
            raise StoreDamaged(
                f"the store {self.path!r} is damaged or not a calcheck store ({exc}); move it "
                "aside (calcheck run --move-damaged-store does it) and rerun: its blocks will "
                "be recomputed"
            ) from None

    return wrapper


class ResultStore:
    """Blocks of replicate results in an sqlite3 file.

    Parameters
    ----------
    path : str or Path
        Database file; its folder is created. ``":memory:"`` keeps it in memory.
    compress : bool, default True
        Compress the payloads it writes (zlib). A run that deletes its blocks once their
        checks' results are recorded writes them uncompressed: they live for seconds or
        minutes, and compressing them cost its main process more than storing them.
    """

    def __init__(self, path, *, compress: bool = True):
        if not isinstance(compress, bool):
            raise ValueError(f"compress must be True or False, got {compress!r}")
        self.compress = compress
        self.path = str(path)
        #: Whether the file lacks write permission (opened read-only: nothing is written).
        self.read_only = (
            self.path != ":memory:"
            and os.path.exists(self.path)
            and not (os.access(self.path, os.W_OK))
        )
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        #: ``(root_seed, cell_key, block)`` of blocks found damaged and deleted.
        self.damaged: list[tuple] = []
        self._open()

    @classmethod
    def reader(cls, path) -> ResultStore:
        """The store at ``path`` opened to read while another process writes it.

        For a check evaluated beside a run (:mod:`calcheck.theory_checks.running.evaluation`):
        read-only (nothing is written, damaged blocks included: they raise on :meth:`load`),
        and, unlike a store without write permission, not immutable: sqlite's write-ahead
        log shows each read what the writer has committed by then.
        """
        store = cls.__new__(cls)
        store.compress, store.path, store.damaged = True, str(path), []
        store.read_only = True
        store._open_reading()
        return store

    @_translated
    def _open_reading(self):
        uri = Path(self.path).resolve().as_uri() + "?mode=ro"
        self._con = sqlite3.connect(uri, uri=True, timeout=60.0)
        self._con.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()

    @_translated
    def _open(self):
        if self.read_only:
            # immutable: no locks, no -shm/-wal files (the folder may be read-only too)
            uri = Path(self.path).resolve().as_uri() + "?mode=ro&immutable=1"
            self._con = sqlite3.connect(uri, uri=True)
            self._con.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
            return
        # a busy timeout and the write-ahead log let readers and the writer coexist
        self._con = sqlite3.connect(self.path, timeout=60.0)
        if self.path != ":memory:":
            self._con.execute("PRAGMA journal_mode=WAL")
            # no fsync per block: a killed process loses nothing committed; an OS crash or
            # power loss may lose the last blocks (never corrupt the file): a rerun redoes them
            self._con.execute("PRAGMA synchronous=NORMAL")
        columns = {r[1] for r in self._con.execute("PRAGMA table_info(blocks)")}
        if columns and "code" not in columns:
            self._con.close()
            raise ValueError(
                f"the store {self.path!r} was written by a calcheck without code "
                "stamps; move it aside or choose another output folder"
            )
        if columns and "digest" not in columns:  # older stores: their blocks get recomputed
            self._con.execute("ALTER TABLE blocks ADD COLUMN digest TEXT NOT NULL DEFAULT ''")
        self._con.executescript(_SCHEMA)
        self._con.commit()

    def close(self):
        """Close the database connection."""
        self._con.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @_translated
    def block_count(self) -> int:
        """Blocks stored (of every cell, seed and code stamp)."""
        return self._con.execute("SELECT COUNT(*) FROM blocks").fetchone()[0]

    @_translated
    def done_blocks(self, root_seed, cell_key: str, code: str) -> set[int]:
        """Indices of the sound blocks stored for this experiment, seed and code stamp.

        Each block's digest and replicate count are verified; a damaged block is deleted
        (so that it is recomputed), logged and added to :attr:`damaged`.
        """
        rows = self._con.execute(
            "SELECT block, reps, digest, payload FROM blocks "
            "WHERE root_seed = ? AND cell_key = ? AND code = ?",
            (str(root_seed), cell_key, code),
        ).fetchall()
        good = set()
        for block, reps, digest, payload in rows:
            if self._sound(root_seed, cell_key, code, block, reps, digest, payload):
                good.add(block)
                continue
            logger.warning(
                "damaged block %s of cell %s (seed %s): recomputing", block, cell_key, root_seed
            )
            self.damaged.append((str(root_seed), cell_key, int(block)))
            if self.read_only:
                continue
            with self._con:
                self._con.execute(
                    "DELETE FROM blocks WHERE root_seed = ? AND cell_key = ? AND code = ? "
                    "AND block = ?",
                    (str(root_seed), cell_key, code, int(block)),
                )
        return good

    @staticmethod
    def _sound(root_seed, cell_key, code, block, reps, digest, payload) -> bool:
        if digest != _digest(root_seed, cell_key, code, block, reps, payload):
            return False
        return _decoded(payload, reps) is not None

    @_translated
    def stale_blocks(self, root_seed, cell_key: str, code: str) -> set[int]:
        """Indices of blocks of this experiment and seed stored by *other* code stamps."""
        rows = self._con.execute(
            "SELECT block FROM blocks WHERE root_seed = ? AND cell_key = ? AND code != ?",
            (str(root_seed), cell_key, code),
        )
        return {r[0] for r in rows}

    @_translated
    def describe_cell(self, cell_key: str, description: dict):
        """Record what a cell key stands for (for people reading the file)."""
        if self.read_only:
            return
        with self._con:
            self._con.execute(
                "INSERT OR IGNORE INTO cells VALUES (?, ?)",
                (cell_key, json.dumps(description, sort_keys=True)),
            )

    @_translated
    def put(self, root_seed, cell_key: str, code: str, block: int, arrays: dict):
        """Store one block in its own transaction (atomic: all of it or nothing)."""
        arrays = {k: np.asarray(v) for k, v in arrays.items()}
        row = pack_block(root_seed, cell_key, code, block, arrays, self.compress)
        self.put_rows([(root_seed, cell_key, code, block, *row)])

    @_translated
    def put_rows(self, rows):
        """Store packed blocks in one transaction: all of them or none.

        Each row is ``(root_seed, cell_key, code, block, reps, payload, digest)``, the last
        three from :func:`pack_block`. SIGINT and SIGTERM are held back until it ends.
        """
        rows = [(str(r[0]), r[1], r[2], int(r[3]), int(r[4]), r[5], r[6]) for r in rows]
        with signals_held(), self._con:
            self._con.executemany(
                "INSERT OR REPLACE INTO blocks VALUES (?, ?, ?, ?, ?, ?, ?)", rows
            )

    @_translated
    def load(self, root_seed, cell_key: str, code: str, blocks) -> dict:
        """Concatenate the named arrays of the given blocks, in block order."""
        wanted = [int(b) for b in blocks]
        if not wanted:
            raise ValueError(f"no blocks asked of cell {cell_key} (seed {root_seed})")
        rows = {  # one query; a store with more blocks of the cell than asked reads no more
            b: (reps, digest, payload)
            for b, reps, digest, payload in self._con.execute(
                "SELECT block, reps, digest, payload FROM blocks WHERE root_seed = ? AND "
                "cell_key = ? AND code = ? AND block BETWEEN ? AND ?",
                (str(root_seed), cell_key, code, min(wanted), max(wanted)),
            )
        }
        parts = []
        for b in wanted:
            if b not in rows:
                raise ValueError(f"block {b} of cell {cell_key} (seed {root_seed}) is not stored")
            reps, digest, payload = rows[b]
            arrays = None
            if digest == _digest(root_seed, cell_key, code, b, reps, payload):
                arrays = _decoded(payload, reps)
            if arrays is None:
                raise ValueError(
                    f"block {b} of cell {cell_key} (seed {root_seed}) is damaged; rerun to "
                    "recompute it"
                )
            parts.append(arrays)
        return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}

    @_translated
    def set_meta(self, key: str, value):
        """Record a JSON-able value under ``key``."""
        if self.read_only:
            return
        with self._con:
            self._con.execute(
                "INSERT OR REPLACE INTO meta VALUES (?, ?)",
                (key, json.dumps(value, sort_keys=True)),
            )

    @_translated
    def get_meta(self, key: str, default=None):
        """The value recorded under ``key`` (``default`` if none)."""
        row = self._con.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return default if row is None else json.loads(row[0])

    @_translated
    def put_result(self, key: str, check_id: str, text: str):
        """Record a check's result (text) under its content key, with a digest."""
        if self.read_only:
            return
        digest = hashlib.sha256(f"{key}\0{check_id}\0{text}".encode()).hexdigest()
        with self._con:
            self._con.execute(
                "INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?)", (key, check_id, text, digest)
            )

    @_translated
    def get_result(self, key: str) -> str | None:
        """The result text recorded under ``key``; None if absent or damaged (then deleted)."""
        row = self._con.execute(
            "SELECT check_id, payload, digest FROM results WHERE key = ?", (key,)
        ).fetchone()
        if row is None:
            return None
        check_id, text, digest = row
        if digest == hashlib.sha256(f"{key}\0{check_id}\0{text}".encode()).hexdigest():
            return text
        logger.warning("damaged result record of %s: recomputing it", check_id)
        self.damaged.append(("result", check_id, key))
        if not self.read_only:
            with self._con:
                self._con.execute("DELETE FROM results WHERE key = ?", (key,))
        return None

    @_translated
    def drop_blocks(self, root_seed, cell_key: str, code: str) -> int:
        """Delete the blocks of one experiment, seed and code stamp; how many were deleted."""
        if self.read_only:
            return 0
        with self._con:
            cur = self._con.execute(
                "DELETE FROM blocks WHERE root_seed = ? AND cell_key = ? AND code = ?",
                (str(root_seed), cell_key, code),
            )
        return cur.rowcount

    @_translated
    def compact(self, min_free_fraction: float = 0.25) -> bool:
        """Return deleted pages to the file system (VACUUM) if enough of the file is free."""
        if self.read_only or self.path == ":memory:":
            return False
        pages = self._con.execute("PRAGMA page_count").fetchone()[0]
        free = self._con.execute("PRAGMA freelist_count").fetchone()[0]
        if not pages or free < min_free_fraction * pages:
            return False
        self._con.execute("VACUUM")
        self._con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return True
