"""Score laws and conditional means with exact integrals (the pieces of a binary law).

:class:`ScoreLaw` is a Beta continuous part plus atoms on [0, 1]; :class:`ConditionalMean`
is ``eta(s) = E[Y | S = s]`` from a named family, with an exact ``integral`` over the
continuous part of a score law (closed forms, or tanh-sinh quadrature in quantile space) and
an exact ``range`` (checked at construction).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
from scipy import special

from .quadrature import quantile_integral, quantile_space_integral

__all__ = ["ConditionalMean", "ScoreLaw", "real_number"]


def real_number(value, name: str) -> float:
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

    Examples
    --------
    >>> from calcheck import ScoreLaw
    >>> scores = ScoreLaw(2.0, 5.0, atoms=(0.5,), atom_probs=(0.2,))
    >>> scores.continuous_weight
    0.8
    >>> float(scores.cdf(0.5))  # the continuous part's CDF: P(Beta(2, 5) <= 1/2) = 57/64
    0.890625
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

    def _ppf_into(self, q: np.ndarray) -> np.ndarray:
        """:meth:`ppf` written over the float64 array ``q`` (quadrature nodes)."""
        return q if self.is_uniform else special.betaincinv(self.a, self.b, q, out=q)

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
        if cum.size <= 8:  # searchsorted(side="right") by a few comparisons: faster
            idx = np.zeros(np.shape(pick), dtype=np.intp)
            for c in cum:
                idx += pick >= c
        else:
            idx = np.searchsorted(cum, pick, side="right")  # == len(atoms): continuous part
        out = np.asarray((*self.atoms, 0.0)).take(idx)
        if self.continuous_weight == 0:
            return out  # every idx < len(atoms) (cum[-1] is inf)
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

    * ``"constant"``: ``value`` (default 0.5, the largest label variance);
    * ``"power"``: ``scale * s**exponent`` (identity: exponent 1; rare event: scale 0.02);
    * ``"logistic"``: ``sigmoid(slope * logit(s) + intercept)`` (a Platt curve);
    * ``"step"``: ``low`` for ``s <= threshold``, ``high`` above;
    * ``"sine"``: ``center + amplitude * sin(2 pi frequency s)``;
    * ``"linear"``: ``intercept + slope * s`` (class-wise laws of gr22: an affine
      recalibration ``lambda s + (1 - lambda) / L`` of a Dirichlet score vector).

    Examples
    --------
    >>> from calcheck import ConditionalMean
    >>> eta = ConditionalMean("logistic", {"slope": 2.0, "intercept": -0.5})
    >>> [round(float(v), 4) for v in eta([0.25, 0.5, 0.75])]
    [0.0631, 0.3775, 0.8452]
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
                full[key] = tuple(real_number(v, f"eta {key}") for v in value)
            else:
                full[key] = real_number(value, f"eta {key}")
        object.__setattr__(self, "params", full)
        self._check_pieces()
        low, high = self.range()
        if not (low >= 0.0 and high <= 1.0):
            raise ValueError(
                f"eta must map [0, 1] into [0, 1]; kind={self.kind!r} with {full!r} "
                f"ranges over [{low:.6g}, {high:.6g}]"
            )

    def _check_pieces(self):
        p = self.params
        if self.kind == "piecewise_constant":
            k = np.asarray(p["knots"])
            if (
                len(p["values"]) != k.size + 1
                or np.any(np.diff(k) <= 0)
                or np.any((k <= 0) | (k >= 1))
            ):
                raise ValueError(
                    "piecewise_constant eta needs interior knots strictly "
                    "increasing in (0, 1) and one more value than knots, got "
                    f"knots={p['knots']!r}, values={p['values']!r}"
                )
        if self.kind == "piecewise_linear":
            k = np.asarray(p["knots"])
            if (
                len(p["values"]) != k.size
                or k.size < 2
                or k[0] != 0
                or k[-1] != 1
                or np.any(np.diff(k) <= 0)
            ):
                raise ValueError(
                    "piecewise_linear eta needs knots 0 = x_0 < ... < x_m = 1 and "
                    f"one value per knot, got knots={p['knots']!r}, "
                    f"values={p['values']!r}"
                )

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
            ends = (
                0.0 if p["exponent"] > 0 else (p["scale"] if p["exponent"] == 0 else np.inf),
                p["scale"],
            )
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
                z = special.logit(s)
                if np.ndim(z) == 0:
                    return special.expit(p["slope"] * z + p["intercept"])
                # in place (fewer large temporaries): the same operations, the same values
                z *= p["slope"]
                z += p["intercept"]
            return special.expit(z, out=z)
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
                total = (
                    total
                    + icpt * (scores.cdf(b_j) - scores.cdf(a_j))
                    + slope * mean_s * (shifted.cdf(b_j) - shifted.cdf(a_j))
                )
            return total
        if self.kind == "sine" and scores.is_uniform:
            w = 2 * np.pi * p["frequency"]
            return p["center"] * (hi - lo) - p["amplitude"] * (np.cos(w * hi) - np.cos(w * lo)) / w
        return quantile_space_integral(self, lo, hi, scores)

    def _chained_integral(self, edges, cdf, scores: ScoreLaw):
        """:meth:`integral` over chained intervals ``[edges[:, b], edges[:, b + 1]]``.

        Internal fast path: ``edges`` ``(R, B + 1)`` nondecreasing (no -0.0) and ``cdf``
        their ``scores.cdf``; each closed form's CDF or cosine is evaluated once per edge
        instead of twice per bin, with the same expressions, so the result equals
        ``integral(edges[:, :-1], edges[:, 1:], scores)`` bit for bit.
        """
        p = self.params
        a, b = scores.a, scores.b
        lo, hi = edges[:, :-1], edges[:, 1:]
        f_lo, f_hi = cdf[:, :-1], cdf[:, 1:]
        if self.kind == "constant":
            return p["value"] * (f_hi - f_lo)
        if self.kind == "power":
            k = p["exponent"]
            ratio = np.exp(special.betaln(a + k, b) - special.betaln(a, b))
            g = ScoreLaw(a + k, b).cdf(edges)
            return p["scale"] * ratio * (g[:, 1:] - g[:, :-1])
        if self.kind == "linear":
            ratio = a / (a + b)
            g = ScoreLaw(a + 1.0, b).cdf(edges)
            return p["intercept"] * (f_hi - f_lo) + p["slope"] * ratio * (g[:, 1:] - g[:, :-1])
        if self.kind == "step":
            f_mid = scores.cdf(np.clip(p["threshold"], lo, hi))
            return p["low"] * (f_mid - f_lo) + p["high"] * (f_hi - f_mid)
        if self.kind == "sine" and scores.is_uniform:
            w = 2 * np.pi * p["frequency"]
            c = np.cos(w * edges)
            return p["center"] * (hi - lo) - p["amplitude"] * (c[:, 1:] - c[:, :-1]) / w
        if self.kind in ("logistic", "sine"):
            return quantile_integral(self, f_lo, f_hi, scores)
        return self.integral(lo, hi, scores)

    def spec(self) -> dict:
        """JSON-able description (lists for knots and values)."""
        return {
            "kind": self.kind,
            **{k: list(v) if isinstance(v, tuple) else v for k, v in self.params.items()},
        }
