"""Density-based binary calibrators of Naeini, Cooper & Hauskrecht (2014, Sec. 4).

``KernelCalibrator`` is the KDE calibrator. By default it is the Nadaraya-Watson estimator
the paper's experiments use ("the same bandwidth for both class 0 and class 1, which leads
to the Nadaraya-Watson kernel estimator that we use"):
``yhat(x) = sum_i z_i K((x - y_i)/h) / sum_i K((x - y_i)/h)``. ``form="printed"`` is eq. (5)
as printed, ``n h0 S1 / (n h0 S1 + m h1 S0)`` with ``S_c = sum_{class c} K(|x - X_i|/h_c)``,
m positives and n negatives (equal priors: eq. 4 with priors 1/2, catalog Sec. 3.2), and
``form="priors"`` eq. (4) with the empirical priors, ``h0 S1 / (h0 S1 + h1 S0)``; both use
one bandwidth per class. Bandwidths follow Silverman's rule ``h = 1.06 sd N^(-1/5)`` with
the *standard deviation* (the paper writes "variance"; ddof = 1), the kernel is the boxcar
``K(u) = 1{|u| <= 1} / 2`` (the paper's reported choice). Where no calibration score lies
within h of x (0/0), the prediction falls back to the base rate m / N (not specified by the
paper; recorded in ``n_fallback_``).

``DirichletMixtureCalibrator`` is the DPM calibrator: a Gaussian mixture with a
Dirichlet-process prior per class (scikit-learn's ``BayesianGaussianMixture`` with
``weight_concentration_prior_type="dirichlet_process"``, variational inference as the
paper's Kurihara et al. 2007), plugged into eq. (4) with the empirical priors. The paper
gives no component family, concentration, truncation or stopping rule: calcheck uses 10
Gaussian components, the default concentration 1/10 and ``random_state`` from ``rng``.
"""

from __future__ import annotations

import numpy as np

from ..validation import as_generator, check_scores_labels

__all__ = ["DirichletMixtureCalibrator", "KernelCalibrator", "silverman_bandwidth"]

_FORMS = ("nw", "printed", "priors")


def silverman_bandwidth(scores) -> float:
    """``1.06 sd N^(-1/5)`` with the sample standard deviation (ddof = 1)."""
    s = np.asarray(scores, dtype=float)
    if s.size < 2:
        raise ValueError(f"Silverman's rule needs at least 2 scores, got {s.size}")
    return float(1.06 * s.std(ddof=1) * s.size ** (-0.2))


def _window_counts(sorted_points, x, h):
    """Points within ``h`` of each x (the boxcar kernel sum, up to the factor 1/2)."""
    lo = np.searchsorted(sorted_points, x - h, side="left")
    hi = np.searchsorted(sorted_points, x + h, side="right")
    return (hi - lo).astype(float)


class KernelCalibrator:
    """KDE / Nadaraya-Watson calibrator with a boxcar kernel (nch14 Sec. 4, eq. 5).

    Parameters
    ----------
    form : {"nw", "printed", "priors"}
        Nadaraya-Watson (one bandwidth, the experiments), eq. (5) as printed, or eq. (4)
        with the empirical priors (see the module docstring).
    bandwidth : float or None
        Fixed bandwidth; None: Silverman's rule (per class for the two-bandwidth forms).

    Attributes
    ----------
    bandwidth_ : float or tuple of float
        ``h``, or ``(h0, h1)``.
    base_rate_ : float
    n_fallback_ : int
        Predictions of the last ``predict`` that fell back to the base rate (no point in
        the window).
    """

    def __init__(self, form="nw", bandwidth=None):
        self.form = form
        self.bandwidth = bandwidth

    def fit(self, scores, labels):
        """Fit on scores in [0, 1] and labels in {0, 1}."""
        if self.form not in _FORMS:
            raise ValueError(f"form must be one of {_FORMS}, got {self.form!r}")
        if self.bandwidth is not None and not (np.isfinite(self.bandwidth) and self.bandwidth > 0):
            raise ValueError(f"bandwidth must be positive or None, got {self.bandwidth!r}")
        s, y = check_scores_labels(scores, labels, allow_fractional=False)
        pos, neg = np.sort(s[y == 1]), np.sort(s[y == 0])
        if pos.size < 2 or neg.size < 2:
            raise ValueError("each class needs at least 2 calibration points")
        self._pos, self._neg = pos, neg
        self.base_rate_ = pos.size / s.size
        if self.form == "nw":
            self.bandwidth_ = (
                silverman_bandwidth(s) if self.bandwidth is None else float(self.bandwidth)
            )
        elif self.bandwidth is not None:
            self.bandwidth_ = (float(self.bandwidth), float(self.bandwidth))
        else:
            self.bandwidth_ = (silverman_bandwidth(neg), silverman_bandwidth(pos))
        return self

    def predict(self, scores):
        """Calibrated probability of class 1."""
        if not hasattr(self, "bandwidth_"):
            raise ValueError("this KernelCalibrator is not fitted yet; call fit first")
        x = np.asarray(scores, dtype=float)
        if x.ndim != 1 or not np.all(np.isfinite(x)):
            raise ValueError("scores must be a 1-d array of finite values")
        m, n = self._pos.size, self._neg.size
        if self.form == "nw":
            h = self.bandwidth_
            s1, s0 = _window_counts(self._pos, x, h), _window_counts(self._neg, x, h)
            num, den = s1, s1 + s0
        else:
            h0, h1 = self.bandwidth_
            s1, s0 = _window_counts(self._pos, x, h1), _window_counts(self._neg, x, h0)
            a, b = (n * h0, m * h1) if self.form == "printed" else (h0, h1)
            num, den = a * s1, a * s1 + b * s0
        empty = den == 0
        self.n_fallback_ = int(empty.sum())
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(empty, self.base_rate_, num / np.where(empty, 1.0, den))


class DirichletMixtureCalibrator:
    """DPM calibrator: a Dirichlet-process Gaussian mixture per class (nch14 Sec. 4).

    Parameters
    ----------
    n_components : int
        Truncation level of the variational DP mixture.
    rng : None, int, SeedSequence or Generator
        Seeds scikit-learn's ``random_state`` (one draw per class).

    Notes
    -----
    Needs scikit-learn (the ``repro`` extra).
    """

    def __init__(self, n_components=10, rng=None):
        self.n_components = n_components
        self.rng = rng

    def fit(self, scores, labels):
        """Fit one mixture to each class's scores."""
        try:
            from sklearn.mixture import BayesianGaussianMixture
        except ImportError as exc:  # pragma: no cover - exercised without the extra
            raise ImportError(
                "DirichletMixtureCalibrator needs scikit-learn: python -m pip install scikit-learn "
                "(or, in a calcheck clone, python -m pip install '.[repro]')"
            ) from exc
        s, y = check_scores_labels(scores, labels, allow_fractional=False)
        gen = as_generator(self.rng)
        self.models_ = []
        for cls in (0, 1):
            x = s[y == cls][:, None]
            if x.shape[0] < 2:
                raise ValueError("each class needs at least 2 calibration points")
            model = BayesianGaussianMixture(
                n_components=min(self.n_components, x.shape[0]),
                weight_concentration_prior_type="dirichlet_process",
                max_iter=500,
                random_state=int(gen.integers(2**31 - 1)),
            )
            self.models_.append(model.fit(x))
        self.base_rate_ = float(y.mean())
        return self

    def predict(self, scores):
        """``pi1 p1(x) / (pi1 p1(x) + pi0 p0(x))`` (eq. 4 with the empirical priors)."""
        if not hasattr(self, "models_"):
            raise ValueError("this DirichletMixtureCalibrator is not fitted yet; call fit first")
        x = np.asarray(scores, dtype=float)[:, None]
        log0 = self.models_[0].score_samples(x) + np.log1p(-self.base_rate_)
        log1 = self.models_[1].score_samples(x) + np.log(self.base_rate_)
        return 1.0 / (1.0 + np.exp(log0 - log1))
