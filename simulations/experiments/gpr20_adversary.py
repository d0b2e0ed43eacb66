"""Experiments for Gupta, Podkopaev & Ramdas (2020) on the adversary Q and on intervals.

Theorem 3 (injective maps are miscalibrated under Q) and Corollary 1 (confidence intervals
w.r.t. f: width and validity).

References
----------
Gupta, C., Podkopaev, A. and Ramdas, A. (2020). Distribution-free binary classification:
prediction sets, confidence intervals and calibration. NeurIPS. Theorems 2-3, Corollary 1.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from calcheck.bounds import gpr20

from ..calibrators.edges import fixed_width_bin_index
from ..calibrators.scaling import SCALERS
from ..calibrators.weighted import weighted_bin_sums
from ..laws.adversary import AdversaryQ
from ..laws.base import Law
from ..metrics.exact import merge_equal_outputs
from ..validation import check_positive_int
from .base import Experiment, Outcome, ratio

__all__ = ["AdversaryScalingExperiment", "CIWidthExperiment"]


@dataclass(frozen=True)
class TestErrorOutcome(Outcome):
    """Error ``|E[Y | h(X)] - h(X)|`` at one fresh test point ``(R,)``."""

    test_error: np.ndarray


@dataclass(frozen=True)
class IntervalOutcome(Outcome):
    """A point estimate, the count it rests on and the truth it estimates ``(R,)``."""

    count: np.ndarray
    estimate: np.ndarray
    truth: np.ndarray


# ------------------------------------------------------- Theorem 3 (adversary Q)
@dataclass(frozen=True)
class AdversaryScalingExperiment(Experiment):
    """Theorem 3 under the adversary Q of Theorem 2: the test error of a fitted method.

    Q's scores are a.s. distinct, so ``E_Q[Y | f(X)] = Y``; for an injective map h,
    ``E_Q[Y | h(X)] = Y`` too and the test error is ``|Y - h(X)|``. A constant map (beta
    calibration with a = b = 0) has the mean label of Q as its truth; fixed-width histogram
    binning (the negative control: not injective) has the mean label of Q's support points
    in each bin, bins with equal outputs merged.
    """

    method: str
    n: int
    n_bins: int = 10
    law: AdversaryQ = field(default_factory=AdversaryQ)

    accepts: ClassVar[tuple[str, ...]] = ("adversary",)
    outcome_type: ClassVar[type] = TestErrorOutcome

    def __post_init__(self):
        self._check_law(self.law)
        check_positive_int(self.n, "n")
        if self.method not in (*SCALERS, "fixed_width"):
            raise ValueError(
                f"method must be one of {[*SCALERS, 'fixed_width']}, got {self.method!r}"
            )

    def label(self) -> str:
        """Readable one-line identification."""
        return f"{self.method}/{self.law.name}/n={self.n}"

    def simulate(self, rng, reps):
        """Simulate ``reps`` replicates with ``rng``; the outcome is described above."""
        n, b, m = self.n, self.n_bins, self.law.support
        s, y = self.law.sample((reps, n), rng)
        s_t, y_t = self.law.sample(reps, rng)
        if self.method in SCALERS:
            scaler = SCALERS[self.method]
            coef = scaler.fit_batch(s, y)
            h_t = scaler.transform_batch(coef, s_t[:, None])[:, 0]
            q_mean = (y.sum(axis=1) + self.law.rest_label_sum(rng, reps, n)) / m
            truth = np.where(scaler.injective_batch(coef), y_t, q_mean)
            return TestErrorOutcome(np.abs(truth - h_t))
        counts, _, ysum = weighted_bin_sums(fixed_width_bin_index(s, b), y, np.ones_like(s), b)
        rest, rest_y = self.law.rest_bin_sums(rng, reps, n, b)
        mid = (np.arange(b) + 0.5) / b
        values = np.where(counts > 0, ysum / np.maximum(counts, 1), mid)
        mass, moment = merge_equal_outputs(values, (counts + rest) / m, (ysum + rest_y) / m)
        err_bins = np.abs(moment / mass - values)
        return TestErrorOutcome(err_bins[np.arange(reps), fixed_width_bin_index(s_t, b)])


# ---------------------------------------------------------------- Corollary 1
@dataclass(frozen=True)
class CIWidthExperiment(Experiment):
    """Corollary 1: width and validity of confidence intervals w.r.t. f.

    Methods: ``"atomwise_eb"`` -- on a test score seen ``N_z >= 1`` times in the calibration
    set, the empirical-Bernstein interval (Audibert et al., delta = alpha) of the labels at
    that score, otherwise ``[0, 1]``; ``"bin_thm4"`` -- the Theorem 4 interval of the test
    point's fixed-width bin, a valid CI for the *bin* mean used (wrongly) as a CI w.r.t. f;
    ``"knn_eb"`` -- the empirical-Bernstein interval of the labels of the ``neighbors``
    calibration scores nearest the test score (a family with a width knob). Intervals are
    clipped to [0, 1]. The interval depends on alpha through the method, so
    the outcome keeps what it rests on (count, estimate, truth) and :meth:`statistic`
    builds it for each alpha: ``"width"`` and ``"miss_ratio"`` (distance of the truth from
    the centre over the half-width: covered iff <= 1).
    """

    method: str
    law: Law
    n: int
    n_bins: int = 10
    neighbors: int = 0

    accepts: ClassVar[tuple[str, ...]] = ("binary", "adversary")
    outcome_type: ClassVar[type] = IntervalOutcome

    def __post_init__(self):
        self._check_law(self.law)
        check_positive_int(self.n, "n")
        methods = ("atomwise_eb", "bin_thm4", "knn_eb")
        if self.method not in methods:
            raise ValueError(f"method must be one of {methods}, got {self.method!r}")
        if self.method == "knn_eb":
            check_positive_int(self.neighbors, "neighbors")
            if self.neighbors > self.n:
                raise ValueError(f"neighbors must be <= n={self.n}, got {self.neighbors!r}")

    def label(self) -> str:
        """Readable one-line identification."""
        knob = f"/k={self.neighbors}" if self.method == "knn_eb" else ""
        return f"{self.method}{knob}/{self.law.name}/n={self.n}"

    def simulate(self, rng, reps):
        """Simulate ``reps`` replicates with ``rng``; the outcome is described above."""
        n = self.n
        s, y = self.law.sample((reps, n), rng)
        if self.law.family == "adversary":
            s_t, truth = self.law.sample(reps, rng)
        else:
            s_t = self.law.sample_scores(reps, rng)
            truth = self.law.conditional_mean(s_t)
        if self.method == "atomwise_eb":
            same = s == s_t[:, None]
        elif self.method == "knn_eb":
            # the k calibration scores nearest the test score: the width knob of Cor. 1's
            # trade-off (small k: wide; large k: narrow, and then invalid under Q)
            k = self.neighbors
            nearest = np.argpartition(np.abs(s - s_t[:, None]), k - 1, axis=1)[:, :k]
            same = np.zeros(s.shape, dtype=bool)
            np.put_along_axis(same, nearest, True, axis=1)
        else:
            b = self.n_bins
            same = fixed_width_bin_index(s, b) == fixed_width_bin_index(s_t, b)[:, None]
        count = same.sum(axis=1)
        phat = np.where(count > 0, (y * same).sum(axis=1) / np.maximum(count, 1), 0.5)
        return IntervalOutcome(count, phat, np.asarray(truth, dtype=float))

    def interval(self, outcome, alpha):
        """Clipped interval ``(lo, hi)`` of every replicate at miscoverage alpha."""
        var = outcome.estimate * (1.0 - outcome.estimate)
        if self.method in ("atomwise_eb", "knn_eb"):
            hw = gpr20.empirical_bernstein_halfwidth(outcome.count, var, alpha)
        else:
            hw = gpr20.thm4_halfwidth(outcome.count, var, self.n_bins, alpha)
        return np.clip(outcome.estimate - hw, 0, 1), np.clip(outcome.estimate + hw, 0, 1)

    def statistic(self, outcome, name, alpha):
        """``"width"`` or ``"miss_ratio"`` of the interval at alpha (see class doc)."""
        lo, hi = self.interval(outcome, alpha)
        if name == "width":
            return hi - lo
        if name == "miss_ratio":
            # covered iff lo <= truth <= hi (compared directly: no rounding at the ends);
            # inside, the distance from the centre over the half-width (<= 1), outside 1 +.
            truth = outcome.truth
            inside = (lo <= truth) & (truth <= hi)
            centred = np.minimum(ratio(np.abs(truth - (lo + hi) / 2), (hi - lo) / 2), 1.0)
            outside = 1.0 + ratio(np.maximum(lo - truth, truth - hi), (hi - lo) / 2)
            return np.where(inside, centred, np.maximum(outside, np.nextafter(1.0, 2.0)))
        raise ValueError(f"CIWidthExperiment has statistics 'width' and 'miss_ratio', got {name!r}")
