"""The evidence ladder: what decided each cell and each check, derived by rules (one home).

Every cell of a run is placed on one rung, from its own evidence and nothing set by hand:

``deterministic``
    the claim is that the event holds surely (claim ``"one"``): a statement about every
    draw, an identity of the code or a limit, checked exactly on each replicate. It is never
    a guarantee, its replicates are not trials of a probability (no Clopper-Pearson interval
    is meant), and its mutant would be caught at coverage 0 against 1 by construction: it
    has none.
``powerless``
    no outcome of the replicates could flag the cell: the reasons of
    :func:`~calcheck.theory_checks.results.power.no_power`, or an exact or certified probability of
    1 (a radius no error of this law can exceed).
``certified``
    a lower bound on the event's probability over every law at the cell's sizes
    (:mod:`calcheck.simulations.certified_coverage`, gr21 Lemma 2's reduction) reaches the
    claim: the claim is proved at these sizes, whatever the law.
``exact``
    the event's probability on this law is computed exactly (constant eta:
    :mod:`~calcheck.theory_checks.checks.exact_evidence`) and decides.
``monte_carlo``
    the exact binomial test of the replicates decides, with the power the cell reports (its
    detectable factor, or its detectable shortfall).

A check's verdict names the rung that decided it: for a consistent check the weakest rung
among its cells with power (every one of them had to hold), for a violated one the strongest
rung among the cells that flag it (one suffices). :func:`ledger` then says how each check is
counted in a run's headline, with the rule that placed it.
"""

from __future__ import annotations

__all__ = [
    "STRENGTH",
    "TIERS",
    "cell_tier",
    "check_tier",
    "is_sure_claim",
    "ledger",
    "tier_counts",
]

#: Every rung, strongest evidence first (the last two decide nothing about a probability).
TIERS = ("certified", "exact", "monte_carlo", "powerless", "deterministic")
#: Rungs that decide a probability, strongest first.
STRENGTH = ("certified", "exact", "monte_carlo")

#: The claim of an event that holds surely (:data:`calcheck.theory_checks.checks.events.CLAIMS`).
_SURE_CLAIMS = ("one",)


def is_sure_claim(claim: str) -> bool:
    """Whether a claim says the event holds surely (a deterministic statement)."""
    return claim in _SURE_CLAIMS


def cell_tier(cell: dict, claim: str) -> str:
    """The rung of one cell of a coverage check (a ``results.json`` cell).

    Parameters
    ----------
    cell : dict
        ``no_power``, ``claimed``, ``exact_coverage``, ``certified_coverage`` (missing keys
        read as None: a record written before the ladder).
    claim : str
        The check's claim key.

    Returns
    -------
    str
        One of :data:`TIERS`.
    """
    if is_sure_claim(claim):
        return "deterministic"
    if cell.get("no_power"):
        return "powerless"
    certified = cell.get("certified_coverage")
    if certified is not None and certified >= cell["claimed"]:
        return "certified"
    if cell.get("exact_coverage") is not None:
        return "exact"
    return "monte_carlo"


def _cell_flags(cell: dict) -> bool:
    return cell.get("verdict") == "violated"


def check_tier(record: dict) -> str:
    """The rung that decided a check's verdict (see the module docstring).

    Kinds without cells of their own (rates, exponents, means, trade-offs) are decided by
    Monte Carlo; a check whose every cell is deterministic is ``deterministic``, one without
    a cell with power ``powerless``.
    """
    cells = record.get("cells") or ()
    if record.get("kind", "coverage") != "coverage" or not cells:
        if is_sure_claim(record.get("claim", "")):
            return "deterministic"
        return "monte_carlo"
    claim = record.get("claim", "")
    tiers = [cell_tier(c, claim) for c in cells]
    if all(t == "deterministic" for t in tiers):
        return "deterministic"
    deciding = [t for t in tiers if t in STRENGTH]
    if not deciding:
        return "powerless"
    if record.get("verdict") == "violated":
        flagged = [t for t, c in zip(tiers, cells, strict=True) if _cell_flags(c)]
        flagged = [t for t in flagged if t in STRENGTH]
        if flagged:
            return min(flagged, key=STRENGTH.index)
    return max(deciding, key=STRENGTH.index)


def tier_counts(record: dict) -> dict:
    """``{tier: number of cells}`` of a coverage check (empty for other kinds)."""
    out: dict = {}
    if record.get("kind", "coverage") != "coverage":
        return out
    for c in record.get("cells") or ():
        t = cell_tier(c, record.get("claim", ""))
        out[t] = out.get(t, 0) + 1
    return out


# --------------------------------------------------------------------------- the ledger
def _failing_printed(checks) -> set:
    """Guarantee ids whose printed form a counterexample shows failing (violated)."""
    return {
        c["guarantee"]
        for c in checks
        if c.get("role") == "counterexample" and c.get("verdict") == "violated"
    }


def _mutant_rung(control: dict, by_guarantee: dict) -> str | None:
    """The guarantee check a control repeats as a rung of its mutant ladder, or None.

    A rung is the guarantee's own claim tightened on its own draws and statistic: the bound
    times a factor (``bound_mode`` ``times_<f>``), or the stated bound claimed surely where
    the guarantee claims a probability (the ladder's last rung).
    """
    scaled = str(control.get("bound_mode", "")).startswith("times_")
    draws = set(control.get("experiments") or ())
    for own in by_guarantee.get(control.get("guarantee"), ()):
        if own.get("mutant") is None or is_sure_claim(own.get("claim", "")):
            continue  # no ladder to repeat: a deterministic statement's control is a control
        # on the guarantee's own draws: its experiments or some of them
        same_draws = bool(draws) and draws <= set(own.get("experiments") or ())
        if not (same_draws and own.get("event") == control.get("event")):
            continue
        surely = (
            control.get("bound_mode") == "stated"
            and is_sure_claim(control.get("claim", ""))
            and not is_sure_claim(own.get("claim", ""))
        )
        if scaled or surely:
            return own["id"]
    return None


def ledger(checks) -> dict:
    """How each check counts in the headline, and the rule that put it there.

    Parameters
    ----------
    checks : list of dict
        A run's check entries (``results.json``'s ``checks``).

    Returns
    -------
    dict
        Check id -> ``{"counted_as": ..., "rule": ..., "tier": ...}``. ``counted_as`` is one
        of ``"guarantee"``, ``"identity"``, ``"printed claim fails"`` (a guarantee whose
        printed form a counterexample shows failing: its check on laws where it holds is
        not a verified guarantee; its valid form is), ``"implied"``, ``"control"``,
        ``"mutant rung"`` (a control that repeats the guarantee's mutant ladder on the same
        draws and statistic: it is not an extra control), ``"counterexample"``,
        ``"hypothesis"``.
    """
    failing = _failing_printed(checks)
    by_guarantee: dict = {}
    for c in checks:
        role = c.get("role") or ("control" if c.get("expect") == "violated" else "guarantee")
        if role == "guarantee" and c.get("bound_mode") == "stated":
            by_guarantee.setdefault(c.get("guarantee"), []).append(c)
    out = {}
    for c in checks:
        tier = check_tier(c)
        role = c.get("role") or ("control" if c.get("expect") == "violated" else "guarantee")
        counted, rule = _counted(c, role, tier, failing, by_guarantee)
        out[c["id"]] = {"counted_as": counted, "rule": rule, "tier": tier}
    return out


def _counted(c: dict, role: str, tier: str, failing: set, by_guarantee: dict):
    if role == "guarantee":
        if tier == "deterministic":
            return "identity", "the event is claimed surely: a deterministic statement"
        if c.get("guarantee", c["id"]) in failing:
            return (
                "printed claim fails",
                "a counterexample shows the printed form failing; this check uses laws where "
                "it holds",
            )
        if c.get("implied_by"):
            return "implied", f"implied by {c['implied_by']} (same event, radius <= in every cell)"
        return "guarantee", f"decided by {tier.replace('_', ' ')}"
    if role == "control":
        rung = _mutant_rung(c, by_guarantee)
        if rung is not None:
            return "mutant rung", f"a rung of {rung}'s mutant ladder on its draws and statistic"
        return "control", f"decided by {tier.replace('_', ' ')}"
    return role, f"decided by {tier.replace('_', ' ')}"
