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
from scipy import special

from .base import Law
from .quadrature import quantile_space_integral

__all__ = [
    "BINARY_LAWS",
    "BinaryLaw",
    "ConditionalMean",
    "ScoreLaw",
]


def _real(value, name: str) -> float:
    """A finite real number (bool and strings refused)."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise ValueError(f"{name} must be a number, got {value!r}")
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return float(value)


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
        """Whether the continuous part is U[0, 1]."""
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
        """JSON-able description of the content (used in keys and results files)."""
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
        "piecewise_constant": {"knots": (0.5,), "values": (0.2, 0.8)},
        "piecewise_linear": {"knots": (0.0, 1.0), "values": (0.0, 1.0)},
    }

    def __post_init__(self):
        if self.kind not in self._DEFAULTS:
            raise ValueError(f"eta kind must be one of {sorted(self._DEFAULTS)}, got {self.kind!r}")
        unknown = set(self.params) - set(self._DEFAULTS[self.kind])
        if unknown:
            raise ValueError(f"unknown parameters for eta kind {self.kind!r}: {sorted(unknown)}")
        full = {**self._DEFAULTS[self.kind], **self.params}
        for key, value in full.items():
            if key in ("knots", "values"):
                if isinstance(value, str) or not hasattr(value, "__len__"):
                    raise ValueError(f"eta {key} must be a list of numbers, got {value!r}")
                full[key] = tuple(_real(v, f"eta {key}") for v in value)
            else:
                full[key] = _real(value, f"eta {key}")
        object.__setattr__(self, "params", full)
        self._check_pieces()
        low, high = self.range()
        if not (low >= 0.0 and high <= 1.0):
            raise ValueError(f"eta must map [0, 1] into [0, 1]; kind={self.kind!r} with {full!r} "
                             f"ranges over [{low:.6g}, {high:.6g}]")

    def _check_pieces(self):
        p = self.params
        if self.kind == "piecewise_constant":
            k = np.asarray(p["knots"])
            if len(p["values"]) != k.size + 1 or np.any(np.diff(k) <= 0) or \
                    np.any((k <= 0) | (k >= 1)):
                raise ValueError("piecewise_constant eta needs interior knots strictly "
                                 "increasing in (0, 1) and one more value than knots, got "
                                 f"knots={p['knots']!r}, values={p['values']!r}")
        if self.kind == "piecewise_linear":
            k = np.asarray(p["knots"])
            if len(p["values"]) != k.size or k.size < 2 or k[0] != 0 or k[-1] != 1 or \
                    np.any(np.diff(k) <= 0):
                raise ValueError("piecewise_linear eta needs knots 0 = x_0 < ... < x_m = 1 and "
                                 f"one value per knot, got knots={p['knots']!r}, "
                                 f"values={p['values']!r}")

    def range(self) -> tuple[float, float]:
        """Exact infimum and supremum of eta over [0, 1] (per family, analytically)."""
        p = self.params
        if self.kind == "constant":
            return p["value"], p["value"]
        if self.kind in ("step",):
            return min(p["low"], p["high"]), max(p["low"], p["high"])
        if self.kind in ("piecewise_constant", "piecewise_linear"):
            return min(p["values"]), max(p["values"])
        if self.kind == "power":  # monotone on [0, 1]: the values at 0 and 1
            ends = (0.0 if p["exponent"] > 0 else (p["scale"] if p["exponent"] == 0 else np.inf),
                    p["scale"])
            return min(ends), max(ends)
        if self.kind == "linear":
            ends = (p["intercept"], p["intercept"] + p["slope"])
            return min(ends), max(ends)
        if self.kind == "logistic":
            return 0.0, 1.0  # a sigmoid: always inside [0, 1]
        # sine: the extremes of sin on [0, 2 pi f] (all of [-1, 1] once f >= 3/4 or so)
        f, c, a = p["frequency"], p["center"], p["amplitude"]
        turns = np.pi / 2 + np.pi * np.arange(0, 2 * abs(f) + 2)
        inside = turns[turns <= 2 * np.pi * abs(f)]
        x = np.concatenate([[0.0, 2 * np.pi * f], np.sign(f) * inside])
        s = np.sin(x)
        return c + min(a * s.min(), a * s.max()), c + max(a * s.min(), a * s.max())

    def __call__(self, s):
        """Evaluate eta at scores ``s`` (vectorised)."""
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
        if self.kind == "piecewise_constant":
            # a knot belongs to the piece on its left, as the "step" threshold does
            return np.asarray(p["values"])[np.searchsorted(p["knots"], s, side="left")]
        if self.kind == "piecewise_linear":
            return np.interp(s, p["knots"], p["values"])
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
        if self.kind == "piecewise_constant":
            edges = (-np.inf, *p["knots"], np.inf)
            total = np.zeros(np.broadcast(lo, hi).shape)
            for j, value in enumerate(p["values"]):
                a_j = np.clip(edges[j], lo, hi)
                b_j = np.clip(edges[j + 1], lo, hi)
                total = total + value * (scores.cdf(b_j) - scores.cdf(a_j))
            return total
        if self.kind == "piecewise_linear":
            x, v = np.asarray(p["knots"]), np.asarray(p["values"])
            mean_s = a / (a + b)  # E[S 1{S <= t}] = E[S] F_{a+1,b}(t)
            shifted = ScoreLaw(a + 1.0, b)
            total = np.zeros(np.broadcast(lo, hi).shape)
            for j in range(x.size - 1):
                slope = (v[j + 1] - v[j]) / (x[j + 1] - x[j])
                icpt = v[j] - slope * x[j]
                a_j, b_j = np.clip(x[j], lo, hi), np.clip(x[j + 1], lo, hi)
                total = total + icpt * (scores.cdf(b_j) - scores.cdf(a_j)) \
                    + slope * mean_s * (shifted.cdf(b_j) - shifted.cdf(a_j))
            return total
        if self.kind == "sine" and scores.is_uniform:
            w = 2 * np.pi * p["frequency"]
            return p["center"] * (hi - lo) - p["amplitude"] * (np.cos(w * hi) - np.cos(w * lo)) / w
        return quantile_space_integral(self, lo, hi, scores)

    def spec(self) -> dict:
        """JSON-able description (lists for knots and values)."""
        return {"kind": self.kind, **{k: list(v) if isinstance(v, tuple) else v
                                      for k, v in self.params.items()}}


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
    atom_eta : tuple of float
        ``E[Y | S = a_j]`` for each atom of ``scores`` (default: ``eta(a_j)``), so that an
        atomic law can give every atom its own conditional mean.
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
            values = tuple(_real(v, "atom_eta") for v in self.atom_eta)
            if len(values) != len(self.scores.atoms):
                raise ValueError(f"atom_eta needs one value per atom ({len(self.scores.atoms)}),"
                                 f" got {self.atom_eta!r}")
            if any(not (0.0 <= v <= 1.0) for v in values):
                raise ValueError(f"atom_eta values must lie in [0, 1], got {self.atom_eta!r}")
            object.__setattr__(self, "atom_eta", values)

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
        mean = self.conditional_mean(scores)
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
        atom_means = self.atom_means()
        for atom, prob, eta_atom in zip(self.scores.atoms, self.scores.atom_probs, atom_means,
                                        strict=True):
            frac = np.where(proper & (lo_s < atom) & (atom < hi_s), 1.0, 0.0)
            frac += np.where(proper & (atom == lo_s), 1.0 - lo_u, 0.0)
            frac += np.where(proper & (atom == hi_s), hi_u, 0.0)
            frac += np.where((lo_s == atom) & (hi_s == atom), np.maximum(hi_u - lo_u, 0.0), 0.0)
            mass += prob * frac
            moment += prob * eta_atom * frac
        return mass, moment

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
