"""Argument validation shared by the bound functions.

Every public bound validates its arguments here and raises ``ValueError`` naming the
argument and echoing the offending value, so that a vectorised call with one bad entry
fails loudly instead of returning NaN. Integers are capped at :data:`MAX_INTEGER`;
:func:`guard_public` makes arguments that do not broadcast together an error naming them
with their shapes (numpy's own message names none).
"""

from __future__ import annotations

import functools
import inspect

import numpy as np

#: Largest integer argument accepted: every integer up to 2**53 is exact in float64, which the
#: bounds compute in; a larger sample size or bin count is outside any sane use.
MAX_INTEGER = 2**53


def as_float_array(value, name: str) -> np.ndarray:
    """Return ``value`` as a float array, refusing what is not a number (strings, objects).

    Bools and strings are refused too: ``True`` or ``"0.1"`` is a mistake for a level.
    """
    try:
        kind = np.asarray(value).dtype.kind
    except ValueError:  # ragged nested lists
        kind = "O"
    if kind in "bUS":  # bools and strings ("0.1" would otherwise parse)
        raise ValueError(f"{name} must be a number, got {value!r}")
    try:
        return np.asarray(value, dtype=float)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{name} must be a number or an array of numbers, got {value!r}") from None


def as_integer_array(value, name: str, *, minimum: int | None = None) -> np.ndarray:
    """Return ``value`` as an int64 array, refusing non-integers and values below ``minimum``.

    Integers above :data:`MAX_INTEGER` (including Python ints beyond int64, which would
    otherwise wrap around or be reported as "too small") are refused as too large.
    """
    arr = np.asarray(value)
    if arr.dtype == object:  # Python ints beyond int64 land here
        ints = all(isinstance(v, int) and not isinstance(v, bool) for v in arr.flat)
        if arr.size and ints and any(abs(v) > MAX_INTEGER for v in arr.flat):
            raise ValueError(
                f"{name} is too large: at most {MAX_INTEGER} (2**53) is supported, got {value!r}"
            )
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if arr.dtype == bool or not (
        np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)
    ):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if np.issubdtype(arr.dtype, np.floating) and (
        not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr))
    ):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if np.any(np.abs(arr.astype(float)) > MAX_INTEGER):
        raise ValueError(
            f"{name} is too large: at most {MAX_INTEGER} (2**53) is supported, got {value!r}"
        )
    iarr = arr.astype(np.int64)
    if minimum is not None and np.any(iarr < minimum):
        raise ValueError(f"{name} must be >= {minimum}, got {value!r}")
    return iarr


def as_nonempty(arr: np.ndarray, name: str, value) -> np.ndarray:
    """Refuse an empty array where the function reduces over it (a max of nothing)."""
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty, got {value!r}")
    return arr


def as_open_unit(value, name: str) -> np.ndarray:
    """Return ``value`` as a float array with every entry in the open interval (0, 1)."""
    arr = as_float_array(value, name)
    if not np.all((arr > 0) & (arr < 1)):
        raise ValueError(f"{name} must lie in the open interval (0, 1), got {value!r}")
    return arr


def as_unit(value, name: str) -> np.ndarray:
    """Return ``value`` as a float array with every entry in the closed interval [0, 1]."""
    arr = as_float_array(value, name)
    if not np.all((arr >= 0) & (arr <= 1)):
        raise ValueError(f"{name} must lie in [0, 1], got {value!r}")
    return arr


def as_nonnegative(value, name: str) -> np.ndarray:
    """Return ``value`` as a float array with every entry finite and >= 0."""
    arr = as_float_array(value, name)
    if not np.all(np.isfinite(arr) & (arr >= 0)):
        raise ValueError(f"{name} must be finite and >= 0, got {value!r}")
    return arr


def as_counts(value, name: str = "n_bin") -> np.ndarray:
    """Return bin counts (integers >= 0) as a float array, ready for division."""
    return as_integer_array(value, name, minimum=0).astype(float)


def as_positive(value, name: str) -> np.ndarray:
    """Return ``value`` as a float array with every entry finite and > 0."""
    arr = as_float_array(value, name)
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


def as_scalar(arr: np.ndarray, name: str, value) -> float:
    """Return a validated 0-d (or one-element) array as a Python number; refuse arrays."""
    if np.size(arr) != 1:
        raise ValueError(f"{name} must be a single number, got {value!r}")
    return arr.reshape(()).item()


class _BroadcastError(ValueError):
    """Arguments that do not broadcast; re-worded by every enclosing public function."""


def _broadcast_guard(fn):
    sig = inspect.signature(fn)

    def described(args, kwargs):
        return sig.bind_partial(*args, **kwargs).arguments

    @functools.wraps(fn)
    def guarded(*args, **kwargs):
        try:
            # An overflow or 0/0 that no validation caught is an error, never a silent
            # inf or NaN (places that mean it, e.g. an empty bin's inf, silence it locally).
            with np.errstate(over="raise", divide="raise", invalid="raise"):
                return fn(*args, **kwargs)
        except (FloatingPointError, OverflowError, ZeroDivisionError) as exc:
            values = ", ".join(
                f"{k}={v!r}" for k, v in described(args, kwargs).items() if not callable(v)
            )
            raise ValueError(
                f"the value of {fn.__name__} is not representable in float64 ({exc}) for {values}: "
                "an argument is too large or too small"
            ) from None
        except ValueError as exc:
            # numpy's message, or an inner public function's naming its own arguments
            if not isinstance(exc, _BroadcastError) and "could not be broadcast" not in str(exc):
                raise
            shapes = ", ".join(
                f"{k} of shape {np.shape(v)}"
                for k, v in described(args, kwargs).items()
                if not callable(v)
            )
            raise _BroadcastError(f"the arguments do not broadcast together: {shapes}") from None

    return guarded


def guard_public(namespace: dict) -> None:
    """Wrap the functions of a bound module's ``__all__`` defined in that module (in place).

    Called once by each module after its definitions, so a broadcasting error anywhere in a
    public function is reported with the arguments' names and shapes, and a floating-point
    overflow, division by zero or invalid operation (a would-be inf or NaN) with their values.
    """
    module = namespace["__name__"]
    for name in namespace["__all__"]:
        obj = namespace.get(name)
        if inspect.isfunction(obj) and obj.__module__ == module:
            namespace[name] = _broadcast_guard(obj)
