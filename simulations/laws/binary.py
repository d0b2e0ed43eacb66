"""Data-generating laws with exact ground truth (the D of ADEMP).

A :class:`BinaryLaw` is a score law ``Q_S`` on [0, 1] (a Beta continuous part, possibly with
atoms), a conditional mean ``eta(s) = E[Y | S = s]``, and a label model (binary, or
[0, 1]-valued Beta labels with mean ``eta``). For any bin it returns the exact mass and the
exact first moment ``E[Y 1{S in bin}]`` so that ``E[Y | S in bin]`` is exact.

Bins are lexicographic intervals on ``(score, U)`` (shared/spec README, item 5): a bin is
``[(lo_s, lo_u), (hi_s, hi_u))`` and an atom ``a`` of mass ``p`` contributes

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
from scipy import special

from .base import Law
from .quadrature import quantile_space_integral

__all__ = [
    "BINARY_LAWS",
    "BinaryLaw",
    "ConditionalMean",
    "ScoreLaw",
    "law_from_spec",
]


@dataclass(frozen=True)
class ScoreLaw:
    """Score law: ``(1 - sum(atom_probs)) Beta(a, b) + sum_j atom_probs[j] delta_{atoms[j]}``.

    Parameters
    ----------
    a, b : float
        Beta parameters of the continuous part (1, 1 is uniform).
    atoms : tuple of float
        Atom positions in [0, 1].
    atom_probs : tuple of float
        Atom masses; their sum is at most 1 (1 means purely atomic).
    """

    a: float = 1.0
    b: float = 1.0
    atoms: tuple[float, ...] = ()
    atom_probs: tuple[float, ...] = ()

    def __post_init__(self):
        if not (self.a > 0 and self.b > 0 and math.isfinite(self.a) and math.isfinite(self.b)):
            raise ValueError(f"a and b must be finite and > 0, got a={self.a!r}, b={self.b!r}")
        if len(self.atoms) != len(self.atom_probs):
            raise ValueError(
                f"atoms and atom_probs must have equal length, got {self.atoms!r} and "
                f"{self.atom_probs!r}"
            )
        if any(not (0.0 <= x <= 1.0) for x in self.atoms):
            raise ValueError(f"atoms must lie in [0, 1], got {self.atoms!r}")
        if len(set(self.atoms)) != len(self.atoms):
            raise ValueError(f"atoms must be distinct, got {self.atoms!r}")
        if any(p <= 0 for p in self.atom_probs) or sum(self.atom_probs) > 1 + 1e-12:
            raise ValueError(
                f"atom_probs must be > 0 and sum to at most 1, got {self.atom_probs!r}"
            )

    @property
    def continuous_weight(self) -> float:
        """Mass of the continuous part."""
        return max(0.0, 1.0 - float(sum(self.atom_probs)))

    @property
    def is_uniform(self) -> bool:
        return self.a == 1.0 and self.b == 1.0

    def cdf(self, s):
        """CDF of the continuous part (normalised)."""
        s = np.clip(s, 0.0, 1.0)
        return s if self.is_uniform else special.betainc(self.a, self.b, s)

    def ppf(self, q):
        """Quantile function of the continuous part."""
        return q if self.is_uniform else special.betaincinv(self.a, self.b, q)

    def sample(self, size, rng: np.random.Generator) -> np.ndarray:
        """Draw scores of the given shape."""
        if self.continuous_weight > 0:
            cont = rng.random(size) if self.is_uniform else rng.beta(self.a, self.b, size)
        else:
            cont = np.zeros(size)
        if not self.atoms:
            return cont
        cum = np.cumsum(np.asarray(self.atom_probs))
        if self.continuous_weight == 0:
            cum[-1] = np.inf  # rounding must not send a draw to the absent continuous part
        pick = rng.random(size)
        idx = np.searchsorted(cum, pick, side="right")  # == len(atoms): continuous part
        out = np.asarray((*self.atoms, 0.0))[idx]
        return np.where(idx < len(self.atoms), out, cont)

    def spec(self) -> dict:
        return {
            "a": self.a,
            "b": self.b,
            "atoms": list(self.atoms),
            "atom_probs": list(self.atom_probs),
        }


@dataclass(frozen=True)
class ConditionalMean:
    """Conditional mean ``eta(s) = E[Y | S = s]`` of a named family.

    Families (``kind``) and parameters:

    * ``"constant"``: ``value`` (default 0.5, the worst case for every Hoeffding step);
    * ``"power"``: ``scale * s**exponent`` (identity: exponent 1; rare event: scale 0.02);
    * ``"logistic"``: ``sigmoid(slope * logit(s) + intercept)`` (a Platt curve);
    * ``"step"``: ``low`` for ``s <= threshold``, ``high`` above;
    * ``"sine"``: ``center + amplitude * sin(2 pi frequency s)``;
    * ``"linear"``: ``intercept + slope * s`` (class-wise laws of gr22: an affine
      recalibration ``lambda s + (1 - lambda) / L`` of a Dirichlet score vector).
    """

    kind: str = "constant"
    params: dict = field(default_factory=dict)

    _DEFAULTS: ClassVar[dict] = {
        "constant": {"value": 0.5},
        "power": {"exponent": 1.0, "scale": 1.0},
        "logistic": {"slope": 3.0, "intercept": 0.0},
        "step": {"threshold": 0.5, "low": 0.2, "high": 0.8},
        "sine": {"center": 0.5, "amplitude": 0.45, "frequency": 10.0},
        "linear": {"intercept": 0.0, "slope": 1.0},
    }

    def __post_init__(self):
        if self.kind not in self._DEFAULTS:
            raise ValueError(f"eta kind must be one of {sorted(self._DEFAULTS)}, got {self.kind!r}")
        unknown = set(self.params) - set(self._DEFAULTS[self.kind])
        if unknown:
            raise ValueError(f"unknown parameters for eta kind {self.kind!r}: {sorted(unknown)}")
        full = {**self._DEFAULTS[self.kind], **self.params}
        object.__setattr__(self, "params", full)
        grid = self(np.linspace(0.0, 1.0, 2001))
        if not np.all((grid >= 0) & (grid <= 1)):
            raise ValueError(f"eta must map [0, 1] into [0, 1], got kind={self.kind!r}, {full!r}")

    def __call__(self, s):
        p = self.params
        s = np.asarray(s, dtype=float)
        if self.kind == "constant":
            return np.full_like(s, p["value"])
        if self.kind == "power":
            return p["scale"] * s ** p["exponent"]
        if self.kind == "logistic":
            with np.errstate(divide="ignore"):
                z = p["slope"] * special.logit(s) + p["intercept"]
            return special.expit(z)
        if self.kind == "step":
            return np.where(s <= p["threshold"], p["low"], p["high"])
        if self.kind == "linear":
            return p["intercept"] + p["slope"] * s
        return p["center"] + p["amplitude"] * np.sin(2 * np.pi * p["frequency"] * s)

    def integral(self, lo, hi, scores: ScoreLaw):
        """``int_lo^hi eta dF`` over the continuous part of ``scores`` (normalised F)."""
        lo = np.asarray(lo, dtype=float)
        hi = np.maximum(np.asarray(hi, dtype=float), lo)
        p = self.params
        a, b = scores.a, scores.b
        if self.kind == "constant":
            return p["value"] * (scores.cdf(hi) - scores.cdf(lo))
        if self.kind == "power":
            k = p["exponent"]
            ratio = np.exp(special.betaln(a + k, b) - special.betaln(a, b))
            shifted = ScoreLaw(a + k, b)
            return p["scale"] * ratio * (shifted.cdf(hi) - shifted.cdf(lo))
        if self.kind == "linear":
            ratio = a / (a + b)  # E[S 1{S <= t}] = E[S] F_{a+1,b}(t)
            shifted = ScoreLaw(a + 1.0, b)
            return p["intercept"] * (scores.cdf(hi) - scores.cdf(lo)) + p["slope"] * ratio * (
                shifted.cdf(hi) - shifted.cdf(lo)
            )
        if self.kind == "step":
            t = p["threshold"]
            f_lo, f_hi = scores.cdf(lo), scores.cdf(hi)
            f_mid = scores.cdf(np.clip(t, lo, hi))
            return p["low"] * (f_mid - f_lo) + p["high"] * (f_hi - f_mid)
        if self.kind == "sine" and scores.is_uniform:
            w = 2 * np.pi * p["frequency"]
            return p["center"] * (hi - lo) - p["amplitude"] * (np.cos(w * hi) - np.cos(w * lo)) / w
        return quantile_space_integral(self, lo, hi, scores)

    def spec(self) -> dict:
        return {"kind": self.kind, **self.params}


@dataclass(frozen=True)
class BinaryLaw(Law):
    """Joint law of (score, label) with exact ground truth.

    Parameters
    ----------
    scores : ScoreLaw
    eta : ConditionalMean
    labels : {"binary", "beta"}
        Binary ``Y ~ Bernoulli(eta(S))`` or ``Y ~ Beta(kappa eta, kappa (1 - eta))`` in
        [0, 1] (allowed by gr21's definitions; every Hoeffding step still holds).
    concentration : float
        ``kappa`` of the Beta labels.
    name : str
        Display name.
    """

    family: ClassVar[str] = "binary"
    scores: ScoreLaw = field(default_factory=ScoreLaw)
    eta: ConditionalMean = field(default_factory=ConditionalMean)
    labels: str = "binary"
    concentration: float = 4.0
    name: str = "custom"

    def __post_init__(self):
        if self.labels not in ("binary", "beta"):
            raise ValueError(f"labels must be 'binary' or 'beta', got {self.labels!r}")
        if not (self.concentration > 0 and math.isfinite(self.concentration)):
            raise ValueError(f"concentration must be finite and > 0, got {self.concentration!r}")

    @property
    def has_atoms(self) -> bool:
        return bool(self.scores.atoms)

    def sample_scores(self, size, rng: np.random.Generator) -> np.ndarray:
        return self.scores.sample(size, rng)

    def sample_labels(self, scores, rng: np.random.Generator) -> np.ndarray:
        """Labels given scores (conditionally independent across points)."""
        mean = self.eta(scores)
        if self.labels == "binary":
            return (rng.random(np.shape(scores)) < mean).astype(np.float64)
        k = self.concentration
        a = np.maximum(k * mean, 1e-300)
        b = np.maximum(k * (1.0 - mean), 1e-300)
        y = rng.beta(a, b)
        return np.where(mean <= 0, 0.0, np.where(mean >= 1, 1.0, y))

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
        proper = lo_s < hi_s
        for atom, prob in zip(self.scores.atoms, self.scores.atom_probs, strict=True):
            frac = np.where(proper & (lo_s < atom) & (atom < hi_s), 1.0, 0.0)
            frac += np.where(proper & (atom == lo_s), 1.0 - lo_u, 0.0)
            frac += np.where(proper & (atom == hi_s), hi_u, 0.0)
            frac += np.where((lo_s == atom) & (hi_s == atom), np.maximum(hi_u - lo_u, 0.0), 0.0)
            mass += prob * frac
            moment += prob * float(self.eta(atom)) * frac
        return mass, moment

    def spec(self) -> dict:
        """A JSON-able description (used for cache keys and study files)."""
        return {
            "family": self.family,
            "scores": self.scores.spec(),
            "eta": self.eta.spec(),
            "labels": self.labels,
            "concentration": self.concentration,
        }


def law_from_spec(spec: dict, name: str = "custom") -> BinaryLaw:
    """Build a :class:`Law` from a study-file table.

    ``spec`` has keys ``scores`` (``{kind = "uniform" | "beta" | "atoms" | "mixture", ...}``),
    ``eta`` (``{kind = ..., <params>}``), optional ``labels`` and ``concentration``.
    """
    if not isinstance(spec, dict):
        raise ValueError(f"law spec must be a table, got {spec!r}")
    sc = dict(spec.get("scores", {"kind": "uniform"}))
    kind = sc.pop("kind", "uniform")
    atoms = tuple(float(x) for x in sc.pop("atoms", ()))
    probs = tuple(float(x) for x in sc.pop("atom_probs", sc.pop("probs", ())))
    if kind == "uniform":
        score_law = ScoreLaw()
    elif kind == "beta":
        score_law = ScoreLaw(float(sc.pop("a")), float(sc.pop("b")))
    elif kind == "atoms":
        if not probs:
            probs = (1.0 / len(atoms),) * len(atoms)
        score_law = ScoreLaw(atoms=atoms, atom_probs=probs)
    elif kind == "mixture":
        score_law = ScoreLaw(float(sc.pop("a", 1.0)), float(sc.pop("b", 1.0)), atoms, probs)
    else:
        raise ValueError(f"scores kind must be uniform, beta, atoms or mixture, got {kind!r}")
    if kind in ("uniform", "beta") and (atoms or probs):
        raise ValueError(f"scores kind {kind!r} takes no atoms, got {atoms!r}")
    if sc:
        raise ValueError(f"unknown score-law parameters: {sorted(sc)}")
    eta_spec = dict(spec.get("eta", {"kind": "constant"}))
    eta = ConditionalMean(eta_spec.pop("kind", "constant"), eta_spec)
    return BinaryLaw(
        score_law, eta, spec.get("labels", "binary"), float(spec.get("concentration", 4.0)), name
    )


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
        # Further laws of catalog §7 (full budget).
        _law("uniform_identity", eta=ConditionalMean("power")),
        _law("uniform_step", eta=ConditionalMean("step")),
        _law("uniform_sine", eta=ConditionalMean("sine")),
        _law("rare_event", eta=ConditionalMean("power", {"scale": 0.02})),
        _law(
            "atoms_30",
            ScoreLaw(atoms=tuple((k + 0.5) / 30 for k in range(30)), atom_probs=(1 / 30,) * 30),
            ConditionalMean("power"),
        ),
        # gpr20 Corollary 3 as printed fails here (catalog §9 A3): with two fixed-width bins,
        # the bin with the fewest points (mass 1/3) has eta = 0, hence V^ = 0 and the
        # smallest radius, while the larger bin has eta = 1/2.
        _law(
            "cor3_counterexample",
            ScoreLaw(atoms=(0.25, 0.75), atom_probs=(1 / 3, 2 / 3)),
            ConditionalMean("step", {"threshold": 0.5, "low": 0.0, "high": 0.5}),
        ),
    ]
}
