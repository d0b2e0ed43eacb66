"""The method table: every method x event pair a user's guarantee can name.

``calcheck list --methods`` prints it; ``calcheck.list_methods`` returns it.
"""

from __future__ import annotations

from ..checks.methods import PER_BIN_EVENTS

__all__ = ["method_table"]


def method_table() -> list[dict]:
    """Every method x event pair with the keywords it supplies (``calcheck list --methods``).

    Returns
    -------
    list of dict
        One row per pair: ``method``, ``event``, ``quantifier``, ``families``, ``grid``,
        ``supplies`` (the keywords every bound of that pair is called with), ``data`` (the
        data keywords of :data:`~calcheck.theory_checks.checks.methods.DATA_KEYWORDS` it may also
        ask for, arrays per replicate), ``per_bin`` (whether its bound may return a radius per
        bin), ``exact_coverage`` and the descriptions of the event and the method.

    Examples
    --------
    >>> from calcheck import list_methods
    >>> row = next(r for r in list_methods() if (r["method"], r["event"]) == ("umd", "conditional"))
    >>> row["supplies"], row["exact_coverage"]
    (['alpha', 'delta', 'n', 'n_bins'], True)
    >>> row["data"], row["per_bin"]
    (['counts', 'means', 'n_used', 'variances'], True)
    """
    from ..catalog import methods

    rows = []
    for name, spec in methods().items():
        for event, ev in spec.events.items():
            rows.append(
                {
                    "method": name,
                    "event": event,
                    "quantifier": ev.quantifier,
                    "families": list(spec.families),
                    "grid": list(spec.grid_keys),
                    "supplies": list(spec.supplied(event, data=False)),
                    "data": sorted(spec.data),
                    "per_bin": bool(spec.data) and event in PER_BIN_EVENTS,
                    "exact_coverage": bool(spec.exact_scheme)
                    and event in ("conditional", "marginal"),
                    "event_description": ev.description,
                    "method_description": spec.description,
                }
            )
    return rows
