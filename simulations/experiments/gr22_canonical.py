"""Experiment for gr22 App. G.3: Algorithm 10's bin occupancy (projection histogram binning).

Each replicate draws n base-model probability vectors, fits Algorithm 10's thresholds
(:mod:`calcheck.simulations.calibrators.projection_binning`, vectorised over replicates) and counts
each bin's interior calibration points (line 13). Labels play no part in the occupancy, so
none are drawn.

Score laws: ``"dirichlet"`` (Dirichlet(a 1_L): continuous, no ties almost surely, the
statement's implicit hypothesis) and ``"atoms"`` (each replicate draws 5 atoms from
Dirichlet(1_L) and the n points among them: ties, the hypothesis fails).

References
----------
Gupta, C. and Ramdas, A. (2022). Top-label calibration and multiclass-to-binary reductions.
ICLR. Appendix G.3, Algorithm 10.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..calibrators.projection_binning import (
    cyclic_directions,
    projection_bins,
    projection_thresholds,
)
from ..validation import check_positive_int
from .base import Experiment, Outcome

__all__ = ["Alg10OccupancyExperiment", "Alg10OccupancyOutcome"]

_N_ATOMS = 5


@dataclass(frozen=True)
class Alg10OccupancyOutcome(Outcome):
    """Interior calibration points of each bin, ``(R, B)``."""

    interior: np.ndarray

    @property
    def min_interior(self) -> np.ndarray:
        """The smallest bin's interior count per replicate (the guarantee's statistic)."""
        return self.interior.min(axis=1)


@dataclass(frozen=True)
class Alg10OccupancyExperiment(Experiment):
    """Algorithm 10 on n draws of g(X) in Delta^(L-1): interior points per bin.

    Parameters
    ----------
    n, n_bins, n_classes : int
        Calibration points, B (at most n + 1) and L.
    directions : {"cyclic", "random"}
        ``-e_1, -e_2, ...`` or fresh uniform unit vectors per replicate.
    scores : {"dirichlet", "atoms"}
        Continuous Dirichlet(concentration 1_L) draws, or 5 atoms per replicate (ties).
    concentration : float
        Dirichlet parameter (of the points, or of the atoms).
    """

    n: int = 200
    n_bins: int = 10
    n_classes: int = 3
    directions: str = "cyclic"
    scores: str = "dirichlet"
    concentration: float = 1.0

    outcome_type: ClassVar[type] = Alg10OccupancyOutcome

    def __post_init__(self):
        check_positive_int(self.n, "n")
        check_positive_int(self.n_bins, "n_bins", maximum=self.n + 1)
        check_positive_int(self.n_classes, "n_classes", minimum=2)
        if self.directions not in ("cyclic", "random"):
            raise ValueError(f"directions must be 'cyclic' or 'random', got {self.directions!r}")
        if self.scores not in ("dirichlet", "atoms"):
            raise ValueError(f"scores must be 'dirichlet' or 'atoms', got {self.scores!r}")
        if not (np.isfinite(self.concentration) and self.concentration > 0):
            raise ValueError(f"concentration must be > 0, got {self.concentration!r}")

    law_name = property(
        lambda self: f"{self.scores}({self.concentration:g}, L={self.n_classes})/{self.directions}"
    )
    cost = property(lambda self: self.n * self.n_bins)

    def symbols(self, outcome=None) -> dict:
        """``n`` and ``n_bins`` (the occupancy bound's arguments)."""
        return {"n": self.n, "n_bins": self.n_bins}

    def label(self) -> str:
        """Readable one-line identification."""
        return f"Alg10/{self.law_name}/n={self.n}/B={self.n_bins}"

    def _draw_scores(self, rng, reps):
        a = np.full(self.n_classes, self.concentration)
        if self.scores == "dirichlet":
            return rng.dirichlet(a, size=(reps, self.n))
        atoms = rng.dirichlet(a, size=(reps, _N_ATOMS))
        which = rng.integers(0, _N_ATOMS, size=(reps, self.n))
        return np.take_along_axis(atoms, which[..., None], axis=1)

    def simulate(self, rng, reps):
        """Simulate ``reps`` replicates with ``rng``; the outcome is described above."""
        g = self._draw_scores(rng, reps)
        if self.directions == "cyclic":
            q = np.broadcast_to(
                cyclic_directions(self.n_classes, self.n_bins),
                (reps, self.n_bins, self.n_classes),
            )
        else:
            z = rng.standard_normal((reps, self.n_bins, self.n_classes))
            q = z / np.linalg.norm(z, axis=2, keepdims=True)
        proj = np.einsum("ril,rbl->rib", g, q)
        bins, interior = projection_bins(proj, projection_thresholds(proj, self.n_bins))
        onehot = bins[..., None] == np.arange(self.n_bins)
        return Alg10OccupancyOutcome((onehot & interior[..., None]).sum(axis=1))
