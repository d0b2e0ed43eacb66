"""Monte Carlo experiments with a per-replicate event (gpr20 and later papers).

A :class:`Cell` of the engine runs a binning calibrator on a law and stores its exact
per-bin errors; the gr21 checks compare them with a bound that depends on (n, B, alpha)
only. Many guarantees instead have a *data-dependent* radius (empirical Bernstein, the
time-uniform bound) or speak of another event (a bin count, a width, an impossibility).
An experiment here bundles the data-generating law, the method and the exact estimand
(the D, M and E of ADEMP) and returns, for each replicate and each miscoverage alpha,

``success``
    whether the event the guarantee speaks of happened (bool, shape (R, A));
``ratio``
    a continuous version of it: error / radius for upper bounds (success iff <= 1), radius
    / error for lower-bound events, so that its quantiles measure tightness;
``bound``
    the radius used in that replicate (its median is reported);
``n_empty``
    empty bins (reported; the guarantee is vacuous there).

Experiments are frozen dataclasses with a content hash (``key``) and run through
:func:`simulations.engine.run_cells` with the same seed protocol as cells: one SeedSequence
child per block of replicates, results identical for any number of jobs or backend.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass

import numpy as np
from scipy import stats

from bounds import gpr20

from .calibrators import UniformMassSampleSplitting, calibrator_from_spec
from .engine import BLOCK_REPS, ContentKeyed
from .laws import Law
from .metrics import _merge_equal_outputs, conditional_max_error, exact_bin_errors
from .scaling import SCALERS
from .shift import LinearShiftLaw, _uniform_mass_edges, weighted_bin_sums

__all__ = [
    "BinBernoulliExperiment",
    "BinningRadiusExperiment",
    "CIWidthExperiment",
    "Experiment",
    "ImpossibilityExperiment",
    "Prop3Experiment",
    "ShiftExperiment",
    "StreamExperiment",
    "UMSCountExperiment",
]


def _jsonable(value):
    if hasattr(value, "spec"):
        return value.spec()
    if isinstance(value, tuple | list):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.integer | np.floating):
        return value.item()
    return value


def _check_alphas(alphas, upper=1.0):
    if not alphas:
        raise ValueError("alphas must be a non-empty tuple")
    for a in alphas:
        if not (0 < a < upper):
            raise ValueError(f"alpha must lie in (0, {upper:g}), got {a!r}")


@dataclass(frozen=True)
class Experiment(ContentKeyed):
    """Base class: content hash, description and the outcome format."""

    def description(self) -> dict:
        fields = {f.name: _jsonable(getattr(self, f.name)) for f in dataclasses.fields(self)}
        return {"experiment": type(self).__name__, **fields, "block_reps": BLOCK_REPS}

    # reporting hooks (overridden where the names differ)
    @property
    def law_name(self) -> str:
        return self.law.name

    @property
    def n_total(self) -> int:
        return int(self.n)

    @property
    def bins(self) -> int:
        return int(self.n_bins)

    @property
    def cost(self) -> int:
        return self.n_total

    def label(self) -> str:
        return f"{type(self).__name__}/{self.law_name}/n={self.n_total}/B={self.bins}"

    @staticmethod
    def outcome(success, ratio, bound, n_empty) -> dict:
        return {"success": np.asarray(success, dtype=bool),
                "ratio": np.asarray(ratio, dtype=float),
                "bound": np.asarray(bound, dtype=float),
                "n_empty": np.asarray(n_empty, dtype=np.int64)}

    @classmethod
    def outcome_per_alpha(cls, cols, n_empty) -> dict:
        """Outcome from one ``(success, ratio, bound)`` triple of (R,) arrays per alpha."""
        success, ratio, bound = (np.stack(z, axis=1) for z in zip(*cols, strict=True))
        return cls.outcome(success, ratio, bound, n_empty)


def _ratio(err, radius):
    """err / radius with 0/0 = 0 and x/0 = inf (radius 0 covers only a zero error)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(radius > 0, err / np.where(radius > 0, radius, 1.0),
                     np.where(err > 0, np.inf, 0.0))
    return np.where(np.isinf(radius), 0.0, r)


# ---------------------------------------------------------------- Theorem 4, per bin
_BIN_RADII = ("thm4", "hoeffding", "bernstein_without_range", "hoeffding_without_union_bound")


@dataclass(frozen=True)
class BinBernoulliExperiment(Experiment):
    """Theorem 4 given the bin memberships: N_b iid Bernoulli(pi_b) labels per bin.

    By the proof of Theorem 4 the guarantee holds conditionally on the counts, so the
    counts are fixed and only the labels are drawn (their sums are sufficient:
    ``k_b ~ Binomial(N_b, pi_b)``, ``V^_b = pi^_b (1 - pi^_b)``). Event: every bin within
    its radius.

    Parameters
    ----------
    counts : tuple of int
        N_b per bin.
    probs : tuple of float
        pi_b per bin.
    alphas : tuple of float
    radius : {"thm4", "hoeffding", "bernstein_without_range", "hoeffding_without_union_bound"}
        Theorem 4, the derived Hoeffding analogue, or a negative control: Theorem 4
        without its ``3 ln(3B/alpha)/N_b`` range term (an all-zero bin has ``V^_b = 0`` and
        radius 0), or Hoeffding at level alpha per bin instead of alpha/B.
    name : str
    """

    counts: tuple
    probs: tuple
    alphas: tuple = (0.1,)
    radius: str = "thm4"
    name: str = "bins"

    def __post_init__(self):
        if len(self.counts) != len(self.probs) or not self.counts:
            raise ValueError("counts and probs must be non-empty and of equal length")
        if min(self.counts) < 1:
            raise ValueError(f"counts must be >= 1, got {self.counts!r}")
        if not all(0 <= p <= 1 for p in self.probs):
            raise ValueError(f"probs must lie in [0, 1], got {self.probs!r}")
        if self.radius not in _BIN_RADII:
            raise ValueError(f"radius must be one of {_BIN_RADII}, got {self.radius!r}")
        _check_alphas(self.alphas)

    law_name = property(lambda self: self.name)
    n_total = property(lambda self: int(sum(self.counts)))
    bins = property(lambda self: len(self.counts))
    cost = property(lambda self: len(self.counts))

    def radii(self, counts, variance, alpha):
        b = len(self.counts)
        if self.radius == "thm4":
            return gpr20.thm4_halfwidth(counts, variance, b, alpha)
        if self.radius in ("hoeffding", "hoeffding_without_union_bound"):
            b_used = b if self.radius == "hoeffding" else 1
            return np.broadcast_to(gpr20.hoeffding_bin_halfwidth(counts, b_used, alpha),
                                   np.shape(variance))
        full = gpr20.thm4_halfwidth(counts, variance, b, alpha)
        return full - gpr20.thm4_halfwidth(counts, np.zeros_like(variance), b, alpha)

    def simulate(self, rng, reps):
        n = np.asarray(self.counts, dtype=np.int64)
        p = np.asarray(self.probs, dtype=float)
        k = rng.binomial(n, p, size=(reps, n.size))
        phat = k / n
        var = phat * (1.0 - phat)
        err = np.abs(phat - p)
        out = [self._per_alpha(err, n, var, a) for a in self.alphas]
        return self.outcome_per_alpha(out, np.zeros(reps))

    def _per_alpha(self, err, n, var, alpha):
        hw = self.radii(n, var, alpha)
        ratio = _ratio(err, hw).max(axis=1)
        return ratio <= 1.0, ratio, np.max(np.broadcast_to(hw, err.shape), axis=1)


# -------------------------------------------------------- Corollary 3, end to end
def _cor3_n_in_place_of_n_b(counts, variances, alpha):
    """Negative control: max_b hw_b with every N_b replaced by n = sum_b N_b."""
    n = np.broadcast_to(counts.sum(axis=-1, keepdims=True), counts.shape)
    return gpr20.cor3_eps_max_halfwidth(n, variances, alpha)


_COR3_RADII = {"max_halfwidth": gpr20.cor3_eps_max_halfwidth, "stated": gpr20.cor3_eps_stated,
               "n_in_place_of_n_b": _cor3_n_in_place_of_n_b}


@dataclass(frozen=True)
class BinningRadiusExperiment(Experiment):
    """Corollary 3 end to end: histogram binning, exact ``E[Y | h(X)]``, data-dependent eps.

    The calibrator (fixed-width or uniform-mass with a split) is fitted on n draws of a
    binary-label law; ``eps`` is the radius from the fitted counts and bin variances
    ``V^_b = pi^_b (1 - pi^_b)`` (``"max_halfwidth"``, ``"stated"`` or the negative control
    ``"n_in_place_of_n_b"``); the event is the conditional one, eq. (18):
    ``max_{r in Range(h)} |E[Y | h(X) = r] - r| <= eps``, bins with equal outputs merged.
    """

    law: Law
    calibrator: dict
    n: int
    n_bins: int
    alphas: tuple = (0.1,)
    radius: str = "max_halfwidth"

    def __post_init__(self):
        if self.law.labels != "binary":
            raise ValueError("Corollary 3's V^_b = pi^_b (1 - pi^_b) needs binary labels")
        if self.radius not in _COR3_RADII:
            raise ValueError(f"radius must be one of {sorted(_COR3_RADII)}, got {self.radius!r}")
        calibrator_from_spec(self.calibrator, self.n_bins)
        _check_alphas(self.alphas)

    def simulate(self, rng, reps):
        cal = calibrator_from_spec(self.calibrator, self.n_bins)
        scores, labels = self.law.sample((reps, self.n), rng)
        batch = cal.fit_batch(scores, labels, self.n_bins, rng)
        counts = batch.counts.astype(np.int64)
        var = np.where(counts > 0, batch.values * (1.0 - batch.values), 0.0)
        err = conditional_max_error(exact_bin_errors(batch, self.law).error)
        cols = []
        for a in self.alphas:
            eps = np.asarray(_COR3_RADII[self.radius](counts, var, a))
            cols.append((err <= eps, _ratio(err, eps), eps))
        return self.outcome_per_alpha(cols, (counts == 0).sum(axis=1))


# ---------------------------------------------------------------------- Theorem 5
@dataclass(frozen=True)
class UMSCountExperiment(Experiment):
    """Theorem 5: uniform-mass bins from n1 points, counts of n2 further points.

    Events: ``"min_count"`` -- ``min_b N_b >= |D^2|/(2B) - sqrt(|D^2| ln(2B/alpha)/2)``;
    ``"well_balanced"`` -- every true bin mass in ``[1/(2B), 2/B]`` (Lemma 13, the first
    step of the proof, claimed at level alpha/2). Bin masses are exact (law CDF).
    """

    law: Law
    n1: int
    n2: int
    n_bins: int
    alphas: tuple = (0.1,)
    event: str = "min_count"
    tie_breaking: str = "lexicographic"

    def __post_init__(self):
        if self.event not in ("min_count", "well_balanced"):
            raise ValueError(f"event must be 'min_count' or 'well_balanced', got {self.event!r}")
        if min(self.n1, self.n2) < 1 or self.n1 < self.n_bins:
            raise ValueError(f"need n1 >= n_bins and n2 >= 1, got n1={self.n1}, n2={self.n2}")
        self._calibrator()
        _check_alphas(self.alphas)

    n_total = property(lambda self: int(self.n1 + self.n2))

    def _calibrator(self):
        n = self.n1 + self.n2
        cal = UniformMassSampleSplitting(self.n_bins, split=self.n1 / n,
                                         tie_breaking=self.tie_breaking)
        if cal._n_edge(n) != self.n1:  # pragma: no cover - rounding guard
            raise ValueError("split rounding does not reproduce n1")
        return cal

    def simulate(self, rng, reps):
        scores = self.law.sample_scores((reps, self.n1 + self.n2), rng)
        batch = self._calibrator().fit_batch(scores, np.zeros_like(scores), self.n_bins, rng)
        counts = batch.counts
        b = self.n_bins
        cols = []
        if self.event == "min_count":
            n_min = counts.min(axis=1)
            for a in self.alphas:
                bound = gpr20.thm5_min_count(self.n2, b, a)
                with np.errstate(divide="ignore"):
                    ratio = np.where(n_min > 0, bound / np.maximum(n_min, 1), np.inf)
                cols.append((n_min >= bound, ratio, np.full(reps, bound)))
        else:
            mass, _ = self.law.interval_moments(batch.lower_s, batch.lower_u,
                                                batch.upper_s, batch.upper_u)
            with np.errstate(divide="ignore"):
                worst = np.maximum(mass * b / 2.0, 1.0 / (2.0 * b * mass)).max(axis=1)
            for _ in self.alphas:
                cols.append((worst <= 1.0, worst, np.full(reps, 2.0 / b)))
        return self.outcome_per_alpha(cols, (counts == 0).sum(axis=1))


# ---------------------------------------------------------------------- Theorem 6
_STREAM_RADII = ("thm6", "thm6_intermediate", "clopper_pearson_fixed_n")


@functools.lru_cache(maxsize=8)
def _clopper_pearson_table(t_max: int, level: float):
    """Two-sided Clopper-Pearson limits at ``level`` for every (t, k), t <= t_max."""
    t = np.arange(t_max + 1)[:, None].astype(float)
    k = np.arange(t_max + 1)[None, :].astype(float)
    valid = (k <= t) & (t > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        lo = np.where(valid & (k > 0), stats.beta.ppf(level / 2, k, t - k + 1), 0.0)
        hi = np.where(valid & (k < t), stats.beta.ppf(1 - level / 2, k + 1, t - k), 1.0)
    return np.nan_to_num(lo), np.nan_to_num(hi, nan=1.0)


@dataclass(frozen=True)
class StreamExperiment(Experiment):
    """Theorem 6: per-bin Bernoulli streams, the radius recomputed after every point.

    Conditional on the memberships (the proof conditions on the whole sequence of bins),
    bin b receives ``lengths[b]`` labels iid Bernoulli(``probs[b]``) in arrival order. The
    event is time-uniform: no bin violates its radius at any time ``t <= lengths[b]``.
    ``Ybar_0 = y0`` in the predictable variance (not defined by the paper; any fixed value
    in [0, 1] is valid). ``"clopper_pearson_fixed_n"`` is the negative control: an exact
    fixed-n interval at level alpha/B, valid at every fixed t, re-checked at every t.
    """

    probs: tuple
    lengths: tuple
    alphas: tuple = (0.1,)
    radius: str = "thm6"
    name: str = "streams"
    y0: float = 0.5

    def __post_init__(self):
        if len(self.probs) != len(self.lengths) or not self.probs:
            raise ValueError("probs and lengths must be non-empty and of equal length")
        if min(self.lengths) < 1:
            raise ValueError(f"lengths must be >= 1, got {self.lengths!r}")
        if self.radius not in _STREAM_RADII:
            raise ValueError(f"radius must be one of {_STREAM_RADII}, got {self.radius!r}")
        if not (0 <= self.y0 <= 1):
            raise ValueError(f"y0 must lie in [0, 1], got {self.y0!r}")
        _check_alphas(self.alphas)

    law_name = property(lambda self: self.name)
    n_total = property(lambda self: int(sum(self.lengths)))
    bins = property(lambda self: len(self.lengths))

    def simulate(self, rng, reps):
        b = len(self.probs)
        worst = np.zeros((reps, len(self.alphas)))
        final_bound = np.zeros((reps, len(self.alphas)))
        for p, length in zip(self.probs, self.lengths, strict=True):
            y = (rng.random((reps, length)) < p).astype(float)
            t = np.arange(1, length + 1, dtype=float)
            csum = np.cumsum(y, axis=1)
            ybar = csum / t
            prev = np.concatenate([np.full((reps, 1), self.y0), ybar[:, :-1]], axis=1)
            v_plus = np.cumsum((y - prev) ** 2, axis=1)
            err = np.abs(ybar - p)
            for j, a in enumerate(self.alphas):
                if self.radius == "clopper_pearson_fixed_n":
                    lo, hi = _clopper_pearson_table(int(max(self.lengths)), a / b)
                    k = csum.astype(np.int64)
                    ti = np.broadcast_to(np.arange(1, length + 1), k.shape)
                    lo_t, hi_t = lo[ti, k], hi[ti, k]
                    side = np.where(p < ybar, ybar - lo_t, hi_t - ybar)
                    ratio = _ratio(err, side).max(axis=1)
                    radius_end = (hi_t - lo_t)[:, -1] / 2
                else:
                    f = (gpr20.thm6_halfwidth if self.radius == "thm6"
                         else gpr20.thm6_halfwidth_intermediate)
                    hw = f(t, v_plus, b, a)
                    ratio = _ratio(err, hw).max(axis=1)
                    radius_end = hw[:, -1]
                worst[:, j] = np.maximum(worst[:, j], ratio)
                final_bound[:, j] = np.maximum(final_bound[:, j], radius_end)
        return self.outcome(worst <= 1.0, worst, final_bound, np.zeros(reps))


# ------------------------------------------------------------- Theorems 7 and 10
_SHIFT_ESTIMATORS = ("weighted", "oracle", "unweighted")
_SHIFT_RADII = ("thm7", "thm7_explicit", "thm10", "hoeffding_pooled")


@dataclass(frozen=True)
class ShiftExperiment(Experiment):
    """Binning under covariate shift: source data, target truth, simultaneous coverage.

    Estimators: ``"weighted"`` pi_check^(w) (eq. 22), ``"oracle"`` pi^^(w) with the exact
    m_b (eq. 40), ``"unweighted"`` plain binning (eq. 17, biased under shift). Radii:
    ``"thm7"`` (stated, constant ``c``), ``"thm7_explicit"`` (derived, with the exact m_b),
    ``"thm10"`` (empirical Bernstein with the exact m_b and the variance of
    ``m_b w Y`` -- for the unweighted control the radius of its own labels, scale 1),
    ``"hoeffding_pooled"`` (negative control: ``sqrt(ln(6B/alpha) / (2n))``, as if every bin
    had all n points and there were no shift).
    Partition: fixed-width, or uniform-mass edges from ``n_edge`` extra source points.
    Truth ``E_target[Y | X in X_b]`` is exact (quadrature).
    """

    law: LinearShiftLaw
    n: int
    n_bins: int
    alphas: tuple = (0.1,)
    estimator: str = "weighted"
    radius: str = "thm10"
    partition: str = "fixed_width"
    n_edge: int = 0
    c: float = 1.0

    def __post_init__(self):
        if self.estimator not in _SHIFT_ESTIMATORS:
            raise ValueError(f"estimator must be one of {_SHIFT_ESTIMATORS}, got "
                             f"{self.estimator!r}")
        if self.radius not in _SHIFT_RADII:
            raise ValueError(f"radius must be one of {_SHIFT_RADII}, got {self.radius!r}")
        if self.partition not in ("fixed_width", "uniform_mass"):
            raise ValueError(f"partition must be 'fixed_width' or 'uniform_mass', got "
                             f"{self.partition!r}")
        if self.partition == "uniform_mass" and self.n_edge < self.n_bins:
            raise ValueError(f"uniform_mass needs n_edge >= n_bins, got {self.n_edge}")
        _check_alphas(self.alphas)

    cost = property(lambda self: int(self.n * 2 + self.n_edge))

    def simulate(self, rng, reps):
        law, b = self.law, self.n_bins
        if self.partition == "fixed_width":
            edges = np.broadcast_to(np.linspace(0.0, 1.0, b + 1), (reps, b + 1))
        else:
            edges = _uniform_mass_edges(np.sort(law.sample_source((reps, self.n_edge), rng),
                                                axis=1), b)
        x = law.sample_source((reps, self.n), rng)
        y = law.sample_labels(x, rng)
        bins = (x[:, :, None] >= edges[:, None, 1:-1]).sum(axis=2)
        w = law.weight(x)
        lo, hi = edges[:, :-1], edges[:, 1:]
        m_b = law.source_mass(lo, hi) / law.target_mass(lo, hi)
        truth = law.target_bin_mean(lo, hi)
        if self.estimator == "unweighted":
            counts, _, ysum = weighted_bin_sums(bins, y, np.ones_like(x), b)
            est = ysum / np.maximum(counts, 1)
            var = est * (1.0 - est)
            scale = np.ones_like(m_b)
        else:
            counts, wsum, wysum = weighted_bin_sums(bins, y, w, b)
            _, _, w2sum = weighted_bin_sums(bins, y, w * w, b)  # sum of (w Y)^2 (Y in {0,1})
            safe = np.maximum(counts, 1)
            if self.estimator == "weighted":
                est = wysum / np.where(wsum > 0, wsum, 1.0)
            else:
                est = m_b * wysum / safe
            mean_z = m_b * wysum / safe
            var = np.maximum(m_b**2 * w2sum / safe - mean_z**2, 0.0)
            scale = m_b * law.upper
        err = np.where(counts > 0, np.abs(est - truth), np.inf)
        cols = []
        for a in self.alphas:
            if self.radius == "thm7":
                rad = np.full(counts.shape, gpr20.thm7_halfwidth(self.n, b, a, law.upper,
                                                                 law.lower, self.c))
            elif self.radius == "thm7_explicit":
                rad = gpr20.thm7_explicit_halfwidth(counts.astype(np.int64), b, a, law.upper,
                                                    law.lower, m_b)
            elif self.radius == "thm10":
                rad = gpr20.empirical_bernstein_halfwidth(counts.astype(np.int64), var, a / b,
                                                          scale)
            else:
                rad = np.full(counts.shape, np.sqrt(np.log(6.0 * b / a) / (2.0 * self.n)))
            ratio = _ratio(err, rad).max(axis=1)
            cols.append((ratio <= 1.0, ratio, np.median(rad, axis=1)))
        return self.outcome_per_alpha(cols, (counts == 0).sum(axis=1))


@dataclass(frozen=True)
class Prop3Experiment(Experiment):
    """Proposition 3 on random partitions: ``E~[Y | X_b] = m_b E[w Y | X_b]``, exactly.

    Each replicate draws B - 1 uniform edges; the identity (source quantities, x-space
    quadrature) is compared with the target bin mean computed in the target's quantile
    space. Success: every bin agrees within ``tol``. ``variant="without_m_b"`` drops m_b
    (negative control).
    """

    law: LinearShiftLaw
    n_bins: int = 10
    variant: str = "identity"
    tol: float = 1e-10
    alphas: tuple = (0.5,)  # placeholder: an identity has no miscoverage

    def __post_init__(self):
        if self.variant not in ("identity", "without_m_b"):
            raise ValueError(f"variant must be 'identity' or 'without_m_b', got "
                             f"{self.variant!r}")

    n_total = property(lambda self: int(self.n_bins))

    def simulate(self, rng, reps):
        inner = np.sort(rng.random((reps, self.n_bins - 1)), axis=1)
        edges = np.concatenate([np.zeros((reps, 1)), inner, np.ones((reps, 1))], axis=1)
        lo, hi = edges[:, :-1], edges[:, 1:]
        law = self.law
        p, q = law.source_mass(lo, hi), law.target_mass(lo, hi)
        cond = law.source_weighted_moment(lo, hi) / p
        if self.variant == "identity":
            via = gpr20.prop3_target_bin_mean(p, q, cond)
        else:
            via = cond
        diff = np.abs(via - law.target_bin_mean(lo, hi)).max(axis=1)
        ratio = diff / self.tol
        return self.outcome((ratio <= 1.0)[:, None], ratio[:, None],
                            np.full((reps, 1), self.tol), np.zeros(reps))


# ---------------------------------------------------- Theorem 3 / Corollary 1 (adversary)
_ADVERSARY = "adversary_q"


def _adversary_rest(rng, reps, n, n_bins, support):
    """Counts and label sums of the m - n support points of Q outside the calibration set.

    Q is uniform on m iid pairs (U[0,1] score, Bernoulli(1/2) label); the n calibration
    draws are taken as n distinct support points (probability >= 1 - n^2/(2m)), so the other
    m - n points are iid and their fixed-width bin counts and label sums can be drawn
    exactly without storing them.
    """
    rest = rng.multinomial(support - n, np.full(n_bins, 1.0 / n_bins), size=reps)
    return rest.astype(float), rng.binomial(rest, 0.5).astype(float)


@dataclass(frozen=True)
class ImpossibilityExperiment(Experiment):
    """Theorem 3 under the adversary Q of Theorem 2 (catalog §4.6).

    Q is uniform on ``support`` iid pairs with continuous scores ``U[0, 1]`` and labels
    Bernoulli(1/2); since the scores are a.s. distinct, ``E_Q[Y | f(X)] = Y``, and for an
    injective map h, ``E_Q[Y | h(X)] = Y`` too: the test error is ``|Y - h(X)|``. For a
    constant map (beta calibration with a = b = 0) the truth is the mean label of Q. For
    fixed-width histogram binning the truth of a bin is the mean label of Q's support points
    in it (drawn exactly, :func:`_adversary_rest`), bins with equal outputs merged.

    Events: ``"above_lower_bound"`` -- the test error exceeds ``0.25 - alpha/2`` (Theorem 3
    says this has probability > alpha for injective methods); ``"cor3"`` -- binning only,
    every output within ``max_b hw_b`` (Corollary 3 under Q, which is atomic).
    Sampling the calibration set without repeats changes the law by at most
    ``n^2 / (2 support)`` in total variation (5e-7 at n = 1000, support = 1e12).
    """

    method: str
    n: int
    alphas: tuple = (0.1,)
    event: str = "above_lower_bound"
    n_bins: int = 10
    support: int = 10**12

    def __post_init__(self):
        if self.method not in (*SCALERS, "fixed_width"):
            raise ValueError(f"method must be one of {[*SCALERS, 'fixed_width']}, got "
                             f"{self.method!r}")
        if self.event not in ("above_lower_bound", "cor3"):
            raise ValueError(f"event must be 'above_lower_bound' or 'cor3', got {self.event!r}")
        if self.event == "cor3" and self.method != "fixed_width":
            raise ValueError("event 'cor3' is about histogram binning (method 'fixed_width')")
        _check_alphas(self.alphas, 0.5)

    law_name = property(lambda self: _ADVERSARY)

    def simulate(self, rng, reps):
        n, b, m = self.n, self.n_bins, self.support
        s = rng.random((reps, n))
        y = (rng.random((reps, n)) < 0.5).astype(float)
        s_t = rng.random(reps)
        y_t = (rng.random(reps) < 0.5).astype(float)
        n_empty = np.zeros(reps)
        if self.method in SCALERS:
            scaler = SCALERS[self.method]
            coef = scaler.fit_batch(s, y)
            h_t = scaler.transform_batch(coef, s_t[:, None])[:, 0]
            q_mean = (y.sum(axis=1) + rng.binomial(m - n, 0.5, size=reps)) / m
            truth = np.where(scaler.injective_batch(coef), y_t, q_mean)
            err_t = np.abs(truth - h_t)
            max_err = eps = None
        else:
            bins = np.minimum((s * b).astype(np.int64), b - 1)
            counts, _, ysum = weighted_bin_sums(bins, y, np.ones_like(s), b)
            rest, rest_y = _adversary_rest(rng, reps, n, b, m)
            mid = (np.arange(b) + 0.5) / b
            values = np.where(counts > 0, ysum / np.maximum(counts, 1), mid)
            mass, moment = _merge_equal_outputs(values, (counts + rest) / m, (ysum + rest_y) / m)
            err_bins = np.abs(moment / mass - values)
            err_t = err_bins[np.arange(reps), np.minimum((s_t * b).astype(np.int64), b - 1)]
            max_err = err_bins.max(axis=1)
            var = values * (1.0 - values)
            n_empty = (counts == 0).sum(axis=1)
        cols = []
        for a in self.alphas:
            if self.event == "above_lower_bound":
                lb = gpr20.thm3_eps_lower_bound(a)
                with np.errstate(divide="ignore"):
                    ratio = np.where(err_t > 0, lb / np.maximum(err_t, 1e-300), np.inf)
                cols.append((err_t > lb, ratio, np.full(reps, lb)))
            else:
                eps = np.asarray(gpr20.cor3_eps_max_halfwidth(counts.astype(np.int64), var, a))
                cols.append((max_err <= eps, _ratio(max_err, eps), eps))
        return self.outcome_per_alpha(cols, n_empty)


@dataclass(frozen=True)
class CIWidthExperiment(Experiment):
    """Corollary 1: width and validity of confidence intervals w.r.t. f.

    Methods: ``"atomwise_eb"`` -- on a test score seen ``N_z >= 1`` times in the calibration
    set, the empirical-Bernstein interval (Audibert et al., delta = alpha) of the labels at
    that score; otherwise ``[0, 1]``. Marginally over the test point this covers
    ``E[Y | f(X)]`` with probability >= 1 - alpha for every law, so it is a
    distribution-free CI w.r.t. f. ``"bin_thm4"`` -- the Theorem 4 interval of the test
    point's fixed-width bin, a valid CI for the *bin* mean used (wrongly) as a CI w.r.t. f.
    Intervals are clipped to [0, 1].

    Laws: a :class:`Law` (truth ``eta(f(X))``) or ``"adversary_q"`` (truth ``Y``).
    Events: ``"width"`` -- ``|C| >= 1/2`` (claimed 1 - 2 alpha when E[Y|X] = 1/2 and f(X)
    is nonatomic); ``"coverage"`` -- the truth lies in C (claimed 1 - alpha).
    """

    method: str
    law: object
    n: int
    alphas: tuple = (0.1,)
    event: str = "width"
    n_bins: int = 10

    def __post_init__(self):
        if self.method not in ("atomwise_eb", "bin_thm4"):
            raise ValueError(f"method must be 'atomwise_eb' or 'bin_thm4', got {self.method!r}")
        if self.event not in ("width", "coverage"):
            raise ValueError(f"event must be 'width' or 'coverage', got {self.event!r}")
        if not (self.law == _ADVERSARY or isinstance(self.law, Law)):
            raise ValueError(f"law must be a Law or {_ADVERSARY!r}, got {self.law!r}")
        _check_alphas(self.alphas, 0.5)

    law_name = property(lambda self: self.law if self.law == _ADVERSARY else self.law.name)

    def simulate(self, rng, reps):
        n = self.n
        if self.law == _ADVERSARY:
            s = rng.random((reps, n))
            y = (rng.random((reps, n)) < 0.5).astype(float)
            s_t = rng.random(reps)
            truth = (rng.random(reps) < 0.5).astype(float)
        else:
            s, y = self.law.sample((reps, n), rng)
            s_t = self.law.sample_scores(reps, rng)
            truth = self.law.eta(s_t)
        if self.method == "atomwise_eb":
            same = s == s_t[:, None]
        else:
            b = self.n_bins
            same = np.minimum((s * b).astype(np.int64), b - 1) == np.minimum(
                (s_t * b).astype(np.int64), b - 1)[:, None]
        count = same.sum(axis=1)
        phat = np.where(count > 0, (y * same).sum(axis=1) / np.maximum(count, 1), 0.5)
        var = phat * (1.0 - phat)
        cols = []
        for a in self.alphas:
            if self.method == "atomwise_eb":
                hw = gpr20.empirical_bernstein_halfwidth(count, var, a)
            else:
                hw = gpr20.thm4_halfwidth(count, var, self.n_bins, a)
            lo, hi = np.clip(phat - hw, 0, 1), np.clip(phat + hw, 0, 1)
            width = hi - lo
            if self.event == "width":
                with np.errstate(divide="ignore"):
                    ratio = np.where(width > 0, 0.5 / np.maximum(width, 1e-300), np.inf)
                cols.append((width >= 0.5, ratio, width))
            else:
                inside = (lo <= truth) & (truth <= hi)
                half = np.maximum(width / 2, 1e-300)
                cols.append((inside, np.abs(truth - (lo + hi) / 2) / half, width))
        return self.outcome_per_alpha(cols, np.zeros(reps))
