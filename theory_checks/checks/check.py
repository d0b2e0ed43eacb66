"""The one Check type of calcheck (the A and P of ADEMP) and its evaluation.

A :class:`Check` names a registered guarantee, the experiments that simulate it (law x
method x exact estimand, :mod:`calcheck.simulations.experiments`), the per-replicate event the
guarantee speaks of (:mod:`calcheck.theory_checks.checks.events`), the bound rule (the stated bound,
or a deliberately wrong one for a negative control), the miscoverages alpha and the claimed
probability. Simulation and evaluation are separate: experiments are simulated once
(keyed by content, never by alpha or bound) and every check that uses them -- the
guarantee's own check, its controls, more alphas -- reads the same stored outcomes.

False alarms: each check tests its cells at ``false_alarm / (number of cells)``
(Bonferroni), so a check whose guarantee holds is reported violated with probability at
most ``false_alarm``.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

from calcheck.bounds import registry
from calcheck.simulations.engine import BLOCK_REPS, load_outcome, n_blocks_for

from ..results.evidence import is_sure_claim
from ..results.export import Exportable
from ..results.protocol import Mutant
from ..results.roles import check_role, role_of
from .budgets import DEFAULT_FALSE_ALARM
from .coverage_evidence import (
    CellResult,
    cell_dict,
    cell_label,
    cell_result,
    coverage_mutant,
    mutant_counts,
    plot_cells,
)
from .events import (
    ALPHA_FREE,
    CLAIMS,
    BoundRule,
    Event,
    MeanAtMost,
    PathWithin,
    scaled,
)
from .exact_evidence import with_exact_evidence

__all__ = ["CellResult", "Check", "CheckResult", "with_sharper_controls"]


@dataclass(frozen=True)
class Check:
    """One theory check: a guarantee x experiments x event x bound rule x alphas.

    Parameters
    ----------
    id : str
        Check id; a guarantee's own check has the guarantee id, controls add a suffix.
    guarantee : str
        Registered guarantee id (``bounds.registry``).
    experiments : tuple of Experiment
    event : Event
    alphas : tuple of float
        Miscoverages in (0, 1) (ignored by alpha-free claims).
    claim : str
        Key of :data:`calcheck.theory_checks.checks.events.CLAIMS`: the claimed success probability.
    expect : {"consistent", "violated"}
        "violated" marks a negative control: the suite must flag it.
    bound : BoundRule
        The stated bound, or a deliberately wrong one (negative control).
    description : str
    """

    id: str
    guarantee: str
    experiments: tuple
    event: Event
    alphas: tuple[float, ...] = (0.1,)
    claim: str = "1-alpha"
    expect: str = "consistent"
    bound: BoundRule = field(default_factory=BoundRule)
    description: str = ""
    role: str = ""

    def __post_init__(self):
        check_role(self)
        registry.get(self.guarantee)
        if self.claim not in CLAIMS:
            raise ValueError(f"claim must be one of {sorted(CLAIMS)}, got {self.claim!r}")
        if self.expect not in ("consistent", "violated"):
            raise ValueError(f"expect must be 'consistent' or 'violated', got {self.expect!r}")
        if not self.experiments:
            raise ValueError(f"check {self.id!r} needs at least one experiment")
        if isinstance(self.event, MeanAtMost) != (self.claim == "1-bound"):
            raise ValueError(f"check {self.id!r}: MeanAtMost goes with claim '1-bound'")
        if not self.alphas:
            raise ValueError(f"check {self.id!r} needs at least one alpha")
        for a in self.alphas:
            if isinstance(a, bool) or not isinstance(a, int | float) or not (0 < a < 1):
                raise ValueError(f"alpha must lie in (0, 1), got {a!r}")
        if isinstance(self.event, PathWithin):
            for e in self.experiments:
                missing = set(self.alphas) - set(e.alphas)
                if missing:
                    raise ValueError(
                        f"check {self.id!r}: {e.label()} was simulated for "
                        f"alphas {e.alphas}, not {sorted(missing)}"
                    )

    @property
    def is_control(self) -> bool:
        """Whether this is a negative control (expected to be flagged)."""
        return self.expect == "violated"

    @property
    def bound_mode(self) -> str:
        """Name of the bound rule (``"stated"`` for the guarantee's own bound)."""
        return self.bound.name

    @property
    def metric(self) -> str:
        """The event, for reports."""
        return self.event.describe()

    def effective_alphas(self) -> tuple:
        """The alphas of the cells (``(None,)`` for alpha-free claims)."""
        return (None,) if self.claim in ALPHA_FREE else tuple(self.alphas)

    def simulations(self) -> list:
        """The experiments the engine must simulate for this check."""
        return list(self.experiments)

    def law_specs(self) -> dict:
        """Readable description of each experiment, by label."""
        return {e.label(): e.description() for e in self.experiments}

    def n_cells(self) -> int:
        """Cells tested (experiments x alphas): the Bonferroni divisor."""
        return len(self.experiments) * len(self.effective_alphas())

    def evaluate(
        self, store, reps: int, root_seed: int, false_alarm: float = DEFAULT_FALSE_ALARM
    ) -> CheckResult:
        """Verdicts of every cell from outcomes already in ``store``."""
        level = false_alarm / self.n_cells()
        claim = CLAIMS[self.claim]
        cells, mutant_cells = [], []
        for exp in self.experiments:
            outcome = load_outcome(store, exp, reps, root_seed)
            symbols = exp.symbols(outcome)
            for alpha in self.effective_alphas():
                radius = (
                    self.bound.radius(self.guarantee, symbols, alpha)
                    if self.event.uses_bound
                    else None
                )
                values = self.event.evaluate(exp, outcome, radius, alpha)
                cell = cell_result(self, exp, outcome, alpha, values, claim, level)
                cells.append(with_exact_evidence(self, exp, alpha, radius, cell))
                if self.has_mutant:
                    mutant_cells.append(
                        mutant_counts(self, exp, outcome, radius, alpha, values, claim)
                    )
        mutant = (
            coverage_mutant(mutant_cells, cells, level, self.event.tightened_text)
            if self.has_mutant
            else None
        )
        return CheckResult(self, tuple(cells), n_blocks_for(reps) * BLOCK_REPS, false_alarm, mutant)

    @property
    def has_mutant(self) -> bool:
        """A guarantee's claim is tightened into a same-path mutant, unless claimed surely.

        A sure claim is deterministic (:mod:`~calcheck.theory_checks.results.evidence`).
        """
        return role_of(self) == "guarantee" and not is_sure_claim(self.claim)


def with_sharper_controls(checks: list, factors: dict) -> list:
    """``checks`` plus sharper negative controls: the stated bound times a factor.

    For each id in ``factors``, a control ``<id>.control.times_<factor>`` on the same
    experiments (no new simulation).

    Chosen where the check's detectable factor (:attr:`CheckResult.detectable_factor`,
    measured at the quick budget and at 1000 replicates) is clearly above the factor: a
    control a wrong constant 20-30% too small would fail, not only a wrong n.
    """
    by_id = {c.id: c for c in checks}
    extra = []
    for check_id, factor in factors.items():
        base = by_id[check_id]
        if base.bound.name != "stated" or base.is_control:
            raise ValueError(f"{check_id!r} is not a check of a stated bound")
        if role_of(base) == "identity":
            raise ValueError(
                f"{check_id!r} checks an identity (it holds by construction of the code): it "
                "takes no control"
            )
        extra.append(
            dataclasses.replace(
                base,
                id=f"{check_id}.control.times_{factor:g}",
                expect="violated",
                role="control",
                bound=scaled(factor),
                description=f"sharper negative control: the stated bound times {factor:g} "
                f"(the check flags any factor below its detectable factor)",
            )
        )
    return [*checks, *extra]


@dataclass(frozen=True)
class CheckResult(Exportable):
    """All cells of a check and its overall verdict.

    The verdict is "violated" if some cell is flagged, "vacuous" if no cell could be flagged
    whatever the data (every cell's bound infinite in every replicate, say: the check has
    no power and never counts as passed), and "consistent" otherwise; cells without power
    (:attr:`vacuous_cells`) are reported, and the verdict comes from the others.
    """

    check: Check
    cells: tuple[CellResult, ...]
    reps: int
    false_alarm: float
    mutant: Mutant | None = None
    verdict: str = field(init=False)
    passed: bool = field(init=False)

    #: The kind of check (the protocol's name for it).
    kind = "coverage"

    def __post_init__(self):
        if any(c.violated for c in self.cells):
            verdict = "violated"
        elif self.cells and not any(c.has_power for c in self.cells):
            verdict = "vacuous"
        else:
            verdict = "consistent"
        object.__setattr__(self, "verdict", verdict)
        caught = self.mutant is None or self.mutant.caught
        object.__setattr__(self, "passed", self.verdict == self.check.expect and caught)

    def check_invariants(self) -> None:
        """Raise ValueError unless the cells are those of one evaluation of the check.

        Called on a result read from data (:func:`~calcheck.theory_checks.results.export.decode`,
        its cells already checked), never on one computed: at least one cell, every cell
        counts ``reps`` replicates and is tested at ``false_alarm / cells`` (Bonferroni), and
        a guarantee's result holds its mutant (a missing mutant would pass a check that
        catches no tightened claim).
        """
        if not 0 < self.false_alarm < 1:
            raise ValueError(f"false_alarm must lie in (0, 1), got {self.false_alarm!r}")
        if not self.cells:
            raise ValueError("a check's result has at least one cell, got none")
        level = self.false_alarm / len(self.cells)
        for i, c in enumerate(self.cells):
            if c.verdict.trials != self.reps:
                raise ValueError(
                    f"cells[{i}] counts {c.verdict.trials!r} replicates, the result {self.reps!r}"
                )
            if not math.isclose(c.verdict.level, level, rel_tol=1e-12):
                raise ValueError(
                    f"cells[{i}] is tested at level {c.verdict.level!r}, not false_alarm / "
                    f"cells = {self.false_alarm!r} / {len(self.cells)}"
                )
        has_mutant = role_of(self.check) == "guarantee" and not is_sure_claim(self.check.claim)
        if has_mutant != (self.mutant is not None):
            raise ValueError(
                f"a {role_of(self.check)} check of claim {self.check.claim!r} "
                + ("holds a mutant" if self.mutant is not None else "needs its mutant, got None")
            )

    def evidence(self) -> dict:
        """The cells with their numbers, JSON-able (the protocol's evidence)."""
        return {
            "claim": self.check.claim,
            "per_cell_level": self.cells[0].verdict.level if self.cells else None,
            "vacuity": self.vacuity_note() or None,
            "cells": [cell_dict(c) for c in self.cells],
        }

    @property
    def powerless(self) -> tuple[str, ...]:
        """The cells that could not have failed, each with why (the protocol's name)."""
        return tuple(f"{cell_label(c)}: {c.no_power}" for c in self.vacuous_cells)

    def power_text(self) -> str:
        """The smallest wrong claim the check would have caught (its detectable factor)."""
        if role_of(self.check) == "identity":
            return "exact (holds by construction)"
        k = self.detectable_factor
        if k is not None and k > 0:
            return f"bound x < {k:.2f}"
        m = self.mutant
        return "-" if m is None else (m.claim if m.caught else "none found")

    @property
    def vacuous_cells(self) -> tuple[CellResult, ...]:
        """The cells that could not flag anything whatever the data (no power)."""
        return tuple(c for c in self.cells if not c.has_power)

    def vacuity_note(self) -> str:
        """Which cells have no power and why ("" if every cell has power)."""
        cells = self.vacuous_cells
        if not cells:
            return ""
        reasons = sorted({c.no_power for c in cells})
        head = (
            "vacuous: no cell has power"
            if len(cells) == len(self.cells)
            else f"{len(cells)} of {len(self.cells)} cells have no power "
            "(the verdict comes from the others)"
        )
        labels = ", ".join(cell_label(c) for c in cells[:4])
        more = f" and {len(cells) - 4} more" if len(cells) > 4 else ""
        return f"{head} -- {labels}{more}: {'; '.join(reasons)}"

    def worst_cell(self) -> CellResult:
        """A flagged cell first (by its exact value where known), then the smallest p-value."""
        return min(
            self.cells,
            key=lambda c: (
                not c.violated,
                c.verdict.p_value,
                c.verdict.coverage - c.verdict.claimed,
            ),
        )

    @property
    def detectable_factor(self) -> float | None:
        """Largest k such that some cell flags the bound times any factor below k."""
        k = [c.detectable_factor for c in self.cells if c.detectable_factor is not None]
        return max(k) if k else None

    def tightness_range(self) -> tuple[float, float] | None:
        """Smallest and largest finite tightness over the cells (None if none is finite)."""
        t = [c.tightness for c in self.cells if math.isfinite(c.tightness)]
        return (min(t), max(t)) if t else None

    def __repr__(self) -> str:
        w = self.worst_cell()
        v = w.verdict
        alpha = "" if w.alpha is None else f", alpha={w.alpha:g}"
        kind = "negative control" if self.check.is_control else "check"
        status = "as expected" if self.passed else "NOT as expected"
        return (
            f"<CheckResult {self.check.id} ({kind} of {self.check.guarantee}): "
            f"{self.verdict}, {status}; {len(self.cells)} cell(s), {self.reps} replicates, "
            f"false-alarm rate {self.false_alarm:g}; worst cell {w.law} n={w.n} "
            f"B={w.n_bins}{alpha}: coverage {v.coverage:.4f} [{v.ci_low:.4f}, "
            f"{v.ci_high:.4f}] vs claimed {v.claimed:.4f}, p={v.p_value:.3g}"
            + (f"; {w.decided_text()}" if w.decided_text() else "")
            + (f"; {self.vacuity_note()}" if self.vacuous_cells else "")
            + ">"
        )

    def plot(self, ax=None):
        """Coverage of every cell with its Clopper-Pearson interval against the claim.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Drawn on a new figure when omitted.

        Returns
        -------
        matplotlib Axes
        """
        return plot_cells(self, ax)


@dataclass(frozen=True)
class StudyAdapter:
    """How a guarantee is checked on laws of a user's choosing (``for_law``).

    Parameters
    ----------
    guarantee : str
    families : tuple of str
        Law families the experiments accept.
    grid_keys : tuple of str
        Grid parameters of a study (e.g. ``("n", "n_bins")``); each grid point is passed to
        ``build`` as keywords.
    build : callable
        ``build(law, **point) -> Experiment``.
    event : Event
    claim : str
    bound : BoundRule
    description : str
    role : str
        The study's role: ``""`` (a guarantee) or ``"identity"`` for a result that holds by
        construction (checked exactly, no mutant).
    """

    guarantee: str
    families: tuple[str, ...]
    grid_keys: tuple[str, ...]
    build: object
    event: Event
    claim: str = "1-alpha"
    bound: BoundRule = field(default_factory=BoundRule)
    description: str = ""
    role: str = ""

    def check(self, laws, grid: dict, alphas, *, check_id: str | None = None) -> Check:
        """A :class:`Check` of the guarantee on ``laws`` over the product of ``grid``."""
        import itertools

        unknown = set(grid) - set(self.grid_keys)
        missing = set(self.grid_keys) - set(grid)
        if unknown or missing:
            raise ValueError(
                f"{self.guarantee} takes grid parameters {list(self.grid_keys)}; "
                f"unknown: {sorted(unknown)}, missing: {sorted(missing)}"
            )
        for law in laws:
            if getattr(law, "family", None) not in self.families:
                raise ValueError(
                    f"{self.guarantee} is checked on laws of family "
                    f"{' or '.join(self.families)}, got "
                    f"{getattr(law, 'family', type(law).__name__)!r} "
                    f"({getattr(law, 'name', law)!r})"
                )
        points = [
            dict(zip(self.grid_keys, values, strict=True))
            for values in itertools.product(*(grid[k] for k in self.grid_keys))
        ]
        experiments = tuple(self.build(law, **p) for law in laws for p in points)
        return Check(
            check_id or f"study:{self.guarantee}",
            self.guarantee,
            experiments,
            self.event,
            tuple(alphas),
            self.claim,
            "consistent",
            self.bound,
            self.description,
            self.role,
        )
