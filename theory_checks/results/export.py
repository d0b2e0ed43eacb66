"""Results out: every result class as a dict, JSON text or a pandas DataFrame, and back.

:class:`Exportable` is the one home of the export of calcheck's results
(:class:`~calcheck.theory_checks.checks.check.CheckResult`, the series checks' results,
:class:`~calcheck.theory_checks.search.result.SearchResult`,
:class:`~calcheck.theory_checks.running.exact.ExactCoverage`, ...). ``to_dict()`` is JSON-able and
``from_dict`` rebuilds an object equal to the one written:

- a nested result is a dict whose ``"__type__"`` names its class (only calcheck's result
  classes are ever built from a dict);
- a tuple is a JSON array; a list is ``{"__list__": [...]}``; a dict whose keys are not all
  strings (or use one of these tags) is ``{"__dict__": [[key, value], ...]}``;
- a non-finite float (JSON has none) is ``{"__float__": "inf" | "-inf" | "nan"}``;
- a numpy array is ``{"__ndarray__": nested lists, "dtype": ..., "shape": [...]}`` and a
  numpy scalar ``{"__numpy__": value, "dtype": ...}`` (bool, integer and float dtypes);
- a check (it holds laws, calibrators and bounds: code, which JSON cannot hold) is written
  as its description, a :class:`CheckRecord`: ``from_dict(d, check=the_check)`` puts the
  live check back (matched by id), otherwise the result holds the record, which answers
  what reports read (id, guarantee, role, description, experiments, settings).

Floats are written by ``repr``, so every float64 comes back bit for bit.

``to_frame()`` needs pandas (not a dependency of calcheck). Rows: one per cell for a
coverage check (its check's id, guarantee, role, verdict and passed repeated on each), one
per series (or member, or cell group) for the series checks, one per law a search reports
(the search's law, random sampling's law, the worst constant eta), the concatenation of its
results' rows for a :class:`~calcheck.theory_checks.running.runner.RunResult`, and one row for the
other results. Nested results are flattened with dotted column names
(``verdict.coverage``); a cell's packed successes and a search's trace are left out.
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass, field

import numpy as np

__all__ = ["CheckRecord", "EventRecord", "Exportable", "decode", "encode"]

#: Keys that mark an encoded value (a plain dict using one is written as pairs).
_TAGS = frozenset({"__type__", "__list__", "__dict__", "__float__", "__ndarray__", "__numpy__"})
#: Numpy dtype kinds written exactly: bool, signed and unsigned integers, floats.
_KINDS = "biuf"
#: Fields left out of a frame's rows (packed bits, per-evaluation traces).
_NOT_IN_FRAMES = frozenset({"success_bits", "trace"})

_REGISTRY: dict[str, type] = {}


class Exportable:
    """Mixin of calcheck's result classes: ``to_dict``/``to_json``/``to_frame`` and back.

    See the module docstring for the format.

    Examples
    --------
    >>> from calcheck import exact_coverage
    >>> from calcheck.theory_checks.running.exact import ExactCoverage
    >>> res = exact_coverage("gr21.thm3", n=1000, n_bins=10, alpha=0.1)
    >>> ExactCoverage.from_json(res.to_json()) == res
    True
    >>> res.to_dict()["__type__"], res.to_frame().shape
    ('ExactCoverage', (1, 14))
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        _REGISTRY[cls.__name__] = cls

    def to_dict(self) -> dict:
        """The result as JSON-able dicts, lists and numbers (exact: see :meth:`from_dict`)."""
        return encode(self)

    def to_json(self, indent: int | None = None) -> str:
        """The result as JSON text (strict JSON: no NaN or Infinity literals)."""
        return json.dumps(self.to_dict(), allow_nan=False, indent=indent)

    @classmethod
    def from_dict(cls, data: dict, *, check=None):
        """The result ``data`` holds (written by :meth:`to_dict`).

        Parameters
        ----------
        data : dict
        check : check or sequence of checks, optional
            The live checks to put back in place of their records (matched by id); without
            them a result holds the :class:`CheckRecord` of its check.

        Returns
        -------
        An instance of this class, equal to the one written (with its live check).

        Raises
        ------
        ValueError
            For data that is not a written result of this class, or a single ``check``
            whose id is not the result's.
        """
        if not isinstance(data, dict) or "__type__" not in data:
            raise ValueError(
                f"{cls.__name__}.from_dict needs a dict written by to_dict() (with "
                f"'__type__'), got {type(data).__name__}"
            )
        checks = _live_checks(check)
        out = decode(data, checks)
        if not isinstance(out, cls):
            raise ValueError(
                f"the data holds a result of class {data['__type__']}, not {cls.__name__}"
            )
        own = getattr(out, "check", None)
        if check is not None and not isinstance(check, list | tuple) and own is not check:
            raise ValueError(
                f"check {getattr(check, 'id', check)!r} is not the result's check "
                f"({getattr(own, 'id', None)!r})"
            )
        return out

    @classmethod
    def from_json(cls, text: str, *, check=None):
        """The result in JSON ``text`` (written by :meth:`to_json`); see :meth:`from_dict`."""
        try:
            data = json.loads(text)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{cls.__name__}.from_json: not JSON text ({exc})") from None
        return cls.from_dict(data, check=check)

    def to_frame(self):
        """The result as a pandas DataFrame (rows: see the module docstring).

        Raises
        ------
        ImportError
            Without pandas (``pip install pandas``).
        """
        try:
            import pandas as pd
        except ImportError:
            raise ImportError(
                f"{type(self).__name__}.to_frame() needs pandas, which is not installed: "
                "pip install pandas (or use to_dict() / to_json())"
            ) from None
        return pd.DataFrame(frame_rows(self))


@dataclass(frozen=True)
class EventRecord:
    """What a check's event was: its class name, whether it draws randomness, its text."""

    name: str
    randomised: bool
    text: str

    def describe(self) -> str:
        """The event in words (as the live event's ``describe()``)."""
        return self.text


@dataclass(frozen=True)
class _Keyed:
    key: str


@dataclass(frozen=True)
class _SeriesKeys:
    experiments: tuple


@dataclass(frozen=True)
class CheckRecord(Exportable):
    """The description of a check that a result read back from JSON holds.

    Everything the reports read of a check; ``settings`` holds the check's other number and
    text fields (a rate check's ``delta`` and ``slack``, ...), also read as attributes.
    """

    id: str
    guarantee: str
    type: str
    expect: str
    role: str
    description: str = ""
    metric: str = ""
    bound_mode: str = ""
    claim: str = ""
    alphas: tuple = ()
    experiments: dict = field(default_factory=dict)
    event: EventRecord | None = None
    series_keys: tuple = ()
    settings: dict = field(default_factory=dict)

    @property
    def is_control(self) -> bool:
        """Whether the check was a negative control (expected to be flagged)."""
        return self.expect == "violated"

    def law_specs(self) -> dict:
        """Readable description of each experiment, by label."""
        return dict(self.experiments)

    @property
    def series(self) -> tuple:
        """The experiments' content keys of each series (what implied-by compares)."""
        return tuple(_SeriesKeys(tuple(_Keyed(k) for k in keys)) for keys in self.series_keys)

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        settings = object.__getattribute__(self, "settings")
        if name in settings:
            return settings[name]
        raise AttributeError(
            f"a check read back from JSON ({object.__getattribute__(self, 'id')!r}) has no "
            f"{name!r}: pass check= to from_dict/from_json to get the live check"
        )


def check_record(check) -> CheckRecord:
    """The :class:`CheckRecord` of a live check (a record is returned as is)."""
    if isinstance(check, CheckRecord):
        return check
    from .roles import role_of

    event = getattr(check, "event", None)
    named = {"id", "guarantee", "expect", "role", "description", "claim", "alphas"}
    settings = {}
    for f in dataclasses.fields(check):
        v = getattr(check, f.name)
        if f.name not in named and (v is None or isinstance(v, bool | int | float | str)):
            settings[f.name] = v
    series = getattr(check, "series", ())
    return CheckRecord(
        check.id,
        check.guarantee,
        type(check).__name__,
        check.expect,
        role_of(check),
        getattr(check, "description", ""),
        str(getattr(check, "metric", "")),
        str(getattr(check, "bound_mode", "")),
        str(getattr(check, "claim", "")),
        tuple(getattr(check, "alphas", ())),
        dict(check.law_specs()),
        None
        if event is None
        else EventRecord(
            type(event).__name__,
            bool(getattr(event, "randomised", False)),
            event.describe() if hasattr(event, "describe") else repr(event),
        ),
        tuple(tuple(e.key for e in s.experiments) for s in series if hasattr(s, "experiments")),
        settings,
    )


# ------------------------------------------------------------------------------ encode
def _float(x: float):
    if math.isfinite(x):
        return x
    return {"__float__": "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")}


def _array_items(x):
    if isinstance(x, list):
        return [_array_items(v) for v in x]
    return _float(x) if isinstance(x, float) else x


def encode(value):
    """``value`` as JSON-able data (the format of the module docstring).

    Raises
    ------
    ValueError
        For a value of a type that cannot be written exactly (named in the message).
    """
    if isinstance(value, np.generic):
        if value.dtype.kind not in _KINDS:
            raise ValueError(f"cannot export a numpy {value.dtype} scalar: {value!r}")
        return {"__numpy__": encode(value.item()), "dtype": str(value.dtype)}
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, tuple):
        return [encode(v) for v in value]
    if isinstance(value, list):
        return {"__list__": [encode(v) for v in value]}
    if isinstance(value, dict):
        if all(isinstance(k, str) for k in value) and not _TAGS & set(value):
            return {k: encode(v) for k, v in value.items()}
        return {"__dict__": [[encode(k), encode(v)] for k, v in value.items()]}
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in _KINDS:
            raise ValueError(f"cannot export a numpy array of dtype {value.dtype}")
        return {
            "__ndarray__": _array_items(value.tolist()),
            "dtype": str(value.dtype),
            "shape": list(value.shape),
        }
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        name = type(value).__name__
        if _types().get(name) is not type(value):
            raise ValueError(f"cannot export a {name}: not one of calcheck's result classes")
        out = {"__type__": name}
        for f in dataclasses.fields(value):
            if f.init:
                v = getattr(value, f.name)
                out[f.name] = encode(check_record(v) if f.name == "check" else v)
        return out
    raise ValueError(f"cannot export a {type(value).__name__}: {value!r}")


# ------------------------------------------------------------------------------ decode
def _types() -> dict:
    """Every class a dict may name: the result classes and the few they hold.

    A result class registers itself when its module is imported (:class:`Exportable`); a
    class's ``from_dict`` has imported it, and a container imports what it holds (the
    records of :mod:`~calcheck.theory_checks.running.records` import every check result).
    """
    from calcheck.simulations.engine import RunStats
    from calcheck.simulations.search import SearchBudget

    from .protocol import Mutant

    return {
        **_REGISTRY,
        "EventRecord": EventRecord,
        "Mutant": Mutant,
        "RunStats": RunStats,
        "SearchBudget": SearchBudget,
    }


def _unfloat(x):
    if isinstance(x, list):
        return [_unfloat(v) for v in x]
    if isinstance(x, dict):
        return decode(x)
    return x


def decode(data, checks: dict | None = None):
    """The value ``data`` encodes (:func:`encode`); ``checks``: live checks by id."""
    if isinstance(data, list):
        return tuple(decode(v, checks) for v in data)
    if not isinstance(data, dict):
        return data
    if "__type__" in data:
        cls = _types().get(data["__type__"])
        if cls is None:
            raise ValueError(
                f"unknown result class {data['__type__']!r} in the data (decode it with its "
                "class's from_dict, or import the module that defines it first)"
            )
        kwargs = {k: decode(v, checks) for k, v in data.items() if k != "__type__"}
        try:
            out = cls(**kwargs)
        except TypeError as exc:
            raise ValueError(f"the data of a {cls.__name__} does not fit it ({exc})") from None
        if cls is CheckRecord and checks and out.id in checks:
            return checks[out.id]
        return out
    if "__list__" in data:
        return [decode(v, checks) for v in data["__list__"]]
    if "__dict__" in data:
        return {decode(k, checks): decode(v, checks) for k, v in data["__dict__"]}
    if "__float__" in data:
        text = data["__float__"]
        if text not in ("inf", "-inf", "nan"):
            raise ValueError(f"'__float__' must be 'inf', '-inf' or 'nan', got {text!r}")
        return float(text)
    if "__numpy__" in data or "__ndarray__" in data:
        dtype = np.dtype(data["dtype"])
        if dtype.kind not in _KINDS:
            raise ValueError(f"unsupported numpy dtype {data['dtype']!r} in the data")
        if "__numpy__" in data:
            return dtype.type(decode(data["__numpy__"]))
        items = _unfloat(data["__ndarray__"])
        return np.array(items, dtype=dtype).reshape([int(s) for s in data["shape"]])
    return {k: decode(v, checks) for k, v in data.items()}


def _live_checks(check) -> dict:
    if check is None:
        return {}
    items = list(check) if isinstance(check, list | tuple) else [check]
    for c in items:
        if not hasattr(c, "id"):
            raise ValueError(f"check must be a check or a sequence of checks, got {c!r}")
    return {c.id: c for c in items}


# ------------------------------------------------------------------------------ frames
def _flat(obj, prefix: str = "") -> dict:
    """A result's fields as one row: nested results flattened with dotted names."""
    row = {}
    for f in dataclasses.fields(obj):
        if f.name in _NOT_IN_FRAMES or f.name == "check":
            continue
        v = getattr(obj, f.name)
        if dataclasses.is_dataclass(v) and not isinstance(v, type):
            row.update(_flat(v, f"{prefix}{f.name}."))
        else:
            row[f"{prefix}{f.name}"] = v
    return row


def _check_columns(result) -> dict:
    ch = result.check
    from .roles import role_of

    return {
        "check": ch.id,
        "guarantee": ch.guarantee,
        "role": role_of(ch),
        "check_verdict": result.verdict,
        "passed": result.passed,
        "reps": result.reps,
        "false_alarm": result.false_alarm,
    }


def frame_rows(result) -> list[dict]:
    """The rows of :meth:`Exportable.to_frame` (see the module docstring)."""
    if hasattr(result, "results") and hasattr(result, "stats"):  # a RunResult
        return [row for r in result.results for row in frame_rows(r)]
    if hasattr(result, "check") and hasattr(result, "series"):  # a series check's result
        head = _check_columns(result)
        return [head | {"kind": result.kind} | _flat(s) for s in result.series]
    if hasattr(result, "check") and hasattr(result, "cells"):  # a coverage check's result
        head = _check_columns(result)
        return [head | _flat(c) | {"violated": c.violated} for c in result.cells]
    if hasattr(result, "search") and hasattr(result, "benign"):  # a SearchResult
        head = {"target": result.target, "criterion": result.criterion, "alpha": result.alpha}
        rows = [head | _flat(f) for f in (result.search, result.random) if f is not None]
        if result.reference:
            rows.append(head | {"method": "worst constant eta"} | dict(result.reference))
        return rows
    return [_flat(result)]
