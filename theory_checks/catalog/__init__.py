"""The suite's checks, one module per paper; this index grows by one line per paper.

Each paper module defines ``checks(budget) -> list[Check]`` (every guarantee's check and
its negative controls), ``STUDIES``
(guarantee -> :class:`~calcheck.theory_checks.checks.check.StudyAdapter`:
how to check it on a user's law) and ``REFUSED`` (guarantee -> why its law is fixed by the
theorem itself). Papers of other packages (:mod:`calcheck.bounds.plugins`) follow the built-in ones
with the same module protocol; a plugin whose checks fail to build is skipped with one
warning line, never the built-in papers.

A plugin paper's ``calcheck.define_guarantee`` results need no check or study of their own:
each without a check in the module's ``checks(budget)`` gets one here, on the laws and grid
of the module's ``CHECK_ON[id]`` (``{"laws": [...], "grid": {...}}``; by default
:data:`DEFAULT_CHECK_ON` for a method on binary laws with grid ``n``, ``n_bins``), plus the
sharper negative control of ``SHARPER_CONTROLS[id]`` (a factor) if given; its study is its
definition's.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping
from importlib import import_module

from calcheck.bounds import plugins, registry

__all__ = [
    "DEFAULT_CHECK_ON",
    "PAPERS",
    "RATE_TARGET_MODULES",
    "add_study",
    "all_checks",
    "for_law",
    "forget_study",
    "methods",
    "rate_targets",
    "refused",
    "studiable",
]

#: Paper key -> catalog module.
PAPERS = {
    "gr21": "calcheck.theory_checks.catalog.gr21",
    "gpr20": "calcheck.theory_checks.catalog.gpr20",
    "gr22": "calcheck.theory_checks.catalog.gr22",
    "klm19": "calcheck.theory_checks.catalog.klm19",
    "nch14": "calcheck.theory_checks.catalog.nch14",
}

#: Paper key -> module of its worst-law search targets of rate claims (``RATE_TARGETS``,
#: :mod:`calcheck.theory_checks.search.rates`).
RATE_TARGET_MODULES = {
    "klm19": "calcheck.theory_checks.catalog.klm19_rate_targets",
    "nch14": "calcheck.theory_checks.catalog.nch14_rate_targets",
}


def rate_targets() -> dict:
    """Rate check id -> its worst-law search target, over every paper."""
    out = {}
    for name in RATE_TARGET_MODULES.values():
        out.update(import_module(name).RATE_TARGETS)
    return out


#: Paper key -> module of the hot paths it adds to ``calcheck bench`` (``benchmark_*``).
BENCHMARK_MODULES = {"klm19": "calcheck.simulations.experiments.klm19_recalibration"}


def paper_benchmark(paper: str, name: str):
    """The benchmark function ``name`` of ``paper`` (``calcheck bench`` times its hot path)."""
    if paper not in BENCHMARK_MODULES:
        raise ValueError(f"paper must be one of {sorted(BENCHMARK_MODULES)}, got {paper!r}")
    return getattr(import_module(BENCHMARK_MODULES[paper]), name)


#: Study adapters of guarantees defined at run time (``calcheck.define_guarantee``).
_USER_STUDIES: dict = {}


def add_study(guarantee_id: str, adapter) -> None:
    """Make a run-time guarantee studiable (its adapter replaces an earlier one)."""
    registry.get(guarantee_id)
    if not registry.is_user_defined(guarantee_id):
        raise ValueError(f"{guarantee_id!r} is a paper's guarantee; its studies are its paper's")
    _USER_STUDIES[guarantee_id] = adapter


def forget_study(guarantee_id: str) -> None:
    """Drop the study adapter of a run-time guarantee (nothing if it has none)."""
    _USER_STUDIES.pop(guarantee_id, None)


logger = logging.getLogger("calcheck.plugins")

#: Where a plugin's ``define_guarantee`` result is checked when its module's ``CHECK_ON``
#: does not say: two binary laws (eta = 1/2, the largest label variance, and a skewed one)
#: at n = 1000, B = 10.
DEFAULT_CHECK_ON = {"laws": ("uniform_half", "skewed_beta"), "grid": {"n": 1000, "n_bins": 10}}


def _check_on(module, defined) -> tuple:
    """``(laws, grid)`` of the generated check of ``defined`` (ValueError naming the module)."""
    from calcheck.simulations.laws import LAWS

    adapter = defined.adapter()
    where = getattr(module, "CHECK_ON", None) or {}
    if not isinstance(where, dict):
        raise ValueError(f"CHECK_ON must map guarantee ids to {{'laws', 'grid'}}, got {where!r}")
    unknown = sorted(set(where) - {d.id for d in plugins.defined_guarantees(module)})
    if unknown:
        raise ValueError(f"CHECK_ON names {unknown}, not define_guarantee results of GUARANTEES")
    on = where.get(defined.id)
    if on is None:
        if "binary" not in adapter.families or set(adapter.grid_keys) != {"n", "n_bins"}:
            raise ValueError(
                f"{defined.id} (laws of family {' or '.join(adapter.families)}, grid "
                f"{list(adapter.grid_keys)}) has no default check: give CHECK_ON = "
                f"{{{defined.id!r}: {{'laws': [...], 'grid': {{...}}}}}} in {module.__name__}"
            )
        on = DEFAULT_CHECK_ON
    if not isinstance(on, dict) or set(on) != {"laws", "grid"} or not isinstance(on["grid"], dict):
        raise ValueError(
            f"CHECK_ON[{defined.id!r}] must be {{'laws': [...], 'grid': {{...}}}}, got {on!r}"
        )
    laws = [on["laws"]] if isinstance(on["laws"], str) else list(on["laws"])
    for i, law in enumerate(laws):
        if isinstance(law, str):
            if law not in LAWS:
                raise ValueError(
                    f"CHECK_ON[{defined.id!r}]: unknown law name {law!r} (calcheck.LAWS and "
                    "`calcheck list` name the shipped laws)"
                )
            laws[i] = LAWS[law]
    grid = {k: v if isinstance(v, list | tuple) else (v,) for k, v in on["grid"].items()}
    return tuple(laws), grid


def _defined_checks(module, budget, covered) -> list:
    """Checks of a plugin's ``define_guarantee`` results that ``checks(budget)`` leaves out."""
    from ..checks.budgets import get_budget
    from ..checks.check import with_sharper_controls

    alphas = get_budget(budget).alphas
    out = []
    for d in plugins.defined_guarantees(module):
        if d.id not in covered:
            laws, grid = _check_on(module, d)
            check = d.adapter().check(laws, grid, alphas, check_id=d.id)
            text = f"{d.guarantee.statement} ({', '.join(law.name for law in laws)})"
            out.append(dataclasses.replace(check, description=text))
    factors = dict(getattr(module, "SHARPER_CONTROLS", None) or {})
    unknown = sorted(set(factors) - {c.id for c in out})
    if unknown:
        raise ValueError(f"SHARPER_CONTROLS names {unknown}, not a generated check's id")
    return with_sharper_controls(out, factors)


def _module(paper):
    return import_module(PAPERS[paper])


def _papers() -> list:
    """``(key, module)`` of every paper: the built-in ones, then the plugin papers."""
    return [(p, _module(p)) for p in PAPERS] + list(registry.plugin_papers().items())


def _plugin_checks(key, module, budget) -> list:
    """A plugin paper's checks, or none (with a warning line) if they fail to build."""
    from ..checks.check import Check

    try:
        own = getattr(module, "checks", None)
        checks = list(own(budget)) if own is not None else []
        checks += _defined_checks(module, budget, {c.guarantee for c in checks})
        for c in checks:
            if not isinstance(c, Check):
                raise ValueError(f"checks() must return Check objects, got {type(c).__name__}")
            if not c.id.startswith(key + "."):
                raise ValueError(f"check id {c.id!r} does not start with '{key}.'")
            registry.get(c.guarantee)
    except (Exception, SystemExit) as exc:  # a plugin that exits must not end the command
        logger.warning(
            "calcheck: the checks of paper plugin %r (%s) not loaded: %s: %s",
            key,
            module.__name__,
            type(exc).__name__,
            str(exc).splitlines()[0] if str(exc) else "",
        )
        return []
    return checks


def all_checks(budget="quick") -> list:
    """Every check of every paper, in index order (plugin papers last)."""
    out = [c for paper in PAPERS for c in _module(paper).checks(budget)]
    for key, module in registry.plugin_papers().items():
        out += _plugin_checks(key, module, budget)
    return out


def studiable() -> dict:
    """Guarantee id -> :class:`~calcheck.theory_checks.checks.check.StudyAdapter`, every paper."""
    papers = {}
    for key, module in _papers():
        for gid, adapter in getattr(module, "STUDIES", {}).items():
            if gid.startswith(key + "."):  # a plugin speaks for its own paper only
                papers[gid] = adapter
    known = {g.id for g in registry.all_guarantees()}  # a forgotten definition is not listed
    return papers | {gid: a for gid, a in _USER_STUDIES.items() if gid in known}


def _plugin_methods(builtin: dict) -> dict:
    """The built-in methods and the plugin papers' (a taken name is one warning line)."""
    out = dict(builtin)
    for key, module in registry.plugin_papers().items():
        for name, spec in getattr(module, "METHODS", {}).items():
            if name in out:
                logger.warning(
                    "calcheck: method %r of paper plugin %r not loaded: the name is taken",
                    name,
                    key,
                )
                continue
            out[name] = spec
    return out


class _Methods(Mapping):
    """The methods; the plugin papers are looked for only for a name the built-in lack.

    So a plugin module that calls ``calcheck.define_guarantee`` on a built-in method while
    it is being imported does not make the registry look for plugins (itself among them,
    half imported).
    """

    def __init__(self, builtin: dict):
        self._builtin = builtin
        self._all: dict | None = None

    def _every(self) -> dict:
        if self._all is None:
            self._all = _plugin_methods(self._builtin)
        return self._all

    def __getitem__(self, name):
        if name in self._builtin:
            return self._builtin[name]
        return self._every()[name]

    def __iter__(self):
        return iter(self._every())

    def __len__(self) -> int:
        return len(self._every())


def methods() -> Mapping:
    """Method name -> the method a user's guarantee can name (a read-only mapping).

    Each is a :class:`~calcheck.theory_checks.checks.methods.MethodSpec`.

    Collected from each paper's ``METHODS`` (a name is defined once); the plugin papers'
    are looked for only when a name is not a built-in paper's, or to list them all.
    """
    out = {}
    for paper in PAPERS:
        for name, spec in getattr(_module(paper), "METHODS", {}).items():
            if name in out:
                raise ValueError(f"method {name!r} is defined by two papers")
            out[name] = spec
    return _Methods(out)


def refused() -> dict:
    """Guarantee id -> reason it cannot be studied on a user's law."""
    return {
        gid: why
        for key, module in _papers()
        for gid, why in getattr(module, "REFUSED", {}).items()
        if gid.startswith(key + ".")
    }


def for_law(guarantee_id: str, laws, *, grid: dict, alphas, check_id=None):
    """A check of ``guarantee_id`` on ``laws`` (a law or a sequence of laws).

    Raises ValueError naming the guarantee and, for a refused one, the reason; the message
    lists the studiable guarantees.
    """
    registry.get(guarantee_id)
    adapters = studiable()
    if guarantee_id not in adapters:
        why = refused().get(guarantee_id, "no study adapter")
        raise ValueError(
            f"guarantee {guarantee_id!r} cannot be checked on a law of your own: "
            f"{why}. Studiable: {', '.join(sorted(adapters))}"
        )
    if not isinstance(laws, list | tuple):
        laws = (laws,)
    return adapters[guarantee_id].check(tuple(laws), grid, alphas, check_id=check_id)
