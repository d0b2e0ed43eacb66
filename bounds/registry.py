"""Registry of guarantees: the index of papers, and id -> guarantee record.

The record is :class:`~calcheck.bounds.guarantee.Guarantee`.

Every paper module lists its guarantees in ``GUARANTEES``; :data:`PAPERS` names the modules
of each built-in paper (one line per paper). Papers of other packages (the
``calcheck.papers`` entry points, :mod:`calcheck.bounds.plugins`) join at first use:
:func:`plugin_papers`. The registry lets tests assert that every registered guarantee has a
theory check, and lets the CLI evaluate any bound by id.
"""

from __future__ import annotations

from importlib import import_module

from . import plugins
from .guarantee import QUANTIFIERS, Guarantee

__all__ = [
    "PAPERS",
    "QUANTIFIERS",
    "Guarantee",
    "all_guarantees",
    "forget_user",
    "get",
    "guarantees_of",
    "is_user_defined",
    "loaded_plugin_papers",
    "paper_keys",
    "plugin_papers",
    "register",
    "register_user",
]

#: Paper key -> the bounds modules of that paper.
PAPERS = {
    "gr21": ("calcheck.bounds.gr21", "calcheck.bounds.gr21_lemmas"),
    "gpr20": (
        "calcheck.bounds.gpr20",
        "calcheck.bounds.gpr20_shift",
        "calcheck.bounds.gpr20_sampling",
        "calcheck.bounds.gpr20_steps",
    ),
    "gr22": (
        "calcheck.bounds.gr22",
        "calcheck.bounds.gr22_canonical",
        "calcheck.bounds.gr22_union",
    ),
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
#: Paper key -> module of the loaded plugin papers (None: not looked for yet).
_PLUGINS: dict | None = None


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


def forget_user(guarantee_id: str) -> None:
    """Unregister a guarantee defined at run time; a paper's guarantee is never removed."""
    if guarantee_id in _USER:
        _REGISTRY.pop(guarantee_id, None)
        _USER.discard(guarantee_id)


def is_user_defined(guarantee_id: str) -> bool:
    """Whether ``guarantee_id`` was defined at run time rather than by a paper module."""
    return guarantee_id in _USER


for _paper, _modules in PAPERS.items():
    for _name in _modules:
        for _g in import_module(_name).GUARANTEES:
            if _g.paper != _paper:
                raise ValueError(f"{_g.id} is listed in {_name} but says paper {_g.paper!r}")
            register(_g)


def _plugin_guarantees(key: str, module) -> None:
    """Validate a plugin paper's module and register its guarantees (all or none)."""
    listed = getattr(module, "GUARANTEES", None)
    if listed is None:
        raise plugins.PluginError(f"{module.__name__} defines no GUARANTEES")
    listed = list(listed)
    if not listed:
        raise plugins.PluginError(f"{module.__name__}.GUARANTEES is empty")
    ids = []
    for g in listed:
        if not isinstance(g, Guarantee):
            raise plugins.PluginError(
                f"GUARANTEES must hold Guarantee records, got {type(g).__name__}"
            )
        if g.paper != key or not g.id.startswith(key + "."):
            raise plugins.PluginError(
                f"guarantee {g.id!r} (paper {g.paper!r}): a guarantee of paper {key!r} has "
                f"paper={key!r} and an id starting with '{key}.'"
            )
        if g.id in _REGISTRY or g.id in ids:
            raise plugins.PluginError(f"guarantee id {g.id!r} is already registered")
        ids.append(g.id)
    if not callable(getattr(module, "checks", None)):
        raise plugins.PluginError(f"{module.__name__} defines no checks(budget)")
    for g in listed:
        register(g)


def plugin_papers() -> dict:
    """Paper key -> module of the plugin papers (loaded, and registered, at first call)."""
    global _PLUGINS
    if _PLUGINS is None:
        _PLUGINS = {}  # before loading: a plugin that imports calcheck never loops back here
        _PLUGINS.update(plugins.discover(set(PAPERS), _plugin_guarantees))
    return _PLUGINS


def loaded_plugin_papers() -> dict:
    """The plugin papers loaded so far (paper key -> module), without looking for more."""
    return dict(_PLUGINS or {})


def paper_keys() -> tuple[str, ...]:
    """Every paper key: the built-in papers, then the plugin papers."""
    return (*PAPERS, *plugin_papers())


def _forget_plugins() -> None:
    """Unregister the plugin papers, to be looked for again (tests)."""
    global _PLUGINS
    for key in _PLUGINS or {}:
        for gid in [g for g, rec in _REGISTRY.items() if rec.paper == key]:
            del _REGISTRY[gid]
    _PLUGINS = None


def get(guarantee_id: str) -> Guarantee:
    """Return the guarantee with this id, or raise ValueError listing the known ids.

    Parameters
    ----------
    guarantee_id : str
        A registered id (``calcheck list`` prints them), e.g. ``"gr21.thm3"``.

    Returns
    -------
    Guarantee
        Its record: the bound function, paper, label, statement, hypotheses, quantifier.

    Raises
    ------
    ValueError
        For an unknown id (the message lists the known ones).

    Examples
    --------
    >>> from calcheck import get_guarantee
    >>> g = get_guarantee("gr21.thm3")
    >>> g.label, g.quantifier, g.parameters
    ('Theorem 3, eq. (8)', 'conditional', ('n', 'n_bins', 'alpha'))
    >>> round(float(g.function(n=3000, n_bins=10, alpha=0.1)), 4)
    0.0941
    """
    if guarantee_id not in _REGISTRY and _PLUGINS is None:
        plugin_papers()  # an id of a plugin paper
    try:
        return _REGISTRY[guarantee_id]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY))
        raise ValueError(f"unknown guarantee id {guarantee_id!r}; known: {known}") from None


def all_guarantees() -> list[Guarantee]:
    """All registered guarantees (plugin papers' included), sorted by id.

    Returns
    -------
    list of Guarantee

    Examples
    --------
    >>> from calcheck import list_guarantees
    >>> [g.id for g in list_guarantees() if g.id.startswith("gr21.thm4")]
    ['gr21.thm4.conditional', 'gr21.thm4.ece_hp', 'gr21.thm4.ece_mean',
     'gr21.thm4.ece_mean.proof_valid', 'gr21.thm4.marginal']
    """
    plugin_papers()
    return [_REGISTRY[k] for k in sorted(_REGISTRY)]


def guarantees_of(paper: str) -> list[Guarantee]:
    """The guarantees of one paper, sorted by id."""
    keys = paper_keys()
    if paper not in keys:
        raise ValueError(f"paper must be one of {sorted(keys)}, got {paper!r}")
    return [g for g in all_guarantees() if g.paper == paper]
