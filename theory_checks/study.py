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
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from simulations.laws import law_from_spec

from .catalog import for_law, studiable

__all__ = ["load_study"]

_KEYS = ("guarantee", "id", "reps", "alphas", "false_alarm", "law", "laws", "grid")


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
    if not tables:
        raise ValueError("a study needs a [law] table (or [[laws]] tables, or laws = [names])")
    laws = []
    for i, table in enumerate(tables):
        if isinstance(table, dict):
            table = dict(table)
            laws.append(law_from_spec(table, str(table.pop("name", f"law{i}"))))
        else:
            laws.append(law_from_spec(table))
    grid = data.get("grid")
    if not isinstance(grid, dict):
        raise ValueError(f"a study needs a [grid] table with {list(adapter.grid_keys)}")
    clean = {}
    for key, values in grid.items():
        if not isinstance(values, list) or not values:
            raise ValueError(f"grid {key} must be a non-empty list, got {values!r}")
        clean[key] = [_positive_int(v, f"grid {key}") for v in values]
    sid = data.get("id", gid)
    if not isinstance(sid, str) or not sid:
        raise ValueError(f"id must be a non-empty string, got {sid!r}")
    check = for_law(
        gid, laws, grid=clean, alphas=options.get("alphas", (0.1, 0.05)), check_id=f"study:{sid}"
    )
    return check, options
