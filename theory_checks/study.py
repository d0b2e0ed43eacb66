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

Law tables follow :func:`simulations.laws.law_from_spec` (binary, linear_shift, top_label
and dirichlet_affine families). The method and the event are those of the suite's own
check of that guarantee; guarantees whose law the theorem fixes are refused with the reason.
Every table rejects unknown keys.

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

from .catalog import for_law, studiable

__all__ = ["load_search_study", "load_study"]

_KEYS = ("guarantee", "id", "reps", "alphas", "false_alarm", "law", "laws", "grid", "search")
_SEARCH_KEYS = ("family", "options", "target", "budget", "criterion", "seed")


def _positive_int(value, name):
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return value


def _unit(value, name):
    if isinstance(value, bool) or not isinstance(value, int | float) or not (0 < value < 1):
        raise ValueError(f"{name} must be a number in (0, 1), got {value!r}")
    return float(value)


def load_study(path) -> tuple:
    """Parse a study file into a :class:`~theory_checks.check.Check` and run options.

    Returns
    -------
    check : Check
    options : dict
        ``reps``, ``false_alarm`` and ``alphas`` when the file gives them.
    """
    data = _read(path)
    if "search" in data and "law" not in data and "laws" not in data:
        raise ValueError(
            f"study file {str(path)!r} has a [search] table and no law: run "
            f"`calcheck search --study {path}`"
        )
    return _study_check(data)


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
