"""Experiments for Gupta & Ramdas (2022).

TL-HB and CW-HB with exact truth, Proposition 4, accuracy preservation.

Design: Theorem 1's proof conditions on the class counts ``n_l``, so
:class:`TopLabelBinningExperiment` draws a *stratified* calibration set with ``n_l`` the
largest-remainder rounding of ``n P(c(X) = l)``. Each class is fitted with
:class:`~calcheck.simulations.calibrators.RandomizedUniformMassBinning` (gr21 Algorithm 2,
delta -> 0 tie-breaking), exactly what
:class:`~calcheck.simulations.calibrators.TopLabelHistogramBinning` runs per class,
vectorised over replicates.

References
----------
Gupta, C. and Ramdas, A. (2022). Top-label calibration and multiclass-to-binary reductions.
ICLR. Theorems 1-2, Proposition 4, Sec. 3.2, Algorithms 4, 8 and 9.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from calcheck.bounds import gr22

from ..calibrators.binning import RandomizedUniformMassBinning
from ..calibrators.edges import _sort_binary_labels, assign_lexicographic_bins
from ..calibrators.multiclass_binning import (
    ClassWiseHistogramBinning,
    NormalizedHistogramBinning,
    TopLabelHistogramBinning,
    top_label,
)
from ..laws.multiclass import DirichletAffineLaw, TopLabelLaw
from ..metrics.exact import exact_bin_errors
from ..validation import check_positive_int
from .base import BinOutcome, Experiment, Outcome
from .binning import BinningExperiment

__all__ = [
    "AccuracyExperiment",
    "ClassWiseBinningExperiment",
    "Prop4Experiment",
    "TopLabelBinningExperiment",
]


def _fit_exact(
    law,
    scores,
    labels,
    n_bins,
    rng,
    delta=0.0,
    outputs="distinct",
    *,
    binary_labels=False,
):
    """Fit randomized UMD on (R, m) rows: (mass, error) arrays of shape (R, B) and the batch.

    ``delta = 0, outputs = "distinct"`` is the delta -> 0 limit the theorems are about;
    ``outputs = "as_returned"`` the map a user receives (equal values of a class merged);
    ``delta > 0`` jitters the values (gr21 Algorithm 2, lines 14-15). ``binary_labels``:
    the labels are known to be in {0, 1} (a faster, identical sort). The fitted
    :class:`BinningBatch` is returned too (its edges place test points).
    """
    cal = RandomizedUniformMassBinning(n_bins, delta=delta, outputs=outputs)
    sorted_rows = _sort_binary_labels(scores, labels, rng) if binary_labels else None
    if sorted_rows is None:
        batch = cal.fit_batch(scores, labels.astype(float), n_bins, rng)
    else:
        batch = cal.fit_sorted_batch(*sorted_rows, n_bins, rng)
    be = exact_bin_errors(batch, law)
    return be.mass, be.error, batch


def _variant(exp) -> str:
    """Label suffix for the map users receive or a real delta (none for the limit)."""
    extra = "" if exp.outputs == "distinct" else f"/{exp.outputs}"
    return extra + (f"/delta={exp.delta:g}" if exp.delta else "")


@dataclass(frozen=True)
class TopLabelBinningExperiment(Experiment):
    """TL-HB (Algorithm 8) on a :class:`TopLabelLaw` with exact top-label truth.

    The outcome is a :class:`BinOutcome` over all (class, bin) outputs: exact errors
    ``|P(Y = c(X) | c(X), h(X)) - h(X)|`` and masses ``P(c = l) w_{l,b}``.

    Parameters
    ----------
    law : TopLabelLaw
    n : int
        Total calibration size (stratified over predicted classes).
    points_per_bin : int
        k: class l gets ``floor(n_l / k)`` bins.
    n_bins : int or None
        Fixed bins per class instead of ``floor(n_l / k)`` (App. E.2 variant).
    """

    law: TopLabelLaw
    n: int
    points_per_bin: int = 20
    n_bins: int | None = None
    delta: float = 0.0
    outputs: str = "distinct"

    accepts: ClassVar[tuple[str, ...]] = ("top_label",)
    outcome_type: ClassVar[type] = BinOutcome

    def __post_init__(self):
        self._check_law(self.law)
        check_positive_int(self.n, "n")
        check_positive_int(self.points_per_bin, "points_per_bin", 2)
        counts = self.law.class_counts(self.n)
        if counts.min() < self.points_per_bin:
            raise ValueError(
                f"Theorem 1 needs n_l >= k for every class: n={self.n} gives "
                f"n_l={counts.tolist()}, k={self.points_per_bin}"
            )

    @property
    def bins(self) -> int:
        """Total number of bins (outputs) in reports."""
        return int(self.bins_per_class().sum())

    def bins_per_class(self):
        """Bins of each predicted class."""
        counts = self.law.class_counts(self.n)
        if self.n_bins is not None:
            return np.minimum(self.n_bins, counts // 2)
        return counts // self.points_per_bin

    def label(self) -> str:
        """Readable one-line identification."""
        return f"TL-HB/{self.law.name}/n={self.n}/k={self.points_per_bin}{_variant(self)}"

    def symbols(self, outcome=None) -> dict:
        """Quantities the bounds take, named as in the bound functions."""
        return {
            "n": int(self.n),
            "points_per_bin": int(self.points_per_bin),
            "class_counts": self.law.class_counts(self.n),
            "bins_per_class": self.bins_per_class(),
            "n_classes": int(self.law.n_classes),
            "delta": float(self.delta),
        }

    def binary_parts(self) -> list:
        """``[(P(c = l), BinningExperiment), ...]``: each class's binning on its own.

        With delta = 0 and distinct outputs, TL-HB is randomized UMD on each predicted
        class's fixed ``n_l`` points, independently across classes (the proof of Theorem 1
        is per class); used by :mod:`calcheck.simulations.conditional_coverage`. ``[]``
        otherwise.
        """
        if self.delta != 0 or self.outputs != "distinct":
            return []
        counts, bins = self.law.class_counts(self.n), self.bins_per_class()
        spec = {"name": "randomized_umd", "delta": 0.0}
        return [
            (float(p), BinningExperiment(spec, law, int(m), int(b)))
            for p, law, m, b in zip(self.law.class_probs, self.law.laws, counts, bins, strict=True)
        ]

    def simulate(self, rng, reps):
        """Simulate ``reps`` replicates with ``rng``; the outcome is described above."""
        counts = self.law.class_counts(self.n)
        bins = self.bins_per_class()
        probs = np.asarray(self.law.class_probs)
        masses, errors = [], []
        for lab in range(self.law.n_classes):
            # sample_class's draws, with the labels kept boolean for the sort key
            law = self.law.laws[lab]
            u = law.sample_scores((reps, int(counts[lab])), rng)
            y = law._binary_labels(u, rng)
            m, e, _ = _fit_exact(
                law,
                u,
                y,
                int(bins[lab]),
                rng,
                self.delta,
                self.outputs,
                binary_labels=True,  # TopLabelLaw checks its laws have binary labels
            )
            masses.append(probs[lab] * m)
            errors.append(e)
        return BinOutcome(
            np.concatenate(errors, axis=1),
            np.concatenate(masses, axis=1),
            rng.random((reps, 2)),
            np.zeros(reps, dtype=np.int64),
        )


@dataclass(frozen=True)
class ClassWiseOutcome(BinOutcome):
    """:class:`BinOutcome` of one class's binning plus statistics over all L classes.

    Attributes
    ----------
    cw_ece : ndarray (R,)
        Exact CW-ECE.
    class_max_error : ndarray (R, L)
        ``max_{r in Range(h_l)} |P(Y = l | h_l(X) = r) - r|`` of every class (eq. 14's event
        is that all L are within eps).
    class_test_error : ndarray (R, L)
        ``|P(Y = l | h_l(X)) - h_l(X)|`` of every class at *one* fresh test point X per
        replicate (eq. 13's event is that all L are within eps; a Bernoulli outcome).
    """

    cw_ece: np.ndarray
    class_max_error: np.ndarray
    class_test_error: np.ndarray


@dataclass(frozen=True)
class ClassWiseBinningExperiment(Experiment):
    """CW-HB (Algorithm 9) on a :class:`DirichletAffineLaw` with exact class-wise truth.

    Every class's binning uses all n points (labels ``1{Y = l}``) with ``floor(n/k)`` bins.
    The outcome holds the per-bin errors and masses of class ``class_index`` (default: the
    last, the rarest in the shipped imbalanced law) and the exact CW-ECE of all classes.
    """

    law: DirichletAffineLaw
    n: int
    points_per_bin: int = 20
    class_index: int = -1
    delta: float = 0.0
    outputs: str = "distinct"

    accepts: ClassVar[tuple[str, ...]] = ("dirichlet_affine",)
    outcome_type: ClassVar[type] = ClassWiseOutcome

    def __post_init__(self):
        self._check_law(self.law)
        check_positive_int(self.points_per_bin, "points_per_bin", 2)
        check_positive_int(self.n, "n", self.points_per_bin)

    @property
    def bins(self) -> int:
        """Total number of bins (outputs) in reports."""
        return self.n // self.points_per_bin

    cost = property(lambda self: int(self.n * self.law.n_classes))

    def label(self) -> str:
        """Readable one-line identification."""
        return f"CW-HB/{self.law.name}/n={self.n}/k={self.points_per_bin}{_variant(self)}"

    def symbols(self, outcome=None) -> dict:
        """Quantities the bounds take, named as in the bound functions."""
        return {
            "n": int(self.n),
            "points_per_bin": int(self.points_per_bin),
            "n_classes": int(self.law.n_classes),
            "delta": float(self.delta),
        }

    def simulate(self, rng, reps):
        """Simulate ``reps`` replicates with ``rng``; the outcome is described above."""
        columns, y = self.law._sample_columns((reps, self.n), rng)  # sample's draws
        masses, errs, batches = [], [], []
        for lab in range(self.law.n_classes):
            m, e, batch = _fit_exact(
                self.law.class_law(lab),
                columns[lab],
                y == lab,
                self.bins,
                rng,
                self.delta,
                self.outputs,
                binary_labels=True,
            )
            masses.append(m)
            errs.append(e)
            batches.append(batch)
        cw_ece = np.mean(
            [np.nansum(m * np.nan_to_num(e), axis=1) for m, e in zip(masses, errs, strict=True)],
            axis=0,
        )
        test_u = rng.random((reps, 2))
        return ClassWiseOutcome(
            errs[self.class_index],
            masses[self.class_index],
            test_u,
            np.zeros(reps, dtype=np.int64),
            cw_ece,
            np.column_stack(
                [
                    np.nanmax(np.where(m > 0, e, np.nan), axis=1)
                    for m, e in zip(masses, errs, strict=True)
                ]
            ),
            self._joint_test_errors(errs, batches, reps, rng),
        )

    def _joint_test_errors(self, errs, batches, reps, rng):
        """Each class's exact error at one fresh test point X per replicate, ``(R, L)``.

        X's score vector is drawn from the law; class l's bin of ``g_l(X)`` follows the
        fitted lexicographic edges with a fresh tie-breaking uniform per class (each
        binary binning has its own randomness, as each call of Algorithm 2 does).
        """
        test_cols, _ = self.law._sample_columns((reps, 1), rng)
        out = np.empty((reps, self.law.n_classes))
        for lab, (e, batch) in enumerate(zip(errs, batches, strict=True)):
            u = rng.random((reps, 1))
            b = assign_lexicographic_bins(batch.lower_s, batch.lower_u, test_cols[lab], u)
            out[:, lab] = np.nan_to_num(np.take_along_axis(e, b, axis=1)[:, 0])
        return out


@dataclass(frozen=True)
class TopLabelErrorsOutcome(Outcome):
    """Exact conf-ECE, TL-ECE, conf-MCE and TL-MCE of random discrete predictors ``(R,)``."""

    conf_ece: np.ndarray
    tl_ece: np.ndarray
    conf_mce: np.ndarray
    tl_mce: np.ndarray


@dataclass(frozen=True)
class Prop4Experiment(Experiment):
    """Proposition 4 and App. E.3 on random discrete predictors.

    Each replicate draws a predictor on ``n_support`` points: ``P(X = x) ~ Dirichlet(1)``,
    ``c(x)`` uniform on L classes, ``h(x)`` on a grid of ``n_levels`` values (so that level
    sets mix classes) and ``P(Y = c(X) | x) ~ U[0, 1]``; the four errors are exact
    (:func:`calcheck.bounds.gr22.discrete_top_label_errors`).
    """

    n_support: int = 12
    n_classes: int = 3
    n_levels: int = 3

    outcome_type: ClassVar[type] = TopLabelErrorsOutcome

    def __post_init__(self):
        for name in ("n_support", "n_classes", "n_levels"):
            check_positive_int(getattr(self, name), name)

    law_name = property(lambda self: f"random_discrete(M={self.n_support})")
    n_total = property(lambda self: self.n_support)
    bins = property(lambda self: self.n_levels)
    cost = property(lambda self: self.n_support * self.n_support)

    def label(self) -> str:
        """Readable one-line identification."""
        return f"Prop4/{self.law_name}/L={self.n_classes}"

    @classmethod
    def code_paths(cls) -> tuple[str, ...]:
        """Sources whose change invalidates stored outcomes (this one evaluates bounds)."""
        return (*super().code_paths(), "bounds")  # the exact errors come from bounds.gr22

    def simulate(self, rng, reps):
        """Simulate ``reps`` replicates with ``rng``; the outcome is described above."""
        shape = (reps, self.n_support)
        prob = rng.dirichlet(np.ones(self.n_support), size=reps)
        c = rng.integers(0, self.n_classes, size=shape)
        levels = np.linspace(0.4, 0.9, self.n_levels)
        h = levels[rng.integers(0, self.n_levels, size=shape)]
        p = rng.random(shape)
        return TopLabelErrorsOutcome(*gr22.discrete_top_label_errors(prob, c, h, p))


_ACC_CALIBRATORS = {
    "tlhb": TopLabelHistogramBinning,
    "cwhb": ClassWiseHistogramBinning,
    "nhb": NormalizedHistogramBinning,
}


@dataclass(frozen=True)
class ChangedOutcome(Outcome):
    """Fraction of test points whose predicted label differs from the base model's ``(R,)``."""

    changed: np.ndarray


@dataclass(frozen=True)
class AccuracyExperiment(Experiment):
    """Accuracy preservation (Sec. 3.2) with the user-facing calibrators.

    Each replicate fits the calibrator on n points of a :class:`TopLabelLaw` and predicts
    ``n_test`` fresh points; the outcome is the fraction of predicted labels that differ
    from the base model's argmax. TL-HB keeps c by construction; CW-HB and N-HB (negative
    controls) need not.
    """

    law: TopLabelLaw
    n: int = 1000
    n_test: int = 1000
    calibrator: str = "tlhb"
    points_per_bin: int = 20

    accepts: ClassVar[tuple[str, ...]] = ("top_label",)
    outcome_type: ClassVar[type] = ChangedOutcome

    def __post_init__(self):
        self._check_law(self.law)
        if self.calibrator not in _ACC_CALIBRATORS:
            raise ValueError(
                f"calibrator must be one of {sorted(_ACC_CALIBRATORS)}, got {self.calibrator!r}"
            )

    bins = property(lambda self: self.n // self.points_per_bin)
    cost = property(lambda self: 20 * (self.n + self.n_test))

    def label(self) -> str:
        """Readable one-line identification."""
        return f"Accuracy/{self.law.name}/n={self.n}/{self.calibrator}"

    def simulate(self, rng, reps):
        """Simulate ``reps`` replicates with ``rng``; the outcome is described above."""
        changed = np.empty(reps)
        for r in range(reps):
            scores, labels = self.law.sample(self.n, rng)
            cal = _ACC_CALIBRATORS[self.calibrator](self.points_per_bin, rng=rng)
            cal.fit(scores, labels)
            test, _ = self.law.sample(self.n_test, rng)
            changed[r] = 1.0 - np.mean(cal.predict(test) == top_label(test)[0])
        return ChangedOutcome(changed)
