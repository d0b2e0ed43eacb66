"""A multiclass calibrator of your own on a multiclass law: top-label and class-wise truth.

Any object with ``fit(scores, labels)`` (scores an ``(n, L)`` probability matrix, labels in
``0..L-1``) and ``predict_proba(scores)`` returning an ``(m, L)`` matrix of numbers in
[0, 1] (rows need not sum to 1: class-wise binning's do not) stands in for a method. Every
replicate fits a fresh copy on ``n`` draws of the law (``fit`` also receives ``rng=`` and
``n_bins=`` where it takes them).

The fitted map ``P`` gives two kinds of level sets (Gupta & Ramdas 2022, Sec. 2):

* **top-label**: the predicted class ``c(x) = argmax_l P_l(x)`` (first maximum) and its
  confidence ``h(x) = max_l P_l(x)``; the level set ``{c(X) = c, h(X) = r}`` has error
  ``|P(Y = c | c(X) = c, h(X) = r) - r|`` (TL-MCE: the largest; TL-ECE: mass-weighted);
* **class-wise**: for each class l, the level sets ``{P_l(X) = r}`` with error
  ``|P(Y = l | P_l(X) = r) - r|`` (CW-ECE: the mean over classes of each class's ECE).

Exact truth
-----------
On a :class:`~calcheck.simulations.laws.multiclass.TopLabelLaw` the score vector is a
function of the law's predicted class C and latent U, so for each C the map is resolved in
U's probability space exactly as
:class:`~calcheck.simulations.experiments.calibrator.CalibratorExperiment` resolves a binary
map (``grid`` equal-probability cells, a cell whose two ends have the same output row is
constant, others halved up to ``SPLIT_DEPTH`` times, the rest reported as
``unresolved_mass``); every piece's mass and label moments ``P(Y = l, X in piece)`` are
exact (``eta_C`` integrated; the other classes share ``1 - eta_C`` equally). On a
:class:`~calcheck.simulations.laws.multiclass.DirichletAffineLaw` with ``prototypes`` every
prototype is a piece with exact truth. A continuous Dirichlet law is refused: a map of the
whole score vector has level sets in L - 1 dimensions, which calcheck cannot integrate
exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .calibrator import (
    CalibratorExperiment,
    LevelSetOutcome,
    data_by_level,
    split_changing_cells,
)
from .calibrator_protocol import calibrator_call, fit_copy, unresolved_advice

__all__ = ["MulticlassCalibratorExperiment", "MulticlassLevelSetOutcome"]


@dataclass(frozen=True)
class MulticlassLevelSetOutcome(LevelSetOutcome):
    """Top-label level sets (columns, padded) plus class-wise statistics.

    Attributes
    ----------
    error, mass, test_u, n_empty
        As in :class:`~calcheck.simulations.experiments.base.BinOutcome`, one column per
        top-label level set ``(c, r)`` (sorted by class, then output; NaN error and zero mass
        as padding): ``max_error`` is the TL-MCE, ``l1_ece`` the TL-ECE and
        ``test_point_error`` the top-label error at a fresh test point.
    unresolved_mass, n_levels
        As in :class:`~calcheck.simulations.experiments.calibrator.LevelSetOutcome`.
    counts, means, variances : ndarray (R, width)
        Calibration points of each top-label level set, the mean and biased variance of
        their indicators ``1{Y = c}`` (a level set without points: mean its confidence r,
        variance 0); 0 for padding.
    n_used : ndarray (R,)
        Calibration points in a top-label level set (``counts`` summed).
    cw_ece : ndarray (R,)
        Exact CW-ECE: the mean over classes of ``sum_r P(P_l(X) = r) |P(Y = l | P_l(X) = r) - r|``.
    class_max_error, class_ece : ndarray (R, L)
        Each class's largest level-set error and its ECE.
    class_test_error : ndarray (R, L)
        Each class's error at one fresh test point X per replicate (the same X for all).
    """

    cw_ece: np.ndarray
    class_max_error: np.ndarray
    class_ece: np.ndarray
    class_test_error: np.ndarray


def _same_rows(a, b):
    return np.all(a == b, axis=-1)


@dataclass(frozen=True)
class MulticlassCalibratorExperiment(CalibratorExperiment):
    """A user's multiclass calibrator fitted on n draws of a multiclass law (module doc).

    Parameters
    ----------
    calibrator : object
        ``fit(scores, labels)`` and ``predict_proba(scores) -> (m, L)``; copied before
        every fit.
    law : TopLabelLaw or DirichletAffineLaw
        A Dirichlet law must have ``prototypes`` (exact truth).
    n : int
        Calibration points per replicate.
    n_bins : int
        The bound's ``B`` (passed to ``fit`` as ``n_bins=`` where it accepts it).
    grid : int, default 256
        Equal-probability cells per predicted class of a top-label law.
    max_unresolved : float, optional
        As in :class:`~calcheck.simulations.experiments.calibrator.CalibratorExperiment`.

    Notes
    -----
    Symbols for bounds: ``n``, ``n_bins``, ``n_classes``; given an outcome also the
    top-label level sets' ``counts``, ``means``, ``variances`` and ``n_used``.
    """

    grid: int = 256  # the other fields are CalibratorExperiment's

    accepts: ClassVar[tuple[str, ...]] = ("top_label", "dirichlet_affine")
    outcome_type: ClassVar[type] = MulticlassLevelSetOutcome

    def _check_calibrator(self) -> None:
        """Refuse, now, a calibrator without predict_proba, a law without exact truth."""
        name = type(self.calibrator).__name__
        if not callable(getattr(self.calibrator, "fit", None)) or not callable(
            getattr(self.calibrator, "predict_proba", None)
        ):
            raise ValueError(
                f"a multiclass calibrator must have fit(scores, labels) and "
                f"predict_proba(scores) -> (m, L), got {name}"
            )
        if self.law.family == "dirichlet_affine" and not self.law.prototypes:
            raise ValueError(
                f"law {self.law.name!r} is a continuous Dirichlet law: the truth of a map of the "
                "whole score vector is not exactly computable there; use a top_label law or a "
                "dirichlet_affine law with prototypes (e.g. 'cw_prototype_atoms')"
            )
        declared = getattr(self.calibrator, "n_classes", None)
        if isinstance(declared, int) and declared != self.law.n_classes:
            raise ValueError(
                f"{name} declares n_classes={declared}, but law {self.law.name!r} has "
                f"{self.law.n_classes} classes"
            )

    @property
    def n_classes(self) -> int:
        """Number of classes L of the law."""
        return int(self.law.n_classes)

    @property
    def width(self) -> int:
        """Columns of the outcome: the most top-label level sets a fitted map may have."""
        if self.law.family == "dirichlet_affine":
            return len(self.law.prototypes)
        return sum(int(self.grid) + len(sub.scores.atoms) for sub in self.law.laws)

    cost = property(lambda self: int(self.n * self.law.n_classes))

    @classmethod
    def code_paths(cls) -> tuple[str, ...]:
        """Sources whose change invalidates stored outcomes (the binary experiment's too)."""
        return (*super().code_paths(), "simulations/experiments/calibrator.py")

    def symbols(self, outcome=None) -> dict:
        """Quantities the bounds take (see the class notes)."""
        return super().symbols(outcome) | {"n_classes": self.n_classes}

    # ------------------------------------------------------------------ the fitted map
    def _predict(self, fitted, scores: np.ndarray) -> np.ndarray:
        """``predict_proba`` of the fitted copy, checked: ``(m, L)`` numbers in [0, 1]."""
        name = type(self.calibrator).__name__
        out = np.asarray(calibrator_call(fitted, "predict_proba", scores), dtype=float)
        if out.shape != scores.shape:
            raise ValueError(
                f"{name}.predict_proba must return an (m, L) matrix, one row per score vector "
                f"(shape {scores.shape}), got shape {out.shape}"
            )
        bad = ~((out >= 0) & (out <= 1))
        if bad.any():
            i, j = (int(k[0]) for k in np.nonzero(bad))
            raise ValueError(
                f"{name}.predict_proba must return probabilities in [0, 1], got "
                f"{float(out[i, j])!r} for class {j} at scores {scores[i].round(6).tolist()}"
            )
        return out

    def _vectors(self, c: int, u) -> np.ndarray:
        """Score vectors of a top-label law's predicted class ``c`` at latent ``u``."""
        s = self.law.confidence(u)
        out = np.repeat(((1.0 - s) / (self.n_classes - 1))[:, None], self.n_classes, axis=1)
        out[:, c] = s
        return out

    def _cells(self):
        """Per predicted class: the grid's quantiles, scores and exact cell moments."""
        cells = []
        q = np.linspace(0.0, 1.0, self.grid + 1)
        for sub in self.law.laws:
            sc = sub.scores
            if sc.continuous_weight == 0:
                cells.append(None)
                continue
            s = sc.ppf(q)
            mass = sc.continuous_weight * (sc.cdf(s[1:]) - sc.cdf(s[:-1]))
            cells.append((s, mass, sc.continuous_weight * sub.eta.integral(s[:-1], s[1:], sc)))
        return q, cells

    def _resolve(self, fitted, c, q, cell):
        """Pieces of class ``c``'s latent law: (lo, hi) scores, output rows, moments, unresolved."""
        sub = self.law.laws[c]
        ppf = sub.scores.ppf
        s, cell_mass, cell_moment = cell
        h = self._predict(fitted, self._vectors(c, s))
        same = _same_rows(h[:-1], h[1:])
        rows, masses, moments = [h[:-1][same]], [cell_mass[same]], [cell_moment[same]]
        lo_q, hi_q, h_lo, h_hi = q[:-1][~same], q[1:][~same], h[:-1][~same], h[1:][~same]
        split = split_changing_cells(
            sub,
            lo_q,
            hi_q,
            h_lo,
            h_hi,
            lambda m: self._predict(fitted, self._vectors(c, ppf(m))),
            _same_rows,
            self.grid // 4,
        )
        unresolved = 0.0
        if split is not None:
            split_rows, split_mass, split_moment, unresolved = split
            rows.append(split_rows)
            masses.append(split_mass)
            moments.append(split_moment)
        return np.concatenate(rows), np.concatenate(masses), np.concatenate(moments), unresolved

    def _pieces(self, fitted, cells):
        """Every piece of the score space: output rows (k, L), masses (k,), moments (k, L)."""
        n_cls = self.n_classes
        if self.law.family == "dirichlet_affine":
            g, w = self.law._support
            truth = self.law.shrink * g + (1.0 - self.law.shrink) / n_cls
            return self._predict(fitted, g), w, w[:, None] * truth, 0.0
        q, per_class = cells
        rows, masses, moments, unresolved = [], [], [], 0.0
        for c, (p, sub) in enumerate(zip(self.law.class_probs, self.law.laws, strict=True)):
            parts = []
            if per_class[c] is not None:
                h, m, mc, u = self._resolve(fitted, c, q, per_class[c])
                parts.append((h, m, mc))
                unresolved += p * u
            if sub.scores.atoms:
                atoms = np.asarray(sub.scores.atoms, dtype=float)
                m = np.asarray(sub.scores.atom_probs, dtype=float)
                parts.append(
                    (self._predict(fitted, self._vectors(c, atoms)), m, m * sub.atom_means())
                )
            for h, m, mc in parts:
                mom = np.repeat(((m - mc) / (n_cls - 1))[:, None], n_cls, axis=1)
                mom[:, c] = mc
                rows.append(h)
                masses.append(p * m)
                moments.append(p * mom)
        return np.concatenate(rows), np.concatenate(masses), np.concatenate(moments), unresolved

    def _replicate(self, fitted, cells, scores, labels, u_test):
        """One replicate's top-label level sets, their data, and the class-wise statistics."""
        rows, mass, moments, unresolved = self._pieces(fitted, cells)
        if unresolved > self.max_unresolved:
            raise ValueError(unresolved_advice(self, unresolved))
        top = np.argmax(rows, axis=1)
        conf = rows[np.arange(top.size), top]
        keys, inv = np.unique(np.column_stack([top, conf]), axis=0, return_inverse=True)
        inv = inv.reshape(-1)
        tl_mass = np.bincount(inv, mass, minlength=len(keys))
        tl_moment = np.bincount(inv, moments[np.arange(top.size), top], minlength=len(keys))
        keep = tl_mass > 0
        keys, tl_mass, tl_moment = keys[keep], tl_mass[keep], tl_moment[keep]
        if len(keys) > self.width:
            raise ValueError(
                f"the fitted {type(self.calibrator).__name__} has {len(keys)} top-label level "
                f"sets, more than grid={self.grid} per class (+ atoms) can resolve; pass a "
                "larger grid or discretise the outputs"
            )
        error = np.abs(tl_moment / tl_mass - keys[:, 1])
        # calibration data per top-label level set, class by class (keys sorted by class)
        out_cal = self._predict(fitted, scores)
        c_cal = np.argmax(out_cal, axis=1)
        h_cal = out_cal[np.arange(c_cal.size), c_cal]
        data = np.zeros((3, len(keys)))
        for c in np.unique(keys[:, 0]).astype(int):
            cols = np.flatnonzero(keys[:, 0] == c)
            mine = c_cal == c
            data[:, cols] = data_by_level(keys[cols, 1], h_cal[mine], labels[mine] == c)
        # class-wise: the level sets of each P_l, and one fresh test point (a piece by mass)
        cum = np.cumsum(mass)
        j = min(int(np.searchsorted(cum, u_test * cum[-1], side="right")), mass.size - 1)
        n_cls = self.n_classes
        class_max, class_ece, class_test = np.zeros(n_cls), np.zeros(n_cls), np.zeros(n_cls)
        for lab in range(n_cls):
            levels, li = np.unique(rows[:, lab], return_inverse=True)
            m = np.bincount(li, mass, minlength=levels.size)
            mo = np.bincount(li, moments[:, lab], minlength=levels.size)
            pos = m > 0
            err = np.zeros(levels.size)
            err[pos] = np.abs(mo[pos] / m[pos] - levels[pos])
            class_max[lab] = err[pos].max()
            class_ece[lab] = np.sum(m * err)
            class_test[lab] = err[li[j]]
        return error, tl_mass, unresolved, data, class_max, class_ece, class_test

    def simulate(self, rng: np.random.Generator, reps: int) -> MulticlassLevelSetOutcome:
        """Simulate ``reps`` replicates: fit, resolve the level sets, exact errors."""
        draws = [self.law.sample(self.n, rng) for _ in range(reps)]  # (n, L) scores, labels
        test_u = rng.random((reps, 2))
        u_test = rng.random(reps)
        width, n_cls = self.width, self.n_classes
        error = np.full((reps, width), np.nan)
        mass = np.zeros((reps, width))
        data = np.zeros((3, reps, width))
        unresolved, n_levels = np.zeros(reps), np.zeros(reps, dtype=np.int64)
        cw = np.zeros((3, reps, n_cls))
        cells = self._cells() if self.law.family == "top_label" else None
        for r in range(reps):
            scores, labels = draws[r]
            fitted = fit_copy(self.calibrator, scores, labels, rng, self.n_bins)
            e, m, u, d, cmax, cece, ctest = self._replicate(
                fitted, cells, scores, labels, u_test[r]
            )
            error[r, : e.size], mass[r, : m.size], data[:, r, : e.size] = e, m, d
            unresolved[r], n_levels[r] = u, e.size
            cw[:, r] = cmax, cece, ctest
        counts = data[0].astype(np.int64)
        return MulticlassLevelSetOutcome(
            error,
            mass,
            test_u,
            np.zeros(reps, dtype=np.int64),
            unresolved,
            n_levels,
            counts,
            data[1],
            data[2],
            counts.sum(axis=1),
            cw[1].mean(axis=1),
            cw[0],
            cw[1],
            cw[2],
        )
