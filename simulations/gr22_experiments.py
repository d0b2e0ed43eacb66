"""Monte Carlo experiments for gr22 (Theorems 1-2, Proposition 4, accuracy preservation).

Same outcome format and seed protocol as :mod:`simulations.experiments`: per replicate and
alpha, ``success`` (the guarantee's event), ``ratio`` (error / radius), ``bound`` and
``n_empty``.

Design (catalog G6, "handling n_l"): Theorem 1's proof conditions on the class counts
``n_l``, so :class:`TopLabelBinningExperiment` draws a *stratified* calibration set with
``n_l = `` the largest-remainder rounding of ``n P(c(X) = l)`` (every n_l >= k by
construction), and the stated radii use the total n. Each class is fitted with
:class:`~simulations.calibrators.RandomizedUniformMassBinning` (gr21 Algorithm 2, delta -> 0
tie-breaking), exactly what :class:`~simulations.multiclass.TopLabelHistogramBinning` runs
per class, vectorised over replicates.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bounds import gr22

from .calibrators import RandomizedUniformMassBinning
from .experiments import Experiment, _check_alphas, _ratio
from .metrics import exact_bin_errors
from .multiclass import (
    ClassWiseHistogramBinning,
    NormalizedHistogramBinning,
    TopLabelHistogramBinning,
    top_label,
)
from .multiclass_laws import DirichletAffineLaw, TopLabelLaw

__all__ = [
    "AccuracyExperiment",
    "ClassWiseBinningExperiment",
    "Prop4Experiment",
    "TopLabelBinningExperiment",
]

_EVENTS = ("marginal", "conditional", "ece_hp", "ece_mean")
_RADII = ("stated", "data_dependent", "without_union_bound", "n_in_place_of_k")


def _fit_exact(law, scores, labels, n_bins, rng):
    """Fit randomized UMD on (R, m) rows and return (mass, error) arrays of shape (R, B)."""
    cal = RandomizedUniformMassBinning(n_bins, delta=0.0)
    batch = cal.fit_batch(scores, labels, n_bins, rng)
    be = exact_bin_errors(batch, law)
    return be.mass, be.error


def _test_point_error(mass, err, u):
    """Error at a fresh test point: its bin is drawn with probability ``mass`` (rows)."""
    cum = np.cumsum(mass, axis=1)
    cum /= cum[:, -1:]
    idx = np.minimum((cum < u[:, None]).sum(axis=1), mass.shape[1] - 1)
    e = np.take_along_axis(err, idx[:, None], axis=1)[:, 0]
    return np.nan_to_num(e)


def _exceed(err, eps):
    """1{err > eps} with NaN (zero-mass outputs, not in Range(h)) never exceeding."""
    return np.where(np.isnan(err), False, err > eps)


def _event_column(event, eps, mass, err, mce, ece, test_u):
    """``(success, ratio, bound)`` of one event at radius ``eps`` (arrays of shape (R,)).

    ``marginal``: the error at a fresh test point (bin drawn with probability ``mass``);
    ``conditional``: the max error ``mce``; ``ece_hp``: ``ece <= eps``; ``ece_mean``:
    ``U >= ece``, whose probability is ``1 - E[ece]`` (claim ``1 - bound``).
    """
    if event == "marginal":
        e = _test_point_error(mass, err, test_u)
        success, stat = e <= eps, e
    elif event == "conditional":
        success, stat = ~_exceed(mce, eps), mce
    elif event == "ece_hp":
        success, stat = ece <= eps, ece
    else:
        success, stat = test_u >= ece, ece
    return success, _ratio(stat, eps), np.full(test_u.shape, eps)


@dataclass(frozen=True)
class TopLabelBinningExperiment(Experiment):
    """TL-HB (Algorithm 8) on a :class:`TopLabelLaw` with exact top-label truth.

    Parameters
    ----------
    law : TopLabelLaw
    n : int
        Total calibration size (stratified over predicted classes).
    alphas : tuple of float
    points_per_bin : int
        k: class l gets ``floor(n_l / k)`` bins.
    event : {"marginal", "conditional", "ece_hp", "ece_mean"}
        Theorem 1's statements (catalog G6-G9): a fresh test point within eps_1 (its bin
        is drawn with the exact bin probabilities, conventions item 7); TL-MCE <= eps_2;
        TL-ECE <= eps_2; and ``E[TL-ECE] <= sqrt(1/(2k))`` (success = ``U >= TL-ECE``,
        claim ``1 - bound``).
    radius : {"stated", "data_dependent", "without_union_bound", "n_in_place_of_k"}
        The stated radius, the proof's data-dependent eps_2', or a negative control:
        eps_1 used for the conditional event (no union bound), or n in place of k.
    n_bins : int or None
        Fixed bins per class instead of floor(n_l / k) (App. E.2 variant).
    """

    law: TopLabelLaw
    n: int
    alphas: tuple = (0.1,)
    points_per_bin: int = 20
    event: str = "conditional"
    radius: str = "stated"
    n_bins: int | None = None

    def __post_init__(self):
        if self.event not in _EVENTS:
            raise ValueError(f"event must be one of {_EVENTS}, got {self.event!r}")
        if self.radius not in _RADII:
            raise ValueError(f"radius must be one of {_RADII}, got {self.radius!r}")
        _check_alphas(self.alphas)
        counts = self.law.class_counts(self.n)
        if counts.min() < self.points_per_bin:
            raise ValueError(f"Theorem 1 needs n_l >= k for every class: n={self.n} gives "
                             f"n_l={counts.tolist()}, k={self.points_per_bin}")

    @property
    def bins(self) -> int:
        return int(self.bins_per_class().sum())

    def bins_per_class(self):
        counts = self.law.class_counts(self.n)
        if self.n_bins is not None:
            return np.minimum(self.n_bins, counts // 2)
        return counts // self.points_per_bin

    def label(self) -> str:
        return (f"TL-HB/{self.law.name}/n={self.n}/k={self.points_per_bin}/{self.event}/"
                f"{self.radius}")

    def _radius(self, alpha, counts, bins):
        k, n = self.points_per_bin, self.n
        if self.radius == "n_in_place_of_k":
            k = n
        if self.radius == "data_dependent":
            return gr22.thm1_conditional_eps_data_dependent(counts, bins, alpha)
        if self.event == "marginal" or self.radius == "without_union_bound":
            return gr22.thm1_marginal_eps(k, alpha)
        if self.event == "ece_mean":
            return gr22.thm1_ece_mean_bound(k)
        return gr22.thm1_conditional_eps(n, k, alpha)

    def simulate(self, rng, reps):
        counts = self.law.class_counts(self.n)
        bins = self.bins_per_class()
        probs = np.asarray(self.law.class_probs)
        per_class = []
        for lab in range(self.law.n_classes):
            u, y = self.law.sample_class(lab, (reps, int(counts[lab])), rng)
            per_class.append(_fit_exact(self.law.laws[lab], u, y, int(bins[lab]), rng))
        mass = np.concatenate([probs[i] * m for i, (m, _) in enumerate(per_class)], axis=1)
        err = np.concatenate([e for _, e in per_class], axis=1)
        tl_ece = np.nansum(mass * np.nan_to_num(err), axis=1)
        tl_mce = np.nanmax(err, axis=1)
        test_u = rng.random(reps)
        cols = [_event_column(self.event, float(self._radius(alpha, counts, bins)), mass, err,
                              tl_mce, tl_ece, test_u) for alpha in self.alphas]
        return self.outcome_per_alpha(cols, np.zeros(reps, dtype=np.int64))


@dataclass(frozen=True)
class ClassWiseBinningExperiment(Experiment):
    """CW-HB (Algorithm 9) on a :class:`DirichletAffineLaw` with exact class-wise truth.

    Every class's binning uses all n points (labels ``1{Y = l}``) with ``floor(n/k)`` bins.

    Parameters
    ----------
    law : DirichletAffineLaw
    n : int
    alphas : tuple of float
        alpha_l (per-class events) or the total alpha (``ece_hp``: alpha_l = alpha / L).
    points_per_bin : int
        k_l = k for every class.
    event : {"marginal", "conditional", "ece_hp", "ece_mean"}
        Theorem 2 (catalog G11-G14) for class ``class_index`` (marginal, conditional) or for
        CW-ECE (ece_hp, ece_mean).
    radius : {"stated", "n_in_place_of_k"}
    class_index : int
        The class of the per-class events (default: the last, the rarest in the shipped
        imbalanced law).
    """

    law: DirichletAffineLaw
    n: int
    alphas: tuple = (0.1,)
    points_per_bin: int = 20
    event: str = "conditional"
    radius: str = "stated"
    class_index: int = -1

    def __post_init__(self):
        if self.event not in _EVENTS:
            raise ValueError(f"event must be one of {_EVENTS}, got {self.event!r}")
        if self.radius not in ("stated", "n_in_place_of_k"):
            raise ValueError(f"radius must be 'stated' or 'n_in_place_of_k', got "
                             f"{self.radius!r}")
        _check_alphas(self.alphas)
        if self.n < self.points_per_bin or self.points_per_bin < 2:
            raise ValueError(f"Theorem 2 needs n >= k >= 2, got n={self.n}, "
                             f"k={self.points_per_bin}")

    @property
    def bins(self) -> int:
        return self.n // self.points_per_bin

    cost = property(lambda self: int(self.n * self.law.n_classes))

    def label(self) -> str:
        return (f"CW-HB/{self.law.name}/n={self.n}/k={self.points_per_bin}/{self.event}/"
                f"class={self.class_index}")

    def simulate(self, rng, reps):
        n_cls = self.law.n_classes
        g, y = self.law.sample((reps, self.n), rng)
        masses, errs = [], []
        for lab in range(n_cls):
            m, e = _fit_exact(self.law.class_law(lab), g[..., lab], (y == lab).astype(float),
                              self.bins, rng)
            masses.append(m)
            errs.append(e)
        k = self.n if self.radius == "n_in_place_of_k" else self.points_per_bin
        cw_ece = np.mean([np.nansum(m * np.nan_to_num(e), axis=1)
                          for m, e in zip(masses, errs, strict=True)], axis=0)
        mass, err = masses[self.class_index], errs[self.class_index]
        test_u = rng.random(reps)
        worst = np.nanmax(err, axis=1)
        n_eff = max(self.n, k)  # the n-in-place-of-k control has k = n
        radius = {"marginal": lambda a: gr22.thm2_marginal_eps(k, a),
                  "conditional": lambda a: gr22.thm2_conditional_eps(n_eff, k, a),
                  "ece_hp": lambda a: gr22.thm2_ece_hp_eps(n_eff, k, a, n_cls),
                  "ece_mean": lambda a: gr22.thm2_ece_mean_bound(k)}[self.event]
        cols = [_event_column(self.event, float(radius(alpha)), mass, err, worst, cw_ece,
                              test_u) for alpha in self.alphas]
        return self.outcome_per_alpha(cols, np.zeros(reps, dtype=np.int64))


@dataclass(frozen=True)
class Prop4Experiment(Experiment):
    """Proposition 4 and App. E.3 on random discrete predictors (catalog G1, G2).

    Each replicate draws a predictor on ``n_support`` points: ``P(X = x) ~ Dirichlet(1)``,
    ``c(x)`` uniform on L classes, ``h(x)`` on a grid of ``n_levels`` values (so that level
    sets mix classes) and ``P(Y = c(X) | x) ~ U[0, 1]``; conf-ECE, TL-ECE, conf-MCE, TL-MCE
    are exact (:func:`bounds.gr22.discrete_top_label_errors`).

    ``event="prop4"``: success iff conf-ECE <= TL-ECE and conf-MCE <= TL-MCE (claim: always).
    ``event="conf_in_place_of_tl"`` (negative control): success iff conf-ECE >= TL-ECE, i.e.
    the confidence ECE does not under-report the top-label ECE -- false on most instances.
    """

    n_support: int = 12
    n_classes: int = 3
    n_levels: int = 3
    event: str = "prop4"
    alphas: tuple = (0.1,)

    def __post_init__(self):
        if self.event not in ("prop4", "conf_in_place_of_tl"):
            raise ValueError(f"event must be 'prop4' or 'conf_in_place_of_tl', got "
                             f"{self.event!r}")
        for name in ("n_support", "n_classes", "n_levels"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)!r}")

    law_name = property(lambda self: f"random_discrete(M={self.n_support})")
    n_total = property(lambda self: self.n_support)
    bins = property(lambda self: self.n_levels)
    cost = property(lambda self: self.n_support * self.n_support)

    def label(self) -> str:
        return f"Prop4/{self.law_name}/L={self.n_classes}/{self.event}"

    def simulate(self, rng, reps):
        shape = (reps, self.n_support)
        prob = rng.dirichlet(np.ones(self.n_support), size=reps)
        c = rng.integers(0, self.n_classes, size=shape)
        levels = np.linspace(0.4, 0.9, self.n_levels)
        h = levels[rng.integers(0, self.n_levels, size=shape)]
        p = rng.random(shape)
        conf_ece, tl_ece, conf_mce, tl_mce = gr22.discrete_top_label_errors(prob, c, h, p)
        tol = 1e-12
        if self.event == "prop4":
            success = (conf_ece <= tl_ece + tol) & (conf_mce <= tl_mce + tol)
            ratio = _ratio(conf_ece, tl_ece)
        else:
            success = conf_ece >= tl_ece - tol
            ratio = _ratio(tl_ece, conf_ece)
        cols = [(success, ratio, tl_ece) for _ in self.alphas]
        return self.outcome_per_alpha(cols, np.zeros(reps, dtype=np.int64))


_ACC_CALIBRATORS = {"tlhb": TopLabelHistogramBinning, "cwhb": ClassWiseHistogramBinning,
                    "nhb": NormalizedHistogramBinning}


@dataclass(frozen=True)
class AccuracyExperiment(Experiment):
    """Accuracy preservation (Sec. 3.2, catalog G4) with the user-facing calibrators.

    Each replicate fits the calibrator on n points of a :class:`TopLabelLaw` and predicts
    ``n_test`` fresh points; success iff every predicted label equals the base model's
    argmax. TL-HB keeps c by construction; CW-HB and N-HB (negative controls) need not.
    """

    law: TopLabelLaw
    n: int = 1000
    n_test: int = 1000
    calibrator: str = "tlhb"
    points_per_bin: int = 20
    alphas: tuple = (0.1,)

    def __post_init__(self):
        if self.calibrator not in _ACC_CALIBRATORS:
            raise ValueError(f"calibrator must be one of {sorted(_ACC_CALIBRATORS)}, got "
                             f"{self.calibrator!r}")

    bins = property(lambda self: self.n // self.points_per_bin)
    cost = property(lambda self: 20 * (self.n + self.n_test))

    def label(self) -> str:
        return f"Accuracy/{self.law.name}/n={self.n}/{self.calibrator}"

    def simulate(self, rng, reps):
        success = np.empty(reps, dtype=bool)
        changed = np.empty(reps)
        for r in range(reps):
            scores, labels = self.law.sample(self.n, rng)
            cal = _ACC_CALIBRATORS[self.calibrator](self.points_per_bin, rng=rng)
            cal.fit(scores, labels)
            test, _ = self.law.sample(self.n_test, rng)
            same = cal.predict(test) == top_label(test)[0]
            success[r] = same.all()
            changed[r] = 1.0 - same.mean()
        cols = [(success, changed, np.zeros(reps)) for _ in self.alphas]
        return self.outcome_per_alpha(cols, np.zeros(reps, dtype=np.int64))
