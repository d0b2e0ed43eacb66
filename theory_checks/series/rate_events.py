"""Per-replicate events on a grid of n for rate checks (:mod:`.rates`).

Each returns a boolean array ``(R, G)``: whether the event holds in each replicate at each
grid column.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Balanced", "FactorWithin", "SquaredCEWithin"]


@dataclass(frozen=True)
class FactorWithin:
    """``|stat - truth| <= r truth`` at every grid column (klm19 Sec. 5: r = 1/2)."""

    statistic: str
    truth: str = "ce_sq"
    r: float = 0.5

    def describe(self) -> str:
        """Short name for reports."""
        return f"|{self.statistic} - {self.truth}| <= {self.r:g} {self.truth}"

    def success(self, experiment, outcome) -> np.ndarray:
        """Boolean array ``(R, G)``."""
        truth = experiment.symbols(outcome)[self.truth]
        stat = np.asarray(getattr(outcome, self.statistic), dtype=float)
        return np.abs(stat - truth) <= self.r * truth


@dataclass(frozen=True)
class Balanced:
    """The fitted bins are ``factor``-well-balanced (klm19 Definition 4.2)."""

    factor: float = 2.0

    def describe(self) -> str:
        """Short name for reports."""
        return f"1/({self.factor:g}B) <= P(I_j) <= {self.factor:g}/B for all j"

    def success(self, experiment, outcome) -> np.ndarray:
        """Boolean array ``(R, G)``."""
        return outcome.imbalance(self.factor) <= 1.0


@dataclass(frozen=True)
class SquaredCEWithin:
    """``stat <= factor * min_ce_sq + eps_sq`` (klm19 Theorem 4.1: factor 2).

    ``min_ce_sq`` (the best CE^2 in the family) and ``eps_sq`` come from the experiment's
    symbols; ``factor = 0`` claims the well-specified bound on any law (a control).
    """

    statistic: str
    factor: float = 2.0

    def describe(self) -> str:
        """Short name for reports."""
        return f"{self.statistic} <= {self.factor:g} min_G CE^2 + eps^2"

    def success(self, experiment, outcome) -> np.ndarray:
        """Boolean array ``(R, G)``."""
        s = experiment.symbols(outcome)
        bound = self.factor * s["min_ce_sq"] + s["eps_sq"]
        return np.asarray(getattr(outcome, self.statistic), dtype=float) <= bound
