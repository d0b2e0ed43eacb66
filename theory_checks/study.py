"""Study files: check a registered guarantee on laws of one's own, without Python.

A study is a TOML file::

    guarantee = "gr21.thm4.marginal"   # a studiable guarantee (see `calcheck list`)
    id = "beta25"                      # optional; results are named "study:<id>"
    reps = 2000                        # optional; default: the budget's
    alphas = [0.1, 0.05]               # optional; default: the budget's
    false_alarm = 1e-3                 # optional

    [law]                              # or [[laws]] several times, or laws = ["two_atoms"]
    name = "beta25_platt"
    scores = { kind = "beta", a = 2.0, b = 5.0 }     # uniform | beta | atoms | mixture
    eta = { kind = "logistic", slope = 2.0, intercept = -0.5 }

    [grid]                             # the guarantee's grid parameters
    n = [500, 2000]
    n_bins = [10]

Law tables follow :func:`calcheck.simulations.laws.law_from_spec` (binary, linear_shift, top_label,
dirichlet_affine and binned_model families). Rate claims (klm19 Theorems 5.3, 5.4) and
Definition 5.2 run their own controls (:mod:`.catalog.klm19_studies`). The method and the
event are those of the suite's own check of that guarantee; guarantees whose law the
theorem fixes are refused with the reason. Every table rejects unknown keys.

A guarantee of your own needs no Python session: name its bound as ``"module:function"``
(importable: an installed package, or a module beside the study file) with the method and
the event it is claimed for (``calcheck list --methods``); a calibrator of your own is
``method = "module:Class"`` (constructed with ``method_options``)::

    guarantee = "mine.thm1"
    bound = "my_bounds:radius"         # radius(n, n_bins, alpha) -> eps
    method = "umd"                     # or "my_calibrators:MyBinning"
    method_options = { n_bins = 10 }   # optional: keywords of the calibrator's constructor
    event = "conditional"
    controls = [0.75]                  # optional: the bound times each factor, expected flagged

A ``[search]`` table asks ``calcheck search --study FILE`` for the worst law of a family
instead (one search per grid cell and alpha; :func:`load_search_study`)::

    [search]
    family = "beta_piecewise"          # see `calcheck search --help`
    options = { k = 5 }                # optional family options
    target = "gr21.thm3.times_0.8"     # optional; default: the guarantee's stated bound
    budget = "quick"                   # optional: quick | full
    criterion = "mean_ratio"           # optional: failure | soft_failure | tightness | mean_ratio
    seed = 0                           # optional
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from calcheck.simulations.laws import law_from_spec
from calcheck.simulations.memory import check_experiments_fit

from .catalog import for_law, studiable

__all__ = ["load_search_study", "load_study"]

_KEYS = (
    "guarantee", "id", "reps", "alphas", "false_alarm", "law", "laws", "grid", "search",
    "bound", "method", "method_options", "event", "statement", "controls",
)  # fmt: skip
_OWN = ("bound", "method", "method_options", "event", "statement")
_SEARCH_KEYS = ("family", "options", "target", "budget", "criterion", "seed")


def _positive_int(value, name):
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return value


def _unit(value, name):
    if isinstance(value, bool) or not isinstance(value, int | float) or not (0 < value < 1):
        raise ValueError(f"{name} must be a number in (0, 1), got {value!r}")
    return float(value)


def _import_object(text, key: str, folder: Path):
    """``"package.module:attribute"`` -> the object (the study file's folder is searched too).

    A module that fails to import (a SyntaxError, an exception, ``sys.exit``) is one
    ValueError naming its file and the error. Modules found in the study's folder are
    pickled by value, so that parallel workers (which do not have the folder on their path)
    can run them.
    """
    import importlib
    import sys

    if not isinstance(text, str) or text.count(":") != 1 or not all(text.split(":")):
        raise ValueError(f"{key} must be 'package.module:name', got {text!r}")
    module_name, attribute = text.split(":")
    added = str(folder) not in sys.path
    if added:
        sys.path.insert(0, str(folder))
    before = set(sys.modules)
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name is None or not (module_name + ".").startswith(exc.name + "."):
            # a module that the user's module imports is missing
            raise ValueError(_import_failure(key, text, module_name, exc)) from None
        raise ValueError(
            f"{key} {text!r}: cannot import {module_name!r} ({exc}); put it beside the study "
            f"file (in {str(folder)!r}) or install it"
        ) from None
    except (Exception, SystemExit) as exc:  # the user's module failed while importing
        raise ValueError(_import_failure(key, text, module_name, exc)) from None
    finally:
        if added:
            sys.path.remove(str(folder))
    _pickle_by_value([sys.modules[m] for m in set(sys.modules) - before], folder)
    obj = module
    for part in attribute.split("."):
        if not hasattr(obj, part):
            raise ValueError(f"{key} {text!r}: {module_name!r} has no attribute {attribute!r}")
        obj = getattr(obj, part)
    return obj


def _import_failure(key, text, module_name, exc) -> str:
    """One line: which module file failed to import, and how."""
    import importlib.util
    import traceback

    if isinstance(exc, SyntaxError):
        where = f"{exc.filename}, line {exc.lineno}"
        what = f"SyntaxError: {exc.msg}"
    else:
        frames = traceback.extract_tb(exc.__traceback__)
        try:
            spec = importlib.util.find_spec(module_name)
        except (Exception, SystemExit):
            spec = None
        origin = getattr(spec, "origin", None)
        # the innermost frame in the user's module file (else the innermost frame)
        own = [f for f in frames if origin and f.filename == origin] or frames[-1:]
        where = f"{own[-1].filename}, line {own[-1].lineno}" if own else (origin or "?")
        if isinstance(exc, SystemExit):
            what = f"it called sys.exit({exc.code!r}) while being imported"
        else:
            message = str(exc).splitlines()[0] if str(exc) else ""
            what = f"{type(exc).__name__}: {message}"
    return f"{key} {text!r}: importing {module_name!r} failed ({where}): {what}"


def _pickle_by_value(modules, folder: Path) -> None:
    """Have cloudpickle send by value the modules only the study's folder makes importable.

    Parallel workers do not have that folder on their path. A module importable without it
    (an installed package) is left to be imported by name.
    """
    from importlib.machinery import PathFinder

    from .api import cloudpickle_module

    register = getattr(cloudpickle_module(), "register_pickle_by_value", None)
    root = folder.resolve()
    for module in modules:
        file = getattr(module, "__file__", None)
        top = module.__name__.partition(".")[0]
        if (
            register is not None
            and file
            and Path(file).resolve().is_relative_to(root)
            and PathFinder.find_spec(top) is None  # not importable without the folder
        ):
            register(module)


def _define_own(data: dict, folder: Path) -> None:
    """Define the file's own guarantee (keys ``bound``, ``method``, ``event``) when given."""
    given = [k for k in _OWN if k in data]
    if not given:
        return
    if "bound" not in data or "method" not in data or "event" not in data:
        raise ValueError(
            f"a guarantee of your own needs bound, method and event; the file gives {given}"
        )
    from .user import define_guarantee

    bound = _import_object(data["bound"], "bound", folder)
    method = data["method"]
    options = data.get("method_options", {})
    if not isinstance(options, dict):
        raise ValueError(f"method_options must be a table, got {options!r}")
    if isinstance(method, str) and ":" in method:
        factory = _import_object(method, "method", folder)
        try:
            method = factory(**options) if callable(factory) else factory
        except TypeError as exc:
            raise ValueError(f"method {data['method']!r} with {options!r}: {exc}") from None
        except Exception as exc:  # the user's constructor failed
            raise ValueError(
                f"method {data['method']!r} with {options!r}: constructing it raised "
                f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            ) from None
    elif options:
        raise ValueError("method_options applies to a calibrator given as 'module:Class'")
    define_guarantee(
        data["guarantee"], bound, method=method, event=data["event"],
        statement=str(data.get("statement", "")),
    )  # fmt: skip


def _controls(data: dict, check) -> list:
    factors = data.get("controls", [])
    if not isinstance(factors, list) or not all(
        not isinstance(f, bool) and isinstance(f, int | float) and 0 < f < 1 for f in factors
    ):
        raise ValueError(f"controls must be a list of factors in (0, 1), got {factors!r}")
    from .check import with_sharper_controls

    return [c for f in factors for c in with_sharper_controls([check], {check.id: float(f)})[1:]]


def load_study(path) -> tuple:
    """Parse a study file into a :class:`~calcheck.theory_checks.check.Check` and run options.

    Returns
    -------
    check : Check
    options : dict
        ``reps``, ``false_alarm`` and ``alphas`` when the file gives them, and
        ``controls``: the checks of the stated bound times each factor of ``controls``
        (expected violated; same simulations).
    """
    data = _read(path)
    if "search" in data and "law" not in data and "laws" not in data:
        raise ValueError(
            f"study file {str(path)!r} has a [search] table and no law: run "
            f"`calcheck search --study {path}`"
        )
    check, options = _study_check(data)
    check_experiments_fit(
        check.simulations(), reps=options.get("reps"), what=f"study file {str(path)!r}"
    )
    return check, options


def _read(path) -> dict:
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"study file not found: {str(path)!r}")
    try:
        data = tomllib.loads(p.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"study file {str(path)!r} is not valid TOML: {exc}") from None
    unknown = sorted(set(data) - set(_KEYS))
    if unknown:
        raise ValueError(
            f"unknown keys in study file {str(path)!r}: {unknown}; allowed: {list(_KEYS)}"
        )
    if "guarantee" not in data:
        raise ValueError(
            f'study file {str(path)!r} has no guarantee key: add guarantee = "<id>" '
            "(`calcheck list` shows the studiable ones)"
        )
    if not isinstance(data["guarantee"], str) or not data["guarantee"]:
        raise ValueError(
            f"study file {str(path)!r}: guarantee must be a guarantee id (a string), "
            f"got {data['guarantee']!r}"
        )
    if "reps" in data:
        _positive_int(data["reps"], f"study file {str(path)!r}: reps")
    _define_own(data, p.resolve().parent)
    return data


def _study_check(data: dict, laws_needed: bool = True):
    gid = data.get("guarantee")
    adapters = studiable()
    if gid not in adapters:
        # for_law names the reason for refused guarantees and lists the studiable ones
        for_law(str(gid), (), grid={}, alphas=(0.1,))
    adapter = adapters[gid]
    options = {}
    if "reps" in data:
        options["reps"] = _positive_int(data["reps"], "reps")
    if "false_alarm" in data:
        options["false_alarm"] = _unit(data["false_alarm"], "false_alarm")
    if "alphas" in data:
        alphas = data["alphas"]
        if not isinstance(alphas, list) or not alphas:
            raise ValueError(f"alphas must be a non-empty list, got {alphas!r}")
        options["alphas"] = tuple(_unit(a, "alpha") for a in alphas)
    if "law" in data and "laws" in data:
        raise ValueError("give either [law] or laws / [[laws]], not both")
    tables = data.get("laws", [data["law"]] if "law" in data else None)
    if not laws_needed:
        return gid, _grid(data, adapter), options
    if not tables:
        raise ValueError("a study needs a [law] table (or [[laws]] tables, or laws = [names])")
    laws = []
    for i, table in enumerate(tables):
        if isinstance(table, dict):
            table = dict(table)
            laws.append(law_from_spec(table, str(table.pop("name", f"law{i}"))))
        else:
            laws.append(law_from_spec(table))
    clean = _grid(data, adapter)
    sid = data.get("id", gid)
    if not isinstance(sid, str) or not sid:
        raise ValueError(f"id must be a non-empty string, got {sid!r}")
    check = for_law(
        gid, laws, grid=clean, alphas=options.get("alphas", (0.1, 0.05)), check_id=f"study:{sid}"
    )
    if hasattr(adapter, "controls"):  # a study with its own controls (klm19 rate claims)
        if "controls" in data:
            raise ValueError(
                f"{gid}'s study runs its own negative controls; controls (bound factors) "
                "apply to a stated bound only"
            )
        options["controls"] = adapter.controls(check)
    else:
        options["controls"] = _controls(data, check)
    return check, options


def _grid(data, adapter) -> dict:
    grid = data.get("grid")
    if not isinstance(grid, dict):
        raise ValueError(f"a study needs a [grid] table with {list(adapter.grid_keys)}")
    clean = {}
    for key, values in grid.items():
        if not isinstance(values, list) or not values:
            raise ValueError(f"grid {key} must be a non-empty list, got {values!r}")
        clean[key] = [_positive_int(v, f"grid {key}") for v in values]
    return clean


def load_search_study(path) -> list[dict]:
    """The searches of a study file's ``[search]`` table: keyword arguments of each.

    One search per grid cell (the product of the grid lists) and alpha; each dict has
    ``target``, ``family`` (name), ``family_options``, ``grid``, ``alpha``, ``budget``,
    ``criterion`` and ``seed``.
    """
    import itertools

    data = _read(path)
    table = data.get("search")
    if not isinstance(table, dict):
        raise ValueError(f"study file {str(path)!r} has no [search] table")
    unknown = sorted(set(table) - set(_SEARCH_KEYS))
    if unknown:
        raise ValueError(f"unknown keys in [search]: {unknown}; allowed: {list(_SEARCH_KEYS)}")
    if not isinstance(table.get("family"), str):
        raise ValueError(f"[search] needs family = a family name, got {table.get('family')!r}")
    opts = table.get("options", {})
    if not isinstance(opts, dict):
        raise ValueError(f"[search] options must be a table, got {opts!r}")
    seed = table.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"[search] seed must be a non-negative integer, got {seed!r}")
    gid, grid, options = _study_check(data, laws_needed=False)
    keys = sorted(grid)
    return [
        {
            "target": str(table.get("target", gid)),
            "family": table["family"],
            "family_options": dict(opts),
            "grid": dict(zip(keys, cell, strict=True)),
            "alpha": alpha,
            "budget": str(table.get("budget", "quick")),
            "criterion": str(table.get("criterion", "failure")),
            "seed": seed,
        }
        for cell in itertools.product(*(grid[k] for k in keys))
        for alpha in options.get("alphas", (0.1,))
    ]
