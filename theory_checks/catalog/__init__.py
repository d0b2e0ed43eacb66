"""The suite's checks, one module per paper; this index grows by one line per paper.

Each paper module defines ``checks(budget) -> list[Check]`` (every guarantee's check and
its negative controls), ``STUDIES`` (guarantee -> :class:`~theory_checks.check.StudyAdapter`:
how to check it on a user's law) and ``REFUSED`` (guarantee -> why its law is fixed by the
theorem itself).
"""

from __future__ import annotations

from importlib import import_module

from calcheck.bounds import registry

__all__ = ["PAPERS", "add_study", "all_checks", "for_law", "methods", "refused", "studiable"]

#: Paper key -> catalog module.
PAPERS = {
    "gr21": "calcheck.theory_checks.catalog.gr21",
    "gpr20": "calcheck.theory_checks.catalog.gpr20",
    "gr22": "calcheck.theory_checks.catalog.gr22",
    "klm19": "calcheck.theory_checks.catalog.klm19",
    "nch14": "calcheck.theory_checks.catalog.nch14",
}


#: Study adapters of guarantees defined at run time (``calcheck.define_guarantee``).
_USER_STUDIES: dict = {}


def add_study(guarantee_id: str, adapter) -> None:
    """Make a run-time guarantee studiable (its adapter replaces an earlier one)."""
    registry.get(guarantee_id)
    if not registry.is_user_defined(guarantee_id):
        raise ValueError(f"{guarantee_id!r} is a paper's guarantee; its studies are its paper's")
    _USER_STUDIES[guarantee_id] = adapter


def _module(paper):
    return import_module(PAPERS[paper])


def all_checks(budget="quick") -> list:
    """Every check of every paper, in index order."""
    return [c for paper in PAPERS for c in _module(paper).checks(budget)]


def studiable() -> dict:
    """Guarantee id -> :class:`~theory_checks.check.StudyAdapter`, every paper."""
    papers = {gid: a for paper in PAPERS for gid, a in _module(paper).STUDIES.items()}
    return papers | _USER_STUDIES


def methods() -> dict:
    """Method name -> :class:`~theory_checks.methods.MethodSpec` a user's guarantee can name.

    Collected from each paper's ``METHODS`` (a name is defined once).
    """
    out = {}
    for paper in PAPERS:
        for name, spec in getattr(_module(paper), "METHODS", {}).items():
            if name in out:
                raise ValueError(f"method {name!r} is defined by two papers")
            out[name] = spec
    return out


def refused() -> dict:
    """Guarantee id -> reason it cannot be studied on a user's law."""
    return {gid: why for paper in PAPERS for gid, why in _module(paper).REFUSED.items()}


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
