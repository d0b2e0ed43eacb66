"""Multiclass calibrators and plug-in metrics of Gupta & Ramdas (2022) (gr22).

Calibrators follow scikit-learn conventions on an ``(n, L)`` matrix of class
probabilities (rows on the simplex) and 0-based integer labels:

* :class:`TopLabelHistogramBinning` -- TL-HB, Algorithm 8 (``floor(n_l / k)`` bins per
  predicted class) or its fixed-B variant used in the experiments (App. E.2);
* :class:`ClassWiseHistogramBinning` -- CW-HB, Algorithm 9 (never normalised);
* :class:`NormalizedHistogramBinning` -- N-HB, Algorithm 4 with binning (the classical
  one-vs-all reduction, normalised);
* :class:`MulticlassTemperatureScaling`, :class:`VectorScaling`,
  :class:`DirichletScaling` -- the scaling baselines of Tables 2-5 (Guo et al. 2017;
  Kull et al. 2019), fitted by L-BFGS (scipy.optimize) on ``log p``.

The binary histogram binning inside the HB calibrators is
:class:`calcheck.simulations.calibrators.RandomizedUniformMassBinning` with ``delta = 0`` -- gr21
Algorithm 2, which the paper's Algorithm 8 calls (boundary order statistics excluded from
the bin means, ties broken on an independent uniform, bins distinct outputs) -- the very
code the Theorem 1-2 checks run. ``variant="code"`` instead mimics the authors' public code
(``np.array_split`` edges, boundary points kept, a score equal to an edge in the lower bin;
App. E of Gupta & Ramdas 2022 describes the experiments that code ran), for comparison
with the paper's tables.

Plug-in estimators (Gupta & Ramdas 2022, Sec. 2 and App. E): equal-width bins
``[0, 1/B), ..., [1 - 1/B, 1]`` for continuous outputs, and one group per distinct output
for binning outputs (pass the ``groups`` returned by ``predict_groups``).
"""

from __future__ import annotations

import logging

import numpy as np
from scipy import special

from ..validation import as_generator, check_n_bins, check_positive_int
from .binning import RandomizedUniformMassBinning

logger = logging.getLogger(__name__)

__all__ = [
    "ClassWiseHistogramBinning",
    "NormalizedHistogramBinning",
    "TopLabelHistogramBinning",
    "check_probability_matrix",
    "softmax",
    "top_label",
]


# ------------------------------------------------------------------------ validation
def softmax(logits) -> np.ndarray:
    """Row-wise softmax in float64 (stable); logits must be finite (inf - inf is NaN)."""
    z = np.asarray(logits, dtype=np.float64)
    if z.size == 0:
        raise ValueError(f"logits must not be empty, got shape {z.shape}")
    if not np.all(np.isfinite(z)):
        raise ValueError(f"logits must be finite, got e.g. {z[~np.isfinite(z)][:3].tolist()}")
    return special.softmax(z, axis=-1)


#: Default of ``labels``: None passed explicitly is a missing label array, not "no labels".
_NO_LABELS = object()


def check_probability_matrix(scores, labels=_NO_LABELS, *, name="scores"):
    """Validate an ``(n, L)`` probability matrix (and 0-based labels); return float arrays.

    Without ``labels`` only the matrix is returned; with them, ``(matrix, labels)``.
    """
    p = np.asarray(scores, dtype=np.float64)
    if p.ndim != 2 or p.shape[1] < 2:
        raise ValueError(
            f"{name} must be a 2-d array (n, L) with L >= 2 columns, got shape {p.shape}"
        )
    if p.shape[0] == 0:
        raise ValueError(f"{name} must hold at least one row, got shape {p.shape}")
    if not np.all(np.isfinite(p)) or np.any((p < 0) | (p > 1)):
        raise ValueError(
            f"{name} must hold probabilities in [0, 1] (pass softmax(logits) for "
            f"logits), got values in [{np.nanmin(p)!r}, {np.nanmax(p)!r}]"
        )
    if labels is _NO_LABELS:
        return p
    y = np.asarray(labels)
    if y.shape != (p.shape[0],):
        raise ValueError(f"labels must have shape ({p.shape[0]},), got {y.shape}")
    if y.dtype.kind not in "biuf":  # strings, objects: not class indices
        raise ValueError(f"labels must be integers 0..L-1, got dtype {y.dtype} ({y[:3]!r})")
    if not np.issubdtype(y.dtype, np.integer):
        if not np.all(np.isfinite(y)) or np.any(y != np.round(y)):
            raise ValueError(f"labels must be integers 0..L-1, got e.g. {y[:3]!r}")
        y = y.astype(np.int64)
    if np.any((y < 0) | (y >= p.shape[1])):
        raise ValueError(
            f"labels must lie in 0..{p.shape[1] - 1} (0-based), got values in "
            f"[{y.min()}, {y.max()}]"
        )
    return p, y.astype(np.int64)


def top_label(scores):
    """``(c, h)``: argmax class (lowest index on ties, as np.argmax) and its probability.

    ``scores`` has shape ``(..., L)`` with L >= 1 and no NaN (argmax would pick the NaN).
    """
    p = np.asarray(scores, dtype=np.float64)
    if p.ndim == 0 or p.shape[-1] == 0:
        raise ValueError(f"scores must have shape (..., L) with L >= 1, got shape {p.shape}")
    if np.isnan(p).any():
        raise ValueError("scores must not contain NaN")
    c = np.argmax(p, axis=-1)
    return c, np.take_along_axis(p, c[..., None], axis=-1)[..., 0]


# ------------------------------------------------------------------- binary binning
class _CodeVariantBinning:
    """Binary histogram binning as in the authors' public code (not the analysed Algorithm 2).

    Sorted scores are split into B groups of (almost) equal size with ``np.array_split``;
    each group's largest score is its upper edge, the last edge is +inf; a score goes to bin
    ``#{edges < s}`` (a score equal to an edge goes to the lower bin) and each bin predicts
    the mean label of the calibration points it contains (boundary points included). An
    empty bin predicts 0.5. The paper's ``nudge`` jitter (delta = 1e-10) is replaced by
    keeping bins as distinct outputs.
    """

    def __init__(self, n_bins):
        self.n_bins = n_bins

    def fit(self, scores, labels):
        s = np.sort(scores)
        groups = np.array_split(s, self.n_bins)
        edges = np.array([g[-1] if g.size else np.inf for g in groups])
        edges[-1] = np.inf
        self.edges_ = np.maximum.accumulate(edges)
        bins = self._bins(scores)
        counts = np.bincount(bins, minlength=self.n_bins)
        sums = np.bincount(bins, weights=labels, minlength=self.n_bins)
        with np.errstate(invalid="ignore", divide="ignore"):
            self.bin_values_ = np.where(counts > 0, sums / np.maximum(counts, 1), 0.5)
        self.bin_counts_ = counts
        return self

    def _bins(self, scores):
        return np.searchsorted(self.edges_, scores, side="left")

    def predict_bin(self, scores, *, rng=None):
        return self._bins(np.asarray(scores, dtype=float))


def _binary_binning(variant, n_bins, rng):
    if variant == "analysed":
        return RandomizedUniformMassBinning(n_bins, delta=0.0, rng=rng)
    return _CodeVariantBinning(n_bins)


def _check_variant(variant):
    if variant not in ("analysed", "code"):
        raise ValueError(f"variant must be 'analysed' or 'code', got {variant!r}")
    return variant


class _HistogramBinningBase:
    """Plumbing shared by TL-HB and CW-HB: parameters, bins per group, fitted check."""

    def __init__(self, points_per_bin=50, *, n_bins=None, variant="analysed", rng=None):
        self.points_per_bin = points_per_bin
        self.n_bins = n_bins
        self.variant = variant
        self.rng = rng

    def get_params(self) -> dict:
        return {
            "points_per_bin": self.points_per_bin,
            "n_bins": self.n_bins,
            "variant": self.variant,
            "rng": self.rng,
        }

    def _bins_for(self, m, reduced=None):
        """Bins for a group of m points: floor(m/k), or the fixed B (at most what m allows).

        A group whose m allows fewer bins is logged, or appended to ``reduced`` as
        ``(m, bins, wanted)`` for the caller to log once (TL-HB: one line per fit, not per
        class).
        """
        if self.n_bins is None:
            b = m // check_positive_int(self.points_per_bin, "points_per_bin", 2)
        else:
            b = check_n_bins(self.n_bins)
        limit = m // 2 if self.variant == "analysed" else m  # Algorithm 2 needs m >= 2B
        if b > limit:
            if reduced is None:
                logger.warning(
                    "%s: %d points allow only %d bins, not %d", type(self).__name__, m, limit, b
                )
            elif limit >= 1:
                reduced.append((m, limit, b))
            b = limit
        return b

    def _check_fitted(self):
        if not hasattr(self, "calibrators_"):
            raise ValueError(f"this {type(self).__name__} is not fitted yet; call fit first")

    def _predict_binary(self, cal, scores, gen):
        bins = cal.predict_bin(scores, rng=gen)
        return cal.bin_values_[bins], bins


class TopLabelHistogramBinning(_HistogramBinningBase):
    """TL-HB: top-label histogram binning, gr22 Algorithm 8.

    For each class l, the calibration points predicted as l (``c = argmax g``) are binned on
    their top-label probability with binary histogram binning into ``floor(n_l / k)`` bins
    (Algorithm 8) or a fixed ``n_bins`` per class (the experiments' variant, App. E.2); the
    prediction is ``(c(x), h_{c(x)}(g_top(x)))``, so c -- and the accuracy -- never changes
    (Sec. 3.2).

    Parameters
    ----------
    points_per_bin : int, default 50
        k >= 2 (Theorem 1). Ignored when ``n_bins`` is given.
    n_bins : int or None
        Fixed bins per predicted class.
    variant : {"analysed", "code"}
        Binary binning as analysed (gr21 Algorithm 2) or as in the authors' code.
    rng : None, int, SeedSequence or Generator
        Tie-breaking randomness.

    Attributes
    ----------
    n_classes_ : int
    class_counts_ : ndarray
        n_l.
    bins_per_class_ : ndarray
        B_l (0: the class is left uncalibrated, h = g_top, as the authors' code does when
        n_l < k; logged).
    calibrators_ : list
        Binary calibrator of each class (None when uncalibrated).
    """

    def fit(self, scores, labels):
        """Fit on an (n, L) probability matrix and 0-based labels. Returns self."""
        _check_variant(self.variant)
        p, y = check_probability_matrix(scores, labels)
        self.rng_ = as_generator(self.rng)
        c, g = top_label(p)
        n_cls = p.shape[1]
        self.n_classes_ = n_cls
        self.class_counts_ = np.bincount(c, minlength=n_cls)
        self.bins_per_class_ = np.zeros(n_cls, dtype=np.int64)
        self.calibrators_ = []
        reduced: list = []
        for lab in range(n_cls):
            mask = c == lab
            b = self._bins_for(int(mask.sum()), reduced)
            if b < 1:
                if mask.any():
                    logger.warning(
                        "TL-HB: class %d predicted %d times: left uncalibrated",
                        lab,
                        int(mask.sum()),
                    )
                self.calibrators_.append(None)
                continue
            cal = _binary_binning(self.variant, b, self.rng_)
            cal.fit(g[mask], (y[mask] == lab).astype(float))
            self.bins_per_class_[lab] = b
            self.calibrators_.append(cal)
        if reduced:
            m, bins, wanted = min(reduced)
            logger.warning(
                "%s: %d of %d classes have too few points for %d bins (%s variant): they "
                "get fewer (the fewest points: %d, %d bins)",
                type(self).__name__,
                len(reduced),
                n_cls,
                wanted,
                self.variant,
                m,
                bins,
            )
        return self

    def predict_groups(self, scores, *, rng=None):
        """``(c, h, group)``: label, calibrated confidence and output id ``(c, bin)``.

        The group id of an uncalibrated class is -1 (its outputs are continuous).
        """
        self._check_fitted()
        p = check_probability_matrix(scores)
        if p.shape[1] != self.n_classes_:
            raise ValueError(f"scores must have {self.n_classes_} columns, got {p.shape[1]}")
        gen = self.rng_ if rng is None else as_generator(rng)
        c, g = top_label(p)
        h = g.copy()
        group = np.full(c.shape, -1, dtype=np.int64)
        for lab, cal in enumerate(self.calibrators_):
            mask = c == lab
            if cal is None or not mask.any():
                continue
            h[mask], bins = self._predict_binary(cal, g[mask], gen)
            group[mask] = lab * (int(self.bins_per_class_.max()) + 1) + bins
        return c, h, group

    def predict(self, scores):
        """Predicted labels: the base model's argmax (unchanged by TL-HB)."""
        self._check_fitted()
        return top_label(check_probability_matrix(scores))[0]

    def predict_confidence(self, scores, *, rng=None):
        """Calibrated top-label confidence h(x)."""
        return self.predict_groups(scores, rng=rng)[1]


class ClassWiseHistogramBinning(_HistogramBinningBase):
    """CW-HB: class-wise histogram binning, gr22 Algorithm 9 (never normalised).

    Class l's probability ``g_l`` is recalibrated by binary histogram binning on all n
    points with labels ``1{Y = l}``, with ``floor(n / k)`` bins (Algorithm 9, k_l = k) or a
    fixed ``n_bins``. ``predict_proba`` returns the unnormalised vector ``(h_1, ..., h_L)``;
    its argmax can differ from the base model's (Gupta & Ramdas 2022, Sec. 3.2).

    Parameters and attributes as :class:`TopLabelHistogramBinning` (``bins_per_class_`` is
    the B_l of each class's binning).
    """

    normalize = False

    def fit(self, scores, labels):
        """Fit on an (n, L) probability matrix and 0-based labels. Returns self."""
        _check_variant(self.variant)
        p, y = check_probability_matrix(scores, labels)
        self.rng_ = as_generator(self.rng)
        n, n_cls = p.shape
        self.n_classes_ = n_cls
        b = self._bins_for(n)
        if b < 1:
            raise ValueError(
                f"need at least 2 points per bin: n={n}, points_per_bin={self.points_per_bin!r}"
            )
        self.bins_per_class_ = np.full(n_cls, b, dtype=np.int64)
        self.calibrators_ = [
            _binary_binning(self.variant, b, self.rng_).fit(p[:, lab], (y == lab).astype(float))
            for lab in range(n_cls)
        ]
        return self

    def predict_groups(self, scores, *, rng=None):
        """``(h, groups)``: the (n, L) output and per-class bin ids of each entry."""
        self._check_fitted()
        p = check_probability_matrix(scores)
        if p.shape[1] != self.n_classes_:
            raise ValueError(f"scores must have {self.n_classes_} columns, got {p.shape[1]}")
        gen = self.rng_ if rng is None else as_generator(rng)
        h = np.empty_like(p)
        groups = np.empty(p.shape, dtype=np.int64)
        for lab, cal in enumerate(self.calibrators_):
            h[:, lab], groups[:, lab] = self._predict_binary(cal, p[:, lab], gen)
        if self.normalize:
            h = _normalize_rows(h)
        return h, groups

    def predict_proba(self, scores, *, rng=None):
        """Calibrated (n, L) probabilities (unnormalised for CW-HB)."""
        return self.predict_groups(scores, rng=rng)[0]

    def predict(self, scores, *, rng=None):
        """Argmax of the calibrated vector (may differ from the base model's)."""
        return np.argmax(self.predict_proba(scores, rng=rng), axis=1)


def _normalize_rows(h):
    """Normalise rows (Algorithm 4, line 6).

    A row of zeros (all bins without positives) becomes uniform 1/L (the paper leaves it
    undefined).
    """
    total = h.sum(axis=1, keepdims=True)
    uniform = np.full_like(h, 1.0 / h.shape[1])
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, h / np.where(total > 0, total, 1.0), uniform)


class NormalizedHistogramBinning(ClassWiseHistogramBinning):
    """N-HB: one-vs-all histogram binning followed by normalisation (Algorithm 4 with HB).

    The classical reduction of Zadrozny & Elkan (2002); no guarantee is claimed for it
    (the contrast of Gupta & Ramdas 2022, Sec. 4). A row whose class-wise outputs are all 0
    is mapped to the uniform vector (undefined in the paper).
    """

    normalize = True
