"""Atomic file output: the one home of "write to a temporary file, then rename".

A report, a results file or an index written in place is left truncated if the process dies
or the disk fills mid-write, and the previous good file is gone. Writing to a temporary file
in the same folder and renaming it over the target (atomic on POSIX and Windows) leaves
either the old file or the new one, never half of one.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["atomic_write_text"]


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
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target
