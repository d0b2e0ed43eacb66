"""Binning calibrators under test (the M of ADEMP).

Each calibrator has a vectorised core, ``fit_sorted_batch`` / ``fit_batch``, that fits R
independent calibration sets at once (arrays of shape ``(R, n)``) and returns a
:class:`BinningBatch`; the Monte Carlo engine calls it directly. The scikit-learn-style
classes (``fit`` / ``predict_proba``, fitted attributes ending in ``_``) wrap the same core
with R = 1, so the code a user runs is the code the checks verify.

Bins are lexicographic intervals on ``(score, U)`` (Gupta & Ramdas 2021, Algorithms 1-2):
``[(lower_s, lower_u), (upper_s, upper_u))``, the outer edges being ``(0, 0)`` and
``(1, 1)`` so that the last bin is closed at 1.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..validation import as_generator, check_n_bins, check_scores_labels
from .edges import (
    _as_binary_labels,
    _edges_below,
    _sort_binary_labels,
    assign_lexicographic_bins,
    fixed_width_bin_index,
    outer_edges,
    sort_lexicographic,
    uniform_mass_edge_ranks,
)

__all__ = [
    "CALIBRATORS",
    "BinningBatch",
    "DoubleDippedScalingBinning",
    "FixedWidthBinning",
    "RandomizedUniformMassBinning",
    "UniformMassBinning",
    "UniformMassSampleSplitting",
    "ZadroznyElkanBinning",
    "calibrator_from_spec",
    "uniform_mass_fit_sorted",
]


@dataclass(frozen=True)
class BinningBatch:
    """R fitted binning maps with B bins each (arrays of shape ``(R, B)``).

    Attributes
    ----------
    lower_s, lower_u, upper_s, upper_u : ndarray
        Lexicographic bin edges.
    values : ndarray
        Output of each bin (its prediction).
    output_keys : ndarray
        Bins with equal keys are one output of h, merged in ``E[Y | h(X) = r]``. Equal to
        ``values`` except for randomized UMD, whose bin values are a.s. distinct (Algorithm 2
        lines 14-15): there the key is the bin index.
    counts : ndarray
        Calibration points averaged into each bin (0: empty bin, predicts its midpoint).
    """

    lower_s: np.ndarray
    lower_u: np.ndarray
    upper_s: np.ndarray
    upper_u: np.ndarray
    values: np.ndarray
    output_keys: np.ndarray
    counts: np.ndarray

    @property
    def n_bins(self) -> int:
        """Number of bins B."""
        return self.values.shape[1]


def uniform_mass_fit_sorted(s_sorted, u_sorted, y_sorted, n_bins, *, include_upper: bool):
    """Algorithm 1 (``include_upper=False``) or Zadrozny-Elkan on sorted rows."""
    r, n = s_sorted.shape
    if n < 2 * n_bins:
        raise ValueError(f"n must be >= 2 * n_bins, got n={n}, n_bins={n_bins}")
    ranks = uniform_mass_edge_ranks(n, n_bins)
    lo = ranks[:-1]
    hi = ranks[1:] - 1  # last rank averaged: u - 1 (Algorithm 1 line 12)
    if include_upper:
        hi = np.minimum(ranks[1:], n)  # ZE: the upper boundary point too (b < B)
    counts = np.broadcast_to((hi - lo).astype(float), (r, n_bins))
    if y_sorted.dtype.kind in "bi" and np.all(hi > lo):
        # Integer labels: any summation order is exact, so segment sums equal the cumsum
        # differences bit for bit, in one pass and without an (R, n + 1) array.
        idx = np.column_stack([lo, hi]).ravel()[:-1]  # the last bin runs to the end (n)
        sums = np.add.reduceat(y_sorted, idx, axis=1, dtype=np.int64)[:, ::2]
        values = sums / counts
    else:
        csum = np.zeros((r, n + 1))
        np.cumsum(y_sorted, axis=1, out=csum[:, 1:])
        values = (csum[:, hi] - csum[:, lo]) / counts
    edges = outer_edges(s_sorted, u_sorted, ranks)
    return BinningBatch(*edges, values, values, counts.copy())


def _bin_means(bins, labels, n_bins, lower_s, upper_s):
    """Per-row bin means; an empty bin predicts its midpoint."""
    r = bins.shape[0]
    flat = (bins + n_bins * np.arange(r)[:, None]).ravel()
    counts = np.bincount(flat, minlength=r * n_bins).reshape(r, n_bins).astype(float)
    sums = np.bincount(flat, weights=labels.ravel(), minlength=r * n_bins).reshape(r, n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        values = np.where(counts > 0, sums / counts, (lower_s + upper_s) / 2)
    return values, counts


# --------------------------------------------------------------------------- classes
class _BinningCalibrator:
    """Common scikit-learn-style plumbing: validation, fit, predict_proba."""

    name = "binning"
    allow_fractional_labels = True

    def __init__(self, n_bins=10, *, rng=None):
        self.n_bins = n_bins
        self.rng = rng

    def _params(self) -> dict:
        return {"n_bins": self.n_bins}

    def get_params(self) -> dict:
        """Tuning parameters (scikit-learn convention)."""
        return {**self._params(), "rng": self.rng}

    def spec(self) -> dict:
        """JSON-able description used in cache keys and reports."""
        return {"name": self.name, **{k: v for k, v in self._params().items() if k != "n_bins"}}

    def fit(self, scores, labels):
        """Fit on calibration scores in [0, 1] and labels in {0, 1} (or [0, 1]).

        Returns
        -------
        self
        """
        n_bins = self._validated_n_bins()
        s, y = check_scores_labels(scores, labels, allow_fractional=self.allow_fractional_labels)
        self._check_size(s.size, n_bins)
        self.rng_ = as_generator(self.rng)
        batch = self.fit_batch(s[None, :], y[None, :], n_bins, self.rng_)
        self.batch_ = batch
        self.bin_lower_ = np.column_stack([batch.lower_s[0], batch.lower_u[0]])
        self.bin_upper_ = np.column_stack([batch.upper_s[0], batch.upper_u[0]])
        self.bin_values_ = batch.values[0].copy()
        self.bin_counts_ = batch.counts[0].astype(int)
        self.n_empty_bins_ = int((self.bin_counts_ == 0).sum())
        return self

    def _validated_n_bins(self):
        return check_n_bins(self.n_bins)

    def _check_size(self, n, n_bins):
        if n < 2 * n_bins:
            raise ValueError(f"need at least 2 * n_bins = {2 * n_bins} calibration points, got {n}")

    def _check_fitted(self):
        if not hasattr(self, "bin_values_"):
            raise ValueError(f"this {type(self).__name__} is not fitted yet; call fit first")

    def predict_bin(self, scores, *, rng=None):
        """Bin index of each test score; ties with an edge are broken with a fresh U."""
        self._check_fitted()
        s = np.asarray(scores, dtype=float)
        if s.ndim != 1 or np.isnan(s).any() or np.any((s < 0) | (s > 1)):
            raise ValueError("scores must be a one-dimensional array of values in [0, 1]")
        gen = self.rng_ if rng is None else as_generator(rng)
        lower = self.batch_.lower_s
        inner = lower[0, 1:]
        if np.any(np.diff(inner) < 0):  # not reached by the shipped calibrators: edges ascend
            needs_u = np.isin(s, inner)
            u = np.zeros_like(s)
            u[needs_u] = gen.random(int(needs_u.sum()))
            return assign_lexicographic_bins(lower, self.batch_.lower_u, s[None, :], u[None, :])[0]
        # A score equal to no edge is in the bin of the number of lower edges below it; only
        # scores tied with an edge need the (score, U) order.
        bins, needs_u = _edges_below(s, inner)
        if needs_u.any():
            u = np.zeros_like(s)
            u[needs_u] = gen.random(int(needs_u.sum()))
            tied = assign_lexicographic_bins(
                lower, self.batch_.lower_u, s[needs_u][None, :], u[needs_u][None, :]
            )
            bins[needs_u] = tied[0]
        return bins

    def predict(self, scores, *, rng=None):
        """Calibrated probability ``h(s)`` of each score."""
        bins = self.predict_bin(scores, rng=rng)
        return self.bin_values_[bins]

    def predict_proba(self, scores, *, rng=None):
        """Calibrated class probabilities, shape ``(n, 2)``: columns ``1 - h(s)`` and ``h(s)``."""
        p = self.predict(scores, rng=rng)
        return np.column_stack([1.0 - p, p])


class UniformMassBinning(_BinningCalibrator):
    """UMD: uniform-mass binning with double dipping, gr21 Algorithm 1.

    Bin edges are the order statistics of ranks ``A_b = ceil(b (n + 1) / B)``; bin b averages
    the labels of ranks ``A_{b-1} + 1 .. A_b - 1`` (the B - 1 boundary points are used only to
    form bins). Test bins are half-open ``[lower, upper)``, the last closed at 1.

    Parameters
    ----------
    n_bins : int, default 10
        Number of bins B.
    tie_breaking : {"lexicographic", "none"}, default "lexicographic"
        "lexicographic" sorts on ``(score, U)`` with an independent uniform U per point,
        the delta -> 0 limit of Algorithm 2 line 4 and the App. C.1 trick that makes
        Theorem 3 hold without continuity. "none" is Algorithm 1 verbatim: on atomic
        scores a learned bin may split an atom by rank while the test rule sends the whole
        atom to one bin, which breaks Theorem 3.
    rng : None, int, SeedSequence or Generator
        Source of the tie-breaking uniforms.
    """

    name = "umd"
    include_upper = False

    def __init__(self, n_bins=10, *, tie_breaking="lexicographic", rng=None):
        super().__init__(n_bins, rng=rng)
        self.tie_breaking = tie_breaking

    def _params(self):
        return {"n_bins": self.n_bins, "tie_breaking": self.tie_breaking}

    def _tie_breaking(self):
        if self.tie_breaking not in ("lexicographic", "none"):
            raise ValueError(
                f"tie_breaking must be 'lexicographic' or 'none', got {self.tie_breaking!r}"
            )
        return self.tie_breaking

    def fit_sorted_batch(self, s_sorted, u_sorted, y_sorted, n_bins, rng):
        """Fit R rows already sorted on (score, U)."""
        return uniform_mass_fit_sorted(
            s_sorted, u_sorted, y_sorted, n_bins, include_upper=self.include_upper
        )

    def fit_batch(self, scores, labels, n_bins, rng):
        """Fit R calibration sets, arrays of shape (R, n)."""
        tie_breaking = self._tie_breaking()
        if tie_breaking == "lexicographic":
            # 0/1 labels: one integer sort of (score bits, label) in place of an argsort
            # and two gathers, the same sorted rows and U draws (``_sort_binary_labels``)
            binary = _as_binary_labels(labels)
            rows = None if binary is None else _sort_binary_labels(scores, binary, rng)
            if rows is not None:
                return self.fit_sorted_batch(*rows, n_bins, rng)
        order, s_sorted, u_sorted = sort_lexicographic(scores, rng, tie_breaking=tie_breaking)
        y_sorted = np.take_along_axis(labels, order, axis=1)
        return self.fit_sorted_batch(s_sorted, u_sorted, y_sorted, n_bins, rng)


class ZadroznyElkanBinning(UniformMassBinning):
    """Original Zadrozny-Elkan histogram binning (gr21 Corollary 1).

    As :class:`UniformMassBinning`, but each of the first B - 1 bins also averages its upper
    boundary point (ranks ``A_{b-1} + 1 .. A_b``); all n points are used. At test time a
    score equal to the boundary still maps to the upper bin (measure zero when continuous).
    """

    name = "zadrozny_elkan"
    include_upper = True


class RandomizedUniformMassBinning(UniformMassBinning):
    """Randomized UMD, gr21 Algorithm 2.

    Scores are always tie-broken lexicographically on ``(score, U)`` (the delta -> 0 limit
    of line 4), test points with a fresh U. Bin values follow lines
    14-15: with ``delta > 0`` they are ``(hatPi_b + delta V_b) / (1 + delta)``; with
    ``delta = 0`` (the limit) the values are left as they are but the bins count as
    distinct outputs of h, which is what the a.s. distinct jittered values give as
    delta -> 0 (Theorem 4's marginal bound needs it).

    Parameters
    ----------
    n_bins : int, default 10
    delta : float, default 0
        Value randomisation. A positive delta must change float64 values to matter:
        below about 1e-16 times the values it does nothing (the paper's 1e-20 example).
    outputs : {"distinct", "as_returned"}, default "distinct"
        With ``delta = 0``: ``"distinct"`` counts every bin as its own output (the delta
        -> 0 limit the theorem is about); ``"as_returned"`` is the map a user receives,
        whose equal float64 values (bins with the same label mean, e.g. 7/50 twice) are
        one output of h, merged (conventions: ``E[Y | h(X) = r]`` conditions on the value).
        With ``delta > 0`` the jittered values are distinct and both agree.
    rng : None, int, SeedSequence or Generator
    """

    name = "randomized_umd"

    def __init__(self, n_bins=10, *, delta=0.0, outputs="distinct", rng=None):
        super().__init__(n_bins, tie_breaking="lexicographic", rng=rng)
        self.delta = delta
        self.outputs = outputs

    def _params(self):
        return {"n_bins": self.n_bins, "delta": self.delta, "outputs": self.outputs}

    def fit_sorted_batch(self, s_sorted, u_sorted, y_sorted, n_bins, rng):
        """Fit R calibration sets given sorted scores, tie-breaking uniforms and labels."""
        if not (np.isfinite(self.delta) and self.delta >= 0):
            raise ValueError(f"delta must be finite and >= 0, got {self.delta!r}")
        if self.outputs not in ("distinct", "as_returned"):
            raise ValueError(f"outputs must be 'distinct' or 'as_returned', got {self.outputs!r}")
        batch = super().fit_sorted_batch(s_sorted, u_sorted, y_sorted, n_bins, rng)
        if self.delta > 0:
            v = rng.random(batch.values.shape)
            values = (batch.values + self.delta * v) / (1.0 + self.delta)
            keys = values
        elif self.outputs == "as_returned":
            values = keys = batch.values
        else:
            values = batch.values
            keys = np.broadcast_to(np.arange(n_bins, dtype=float), values.shape)
        return BinningBatch(
            batch.lower_s, batch.lower_u, batch.upper_s, batch.upper_u, values, keys, batch.counts
        )


class UniformMassSampleSplitting(_BinningCalibrator):
    """UMS: uniform-mass binning with sample splitting (Gupta et al. 2020; gr21 §3.6).

    The first ``round(split * n)`` points (the data are iid, so any fixed subset is a random
    split) give the edges, with Algorithm 1's ranks on that split; the remaining points
    give the bin means. A bin with no second-split point predicts its midpoint and is
    reported in ``n_empty_bins_``.

    Parameters
    ----------
    n_bins : int, default 10
    split : float, default 0.5
        Fraction of points used for the edges, in (0, 1).
    tie_breaking : {"lexicographic", "none"}, default "lexicographic"
    rng : None, int, SeedSequence or Generator
    """

    name = "ums"

    def __init__(self, n_bins=10, *, split=0.5, tie_breaking="lexicographic", rng=None):
        super().__init__(n_bins, rng=rng)
        self.split = split
        self.tie_breaking = tie_breaking

    def _params(self):
        return {"n_bins": self.n_bins, "split": self.split, "tie_breaking": self.tie_breaking}

    def _n_edge(self, n):
        if not (0 < self.split < 1):
            raise ValueError(f"split must lie in (0, 1), got {self.split!r}")
        return round(self.split * n)

    def _check_size(self, n, n_bins):
        n1 = self._n_edge(n)
        if n1 < n_bins or n - n1 < 1:
            raise ValueError(
                f"UMS needs at least n_bins = {n_bins} edge points and one mean point; got "
                f"n={n}, split={self.split!r}"
            )

    def fit_batch(self, scores, labels, n_bins, rng):
        """Fit R calibration sets at once (rows of ``scores`` and ``labels``)."""
        _r, n = scores.shape
        self._check_size(n, n_bins)
        n1 = self._n_edge(n)
        _, s1, u1 = sort_lexicographic(
            scores[:, :n1], rng, tie_breaking=UniformMassBinning._tie_breaking(self)
        )
        ranks = uniform_mass_edge_ranks(n1, n_bins)
        edges = outer_edges(s1, u1, ranks)
        s2 = scores[:, n1:]
        u2 = rng.random(s2.shape) if self.tie_breaking == "lexicographic" else np.zeros_like(s2)
        bins = assign_lexicographic_bins(edges[0], edges[1], s2, u2)
        values, counts = _bin_means(bins, labels[:, n1:], n_bins, edges[0], edges[2])
        return BinningBatch(*edges, values, values, counts)


class FixedWidthBinning(_BinningCalibrator):
    """Fixed-width binning: bins ``[0, 1/B), ..., [1 - 1/B, 1]``, value = mean label in bin.

    An empty bin predicts its midpoint and is counted in
    ``n_empty_bins_``.
    """

    name = "fixed_width"

    def _check_size(self, n, n_bins):
        if n < 1:
            raise ValueError(f"need at least one calibration point, got {n}")

    def fit_batch(self, scores, labels, n_bins, rng):
        """Fit R calibration sets at once (rows of ``scores`` and ``labels``)."""
        r = scores.shape[0]
        inner = np.arange(1, n_bins) / n_bins
        lower_s = np.broadcast_to(np.concatenate([[0.0], inner]), (r, n_bins)).copy()
        upper_s = np.broadcast_to(np.concatenate([inner, [1.0]]), (r, n_bins)).copy()
        lower_u = np.zeros((r, n_bins))
        upper_u = np.zeros((r, n_bins))
        upper_u[:, -1] = 1.0
        bins = fixed_width_bin_index(scores, n_bins)
        values, counts = _bin_means(bins, labels, n_bins, lower_s, upper_s)
        return BinningBatch(lower_s, lower_u, upper_s, upper_u, values, values, counts)


class DoubleDippedScalingBinning(UniformMassBinning):
    """Double-dipped scaling-binning, the variant Gupta & Ramdas (2021, Sec. 4) compare with.

    Not the scaling-binning of Kumar, Liang & Ma (2019), which splits the calibration data
    three ways (fit the scaling function, form the bins, average within bins); here bins and
    values come from the same data.

    The bins are those of :class:`UniformMassBinning` fitted on the same data; the value of
    a bin is the mean of the *scores* (the scaling method's outputs, e.g. Platt-scaled
    probabilities) of its interior points instead of the mean of their labels.
    """

    name = "scaling_binning_double_dipped"

    def fit_batch(self, scores, labels, n_bins, rng):
        """Fit R calibration sets at once (rows of ``scores`` and ``labels``)."""
        return super().fit_batch(scores, scores, n_bins, rng)


CALIBRATORS = {
    cls.name: cls
    for cls in (
        UniformMassBinning,
        ZadroznyElkanBinning,
        RandomizedUniformMassBinning,
        UniformMassSampleSplitting,
        FixedWidthBinning,
    )
}


def calibrator_from_spec(spec: dict, n_bins: int = 10, rng=None):
    """Instantiate a calibrator from ``{"name": ..., <keyword parameters>}``."""
    spec = dict(spec)
    name = spec.pop("name", None)
    if name not in CALIBRATORS:
        raise ValueError(f"calibrator name must be one of {sorted(CALIBRATORS)}, got {name!r}")
    try:
        return CALIBRATORS[name](n_bins, rng=rng, **spec)
    except TypeError as exc:
        raise ValueError(f"bad parameters for calibrator {name!r}: {spec!r} ({exc})") from None
