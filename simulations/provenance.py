"""Provenance: content keys, code-version stamps and the seed protocol (one home for each).

Content keys
    :func:`content_key` hashes a JSON-able description; an experiment's ``key`` is the hash
    of its description and its ``seed_key`` the first 60 bits of it. Adding, removing or
    reordering other experiments changes nothing.
Code stamps
    :func:`code_stamp` is the package version plus a hash of the source files that produce
    a result. The store and the figure cache key their entries by it, so results computed
    by other code are never reused (they are recomputed, and the run says so).
Code outside calcheck
    :func:`code_inputs` (and its hash :func:`code_fingerprint`) covers a user's or a plugin
    paper's bound, calibrator or figure: the source files of its module and of the user
    modules that module uses or imports (an import statement anywhere in the source, a
    function's body included), and the module-level values (numbers, strings, tuples,
    arrays) as they are now, so an edited helper or constant is never read back from a store.
Behaviour outside calcheck
    :func:`values_fingerprint` hashes what a function returns (or which exception it
    raises) at fixed probe arguments: what code cannot show -- a file the function reads on
    each call, a value computed at run time -- still changes the keys of its results.
Seeds
    :func:`generator` is the one seed protocol: ``SeedSequence(root_seed, spawn_key=path)``
    with the path made of integers (strings are hashed). The engine draws block ``k`` of an
    experiment from ``generator(root_seed, seed_key, k)``; figures draw repetition ``r`` of
    a setting from ``generator(seed, "<figure>", ..., r)``.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
import inspect
import json
import sys
import sysconfig
import types
import warnings
from importlib import metadata
from pathlib import Path

import numpy as np

__all__ = [
    "ContentKeyed",
    "check_root_seed",
    "code_fingerprint",
    "code_inputs",
    "code_stamp",
    "content_key",
    "file_digest",
    "generator",
    "package_version",
    "source_hash",
    "values_fingerprint",
]

_PACKAGE_ROOT = Path(__file__).resolve().parent.parent


@functools.lru_cache(maxsize=1)
def package_version() -> str:
    """Installed calcheck version (``0+unknown`` when run from a bare source tree)."""
    # read once per process, as the source hashes are: importlib.metadata scans sys.path on
    # each call (0.5 ms), and a run asks for a code stamp per cell read (3000 in a quick run)
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


# ------------------------------------------------------------------ code outside calcheck
_LIBRARY_ROOTS = tuple(
    {
        str(Path(sysconfig.get_paths()[k]).resolve())
        for k in ("stdlib", "platstdlib", "purelib", "platlib")
    }
)
_SIMPLE = (bool, int, float, complex, str, bytes, type(None), np.generic)


@functools.lru_cache(maxsize=512)
def _digest_of(path: str, size: int, mtime_ns: int) -> str:
    sha = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            sha.update(chunk)
    return f"{size}:{sha.hexdigest()[:16]}"


def file_digest(path) -> str | None:
    """``"<size>:<sha256 prefix>"`` of a file's content; None if it is not a file.

    Read once per process for each (path, size, modification time): the one home of the
    content digests that key results on files (a bound's module, a figure's data file).
    """
    p = Path(path)
    try:
        stat = p.stat()
    except OSError:
        return None
    if not p.is_file():
        return None
    return _digest_of(str(p.resolve()), stat.st_size, stat.st_mtime_ns)


def _source_file(module) -> Path | None:
    name = getattr(module, "__file__", None)
    if not name or not name.endswith(".py"):
        return None
    path = Path(name)
    return path if path.is_file() else None


def _is_user_module(module) -> bool:
    """Not calcheck, not the standard library, not an installed package: the user's code."""
    path = _source_file(module)
    return _is_user_path(getattr(module, "__name__", "") or "", str(path) if path else "")


@functools.lru_cache(maxsize=1024)
def _is_user_path(name: str, path: str) -> bool:
    root = name.split(".")[0]
    if root == "calcheck" or root in sys.stdlib_module_names or root in sys.builtin_module_names:
        return False
    if not path:
        return name == "__main__"  # an interactive session or a script
    text = str(Path(path).resolve())
    if "site-packages" in text or "dist-packages" in text:
        return False
    return not any(text.startswith(r + "/") for r in _LIBRARY_ROOTS)


def _value_text(value, depth: int = 0):
    """A stable text of a simple value (None when it is not one: functions, objects...)."""
    if isinstance(value, np.ndarray):
        if value.dtype == object:
            return None
        data = np.ascontiguousarray(value)
        return f"array{value.shape}{value.dtype}:{hashlib.sha256(data.tobytes()).hexdigest()[:16]}"
    if isinstance(value, _SIMPLE):
        return repr(value)
    if depth < 3 and isinstance(value, tuple | list | frozenset | set):
        items = [_value_text(v, depth + 1) for v in value]
        if any(i is None for i in items):
            return None
        items = sorted(items) if isinstance(value, frozenset | set) else items
        return f"{type(value).__name__}({','.join(items)})"
    if depth < 3 and isinstance(value, dict):
        items = [(_value_text(k, depth + 1), _value_text(v, depth + 1)) for k, v in value.items()]
        if any(k is None or v is None for k, v in items):
            return None
        return "dict(" + ",".join(sorted(f"{k}:{v}" for k, v in items)) + ")"
    return None


def _label(module) -> str:
    path = _source_file(module)
    name = module.__name__
    if path is None:
        return name
    return name.replace(".", "/") + ("/__init__.py" if path.name == "__init__.py" else ".py")


def _module_of(value):
    if isinstance(value, types.ModuleType):
        return value
    if isinstance(value, type | types.FunctionType | types.BuiltinFunctionType):
        return sys.modules.get(getattr(value, "__module__", None) or "")
    return None


def _code_text(code) -> str:
    consts = [_code_text(c) if inspect.iscode(c) else repr(c) for c in code.co_consts]
    return repr((code.co_code, consts, code.co_names))


def _object_text(value, out: dict, seen: set) -> str:
    """A value a function uses: its text if simple, else the inputs of the code it is."""
    text = _value_text(value)
    if text is not None:
        return text
    other = _module_of(value)
    if isinstance(value, types.FunctionType | type) and (
        other is None or _source_file(other) is None
    ):
        functions = [value] if isinstance(value, types.FunctionType) else list(vars(value).values())
        for f in functions:
            if isinstance(f, types.FunctionType):
                _function_inputs(f, out, seen)
    elif other is not None and _is_user_module(other):
        _module_inputs(other, out, seen)
    if isinstance(value, types.FunctionType) and value.__closure__:
        _closure_inputs(value, out, seen)
    return getattr(value, "__qualname__", type(value).__qualname__)


def _closure_inputs(function, out: dict, seen: set) -> None:
    """A function's closure and defaults (a bound made by a factory at run time)."""
    if ("closure", id(function)) in seen:
        return
    seen.add(("closure", id(function)))
    parts = [_object_text(function.__defaults__ or (), out, seen)]
    for cell in function.__closure__ or ():
        try:
            parts.append(_object_text(cell.cell_contents, out, seen))
        except ValueError:  # an empty cell
            parts.append("<empty>")
    label = f"{getattr(function, '__module__', '?')}.{function.__qualname__} (values)"
    out[label] = hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def _function_inputs(function, out: dict, seen: set) -> None:
    """A function without a source file: its code, closure and the globals it names."""
    if id(function) in seen:
        return
    seen.add(id(function))
    code = function.__code__
    parts = [_code_text(code)]
    for name in sorted(set(code.co_names) & set(function.__globals__)):
        parts.append(f"{name}={_object_text(function.__globals__[name], out, seen)}")
    label = f"{getattr(function, '__module__', '?')}.{function.__qualname__} (code)"
    out[label] = hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]
    if function.__closure__ or function.__defaults__:
        _closure_inputs(function, out, seen)


@functools.lru_cache(maxsize=512)
def _imported_names(path: str, size: int, mtime_ns: int, package: str) -> tuple[str, ...]:
    """Absolute names of the modules a source file imports, anywhere in it (functions too).

    ``from a import b`` gives ``a`` and ``a.b`` (``b`` may be a submodule); relative imports
    are resolved against ``package``. Read once per (path, size, modification time).
    """
    try:
        tree = ast.parse(Path(path).read_bytes(), filename=path)
    except (SyntaxError, ValueError, OSError):  # not Python that parses: its digest covers it
        return ()
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".") if package else []
                if node.level - 1 > len(parts):
                    continue
                prefix = ".".join(parts[: len(parts) - node.level + 1])
                base = f"{prefix}.{base}" if prefix and base else prefix or base
            if base:
                names.append(base)
                names += [f"{base}.{a.name}" for a in node.names if a.name != "*"]
    return tuple(dict.fromkeys(names))


def _user_source_of(name: str) -> tuple[str, Path, str] | None:
    """``(label, source file, package)`` of a user module by name, else None.

    A module not imported yet (an import inside a function not called yet) is found without
    importing it: its spec, looked up only where its parent package is already imported.
    """
    root = name.split(".")[0]
    if root == "calcheck" or root in sys.stdlib_module_names or root in sys.builtin_module_names:
        return None
    module = sys.modules.get(name)
    if module is not None:
        # by its file's name first (cached, no stat): most imports are installed packages
        if not _is_user_path(name, getattr(module, "__file__", None) or ""):
            return None
        path = _source_file(module)
        if path is None:
            return None
        spec = getattr(module, "__spec__", None)
        package = getattr(spec, "parent", None) or getattr(module, "__package__", "") or ""
        return _label(module), path, package
    parent = name.rpartition(".")[0]
    top = sys.modules.get(root)
    if parent and (
        parent not in sys.modules or not _is_user_path(root, getattr(top, "__file__", None) or "")
    ):
        return None  # no import to look for it; or inside an installed package (scipy.special)
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError, AttributeError):  # a name that is no module
        return None
    origin = getattr(spec, "origin", None) or ""
    if not origin.endswith(".py") or not _is_user_path(name, origin):
        return None
    path = Path(origin)
    init = "/__init__.py" if path.name == "__init__.py" else ".py"
    return name.replace(".", "/") + init, path, spec.parent or ""


def _imported_files(path: Path, package: str, out: dict, seen: set) -> None:
    """The source files of the user modules a file imports, transitively (digests in ``out``).

    An import of constants (``from helper import K``) or inside a function leaves no module
    among the importer's globals: the import statement still names the file to cover.
    """
    try:
        stat = path.stat()
    except OSError:
        return
    for name in _imported_names(str(path), stat.st_size, stat.st_mtime_ns, package):
        found = _user_source_of(name)
        if found is None or ("file", str(found[1])) in seen:
            continue
        label, source, inner = found
        seen.add(("file", str(source)))
        digest = file_digest(source)
        if digest is not None:
            out[label] = digest
        _imported_files(source, inner, out, seen)


def _module_inputs(module, out: dict, seen: set) -> None:
    """A user module's source file and module-level values, then the user modules it uses."""
    if id(module) in seen:
        return
    seen.add(id(module))
    path = _source_file(module)
    if path is not None and ("file", str(path)) not in seen:  # not yet found by an import
        seen.add(("file", str(path)))
        out[_label(module)] = file_digest(path)
        spec = getattr(module, "__spec__", None)
        package = getattr(spec, "parent", None) or getattr(module, "__package__", "") or ""
        _imported_files(path, package, out, seen)
    values, used = [], []
    for name, value in sorted(vars(module).items()):
        if name.startswith("__") and name.endswith("__"):
            continue
        text = _value_text(value)
        if text is not None:
            values.append(f"{name}={text}")
            continue
        other = _module_of(value)
        if other is not None and other is not module and _is_user_module(other):
            used.append(other)
    out[f"{module.__name__} (values)"] = hashlib.sha256("\n".join(values).encode()).hexdigest()[:16]
    for other in used:
        _module_inputs(other, out, seen)


def code_inputs(obj) -> dict[str, str] | None:
    """What a bound, calibrator or figure module outside calcheck depends on, hashed by part.

    Parameters
    ----------
    obj : module, class, function or object
        An object's class stands for it; a ``functools.partial`` for its function.

    Returns
    -------
    dict or None
        Label -> 16 hex digits: ``"mymod.py"`` (a source file of the object's module or of a
        user module it uses through its globals, transitively), ``"mymod (values)"`` (the
        module-level numbers, strings, tuples and arrays as they are now) and, for a
        function without a source file (defined interactively), ``"<name> (code)"`` (code
        object, constants, defaults, closure and the globals it names). None for calcheck's
        own code (its code stamps cover it). Standard-library and installed packages are
        covered by their versions, not hashed.
    """
    target = getattr(obj, "func", obj)  # functools.partial
    target = inspect.unwrap(target) if callable(target) else target
    if not isinstance(target, types.ModuleType | type | types.FunctionType):
        target = type(target)
    module = _module_of(target)
    name = target.__name__ if isinstance(target, types.ModuleType) else target.__module__
    if (name or "").split(".")[0] == "calcheck":
        return None
    out: dict[str, str] = {}
    seen: set = set()
    interactive = module is None or _source_file(module) is None
    if isinstance(target, types.FunctionType) and interactive:
        _function_inputs(target, out, seen)  # its code and what it names, not the session
    elif isinstance(target, type) and interactive:
        for value in vars(target).values():  # a class defined interactively: its methods
            if isinstance(value, types.FunctionType):
                _function_inputs(value, out, seen)
    elif module is not None and _is_user_module(module):
        _module_inputs(module, out, seen)
        if isinstance(target, types.FunctionType) and (target.__closure__ or target.__defaults__):
            _closure_inputs(target, out, seen)
    elif module is not None:  # an installed package's object: its own source file
        path = _source_file(module)
        if path is not None:
            out[_label(module)] = file_digest(path)
        else:
            out[module.__name__] = hashlib.sha256(repr(target).encode()).hexdigest()[:16]
    return out


def code_fingerprint(obj) -> str | None:
    """SHA-256 (16 hex) of :func:`code_inputs` (None for calcheck's own code)."""
    parts = code_inputs(obj)
    if parts is None:
        return None
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:16]


def _returned_text(value) -> str:
    """A stable text of what a probed function returned: dtype, shape and a hash of the values."""
    try:
        data = np.asarray(value)
    except Exception:  # an object numpy cannot hold: its type is what can be compared
        return f"returned {type(value).__qualname__}"
    if data.dtype.kind not in "biufc":
        try:
            data = data.astype(float)
        except (TypeError, ValueError):
            return f"returned {type(value).__qualname__}"
    data = data.astype(complex if data.dtype.kind == "c" else float)
    if data.dtype.kind == "f":
        data = np.where(np.isnan(data), np.nan, data)  # one NaN, whatever its payload
    data = np.ascontiguousarray(data)
    return f"{data.dtype}{data.shape}:{hashlib.sha256(data.tobytes()).hexdigest()[:16]}"


def values_fingerprint(function, probes) -> str:
    """SHA-256 (16 hex) of what ``function`` returns at each of the fixed ``probes``.

    The behaviour of code outside calcheck, which its source cannot show: a bound that
    reads a file on each call, or a value it computes at run time, gives other values
    after the file changes, and so another fingerprint.

    Parameters
    ----------
    function : callable
        Called as ``function(**kwargs)`` for each probe, warnings silenced (a probe is not
        a point the user runs).
    probes : sequence of dict
        The keyword arguments of each call, fixed by the caller.

    Returns
    -------
    str
        The hash of each call's outcome in order: the values returned (dtype, shape and
        every number, NaN made one value), or ``raised <ExceptionType>`` for a call that
        raised (a bound may refuse some sizes; the message is left out, it may hold
        addresses). Equal values give equal fingerprints in every process.
    """
    digest = hashlib.sha256()
    for kwargs in probes:
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                text = _returned_text(function(**kwargs))
        except Exception as exc:  # the user's code refusing a probe is part of its behaviour
            text = f"raised {type(exc).__qualname__}"
        digest.update(text.encode() + b"\n")
    return digest.hexdigest()[:16]


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
