"""Experiments for Naeini, Cooper & Hauskrecht (2014): the AUC loss of histogram binning.

``AucLimitExperiment`` computes the loss in the regime of Theorem 3.4, n/B -> infinity:
the population bins (B-quantiles, or equal-width bins to break hypothesis H2) each output
its true rate. It is deterministic (every replicate is the same number), so a check on it
is an exact statement. ``AucLossExperiment`` fits the paper's histogram binning
(Zadrozny-Elkan: equal-frequency bins of all n points, label means) on n points for every
n of a grid and returns the exact population loss of each fitted map: how fast the finite-n
loss approaches its limit, which the asymptotic theorem does not say.

References
----------
Naeini, M. P., Cooper, G. F. and Hauskrecht, M. (2014). Binary classifier calibration:
non-parametric approach. Theorem 3.4 and App. 7.2 (eqs. 11-23).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..calibrators.binning import uniform_mass_fit_sorted
from ..calibrators.edges import sort_scores
from ..laws.binary import BinaryLaw
from ..metrics.auc import auc_loss, population_auc_loss
from ..validation import check_n_grid, check_positive_int
from .base import Experiment, Outcome

__all__ = [
    "AucGridOutcome",
    "AucLimitExperiment",
    "AucLossExperiment",
    "AucOutcome",
    "BinPartsExperiment",
    "BinPartsOutcome",
]

_BINS = ("quantile", "equal_width")


@dataclass(frozen=True)
class AucOutcome(Outcome):
    """Population AUC loss and its two parts, shape ``(R,)``."""

    loss: np.ndarray
    loss1: np.ndarray
    loss2: np.ndarray


@dataclass(frozen=True)
class AucLimitExperiment(Experiment):
    """The n -> infinity AUC loss of B-bin histogram binning on a continuous binary law.

    Parameters
    ----------
    law : BinaryLaw
        Continuous scores (no atoms).
    n_bins : int
    binning : {"quantile", "equal_width"}
        Population equal-frequency bins (the theorem's) or equal-width bins.
    """

    law: BinaryLaw
    n_bins: int
    binning: str = "quantile"

    accepts: ClassVar[tuple[str, ...]] = ("binary",)
    outcome_type: ClassVar[type] = AucOutcome

    def __post_init__(self):
        self._check_law(self.law)
        check_positive_int(self.n_bins, "n_bins")
        if self.binning not in _BINS:
            raise ValueError(f"binning must be one of {_BINS}, got {self.binning!r}")
        if self.law.scores.atoms:
            raise ValueError(
                f"law {self.law.name!r} has atoms: the AUC loss needs continuous scores"
            )

    n = property(lambda self: 0)  # the limit n -> infinity: no sample
    bins = property(lambda self: self.n_bins)
    cost = property(lambda self: 1)

    def label(self) -> str:
        """Readable one-line identification."""
        return f"AucLimit/{self.law.name}/B={self.n_bins}/{self.binning}"

    def _edges(self):
        u = np.linspace(0.0, 1.0, self.n_bins + 1)
        return self.law.scores.ppf(u) if self.binning == "quantile" else u

    def symbols(self, outcome=None) -> dict:
        """``n_bins`` and the bins' exact masses and rates (for eq. 22's bound)."""
        e = self._edges()
        z = np.zeros(self.n_bins)
        mass, moment = self.law.interval_moments(e[:-1], z, e[1:], z)
        return {"n_bins": self.n_bins, "bin_masses": mass, "bin_rates": moment / mass}

    def simulate(self, rng, reps):
        """The (deterministic) limit, repeated ``reps`` times."""
        if self.binning == "quantile":
            loss = population_auc_loss(self.law, self.n_bins)
        else:
            e = self._edges()
            s = self.symbols()
            out = auc_loss(self.law, e[None, :-1], e[None, 1:], s["bin_rates"][None])
            loss = tuple(float(x[0]) for x in out)
        return AucOutcome(*(np.full(reps, v) for v in loss))


@dataclass(frozen=True)
class AucGridOutcome(Outcome):
    """Exact population AUC loss of each fitted map, shape ``(R, G)``, and tied outputs."""

    loss: np.ndarray
    loss1: np.ndarray
    loss2: np.ndarray
    ties: np.ndarray


@dataclass(frozen=True)
class AucLossExperiment(Experiment):
    """Histogram binning fitted on n points (every n of a grid): exact AUC loss."""

    law: BinaryLaw
    n_bins: int
    n_grid: tuple[int, ...]

    accepts: ClassVar[tuple[str, ...]] = ("binary",)
    outcome_type: ClassVar[type] = AucGridOutcome

    def __post_init__(self):
        self._check_law(self.law)
        check_positive_int(self.n_bins, "n_bins")
        object.__setattr__(self, "n_grid", check_n_grid(self.n_grid, minimum=2 * self.n_bins))
        if self.law.scores.atoms:
            raise ValueError(
                f"law {self.law.name!r} has atoms: the AUC loss needs continuous scores"
            )

    n = property(lambda self: self.n_grid[-1])
    bins = property(lambda self: self.n_bins)
    cost = property(lambda self: 2 * sum(self.n_grid))

    def label(self) -> str:
        """Readable one-line identification."""
        return f"AucLoss/{self.law.name}/B={self.n_bins}/n={self.n_grid[0]}..{self.n_grid[-1]}"

    def symbols(self, outcome=None) -> dict:
        """``n_bins``, the grid and the n -> infinity limit of the loss."""
        return {
            "n_bins": self.n_bins,
            "n_grid": self.n_grid,
            "limit": population_auc_loss(self.law, self.n_bins)[0],
        }

    def simulate(self, rng, reps):
        """``reps`` replicates at every n of the grid (independent draws per n)."""
        shape = (reps, len(self.n_grid))
        out = {k: np.empty(shape) for k in ("loss", "loss1", "loss2", "ties")}
        for j, n in enumerate(self.n_grid):
            s = np.sort(self.law.sample_scores((reps, n), rng), axis=1)
            y = self.law.sample_labels(s, rng)
            fit = uniform_mass_fit_sorted(s, np.zeros_like(s), y, self.n_bins, include_upper=True)
            loss = auc_loss(self.law, fit.lower_s, fit.upper_s, fit.values)
            out["loss"][:, j], out["loss1"][:, j], out["loss2"][:, j] = loss
            v = np.sort(fit.values, axis=1)
            out["ties"][:, j] = np.sum(v[:, 1:] == v[:, :-1], axis=1)
        return AucGridOutcome(out["loss"], out["loss1"], out["loss2"], out["ties"])


@dataclass(frozen=True)
class BinPartsOutcome(Outcome):
    """Per fitted map: eq. (2)'s two sides over output partitions, and one bin's mass error.

    ``output_gap`` is ``max_i |o_i - e_i|`` and ``input_max`` (``input_min``) the largest
    (smallest) ``max_t |thetahat_it - theta_it|`` (``min_t``) over the output bins' input
    bins, maximised over two output partitions (10 equal-frequency evaluation bins of the
    outputs, and one bin per distinct output): eq. (2) says ``output_gap_i <= input_max_i``
    for every output bin, and ``excess = max_i (|o_i - e_i| - max_t |...|)`` is <= 0.
    ``mass_error`` is ``|N_J / n - eta_J|`` for one bin J drawn uniformly (eq. 10).
    """

    excess: np.ndarray
    excess_min: np.ndarray
    mass_error: np.ndarray


@dataclass(frozen=True)
class BinPartsExperiment(Experiment):
    """Histogram binning on n points: eq. (2) on output partitions and eq. (10) per bin."""

    law: BinaryLaw
    n: int
    n_bins: int

    accepts: ClassVar[tuple[str, ...]] = ("binary",)
    outcome_type: ClassVar[type] = BinPartsOutcome

    def __post_init__(self):
        self._check_law(self.law)
        check_positive_int(self.n_bins, "n_bins")
        check_positive_int(self.n, "n", 2 * self.n_bins)

    bins = property(lambda self: self.n_bins)
    cost = property(lambda self: 2 * self.n)

    def label(self) -> str:
        """Readable one-line identification."""
        return f"BinParts/{self.law.name}/n={self.n}/B={self.n_bins}"

    def symbols(self, outcome=None) -> dict:
        """``n`` and ``n_bins``."""
        return {"n": self.n, "n_bins": self.n_bins}

    def simulate(self, rng, reps):
        """``reps`` replicates of the fit, the partitions and one random bin."""
        scores = self.law.sample_scores((reps, self.n), rng)
        # lexicographic tie-breaking, as the checks' Zadrozny-Elkan calibrator (atoms)
        s, u = sort_scores(scores, rng, tie_breaking="lexicographic")
        y = self.law.sample_labels(s, rng)
        fit = uniform_mass_fit_sorted(s, u, y, self.n_bins, include_upper=True)
        eta, moment = self.law.interval_moments(fit.lower_s, fit.lower_u, fit.upper_s, fit.upper_u)
        with np.errstate(invalid="ignore", divide="ignore"):
            theta = np.where(eta > 0, moment / eta, fit.values)
        err = np.abs(fit.values - theta)
        order = np.argsort(fit.values, axis=1, kind="stable")
        v, w, t, e = (np.take_along_axis(a, order, axis=1) for a in (fit.values, eta, theta, err))
        mid = np.cumsum(w, axis=1) - w / 2  # mass midpoints: 10 equal-frequency output bins
        by_mass = np.minimum((mid * 10).astype(np.int64), 9)
        by_value = np.concatenate(
            [np.zeros((reps, 1), np.int64), np.cumsum(v[:, 1:] != v[:, :-1], axis=1)], axis=1
        )
        excess = np.full(reps, -np.inf)
        excess_min = np.full(reps, -np.inf)
        # labels: up to 10 evaluation bins by mass, up to B distinct outputs by value
        groups = max(self.n_bins, 10)
        for labels in (by_mass, by_value):
            flat = (labels + groups * np.arange(reps)[:, None]).ravel()
            size = reps * groups
            mass = np.bincount(flat, w.ravel(), size)
            gap = np.abs(np.bincount(flat, (w * (v - t)).ravel(), size))
            top = np.full(size, -np.inf)
            low = np.full(size, np.inf)
            np.maximum.at(top, flat, e.ravel())
            np.minimum.at(low, flat, e.ravel())
            used = mass > 0  # groups (labels) that hold output bins of positive mass
            gap = np.divide(gap, mass, out=np.zeros(size), where=used)
            over = np.where(used, gap - np.where(used, top, 0.0), -np.inf)
            under = np.where(used, gap - np.where(used, low, 0.0), -np.inf)
            excess = np.maximum(excess, over.reshape(reps, groups).max(axis=1))
            excess_min = np.maximum(excess_min, under.reshape(reps, groups).max(axis=1))
        j = rng.integers(0, self.n_bins, size=reps)
        counts = np.take_along_axis(fit.counts, j[:, None], axis=1)[:, 0]
        mass = np.take_along_axis(eta, j[:, None], axis=1)[:, 0]
        return BinPartsOutcome(excess, excess_min, np.abs(counts / self.n - mass))
