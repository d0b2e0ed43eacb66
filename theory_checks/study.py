"""Study files: test a guarantee on a distribution of one's own, without Python.

A study is a TOML file::

    guarantee = "gr21.thm4.marginal"   # registered id (see `calcheck list`)
    reps = 2000                        # optional; default: the budget's
    alphas = [0.1, 0.05]               # optional
    # calibrator = { name = "randomized_umd", delta = 0.0 }   # optional
    # false_alarm = 1e-3                                       # optional

    [law]                              # or [[laws]] several times
    name = "beta25_platt"
    scores = { kind = "beta", a = 2.0, b = 5.0 }     # uniform | beta | atoms | mixture
    eta = { kind = "logistic", slope = 2.0, intercept = -0.5 }
    labels = "binary"                                # or "beta" with concentration = ...

    [grid]
    n = [500, 2000]
    n_bins = [10]

The calibrator and the per-replicate event default to those of the suite's own check of
that guarantee.
"""

from __future__ import annotations

import tomllib
from dataclasses import replace
from pathlib import Path

from simulations.laws import LAWS, law_from_spec

from .checks import Check, EventCheck, all_checks

__all__ = ["load_study"]

_KEYS = {"guarantee", "reps", "alphas", "calibrator", "false_alarm", "law", "laws", "grid",
         "delta", "id"}


def load_study(path) -> tuple[Check, dict]:
    """Parse a study file into a :class:`Check` and run options (``reps``, ``false_alarm``)."""
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"study file not found: {str(path)!r}")
    try:
        data = tomllib.loads(p.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"study file {str(path)!r} is not valid TOML: {exc}") from None
    unknown = set(data) - _KEYS
    if unknown:
        raise ValueError(f"unknown keys in study file {str(path)!r}: {sorted(unknown)}")
    gid = data.get("guarantee")
    base = {c.id: c for c in all_checks("quick")}.get(gid)
    studiable = sorted(c.id for c in all_checks("quick")
                       if not c.is_control and (isinstance(c, Check) or c.id in _COR3))
    if base is None or gid not in studiable:
        raise ValueError(f"guarantee must be one of {studiable}, got {gid!r}")
    law_tables = data.get("laws") or ([data["law"]] if "law" in data else None)
    if not law_tables:
        raise ValueError("a study needs a [law] table (or [[laws]] tables)")
    laws = []
    for i, table in enumerate(law_tables):
        if isinstance(table, str):
            if table not in LAWS:
                raise ValueError(f"unknown law name {table!r}; known: {sorted(LAWS)}")
            laws.append(LAWS[table])
        else:
            table = dict(table)
            laws.append(law_from_spec(table, table.pop("name", f"law{i}")))
    grid = data.get("grid", {})
    ns, bins = grid.get("n"), grid.get("n_bins", [10])
    if not ns:
        raise ValueError("a study needs [grid] n = [...] (and optionally n_bins = [...])")
    pairs = tuple((int(n), int(b)) for n in ns for b in bins)
    options = {k: data[k] for k in ("reps", "false_alarm") if k in data}
    if isinstance(base, EventCheck):
        return _cor3_study(data, base, laws, pairs, p.name), options
    check = replace(
        base,
        id=data.get("id", f"study:{gid}"),
        laws=tuple(laws),
        grid=pairs,
        alphas=tuple(float(a) for a in data.get("alphas", base.alphas)),
        calibrator=dict(data.get("calibrator", base.calibrator)),
        delta=float(data.get("delta", base.delta)),
        description=f"study {p.name}: {base.description}",
    )
    return check, options


# Corollary 3 of gpr20 (histogram binning with its data-dependent radius) on user laws.
_COR3 = {"gpr20.cor3": "stated", "gpr20.cor3.max_halfwidth": "max_halfwidth"}


def _cor3_study(data, base, laws, pairs, name) -> EventCheck:
    from simulations.experiments import BinningRadiusExperiment

    alphas = tuple(float(a) for a in data.get("alphas", (0.1, 0.05)))
    calibrator = dict(data.get("calibrator", {"name": "fixed_width"}))
    experiments = tuple(BinningRadiusExperiment(law, calibrator, n, b, alphas,
                                                _COR3[base.guarantee])
                        for law in laws for n, b in pairs)
    return EventCheck(data.get("id", f"study:{base.id}"), base.guarantee, experiments,
                      description=f"study {name}: {base.description}")
