r"""Population checks of Kumar, Liang & Ma (2019): Proposition 3.3 and Example 3.2.

Both compute calibration errors exactly (no Monte Carlo ground truth) by Gauss-Legendre
quadrature in quantile space. Every binning scheme compared in one replicate is evaluated
on **one** discrete measure: the quadrature nodes of the elementary intervals between the
union of all their edges (and the law's kinks). The binned errors of every scheme and the
unbinned error are then exact functionals of the same positive-weight measure, so an
inequality that holds for every law (Jensen, Proposition 3.3) holds to rounding, and one
that does not (a non-nested "finer" scheme) is seen to fail.

For a model f with score Z = f(X) and calibration curve q(z) = E[Y | Z = z],

.. math:: CE_p(f)^p = E|Z - q(Z)|^p, \quad
          CE_p(f_B)^p = \sum_j P(Z \in I_j) |E[Z | I_j] - E[q(Z) | I_j]|^p.

References
----------
Kumar, A., Liang, P. and Ma, T. (2019). Verified uncertainty calibration. NeurIPS.
Definitions 2.1 and 3.1, Proposition 3.3, Example 3.2.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from scipy import special

from ..validation import check_positive_int
from .base import Experiment, Outcome

__all__ = [
    "Ex32Experiment",
    "Ex32Outcome",
    "Prop33Experiment",
    "Prop33LawExperiment",
    "Prop33Outcome",
    "binned_ce",
]

_P = (1, 2, 3)
_GL_X, _GL_W = np.polynomial.legendre.leggauss(24)


def _nodes(breaks_u):
    """Nodes u and weights of Gauss-Legendre on each interval of ``breaks_u`` (u-space)."""
    lo, hi = breaks_u[:-1, None], breaks_u[1:, None]
    u = lo + (hi - lo) * (_GL_X + 1) / 2
    w = (hi - lo) / 2 * _GL_W
    return u.ravel(), w.ravel()


def binned_ce(z, q, w, edges, p):
    """``CE_p(f_B)`` of the scheme with interior ``edges`` on the measure ``(z, w)``."""
    idx = np.searchsorted(np.asarray(edges), z, side="left")
    nb = len(edges) + 1
    mass = np.bincount(idx, w, nb)
    mz = np.bincount(idx, w * z, nb)
    mq = np.bincount(idx, w * q, nb)
    ok = mass > 0
    gap = np.abs(mz[ok] - mq[ok]) / mass[ok]
    return float(np.sum(mass[ok] * gap**p) ** (1 / p))


def _ce(z, q, w, p):
    return float(np.sum(w * np.abs(z - q) ** p) ** (1 / p))


@dataclass(frozen=True)
class Prop33Outcome(Outcome):
    """Exact errors per replicate (random law, random schemes); ``*_lp`` for p = 1, 2, 3."""

    ce_l1: np.ndarray
    ce_l2: np.ndarray
    ce_l3: np.ndarray
    binned_l1: np.ndarray
    binned_l2: np.ndarray
    binned_l3: np.ndarray
    nested_l2: np.ndarray
    finer_l2: np.ndarray


@dataclass(frozen=True)
class Prop33Experiment(Experiment):
    """Random laws and binning schemes; CE_p(f) and CE_p(f_B) by quadrature.

    Each replicate draws a score law Beta(a, b) (a, b log-uniform in [0.3, 5]), a rough
    calibration curve ``q(z) = clip(sigmoid(k logit z + m) + A sin(2 pi w z), 0, 1)``, a
    scheme of B in [2, ``max_bins``] bins with uniform random edges, its nested refinement
    (every bin split at a random point) and a non-nested scheme with 2B random bins.
    """

    max_bins: int = 30

    outcome_type: ClassVar[type] = Prop33Outcome

    def __post_init__(self):
        check_positive_int(self.max_bins, "max_bins", 2)

    n = property(lambda self: 0)
    bins = property(lambda self: self.max_bins)
    law_name = property(lambda self: "random_beta_rough_q")
    cost = property(lambda self: 2000)

    def label(self) -> str:
        """Readable one-line identification."""
        return f"Prop33/random laws/B<={self.max_bins}"

    def simulate(self, rng, reps):
        """``reps`` random (law, schemes) with exact errors."""
        out = {f: np.empty(reps) for f in Prop33Outcome.__dataclass_fields__}
        for r in range(reps):
            a, b = np.exp(rng.uniform(np.log(0.3), np.log(5.0), 2))
            k, m = rng.uniform(0.3, 3.0), rng.uniform(-1, 1)
            amp, freq = rng.uniform(0, 0.3), rng.uniform(0.5, 8)
            nb = int(rng.integers(2, self.max_bins + 1))
            edges = np.sort(rng.random(nb - 1))
            full = np.concatenate([[0.0], edges, [1.0]])
            nested = np.sort(np.concatenate([edges, rng.uniform(full[:-1], full[1:])]))
            finer = np.sort(rng.random(2 * nb - 1))
            cuts = np.unique(np.concatenate([[0.0, 1.0], nested, finer]))
            u, w = _nodes(special.betainc(a, b, cuts))
            z = special.betaincinv(a, b, u)
            with np.errstate(divide="ignore"):
                logit = np.log(z) - np.log1p(-z)
            q = np.clip(special.expit(k * logit + m) + amp * np.sin(2 * np.pi * freq * z), 0, 1)
            for p in _P:
                out[f"ce_l{p}"][r] = _ce(z, q, w, p)
                out[f"binned_l{p}"][r] = binned_ce(z, q, w, edges, p)
            out["nested_l2"][r] = binned_ce(z, q, w, nested, 2)
            out["finer_l2"][r] = binned_ce(z, q, w, finer, 2)
        return Prop33Outcome(**out)


@dataclass(frozen=True)
class Prop33LawExperiment(Experiment):
    """Proposition 3.3 on a given binary law: random schemes of ``n_bins`` bins, exact errors.

    The score Z is the law's (a Beta part plus atoms), q its ``E[Y | Z]``. Each replicate
    draws a scheme of B bins with edges at the Beta part's quantiles of B - 1 uniform
    levels, its nested refinement (every bin split at a uniform point) and a non-nested
    scheme of 2B bins drawn the same way; every error is evaluated on one measure: 24-node
    Gauss-Legendre on the Beta part between all the edges (weight: its mass) plus the atoms
    (their masses and means), as :class:`Prop33Experiment`.
    """

    law: object
    n_bins: int

    accepts: ClassVar[tuple[str, ...]] = ("binary",)
    outcome_type: ClassVar[type] = Prop33Outcome

    def __post_init__(self):
        self._check_law(self.law)
        check_positive_int(self.n_bins, "n_bins", 2)

    n = property(lambda self: 0)
    bins = property(lambda self: self.n_bins)
    cost = property(lambda self: 20 * self.n_bins)

    def label(self) -> str:
        """Readable one-line identification."""
        return f"Prop33/{self.law.name}/B={self.n_bins}"

    def symbols(self, outcome=None) -> dict:
        """``n_bins``."""
        return {"n_bins": self.n_bins}

    def _edges(self, rng, k):
        return np.sort(self.law.scores.ppf(rng.random(k)))

    def simulate(self, rng, reps):
        """``reps`` random schemes (and refinements) with exact errors on the law."""
        scores = self.law.scores
        atoms = np.asarray(scores.atoms, dtype=float)
        atom_w = np.asarray(scores.atom_probs, dtype=float)
        atom_q = np.asarray(self.law.atom_means(), dtype=float)
        out = {f: np.empty(reps) for f in Prop33Outcome.__dataclass_fields__}
        for r in range(reps):
            edges = self._edges(rng, self.n_bins - 1)
            full = np.concatenate([[0.0], edges, [1.0]])
            nested = np.sort(np.concatenate([edges, rng.uniform(full[:-1], full[1:])]))
            finer = self._edges(rng, 2 * self.n_bins - 1)
            cuts = np.unique(np.concatenate([[0.0, 1.0], nested, finer]))
            u, w = _nodes(scores.cdf(cuts))
            z = np.concatenate([scores.ppf(u), atoms])
            w = np.concatenate([w * scores.continuous_weight, atom_w])
            q = np.concatenate([np.asarray(self.law.eta(z[: u.size]), dtype=float), atom_q])
            for p in _P:
                out[f"ce_l{p}"][r] = _ce(z, q, w, p)
                out[f"binned_l{p}"][r] = binned_ce(z, q, w, edges, p)
            out["nested_l2"][r] = binned_ce(z, q, w, nested, 2)
            out["finer_l2"][r] = binned_ce(z, q, w, finer, 2)
        return Prop33Outcome(**out)


@dataclass(frozen=True)
class Ex32Outcome(Outcome):
    """Per replicate: exact ``min_p CE_p(f)``, ``max_p CE_p(f_B)`` and their gap."""

    ce_min: np.ndarray
    binned_max: np.ndarray
    gap: np.ndarray


@dataclass(frozen=True)
class Ex32Experiment(Experiment):
    """Example 3.2's law built for random binning schemes; both errors by quadrature.

    Scheme: equal-width with B in {2, 10, 15, 100} or B in [2, 100] uniform random edges.
    Law (in z = f(X); a bijection f only changes the law of X): with ``e`` the first edge
    above 1/2, ``c = 1/2 + min((e - 1/2)/2, 0.005)`` and ``w = 0.8 min(c - 1/2, e - c)``,
    ``Z ~ U[c - w, c + w]`` and ``q(z) = 1`` above c, ``2c - 1`` below. Its bin has mean
    score and mean label c, so CE(f_B) = 0, while ``|z - q(z)| >= 1 - c - w`` everywhere.
    """

    outcome_type: ClassVar[type] = Ex32Outcome

    n = property(lambda self: 0)
    bins = property(lambda self: 100)
    law_name = property(lambda self: "ex32_construction")
    cost = property(lambda self: 500)

    def label(self) -> str:
        """Readable one-line identification."""
        return "Ex32/random schemes"

    def simulate(self, rng, reps):
        """``reps`` random schemes, each with its constructed law."""
        ce_min, binned_max = np.empty(reps), np.empty(reps)
        for r in range(reps):
            if rng.random() < 0.5:
                nb = int(rng.choice([2, 10, 15, 100]))
                edges = np.arange(1, nb) / nb
            else:
                edges = np.sort(rng.random(int(rng.integers(1, 100))))
            above = edges[edges > 0.5]
            e = above[0] if above.size else 1.0
            c = 0.5 + min((e - 0.5) / 2, 0.005)
            w = 0.8 * min(c - 0.5, e - c)
            cuts = np.unique(
                np.concatenate([[c - w, c, c + w], edges[(edges > c - w) & (edges < c + w)]])
            )
            u, wt = _nodes((cuts - (c - w)) / (2 * w))
            z = c - w + 2 * w * u
            q = np.where(z > c, 1.0, 2 * c - 1)
            ce_min[r] = min(_ce(z, q, wt, p) for p in _P)
            binned_max[r] = max(binned_ce(z, q, wt, edges, p) for p in _P)
        return Ex32Outcome(ce_min, binned_max, ce_min - binned_max)
