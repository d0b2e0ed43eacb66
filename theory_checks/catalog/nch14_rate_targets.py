r"""Worst-law search target of nch14 Corollary 3.2.

Used by :mod:`calcheck.theory_checks.search.rates`.

:class:`HistTarget`: Hist (equal-frequency bins) on nch14's staircases (Theorem 3.4), at
fixed B and accuracy eps. n* is the smallest n with ``P(population MCE <= eps) >= 1 -
delta`` (the corollary is a high-probability rate, nch14 catalog G5) and h = B log B /
eps^2 (the corollary's ``sqrt(B log B / n) <= eps`` solved for n), so c is the square of
the MCE constant.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from calcheck.bounds import registry
from calcheck.simulations.experiments.binning import BinningExperiment
from calcheck.simulations.laws import LAWS
from calcheck.simulations.laws.families import staircase_family
from calcheck.simulations.search import simulate_crn

__all__ = ["RATE_TARGETS", "HistTarget"]

_HIST = {"name": "zadrozny_elkan", "tie_breaking": "lexicographic"}


def _grid(lo: float, hi: float) -> tuple[int, ...]:
    """Integer sample sizes from ``lo`` to ``hi``, 3 per doubling."""
    k = int(np.ceil(np.log2(hi / lo) * 3)) + 1
    return tuple(int(n) for n in np.unique(np.round(np.geomspace(lo, hi, k))))


# ------------------------------------------------------------------- Hist MCE (nch14)
@dataclass(frozen=True)
class HistTarget:
    """nch14 Corollary 3.2 at fixed (B, eps, delta) on staircases.

    A point is ``(law, B)``; column j of the grid is simulated on CRN seed
    ``seed * 4096 + j`` (independent columns). Sweep: the staircase's thetas tiled to 2B
    and 4B (the same shape per bin).
    """

    check_id: str = "nch14.cor32"
    n_bins: int = 10
    eps: float = 0.2
    delta: float = 0.1
    grid_span: tuple = (0.1, 8.0)
    slack: float = 0.05

    guarantee = property(lambda self: self.check_id)
    family = property(lambda self: staircase_family(self.n_bins))

    def fixed(self) -> dict:
        """The claim's fixed parameters."""
        return {"B": self.n_bins, "eps": self.eps, "delta": self.delta}

    def point(self, theta, scale: int = 1):
        """``(law, B)``: the staircase at theta, its per-bin thresholds tiled ``scale`` times."""
        t = self.family.check(theta)
        b = self.n_bins * scale
        tiled = np.concatenate([np.tile(t[: self.n_bins], scale), t[self.n_bins :]])
        return (staircase_family(b).law(tiled), b)

    def rate(self, point) -> float:
        """The rate h = B log B / eps^2, from the registry's ``c sqrt(B log B / n)`` at c = 1."""
        g = registry.get(self.guarantee)
        r = float(g.function(n=1, n_bins=point[1], c=1.0))
        return r**2 / self.eps**2

    def grid(self, point) -> tuple:
        """Geometric grid around h."""
        h = self.rate(point)
        lo, hi = self.grid_span
        return _grid(max(lo * h, 2 * point[1]), hi * h)

    def successes(self, point, seed, reps) -> tuple:
        """``(R, G)`` booleans of ``population MCE <= eps`` (Hist, B bins)."""
        law, b = point
        grid = self.grid(point)
        cols = [
            simulate_crn(BinningExperiment(_HIST, law, n, b), seed * 4096 + j, reps).max_error
            for j, n in enumerate(grid)
        ]
        return np.stack(cols, axis=-1) <= self.eps, grid

    def point_delta(self, point) -> float:
        """The claim's delta (fixed)."""
        return self.delta

    def hand_picked(self) -> tuple:
        """The catalog's law (eta = 1/2) and the textbook staircase (0/1 halves)."""
        fam = self.family
        return (
            ("uniform_half", (LAWS["uniform_half"], self.n_bins)),
            ("staircase 0/1, theta=1/2", (fam.law(fam.benign[0]), self.n_bins)),
        )

    def sweep(self, theta) -> tuple:
        """B, 2B, 4B with the same per-bin shape."""
        return tuple((f"B={self.n_bins * m}", self.point(theta, m)) for m in (1, 2, 4))

    def describe_point(self, point) -> str:
        """The staircase's name."""
        return f"{point[0].name} (B={point[1]})"


#: nch14 rate check id -> its search target.
RATE_TARGETS = {"nch14.cor32": HistTarget()}
