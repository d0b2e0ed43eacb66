"""Experiments for Kumar, Liang & Ma (2019): estimator and bin-balance thresholds.

Both experiments serve *rate* checks (:mod:`calcheck.theory_checks.series.rates`): each simulates
one parameter point theta on a whole grid of sample sizes ``n_grid`` and returns outcomes of
shape ``(R, G)``, one column per n, so that the threshold n* (the smallest n at which an
event holds w.p. >= 1 - delta) is read off one stored cell. Columns are simulated with
independent draws (the coverage at each n is an independent binomial count), so the
rate check's parametric bootstrap of the coverages is exact.

References
----------
Kumar, A., Liang, P. and Ma, T. (2019). Verified uncertainty calibration. NeurIPS.
Lemma 4.3, Theorems 5.3 and 5.4, Definitions 4.2, 5.1 and 5.2.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from calcheck.bounds import klm19

from ..calibrators.edges import uniform_mass_edge_ranks
from ..laws.binned import BinnedModelLaw
from ..validation import check_n_grid, check_positive_int
from .base import Experiment, Outcome

__all__ = [
    "BalanceGridOutcome",
    "BinBalanceExperiment",
    "EstimatorGridOutcome",
    "EstimatorRateExperiment",
]

_BLOCK = 1 << 15  # entries per work array of _estimates (~L2 cache)


@dataclass(frozen=True)
class EstimatorGridOutcome(Outcome):
    """Plug-in and debiased squared-CE estimates, shape ``(R, G)`` (one column per n).

    ``debiased`` drops bins with fewer than two points (the authors' code);
    ``debiased_keep`` keeps their plug-in term; ``small_bins`` counts such bins;
    ``target`` is ``sum_{n_s >= 2} (n_s / n)(s - y_s)^2`` and ``target_all`` the same over
    every non-empty bin, at the drawn counts (the estimators' conditional targets).
    """

    plugin: np.ndarray
    debiased: np.ndarray
    debiased_keep: np.ndarray
    small_bins: np.ndarray
    target: np.ndarray
    target_all: np.ndarray


@dataclass(frozen=True)
class EstimatorRateExperiment(Experiment):
    """Estimate E^2 of a fixed binned model from n fresh points, for every n of a grid.

    Data: multinomial counts and binomial label sums of a :class:`BinnedModelLaw`
    (exact; O(B) per replicate and n). Estimand: its exact ``ce_sq``.
    """

    law: BinnedModelLaw
    n_grid: tuple[int, ...]

    accepts: ClassVar[tuple[str, ...]] = ("binned_model",)
    outcome_type: ClassVar[type] = EstimatorGridOutcome

    def __post_init__(self):
        self._check_law(self.law)
        object.__setattr__(self, "n_grid", check_n_grid(self.n_grid, minimum=2))

    n = property(lambda self: self.n_grid[-1])
    bins = property(lambda self: self.law.n_bins)
    cost = property(lambda self: 4 * self.law.n_bins * len(self.n_grid))

    @classmethod
    def code_paths(cls) -> tuple[str, ...]:
        """Sources whose change invalidates stored outcomes (the target is a bound's value)."""
        return (*super().code_paths(), "bounds/klm19.py")

    def label(self) -> str:
        """Readable one-line identification."""
        return f"Estimators/{self.law.name}/n={self.n_grid[0]}..{self.n_grid[-1]}"

    def symbols(self, outcome) -> dict:
        """``n_bins``, the exact ``ce_sq`` and the grid."""
        return {"n_bins": self.law.n_bins, "ce_sq": self.law.ce_sq, "n_grid": self.n_grid}

    def simulate(self, rng, reps):
        """``reps`` replicates at every n of the grid (independent draws per n)."""
        s = np.asarray(self.law.values, dtype=float)
        y = np.asarray(self.law.label_means, dtype=float)
        out = np.empty((6, reps, len(self.n_grid)))
        # a few rows at a time: the work arrays stay in cache (2-3x faster at B = 3000);
        # every estimate is a row's own sum, the same whatever the block
        block = max(1, _BLOCK // s.size)
        for j, n in enumerate(self.n_grid):
            counts, sums = self.law.sample_counts(n, reps, rng)
            for i in range(0, reps, block):
                rows = slice(i, i + block)
                out[:, rows, j] = _estimates(s, y, counts[rows], sums[rows])
        return EstimatorGridOutcome(*out)


def _estimates(s, y, counts, sums):
    """The six fields of :class:`EstimatorGridOutcome` at one n, rows of ``(R, B)`` counts.

    Bit for bit :func:`~calcheck.simulations.metrics.binned.plugin_sq_ce`, :func:`debiased_sq_ce`
    (``small_bins="drop"`` and ``"keep"``), ``sum(counts < 2)`` and
    :func:`conditional_sq_ce` (min_count 2 and 1; tested equal), with their common terms
    computed once, in place, and no input validation (multinomial counts and binomial sums
    are valid by construction): called separately they cost 5x the sampling.
    """
    n_s = counts.astype(float)
    n = n_s.sum(axis=-1, keepdims=True)
    # Valid counts make two of the functions' masks redundant: an empty bin has sums = 0,
    # so sums / max(n_s, 1) is their where(seen, sums / n_s, 0); a bin of fewer than two
    # points has yhat in {0, 1}, so yhat (1 - yhat) / max(n_s - 1, 1) is their 0.0 there
    # (+0.0 in every case, as theirs).
    den = np.maximum(n_s, 1.0)
    yhat = np.divide(sums, den)
    share = np.divide(n_s, n)
    sq = s - yhat
    sq **= 2
    keep = np.subtract(1.0, yhat)
    keep *= yhat  # yhat (1 - yhat)
    np.subtract(n_s, 1.0, out=den)
    keep /= np.maximum(den, 1.0, out=den)
    np.subtract(sq, keep, out=keep)
    sq *= share
    plugin = np.sum(sq, axis=-1)
    big = n_s >= 2
    gap = (s - y) ** 2  # the law's (s - y_s)^2, broadcast as conditional_sq_ce does
    # the debiased estimator's conditional target is the registered bound itself (klm19
    # Definition 5.2, what `calcheck bound klm19.def52` evaluates), not a copy of it
    target = klm19.def52_conditional_mean(s, y, counts)
    if big.all():  # every mask is all True (large n): drop is keep, target is target_all
        keep *= share
        debiased = np.sum(keep, axis=-1)
        return plugin, debiased, debiased, np.zeros(len(n_s), dtype=int), target, target
    drop = np.where(big, keep, 0.0)
    drop *= share
    keep *= share
    # where(n_s >= 1, n_s, 0) is n_s itself for counts
    n_s *= gap
    return (
        plugin,
        np.sum(drop, axis=-1),
        np.sum(keep, axis=-1),
        np.sum(counts < 2, axis=1),
        target,
        np.sum(n_s, axis=-1) / n[:, 0],
    )


@dataclass(frozen=True)
class BalanceGridOutcome(Outcome):
    """``B * min_j P(I_j)`` and ``B * max_j P(I_j)`` of the fitted bins, shape ``(R, G)``."""

    min_ratio: np.ndarray
    max_ratio: np.ndarray

    def imbalance(self, alpha_balance: float = 2.0) -> np.ndarray:
        """``max(max_ratio / a, 1 / (a min_ratio))``: <= 1 iff a-well-balanced (Def. 4.2)."""
        with np.errstate(divide="ignore"):
            return np.maximum(
                self.max_ratio / alpha_balance, 1.0 / (alpha_balance * self.min_ratio)
            )


@dataclass(frozen=True)
class BinBalanceExperiment(Experiment):
    """Exact masses of uniform-mass bins built from n continuous scores, every n of a grid.

    The bins are the project's uniform-mass bins (order statistics at ranks
    ``ceil(b (n + 1) / B)``,
    :func:`~calcheck.simulations.calibrators.edges.uniform_mass_edge_ranks`).
    For a continuous score law the mass of a bin is the sum of the uniform spacings between
    its edges, whatever the law: the n + 1 spacings are Dirichlet(1, ..., 1), so bin b has
    mass ``G_b / sum G`` with ``G_b ~ Gamma(A_b - A_{b-1})``. The experiment is therefore
    distribution-free over continuous laws and draws no scores (exact, O(B) per replicate).
    """

    n_bins: int
    n_grid: tuple[int, ...]

    outcome_type: ClassVar[type] = BalanceGridOutcome

    def __post_init__(self):
        check_positive_int(self.n_bins, "n_bins")
        object.__setattr__(self, "n_grid", check_n_grid(self.n_grid, minimum=self.n_bins))

    n = property(lambda self: self.n_grid[-1])
    law_name = property(lambda self: "any_continuous")
    cost = property(lambda self: 4 * self.n_bins * len(self.n_grid))

    def label(self) -> str:
        """Readable one-line identification."""
        return f"BinBalance/B={self.n_bins}/n={self.n_grid[0]}..{self.n_grid[-1]}"

    def symbols(self, outcome) -> dict:
        """``n_bins`` and the grid."""
        return {"n_bins": self.n_bins, "n_grid": self.n_grid}

    def simulate(self, rng, reps):
        """``reps`` replicates at every n of the grid."""
        shape = (reps, len(self.n_grid))
        lo, hi = np.empty(shape), np.empty(shape)
        for j, n in enumerate(self.n_grid):
            spacings = np.diff(uniform_mass_edge_ranks(n, self.n_bins)).astype(float)
            g = rng.standard_gamma(spacings, size=(reps, self.n_bins))
            mass = g / g.sum(axis=1, keepdims=True)
            lo[:, j] = self.n_bins * mass.min(axis=1)
            hi[:, j] = self.n_bins * mass.max(axis=1)
        return BalanceGridOutcome(lo, hi)
