"""A calibrator of your own on a binary law with exact truth: events on its level sets.

Any object with ``fit(scores, labels)`` and ``predict(scores)`` (scikit-learn convention;
``predict_proba(scores)[:, 1]`` is used where the object has it) stands in for a binning
method. Every replicate fits a fresh copy (``copy.deepcopy`` of the object given, never
fitted by calcheck) on ``n`` draws of the law; ``fit`` also receives ``rng=`` (the block's
generator) and ``n_bins=`` where its signature takes them.

How the events are evaluated
----------------------------
A fitted map ``h`` need not expose bins. Its *level sets* ``{s : h(s) = r}`` play their
part: the conditional error of output ``r`` is ``|E[Y | h(S) = r] - r|``, and the events of
:data:`calcheck.theory_checks.checks.methods.BINARY_EVENTS` (every output within eps, a fresh test
point within eps, the l1 / l2 ECE) read these per-output errors and masses as they read a binning
map's bins. The level sets are found on the score law's continuous part in
probability space:

1. ``grid`` cells of equal probability ``1 / grid``; ``h`` is evaluated at their edges.
2. A cell (piece) whose two ends ``h`` maps to different values is split in two at its
   probability midpoint, up to :data:`SPLIT_DEPTH` times, while at most ``grid // 4`` pieces
   are unresolved: a jump of a step function (binning, isotonic regression) is located to
   within ``2^-16 / grid`` of probability.
3. A piece whose ends agree is taken as constant (true for monotone maps: every calibrator
   of the five papers); a piece still unresolved takes the value at its midpoint, and its
   probability is reported per replicate as ``unresolved_mass`` (sklearn's
   ``IsotonicRegression`` interpolates linearly between its blocks: those stretches stay
   unresolved, each piece a level set of its own, i.e. the pointwise error ``|eta - h|``
   at the piece's resolution). More than ``max_unresolved`` of it refuses the replicate
   with an error: the map does not have finitely many outputs at the grid's resolution.
4. Every atom of the score law is a piece of its own, with its exact mass and mean.

Each piece's mass and first moment ``E[Y 1{S in piece}]`` are exact
(:meth:`~calcheck.simulations.laws.binary.BinaryLaw.interval_moments` on the continuous part);
pieces with equal outputs are merged, so ``E[Y | h(S) = r]`` is exact wherever the map is
resolved.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..laws.binary import BinaryLaw
from ..validation import check_positive_int
from .base import BLOCK_REPS, BinOutcome, Experiment, _jsonable
from .calibrator_protocol import (
    AllowUnresolved,
    allow_unresolved,
    calibrator_call,
    check_calibrator,
    describe_calibrator,
    fit_copy,
    unresolved_advice,
    unwrap_calibrator,
)

__all__ = [
    "SPLIT_DEPTH",
    "AllowUnresolved",
    "CalibratorExperiment",
    "LevelSetOutcome",
    "allow_unresolved",
    "check_calibrator",
    "data_by_level",
    "describe_calibrator",
]


#: The level sets' calibration data an outcome records (the data keywords of the bounds).
LEVEL_SET_DATA = ("counts", "means", "variances", "n_used")
#: Times a piece on which the fitted map changes value is halved (see the module doc).
SPLIT_DEPTH = 16


@dataclass(frozen=True)
class LevelSetOutcome(BinOutcome):
    """Exact per-output errors of fitted maps: one column per level set (padded).

    Attributes
    ----------
    error, mass, test_u, n_empty
        As in :class:`~calcheck.simulations.experiments.base.BinOutcome`; a column is an output of
        the fitted map (its level set), padded with NaN error and zero mass to the
        experiment's width; ``n_empty`` is 0 (a level set is never empty).
    unresolved_mass : ndarray (R,)
        Probability of the pieces on which the map still changes value after splitting
        (treated as constant at their midpoint value).
    n_levels : ndarray (R,)
        Distinct outputs of positive mass.
    counts, means, variances : ndarray (R, width)
        The calibration data of each level set (column by column with ``error``): points
        whose output is the level set's, their label mean and biased sample variance
        (``mean((y - mean)^2)``); a level set without points has mean its output and
        variance 0; padding columns are 0.
    n_used : ndarray (R,)
        Calibration points whose output is one of the level sets' (``counts`` summed):
        ``n`` unless a point's output lies in a stretch left unresolved.
    """

    unresolved_mass: np.ndarray
    n_levels: np.ndarray
    counts: np.ndarray
    means: np.ndarray
    variances: np.ndarray
    n_used: np.ndarray


def data_by_level(levels: np.ndarray, outputs: np.ndarray, labels: np.ndarray):
    """Calibration counts, label means and biased variances per level (``levels`` sorted).

    ``outputs`` are the fitted map's values at the calibration scores; a point whose value
    is not one of ``levels`` is counted nowhere. Returns ``(counts, means, variances)``,
    each of the shape of ``levels``; a level without points has mean the level itself (what
    the map predicts there, as :data:`calcheck.theory_checks.checks.methods.DATA_KEYWORDS` says)
    and variance 0.
    """
    idx = np.minimum(np.searchsorted(levels, outputs), max(levels.size - 1, 0))
    hit = levels[idx] == outputs if levels.size else np.zeros(outputs.shape, bool)
    idx, y = idx[hit], np.asarray(labels, dtype=float)[hit]
    counts = np.bincount(idx, minlength=levels.size)
    safe = np.maximum(counts, 1)
    means = np.bincount(idx, y, minlength=levels.size) / safe
    squares = np.bincount(idx, y * y, minlength=levels.size) / safe
    variances = np.maximum(squares - means * means, 0.0)
    return counts, np.where(counts > 0, means, levels), variances


def split_changing_cells(law, lo_q, hi_q, h_lo, h_hi, predict, same, limit):
    """Halve the cells on which a fitted map changes value until each piece has one output.

    One home for the binary and the multiclass level sets (the module doc, steps 2-3). The
    cells are ``(lo_q, hi_q)`` in the quantile of ``law``'s continuous score part, with the
    map's outputs ``h_lo`` / ``h_hi`` at their ends; ``predict(q)`` gives the outputs at
    quantiles ``q`` and ``same(a, b)`` says where two outputs are equal. After
    ``SPLIT_DEPTH`` halvings, or when more than ``limit`` cells still change, the remaining
    cells take the output at their midpoint and count as unresolved.

    Returns
    -------
    tuple or None
        ``(outputs, mass, moment, unresolved)``: each piece's output, exact probability and
        ``E[Y 1{S in piece}]``, and the probability of the unresolved pieces; None when no
        cell changes value.
    """
    ppf = law.scores.ppf
    done_lo, done_hi, done_v, n_unresolved = [], [], [], 0
    for depth in range(SPLIT_DEPTH + 1):
        if lo_q.size == 0:
            break
        mid = 0.5 * (lo_q + hi_q)
        h_mid = predict(mid)
        if depth == SPLIT_DEPTH or lo_q.size > limit:
            n_unresolved = lo_q.size  # still varying: the output at the midpoint
            done_lo.append(lo_q)
            done_hi.append(hi_q)
            done_v.append(h_mid)
            break
        lo_q, hi_q = np.concatenate([lo_q, mid]), np.concatenate([mid, hi_q])
        h_lo, h_hi = np.concatenate([h_lo, h_mid]), np.concatenate([h_mid, h_hi])
        ok = same(h_lo, h_hi)
        done_lo.append(lo_q[ok])
        done_hi.append(hi_q[ok])
        done_v.append(h_lo[ok])
        lo_q, hi_q, h_lo, h_hi = lo_q[~ok], hi_q[~ok], h_lo[~ok], h_hi[~ok]
    if not done_lo:
        return None
    lo_s, hi_s = ppf(np.concatenate(done_lo)), ppf(np.concatenate(done_hi))
    wc = law.scores.continuous_weight
    mass = wc * (law.scores.cdf(hi_s) - law.scores.cdf(lo_s))
    unresolved = float(mass[-n_unresolved:].sum()) if n_unresolved else 0.0
    moment = wc * law.eta.integral(lo_s, hi_s, law.scores)
    return np.concatenate(done_v), mass, moment, unresolved


@dataclass(frozen=True)
class CalibratorExperiment(Experiment):
    """A user's calibrator fitted on n draws of a binary law: exact errors of its outputs.

    Parameters
    ----------
    calibrator : object
        ``fit(scores, labels)`` and ``predict(scores)`` or ``predict_proba(scores)``; 1-D
        scores in, outputs in [0, 1] out. Copied before every fit.
    law : BinaryLaw
    n : int
        Calibration points per replicate.
    n_bins : int
        The bound's ``B`` (passed to ``fit`` as ``n_bins=`` where it accepts it).
    grid : int, default 1024
        Equal-probability cells that resolve the level sets (module doc); also the most
        outputs a fitted map may have (plus one per atom).
    max_unresolved : float, optional
        The most probability on which a fitted map may still vary after splitting (the
        module doc's step 3); default 0.1, or the one of a calibrator wrapped by
        :func:`allow_unresolved`. Above it the replicate is refused: the map does not have
        finitely many outputs at this grid's resolution (Platt scaling, say), and the
        events would be those of its discretisation. ``1.0`` accepts that discretisation.

    Notes
    -----
    Symbols for bounds: ``n`` and ``n_bins``. The replicates are fitted one by one (the
    calibrator is the user's code); the draws are vectorised.
    """

    calibrator: Any
    law: BinaryLaw
    n: int
    n_bins: int
    grid: int = 1024
    max_unresolved: float | None = None

    accepts: ClassVar[tuple[str, ...]] = ("binary",)
    outcome_type: ClassVar[type] = LevelSetOutcome

    def __post_init__(self):
        check_positive_int(self.n, "n")
        check_positive_int(self.n_bins, "n_bins")
        check_positive_int(self.grid, "grid")
        unwrap_calibrator(self)
        self._check_law(self.law)
        self._check_calibrator()
        # Described once, here: a worker process may not find the source of a class defined
        # in a script or notebook (nor the file a user's fit reads), and the key must be the
        # one the parent computed. A multiclass law's classes are the probe's score columns.
        description = describe_calibrator(self.calibrator, getattr(self.law, "n_classes", None))
        object.__setattr__(self, "_calibrator_description", description)

    def _check_calibrator(self) -> None:
        """Refuse, now, a calibrator this experiment cannot fit or evaluate."""
        check_calibrator(self.calibrator)

    @property
    def width(self) -> int:
        """Columns of the outcome: the most outputs a fitted map may have."""
        return int(self.grid) + len(self.law.scores.atoms)

    def description(self) -> dict:
        """JSON-able content: the calibrator as :func:`describe_calibrator` gives it, law, sizes.

        The calibrator by class, parameters and source hash and, for one of the user's, its
        values at fixed probe data (a file its ``fit`` reads changes the key).
        """
        return {
            "experiment": type(self).__name__,
            "calibrator": self._calibrator_description,
            "law": _jsonable(self.law),
            "n": int(self.n),
            "n_bins": int(self.n_bins),
            "grid": int(self.grid),
            "max_unresolved": float(self.max_unresolved),
            "split_depth": SPLIT_DEPTH,
            "block_reps": BLOCK_REPS,
        }

    def label(self) -> str:
        """Readable one-line identification."""
        return f"{type(self.calibrator).__name__}/{self.law.name}/n={self.n}/B={self.n_bins}"

    @classmethod
    def code_paths(cls) -> tuple[str, ...]:
        """Sources whose change invalidates stored outcomes (the shared calibrator protocol too)."""
        return (*super().code_paths(), "simulations/experiments/calibrator_protocol.py")

    def symbols(self, outcome=None) -> dict:
        """Quantities the bounds take, named as in the bound functions.

        ``n`` and ``n_bins``; given an outcome, also each level set's calibration data
        ``counts``, ``means``, ``variances`` ``(R, width)`` and ``n_used`` ``(R,)``
        (:class:`LevelSetOutcome`).
        """
        out = {"n": int(self.n), "n_bins": int(self.n_bins)}
        if outcome is not None:  # the data keywords, as the outcome records them
            out.update({name: getattr(outcome, name) for name in LEVEL_SET_DATA})
        return out

    # ------------------------------------------------------------------ fitting
    def _predict(self, fitted, scores: np.ndarray) -> np.ndarray:
        name = type(self.calibrator).__name__
        how = "predict_proba" if callable(getattr(fitted, "predict_proba", None)) else "predict"
        raw = calibrator_call(fitted, how, scores)  # the user's exception: one line naming it
        try:
            out = np.asarray(raw, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(
                f"{name}.{how} must return probabilities in [0, 1], got "
                f"{type(raw).__name__} {raw!r:.80}"
            ) from None
        if how == "predict_proba" and out.ndim == 2 and out.shape == (scores.size, 2):
            out = out[:, 1]
        if out.shape != scores.shape:
            raise ValueError(
                f"{name}.{how} must return one probability per score (shape {scores.shape}, "
                f"or (m, 2) from predict_proba), got shape {out.shape}"
            )
        bad = ~np.isfinite(out) | (out < 0) | (out > 1)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            hint = (
                " (scikit-learn's IsotonicRegression returns NaN outside its training range "
                "unless out_of_bounds='clip')"
                if np.isnan(out[i])
                else ""
            )
            raise ValueError(
                f"{name}.{how} must return probabilities in [0, 1], got {float(out[i])!r} at score "
                f"{float(scores[i])!r}{hint}"
            )
        return out

    def _fit(self, scores, labels, rng):
        return fit_copy(self.calibrator, scores, labels, rng, self.n_bins)

    def _cells(self):
        """Exact mass and first moment of the ``grid`` base cells (shared by replicates)."""
        law = self.law
        q = np.linspace(0.0, 1.0, self.grid + 1)
        s = law.scores.ppf(q)
        wc = law.scores.continuous_weight
        mass = wc * (law.scores.cdf(s[1:]) - law.scores.cdf(s[:-1]))
        moment = wc * law.eta.integral(s[:-1], s[1:], law.scores)
        return q, s, mass, moment

    def _level_sets(self, fitted, cells):
        """Per-output errors and masses of one fitted map (the module doc's pieces)."""
        law = self.law
        ppf = law.scores.ppf
        values, masses, moments = [], [], []
        unresolved = 0.0
        if law.scores.continuous_weight > 0:
            q, s, cell_mass, cell_moment = cells
            h_edges = self._predict(fitted, s)
            same = h_edges[:-1] == h_edges[1:]
            values.append(h_edges[:-1][same])  # whole cells: moments known
            masses.append(cell_mass[same])
            moments.append(cell_moment[same])
            lo_q, hi_q = q[:-1][~same], q[1:][~same]
            h_lo, h_hi = h_edges[:-1][~same], h_edges[1:][~same]
            split = split_changing_cells(
                law,
                lo_q,
                hi_q,
                h_lo,
                h_hi,
                lambda m: self._predict(fitted, ppf(m)),
                np.equal,
                self.grid // 4,
            )
            if split is not None:
                split_values, split_mass, split_moment, unresolved = split
                values.append(split_values)
                masses.append(split_mass)
                moments.append(split_moment)
        if law.scores.atoms:
            atoms = np.asarray(law.scores.atoms, dtype=float)
            probs = np.asarray(law.scores.atom_probs, dtype=float)
            values.append(self._predict(fitted, atoms))
            masses.append(probs)
            moments.append(probs * np.asarray(law.atom_means(), dtype=float))
        levels, inverse = np.unique(np.concatenate(values), return_inverse=True)
        mass = np.bincount(inverse, np.concatenate(masses), minlength=levels.size)
        moment = np.bincount(inverse, np.concatenate(moments), minlength=levels.size)
        keep = mass > 0
        levels, mass, moment = levels[keep], mass[keep], moment[keep]
        if levels.size > self.width:
            raise ValueError(
                f"the fitted {type(self.calibrator).__name__} has {levels.size} distinct "
                f"outputs on the grid, more than grid={self.grid} (+ atoms) can resolve; "
                "calcheck's events concern maps with finitely many outputs (binning, "
                "isotonic, scaling-binning): pass a larger grid or discretise the outputs"
            )
        if unresolved > self.max_unresolved:
            raise ValueError(unresolved_advice(self, unresolved))
        error = np.abs(moment / mass - levels)
        return error, mass, unresolved, levels

    def simulate(self, rng: np.random.Generator, reps: int) -> LevelSetOutcome:
        """Simulate ``reps`` replicates: fit, resolve the level sets, exact errors."""
        law = self.law
        scores = law.sample_scores((reps, self.n), rng)
        labels = law.sample_labels(scores, rng)
        test_u = rng.random((reps, 2))
        width = self.width
        error = np.full((reps, width), np.nan)
        mass = np.zeros((reps, width))
        unresolved = np.zeros(reps)
        n_levels = np.zeros(reps, dtype=np.int64)
        counts = np.zeros((reps, width), dtype=np.int64)
        means = np.zeros((reps, width))
        variances = np.zeros((reps, width))
        cells = self._cells() if law.scores.continuous_weight > 0 else None
        for r in range(reps):
            fitted = self._fit(scores[r], labels[r], rng)
            e, m, u, levels = self._level_sets(fitted, cells)
            error[r, : e.size] = e
            mass[r, : m.size] = m
            unresolved[r] = u
            n_levels[r] = e.size
            data = data_by_level(levels, self._predict(fitted, scores[r]), labels[r])
            counts[r, : e.size], means[r, : e.size], variances[r, : e.size] = data
        return LevelSetOutcome(
            error,
            mass,
            test_u,
            np.zeros(reps, dtype=np.int64),
            unresolved,
            n_levels,
            counts,
            means,
            variances,
            counts.sum(axis=1),
        )
