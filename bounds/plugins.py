"""Papers from other packages: the ``calcheck.papers`` entry-point group.

A package adds a paper to calcheck by declaring, in its ``pyproject.toml``::

    [project.entry-points."calcheck.papers"]
    ex23 = "calcheck_example_paper.paper"

The entry point's *name* is the paper key (lower-case letters and digits, e.g. ``ex23``)
and its *target* a module that defines

``GUARANTEES``
    a sequence of :class:`~calcheck.bounds.guarantee.Guarantee` whose ``paper`` is the key and whose
    ids start with ``"<key>."`` (the bounds), and/or results of ``calcheck.define_guarantee``
    with such ids (a bound on a method calcheck simulates: it keeps its definition, and the
    paper's catalog gives it a check and a study);
``checks(budget)``
    the paper's :class:`~calcheck.theory_checks.checks.check.Check` list at a budget name
    (``"quick"``, ``"full"``), ids starting with ``"<key>."``: guarantees and their negative
    controls (optional when every guarantee is a ``define_guarantee`` result);

and optionally ``STUDIES`` (guarantee id -> study adapter), ``REFUSED`` (guarantee id ->
why it cannot be studied on a user's law), ``METHODS`` (method name -> method spec) and
``FIGURES`` (figure id -> module path, each module with ``CAPTION``, ``compute`` and
``draw`` as calcheck's own figure modules), as calcheck's paper modules do. The names a
plugin builds these from are public: :mod:`calcheck.plugin`.

Plugins are loaded at first use (``calcheck list``, ``run``, ``search``, ``figures``, or
asking the registry for an id it does not know), never when calcheck is imported, so that a
plugin can import calcheck freely. A plugin that fails to load (an import error, a key or
an id that collides with a built-in paper's or another plugin's, a malformed module) is
skipped with one warning line naming it; the built-in papers are never hidden. The
environment variable ``CALCHECK_PLUGINS=0`` loads none (the built-in papers alone).
"""

from __future__ import annotations

import logging
import os
import re
import sys
from importlib import import_module, metadata

from .guarantee import Guarantee

__all__ = ["ENV", "GROUP", "PluginError", "defined_guarantees", "discover", "entry_points"]

#: The entry-point group.
GROUP = "calcheck.papers"
#: Environment variable: ``0`` (or ``false``, ``no``, ``off``) loads no plugin.
ENV = "CALCHECK_PLUGINS"

_KEY = re.compile(r"^[a-z][a-z0-9_]*$")
_PACKAGE = __name__.partition(".")[0]  # "calcheck"
logger = logging.getLogger("calcheck.plugins")


class PluginError(ValueError):
    """A plugin paper that cannot be loaded (the message names it and says why)."""


def entry_points():
    """The installed entry points of :data:`GROUP` (one home, patched by tests)."""
    return tuple(metadata.entry_points(group=GROUP))


def enabled() -> bool:
    """Whether plugins are loaded (:data:`ENV` is not ``0``/``false``/``no``/``off``)."""
    return os.environ.get(ENV, "1").strip().lower() not in ("0", "false", "no", "off")


def _origin(ep) -> str:
    dist = getattr(ep, "dist", None)
    name = f" from {dist.name} {dist.version}" if dist is not None else ""
    return f"{ep.value}{name}"


def _is_defined(entry) -> bool:
    """Whether ``entry`` is a ``calcheck.define_guarantee`` result.

    Recognised by what it has (its record and a way to register it): this layer does not
    import the checks' layer.
    """
    return (
        not isinstance(entry, Guarantee)
        and isinstance(getattr(entry, "guarantee", None), Guarantee)
        and callable(getattr(entry, "ensure_registered", None))
        and callable(getattr(entry, "adapter", None))
    )


def defined_guarantees(module) -> list:
    """The ``calcheck.define_guarantee`` results among a paper module's ``GUARANTEES``."""
    return [g for g in getattr(module, "GUARANTEES", None) or () if _is_defined(g)]


class _Records:
    """A plugin module seen with its ``GUARANTEES`` reduced to the Guarantee records."""

    def __init__(self, module, records):
        self._module = module
        self.GUARANTEES = records

    def __getattr__(self, name):
        return getattr(self._module, name)


def _validated(key: str, module, validate) -> None:
    """Validate a plugin module; register its ``define_guarantee`` results under its key.

    The records go through ``validate`` (the registry's rules); a ``define_guarantee``
    result, registered when the module ran it, is registered again here if its definition
    was forgotten, provided its id starts with ``"<key>."``.
    """
    defined = defined_guarantees(module)
    if not defined:
        validate(key, module)
        return
    records = [g for g in module.GUARANTEES if not _is_defined(g)]
    seen = set()
    for d in defined:
        if not d.id.startswith(key + ".") or d.guarantee.paper != key:
            raise PluginError(
                f"guarantee {d.id!r} (defined with calcheck.define_guarantee): a guarantee "
                f"of paper {key!r} has an id starting with '{key}.'"
            )
        if d.id in seen:
            raise PluginError(f"guarantee id {d.id!r} is listed twice in GUARANTEES")
        seen.add(d.id)
    if records:
        validate(key, _Records(module, records))
    for d in defined:
        d.ensure_registered()  # a paper's id is refused (ValueError)


def _is_interruption(exc: BaseException) -> bool:
    """Whether ``exc`` stops the command: Ctrl-C, or calcheck's own interruption (a signal).

    calcheck's interruption is a BaseException of its command line (a layer above this
    one), recognised by its package; any other exception is the plugin's failure.
    """
    if isinstance(exc, KeyboardInterrupt):
        return True
    return not isinstance(exc, Exception) and type(exc).__module__.partition(".")[0] == _PACKAGE


def _failure_text(exc: BaseException) -> str:
    """What a plugin did: ``Error: first line`` (``sys.exit`` said as such), with file:line."""
    import traceback

    if isinstance(exc, SystemExit):
        what = f"it called sys.exit({exc.code!r})"
    else:
        try:
            message = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        except Exception:  # an exception whose __str__ fails still gets its line
            message = ""
        what = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    # the innermost frame of the plugin's code: neither calcheck's nor the standard
    # library's (importlib, its frozen bootstrap)
    frames = [
        (frame.f_code.co_filename, lineno)
        for frame, lineno in traceback.walk_tb(exc.__traceback__)
        if not frame.f_code.co_filename.startswith("<frozen")
        and str(frame.f_globals.get("__name__")).partition(".")[0]
        not in (_PACKAGE, *sys.stdlib_module_names)
    ]
    return f"{what} ({frames[-1][0]}:{frames[-1][1]})" if frames else what


def discover(reserved, validate) -> dict:
    """Import every plugin paper: key -> module, skipping (with a warning) those that fail.

    Parameters
    ----------
    reserved : collection of str
        Keys already taken (the built-in papers).
    validate : callable
        ``validate(key, module)`` raises :class:`PluginError` (or any exception) for a
        module that does not fit; it may register the paper's guarantees.

    Returns
    -------
    dict
        Paper key -> module, in entry-point order.
    """
    papers: dict = {}
    if not enabled():
        return papers
    try:
        found = entry_points()
    except Exception as exc:  # a broken environment must not hide the built-in papers
        logger.warning("calcheck: paper plugins not loaded: %s: %s", type(exc).__name__, exc)
        return papers
    for ep in found:
        where = f"paper plugin {ep.name!r} ({_origin(ep)})"
        try:
            if not _KEY.match(ep.name):
                raise PluginError(
                    f"its key must be lower-case letters, digits and _ (e.g. 'ex23'), got "
                    f"{ep.name!r}"
                )
            if ep.name in reserved:
                raise PluginError(f"key {ep.name!r} is a built-in paper's")
            if ep.name in papers:
                raise PluginError(f"key {ep.name!r} is already taken by another plugin")
            module = import_module(ep.value) if ":" not in ep.value else ep.load()
            _validated(ep.name, module, validate)
        except BaseException as exc:  # sys.exit() at import too: the plugin's, not ours
            if _is_interruption(exc):
                raise
            logger.warning(
                "calcheck: %s not loaded: %s (the other papers are unaffected)",
                where,
                _failure_text(exc),
            )
            continue
        papers[ep.name] = module
    return papers
