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

Nothing read is trusted: :func:`decode` (``from_dict``, ``from_json`` and the store's
result records) refuses with a ValueError that says where in the data, never a TypeError or
a RecursionError, text with ``NaN`` or ``Infinity`` literals or an untagged non-finite
float, data nested deeper than :data:`MAX_DEPTH`, a field whose value is not of its
annotated type, and a result whose numbers contradict each other: each class's
``check_invariants()`` ties them (a verdict is recomputed from its counts and compared, a
cell's packed successes are counted, a certificate is checked against the replicates).

``to_frame()`` needs pandas (not a dependency of calcheck). Rows: one per cell for a
coverage check (its check's id, guarantee, role, verdict and passed repeated on each), one
per series (or member, or cell group) for the series checks, one per law a search reports
(the search's law, random sampling's law, the worst constant eta), the concatenation of its
results' rows for a :class:`~calcheck.theory_checks.running.runner.RunResult`, and one row for the
other results. Nested results are flattened with dotted column names
(``verdict.coverage``); a cell's packed successes and a search's trace are left out.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import math
import types
import typing
from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "MAX_DEPTH",
    "CheckRecord",
    "EventRecord",
    "Exportable",
    "decode",
    "encode",
    "parse_json",
]

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
            For data that is not a written result of this class (a field of the wrong type,
            a raw non-finite number, nesting deeper than :data:`MAX_DEPTH`, numbers that
            contradict each other: a verdict that its counts do not give, ...), or a single
            ``check`` whose id is not the result's.
        """
        return cls._from_data(data, check, f"{cls.__name__}.from_dict")

    @classmethod
    def _from_data(cls, data, check, how: str):
        if not isinstance(data, dict) or "__type__" not in data:
            raise ValueError(
                f"{how} needs a dict written by to_dict() (with '__type__'), got "
                f"{type(data).__name__}"
            )
        checks = _live_checks(check)
        try:
            out = decode(data, checks)
        except ValueError as exc:
            raise ValueError(f"{how}: {exc}") from None
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
        """The result in JSON ``text`` (written by :meth:`to_json`); see :meth:`from_dict`.

        Raises
        ------
        ValueError
            As :meth:`from_dict`, and for text that is not strict JSON (a ``NaN`` or
            ``Infinity`` literal: the codec tags non-finite numbers).
        """
        how = f"{cls.__name__}.from_json"
        return cls._from_data(parse_json(text, how), check, how)

    def check_invariants(self) -> None:
        """Raise ValueError where the fields contradict each other (none by default).

        :func:`decode` calls it on every result it rebuilds from data, after checking each
        field's type; a class whose numbers are tied (a verdict and its counts) overrides
        it. Results computed by calcheck never need it: the normal path does not call it.
        """

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

    def check_invariants(self) -> None:
        """Raise ValueError for an expectation a check cannot have (what ``passed`` reads)."""
        if self.expect not in ("consistent", "violated"):
            raise ValueError(f"expect must be 'consistent' or 'violated', got {self.expect!r}")

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
#: Deepest nesting :func:`decode` reads. A run's result nests about ten levels (run, its
#: results, their cells, verdicts, tagged values); data nested deeper is not a written
#: result, and following it would exhaust Python's recursion (a RecursionError, not a
#: ValueError).
MAX_DEPTH = 64
#: What building a class from decoded fields may raise on data that does not fit it (a
#: ``__post_init__`` reading a field of the wrong kind): all reported as ValueError.
_DOES_NOT_FIT = (TypeError, ValueError, KeyError, IndexError, AttributeError, ArithmeticError)


class _Malformed(ValueError):
    """Malformed data, with where in the data it sits (filled in on the way up)."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message
        self.where: list[str] = []

    def __str__(self) -> str:
        if not self.where:
            return self.message
        path = "".join(self.where).lstrip(".")
        if len(path) > 120:  # data nested too deep: its path says no more than its start
            path = f"{path[:100]}..."
        return f"{path}: {self.message}"


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


def parse_json(text, what: str = "parse_json"):
    """Strict JSON ``text`` as data: what :func:`decode` reads.

    Raises
    ------
    ValueError
        For text that is not JSON, holds a ``NaN`` or ``Infinity`` literal (the codec tags
        non-finite floats, ``{"__float__": "nan"}``), an integer of more digits than Python
        reads, or nests deeper than Python's recursion allows.
    """
    if not isinstance(text, str | bytes | bytearray):
        raise ValueError(f"{what}: not JSON text but a {type(text).__name__}")

    def untagged(literal):
        tag = {"NaN": "nan", "Infinity": "inf", "-Infinity": "-inf"}[literal]
        raise ValueError(
            f"the literal {literal}: the codec writes a non-finite number as "
            f'{{"__float__": "{tag}"}}'
        )

    try:
        return json.loads(text, parse_constant=untagged)
    except RecursionError:
        raise ValueError(f"{what}: not JSON text Python reads (nested too deep)") from None
    except ValueError as exc:  # JSONDecodeError, an untagged literal, too many digits
        raise ValueError(f"{what}: not JSON text ({exc})") from None


def decode(data, checks: dict | None = None):
    """The value ``data`` encodes (:func:`encode`); ``checks``: live checks by id.

    Nothing is trusted: every result class's fields are checked against their types, and a
    class's ``check_invariants()`` against each other (a verdict against its counts, ...).

    Raises
    ------
    ValueError
        For data that :func:`encode` could not have written, or that holds a result whose
        numbers contradict each other; the message says where in the data.
    """
    try:
        return _decode(data, checks or {}, 0)
    except _Malformed as exc:
        raise ValueError(str(exc)) from None


def _decode(data, checks: dict, depth: int):
    if type(data) in _PLAIN and (type(data) is not float or math.isfinite(data)):
        return data
    if depth > MAX_DEPTH:
        raise _Malformed(f"the data nests deeper than {MAX_DEPTH} levels")
    if isinstance(data, list | tuple):
        if all(type(v) in _PLAIN for v in data) and all(map(math.isfinite, _floats(data))):
            return tuple(data)  # a series' numbers: nothing to decode, nothing nested
        return tuple(_item(v, checks, depth, i) for i, v in enumerate(data))
    if isinstance(data, float):
        if not math.isfinite(data):
            raise _Malformed(
                f"an untagged non-finite number {data!r} (written as "
                f'{{"__float__": "{_float(data)["__float__"]}"}})'
            )
        return data
    if data is None or isinstance(data, bool | int | str):
        return data
    if not isinstance(data, dict):
        raise _Malformed(f"a {type(data).__name__} is not JSON data: {data!r:.80}")
    if "__type__" in data:
        return _decode_result(data, checks, depth)
    if "__list__" in data:
        return list(_decode(_tagged(data, "__list__", list), checks, depth + 1))
    if "__dict__" in data:
        return _decode_pairs(_tagged(data, "__dict__", list), checks, depth)
    if "__float__" in data:
        text = data["__float__"]
        if text not in ("inf", "-inf", "nan"):
            raise _Malformed(f"'__float__' must be 'inf', '-inf' or 'nan', got {text!r:.80}")
        return float(text)
    if "__numpy__" in data or "__ndarray__" in data:
        return _decode_numpy(data, depth)
    return {k: _field(v, checks, depth, k) for k, v in data.items()}


#: JSON values that decode to themselves (a float only when finite).
_PLAIN = frozenset({int, float, str, bool, type(None)})


def _floats(items):
    return (v for v in items if type(v) is float)


def _item(value, checks: dict, depth: int, index: int):
    try:
        return _decode(value, checks, depth + 1)
    except _Malformed as exc:
        exc.where.insert(0, f"[{index}]")
        raise


def _field(value, checks: dict, depth: int, key):
    try:
        return _decode(value, checks, depth + 1)
    except _Malformed as exc:
        exc.where.insert(0, f".{key}")
        raise


def _tagged(data: dict, tag: str, kind: type):
    value = data[tag]
    if not isinstance(value, kind):
        raise _Malformed(f"{tag!r} must hold a {kind.__name__}, got {value!r:.80}")
    return value


def _decode_pairs(pairs: list, checks: dict, depth: int) -> dict:
    out = {}
    for i, pair in enumerate(pairs):
        if not isinstance(pair, list) or len(pair) != 2:
            raise _Malformed(f"'__dict__' must hold [key, value] pairs, got {pair!r:.80}")
        key = _item(pair[0], checks, depth, i)
        try:
            hash(key)
        except TypeError:
            raise _Malformed(f"'__dict__' key {pair[0]!r:.80} cannot be a dict key") from None
        out[key] = _item(pair[1], checks, depth, i)
    return out


def _decode_numpy(data: dict, depth: int):
    dtype_name = data.get("dtype")
    dtype = None
    if isinstance(dtype_name, str):
        with contextlib.suppress(TypeError):  # numpy's answer to a name that is no dtype
            dtype = np.dtype(dtype_name)
    if dtype is None or dtype.kind not in _KINDS:
        raise _Malformed(f"unsupported numpy dtype {dtype_name!r:.80} in the data")
    try:
        if "__numpy__" in data:
            value = _decode(data["__numpy__"], {}, depth + 1)
            if not _fits(value, {"b": bool, "i": int, "u": int, "f": float}[dtype.kind]):
                raise _Malformed(f"a numpy {dtype} scalar cannot hold {value!r:.80}")
            return dtype.type(value)
        shape = data.get("shape")
        if not isinstance(shape, list) or not all(
            isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in shape
        ):
            raise _Malformed(f"a numpy array's shape must be a list of sizes, got {shape!r:.80}")
        items = _array_values(data["__ndarray__"], depth + 1)
        return np.array(items, dtype=dtype).reshape(shape)
    except _Malformed:
        raise
    except (*_DOES_NOT_FIT, OverflowError) as exc:
        raise _Malformed(f"a numpy {dtype} value does not fit the data ({exc})") from None


def _array_values(x, depth: int):
    """An array's nested lists of numbers (non-finite floats tagged), read."""
    if depth > MAX_DEPTH:
        raise _Malformed(f"the data nests deeper than {MAX_DEPTH} levels")
    if isinstance(x, list):
        return [_array_values(v, depth + 1) for v in x]
    if isinstance(x, dict) and set(x) == {"__float__"}:
        return _decode(x, {}, depth)
    if isinstance(x, bool | int) or (isinstance(x, float) and math.isfinite(x)):
        return x
    raise _Malformed(f"a numpy array cannot hold {x!r:.80}")


def _decode_result(data: dict, checks: dict, depth: int):
    name = data["__type__"]
    cls = _types().get(name) if isinstance(name, str) else None
    if cls is None:
        raise _Malformed(
            f"unknown result class {name!r:.80} in the data (decode it with its class's "
            "from_dict, or import the module that defines it first)"
        )
    spec = _fields_of(cls)
    kwargs = {}
    for key, value in data.items():
        if key == "__type__":
            continue
        if type(value) in _PLAIN and (type(value) is not float or math.isfinite(value)):
            kwargs[key] = value  # a leaf: most fields
        else:
            kwargs[key] = _field(value, checks, depth, key)
    unknown = sorted(set(kwargs) - spec.names)
    missing = [k for k in spec.required if k not in kwargs]
    if unknown or missing:
        raise _Malformed(
            f"the data of a {name} does not fit it"
            + (f"; unknown fields {unknown}" if unknown else "")
            + (f"; missing fields {missing}" if missing else "")
        )
    for key, value in kwargs.items():
        if key == "check":  # a check's record, or the live check put in its place
            if not isinstance(value, CheckRecord) and not any(value is c for c in checks.values()):
                raise _Malformed(f"{name}.check must be a check's record, got {value!r:.80}")
        elif key in spec.tests and not spec.tests[key](value):
            raise _Malformed(f"{name}.{key} must be {spec.type_names[key]}, got {value!r:.80}")
    try:
        out = cls(**kwargs)
    except _DOES_NOT_FIT as exc:
        raise _Malformed(f"the data of a {name} does not fit it ({exc})") from None
    if isinstance(out, Exportable):
        try:
            out.check_invariants()
        except _DOES_NOT_FIT as exc:
            raise _Malformed(f"a {name} whose numbers contradict each other: {exc}") from None
    if cls is CheckRecord and out.id in checks:
        return checks[out.id]
    return out


@dataclass(frozen=True)
class _Fields:
    """What data of a class must hold: its fields, the required ones, a test of each type."""

    names: frozenset
    required: tuple
    tests: dict
    type_names: dict


#: What an annotation of ``int`` or ``float`` admits (numpy's scalars too, bools never).
_INTEGERS = (int, np.integer)
_NUMBERS = (int, float, np.integer, np.floating)
_BOOLS = (bool, np.bool_)


@functools.cache
def _fields_of(cls) -> _Fields:
    """The :class:`_Fields` of ``cls`` (types unchecked where its annotations do not resolve)."""
    fields = [f for f in dataclasses.fields(cls) if f.init]
    try:
        hints = typing.get_type_hints(cls)
    except NameError:  # a name the class's module does not define
        hints = {}
    return _Fields(
        frozenset(f.name for f in fields),
        tuple(
            f.name
            for f in fields
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        ),
        {f.name: _type_test(hints[f.name]) for f in fields if f.name in hints},
        {f.name: _type_name(hints[f.name]) for f in fields if f.name in hints},
    )


def _fits(value, hint) -> bool:
    """Whether a decoded ``value`` is of the annotated type ``hint`` (numbers loosely)."""
    return _type_test(hint)(value)


@functools.cache
def _type_test(hint):
    """A test of a decoded value against the annotation ``hint``: built once per annotation.

    Numbers are read loosely (an ``int`` where a ``float`` is annotated, numpy scalars);
    a tuple's items are tested; an annotation it does not know admits anything.
    """
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        tests = tuple(_type_test(h) for h in typing.get_args(hint))
        return lambda v: any(t(v) for t in tests)
    if hint is None or hint is type(None):
        return lambda v: v is None
    if hint is bool:
        return lambda v: isinstance(v, _BOOLS)
    if hint is int:
        return lambda v: isinstance(v, _INTEGERS) and not isinstance(v, bool)
    if hint is float:
        return lambda v: isinstance(v, _NUMBERS) and not isinstance(v, bool)
    if origin is tuple:
        args = typing.get_args(hint)
        if len(args) == 2 and args[1] is Ellipsis:
            item = _type_test(args[0])
            return lambda v: isinstance(v, tuple) and all(map(item, v))
        items = tuple(_type_test(h) for h in args)
        return lambda v: (
            isinstance(v, tuple)
            and (
                not items
                or (len(v) == len(items) and all(t(x) for t, x in zip(items, v, strict=True)))
            )
        )
    if origin is not None:
        return lambda v: isinstance(v, origin)
    if hint is object or not isinstance(hint, type):
        return lambda v: True
    return lambda v: isinstance(v, hint)


def _type_name(hint) -> str:
    """An annotation in words: ``float or None``, ``tuple[CellResult, ...]``."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_type_name(h) for h in args)
    if hint is None or hint is type(None):
        return "None"
    if origin is not None and args:
        inner = ", ".join("..." if h is Ellipsis else _type_name(h) for h in args)
        return f"{origin.__name__}[{inner}]"
    return getattr(hint, "__name__", None) or str(hint)


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
