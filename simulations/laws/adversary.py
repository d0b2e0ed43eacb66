"""The adversary Q of Gupta, Podkopaev & Ramdas (2020), Theorem 2 and Corollary 1.

Q is the uniform law on ``support`` iid pairs (score ``U[0, 1]``, label Bernoulli(1/2)).
Its scores are a.s. distinct, so ``E_Q[Y | f(X)] = Y``: every injective map is maximally
miscalibrated under Q, while a map with finitely many outputs (binning) stays calibrated
up to the sampling of Q's labels.

References
----------
Gupta, C., Podkopaev, A. and Ramdas, A. (2020). Distribution-free binary classification:
prediction sets, confidence intervals and calibration. NeurIPS. Theorem 2, Theorem 3 and
Corollary 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .base import Law

__all__ = ["AdversaryQ"]


@dataclass(frozen=True)
class AdversaryQ(Law):
    """Uniform law on ``support`` iid (U[0, 1] score, Bernoulli(1/2) label) pairs.

    Parameters
    ----------
    support : int, default 10**12
        Number m of support points. Calibration draws are taken as n distinct support
        points, which changes the law by at most ``n^2 / (2 m)`` in total variation
        (5e-7 at n = 1000, m = 1e12).
    name : str
    """

    family: ClassVar[str] = "adversary"
    support: int = 10**12
    name: str = "adversary_q"

    def __post_init__(self):
        if isinstance(self.support, bool) or not isinstance(self.support, int) or self.support < 2:
            raise ValueError(f"support must be an integer >= 2, got {self.support!r}")

    def spec(self) -> dict:
        """JSON-able description of the content (used in keys and results files)."""
        return {"family": self.family, "support": self.support}

    def sample(self, size, rng: np.random.Generator):
        """Scores and labels of the given shape (distinct support points)."""
        s = rng.random(size)
        y = (rng.random(size) < 0.5).astype(float)
        return s, y

    def rest_bin_sums(self, rng: np.random.Generator, reps: int, n: int, n_bins: int):
        """Fixed-width bin counts and label sums of the ``m - n`` support points not drawn.

        The other ``m - n`` points are iid, so their bin counts are multinomial and their
        label sums binomial: drawn exactly without storing them. Arrays ``(reps, n_bins)``.
        """
        rest = rng.multinomial(self.support - n, np.full(n_bins, 1.0 / n_bins), size=reps)
        return rest.astype(float), rng.binomial(rest, 0.5).astype(float)

    def rest_label_sum(self, rng: np.random.Generator, reps: int, n: int):
        """Label sum of the ``m - n`` support points not drawn, shape ``(reps,)``."""
        return rng.binomial(self.support - n, 0.5, size=reps)
