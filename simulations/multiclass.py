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
:class:`simulations.calibrators.RandomizedUniformMassBinning` with ``delta = 0`` -- gr21
Algorithm 2, which the paper's Algorithm 8 calls (boundary order statistics excluded from
the bin means, ties broken on an independent uniform, bins distinct outputs) -- the very
code the Theorem 1-2 checks run. ``variant="code"`` instead mimics the authors' public code
(``np.array_split`` edges, boundary points kept, a score equal to an edge in the lower bin;
catalog §3, "External note"), for comparison with the paper's tables.

Plug-in estimators (catalog §2.5): equal-width bins ``[0, 1/B), ..., [1 - 1/B, 1]`` for
continuous outputs, and one group per distinct output for binning outputs (pass the
``groups`` returned by ``predict_groups``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special

from .calibrators import RandomizedUniformMassBinning, _rng

__all__ = [
    "ClassWiseHistogramBinning",
    "DirichletScaling",
    "MulticlassTemperatureScaling",
    "NormalizedHistogramBinning",
    "PluginErrors",
    "TopLabelHistogramBinning",
    "VectorScaling",
    "check_probability_matrix",
    "equal_width_bin",
    "plugin_classwise_ece",
    "plugin_reliability_mce",
    "plugin_top_label_errors",
    "softmax",
    "top_label",
    "top_label_reliability",
]

logger = logging.getLogger(__name__)


# ------------------------------------------------------------------------ validation
def softmax(logits) -> np.ndarray:
    """Row-wise softmax in float64 (stable)."""
    z = np.asarray(logits, dtype=np.float64)
    return special.softmax(z, axis=-1)


def check_probability_matrix(scores, labels=None, *, name="scores"):
    """Validate an ``(n, L)`` probability matrix (and 0-based labels); return float arrays."""
    p = np.asarray(scores, dtype=np.float64)
    if p.ndim != 2 or p.shape[1] < 2:
        raise ValueError(f"{name} must be a 2-d array (n, L) with L >= 2 columns, got shape "
                         f"{p.shape}")
    if not np.all(np.isfinite(p)) or np.any((p < 0) | (p > 1)):
        raise ValueError(f"{name} must hold probabilities in [0, 1] (pass softmax(logits) for "
                         f"logits), got values in [{np.nanmin(p)!r}, {np.nanmax(p)!r}]")
    if labels is None:
        return p
    y = np.asarray(labels)
    if y.shape != (p.shape[0],):
        raise ValueError(f"labels must have shape ({p.shape[0]},), got {y.shape}")
    if not np.issubdtype(y.dtype, np.integer):
        if not np.all(np.isfinite(y)) or np.any(y != np.round(y)):
            raise ValueError(f"labels must be integers 0..L-1, got e.g. {y[:3]!r}")
        y = y.astype(np.int64)
    if np.any((y < 0) | (y >= p.shape[1])):
        raise ValueError(f"labels must lie in 0..{p.shape[1] - 1} (0-based), got values in "
                         f"[{y.min()}, {y.max()}]")
    return p, y.astype(np.int64)


def top_label(scores):
    """``(c, h)``: argmax class (lowest index on ties, as np.argmax) and its probability."""
    p = np.asarray(scores, dtype=np.float64)
    c = np.argmax(p, axis=-1)
    return c, np.take_along_axis(p, c[..., None], axis=-1)[..., 0]


def _check_positive_int(value, name, minimum=1):
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


# ------------------------------------------------------------------- binary binning
class _CodeVariantBinning:
    """Binary histogram binning as in the authors' public code (catalog §3 external note).

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
        return {"points_per_bin": self.points_per_bin, "n_bins": self.n_bins,
                "variant": self.variant, "rng": self.rng}

    def _bins_for(self, m):
        """Bins for a group of m points: floor(m/k), or the fixed B (at most what m allows)."""
        if self.n_bins is None:
            b = m // _check_positive_int(self.points_per_bin, "points_per_bin", 2)
        else:
            b = _check_positive_int(self.n_bins, "n_bins")
        limit = m // 2 if self.variant == "analysed" else m  # Algorithm 2 needs m >= 2B
        if b > limit:
            logger.warning("%s: %d points allow only %d bins, not %d", type(self).__name__,
                           m, limit, b)
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
        self.rng_ = _rng(self.rng)
        c, g = top_label(p)
        n_cls = p.shape[1]
        self.n_classes_ = n_cls
        self.class_counts_ = np.bincount(c, minlength=n_cls)
        self.bins_per_class_ = np.zeros(n_cls, dtype=np.int64)
        self.calibrators_ = []
        for lab in range(n_cls):
            mask = c == lab
            b = self._bins_for(int(mask.sum()))
            if b < 1:
                if mask.any():
                    logger.warning("TL-HB: class %d predicted %d times: left uncalibrated",
                                   lab, int(mask.sum()))
                self.calibrators_.append(None)
                continue
            cal = _binary_binning(self.variant, b, self.rng_)
            cal.fit(g[mask], (y[mask] == lab).astype(float))
            self.bins_per_class_[lab] = b
            self.calibrators_.append(cal)
        return self

    def predict_groups(self, scores, *, rng=None):
        """``(c, h, group)``: label, calibrated confidence and output id ``(c, bin)``.

        The group id of an uncalibrated class is -1 (its outputs are continuous).
        """
        self._check_fitted()
        p = check_probability_matrix(scores)
        if p.shape[1] != self.n_classes_:
            raise ValueError(f"scores must have {self.n_classes_} columns, got {p.shape[1]}")
        gen = self.rng_ if rng is None else _rng(rng)
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
    its argmax can differ from the base model's (catalog G4).

    Parameters and attributes as :class:`TopLabelHistogramBinning` (``bins_per_class_`` is
    the B_l of each class's binning).
    """

    normalize = False

    def fit(self, scores, labels):
        """Fit on an (n, L) probability matrix and 0-based labels. Returns self."""
        _check_variant(self.variant)
        p, y = check_probability_matrix(scores, labels)
        self.rng_ = _rng(self.rng)
        n, n_cls = p.shape
        self.n_classes_ = n_cls
        b = self._bins_for(n)
        if b < 1:
            raise ValueError(f"need at least 2 points per bin: n={n}, points_per_bin="
                             f"{self.points_per_bin!r}")
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
        gen = self.rng_ if rng is None else _rng(rng)
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
        """argmax of the calibrated vector (may differ from the base model's)."""
        return np.argmax(self.predict_proba(scores, rng=rng), axis=1)


def _normalize_rows(h):
    """Algorithm 4 line 6; a row of zeros (all bins without positives) becomes uniform 1/L
    (the paper leaves it undefined, catalog §9.5)."""
    total = h.sum(axis=1, keepdims=True)
    uniform = np.full_like(h, 1.0 / h.shape[1])
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, h / np.where(total > 0, total, 1.0), uniform)


class NormalizedHistogramBinning(ClassWiseHistogramBinning):
    """N-HB: one-vs-all histogram binning followed by normalisation (Algorithm 4 with HB).

    The classical reduction of Zadrozny & Elkan (2002); no guarantee is claimed for it
    (catalog G14, "contrast experiment"). A row whose class-wise outputs are all 0 is mapped
    to the uniform vector (undefined in the paper, catalog §9.5).
    """

    normalize = True


# ------------------------------------------------------------------------- scaling
class _LogProbabilityScaling:
    """``softmax(W log p + b)`` fitted by minimising the mean negative log-likelihood."""

    def __init__(self, *, clip=1e-12, max_iter=2000):
        self.clip = clip
        self.max_iter = max_iter

    def get_params(self) -> dict:
        return {"clip": self.clip, "max_iter": self.max_iter}

    def _log_p(self, scores):
        if not (0 < self.clip < 1):
            raise ValueError(f"clip must lie in (0, 1), got {self.clip!r}")
        return np.log(np.clip(scores, self.clip, 1.0))

    # subclasses: _unpack(theta, L) -> (W or w, b), _init(L), _logits(x, theta), _grad
    def fit(self, scores, labels):
        """Fit on an (n, L) probability matrix and 0-based labels. Returns self."""
        p, y = check_probability_matrix(scores, labels)
        _check_positive_int(self.max_iter, "max_iter")
        x = self._log_p(p)
        n, n_cls = x.shape
        onehot = np.zeros((n, n_cls))
        onehot[np.arange(n), y] = 1.0

        def objective(theta):
            z = self._logits(x, theta)
            logq = z - special.logsumexp(z, axis=1, keepdims=True)
            loss = -(onehot * logq).sum() / n
            dz = (np.exp(logq) - onehot) / n
            reg, reg_grad = self._penalty(theta, n_cls)
            return loss + reg, self._backprop(x, dz, theta) + reg_grad

        res = optimize.minimize(objective, self._init(n_cls), jac=True, method="L-BFGS-B",
                                options={"maxiter": self.max_iter})
        if not res.success:
            logger.warning("%s: L-BFGS-B stopped: %s", type(self).__name__, res.message)
        self.n_classes_ = n_cls
        self.coef_ = res.x
        self.n_iter_ = int(res.nit)
        self.loss_ = float(res.fun)
        return self

    def _penalty(self, theta, n_cls):
        return 0.0, np.zeros_like(theta)

    def predict_proba(self, scores):
        """Calibrated (n, L) probabilities."""
        if not hasattr(self, "coef_"):
            raise ValueError(f"this {type(self).__name__} is not fitted yet; call fit first")
        p = check_probability_matrix(scores)
        return special.softmax(self._logits(self._log_p(p), self.coef_), axis=1)

    def predict(self, scores):
        return np.argmax(self.predict_proba(scores), axis=1)


class MulticlassTemperatureScaling(_LogProbabilityScaling):
    """Temperature scaling (Guo et al. 2017): ``softmax(log p / T)``, one parameter.

    Equals scaling the logits, since log p differs from them by a per-row constant.

    Parameters
    ----------
    objective : {"nll", "ece_grid"}, default "nll"
        ``"nll"``: minimise the negative log-likelihood (L-BFGS). ``"ece_grid"``: the rule of
        the focal_calibration code that gr22 used for its TS column -- T on the grid
        0.1, 0.2, ..., 10.0, keeping the first T with the smallest plug-in confidence ECE
        (15 equal-width bins) on the calibration data.
    clip, max_iter : as the other scalers.

    Attributes
    ----------
    temperature_ : float
    """

    def __init__(self, *, objective="nll", clip=1e-12, max_iter=2000):
        super().__init__(clip=clip, max_iter=max_iter)
        self.objective = objective

    def get_params(self) -> dict:
        return {**super().get_params(), "objective": self.objective}

    def fit(self, scores, labels):
        """Fit on an (n, L) probability matrix and 0-based labels. Returns self."""
        if self.objective == "nll":
            return super().fit(scores, labels)
        if self.objective != "ece_grid":
            raise ValueError(f"objective must be 'nll' or 'ece_grid', got {self.objective!r}")
        p, y = check_probability_matrix(scores, labels)
        x = self._log_p(p)
        best_t, best = 1.0, np.inf
        for t in np.round(np.arange(1, 101) * 0.1, 10):
            c, h = top_label(special.softmax(x / t, axis=1))
            w, gap = _group_errors(equal_width_bin(h, 15), h, (c == y).astype(float))
            ece = float(w @ gap)  # the confidence ECE, 15 equal-width bins
            if ece < best:
                best_t, best = float(t), ece
        self.n_classes_ = p.shape[1]
        self.coef_ = np.array([-np.log(best_t)])
        self.n_iter_ = 100
        self.loss_ = float(best)
        return self

    def _init(self, n_cls):
        return np.zeros(1)  # log(1 / T)

    def _logits(self, x, theta):
        return x * np.exp(theta[0])

    def _backprop(self, x, dz, theta):
        return np.array([(dz * x).sum() * np.exp(theta[0])])

    @property
    def temperature_(self):
        return float(np.exp(-self.coef_[0]))


class VectorScaling(_LogProbabilityScaling):
    """Vector scaling (Guo et al. 2017; dirichletcal's ``vectorscaling``): ``w * log p + b``."""

    def _init(self, n_cls):
        return np.concatenate([np.ones(n_cls), np.zeros(n_cls)])

    def _logits(self, x, theta):
        n_cls = x.shape[1]
        return x * theta[:n_cls] + theta[n_cls:]

    def _backprop(self, x, dz, theta):
        return np.concatenate([(dz * x).sum(axis=0), dz.sum(axis=0)])


class DirichletScaling(_LogProbabilityScaling):
    """Dirichlet calibration (Kull et al. 2019, full matrix): ``softmax(W log p + b)``.

    Parameters
    ----------
    reg_lambda : float, default 0
        ODIR penalty ``reg_lambda / (L (L - 1)) * sum_{i != j} W_ij^2`` on the off-diagonal.
    reg_mu : float, default 0
        Penalty ``reg_mu / L * sum_j b_j^2`` on the intercept.
    clip, max_iter : as the other scalers.

    Notes
    -----
    The defaults (no regularisation, identity initialisation) are those of dirichletcal's
    ``FullDirichletCalibrator``, which gr22 ran "with default settings"; with L = 100 and
    n = 5000 this has 10,100 free parameters and overfits, as Table 2's DS column shows.
    """

    def __init__(self, *, reg_lambda=0.0, reg_mu=0.0, clip=1e-12, max_iter=2000):
        super().__init__(clip=clip, max_iter=max_iter)
        self.reg_lambda = reg_lambda
        self.reg_mu = reg_mu

    def get_params(self) -> dict:
        return {**super().get_params(), "reg_lambda": self.reg_lambda, "reg_mu": self.reg_mu}

    def _init(self, n_cls):
        return np.concatenate([np.eye(n_cls).ravel(), np.zeros(n_cls)])

    def _split(self, theta, n_cls):
        return theta[: n_cls * n_cls].reshape(n_cls, n_cls), theta[n_cls * n_cls:]

    def _logits(self, x, theta):
        w, b = self._split(theta, x.shape[1])
        return x @ w.T + b

    def _backprop(self, x, dz, theta):
        return np.concatenate([(dz.T @ x).ravel(), dz.sum(axis=0)])

    def _penalty(self, theta, n_cls):
        for name in ("reg_lambda", "reg_mu"):
            v = getattr(self, name)
            if not (np.isfinite(v) and v >= 0):
                raise ValueError(f"{name} must be finite and >= 0, got {v!r}")
        w, b = self._split(theta, n_cls)
        off = w * (1.0 - np.eye(n_cls))
        lam = self.reg_lambda / (n_cls * (n_cls - 1))
        mu = self.reg_mu / n_cls
        value = lam * (off**2).sum() + mu * (b**2).sum()
        grad = np.concatenate([(2 * lam * off).ravel(), 2 * mu * b])
        return value, grad


# ------------------------------------------------------------------------- metrics
def equal_width_bin(values, n_bins: int) -> np.ndarray:
    """Bin of each value in ``[0, 1/B), ..., [1 - 1/B, 1]`` (the last bin closed)."""
    v = np.asarray(values, dtype=float)
    return np.minimum((v * n_bins).astype(np.int64), n_bins - 1)


def _group_errors(keys, conf, hit):
    """Per group of equal keys: weight N_g / N and |mean(hit) - mean(conf)|."""
    _, inv = np.unique(keys, axis=0, return_inverse=True)
    inv = inv.ravel()
    count = np.bincount(inv).astype(float)
    gap = np.abs(np.bincount(inv, weights=hit) - np.bincount(inv, weights=conf)) / count
    return count / conf.size, gap


@dataclass(frozen=True)
class PluginErrors:
    """Plug-in top-label and confidence errors of one predictor on one test set.

    Attributes
    ----------
    tl_ece, tl_mce : float
        Groups (predicted class, bin).
    conf_ece, conf_mce : float
        Groups (bin) pooled over classes (Guo et al. 2017).
    """

    tl_ece: float
    tl_mce: float
    conf_ece: float
    conf_mce: float


def plugin_top_label_errors(pred_class, confidence, labels, *, n_bins=15,
                            groups=None) -> PluginErrors:
    """Plug-in TL-ECE, TL-MCE, conf-ECE and conf-MCE (catalog §2.5).

    Parameters
    ----------
    pred_class, confidence, labels : array_like, shape (n,)
        c(X_i), h(X_i) and Y_i (0-based).
    n_bins : int, default 15
        Equal-width estimation bins (continuous outputs).
    groups : array_like of int, shape (n,), optional
        Output ids of a binning calibrator (``predict_groups``): each distinct output is
        its own group ("unbinned", as the paper evaluates TL-HB); overrides ``n_bins``.
        Groups with an id < 0 (uncalibrated classes) fall back to equal-width bins.
    """
    c = np.asarray(pred_class)
    h = np.asarray(confidence, dtype=float)
    y = np.asarray(labels)
    if not (c.shape == h.shape == y.shape) or c.ndim != 1:
        raise ValueError(f"pred_class, confidence and labels must be 1-d of one length, got "
                         f"{c.shape}, {h.shape}, {y.shape}")
    n_bins = _check_positive_int(n_bins, "n_bins")
    hit = (c == y).astype(float)
    if groups is None:
        key = equal_width_bin(h, n_bins)
    else:
        g = np.asarray(groups, dtype=np.int64)
        if g.shape != c.shape:
            raise ValueError(f"groups must have shape {c.shape}, got {g.shape}")
        key = np.where(g >= 0, g, -1 - equal_width_bin(h, n_bins))
    w_tl, gap_tl = _group_errors(np.column_stack([c, key]), h, hit)
    w_c, gap_c = _group_errors(key, h, hit)
    return PluginErrors(float(w_tl @ gap_tl), float(gap_tl.max()),
                        float(w_c @ gap_c), float(gap_c.max()))


def plugin_classwise_ece(probs, labels, *, n_bins=15, groups=None) -> float:
    """Plug-in CW-ECE: the mean over classes of the binned ECE of ``(h_l, 1{Y = l})``.

    ``groups`` (an (n, L) array of per-class bin ids, from CW-HB's ``predict_groups``)
    replaces the equal-width bins by one group per distinct output.
    """
    p = np.asarray(probs, dtype=float)
    y = np.asarray(labels)
    if p.ndim != 2 or y.shape != (p.shape[0],):
        raise ValueError(f"probs must be (n, L) and labels (n,), got {p.shape} and {y.shape}")
    n_bins = _check_positive_int(n_bins, "n_bins")
    total = 0.0
    for lab in range(p.shape[1]):
        key = equal_width_bin(p[:, lab], n_bins) if groups is None else np.asarray(groups)[:, lab]
        w, gap = _group_errors(key, p[:, lab], (y == lab).astype(float))
        total += float(w @ gap)
    return total / p.shape[1]


def _group_tl_gaps(keys, pred_class, confidence, hit):
    """Per group of ``keys``: ``(inverse, Delta_g)`` with ``Delta_g = sum_l P^(c = l | g)
    |acc_{g,l} - conf_{g,l}|``, the top-label reliability gap (Sec. 2.1)."""
    _, inv = np.unique(keys, return_inverse=True)
    inv = inv.ravel()
    n_groups = inv.max() + 1
    _, sub = np.unique(np.column_stack([inv, pred_class]), axis=0, return_inverse=True)
    sub = sub.ravel()
    count = np.bincount(sub).astype(float)
    gap = np.abs(np.bincount(sub, weights=hit) - np.bincount(sub, weights=confidence))
    owner = np.zeros(count.size, dtype=np.int64)
    owner[sub] = inv
    # sum over classes in the group of (N_{g,l}/N_g) |acc - conf| = sum |.| N_{g,l} / N_g
    per_group = np.bincount(owner, weights=gap, minlength=n_groups)
    return inv, per_group / np.bincount(inv, minlength=n_groups)


def plugin_reliability_mce(pred_class, confidence, labels, *, n_bins=15, groups=None) -> float:
    """The TL-MCE estimator of gr22's tables: ``max_b Delta^_b`` of the top-label diagram.

    Not the plug-in of eq. (17) (``PluginErrors.tl_mce``, a max over (class, bin)): it
    averages the per-class gaps inside each bin with weights ``P^(c = l | bin)``. It
    reproduces all 12 Base TL-MCE cells of gr22 Tables 2 and 4. Bins are equal-width, or the
    output groups of a binning calibrator.
    """
    c = np.asarray(pred_class)
    h = np.asarray(confidence, dtype=float)
    hit = (c == np.asarray(labels)).astype(float)
    key = equal_width_bin(h, _check_positive_int(n_bins, "n_bins")) if groups is None \
        else np.asarray(groups)
    return float(_group_tl_gaps(key, c, h, hit)[1].max())


def top_label_reliability(pred_class, confidence, labels, *, n_bins=10):
    """Confidence and top-label reliability diagrams on equal-width bins (Sec. 2.1, Fig. 1).

    Returns
    -------
    dict of ndarray, one entry per non-empty bin
        ``conf`` (mean h), ``acc`` (P^(Y = c | bin)), ``tl_gap`` (Delta^_b =
        sum_l P^(c = l | bin) |acc_{b,l} - conf_{b,l}|), ``fraction`` (N_b / N) and ``bin``.
    """
    c = np.asarray(pred_class)
    h = np.asarray(confidence, dtype=float)
    hit = (c == np.asarray(labels)).astype(float)
    b = equal_width_bin(h, n_bins)
    inv, tl_gap = _group_tl_gaps(b, c, h, hit)
    count = np.bincount(inv).astype(float)
    return {"bin": np.unique(b), "conf": np.bincount(inv, weights=h) / count,
            "acc": np.bincount(inv, weights=hit) / count, "tl_gap": tl_gap,
            "fraction": count / h.size}
