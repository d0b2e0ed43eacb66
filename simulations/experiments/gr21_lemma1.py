"""Lemma 1 of Gupta & Ramdas (2021): the points between two order statistics, exactly.

Given ``S_(l)`` and ``S_(u)``, Lemma 1 says that the ``k = u - l - 1`` unordered points in
between are iid from the score law truncated to ``(S_(l), S_(u))``. Their transforms by
the truncated CDF, ``U_i = (F(S_i) - F(S_(l))) / (F(S_(u)) - F(S_(l)))``, are then iid
Unif(0, 1) -- exactly, with ``F`` the exact CDF of the suite's laws. With ties broken on
an independent uniform (the lexicographic order on ``(S, U)``, App. C.1), ``F`` is the
CDF of that order, ``F(s, u) = P(S < s) + P(S = s) u``, which is continuous: the lemma
holds for atomic laws too. Without tie-breaking it fails at atoms (the counter-test).

Each replicate reports two Kolmogorov-Smirnov statistics whose null laws are exact:

``ks``
    of the k transforms (uniformity, and clustering of the points: exchangeable dependence);
``ks_pairs``
    of the ``floor(k/2)`` pair transforms ``(1 - |U_{2j-1} - U_{2j}|)^2`` of consecutive
    points in a uniformly random labelling (the "unordered" points of the lemma); they are
    iid Unif(0, 1) iff each pair is a pair of independent uniforms (the triangular law of
    ``|U - U'|``), so this tests the independence of consecutive points.

References
----------
Gupta, C. and Ramdas, A. (2021). Distribution-free calibration guarantees for histogram
binning without sample splitting. ICML. Lemma 1 (App. A.2, eqs. 12 and 15), App. C.1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..calibrators.edges import sort_scores
from ..laws.binary import BinaryLaw
from ..validation import check_positive_int
from .base import Experiment, Outcome

__all__ = ["OrderStatisticPITExperiment"]

_TIES = ("lexicographic", "none")
_LABELLINGS = ("random", "sorted")


@dataclass(frozen=True)
class KSOutcome(Outcome):
    """KS statistics of the transformed in-between points and of their pairs ``(R,)``."""

    ks: np.ndarray
    ks_pairs: np.ndarray


def ks_statistic(u):
    """Two-sided one-sample KS statistic against Unif(0, 1) of each row of ``u`` (R, k)."""
    x = np.sort(u, axis=1)
    k = x.shape[1]
    i = np.arange(1, k + 1)
    return np.maximum((i / k - x).max(axis=1), (x - (i - 1) / k).max(axis=1))


@dataclass(frozen=True)
class OrderStatisticPITExperiment(Experiment):
    """The truncated-CDF transforms of the points between ``S_(lower)`` and ``S_(upper)``.

    Parameters
    ----------
    law : BinaryLaw
        Score law (labels are not used).
    n : int
        Sample size.
    lower, upper : int
        Conditioning ranks ``0 <= l`` and ``l + 2 <= u <= n + 1``; rank 0 is the
        hypothetical ``S_(0) := 0`` and rank ``n + 1`` is ``S_(n+1) := 1`` (eq. 12's
        one-sided form is ``u = n + 1``).
    tie_breaking : {"lexicographic", "none"}
        Lexicographic (App. C.1), or none: scores tied with a conditioning order statistic
        then transform to exactly 0 or 1 (the counter-test on atoms).
    labelling : {"random", "sorted"}
        Random (the lemma's unordered points), or sorted: consecutive order statistics,
        which are *not* independent (a negative control of the pair statistic).
    """

    law: BinaryLaw
    n: int
    lower: int
    upper: int
    tie_breaking: str = "lexicographic"
    labelling: str = "random"

    accepts: ClassVar[tuple[str, ...]] = ("binary",)
    outcome_type: ClassVar[type] = KSOutcome

    def __post_init__(self):
        self._check_law(self.law)
        check_positive_int(self.n, "n")
        for name in ("lower", "upper"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int | np.integer):
                raise ValueError(f"{name} must be an integer, got {v!r}")
        if not (self.lower >= 0 and self.lower + 2 <= self.upper <= self.n + 1):
            raise ValueError(
                f"ranks must satisfy 0 <= lower, lower + 2 <= upper <= n + 1 = {self.n + 1}, "
                f"got lower={self.lower!r}, upper={self.upper!r}"
            )
        if self.upper - self.lower - 1 < 2:
            raise ValueError("the pair statistic needs at least 2 in-between points")
        if self.tie_breaking not in _TIES:
            raise ValueError(f"tie_breaking must be one of {_TIES}, got {self.tie_breaking!r}")
        if self.labelling not in _LABELLINGS:
            raise ValueError(f"labelling must be one of {_LABELLINGS}, got {self.labelling!r}")

    @property
    def k(self) -> int:
        """Points strictly between the two order statistics."""
        return int(self.upper - self.lower - 1)

    bins = property(lambda self: 1)

    def label(self) -> str:
        """Readable one-line identification."""
        extra = "" if self.tie_breaking == "lexicographic" else "/no_ties_broken"
        extra += "" if self.labelling == "random" else "/sorted"
        return f"lemma1/{self.law.name}/n={self.n}/l={self.lower}/u={self.upper}{extra}"

    def symbols(self, outcome=None) -> dict:
        """Quantities the bounds take: ``k`` points and ``k_pairs`` pairs."""
        return {"n": int(self.n), "k": self.k, "k_pairs": self.k // 2}

    def _cdf(self, s, u):
        """Exact ``P((S, U) < (s, u))`` in the lexicographic order (u = 0: ``P(S < s)``)."""
        mass, _ = self.law.interval_moments(0.0, 0.0, s, u)
        return mass

    def simulate(self, rng, reps):
        """Simulate ``reps`` replicates with ``rng``; the outcome is described above."""
        s, u = sort_scores(
            self.law.sample_scores((reps, self.n), rng), rng, tie_breaking=self.tie_breaking
        )
        ones, zeros = np.ones((reps, 1)), np.zeros((reps, 1))
        s = np.hstack([zeros, s, ones])  # ranks 0 .. n + 1
        u = np.hstack([zeros, u, ones])
        lo, hi = self.lower, self.upper
        f_lo = self._cdf(s[:, lo], u[:, lo])[:, None]
        f_hi = self._cdf(s[:, hi], u[:, hi])[:, None]
        inner = self._cdf(s[:, lo + 1 : hi], u[:, lo + 1 : hi])
        with np.errstate(invalid="ignore", divide="ignore"):
            pit = np.clip((inner - f_lo) / (f_hi - f_lo), 0.0, 1.0)
        pit = np.nan_to_num(pit, nan=0.0)  # an interval of zero mass (ties): all at 0
        if self.labelling == "random":
            pit = rng.permuted(pit, axis=1)
        m = self.k // 2
        pairs = (1.0 - np.abs(pit[:, 0 : 2 * m : 2] - pit[:, 1 : 2 * m : 2])) ** 2
        return KSOutcome(ks_statistic(pit), ks_statistic(pairs))
