"""Provenance: content keys, code-version stamps and the seed protocol (one home for each).

Content keys
    :func:`content_key` hashes a JSON-able description; an experiment's ``key`` is the hash
    of its description and its ``seed_key`` the first 60 bits of it. Adding, removing or
    reordering other experiments changes nothing.
Code stamps
    :func:`code_stamp` is the package version plus a hash of the source files that produce
    a result. The store and the figure cache key their entries by it, so results computed
    by other code are never reused (they are recomputed, and the run says so).
Seeds
    :func:`generator` is the one seed protocol: ``SeedSequence(root_seed, spawn_key=path)``
    with the path made of integers (strings are hashed). The engine draws block ``k`` of an
    experiment from ``generator(root_seed, seed_key, k)``; figures draw repetition ``r`` of
    a setting from ``generator(seed, "<figure>", ..., r)``.
"""

from __future__ import annotations

import functools
import hashlib
import json
from importlib import metadata
from pathlib import Path

import numpy as np

__all__ = [
    "ContentKeyed",
    "check_root_seed",
    "code_stamp",
    "content_key",
    "generator",
    "package_version",
    "source_hash",
]

_PACKAGE_ROOT = Path(__file__).resolve().parent.parent


def package_version() -> str:
    """Installed calcheck version (``0+unknown`` when run from a bare source tree)."""
    try:
        return metadata.version("calcheck")
    except metadata.PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0+unknown"


def content_key(description: dict) -> str:
    """Content hash (24 hex digits) of a JSON-able description."""
    text = json.dumps(description, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:24]


@functools.lru_cache(maxsize=256)
def source_hash(*relative_paths: str) -> str:
    """SHA-256 (16 hex digits) of the given source files or folders (``*.py`` inside).

    Paths are relative to the folder holding the calcheck packages (``"simulations/laws"``,
    ``"bounds/gr21.py"``); files are read in sorted order, with their relative names.
    """
    digest = hashlib.sha256()
    for rel in sorted(relative_paths):
        path = _PACKAGE_ROOT / rel
        files = sorted(path.rglob("*.py")) if path.is_dir() else [path]
        for f in files:
            digest.update(str(f.relative_to(_PACKAGE_ROOT)).encode())
            digest.update(f.read_bytes())
    return digest.hexdigest()[:16]


def code_stamp(*relative_paths: str) -> str:
    """``"<version>+<source hash>"`` of the code that produces a result."""
    return f"{package_version()}+{source_hash(*relative_paths)}"


class ContentKeyed:
    """``key`` and ``seed_key`` from ``self.description()`` (experiments mix this in)."""

    @property
    def key(self) -> str:
        """Content hash (hex), stable across runs and machines."""
        return content_key(self.description())

    @property
    def seed_key(self) -> int:
        """The experiment's entry in the seed path (60 bits of its key)."""
        return int(self.key[:15], 16)


def check_root_seed(root_seed) -> int:
    """A root seed is a non-negative integer (bool refused)."""
    if isinstance(root_seed, bool) or not isinstance(root_seed, int | np.integer) or root_seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {root_seed!r}")
    return int(root_seed)


def _path_entry(x) -> int:
    if isinstance(x, str):
        return int(hashlib.sha256(x.encode()).hexdigest()[:15], 16)
    if isinstance(x, bool) or not isinstance(x, int | np.integer) or x < 0:
        raise ValueError(f"seed path entries must be non-negative integers or strings, got {x!r}")
    return int(x)


def generator(root_seed: int, *path) -> np.random.Generator:
    """``default_rng(SeedSequence(root_seed, spawn_key=path))``: the one seed protocol.

    Parameters
    ----------
    root_seed : int
        Recorded root seed (non-negative).
    *path : int or str
        Where the stream sits below the root (strings are hashed to 60-bit integers).

    Returns
    -------
    numpy.random.Generator
    """
    seq = np.random.SeedSequence(
        check_root_seed(root_seed), spawn_key=tuple(_path_entry(x) for x in path)
    )
    return np.random.default_rng(seq)
