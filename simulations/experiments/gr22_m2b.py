"""Experiment for the M2B wrappers of Gupta & Ramdas (2022), Algorithms 5-7.

:class:`TopKLabelsExperiment`: the top-K labels c^(1..K) a top-K calibrator returns are the
base model's (Sec. 3.2 and App. A.1: "the c~ values are not changed"), so top-K accuracy is
kept whatever the binary calibrator. Run through the user-facing calibrators of
:mod:`calcheck.simulations.calibrators.m2b`.

References
----------
Gupta, C. and Ramdas, A. (2022). Top-label calibration and multiclass-to-binary reductions.
ICLR. Sec. 3.2, Algorithms 5-7, App. A.1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..calibrators.m2b import (
    M2BCalibrator,
    TopKConfidenceCalibrator,
    TopKLabelCalibrator,
    top_k_labels,
)
from ..laws.base import Law
from ..validation import check_positive_int
from .base import Experiment
from .gr22 import ChangedOutcome

__all__ = ["TopKLabelsExperiment"]

#: calibrator name -> (constructor of (top_k, points_per_bin, rng), whether labels are
#: re-sorted by the calibrated probabilities: the negative control).
_CALIBRATORS = {
    "top_k_label": (lambda k, ppb, rng: TopKLabelCalibrator(k, points_per_bin=ppb, rng=rng), 0),
    "top_k_confidence": (
        lambda k, ppb, rng: TopKConfidenceCalibrator(k, points_per_bin=ppb, rng=rng),
        0,
    ),
    "confidence": (lambda k, ppb, rng: M2BCalibrator("confidence", points_per_bin=ppb, rng=rng), 0),
    # control: the labels re-ranked by the calibrated h^(k), which need not decrease in k
    "top_k_confidence_resorted": (
        lambda k, ppb, rng: TopKConfidenceCalibrator(k, points_per_bin=ppb, rng=rng),
        1,
    ),
}


@dataclass(frozen=True)
class TopKLabelsExperiment(Experiment):
    """Top-K labels kept by the M2B calibrators (Sec. 3.2, App. A.1).

    Each replicate fits the calibrator on n points and predicts ``n_test`` fresh points; the
    outcome is the fraction of test points whose K returned labels differ anywhere from the
    base model's c^(1..K) (:func:`~calcheck.simulations.calibrators.m2b.top_k_labels`). The control
    ``top_k_confidence_resorted`` re-ranks the labels by the calibrated probabilities.

    Parameters
    ----------
    law : Law
        A multiclass law (family ``top_label`` or ``dirichlet_affine``).
    n, n_test : int
    calibrator : {"top_k_label", "top_k_confidence", "confidence", "top_k_confidence_resorted"}
    top_k : int
        K (1 for ``confidence``).
    points_per_bin : int
        k of the histogram binning in every sub-problem.
    """

    law: Law
    n: int = 300
    n_test: int = 200
    calibrator: str = "top_k_label"
    top_k: int = 2
    points_per_bin: int = 10

    accepts: ClassVar[tuple[str, ...]] = ("top_label", "dirichlet_affine")
    outcome_type: ClassVar[type] = ChangedOutcome

    def __post_init__(self):
        self._check_law(self.law)
        if self.calibrator not in _CALIBRATORS:
            raise ValueError(
                f"calibrator must be one of {sorted(_CALIBRATORS)}, got {self.calibrator!r}"
            )
        check_positive_int(self.n, "n")
        check_positive_int(self.n_test, "n_test")
        check_positive_int(self.points_per_bin, "points_per_bin", 2)
        k = check_positive_int(self.top_k, "top_k")
        if k > self.law.n_classes or (self.calibrator == "confidence" and k != 1):
            raise ValueError(
                f"top_k must be in 1..{self.law.n_classes} (1 for confidence), got {self.top_k!r}"
            )

    bins = property(lambda self: self.n // self.points_per_bin)
    cost = property(lambda self: 10 * self.top_k * (self.n + self.n_test))

    def label(self) -> str:
        """Readable one-line identification."""
        return f"TopKLabels/{self.law.name}/n={self.n}/{self.calibrator}/K={self.top_k}"

    def simulate(self, rng, reps):
        """Simulate ``reps`` replicates with ``rng``; the outcome is described above."""
        make, resort = _CALIBRATORS[self.calibrator]
        changed = np.empty(reps)
        for r in range(reps):
            scores, labels = self.law.sample(self.n + self.n_test, rng)  # one i.i.d. draw
            cal = make(self.top_k, self.points_per_bin, rng)
            cal.fit(scores[: self.n], labels[: self.n])
            test = scores[self.n :]
            c, h = cal.predict_claims(test)
            if resort:
                c = np.take_along_axis(c, np.argsort(-h, axis=1, kind="stable"), axis=1)
            base = top_k_labels(test, self.top_k)[0]
            changed[r] = np.mean(np.any(c != base, axis=1))
        return ChangedOutcome(changed)
