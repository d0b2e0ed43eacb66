"""Covariate-shift experiments for Gupta, Podkopaev & Ramdas (2020), Sec. 4.4 and App. D.

Source data, exact target truth (quadrature), and the raw statistics the radii of
Theorems 7 and 10 need; Proposition 3 on random partitions.

References
----------
Gupta, C., Podkopaev, A. and Ramdas, A. (2020). Distribution-free binary classification:
prediction sets, confidence intervals and calibration. NeurIPS. Theorem 7, Theorem 10 and
Proposition 3 (App. D.1-D.2), estimators (22) and (40).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..calibrators.edges import fixed_width_edges, uniform_mass_edges
from ..calibrators.weighted import bin_totals
from ..laws.shift import LinearShiftLaw, StepShiftLaw
from ..validation import check_positive_int
from .base import Experiment, Outcome

__all__ = ["PlugInRatioExperiment", "Prop3Experiment", "ShiftExperiment"]

_SHIFT_ESTIMATORS = ("weighted", "oracle", "unweighted", "weight_mean")


@dataclass(frozen=True)
class ShiftOutcome(Outcome):
    """Per-bin target errors and what the radii need, arrays ``(R, B)``.

    ``error`` is ``inf`` for an empty bin (no estimate); ``variance`` is the biased sample
    variance of ``m_b w Y`` in the bin (of ``Y`` for the unweighted estimator).
    """

    error: np.ndarray
    counts: np.ndarray
    variance: np.ndarray
    m_b: np.ndarray
    n_empty: np.ndarray


def _flat_bin_index(x, edges):
    """Bin of each point plus ``B`` times its row, for per-row edges ``(R, B + 1)``.

    The comparisons ``x >= e_b`` of
    :func:`~calcheck.simulations.calibrators.edges.bin_index_from_edges` summed one interior edge at
    a time into the row offsets (the flat index :func:`bin_totals` takes): no
    ``(R, n, B - 1)`` temporary and no second full-size index array.
    """
    r, b = edges.shape[0], edges.shape[1] - 1
    flat = np.repeat(np.arange(0, r * b, b, dtype=np.intp), x.shape[1]).reshape(x.shape)
    above = np.empty(x.shape, dtype=bool)
    for e in edges[:, 1:-1].T:
        flat += np.greater_equal(x, e[:, None], out=above)
    return flat


@dataclass(frozen=True)
class ShiftExperiment(Experiment):
    """Binning under covariate shift: source data, target truth, per-bin errors.

    Estimators: ``"weighted"`` pi_check^(w) (eq. 22), ``"oracle"`` pi^^(w) with the exact
    m_b (eq. 40), ``"unweighted"`` plain binning (eq. 17, biased under shift; its symbols
    have scale 1: ``m_b = 1``, ``upper = 1``, the range of its own labels), and
    ``"weight_mean"``: the bin's mean weight r^_b (eq. 43) against ``r_b = 1/m_b`` (the
    ``error`` of step 2 of Theorem 7's proof, G3). Laws: linear or step ratios. Partition:
    fixed-width, or uniform-mass edges from ``n_edge`` extra source points. Truth
    ``E_target[Y | X in X_b]`` is exact (quadrature).
    """

    law: LinearShiftLaw | StepShiftLaw
    n: int
    n_bins: int
    estimator: str = "weighted"
    partition: str = "fixed_width"
    n_edge: int = 0

    accepts: ClassVar[tuple[str, ...]] = ("linear_shift", "step_shift")
    outcome_type: ClassVar[type] = ShiftOutcome

    def __post_init__(self):
        self._check_law(self.law)
        check_positive_int(self.n, "n")
        check_positive_int(self.n_bins, "n_bins")
        if self.estimator not in _SHIFT_ESTIMATORS:
            raise ValueError(
                f"estimator must be one of {_SHIFT_ESTIMATORS}, got {self.estimator!r}"
            )
        if self.partition not in ("fixed_width", "uniform_mass"):
            raise ValueError(
                f"partition must be 'fixed_width' or 'uniform_mass', got {self.partition!r}"
            )
        if self.partition == "uniform_mass" and self.n_edge < self.n_bins:
            raise ValueError(f"uniform_mass needs n_edge >= n_bins, got {self.n_edge}")

    cost = property(lambda self: int(self.n * 2 + self.n_edge))

    def symbols(self, outcome) -> dict:
        """Quantities the bounds take, named as in the bound functions."""
        unweighted = self.estimator == "unweighted"
        return {
            "n": int(self.n),
            "n_bins": int(self.n_bins),
            "n_bin": outcome.counts,
            "variance": outcome.variance,
            "m_b": outcome.m_b,
            "upper": 1.0 if unweighted else self.law.upper,
            "lower": 1.0 if unweighted else self.law.lower,
        }

    def simulate(self, rng, reps):
        """Simulate ``reps`` replicates with ``rng``; the outcome is described above."""
        law, b = self.law, self.n_bins
        if self.partition == "fixed_width":
            edges = np.broadcast_to(fixed_width_edges(b), (reps, b + 1))
        else:
            edges = uniform_mass_edges(
                np.sort(law.sample_source((reps, self.n_edge), rng), axis=1), b
            )
        x = law.sample_source((reps, self.n), rng)
        y = law.sample_labels(x, rng)
        flat = _flat_bin_index(x, edges)
        lo, hi = edges[:, :-1], edges[:, 1:]
        m_b = law.source_mass(lo, hi) / law.target_mass(lo, hi)
        truth = law.target_bin_mean(lo, hi)
        if self.estimator == "unweighted":
            counts, ysum = bin_totals(flat, b, y, offset=False)
            est = ysum / np.maximum(counts, 1)
            var = est * (1.0 - est)
            m_out = np.ones_like(m_b)
        else:
            w = law.weight(x)
            wy = np.multiply(w, y, out=x)  # x and y are not needed any more
            # sum of (w Y)^2 = sum of w^2 Y: w (w Y) = (w w) Y exactly for Y in {0, 1}
            sums = bin_totals(flat, b, w, wy, np.multiply(w, wy, out=y), offset=False)
            counts, wsum, wysum, w2sum = sums
            safe = np.maximum(counts, 1)
            if self.estimator == "weighted":
                est = wysum / np.where(wsum > 0, wsum, 1.0)
            elif self.estimator == "weight_mean":
                est, truth = wsum / safe, 1.0 / m_b
            else:
                est = m_b * wysum / safe
            mean_z = m_b * wysum / safe
            var = np.maximum(m_b**2 * w2sum / safe - mean_z**2, 0.0)
            m_out = m_b
        err = np.where(counts > 0, np.abs(est - truth), np.inf)
        return ShiftOutcome(err, counts.astype(np.int64), var, m_out, (counts == 0).sum(axis=1))


@dataclass(frozen=True)
class Prop3Outcome(Outcome):
    """Source quantities of random partitions and the target bin means, ``(R, B)``."""

    source_mass: np.ndarray
    target_mass: np.ndarray
    source_weighted_mean: np.ndarray
    target_mean: np.ndarray


@dataclass(frozen=True)
class Prop3Experiment(Experiment):
    """Proposition 3 on random partitions: both sides of ``E~[Y | X_b] = m_b E[w Y | X_b]``.

    Each replicate draws B - 1 uniform edges; the source quantities come from x-space
    quadrature, the target bin mean from quadrature in the target's quantile space (two
    independent routes), so the identity is checked, not assumed.
    """

    law: LinearShiftLaw
    n_bins: int = 10

    accepts: ClassVar[tuple[str, ...]] = ("linear_shift",)
    outcome_type: ClassVar[type] = Prop3Outcome

    def __post_init__(self):
        self._check_law(self.law)
        check_positive_int(self.n_bins, "n_bins")

    n_total = property(lambda self: int(self.n_bins))

    def symbols(self, outcome) -> dict:
        """Quantities the bounds take, named as in the bound functions."""
        return {
            "source_mass": outcome.source_mass,
            "target_mass": outcome.target_mass,
            "source_weighted_mean": outcome.source_weighted_mean,
        }

    def simulate(self, rng, reps):
        """Simulate ``reps`` replicates with ``rng``; the outcome is described above."""
        inner = np.sort(rng.random((reps, self.n_bins - 1)), axis=1)
        edges = np.concatenate([np.zeros((reps, 1)), inner, np.ones((reps, 1))], axis=1)
        lo, hi = edges[:, :-1], edges[:, 1:]
        law = self.law
        p, q = law.source_mass(lo, hi), law.target_mass(lo, hi)
        return Prop3Outcome(
            p, q, law.source_weighted_moment(lo, hi) / p, law.target_bin_mean(lo, hi)
        )


@dataclass(frozen=True)
class PlugInRatioOutcome(Outcome):
    """Weighted binning with w and with an estimate w_hat, on the same data ``(R,)``.

    ``gap`` is ``max_b |pi_check^(w_hat)_b - pi_check^(w)_b|`` (bins with points), the
    errors ``max_b |pi_check_b - E_target[Y | X_b]|`` of the plug-in and of the oracle.
    """

    gap: np.ndarray
    error_plugin: np.ndarray
    error_oracle: np.ndarray


_SHAPES = {
    # a misestimated slope of the linear ratio (w_hat is the ratio of c0 + Delta)
    "tilt": lambda x: 2.0 * x - 1.0,
    # a high-frequency estimation error of sup-norm 1
    "wiggle": lambda x: np.sin(40.0 * np.pi * x),
}


@dataclass(frozen=True)
class PlugInRatioExperiment(Experiment):
    """Proposition 2: weighted binning (22) with ``w_hat = w + Delta s(x)``, ``|s| <= 1``.

    ``sup_error`` is ``Delta = sup |w_hat - w|`` (``0 < Delta < L``), ``shape`` the error
    s (``"tilt"``: ``2x - 1``; ``"wiggle"``: ``sin(40 pi x)``); fixed-width bins. The
    oracle (w) and the plug-in (w_hat) see the same source data; truth by quadrature.
    """

    law: LinearShiftLaw
    n: int
    n_bins: int
    sup_error: float
    shape: str = "tilt"

    accepts: ClassVar[tuple[str, ...]] = ("linear_shift",)
    outcome_type: ClassVar[type] = PlugInRatioOutcome

    def __post_init__(self):
        self._check_law(self.law)
        check_positive_int(self.n, "n")
        check_positive_int(self.n_bins, "n_bins")
        d = self.sup_error
        if isinstance(d, bool) or not isinstance(d, int | float) or not 0 < d < self.law.lower:
            raise ValueError(f"sup_error must lie in (0, L = {self.law.lower:g}), got {d!r}")
        if self.shape not in _SHAPES:
            raise ValueError(f"shape must be one of {sorted(_SHAPES)}, got {self.shape!r}")

    def label(self) -> str:
        """Readable one-line identification."""
        return (
            f"plugin_{self.shape}/{self.law.name}/n={self.n}/B={self.n_bins}/D={self.sup_error:g}"
        )

    def symbols(self, outcome=None) -> dict:
        """Quantities the bounds take, named as in the bound functions."""
        return {
            "n": int(self.n),
            "n_bins": int(self.n_bins),
            "sup_error": float(self.sup_error),
            "lower": self.law.lower,
            "upper": self.law.upper,
        }

    def simulate(self, rng, reps):
        """Simulate ``reps`` replicates with ``rng``; the outcome is described above."""
        law, b = self.law, self.n_bins
        edges = fixed_width_edges(b)
        x = law.sample_source((reps, self.n), rng)
        y = law.sample_labels(x, rng)
        flat = _flat_bin_index(x, np.broadcast_to(edges, (reps, b + 1)))
        w = law.weight(x)
        d = self.sup_error * _SHAPES[self.shape](x)
        counts, wsum, wysum, dsum, dysum = bin_totals(flat, b, w, w * y, d, d * y, offset=False)
        truth = law.target_bin_mean(edges[:-1], edges[1:])
        oracle = wysum / np.where(counts > 0, wsum, 1.0)
        plugin = (wysum + dysum) / np.where(counts > 0, wsum + dsum, 1.0)
        seen = counts > 0

        def worst(v):
            return np.max(np.where(seen, v, 0.0), axis=1)

        return PlugInRatioOutcome(
            worst(np.abs(plugin - oracle)),
            worst(np.abs(plugin - truth)),
            worst(np.abs(oracle - truth)),
        )
