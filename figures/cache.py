"""Cache of computed figure data: one ``.npz`` (arrays) and one ``.json`` (metadata) per key.

The key hashes the figure id, its parameters and the calcheck version, so changing any of
them recomputes; the metadata records the seed, the parameters and the version.
"""

from __future__ import annotations

import hashlib
import json
import logging
from importlib import metadata
from pathlib import Path

import numpy as np

__all__ = ["cached", "package_version"]

logger = logging.getLogger(__name__)


def package_version() -> str:
    try:
        return metadata.version("calcheck")
    except metadata.PackageNotFoundError:  # running from a source tree
        return "0+unknown"


def cached(name: str, params: dict, compute, cache_dir) -> dict:
    """Return ``compute()`` (a dict of arrays), reading or writing it in ``cache_dir``."""
    record = {"name": name, "params": params, "version": package_version()}
    text = json.dumps(record, sort_keys=True, default=str)
    key = hashlib.sha256(text.encode()).hexdigest()[:16]
    folder = Path(cache_dir)
    data_path = folder / f"{name}-{key}.npz"
    meta_path = folder / f"{name}-{key}.json"
    if data_path.is_file() and meta_path.is_file():
        logger.info("cache hit %s", data_path)
        with np.load(data_path, allow_pickle=False) as f:
            return {k: f[k] for k in f.files}
    arrays = compute()
    folder.mkdir(parents=True, exist_ok=True)
    tmp = data_path.with_suffix(".tmp.npz")
    np.savez_compressed(tmp, **arrays)
    tmp.replace(data_path)  # atomic: a killed run never leaves a half-written cache entry
    meta_path.write_text(json.dumps(record, indent=1, sort_keys=True, default=str))
    return arrays
