"""Binary binning calibrators on laws with exact truth: today's coverage cell.

Within a block all replicates are vectorised: scores are drawn as an ``(R, n)`` array and
sorted once; labels are drawn given the sorted scores (labels are conditionally independent
given the scores, so this is the same joint law and saves a gather); the fit is a
cumulative sum; the exact ground truth costs ``O(R B)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..calibrators.binning import calibrator_from_spec
from ..calibrators.edges import sort_scores
from ..laws.binary import BinaryLaw
from ..metrics.exact import exact_bin_errors
from ..validation import check_positive_int
from .base import BinOutcome, Experiment

__all__ = ["BinningExperiment"]


@dataclass(frozen=True)
class BinningExperiment(Experiment):
    """A binning calibrator fitted on n draws of a binary law, B bins: exact per-bin errors.

    Parameters
    ----------
    calibrator : dict
        ``{"name": ..., <parameters>}``
        (:func:`calcheck.simulations.calibrators.calibrator_from_spec`).
    law : BinaryLaw
    n, n_bins : int

    Notes
    -----
    Symbols for bounds: ``n``, ``n_bins`` and ``delta`` (the calibrator's randomisation
    parameter, 0 when it has none).
    """

    calibrator: dict
    law: BinaryLaw
    n: int
    n_bins: int

    accepts: ClassVar[tuple[str, ...]] = ("binary",)
    outcome_type: ClassVar[type] = BinOutcome

    def __post_init__(self):
        check_positive_int(self.n, "n")
        check_positive_int(self.n_bins, "n_bins")
        self._check_law(self.law)
        calibrator_from_spec(self.calibrator, self.n_bins)  # validates the spec early

    def label(self) -> str:
        """Readable one-line identification."""
        return f"{self.calibrator['name']}/{self.law.name}/n={self.n}/B={self.n_bins}"

    def symbols(self, outcome=None) -> dict:
        """Quantities the bounds take, named as in the bound functions."""
        return {
            "n": int(self.n),
            "n_bins": int(self.n_bins),
            "delta": float(self.calibrator.get("delta", 0.0)),
        }

    def _draws(self, rng: np.random.Generator, reps: int):
        """Draw ``reps`` calibration sets: ``(labels, fit)``.

        ``fit(y, calibrator=None)`` fits the drawn sets with labels ``y`` (the drawn
        ``labels``, or a function of them) and returns the :class:`BinningBatch`.
        """
        law = self.law
        own = calibrator_from_spec(self.calibrator, self.n_bins)
        scores = law.sample_scores((reps, self.n), rng)
        if hasattr(own, "fit_sorted_batch"):
            s_sorted, u_sorted = sort_scores(scores, rng, tie_breaking=own._tie_breaking())
            labels = law.sample_labels(s_sorted, rng)

            def fit(y, calibrator=None):
                c = own if calibrator is None else calibrator
                return c.fit_sorted_batch(s_sorted, u_sorted, y, self.n_bins, rng)

            return labels, fit
        labels = law.sample_labels(scores, rng)

        def fit(y, calibrator=None):
            c = own if calibrator is None else calibrator
            return c.fit_batch(scores, y, self.n_bins, rng)

        return labels, fit

    def simulate(self, rng: np.random.Generator, reps: int) -> BinOutcome:
        """Simulate ``reps`` replicates: exact per-bin errors and masses."""
        labels, fit = self._draws(rng, reps)
        batch = fit(labels)
        errors = exact_bin_errors(batch, self.law)
        return BinOutcome(
            errors.error, errors.mass, rng.random((reps, 2)), (batch.counts == 0).sum(axis=1)
        )
