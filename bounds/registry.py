"""Registry of guarantees: the index of papers, and id -> :class:`~bounds.guarantee.Guarantee`.

Every paper module lists its guarantees in ``GUARANTEES``; :data:`PAPERS` names the modules
of each paper (one line per paper). The registry lets tests assert that every registered
guarantee has a theory check, and lets the CLI evaluate any bound by id.
"""

from __future__ import annotations

from importlib import import_module

from .guarantee import QUANTIFIERS, Guarantee

__all__ = [
    "PAPERS",
    "QUANTIFIERS",
    "Guarantee",
    "all_guarantees",
    "get",
    "guarantees_of",
    "is_user_defined",
    "register",
    "register_user",
]

#: Paper key -> the bounds modules of that paper.
PAPERS = {
    "gr21": ("calcheck.bounds.gr21",),
    "gpr20": ("calcheck.bounds.gpr20", "calcheck.bounds.gpr20_shift"),
    "gr22": ("calcheck.bounds.gr22",),
    "klm19": (
        "calcheck.bounds.klm19",
        "calcheck.bounds.klm19_scaling",
        "calcheck.bounds.klm19_informal",
    ),
    "nch14": ("calcheck.bounds.nch14", "calcheck.bounds.nch14_auc"),
}

_REGISTRY: dict[str, Guarantee] = {}
#: Ids of guarantees defined at run time (``calcheck.define_guarantee``), not by a paper.
_USER: set[str] = set()


def register(guarantee: Guarantee) -> Guarantee:
    """Add a guarantee; ids are unique."""
    if not isinstance(guarantee, Guarantee):
        raise ValueError(f"guarantee must be a Guarantee, got {type(guarantee).__name__}")
    if guarantee.id in _REGISTRY:
        raise ValueError(f"guarantee id already registered: {guarantee.id!r}")
    _REGISTRY[guarantee.id] = guarantee
    return guarantee


def register_user(guarantee: Guarantee) -> Guarantee:
    """Add or replace a guarantee defined at run time.

    Redefining a user's id replaces it (a notebook cell run twice); the id of a paper's
    guarantee is never replaced.
    """
    if guarantee.id in _REGISTRY and guarantee.id not in _USER:
        raise ValueError(
            f"guarantee id {guarantee.id!r} belongs to a paper's registered guarantee; "
            "choose another id (e.g. 'mine.thm1')"
        )
    _REGISTRY.pop(guarantee.id, None)
    _USER.add(guarantee.id)
    return register(guarantee)


def is_user_defined(guarantee_id: str) -> bool:
    """Whether ``guarantee_id`` was defined at run time rather than by a paper module."""
    return guarantee_id in _USER


for _paper, _modules in PAPERS.items():
    for _name in _modules:
        for _g in import_module(_name).GUARANTEES:
            if _g.paper != _paper:
                raise ValueError(f"{_g.id} is listed in {_name} but says paper {_g.paper!r}")
            register(_g)


def get(guarantee_id: str) -> Guarantee:
    """Return the guarantee with this id, or raise ValueError listing the known ids."""
    try:
        return _REGISTRY[guarantee_id]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY))
        raise ValueError(f"unknown guarantee id {guarantee_id!r}; known: {known}") from None


def all_guarantees() -> list[Guarantee]:
    """All registered guarantees, sorted by id."""
    return [_REGISTRY[k] for k in sorted(_REGISTRY)]


def guarantees_of(paper: str) -> list[Guarantee]:
    """The guarantees of one paper, sorted by id."""
    if paper not in PAPERS:
        raise ValueError(f"paper must be one of {sorted(PAPERS)}, got {paper!r}")
    return [g for g in all_guarantees() if g.paper == paper]
