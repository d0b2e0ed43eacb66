"""A block's payload: calcheck's block format, its digest, and writes that hold signals back.

A payload is a set of named numpy arrays: ``BLOCK_MAGIC``, the length of a JSON header (each
array's name, dtype and shape), the header, then the arrays' bytes, deflated with zlib when
asked. Lossless and without pickle, like ``.npz``, but packed and read in microseconds (a
zip container per block cost a run's main process more than storing the block). Payloads of
stores written before this format (``.npz``, starting with ``PK``) are still read.
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import math
import signal
import struct
import threading
import zipfile
import zlib
from contextlib import contextmanager

import numpy as np

__all__ = ["BLOCK_MAGIC", "pack_block", "signals_held"]

#: First bytes of a payload in calcheck's block format (older stores hold ``.npz`` payloads,
#: which start with ``PK``, and are still read).
BLOCK_MAGIC = b"\x93CALCHECK-BLOCK-1\n"
_HEAD = struct.Struct("<I")


def _pack(arrays: dict, compress: bool = True) -> bytes:
    """Named arrays as one payload: a JSON header (names, dtypes, shapes), then their bytes.

    Lossless and without pickle, like ``.npz``, but written and read in microseconds: a
    zip container per block cost a run's main process more than storing the block did.
    ``compress`` deflates the bytes (zlib), about half the size for 3-80 times the cost.
    """
    names, chunks = [], []
    for name, value in arrays.items():
        a = np.ascontiguousarray(value)
        if a.dtype.hasobject or a.dtype.fields is not None:
            raise ValueError(f"array {name!r} has dtype {a.dtype}: only plain numeric arrays")
        names.append([str(name), a.dtype.str, list(a.shape)])
        chunks.append(a.tobytes())
    body = b"".join(chunks)
    head = json.dumps({"arrays": names, "zlib": bool(compress)}).encode()
    return b"".join(
        (BLOCK_MAGIC, _HEAD.pack(len(head)), head, zlib.compress(body, 1) if compress else body)
    )


def pack_block(root_seed, cell_key: str, code: str, block: int, arrays: dict, compress=True):
    """``(reps, payload, digest)`` of one block: the store's row, made where it is simulated.

    The workers of a run call this, so that the run's main process only inserts rows.
    """
    reps = len(next(iter(arrays.values())))
    payload = _pack(arrays, compress)
    return reps, payload, _digest(root_seed, cell_key, code, block, reps, payload)


def _digest(root_seed, cell_key, code, block, reps, payload: bytes) -> str:
    head = json.dumps([str(root_seed), cell_key, code, int(block), int(reps)]).encode()
    return hashlib.sha256(head + b"\0" + payload).hexdigest()


def _header(blob) -> tuple[tuple, bool, int]:
    """The arrays a block-format payload declares: ``(arrays, deflated, start of the body)``.

    Each array is ``(name, dtype, shape)``, checked: a plain numeric dtype, a shape of
    sizes. Raises ValueError for a header that is not one.
    """
    start = len(BLOCK_MAGIC) + _HEAD.size
    (n_head,) = _HEAD.unpack_from(blob, len(BLOCK_MAGIC))
    if start + n_head > len(blob):
        raise ValueError(f"payload header of {n_head} bytes runs past the payload's end")
    return (*_parsed_header(bytes(blob[start : start + n_head])), start + n_head)


@functools.lru_cache(maxsize=256)
def _parsed_header(text: bytes) -> tuple[tuple, bool]:
    # the blocks of an experiment share one header: it is parsed and checked once
    head = json.loads(text)
    if not isinstance(head, dict) or not isinstance(head.get("arrays"), list):
        raise ValueError("payload header names no arrays")
    arrays = []
    for entry in head["arrays"]:
        name, dtype, shape = entry  # a ValueError or TypeError for another form
        dtype = np.dtype(dtype)
        if dtype.hasobject or dtype.fields is not None:
            raise ValueError(f"array {name!r} has dtype {dtype}")
        if not isinstance(shape, list) or not all(
            isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in shape
        ):
            raise ValueError(f"array {name!r} has shape {shape!r:.80}")
        arrays.append((name, dtype, tuple(shape)))
    return tuple(arrays), bool(head.get("zlib"))


def _inflated(body, size: int) -> bytes:
    """``body`` inflated (zlib), refused as soon as it holds more than ``size`` bytes.

    A crafted block that inflates to hundreds of megabytes is refused after ``size + 1``
    bytes: never inflated whole (its header declares what a sound block holds).
    """
    inflate = zlib.decompressobj()
    out = inflate.decompress(body, size + 1)
    if len(out) > size or inflate.unconsumed_tail:
        raise ValueError(f"payload inflates to more than the {size} bytes its header declares")
    if not inflate.eof:
        raise ValueError("payload's deflated bytes end before their stream does")
    return out


def _unpack(blob: bytes) -> dict:
    if not blob.startswith(BLOCK_MAGIC):  # a store written before the block format
        with np.load(io.BytesIO(blob), allow_pickle=False) as data:
            return {k: data[k] for k in data.files}
    declared, deflated, start = _header(blob)
    size = sum(math.prod(shape) * dtype.itemsize for _, dtype, shape in declared)
    body = memoryview(blob)[start:]
    if deflated:
        body = _inflated(body, size)
    if size != len(body):
        raise ValueError(f"payload holds {len(body)} bytes of arrays, its header says {size}")
    arrays, at = {}, 0
    for name, dtype, shape in declared:
        count = math.prod(shape)
        arrays[name] = np.frombuffer(body, dtype, count, at).reshape(shape)
        at += count * dtype.itemsize
    return arrays


def _declares_reps(payload, reps) -> bool:
    """Whether a block-format payload's header declares ``reps`` rows in every array.

    Read before anything is inflated: a header declaring more rows than the block's
    replicates (a block crafted to inflate far) is refused at no cost.
    """
    if not payload.startswith(BLOCK_MAGIC):
        return True  # an .npz payload: its arrays are read, then counted
    declared, _, _ = _header(payload)
    return bool(declared) and all(shape[:1] == (reps,) for _, _, shape in declared)


#: What reading a malformed payload raises (np.load of bytes that are not an .npz). Named, so
#: that an interruption (KeyboardInterrupt, or the CLI's own) is never taken for a damaged
#: block: catching ``Exception`` here once deleted sound blocks as "damaged" on Ctrl-C.
_MALFORMED = (
    ValueError,
    TypeError,
    OSError,
    EOFError,
    KeyError,
    IndexError,
    struct.error,
    zipfile.BadZipFile,
    zlib.error,
)


def _decoded(payload: bytes, reps) -> dict | None:
    """The arrays of a payload whose digest was verified, or None if they are malformed."""
    try:
        if not _declares_reps(payload, reps):
            return None
        arrays = _unpack(payload)
    except _MALFORMED:
        return None
    if not arrays or not all(len(a) == reps for a in arrays.values()):
        return None
    return arrays


@contextmanager
def signals_held():
    """SIGINT and SIGTERM held back (pending, not lost) while a write completes.

    An interruption raised in the middle of a write left numpy's zip writer half-open (its
    finalizer then printed "Exception ignored in ...") and could split a block's rows from
    the run's own account of them. Held back, the signal is delivered the moment the block
    ends. Only the main thread's mask changes (signals reach Python there).
    """
    if not hasattr(signal, "pthread_sigmask") or (
        threading.current_thread() is not threading.main_thread()
    ):
        yield
        return
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
