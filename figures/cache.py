"""Cache of computed figure data: one ``.npz`` (arrays) and one ``.json`` (metadata) per key.

The key hashes the figure id, its parameters and the *code stamp* of the code that computes
it (package version plus a hash of the figure's paper folder, the generic figure code,
``simulations`` and ``bounds``; :func:`calcheck.simulations.provenance.code_stamp`), so changing any
of them recomputes instead of reusing. The metadata records the seed, the parameters, the
stamp and the data files the computation read with their content digests (``data_files``:
path -> size and SHA-256, noted by the loaders of :mod:`calcheck.figures.data`); an entry
whose data files have changed since (or are gone) is recomputed, and the run says which.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from pathlib import Path

import numpy as np

from calcheck.simulations.provenance import code_stamp, content_key

from .data import data_digest, note_reads, recording_reads

__all__ = ["cached", "figure_code_stamp"]

logger = logging.getLogger(__name__)

_GENERIC = (
    "figures/cache.py",
    "figures/data.py",
    "figures/looseness.py",
    "figures/plotting.py",
    "simulations",
    "bounds",
)


def figure_code_stamp(name: str) -> str:
    """Code stamp of a cache entry: its paper's figure folder plus the generic code.

    ``name`` starts with the paper key (``"gr21-twin"``, ``"gr22-eval-..."``).
    """
    match = re.match(r"[a-z]+\d+", name)
    paper = match.group(0) if match else ""
    folder = f"figures/{paper}"
    if paper and (Path(__file__).parent / paper).is_dir():
        return code_stamp(*_GENERIC, folder)
    from calcheck.bounds.registry import plugin_papers

    module = plugin_papers().get(paper) if paper else None
    if module is None:
        return code_stamp(*_GENERIC)
    # a plugin paper's figure: its package's sources, so that editing them is never stale
    digest = hashlib.sha256()
    for path in sorted(Path(module.__file__).parent.rglob("*.py")):
        digest.update(path.read_bytes())
    return f"{code_stamp(*_GENERIC)}+{digest.hexdigest()[:16]}"


def _changed_data(meta_path: Path) -> tuple[dict, list[str]] | None:
    """The entry's data files and those that changed since; None if the metadata is unusable."""
    try:
        meta = json.loads(meta_path.read_text())
        files = meta["data_files"]
        if not isinstance(files, dict):
            return None
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return files, [p for p, digest in sorted(files.items()) if data_digest(p) != digest]


def cached(name: str, params: dict, compute, cache_dir) -> dict:
    """Return ``compute()`` (a dict of arrays), reading or writing it in ``cache_dir``.

    An entry is read back only if every data file its computation read still has the same
    content (size and SHA-256); otherwise it is recomputed, with a warning naming the files.
    """
    record = {"name": name, "params": params, "code": figure_code_stamp(name)}
    key = content_key(record)[:16]
    if cache_dir is None:
        return compute()
    folder = Path(cache_dir)
    data_file = folder / f"{name}-{key}.npz"
    meta_path = folder / f"{name}-{key}.json"
    if data_file.is_file() and meta_path.is_file():
        state = _changed_data(meta_path)
        if state is not None and not state[1]:
            logger.info("cache hit %s", data_file)
            note_reads(state[0])  # an enclosing entry depends on them too
            with np.load(data_file, allow_pickle=False) as f:
                return {k: f[k] for k in f.files}
        if state is not None:
            logger.warning(
                "%s: recomputed: data file %s changed since the cached result",
                name,
                ", ".join(state[1]),
            )
    with recording_reads() as reads:
        arrays = compute()
    note_reads(reads)
    record["data_files"] = dict(sorted(reads.items()))
    folder.mkdir(parents=True, exist_ok=True)
    tmp = data_file.with_suffix(".tmp.npz")
    np.savez_compressed(tmp, **arrays)
    tmp.replace(data_file)  # atomic: a killed run never leaves a half-written cache entry
    tmp_meta = meta_path.with_suffix(".tmp.json")
    tmp_meta.write_text(json.dumps(record, indent=1, sort_keys=True, default=str))
    tmp_meta.replace(meta_path)
    return arrays
