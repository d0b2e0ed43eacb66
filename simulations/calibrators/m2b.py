"""Multiclass-to-binary (M2B) calibrators of Gupta & Ramdas (2022), Algorithms 5-7.

:class:`M2BCalibrator` is Algorithm 5, the general wrapper: an M2B notion verifies K binary
claims; for each claim k a label predictor ``c~`` and a probability predictor ``g~`` are read
off the base model g, and a binary calibrator A_{0,1} is fitted on ``(g~(X_i), 1{Y_i =
c~(X_i)})`` -- on all n points when the notion does not condition on ``c~`` (confidence,
class-wise, top-K-confidence), or separately on the points with ``c~(X_i) = l`` for each
class l when it does (top-label, top-K-label), then ``h_k(x) = h_{k, c~(x)}(x)``. The label
predictors are never changed (App. A.1), so label-conditioned and unconditioned notions
alike keep the base model's top-K labels and its accuracy (Sec. 3.2, catalog G4).

======================  ===  ==========================  ==========================
notion                  K    label predictor of claim k  conditions on the label
======================  ===  ==========================  ==========================
``confidence``          1    c = argmax g  (Alg. 1)      no
``top_label``           1    c            (Alg. 2)       yes
``class_wise``          L    the constant l (Alg. 3)     no
``top_k_confidence``    K    c^(k)        (Alg. 7)       no
``top_k_label``         K    c^(k)        (Alg. 6)       yes
======================  ===  ==========================  ==========================

c^(k) is the k-th largest class of g (ties: the lower index first, as ``np.argmax``) and
g^(k) its probability. :class:`TopKLabelCalibrator` (Algorithm 6) and
:class:`TopKConfidenceCalibrator` (Algorithm 7) are the two top-K notions by name.

Algorithm 7, line 3, prints ``D_k = {(X_i, 1{Y_i = l})}`` with no l in scope (catalog §9.4);
it cannot be run as printed. Implemented is the corrected ``1{Y_i = c^(k)(X_i)}`` (Table 1,
eq. 6 and Algorithm 5 line 4).

The binary calibrator: by default histogram binning with ``floor(m / points_per_bin)`` bins on
each sub-problem of m points (gr21 Algorithm 2, delta -> 0, as TL-HB and CW-HB use); a
sub-problem too small for one bin (m < 2 k) is left uncalibrated (``h = g~``, logged), as
TL-HB does. Any other binary calibrator (an unfitted object with ``fit(scores, labels)`` and
``predict(scores)``, e.g. :class:`~calcheck.simulations.calibrators.PlattScaling`) may be passed as
``binary``; a fresh deep copy is fitted on each sub-problem.

References
----------
Gupta, C. and Ramdas, A. (2022). Top-label calibration and multiclass-to-binary reductions.
ICLR. Sec. 3, Table 1, Algorithms 1-3 and 5-7, App. A.1.
"""

from __future__ import annotations

import copy
import logging

import numpy as np

from ..validation import as_generator, check_positive_int
from .binning import RandomizedUniformMassBinning
from .multiclass_binning import check_probability_matrix

logger = logging.getLogger(__name__)

__all__ = [
    "NOTIONS",
    "M2BCalibrator",
    "TopKConfidenceCalibrator",
    "TopKLabelCalibrator",
    "top_k_labels",
]

#: M2B notion -> whether its claims condition on the predicted label (Table 1).
NOTIONS = {
    "confidence": False,
    "top_label": True,
    "class_wise": False,
    "top_k_confidence": False,
    "top_k_label": True,
}


def top_k_labels(scores, top_k=None):
    """``(c, g)``: the k-th largest classes c^(k) and their probabilities g^(k), ``(n, K)``.

    Ties are broken towards the lower class index (a stable sort), so ``c[:, 0]`` is
    ``np.argmax``. ``top_k`` defaults to L.
    """
    p = check_probability_matrix(scores)
    k = p.shape[1] if top_k is None else check_positive_int(top_k, "top_k")
    if k > p.shape[1]:
        raise ValueError(f"top_k must be <= L = {p.shape[1]}, got {top_k!r}")
    c = np.argsort(-p, axis=1, kind="stable")[:, :k]
    return c, np.take_along_axis(p, c, axis=1)


class M2BCalibrator:
    """Algorithm 5: the M2B calibrator of a notion (see the module doc).

    Parameters
    ----------
    notion : {"confidence", "top_label", "class_wise", "top_k_confidence", "top_k_label"}
    top_k : int, default 1
        K for the top-K notions (ignored by the others; class-wise has K = L).
    points_per_bin : int, default 50
        k >= 2 of the default histogram binning (``floor(m / k)`` bins per sub-problem).
    binary : object or None
        An unfitted binary calibrator (``fit(scores, labels)``, ``predict(scores)``), deep
        copied per sub-problem; None for histogram binning.
    rng : None, int, SeedSequence or Generator
        Tie-breaking randomness of the default binning.

    Attributes
    ----------
    n_classes_ : int
    n_claims_ : int
        K.
    calibrators_ : list
        Per claim: one binary calibrator (unconditioned notions) or a list of L (one per
        predicted label), None where a sub-problem was left uncalibrated.
    group_sizes_ : ndarray (K, L) or (K,)
        Points of each sub-problem.
    """

    def __init__(self, notion="top_label", *, top_k=1, points_per_bin=50, binary=None, rng=None):
        self.notion = notion
        self.top_k = top_k
        self.points_per_bin = points_per_bin
        self.binary = binary
        self.rng = rng

    def get_params(self) -> dict:
        """Parameters (scikit-learn convention)."""
        return {
            "notion": self.notion,
            "top_k": self.top_k,
            "points_per_bin": self.points_per_bin,
            "binary": self.binary,
            "rng": self.rng,
        }

    # ----------------------------------------------------------------- claims
    def _n_claims(self, n_cls):
        if self.notion not in NOTIONS:
            raise ValueError(f"notion must be one of {sorted(NOTIONS)}, got {self.notion!r}")
        if self.notion == "class_wise":
            return n_cls
        if self.notion.startswith("top_k"):
            k = check_positive_int(self.top_k, "top_k")
            if k > n_cls:
                raise ValueError(f"top_k must be <= L = {n_cls}, got {self.top_k!r}")
            return k
        return 1

    def _claims(self, p):
        """Label and probability predictors ``(c~, g~)`` of every claim, ``(n, K)`` each."""
        if self.notion == "class_wise":
            n, n_cls = p.shape
            return np.broadcast_to(np.arange(n_cls), (n, n_cls)), p
        return top_k_labels(p, self.n_claims_)

    # ----------------------------------------------------------------- fitting
    def _new_binary(self, m):
        """A fresh binary calibrator for m points, or None if m allows no bin."""
        if self.binary is not None:
            return copy.deepcopy(self.binary) if m >= 2 else None
        b = m // check_positive_int(self.points_per_bin, "points_per_bin", 2)
        b = min(b, m // 2)  # Algorithm 2 needs m >= 2B
        return RandomizedUniformMassBinning(b, rng=self.rng_) if b >= 1 else None

    def _fit_one(self, scores, z, what):
        cal = self._new_binary(scores.size)
        if cal is None:
            if scores.size:
                logger.warning("M2B: %s has %d points: left uncalibrated", what, scores.size)
            return None
        return cal.fit(scores, z)

    def fit(self, scores, labels):
        """Fit on an (n, L) probability matrix and 0-based labels. Returns self."""
        p, y = check_probability_matrix(scores, labels)
        n_cls = p.shape[1]
        self.n_classes_ = n_cls
        self.n_claims_ = self._n_claims(n_cls)
        if self.binary is None:
            check_positive_int(self.points_per_bin, "points_per_bin", 2)
        elif not (
            callable(getattr(self.binary, "fit", None))
            and callable(getattr(self.binary, "predict", None))
        ):
            raise ValueError(
                f"binary must be an unfitted binary calibrator with fit and predict, "
                f"got {self.binary!r}"
            )
        self.rng_ = as_generator(self.rng)
        c, g = self._claims(p)
        z = (y[:, None] == c).astype(float)  # Z_i = 1{Y_i = c~(X_i)} (Algorithm 5 line 4)
        conditioned = NOTIONS[self.notion]
        self.calibrators_, sizes = [], []
        for k in range(self.n_claims_):
            if not conditioned:  # lines 5-7: one calibrator on all n points
                self.calibrators_.append(self._fit_one(g[:, k], z[:, k], f"claim {k}"))
                sizes.append(p.shape[0])
                continue
            per_label, counts = [], []
            for lab in range(n_cls):  # lines 11-14: one calibrator per predicted label
                mask = c[:, k] == lab
                per_label.append(self._fit_one(g[mask, k], z[mask, k], f"claim {k}, label {lab}"))
                counts.append(int(mask.sum()))
            self.calibrators_.append(per_label)
            sizes.append(counts)
        self.group_sizes_ = np.asarray(sizes)
        return self

    # ---------------------------------------------------------------- predicting
    def _check_fitted(self, scores):
        if not hasattr(self, "calibrators_"):
            raise ValueError(f"this {type(self).__name__} is not fitted yet; call fit first")
        p = check_probability_matrix(scores)
        if p.shape[1] != self.n_classes_:
            raise ValueError(f"scores must have {self.n_classes_} columns, got {p.shape[1]}")
        return p

    def predict_claims(self, scores):
        """``(c, h)``: each claim's label predictor and calibrated probability, ``(n, K)``.

        Claim k's label is the base model's ``c~`` (unchanged by calibration) and ``h[:, k]``
        the calibrated ``h_k(x)`` (line 15: ``h_{k, c~(x)}(x)`` for label-conditioned notions).
        """
        p = self._check_fitted(scores)
        c, g = self._claims(p)
        h = np.array(g, dtype=float, copy=True)
        for k, cal in enumerate(self.calibrators_):
            if not isinstance(cal, list):
                if cal is not None:
                    h[:, k] = cal.predict(g[:, k])
                continue
            for lab, sub in enumerate(cal):
                mask = c[:, k] == lab
                if sub is not None and mask.any():
                    h[mask, k] = sub.predict(g[mask, k])
        return np.array(c), h

    def predict(self, scores):
        """The label predictors of the claims, ``(n, K)``: the base model's, unchanged."""
        return self.predict_claims(scores)[0]

    def predict_proba(self, scores):
        """The calibrated probabilities of the claims, ``(n, K)`` (never normalised)."""
        return self.predict_claims(scores)[1]


class TopKLabelCalibrator(M2BCalibrator):
    """Algorithm 6, the top-K-label calibrator: one binary calibrator per (k, predicted label).

    For k = 1..K and each class l, A_{0,1} is fitted on ``{(g^(k)(X_i), 1{Y_i = l}) :
    c^(k)(X_i) = l}`` and ``h^(k)(x) = h^(k, c^(k)(x))(x)``; the aim is eq. (7),
    ``P(Y = c^(k)(X) | h^(k)(X), c^(k)(X)) = h^(k)(X)``. With K = 1 and histogram binning it
    is TL-HB (Algorithm 8). Parameters as :class:`M2BCalibrator` (without ``notion``).
    """

    def __init__(self, top_k=2, *, points_per_bin=50, binary=None, rng=None):
        super().__init__(
            "top_k_label", top_k=top_k, points_per_bin=points_per_bin, binary=binary, rng=rng
        )

    def get_params(self) -> dict:
        """Parameters (scikit-learn convention)."""
        return {k: v for k, v in super().get_params().items() if k != "notion"}


class TopKConfidenceCalibrator(TopKLabelCalibrator):
    """Algorithm 7, the top-K-confidence calibrator: one binary calibrator per k.

    For k = 1..K, A_{0,1} is fitted on ``{(g^(k)(X_i), 1{Y_i = c^(k)(X_i)})}`` over all n
    points (line 3 corrected: the printed ``1{Y_i = l}`` has no l in scope); the aim is
    eq. (6), ``P(Y = c^(k)(X) | h^(k)(X)) = h^(k)(X)``. With K = 1 it is the confidence
    calibrator (Algorithm 1). The calibrated h^(k) need not decrease in k; the labels c^(k)
    keep the base model's order.
    """

    def __init__(self, top_k=2, *, points_per_bin=50, binary=None, rng=None):
        super().__init__(top_k, points_per_bin=points_per_bin, binary=binary, rng=rng)
        self.notion = "top_k_confidence"
