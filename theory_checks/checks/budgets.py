"""Budgets: replicates and miscoverages of the suite's checks (their one home).

Quick: R = 4000 replicates per cell gives a Clopper-Pearson half-width of about 0.009 at
coverage 0.9 and detects a shortfall of about 0.03 below 1 - alpha with power 0.9 at a
per-cell false-alarm rate of 1e-3 / 36. Full: R = 10000, half-width 0.006, and more
alphas, laws and grid points.
"""

from __future__ import annotations

from dataclasses import dataclass

# the false-alarm default's one home is the verdicts' module; budgets name it for their users
from ..results.verdicts import DEFAULT_FALSE_ALARM

__all__ = ["BUDGETS", "DEFAULT_FALSE_ALARM", "Budget", "get_budget"]


@dataclass(frozen=True)
class Budget:
    """Replicates per cell and miscoverages of a budget; ``full`` adds laws and grid points."""

    name: str
    reps: int
    alphas: tuple[float, ...]

    @property
    def full(self) -> bool:
        """Whether catalogs add their full-budget laws and grid points."""
        return self.name == "full"


BUDGETS = {
    "quick": Budget("quick", 4000, (0.1, 0.05)),
    "full": Budget("full", 10000, (0.2, 0.1, 0.05, 0.01)),
}


def get_budget(name) -> Budget:
    """The budget called ``name`` (ValueError listing the known ones)."""
    if isinstance(name, Budget):
        return name
    if name not in BUDGETS:
        raise ValueError(f"budget must be one of {sorted(BUDGETS)}, got {name!r}")
    return BUDGETS[name]
