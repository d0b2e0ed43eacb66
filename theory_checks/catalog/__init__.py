"""The suite's checks, one module per paper; this index grows by one line per paper.

Each paper module defines ``checks(budget) -> list[Check]`` (every guarantee's check and
its negative controls), ``STUDIES``
(guarantee -> :class:`~calcheck.theory_checks.check.StudyAdapter`:
how to check it on a user's law) and ``REFUSED`` (guarantee -> why its law is fixed by the
theorem itself). Papers of other packages (:mod:`calcheck.bounds.plugins`) follow the built-in ones
with the same module protocol; a plugin whose checks fail to build is skipped with one
warning line, never the built-in papers.
"""

from __future__ import annotations

import logging
from importlib import import_module

from calcheck.bounds import registry

__all__ = [
    "PAPERS",
    "RATE_TARGET_MODULES",
    "add_study",
    "all_checks",
    "for_law",
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
#: :mod:`calcheck.theory_checks.rate_search`).
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


logger = logging.getLogger("calcheck.plugins")


def _module(paper):
    return import_module(PAPERS[paper])


def _papers() -> list:
    """``(key, module)`` of every paper: the built-in ones, then the plugin papers."""
    return [(p, _module(p)) for p in PAPERS] + list(registry.plugin_papers().items())


def _plugin_checks(key, module, budget) -> list:
    """A plugin paper's checks, or none (with a warning line) if they fail to build."""
    from ..check import Check

    try:
        checks = list(module.checks(budget))
        for c in checks:
            if not isinstance(c, Check):
                raise ValueError(f"checks() must return Check objects, got {type(c).__name__}")
            if not c.id.startswith(key + "."):
                raise ValueError(f"check id {c.id!r} does not start with '{key}.'")
            registry.get(c.guarantee)
    except Exception as exc:
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
    """Guarantee id -> :class:`~calcheck.theory_checks.check.StudyAdapter`, every paper."""
    papers = {}
    for key, module in _papers():
        for gid, adapter in getattr(module, "STUDIES", {}).items():
            if gid.startswith(key + "."):  # a plugin speaks for its own paper only
                papers[gid] = adapter
    return papers | _USER_STUDIES


def methods() -> dict:
    """Method name -> the method a user's guarantee can name.

    Each is a :class:`~calcheck.theory_checks.methods.MethodSpec`.

    Collected from each paper's ``METHODS`` (a name is defined once).
    """
    out = {}
    for paper in PAPERS:
        for name, spec in getattr(_module(paper), "METHODS", {}).items():
            if name in out:
                raise ValueError(f"method {name!r} is defined by two papers")
            out[name] = spec
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
