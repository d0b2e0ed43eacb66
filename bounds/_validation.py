"""Argument validation shared by the bound functions.

Every public bound validates its arguments here and raises ``ValueError`` naming the
argument and echoing the offending value, so that a vectorised call with one bad entry
fails loudly instead of returning NaN.
"""

from __future__ import annotations

import numpy as np


def as_integer_array(value, name: str, *, minimum: int | None = None) -> np.ndarray:
    """Return ``value`` as an int64 array, refusing non-integers and values below ``minimum``."""
    arr = np.asarray(value)
    if arr.dtype == bool or not (
        np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)
    ):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if np.issubdtype(arr.dtype, np.floating) and (
        not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr))
    ):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    iarr = arr.astype(np.int64)
    if minimum is not None and np.any(iarr < minimum):
        raise ValueError(f"{name} must be >= {minimum}, got {value!r}")
    return iarr


def as_open_unit(value, name: str) -> np.ndarray:
    """Return ``value`` as a float array with every entry in the open interval (0, 1)."""
    arr = np.asarray(value, dtype=float)
    if not np.all((arr > 0) & (arr < 1)):
        raise ValueError(f"{name} must lie in the open interval (0, 1), got {value!r}")
    return arr


def as_unit(value, name: str) -> np.ndarray:
    """Return ``value`` as a float array with every entry in the closed interval [0, 1]."""
    arr = np.asarray(value, dtype=float)
    if not np.all((arr >= 0) & (arr <= 1)):
        raise ValueError(f"{name} must lie in [0, 1], got {value!r}")
    return arr


def as_nonnegative(value, name: str) -> np.ndarray:
    """Return ``value`` as a float array with every entry finite and >= 0."""
    arr = np.asarray(value, dtype=float)
    if not np.all(np.isfinite(arr) & (arr >= 0)):
        raise ValueError(f"{name} must be finite and >= 0, got {value!r}")
    return arr


def as_counts(value, name: str = "n_bin") -> np.ndarray:
    """Return bin counts (integers >= 0) as a float array, ready for division."""
    return as_integer_array(value, name, minimum=0).astype(float)


def as_positive(value, name: str) -> np.ndarray:
    """Return ``value`` as a float array with every entry finite and > 0."""
    arr = np.asarray(value, dtype=float)
    if not np.all(np.isfinite(arr) & (arr > 0)):
        raise ValueError(f"{name} must be finite and > 0, got {value!r}")
    return arr


def check_n_bins_vs_n(n: np.ndarray, n_bins: np.ndarray, n_value, n_bins_value) -> None:
    """Enforce the hypothesis ``n >= 2 * n_bins`` shared by every gr21 guarantee."""
    if np.any(n < 2 * n_bins):
        raise ValueError(
            f"n must be >= 2 * n_bins (every bin needs at least one interior point), "
            f"got n={n_value!r}, n_bins={n_bins_value!r}"
        )


def scalar_or_array(x: np.ndarray):
    """Return a Python float for 0-d results, the array otherwise."""
    return float(x) if np.ndim(x) == 0 else x
