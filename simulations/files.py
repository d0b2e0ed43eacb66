"""Atomic file output: the one home of "write to a temporary file, then rename".

A report, a results file or an index written in place is left truncated if the process dies
or the disk fills mid-write, and the previous good file is gone. Writing to a temporary file
in the same folder and renaming it over the target (atomic on POSIX and Windows) leaves
either the old file or the new one, never half of one.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path

__all__ = ["atomic_write_text", "json_text", "read_back", "writable_folder"]


def _finite(x):
    """JSON has no NaN or infinity: NaN -> null, +-inf -> "inf"/"-inf"; numpy -> Python."""
    if hasattr(x, "tolist") and not isinstance(x, str | bytes):  # numpy arrays and scalars
        x = x.tolist()
    if isinstance(x, float) and not math.isfinite(x):
        return None if math.isnan(x) else ("inf" if x > 0 else "-inf")
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_finite(v) for v in x]
    return x


def json_text(obj, **kwargs) -> str:
    """``json.dumps`` that always emits valid JSON (the one home of that convention).

    Non-finite floats become ``null`` (NaN) or the strings ``"inf"`` / ``"-inf"``; numpy
    values become Python ones; anything else unknown is written with ``str``.
    """
    kwargs.setdefault("default", str)
    return json.dumps(_finite(obj), allow_nan=False, **kwargs)


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_UMASK = _current_umask()


def atomic_write_text(path, text: str) -> Path:
    """Write ``text`` to ``path`` atomically (UTF-8); returns the path.

    Raises
    ------
    OSError
        If the folder is not writable or the disk is full; the target is then untouched and
        the temporary file removed.
    """
    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        # mkstemp makes the file private (0600): give it the mode a plain open would
        os.chmod(tmp, target.stat().st_mode & 0o777 if target.exists() else 0o666 & ~_UMASK)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        if exc.filename is None:  # say which output failed (fsync and write do not)
            raise OSError(exc.errno, exc.strerror, str(target)) from exc
        raise
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def writable_folder(path, flag: str, files=()) -> Path:
    """The folder ``path``, created if needed; ValueError naming ``flag`` if it cannot be.

    Checked before anything is simulated: a file in the way, a path under a file, a folder
    without write permission, or a directory where one of ``files`` (the outputs the
    command writes there, perhaps only at its end) will go.
    """
    out = Path(path)
    if out.exists() and not out.is_dir():
        raise ValueError(f"{flag} {str(out)!r} is a file, not a folder; choose a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=out, prefix=".calcheck-probe-"):
            pass
    except (NotADirectoryError, FileExistsError):
        raise ValueError(
            f"{flag} {str(out)!r} is under a file, not a folder; choose a folder"
        ) from None
    except OSError as exc:
        raise ValueError(f"cannot write in {flag} {str(out)!r}: {exc.strerror}") from None
    for name in files:
        if (out / name).is_dir():
            raise ValueError(
                f"{flag} {str(out)!r} holds a folder {name!r} where the command writes a file; "
                "move it away or choose another folder"
            )
    return out


@contextmanager
def read_back(path, what: str):
    """Read an output of an earlier run: its content errors name the file and what to do.

    Inside the block, reading ``path`` (JSON the command wrote before, perhaps edited by
    hand since) and using its content raise ``ValueError`` naming the file, not a bare
    ``JSONDecodeError`` / ``KeyError`` / ``TypeError`` from deep in the code.
    """
    try:
        yield Path(path)
    except (ValueError, KeyError, TypeError, AttributeError, IndexError) as exc:
        detail = f"{type(exc).__name__}: {exc}" if not isinstance(exc, ValueError) else exc
        raise ValueError(
            f"{str(path)!r} is not {what} as calcheck wrote it ({detail}); delete it (it is "
            "rewritten) or choose another --out"
        ) from None
    except IsADirectoryError:
        raise ValueError(
            f"{str(path)!r} is a folder where calcheck keeps {what}; move it away or choose "
            "another --out"
        ) from None
