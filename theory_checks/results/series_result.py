"""The base of series results (rate, exponent, mean and trade-off checks) in the protocol.

A series check's result holds one entry per series (or member, or experiment) with its own
``violated`` flag; :class:`SeriesCheckResult` turns them into the protocol's verdict
(:mod:`~calcheck.theory_checks.results.protocol`): violated if any entry is, inconclusive or vacuous
when no entry reached a decision, consistent otherwise; ``passed`` also asks a guarantee's
same-path mutant to be caught.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .export import Exportable
from .protocol import Mutant

__all__ = ["SeriesCheckResult"]


@dataclass(frozen=True)
class SeriesCheckResult(Exportable):
    """Series fits of a check over parameter series; violated if any series is."""

    check: object
    series: tuple
    reps: int
    false_alarm: float
    cells: tuple = ()
    mutant: Mutant | None = None
    verdict: str = field(init=False)
    passed: bool = field(init=False)

    def __post_init__(self):
        if any(s.violated for s in self.series):
            verdict = "violated"
        elif self.series and all(_powerless(s) for s in self.series):
            verdict = "vacuous" if any(_vacuous(s) for s in self.series) else "inconclusive"
        else:
            verdict = "consistent"
        object.__setattr__(self, "verdict", verdict)
        caught = self.mutant is None or self.mutant.caught
        object.__setattr__(self, "passed", self.verdict == self.check.expect and caught)

    #: Kind of check named in ``repr``; subclasses say what a replicate count is per.
    kind_name = "check"
    #: The protocol's name of the kind.
    kind = "series"

    @property
    def powerless(self) -> tuple[str, ...]:
        """Series (or their points) that could not have failed, each with why."""
        out = []
        for s in self.series:
            why = getattr(s, "powerless_note", None)
            note = why() if callable(why) else ""
            if note:
                out.append(f"{s.name}: {note}")
        return tuple(out)

    def power_text(self) -> str:
        """The smallest wrong claim the check would have caught (its mutant)."""
        m = self.mutant
        return "-" if m is None else (m.claim if m.caught else "none found")

    def _settings(self) -> str:
        return f"{self.reps} replicates"

    def __repr__(self) -> str:
        kind = "negative control" if self.check.is_control else self.kind_name
        status = "as expected" if self.passed else "NOT as expected"
        lines = [
            f"<{type(self).__name__} {self.check.id} ({kind} of {self.check.guarantee}): "
            f"{self.verdict}, {status}; {self._settings()}"
        ]
        lines += [f"  {s.describe()}" for s in self.series]
        return "\n".join(lines) + ">"


def _powerless(series) -> bool:
    return bool(getattr(series, "inconclusive", False) or getattr(series, "vacuous", False))


def _vacuous(series) -> bool:
    return bool(getattr(series, "vacuous", False))
