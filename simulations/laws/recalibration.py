r"""Laws for recalibrating a score z with a sigmoid family, with exact truth (klm19 Sec. 4).

Z is uniform on ``[lo, hi]`` and ``Y | Z = z ~ Bernoulli(q(z))`` with

.. math:: q(z) = \sigma(a \,\mathrm{logit}(z) + b) + \xi(z),

where the perturbation xi is zero (``kind="sigmoid"``: q lies in Platt's family
G = {sigma(a' logit z + b')}, the well-specified case), ``+-amplitude`` i.i.d. on ``cells``
equal-width cells (``kind="noisy"``: the authors' "noisy Platt" of their synthetic code,
catalog Sec. 7), or ``amplitude * sin(2 pi cycles (z - lo) / (hi - lo))`` (``kind="sine"``:
a smooth misspecification that binning cannot average away).

Exact truth for any map the calibrators produce is an integral of q against the uniform
density: the law gives ``P(Z in [u, v])`` and ``int_u^v q dP`` for arrays of intervals
(sigmoid part by 16-node Gauss-Legendre per interval, accurate to ~1e-13 for a = 1, 2
where the sigmoid is a rational function of z; noise part exact from its cumulative sum;
sine part in closed form), and quadrature rules for ``int h dP`` and ``int h q dP`` of a
smooth h (:meth:`smooth_rule`, :meth:`q_rule`), which the noisy law builds from the
moments of the noise against local quadratics so that no rule needs 10^5 nodes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import ClassVar

import numpy as np

from ..validation import check_positive_int
from .base import Law

__all__ = [
    "RecalibrationLaw",
    "logit",
    "noisy_platt_law",
    "platt_law",
    "sigmoid",
    "sine_platt_law",
]

_KINDS = ("sigmoid", "noisy", "sine")
_GL_X, _GL_W = np.polynomial.legendre.leggauss(16)
_PANELS = 512  # of the noise rule
_SMOOTH_PANELS = 64  # 1024 nodes: ~1e-14 on sigmoids of logit z with |a| <= 4


def sigmoid(t):
    """The logistic function, written with tanh (no overflow for large ``|t|``)."""
    return 0.5 * (1.0 + np.tanh(0.5 * t))


def logit(z):
    """``log(z / (1 - z))`` (infinite at 0 and 1)."""
    with np.errstate(divide="ignore"):
        return np.log(z) - np.log1p(-z)


@dataclass(frozen=True)
class RecalibrationLaw(Law):
    """Z ~ U[lo, hi], Y | z ~ Bernoulli(sigma(a logit z + b) + xi(z)).

    Parameters
    ----------
    a, b : float
        The sigmoid's slope (> 0) and intercept.
    kind : {"sigmoid", "noisy", "sine"}
    amplitude : float
        Size of the perturbation xi (0 for ``"sigmoid"``).
    lo, hi : float
        Support of Z, ``0 <= lo < hi <= 1``.
    cells : int
        Number of noise cells (``"noisy"``).
    cycles : int
        Periods of the sine on ``[lo, hi]`` (``"sine"``).
    seed : int
        Seed of the noise signs (``"noisy"``): part of the law, not of the sampling.
    name : str
    """

    a: float = 2.0
    b: float = 1.0
    kind: str = "sigmoid"
    amplitude: float = 0.0
    lo: float = 0.0
    hi: float = 1.0
    cells: int = 100_000
    cycles: int = 2
    seed: int = 0
    name: str = field(default="platt", compare=False)

    family: ClassVar[str] = "recalibration"

    def __post_init__(self):
        if self.kind not in _KINDS:
            raise ValueError(f"kind must be one of {_KINDS}, got {self.kind!r}")
        if not (np.isfinite(self.a) and self.a > 0 and np.isfinite(self.b)):
            raise ValueError(f"a must be > 0 and b finite, got a={self.a!r}, b={self.b!r}")
        if not 0.0 <= self.lo < self.hi <= 1.0:
            raise ValueError(f"need 0 <= lo < hi <= 1, got lo={self.lo!r}, hi={self.hi!r}")
        if self.kind == "sigmoid" and self.amplitude != 0:
            raise ValueError(f"amplitude must be 0 for kind='sigmoid', got {self.amplitude!r}")
        if not 0.0 <= self.amplitude < 0.5:
            raise ValueError(f"amplitude must lie in [0, 0.5), got {self.amplitude!r}")
        check_positive_int(self.cells, "cells")
        check_positive_int(self.cycles, "cycles")
        # sigma(a logit z + b) is increasing, so its range on [lo, hi] is its endpoint
        # values; q = sigmoid + xi with |xi| <= amplitude stays in [0, 1] iff this holds.
        s_lo, s_hi = sigmoid(self.a * logit(np.array([self.lo, self.hi])) + self.b)
        if self.amplitude > 0 and (s_lo < self.amplitude or s_hi > 1 - self.amplitude):
            raise ValueError(
                f"q leaves [0, 1]: the sigmoid ranges over [{s_lo:.4f}, {s_hi:.4f}] on "
                f"[{self.lo}, {self.hi}], the perturbation is +-{self.amplitude}"
            )

    def spec(self) -> dict:
        """JSON-able content."""
        return {
            "family": self.family,
            "a": self.a,
            "b": self.b,
            "kind": self.kind,
            "amplitude": self.amplitude,
            "lo": self.lo,
            "hi": self.hi,
            "cells": self.cells,
            "cycles": self.cycles,
            "seed": self.seed,
        }

    # ---------------------------------------------------------------- the law
    @cached_property
    def _noise(self) -> np.ndarray:
        rng = np.random.default_rng(self.seed)
        return self.amplitude * rng.choice([-1.0, 1.0], size=self.cells)

    def sigmoid_part(self, z):
        """``sigma(a logit z + b)``."""
        return sigmoid(self.a * logit(np.asarray(z, dtype=float)) + self.b)

    def perturbation(self, z):
        """``xi(z)``."""
        z = np.asarray(z, dtype=float)
        if self.kind == "sigmoid":
            return np.zeros_like(z)
        t = (z - self.lo) / (self.hi - self.lo)
        if self.kind == "sine":
            return self.amplitude * np.sin(2 * np.pi * self.cycles * t)
        cell = np.clip((t * self.cells).astype(np.int64), 0, self.cells - 1)
        return self._noise[cell]

    def q(self, z):
        """``E[Y | Z = z]``."""
        return self.sigmoid_part(z) + self.perturbation(z)

    def sample(self, n: int, reps: int, rng):
        """Scores ``(reps, n)`` and labels ``(reps, n)`` (floats in {0, 1})."""
        z, _, y = self.sample_logits(n, reps, rng)
        return z, y

    def sample_logits(self, n: int, reps: int, rng):
        """As :meth:`sample`, plus ``logit(z)``, which q needs and every fit reuses.

        The same draws and, bit for bit, the same q as :meth:`q`; the arithmetic runs in
        place because at ``(reps, n) = (100, 30000)`` a fresh temporary costs as much as
        the operation itself (page faults).
        """
        z = rng.uniform(self.lo, self.hi, size=(reps, n))
        # logit(z) = log(z) - log1p(-z), with q's array as the work array of log1p(-z)
        q = np.negative(z)
        with np.errstate(divide="ignore"):
            np.log1p(q, out=q)
            x = np.log(z)
        x -= q
        q = np.multiply(x, self.a, out=q)
        q += self.b
        # sigmoid in place: 0.5 * (1 + tanh(0.5 t))
        q *= 0.5
        np.tanh(q, out=q)
        q += 1.0
        q *= 0.5
        if self.kind != "sigmoid":  # xi = 0 otherwise: adding it changes no comparison
            q += self.perturbation(z)
        # the uniforms' array receives the labels (a comparison writes 0.0 or 1.0)
        u = rng.random((reps, n))
        return z, x, np.less(u, q, out=u)

    # ---------------------------------------------------------- exact integrals
    def mass(self, u, v):
        """``P(u <= Z <= v)`` for arrays of intervals (clipped to the support)."""
        u, v = self._clip(u), self._clip(v)
        return (v - u) / (self.hi - self.lo)

    def q_integral(self, u, v):
        """``int_u^v q(z) dP(z)`` for arrays of intervals with ``u <= v``."""
        u, v = self._clip(u), self._clip(v)
        half = 0.5 * (v - u)
        mid = 0.5 * (v + u)
        nodes = mid[..., None] + half[..., None] * _GL_X
        # sigmoid_part(nodes), bit for bit, in two arrays (R x B x 16 nodes per call)
        with np.errstate(divide="ignore"):
            t = np.log(nodes)
            np.negative(nodes, out=nodes)
            t -= np.log1p(nodes, out=nodes)
        t *= self.a
        t += self.b
        t *= 0.5
        np.tanh(t, out=t)
        t += 1.0
        t *= 0.5
        smooth = (t @ _GL_W) * half
        return (smooth + self._xi_cumulative(v) - self._xi_cumulative(u)) / (self.hi - self.lo)

    def _xi_cumulative(self, z):
        """``int_lo^z xi`` (Lebesgue measure), exact."""
        t = (z - self.lo) / (self.hi - self.lo)
        width = self.hi - self.lo
        if self.kind == "sigmoid":
            return np.zeros_like(t)
        if self.kind == "sine":
            k = 2 * np.pi * self.cycles
            return self.amplitude * width * (1.0 - np.cos(k * t)) / k
        cum = np.concatenate([[0.0], np.cumsum(self._noise)]) / self.cells
        pos = t * self.cells
        cell = np.clip(np.floor(pos).astype(np.int64), 0, self.cells - 1)
        return width * (cum[cell] + self._noise[cell] * (pos - cell) / self.cells)

    def _clip(self, z):
        return np.clip(np.asarray(z, dtype=float), self.lo, self.hi)

    @cached_property
    def smooth_rule(self) -> tuple[np.ndarray, np.ndarray]:
        """Nodes and weights with ``int h dP ~ sum w h(x)`` for smooth h (composite GL)."""
        edges = np.linspace(self.lo, self.hi, _SMOOTH_PANELS + 1)
        half = 0.5 * np.diff(edges)
        x = (0.5 * (edges[1:] + edges[:-1]))[:, None] + half[:, None] * _GL_X
        w = half[:, None] * _GL_W / (self.hi - self.lo)
        return x.ravel(), np.broadcast_to(w, x.shape).ravel()

    @cached_property
    def q_rule(self) -> tuple[np.ndarray, np.ndarray]:
        """Nodes and weights with ``int h q dP ~ sum w h(x)`` for smooth h.

        The sigmoid and sine parts are smooth: composite Gauss-Legendre. The noise is
        integrated against the quadratic interpolant of h through three nodes per panel,
        so its weights are the noise's moments against the Lagrange basis (exact for h
        quadratic on each panel; the panel width is (hi - lo)/512).
        """
        x, w = self.smooth_rule
        smooth = x, w * (self.sigmoid_part(x) + (self.kind == "sine") * self.perturbation(x))
        if self.kind != "noisy":
            return smooth
        width = (self.hi - self.lo) / _PANELS
        per = self.cells // _PANELS
        if per * _PANELS != self.cells:
            raise ValueError(f"cells must be a multiple of {_PANELS} for q_rule")
        mids = self.lo + (np.arange(self.cells) + 0.5) * (self.hi - self.lo) / self.cells
        xi = self._noise.reshape(_PANELS, per) * ((self.hi - self.lo) / self.cells)
        left = self.lo + np.arange(_PANELS) * width
        nodes = left[:, None] + width * np.array([1 / 6, 1 / 2, 5 / 6])
        m = mids.reshape(_PANELS, per)
        weights = np.empty((_PANELS, 3))
        for k in range(3):
            others = [j for j in range(3) if j != k]
            basis = np.ones_like(m)
            for j in others:
                basis *= (m - nodes[:, j : j + 1]) / (nodes[:, k : k + 1] - nodes[:, j : j + 1])
            # the cell integral of xi * h is xi * width_cell * h(mid) + O(width_cell^3)
            weights[:, k] = np.sum(xi * basis, axis=1)
        weights /= self.hi - self.lo
        return (
            np.concatenate([smooth[0], nodes.ravel()]),
            np.concatenate([smooth[1], weights.ravel()]),
        )

    @cached_property
    def mean_q(self) -> float:
        """``E[q(Z)] = P(Y = 1)``."""
        return float(self.q_integral(np.array(self.lo), np.array(self.hi)))

    @cached_property
    def mean_q_sq(self) -> float:
        """``E[q(Z)^2]`` (the sigmoid part by quadrature, the perturbation exactly)."""
        x, w = self.q_rule
        # int q^2 = int sigma q + int xi q; the second is int xi sigma + int xi^2.
        cross = float(np.sum(w * self.sigmoid_part(x)))
        if self.kind == "sigmoid":
            return cross
        if self.kind == "sine":
            sx, sw = self.smooth_rule
            return cross + float(np.sum(sw * self.perturbation(sx) * self.q(sx)))
        xs, ws = self.smooth_rule
        sig_xi = cross - float(np.sum(ws * self.sigmoid_part(xs) ** 2))
        return cross + sig_xi + self.amplitude**2


def platt_law(a: float = 2.0, b: float = 1.0) -> RecalibrationLaw:
    """Well-specified: Z ~ U(0, 1), q = sigma(a logit z + b) (the authors' (1, 0), (2, 1))."""
    return RecalibrationLaw(a=a, b=b, name=f"platt_a{a:g}_b{b:g}")


def noisy_platt_law(amplitude: float = 0.02, cells: int = 102_400) -> RecalibrationLaw:
    """The authors' noisy Platt: Z ~ U[1/4, 3/4], q = sigma(2 logit z + 1) +- amplitude.

    The authors use 100,000 cells; calcheck uses 102,400 (a multiple of the quadrature's
    512 panels), which changes nothing the checks measure.
    """
    return RecalibrationLaw(
        a=2.0,
        b=1.0,
        kind="noisy",
        amplitude=amplitude,
        lo=0.25,
        hi=0.75,
        cells=cells,
        name=f"noisy_platt_{amplitude:g}",
    )


def sine_platt_law(amplitude: float = 0.05, cycles: int = 2) -> RecalibrationLaw:
    """Smooth misspecification: Z ~ U[1/4, 3/4], q = sigma(2 logit z) + A sin(...).

    b = 0 keeps q in [0.1 - A, 0.9 + A]; two periods cannot be fitted by a sigmoid.
    """
    return RecalibrationLaw(
        a=2.0,
        b=0.0,
        kind="sine",
        amplitude=amplitude,
        lo=0.25,
        hi=0.75,
        cycles=cycles,
        name=f"sine_platt_{amplitude:g}x{cycles}",
    )
