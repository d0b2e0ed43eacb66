"""Records of an adversarial law search: readable, JSON-able.

The search is :func:`calcheck.search` (:mod:`calcheck.theory_checks.search.driver`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from calcheck.simulations.search import SearchBudget

from ..results.export import Exportable
from ..results.verdicts import CoverageVerdict

__all__ = ["Found", "FreshCheck", "SearchResult"]


@dataclass(frozen=True)
class FreshCheck(Exportable):
    """The fresh-seed re-check of one law: the suite's verdict at full replicate count."""

    law: dict
    verdict: CoverageVerdict
    outcome: str
    failure_rate: float
    ratio_quantile: float
    tightness: float
    bound: float
    root_seed: int

    def line(self) -> str:
        """One readable line."""
        v = self.verdict
        return (
            f"{self.outcome}: failure {self.failure_rate:.4f} ({v.trials - v.successes}/"
            f"{v.trials}), coverage {v.coverage:.4f} [{v.ci_low:.4f}, {v.ci_high:.4f}] vs "
            f"claimed {v.claimed:.4f}, p = {v.p_value:.3g}; tightness {self.tightness:.3g}"
        )


@dataclass(frozen=True)
class Found(Exportable):
    """What one method (search or random sampling) found and its fresh-seed re-check."""

    method: str
    theta: tuple[float, ...]
    law: dict
    value: float
    failure: float
    ratio_quantile: float
    evaluations: int
    fresh: FreshCheck
    trace: tuple[float, ...] = field(default=(), repr=False)
    #: The refinement of the population's best law (objective, evaluations, values per
    #: stage; :func:`calcheck.theory_checks.search.refine.refine_incumbent`), or None.
    refinement: dict | None = None


@dataclass(frozen=True)
class SearchResult(Exportable):
    """A search for the worst law of one target at one (grid, alpha); see :func:`calcheck.search`.

    ``search`` and ``random`` are the two methods at the same budget, each with its
    search-time criterion (CRN replicates) and its fresh-seed verdict; ``reference`` is the
    exact failure rate of the worst constant eta where the event has an exact route, with
    the certified coverage over every law; ``benign`` the criterion at the family's benign
    start points. ``found`` says whether a violating law was found: the search's law flagged
    violated on the fresh seed, or the exact reference failing its claim (exact evidence
    first: that law is a constant eta, any score law, whether or not the family contains
    it; ``found_by`` says which).
    ``seconds`` is not part of equality.
    """

    target: str
    guarantee: str
    bound: str
    family: dict
    grid: dict
    alpha: float
    criterion: str
    budget: SearchBudget
    seed: int
    fresh_seed: int
    search: Found
    random: Found | None
    reference: dict | None
    benign: tuple[float, ...]
    seconds: float = field(default=0.0, compare=False)

    @property
    def exact_fails(self) -> bool:
        """Whether the exact reference's coverage is below its claim (a violation, exactly)."""
        r = self.reference
        if not r:
            return False
        claimed = r.get("claimed", 1.0 - self.alpha)
        return bool(r["coverage"] < claimed)

    @property
    def found(self) -> bool:
        """Whether a violating law was found: exactly (the reference) or on the fresh seed."""
        return self.exact_fails or self.search.fresh.outcome == "violated"

    @property
    def found_by(self) -> str:
        """What found the violation: ``"exact reference"``, ``"fresh seed"``, both, or ``""``."""
        said = [
            what
            for what, hit in (
                ("exact reference", self.exact_fails),
                ("fresh seed", self.search.fresh.outcome == "violated"),
            )
            if hit
        ]
        return " and ".join(said)

    def summary(self) -> str:
        """Readable lines: the target, the laws found, both verdicts, the reference."""
        grid = ", ".join(f"{k}={v}" for k, v in self.grid.items())
        lines = [
            f"{self.target} ({self.bound} bound) on {self.family['family']} at {grid}, "
            f"alpha={self.alpha:g}; criterion {self.criterion}, budget {self.budget.name}: "
            f"{self.budget.evaluations} evaluations + {self.budget.refine} of refinement per "
            f"parameter, x {self.budget.reps} replicates, "
            f"fresh re-check {self.budget.fresh_reps} (seed {self.fresh_seed}); "
            f"{self.seconds:.1f} s",
            f"  benign start points: criterion {', '.join(f'{v:.4f}' for v in self.benign)}",
        ]
        for f in (self.search, self.random):
            if f is None:
                continue
            law = {k: v for k, v in f.law.items() if k not in ("family",)}
            lines.append(
                f"  {f.method}: criterion {f.value:.4f} (failure {f.failure:.4f}) after "
                f"{f.evaluations} evaluations; law {law}"
            )
            for stage in (f.refinement or {}).get("stages", ()):
                lines.append(
                    f"    refined on {stage['objective']}: {stage['start_value']:.4f} -> "
                    f"{stage['value']:.4f} in {stage['evaluations']} evaluations"
                )
            lines.append(f"    fresh seed: {f.fresh.line()}")
        if self.reference:
            r = self.reference
            claimed = r.get("claimed", 1.0 - self.alpha)
            said = (
                f"exact coverage {r['coverage']:.4f} < claimed {claimed:.4g}: violated"
                if self.exact_fails
                else f"exact coverage {r['coverage']:.4f} >= claimed {claimed:.4g}: holds"
            )
            lines.append(
                f"  worst constant eta {r['law']}: exact failure {r['failure']:.4f} at "
                f"eps {r['eps']:.4g}; {said}"
            )
            if r.get("certified_coverage") is not None:
                holds = "the claim holds for every law" if r["certified_holds"] else "not proved"
                lines.append(
                    f"  every law at these sizes: certified coverage "
                    f"{r['certified_coverage']:.4f} ({holds})"
                )
        lines.append(f"  found: {self.found_by} (a violating law)" if self.found else "  found: no")
        return "\n".join(lines)
