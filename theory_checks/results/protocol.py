"""The one check protocol: what every kind of check reports, and what it means.

Every kind of check (coverage ``Check``, rate
:class:`~calcheck.theory_checks.series.rates.RateCheck`, exponent, mean, trade-off) returns a result
with the same schema:

``verdict``
    one of :data:`VERDICTS`: ``consistent`` (no powered cell flags the claim), ``violated``
    (some cell flags it at the stated false-alarm rate, or its exact value fails),
    ``vacuous`` (no cell could flag anything whatever the data: never a pass) or
    ``inconclusive`` (no cell reached a decision: e.g. every rate threshold fell off its grid).
``passed``
    the verdict is what the check's role expects, and a guarantee's same-path mutant was
    caught (a guarantee whose mutant is not caught *cannot fail on this design*: it is not
    reported as verified).
``mutant``
    a :class:`Mutant`: the claim tightened on the same experiment, statistic and draws
    (coverage: the bound times a factor; rate: n* ~ h^p with p < 1; exponent: the claimed
    exponent shifted; mean: a bias; trade-off: a larger claimed width) and whether the check
    caught it -- the smallest wrong claim it would have caught is its *power*.
``powerless``
    the cells that could not have failed (a radius that reaches the statistic's range, an
    infinite bound, a threshold off its grid), listed, never counted as evidence.
``kind`` and ``to_dict()``
    the kind's name and its JSON-able evidence (cells or series with their numbers).

Reports, records, the summary and ``calcheck audit`` read only these names.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["VERDICTS", "Mutant", "json_number", "mutant_text"]

#: Every verdict a check can reach.
VERDICTS = ("consistent", "violated", "vacuous", "inconclusive")


@dataclass(frozen=True)
class Mutant:
    """The same-path mutant of a guarantee check and whether the check caught it.

    Attributes
    ----------
    claim : str
        What the mutant claims, e.g. "the stated bound times 0.8": the guarantee's claim
        tightened, on the same experiments, statistic and draws.
    caught : bool
        Whether the check flags the mutant (violated at its false-alarm rate).
    factor : float or None
        The tightening of the mutant reported (the largest of the kind's ladder that is
        caught; the last tried when none is): its power.
    tried : str
        The ladder of tightenings tried, in order.
    detail : str
        Where the mutant was caught (its worst cell or series), or why it could not be.
    """

    claim: str
    caught: bool
    factor: float | None
    tried: str
    detail: str = ""


def mutant_text(mutant: Mutant | None) -> str:
    """One line for reports: ``"caught: the stated bound times 0.8 (...)"``."""
    if mutant is None:
        return "-"
    if mutant.caught:
        return f"caught: {mutant.claim}" + (f" ({mutant.detail})" if mutant.detail else "")
    return f"NOT caught (cannot fail on this design): {mutant.claim}" + (
        f" ({mutant.detail})" if mutant.detail else ""
    )


def json_number(x):
    """``x`` for ``results.json``: infinities as "inf"/"-inf", NaN as None."""
    if isinstance(x, float) and not math.isfinite(x):
        return None if math.isnan(x) else ("inf" if x > 0 else "-inf")
    return x
