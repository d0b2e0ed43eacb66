"""A covariate-shift law with exact target truth (Gupta, Podkopaev & Ramdas 2020, Sec. 4.4).

:class:`LinearShiftLaw` is a 1-D family with a known, bounded likelihood ratio: source
``X ~ U[0, 1]``, target density ``1 + c0 (2x - 1)``, so the likelihood ratio
``w(x) = 1 + c0 (2x - 1)`` is bounded by ``L = 1 - c0`` and ``U = 1 + c0`` (hypothesis (23)
of Theorem 7), the score is ``g(x) = x`` and ``E[Y | X = x] = eta(x)`` in both domains.
Bin probabilities and bin means under both domains are computed by Gauss-Legendre
quadrature (exact to rounding for the smooth eta families allowed here).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from .base import Law
from .binary import ConditionalMean
from .quadrature import gauss_legendre

__all__ = ["SHIFT_LAWS", "LinearShiftLaw", "StepShiftLaw"]


@dataclass(frozen=True)
class LinearShiftLaw(Law):
    """Source U[0, 1], target density ``1 + c0 (2x - 1)``, score ``g(x) = x``, known eta.

    Parameters
    ----------
    c0 : float
        Shift strength in [0, 1); ``L = 1 - c0 <= w <= U = 1 + c0``.
    eta : ConditionalMean
        ``P(Y = 1 | X = x)``, the same in both domains; a smooth family (not "step"),
        so that the quadrature is exact to rounding.
    name : str
    """

    family: ClassVar[str] = "linear_shift"
    c0: float = 0.5
    eta: ConditionalMean = field(default_factory=lambda: ConditionalMean("power"))
    name: str = "linear_shift"

    def __post_init__(self):
        if not (0 <= self.c0 < 1):
            raise ValueError(f"c0 must lie in [0, 1), got {self.c0!r}")
        if self.eta.kind == "step":
            raise ValueError("eta kind 'step' is not smooth; use a smooth family for quadrature")

    @property
    def lower(self) -> float:
        """L = inf w."""
        return 1.0 - self.c0

    @property
    def upper(self) -> float:
        """U = sup w."""
        return 1.0 + self.c0

    def weight(self, x):
        """Likelihood ratio ``w(x) = dP~_X / dP_X (x)``."""
        w = 2.0 * np.asarray(x, dtype=float)  # in place: 1 + c0 (2x - 1), one temporary
        w -= 1.0
        w *= self.c0
        w += 1.0
        return w

    def sample_source(self, size, rng: np.random.Generator):
        """Draw source points of the given shape."""
        return rng.random(size)

    def target_ppf(self, q):
        """Inverse CDF of the target, ``F(x) = (1 - c0) x + c0 x^2``."""
        q = np.asarray(q, dtype=float)
        if self.c0 == 0:
            return q
        a, b = self.c0, 1.0 - self.c0
        return 2.0 * q / (b + np.sqrt(b * b + 4.0 * a * q))  # stable root of a x^2 + b x = q

    def target_cdf(self, x):
        """CDF of the target law at ``x``."""
        x = np.asarray(x, dtype=float)
        return (1.0 - self.c0) * x + self.c0 * x * x

    def sample_target(self, size, rng: np.random.Generator):
        """Draw target points of the given shape."""
        return self.target_ppf(rng.random(size))

    def sample_labels(self, x, rng: np.random.Generator):
        """Labels given points (conditionally independent)."""
        return (rng.random(np.shape(x)) < self.eta(x)).astype(np.float64)

    def source_mass(self, lo, hi):
        """Source probability of the intervals ``[lo, hi)``."""
        return np.asarray(hi, dtype=float) - np.asarray(lo, dtype=float)

    def target_mass(self, lo, hi):
        """Target probability of the intervals ``[lo, hi)``."""
        return self.target_cdf(hi) - self.target_cdf(lo)

    def source_weighted_moment(self, lo, hi):
        """``E_P[w(X) Y 1{X in [lo, hi)}]`` (x-space quadrature)."""
        return gauss_legendre(lambda x: self.weight(x) * self.eta(x), lo, hi)

    def target_moment(self, lo, hi):
        """``E_target[Y 1{X in [lo, hi)}]``, integrated in the target's quantile space.

        A different route from :meth:`source_weighted_moment` (it goes through the target's
        inverse CDF), so Proposition 3's identity is checked, not assumed.
        """
        return gauss_legendre(
            lambda q: self.eta(self.target_ppf(q)), self.target_cdf(lo), self.target_cdf(hi)
        )

    def target_bin_mean(self, lo, hi):
        """``E_target[Y | X in [lo, hi)]`` (NaN for a bin of zero target mass)."""
        mass = self.target_mass(lo, hi)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(mass > 0, self.target_moment(lo, hi) / mass, np.nan)

    def spec(self) -> dict:
        """JSON-able description of the content (used in keys and results files)."""
        return {"kind": "linear_shift", "c0": self.c0, "eta": self.eta.spec()}


@dataclass(frozen=True)
class StepShiftLaw(Law):
    """Source U[0, 1], target density L on [0, t) and U on [t, 1]: a step likelihood ratio.

    ``U = (1 - L t) / (1 - t)``, so ``w(x) = L`` below t and U above (hypothesis (23) of
    gpr20 Theorem 7 with these bounds); ``E[Y | X = x]`` is ``eta_low`` below t and
    ``eta_high`` above, the same in both domains. Given a bin, w(X) takes two values
    (the extremal case of Hoeffding's inequality) in a bin that straddles t, and every
    bin quantity is a closed form (no quadrature). Not a named law of the suite: the
    gpr20 proof-step checks (G3, G4) build theirs.

    Parameters
    ----------
    low : float
        L in (0, 1).
    step : float
        t in (0, 1).
    eta_low, eta_high : float
        Conditional means in [0, 1] below and above t.
    name : str
    """

    family: ClassVar[str] = "step_shift"
    low: float = 0.1
    step: float = 0.5
    eta_low: float = 0.0
    eta_high: float = 1.0
    name: str = "step_shift"

    def __post_init__(self):
        if not (0 < self.low < 1):
            raise ValueError(f"low must lie in (0, 1), got {self.low!r}")
        if not (0 < self.step < 1):
            raise ValueError(f"step must lie in (0, 1), got {self.step!r}")
        for k in ("eta_low", "eta_high"):
            if not (0 <= getattr(self, k) <= 1):
                raise ValueError(f"{k} must lie in [0, 1], got {getattr(self, k)!r}")

    lower = property(lambda self: float(self.low))
    upper = property(lambda self: (1.0 - self.low * self.step) / (1.0 - self.step))

    def weight(self, x):
        """Likelihood ratio ``w(x)``: L below the step, U above."""
        return np.where(np.asarray(x) < self.step, self.lower, self.upper)

    def sample_source(self, size, rng: np.random.Generator):
        """Draw source points of the given shape."""
        return rng.random(size)

    def sample_labels(self, x, rng: np.random.Generator):
        """Labels given points (conditionally independent)."""
        eta = np.where(np.asarray(x) < self.step, self.eta_low, self.eta_high)
        return (rng.random(np.shape(x)) < eta).astype(np.float64)

    def _parts(self, lo, hi):
        lo, hi = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
        below = np.clip(np.minimum(hi, self.step) - lo, 0.0, None)
        above = np.clip(hi - np.maximum(lo, self.step), 0.0, None)
        return below, above

    def source_mass(self, lo, hi):
        """Source probability of the intervals ``[lo, hi)``."""
        return np.asarray(hi, dtype=float) - np.asarray(lo, dtype=float)

    def target_mass(self, lo, hi):
        """Target probability of the intervals ``[lo, hi)``."""
        below, above = self._parts(lo, hi)
        return self.lower * below + self.upper * above

    def target_bin_mean(self, lo, hi):
        """``E_target[Y | X in [lo, hi)]`` (NaN for a bin of zero target mass)."""
        below, above = self._parts(lo, hi)
        mass = self.lower * below + self.upper * above
        moment = self.lower * self.eta_low * below + self.upper * self.eta_high * above
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(mass > 0, moment / mass, np.nan)

    def spec(self) -> dict:
        """JSON-able description of the content (used in keys and results files)."""
        return {
            "kind": "step_shift",
            "low": self.low,
            "step": self.step,
            "eta_low": self.eta_low,
            "eta_high": self.eta_high,
        }


#: Covariate-shift laws of the gpr20 checks (Theorems 7 and 10, Proposition 3).
SHIFT_LAWS = {
    law.name: law
    for law in [
        # Moderate shift (U/L = 3), oscillating eta.
        LinearShiftLaw(0.5, ConditionalMean("sine", {"frequency": 3.0}), name="shift_sine"),
        # Strong shift (U/L = 9) with eta increasing: the unweighted estimator is biased.
        LinearShiftLaw(0.8, ConditionalMean("power"), name="shift_identity"),
    ]
}
