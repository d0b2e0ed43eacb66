"""Experiments for Gupta, Podkopaev & Ramdas (2020): intervals, radii, counts, streams.

Per-bin intervals (Theorem 4), binning radii (Corollary 3, also under the adversary Q),
uniform-mass counts (Theorem 5) and time-uniform streams (Theorem 6).

Each returns a typed outcome of raw statistics (see :mod:`calcheck.simulations.experiments.base`);
the radii (Theorem 4, Corollary 3, Theorem 5...) are applied by the check layer.

References
----------
Gupta, C., Podkopaev, A. and Ramdas, A. (2020). Distribution-free binary classification:
prediction sets, confidence intervals and calibration. NeurIPS.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from scipy import stats

from calcheck.bounds import gpr20

from ..calibrators.binning import UniformMassSampleSplitting, calibrator_from_spec
from ..calibrators.edges import fixed_width_bin_index
from ..calibrators.weighted import weighted_bin_sums
from ..laws.base import Law
from ..metrics.exact import exact_bin_errors, merge_equal_outputs
from ..validation import check_alphas, check_positive_int
from .base import BlockOutcome, Experiment, Outcome, ratio

__all__ = [
    "BinBernoulliExperiment",
    "BinningRadiusExperiment",
    "StreamExperiment",
    "UMSCountExperiment",
]


# ---------------------------------------------------------------------------- outcomes
@dataclass(frozen=True)
class PerBinOutcome(Outcome):
    """Per-bin estimation errors with the counts and variances a radius needs, ``(R, B)``."""

    error: np.ndarray
    counts: np.ndarray
    variance: np.ndarray
    n_empty: np.ndarray


@dataclass(frozen=True)
class MaxErrorOutcome(Outcome):
    """Conditional error of a fitted map ``(R,)`` with its bin counts and variances ``(R, B)``."""

    max_error: np.ndarray
    counts: np.ndarray
    variance: np.ndarray
    n_empty: np.ndarray


@dataclass(frozen=True)
class CountOutcome(Outcome):
    """Smallest bin count and worst balance ``max_b max(w_b B / 2, 1 / (2 B w_b))`` ``(R,)``."""

    min_count: np.ndarray
    balance: np.ndarray
    n_empty: np.ndarray


# ---------------------------------------------------------------- Theorem 4, per bin
@dataclass(frozen=True)
class BinBernoulliExperiment(Experiment):
    """Theorem 4 given the bin memberships: N_b iid Bernoulli(pi_b) labels per bin.

    By the proof of Theorem 4 the guarantee holds conditionally on the counts, so the
    counts are fixed and only the labels are drawn (their sums are sufficient:
    ``k_b ~ Binomial(N_b, pi_b)``, ``V^_b = pi^_b (1 - pi^_b)``).

    Parameters
    ----------
    counts : tuple of int
        N_b per bin.
    probs : tuple of float
        pi_b per bin.
    name : str
    """

    counts: tuple
    probs: tuple
    name: str = "bins"

    outcome_type: ClassVar[type] = PerBinOutcome

    def __post_init__(self):
        if len(self.counts) != len(self.probs) or not self.counts:
            raise ValueError("counts and probs must be non-empty and of equal length")
        for c in self.counts:
            check_positive_int(c, "counts")
        if not all(0 <= p <= 1 for p in self.probs):
            raise ValueError(f"probs must lie in [0, 1], got {self.probs!r}")

    law_name = property(lambda self: self.name)
    n_total = property(lambda self: int(sum(self.counts)))
    bins = property(lambda self: len(self.counts))
    cost = property(lambda self: len(self.counts))

    def symbols(self, outcome) -> dict:
        """Quantities the bounds take, named as in the bound functions."""
        return {
            "n_bin": outcome.counts,
            "counts": outcome.counts,
            "variance": outcome.variance,
            "variances": outcome.variance,
            "n_bins": len(self.counts),
        }

    def simulate(self, rng, reps):
        """Simulate ``reps`` replicates with ``rng``; the outcome is described above."""
        n = np.asarray(self.counts, dtype=np.int64)
        p = np.asarray(self.probs, dtype=float)
        k = rng.binomial(n, p, size=(reps, n.size))
        phat = k / n
        return PerBinOutcome(
            np.abs(phat - p),
            np.broadcast_to(n, k.shape).copy(),
            phat * (1.0 - phat),
            np.zeros(reps, dtype=np.int64),
        )


# -------------------------------------------------------- Corollary 3, end to end
@dataclass(frozen=True)
class BinningRadiusExperiment(Experiment):
    """Histogram binning with exact ``E[Y | h(X)]``: the conditional error and what a radius needs.

    The calibrator (fixed-width, or uniform-mass with a split) is fitted on n draws of a
    binary-label law; the outcome is ``max_{r in Range(h)} |E[Y | h(X) = r] - r|`` (bins
    with equal outputs merged), the counts N_b and ``V^_b = pi^_b (1 - pi^_b)``. Under the
    adversary Q (fixed-width bins only) the truth of a bin is the mean label of Q's support
    points in it, drawn exactly (:meth:`calcheck.simulations.laws.AdversaryQ.rest_bin_sums`).
    """

    law: Law
    calibrator: dict
    n: int
    n_bins: int

    accepts: ClassVar[tuple[str, ...]] = ("binary", "adversary")
    outcome_type: ClassVar[type] = MaxErrorOutcome

    def __post_init__(self):
        self._check_law(self.law)
        check_positive_int(self.n, "n")
        check_positive_int(self.n_bins, "n_bins")
        if self.law.family == "binary" and self.law.labels != "binary":
            raise ValueError("V^_b = pi^_b (1 - pi^_b) needs binary labels")
        if self.law.family == "adversary" and self.calibrator.get("name") != "fixed_width":
            raise ValueError("under the adversary Q only fixed-width binning is simulated")
        calibrator_from_spec(self.calibrator, self.n_bins)

    def symbols(self, outcome) -> dict:
        """Quantities the bounds take, named as in the bound functions."""
        return {
            "counts": outcome.counts,
            "variances": outcome.variance,
            "n": int(self.n),
            "n_bins": int(self.n_bins),
        }

    def simulate(self, rng, reps):
        """Simulate ``reps`` replicates with ``rng``; the outcome is described above."""
        if self.law.family == "adversary":
            return self._simulate_adversary(rng, reps)
        cal = calibrator_from_spec(self.calibrator, self.n_bins)
        scores, labels = self.law.sample((reps, self.n), rng)
        batch = cal.fit_batch(scores, labels, self.n_bins, rng)
        counts = batch.counts.astype(np.int64)
        var = np.where(counts > 0, batch.values * (1.0 - batch.values), 0.0)
        err = exact_bin_errors(batch, self.law).error
        return MaxErrorOutcome(np.nanmax(err, axis=1), counts, var, (counts == 0).sum(axis=1))

    def _simulate_adversary(self, rng, reps):
        n, b, m = self.n, self.n_bins, self.law.support
        s, y = self.law.sample((reps, n), rng)
        counts, _, ysum = weighted_bin_sums(fixed_width_bin_index(s, b), y, np.ones_like(s), b)
        rest, rest_y = self.law.rest_bin_sums(rng, reps, n, b)
        mid = (np.arange(b) + 0.5) / b
        values = np.where(counts > 0, ysum / np.maximum(counts, 1), mid)
        mass, moment = merge_equal_outputs(values, (counts + rest) / m, (ysum + rest_y) / m)
        err = np.abs(moment / mass - values)
        var = values * (1.0 - values)
        return MaxErrorOutcome(
            err.max(axis=1), counts.astype(np.int64), var, (counts == 0).sum(axis=1)
        )


# ---------------------------------------------------------------------- Theorem 5
@dataclass(frozen=True)
class UMSCountExperiment(Experiment):
    """Theorem 5: uniform-mass bins from n1 points, counts of n2 further points.

    Outcome: the smallest count ``min_b N_b`` and the worst balance
    ``max_b max(w_b B / 2, 1 / (2 B w_b))`` of the exact bin masses (at most 1 iff every
    mass is in ``[1/(2B), 2/B]``: 2-well-balanced, Lemma 13 in App. C.3).
    """

    law: Law
    n1: int
    n2: int
    n_bins: int
    tie_breaking: str = "lexicographic"

    accepts: ClassVar[tuple[str, ...]] = ("binary",)
    outcome_type: ClassVar[type] = CountOutcome

    def __post_init__(self):
        self._check_law(self.law)
        for name in ("n1", "n2", "n_bins"):
            check_positive_int(getattr(self, name), name)
        if self.n1 < self.n_bins:
            raise ValueError(f"need n1 >= n_bins, got n1={self.n1}, n_bins={self.n_bins}")
        self._calibrator()

    n_total = property(lambda self: int(self.n1 + self.n2))

    def _calibrator(self):
        n = self.n1 + self.n2
        cal = UniformMassSampleSplitting(
            self.n_bins, split=self.n1 / n, tie_breaking=self.tie_breaking
        )
        if cal._n_edge(n) != self.n1:  # pragma: no cover - rounding guard
            raise ValueError("split rounding does not reproduce n1")
        return cal

    def symbols(self, outcome) -> dict:
        """Quantities the bounds take, named as in the bound functions."""
        return {"n_cal2": int(self.n2), "n_bins": int(self.n_bins)}

    def simulate(self, rng, reps):
        """Simulate ``reps`` replicates with ``rng``; the outcome is described above."""
        scores = self.law.sample_scores((reps, self.n1 + self.n2), rng)
        batch = self._calibrator().fit_batch(scores, np.zeros_like(scores), self.n_bins, rng)
        mass, _ = self.law.interval_moments(
            batch.lower_s, batch.lower_u, batch.upper_s, batch.upper_u
        )
        b = self.n_bins
        with np.errstate(divide="ignore"):
            balance = np.maximum(mass * b / 2.0, 1.0 / (2.0 * b * mass)).max(axis=1)
        counts = batch.counts
        return CountOutcome(counts.min(axis=1), balance, (counts == 0).sum(axis=1))


# ---------------------------------------------------------------------- Theorem 6
_STREAM_RADII = ("thm6", "thm6_intermediate", "clopper_pearson_fixed_n")


class _ClopperPearsonTable:
    """Two-sided Clopper-Pearson limits at ``level`` for (t, k), t <= t_max, filled lazily.

    A full table costs (t_max + 1)^2 beta quantiles per limit (95 s per alpha at t_max =
    5000); a stream only ever reaches k within a few standard deviations of t p, so the
    entries are computed on first use and kept (identical values: the same formula).
    """

    def __init__(self, t_max: int, level: float):
        self.level = level
        self.lo = np.full((t_max + 1, t_max + 1), np.nan)
        self.hi = np.full((t_max + 1, t_max + 1), np.nan)

    def limits(self, t, k):
        """Lower and upper limits at integer arrays ``t`` (>= 1) and ``k`` (0 <= k <= t)."""
        return self.limits_flat(np.asarray(t) * self.lo.shape[1] + np.asarray(k))

    def limits_flat(self, flat):
        """:meth:`limits` at flat indices ``t * (t_max + 1) + k`` (one gather per table)."""
        lo = self.lo.ravel().take(flat)
        missing = np.isnan(lo)
        if missing.any():
            tm, km = np.divmod(np.unique(flat[missing]), self.lo.shape[1])
            tf, kf = tm.astype(float), km.astype(float)
            a = self.level
            with np.errstate(invalid="ignore", divide="ignore"):
                lo = np.where(km > 0, stats.beta.ppf(a / 2, kf, tf - kf + 1), 0.0)
                hi = np.where(km < tm, stats.beta.ppf(1 - a / 2, kf + 1, tf - kf), 1.0)
            self.lo[tm, km] = np.nan_to_num(lo)
            self.hi[tm, km] = np.nan_to_num(hi, nan=1.0)
            lo = self.lo.ravel().take(flat)
        return lo, self.hi.ravel().take(flat)


def _max_ratio(err, radius, axis):
    """``ratio(err, radius).max(axis)``; a plain quotient when every radius is in (0, inf)."""
    # ratio() costs several full-size passes; its special cases only arise at radius 0 or inf
    if radius.min() > 0 and radius.max() < np.inf:
        return np.divide(err, radius).max(axis=axis)
    return ratio(err, radius).max(axis=axis)


@functools.lru_cache(maxsize=8)
def _clopper_pearson_table(t_max: int, level: float) -> _ClopperPearsonTable:
    return _ClopperPearsonTable(t_max, level)


@dataclass(frozen=True)
class StreamExperiment(Experiment):
    """Theorem 6: per-bin Bernoulli streams, the radius recomputed after every point.

    The documented exception of :mod:`calcheck.simulations.experiments.base`: the event is
    time-uniform (no bin leaves its radius at any ``t <= lengths[b]``), a property of the
    whole path, so the radius (``"thm6"``, ``"thm6_intermediate"`` or the negative control
    ``"clopper_pearson_fixed_n"``: an exact fixed-n interval at level alpha/B re-checked at
    every t) and the alphas are part of the experiment. Conditional on the memberships
    (the proof conditions on the sequence of bins), bin b receives ``lengths[b]`` labels iid
    Bernoulli(``probs[b]``). ``Ybar_0 = y0`` in the predictable variance (not defined by
    the paper; any fixed value in [0, 1] is valid).
    """

    probs: tuple
    lengths: tuple
    alphas: tuple = (0.1,)
    radius: str = "thm6"
    name: str = "streams"
    y0: float = 0.5

    outcome_type: ClassVar[type] = BlockOutcome

    def __post_init__(self):
        if len(self.probs) != len(self.lengths) or not self.probs:
            raise ValueError("probs and lengths must be non-empty and of equal length")
        for length in self.lengths:
            check_positive_int(length, "lengths")
        if self.radius not in _STREAM_RADII:
            raise ValueError(f"radius must be one of {_STREAM_RADII}, got {self.radius!r}")
        if not (0 <= self.y0 <= 1):
            raise ValueError(f"y0 must lie in [0, 1], got {self.y0!r}")
        check_alphas(self.alphas)

    @classmethod
    def code_paths(cls) -> tuple[str, ...]:
        """Sources whose change invalidates stored outcomes (this one evaluates bounds)."""
        return (*super().code_paths(), "bounds")  # evaluates the bound inside

    law_name = property(lambda self: self.name)
    n_total = property(lambda self: int(sum(self.lengths)))
    bins = property(lambda self: len(self.lengths))

    def simulate(self, rng, reps):
        """Simulate ``reps`` replicates with ``rng``; the outcome is described above."""
        b = len(self.probs)
        worst = np.zeros((reps, len(self.alphas)))
        final = np.zeros((reps, len(self.alphas)))
        for p, length in zip(self.probs, self.lengths, strict=True):
            y = rng.random((reps, length)) < p
            if self.radius == "clopper_pearson_fixed_n":
                r, radius_end = self._clopper_pearson(y, p, b)
            else:
                r, radius_end = self._thm6(y, p, b)
            np.maximum(worst, r, out=worst)
            np.maximum(final, radius_end, out=final)
        return BlockOutcome(worst, final)

    def _thm6(self, y, p, b):
        """Worst ratio and final half-width ``(reps, A)`` of one bin under Theorem 6."""
        t = np.arange(1, y.shape[1] + 1, dtype=float)
        ybar = np.cumsum(y, axis=1, dtype=float)
        ybar /= t
        dev = np.empty_like(ybar)  # (Y_i - Ybar_{i-1})^2 with Ybar_0 = y0
        dev[:, 0] = self.y0
        dev[:, 1:] = ybar[:, :-1]
        np.subtract(y, dev, out=dev)
        np.square(dev, out=dev)
        v_plus = np.cumsum(dev, axis=1, out=dev)
        f = gpr20.thm6_halfwidth if self.radius == "thm6" else gpr20.thm6_halfwidth_intermediate
        # All alphas in one call: the alpha-free logs and square root are evaluated once.
        hw = f(t, v_plus, b, np.asarray(self.alphas, dtype=float)[:, None, None])
        radius_end = hw[..., -1].T.copy()  # hw is overwritten below
        err = np.abs(ybar - p, out=ybar)
        # hw >= 5.3 ln(6.3 B / alpha) / t is positive and finite (the bound refuses an
        # overflow), so ratio() is the plain quotient here.
        return np.divide(err, hw, out=hw).max(axis=2).T, radius_end

    def _clopper_pearson(self, y, p, b):
        """Worst ratio and final half-width ``(reps, A)`` of one bin, fixed-n CP limits."""
        # Time runs down axis 0 here, (length, reps): the lookups at one t stay within
        # one row of the (t, k) tables instead of one row per replicate.
        csum = np.cumsum(np.ascontiguousarray(y.T), axis=0, dtype=np.int64)
        t_max = int(max(self.lengths))
        t = np.arange(1, csum.shape[0] + 1)[:, None]
        ybar = csum / t
        err = np.abs(ybar - p)
        above = p < ybar
        csum += t * (t_max + 1)  # flat table index t * (t_max + 1) + k
        r, radius_end = [], []
        for a in self.alphas:
            lo_t, hi_t = _clopper_pearson_table(t_max, a / b).limits_flat(csum)
            side = np.where(above, ybar - lo_t, hi_t - ybar)
            r.append(_max_ratio(err, side, axis=0))
            radius_end.append((hi_t[-1] - lo_t[-1]) / 2)
        return np.stack(r, axis=1), np.stack(radius_end, axis=1)
