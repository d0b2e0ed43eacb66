"""Binary binning calibrators that also record their calibration data per bin.

:class:`BinningDataExperiment` is
:class:`~calcheck.simulations.experiments.binning.BinningExperiment` (the same draws, the same
fitted maps, the same exact errors) whose outcome also carries what a data-dependent bound
reads: each bin's calibration count, label mean and biased label variance, and the points
the means were computed from (:data:`calcheck.theory_checks.checks.methods.DATA_KEYWORDS`). It is
a class of its own so that the stored results of :class:`BinningExperiment` keep their keys.

How the data are computed
-------------------------
The fitted bin values of histogram binning are label means, linear in the labels: the second
moment of a bin is the same fit with labels ``y^2``, with the generator rewound so that every
random draw of the fit (UMS's tie-breaking uniforms) repeats, then set back to where the first
fit left it (the draws after the fit are those of the plain experiment). Binary labels need
no refit (``y^2 = y``). Randomized UMD's jittered values (``delta > 0``) are not label means:
its means come from the same fit without the jitter.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..calibrators.binning import RandomizedUniformMassBinning, calibrator_from_spec
from ..metrics.exact import exact_bin_errors
from .base import BinOutcome
from .binning import BinningExperiment

__all__ = ["BinDataOutcome", "BinningDataExperiment", "output_groups"]


def output_groups(keys) -> np.ndarray:
    """For each bin, the first bin of its row with the same output key, shape ``(R, B)``.

    Bins with equal keys are one output of the fitted map (merged in ``E[Y | h(X) = r]``,
    :func:`calcheck.simulations.metrics.exact.exact_bin_errors`).

    Examples
    --------
    >>> output_groups([[0.2, 0.5, 0.2, 0.7]]).tolist()
    [[0, 1, 0, 3]]
    """
    keys = np.asarray(keys)
    r, b = keys.shape
    order = np.argsort(keys, axis=1, kind="stable")
    k_sorted = np.take_along_axis(keys, order, axis=1)
    start = np.ones((r, b), dtype=bool)
    start[:, 1:] = k_sorted[:, 1:] != k_sorted[:, :-1]
    # the first (smallest) bin index of each run of equal keys, carried along the run
    pos = np.where(start, np.arange(b), 0)
    first = np.take_along_axis(order, np.maximum.accumulate(pos, axis=1), axis=1)
    groups = np.empty((r, b), dtype=np.int64)
    np.put_along_axis(groups, order, first, axis=1)
    return groups


@dataclass(frozen=True)
class BinDataOutcome(BinOutcome):
    """A :class:`BinOutcome` with each bin's calibration data (arrays ``(R, B)`` unless noted).

    Attributes
    ----------
    counts : ndarray of int
        Calibration points whose labels the bin averages.
    means : ndarray
        Their label mean; for a bin without points, the value the calibrator predicts there.
    variances : ndarray
        Their biased label variance ``mean((y - mean)^2)``; 0 for a bin without points.
    n_used : ndarray (R,) of int
        ``counts`` summed: the points the means were computed from.
    groups : ndarray of int
        The first bin with the same output (:func:`output_groups`): merged bins share it.
    """

    counts: np.ndarray
    means: np.ndarray
    variances: np.ndarray
    n_used: np.ndarray
    groups: np.ndarray

    def output_radius(self, radius) -> np.ndarray:
        """A per-bin radius ``(R, B)`` as a radius per output: the largest of its bins'.

        A merged output's truth is a mixture (convex combination) of its bins' truths, so it
        lies within the largest of their radii of the common prediction whenever every bin
        does.
        """
        radius = np.asarray(radius, dtype=float)
        r, b = self.groups.shape
        flat = (self.groups + b * np.arange(r)[:, None]).ravel()
        largest = np.full(r * b, -np.inf)
        np.maximum.at(largest, flat, np.broadcast_to(radius, (r, b)).ravel())
        return largest[flat].reshape(r, b)


def _mean_calibrator(spec: dict, n_bins: int):
    """A calibrator whose bin values are the label means of ``spec``'s (None: its own are)."""
    if spec.get("name") == RandomizedUniformMassBinning.name and spec.get("delta", 0.0) > 0:
        return calibrator_from_spec({**spec, "delta": 0.0, "outputs": "as_returned"}, n_bins)
    return None


@dataclass(frozen=True)
class BinningDataExperiment(BinningExperiment):
    """:class:`BinningExperiment` recording each bin's calibration data (module doc).

    Notes
    -----
    Symbols for bounds: those of :class:`BinningExperiment` and, given an outcome, the data
    keywords ``counts``, ``means``, ``variances`` ``(R, B)`` and ``n_used`` ``(R,)``.
    """

    outcome_type: ClassVar[type] = BinDataOutcome

    @classmethod
    def code_paths(cls) -> tuple[str, ...]:
        """Its own module's sources and :class:`BinningExperiment`'s."""
        return (*super().code_paths(), "simulations/experiments/binning.py")

    def label(self) -> str:
        """Readable one-line identification (``.../data``: the data are recorded)."""
        return f"{super().label()}/data"

    def symbols(self, outcome=None) -> dict:
        """Quantities the bounds take; with an outcome, also the data keywords."""
        out = super().symbols(outcome)
        if outcome is not None:
            out.update(
                counts=outcome.counts,
                means=outcome.means,
                variances=outcome.variances,
                n_used=outcome.n_used,
            )
        return out

    def simulate(self, rng: np.random.Generator, reps: int) -> BinDataOutcome:
        """Simulate ``reps`` replicates: exact errors and each bin's calibration data."""
        labels, fit = self._draws(rng, reps)
        before = rng.bit_generator.state
        batch = fit(labels)
        after = rng.bit_generator.state
        plain = _mean_calibrator(self.calibrator, self.n_bins)

        def refit(y):  # the same fit (the same draws) on other labels
            rng.bit_generator.state = before
            return fit(y, plain).values

        counts = batch.counts.astype(np.int64)
        filled = counts > 0
        first = batch.values if plain is None else refit(labels)
        binary = self.law.labels == "binary"
        second = first if binary else refit(labels * labels)
        rng.bit_generator.state = after
        means = np.where(filled, first, batch.values)
        variances = np.where(filled, np.maximum(second - first * first, 0.0), 0.0)
        errors = exact_bin_errors(batch, self.law)
        return BinDataOutcome(
            errors.error,
            errors.mass,
            rng.random((reps, 2)),
            (~filled).sum(axis=1),
            counts,
            means,
            variances,
            counts.sum(axis=1),
            output_groups(batch.output_keys),
        )
