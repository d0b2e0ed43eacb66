"""Data-generating laws with exact ground truth (the D of ADEMP).

A :class:`BinaryLaw` is a score law ``Q_S`` on [0, 1] (a Beta continuous part, possibly with
atoms), a conditional mean ``eta(s) = E[Y | S = s]``, and a label model (binary, or
[0, 1]-valued Beta labels with mean ``eta``). For any bin it returns the exact mass and the
exact first moment ``E[Y 1{S in bin}]`` so that ``E[Y | S in bin]`` is exact.

Bins are lexicographic intervals on ``(score, U)`` (the tie-breaking of Gupta & Ramdas 2021,
Algorithm 2): a bin is ``[(lo_s, lo_u), (hi_s, hi_u))`` and an atom ``a`` of mass ``p``
contributes

* ``p`` if ``lo_s < a < hi_s``,
* ``p (1 - lo_u)`` if ``a == lo_s < hi_s`` (test points with ``U >= lo_u``),
* ``p hi_u`` if ``lo_s < hi_s == a``,
* ``p max(hi_u - lo_u, 0)`` if ``a == lo_s == hi_s``.

A calibrator without tie-breaking uses ``u = 0`` at every interior edge (a score equal to
an edge goes wholly to the upper bin); the outer edges are ``(0, 0)`` and ``(1, 1)`` so
the first bin holds an atom at 0 and the last one, closed at 1, an atom at 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from .base import Law
from .callable_eta import CallableMean
from .eta import ConditionalMean, ScoreLaw, real_number

__all__ = [
    "BINARY_LAWS",
    "BinaryLaw",
    "ConditionalMean",
    "ScoreLaw",
    "staircase_law",
]


@dataclass(frozen=True)
class BinaryLaw(Law):
    """Joint law of (score, label) with exact ground truth.

    Parameters
    ----------
    scores : ScoreLaw
    eta : ConditionalMean or CallableMean
        A named family, or any vectorised function (:meth:`from_callable`).
    labels : {"binary", "beta"}
        Binary ``Y ~ Bernoulli(eta(S))`` or ``Y ~ Beta(kappa eta, kappa (1 - eta))`` in
        [0, 1] (allowed by gr21's definitions; every Hoeffding step still holds).
    concentration : float
        ``kappa`` of the Beta labels.
    name : str
        Display name.
    atom_eta : tuple of float
        ``E[Y | S = a_j]`` for each atom of ``scores`` (default: ``eta(a_j)``), so that an
        atomic law can give every atom its own conditional mean.

    Examples
    --------
    Beta(2, 5) scores with a Platt-shaped conditional mean, and an exact truth: the mass and
    the label moment of the interval [0, 0.5] of scores.

    >>> import numpy as np
    >>> from calcheck import BinaryLaw, ConditionalMean, ScoreLaw
    >>> law = BinaryLaw(ScoreLaw(2.0, 5.0), ConditionalMean("logistic", {"slope": 2.0}),
    ...                 name="mine")
    >>> scores, labels = law.sample(5, np.random.default_rng(0))
    >>> scores.shape, set(np.unique(labels)) <= {0.0, 1.0}
    ((5,), True)
    """

    family: ClassVar[str] = "binary"
    scores: ScoreLaw = field(default_factory=ScoreLaw)
    eta: ConditionalMean = field(default_factory=ConditionalMean)
    labels: str = "binary"
    concentration: float = 4.0
    name: str = "custom"
    atom_eta: tuple[float, ...] = ()

    def __post_init__(self):
        if self.labels not in ("binary", "beta"):
            raise ValueError(f"labels must be 'binary' or 'beta', got {self.labels!r}")
        if not (self.concentration > 0 and math.isfinite(self.concentration)):
            raise ValueError(f"concentration must be finite and > 0, got {self.concentration!r}")
        if self.atom_eta:
            values = tuple(real_number(v, "atom_eta") for v in self.atom_eta)
            if len(values) != len(self.scores.atoms):
                raise ValueError(
                    f"atom_eta needs one value per atom ({len(self.scores.atoms)}),"
                    f" got {self.atom_eta!r}"
                )
            if any(not (0.0 <= v <= 1.0) for v in values):
                raise ValueError(f"atom_eta values must lie in [0, 1], got {self.atom_eta!r}")
            object.__setattr__(self, "atom_eta", values)

    @classmethod
    def from_callable(
        cls,
        eta,
        scores: ScoreLaw | None = None,
        *,
        name: str = "custom",
        labels: str = "binary",
        concentration: float = 4.0,
        atom_eta=(),
    ) -> BinaryLaw:
        """A law whose conditional mean is any vectorised function ``eta(s)``.

        Parameters
        ----------
        eta : callable
            ``eta(s)`` for a 1-d numpy array of scores in [0, 1] returns an array of the
            same shape with values in [0, 1], deterministically (checked on a grid of 1029
            scores now; :class:`~calcheck.simulations.laws.callable_eta.CallableMean`).
        scores : ScoreLaw, optional
            The score law (default ``ScoreLaw()``, uniform on [0, 1]); atoms allowed.
        name, labels, concentration, atom_eta
            As in :class:`BinaryLaw`.

        Returns
        -------
        BinaryLaw
            Exact at the atoms; on the continuous part every bin's ``E[Y | S in bin]`` is
            integrated by adaptive tanh-sinh quadrature to ``1e-10`` of the bin's mass
            (:mod:`~calcheck.simulations.laws.callable_eta` states the bound). Its content
            key follows the function's code, state and values.

        Raises
        ------
        ValueError
            Naming ``eta`` or ``scores`` and echoing the offending value: not callable, not
            vectorised (another shape), NaN or values outside [0, 1], not deterministic,
            or a ``scores`` that is not a :class:`ScoreLaw`.

        Examples
        --------
        >>> import numpy as np
        >>> from calcheck import BinaryLaw
        >>> law = BinaryLaw.from_callable(lambda s: s**2, name="square")
        >>> mass, moment = law.interval_moments(0.0, 0.0, 0.5, 0.0)
        >>> round(float(moment / mass), 10)  # E[S^2 | S < 1/2] = 1/12
        0.0833333333
        >>> BinaryLaw.from_callable(lambda s: 2 * s)
        Traceback (most recent call last):
        ...
        ValueError: eta ...<lambda> must return values in [0, 1] (no NaN), got 1.001953125 ...
        """
        if scores is None:
            scores = ScoreLaw()
        if not isinstance(scores, ScoreLaw):
            raise ValueError(
                f"scores must be a ScoreLaw (Beta part and atoms), got "
                f"{type(scores).__name__} {scores!r:.80}"
            )
        return cls(scores, CallableMean(eta), labels, concentration, name, tuple(atom_eta))

    def atom_means(self) -> tuple[float, ...]:
        """``E[Y | S = a_j]`` of every atom."""
        if self.atom_eta:
            return self.atom_eta
        return tuple(float(self.eta(a)) for a in self.scores.atoms)

    def conditional_mean(self, scores) -> np.ndarray:
        """``E[Y | S = s]``: eta on the continuous part, the atom's own value at an atom."""
        mean = np.asarray(self.eta(scores), dtype=float)
        if self.atom_eta:
            s = np.asarray(scores, dtype=float)
            for atom, value in zip(self.scores.atoms, self.atom_eta, strict=True):
                mean = np.where(s == atom, value, mean)
        return mean

    @property
    def has_atoms(self) -> bool:
        """Whether the score law has atoms."""
        return bool(self.scores.atoms)

    def sample_scores(self, size, rng: np.random.Generator) -> np.ndarray:
        """Draw scores of the given shape."""
        return self.scores.sample(size, rng)

    def sample_labels(self, scores, rng: np.random.Generator) -> np.ndarray:
        """Labels given scores (conditionally independent across points)."""
        if self.labels == "binary":
            return self._binary_labels(scores, rng).astype(np.float64)
        mean = self.conditional_mean(scores)
        k = self.concentration
        a = np.maximum(k * mean, 1e-300)
        b = np.maximum(k * (1.0 - mean), 1e-300)
        y = rng.beta(a, b)
        return np.where(mean <= 0, 0.0, np.where(mean >= 1, 1.0, y))

    def _binary_labels(self, scores, rng: np.random.Generator) -> np.ndarray:
        """Boolean ``Y = 1`` of binary labels: the draws of :meth:`sample_labels`."""
        mean = self.conditional_mean(scores)
        return rng.random(np.shape(scores)) < mean

    def sample(self, size, rng: np.random.Generator):
        """Draw ``(scores, labels)`` of the given shape."""
        s = self.sample_scores(size, rng)
        return s, self.sample_labels(s, rng)

    def interval_moments(self, lo_s, lo_u, hi_s, hi_u):
        """Exact mass and first moment ``E[Y 1{(S, U) in bin}]`` of lexicographic bins.

        Parameters
        ----------
        lo_s, lo_u, hi_s, hi_u : array_like
            Bin ``[(lo_s, lo_u), (hi_s, hi_u))`` (broadcast together).

        Returns
        -------
        mass, moment : ndarray
        """
        lo_s, lo_u, hi_s, hi_u = np.broadcast_arrays(
            *(np.asarray(x, dtype=float) for x in (lo_s, lo_u, hi_s, hi_u))
        )
        wc = self.scores.continuous_weight
        mass = np.zeros(lo_s.shape)
        moment = np.zeros(lo_s.shape)
        if wc > 0:
            upper = np.maximum(hi_s, lo_s)
            mass += wc * (self.scores.cdf(upper) - self.scores.cdf(lo_s))
            moment += wc * self.eta.integral(lo_s, upper, self.scores)
        self._add_atom_moments(mass, moment, lo_s, lo_u, hi_s, hi_u)
        return mass, moment

    def _chained_moments(self, edges_s, lo_u, hi_u):
        """:meth:`interval_moments` of chained bins, each CDF-type term once per edge.

        Internal fast path (no validation) for fitted binning maps, whose bin b is
        ``[(edges_s[:, b], lo_u[:, b]), (edges_s[:, b + 1], hi_u[:, b]))``: ``edges_s``
        of shape ``(R, B + 1)`` must be nondecreasing along rows, finite and free of -0.0,
        so that ``max(hi, lo) = hi`` and every term equals the one
        :meth:`interval_moments` computes, bit for bit.
        """
        lo_s, hi_s = edges_s[:, :-1], edges_s[:, 1:]
        wc = self.scores.continuous_weight
        mass = np.zeros(lo_s.shape)
        moment = np.zeros(lo_s.shape)
        if wc > 0:
            cdf = self.scores.cdf(edges_s)
            mass += wc * (cdf[:, 1:] - cdf[:, :-1])
            moment += wc * self.eta._chained_integral(edges_s, cdf, self.scores)
        self._add_atom_moments(mass, moment, lo_s, lo_u, hi_s, hi_u)
        return mass, moment

    def _add_atom_moments(self, mass, moment, lo_s, lo_u, hi_s, hi_u):
        """Add each atom's share of the bins to ``mass`` and ``moment`` (in place)."""
        proper = lo_s < hi_s
        atom_means = self.atom_means()
        for atom, prob, eta_atom in zip(
            self.scores.atoms, self.scores.atom_probs, atom_means, strict=True
        ):
            frac = np.where(proper & (lo_s < atom) & (atom < hi_s), 1.0, 0.0)
            frac += np.where(proper & (atom == lo_s), 1.0 - lo_u, 0.0)
            frac += np.where(proper & (atom == hi_s), hi_u, 0.0)
            frac += np.where((lo_s == atom) & (hi_s == atom), np.maximum(hi_u - lo_u, 0.0), 0.0)
            mass += prob * frac
            moment += prob * eta_atom * frac

    def spec(self) -> dict:
        """A JSON-able description (used for cache keys and study files)."""
        return {
            "family": self.family,
            "scores": self.scores.spec(),
            "eta": self.eta.spec(),
            "labels": self.labels,
            "concentration": self.concentration,
            **({"atom_eta": list(self.atom_eta)} if self.atom_eta else {}),
        }


def _law(name, scores=None, eta=None, **kw) -> BinaryLaw:
    return BinaryLaw(scores or ScoreLaw(), eta or ConditionalMean(), name=name, **kw)


BINARY_LAWS: dict[str, BinaryLaw] = {
    law.name: law
    for law in [
        # Continuous, eta = 1/2: Bernoulli(1/2) in every bin, closest to tight.
        _law("uniform_half"),
        # Smooth miscalibration: a Platt curve of slope 3 on uniform scores.
        _law("uniform_logistic", eta=ConditionalMean("logistic", {"slope": 3.0})),
        # Very skewed score law, miscalibrated.
        _law("skewed_beta", ScoreLaw(0.1, 5.0), ConditionalMean("power", {"exponent": 0.5})),
        # Two atoms {0.2, 0.8}, eta = 0.1 / 0.9: breaks UMD without tie-breaking (T3 stress i).
        _law(
            "two_atoms",
            ScoreLaw(atoms=(0.2, 0.8), atom_probs=(0.5, 0.5)),
            ConditionalMean("step", {"threshold": 0.5, "low": 0.1, "high": 0.9}),
        ),
        # Continuous part plus atoms at 0, 1/2 and 1 (closed last bin, tie-breaking).
        _law(
            "mixture_atoms",
            ScoreLaw(2.0, 2.0, (0.0, 0.5, 1.0), (0.1, 0.2, 0.1)),
            ConditionalMean("power", {"exponent": 2.0}),
        ),
        # [0, 1]-valued labels: Beta with mean eta(s).
        _law(
            "beta_labels",
            eta=ConditionalMean("power", {"exponent": 2.0}),
            labels="beta",
            concentration=2.0,
        ),
        # Further laws (full budget).
        _law("uniform_identity", eta=ConditionalMean("power")),
        _law("uniform_step", eta=ConditionalMean("step")),
        _law("uniform_sine", eta=ConditionalMean("sine")),
        _law("rare_event", eta=ConditionalMean("power", {"scale": 0.02})),
        _law(
            "atoms_30",
            ScoreLaw(atoms=tuple((k + 0.5) / 30 for k in range(30)), atom_probs=(1 / 30,) * 30),
            ConditionalMean("power"),
        ),
        # gpr20 Corollary 3 as printed fails here (the radius of its fewest-point bin is too
        # small): with two fixed-width bins, the bin with the fewest points (mass 1/3) has eta =
        # 0, hence V^ = 0 and the smallest radius, while the larger bin has eta = 1/2.
        _law(
            "cor3_counterexample",
            ScoreLaw(atoms=(0.25, 0.75), atom_probs=(1 / 3, 2 / 3)),
            ConditionalMean("step", {"threshold": 0.5, "low": 0.0, "high": 0.5}),
        ),
    ]
}


def staircase_law(n_bins: int, base: float = 0.5, step: float = 1e-3) -> BinaryLaw:
    """The law on which histogram binning loses the most AUC (nch14 Theorem 3.4 is tight).

    Uniform scores; on each of the B equal-mass bins ``[k/B, (k+1)/B)`` the label is 1 iff
    the score lies in the top ``theta_k = base + step k`` fraction of the bin (deterministic
    labels: within-bin AUC 1). With nearly equal, distinct ``theta_k`` the population AUC
    loss of B-bin histogram binning tends to ``1/(2B)`` (catalog G11).

    Parameters
    ----------
    n_bins : int
        B >= 1.
    base, step : float
        ``theta_k = base + step k`` must stay in (0, 1).
    """
    if isinstance(n_bins, bool) or not isinstance(n_bins, int) or n_bins < 1:
        raise ValueError(f"n_bins must be an integer >= 1, got {n_bins!r}")
    thetas = [base + step * k for k in range(n_bins)]
    if not all(0.0 < t < 1.0 for t in thetas):
        raise ValueError(
            f"theta_k = base + step k must lie in (0, 1), got {thetas[0]}..{thetas[-1]}"
        )
    knots = []
    for k, t in enumerate(thetas):
        knots.append((k + 1.0 - t) / n_bins)  # 0 below, 1 above, inside bin k
        if k < n_bins - 1:
            knots.append((k + 1.0) / n_bins)  # back to 0 at the next bin
    values = ([0.0, 1.0] * n_bins)[: len(knots) + 1]
    return BinaryLaw(
        ScoreLaw(),
        ConditionalMean("piecewise_constant", {"knots": tuple(knots), "values": tuple(values)}),
        name=f"staircase_B{n_bins}",
    )
