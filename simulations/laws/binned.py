r"""Binned models: B output values with exact masses and exact conditional means.

A :class:`BinnedModelLaw` is the law of ``(f(X), Y)`` for a model ``f`` with finitely many
outputs ``s`` (a *binned* model, Kumar, Liang & Ma 2019, Sec. 5): ``P(f(X) = s) = pi_s`` and
``E[Y | f(X) = s] = y_s``. Its squared calibration error is exact,

.. math:: E^2 = \sum_s \pi_s (s - y_s)^2,

and a sample of size n is drawn without simulating points: multinomial counts and binomial
label sums per output (exact and O(B) per replicate, whatever n).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .base import Law

__all__ = ["BinnedModelLaw", "binned_model"]


def _floats(values, name):
    try:
        out = tuple(float(v) for v in values)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a sequence of numbers, got {values!r}") from None
    if not all(math.isfinite(v) for v in out):
        raise ValueError(f"{name} must be finite, got {values!r}")
    return out


@dataclass(frozen=True)
class BinnedModelLaw(Law):
    """Law of a binned model's output and label, with exact truth.

    Parameters
    ----------
    values : tuple of float
        The model's distinct outputs ``s`` in [0, 1].
    masses : tuple of float
        ``pi_s = P(f(X) = s) > 0``, summing to 1.
    label_means : tuple of float
        ``y_s = E[Y | f(X) = s]`` in [0, 1].
    name : str
    """

    values: tuple[float, ...]
    masses: tuple[float, ...]
    label_means: tuple[float, ...]
    name: str = "binned_model"
    family: ClassVar[str] = "binned_model"

    def __post_init__(self):
        for field_name in ("values", "masses", "label_means"):
            object.__setattr__(self, field_name, _floats(getattr(self, field_name), field_name))
        b = len(self.values)
        if b < 1 or len(self.masses) != b or len(self.label_means) != b:
            raise ValueError(
                f"values, masses and label_means must have one equal, non-zero length, got "
                f"{b}, {len(self.masses)} and {len(self.label_means)}"
            )
        if any(not 0 <= v <= 1 for v in self.values) or len(set(self.values)) != b:
            raise ValueError(f"values must be distinct and lie in [0, 1], got {self.values!r}")
        if any(not 0 <= v <= 1 for v in self.label_means):
            raise ValueError(f"label_means must lie in [0, 1], got {self.label_means!r}")
        if any(p <= 0 for p in self.masses) or abs(math.fsum(self.masses) - 1) > 1e-9:
            raise ValueError(f"masses must be > 0 and sum to 1, got {self.masses!r}")

    @property
    def n_bins(self) -> int:
        """B, the number of outputs."""
        return len(self.values)

    @property
    def ce_sq(self) -> float:
        """The exact squared calibration error E^2 (klm19, Sec. 5)."""
        s, p, y = (np.asarray(x) for x in (self.values, self.masses, self.label_means))
        return float(np.sum(p * (s - y) ** 2))

    @property
    def min_mass_ratio(self) -> float:
        """``B min_s pi_s``: Theorems 5.3-5.4 need it >= 1/2."""
        return self.n_bins * min(self.masses)

    def sample_counts(self, n: int, reps: int, rng: np.random.Generator):
        """Counts ``n_s`` and label sums per output, arrays of shape ``(reps, B)``."""
        counts = rng.multinomial(n, np.asarray(self.masses), size=reps)
        sums = rng.binomial(counts, np.asarray(self.label_means))
        return counts, sums

    def spec(self) -> dict:
        """JSON-able content."""
        return {
            "values": list(self.values),
            "masses": list(self.masses),
            "label_means": list(self.label_means),
        }


def binned_model(kind: str, n_bins: int, ce_sq: float) -> BinnedModelLaw:
    """The suite's binned models with a given B and exact E^2 (klm19 catalog, G5-G6).

    Kinds
    -----
    ``"half"``
        ``y_s = 1/2``, ``s = 1/2 +- sqrt(E^2)`` alternating, equal masses: the largest
        plug-in bias and the variance-dominated case.
    ``"mixed"``
        ``y_s`` spread over [0.1, 0.9], ``s = y_s +- sqrt(E^2)``, equal masses.
    ``"one_bin"``
        all the error in one bin of mass 1/B (needs ``E^2 <= 1 / (4B)``); the others are
        calibrated at ``y_s`` spread over [0.2, 0.8].
    ``"min_mass"``
        as ``"half"`` but half the bins at exactly the hypothesis' floor 1/(2B) and half at
        3/(2B) (B even).
    """
    b = int(n_bins)
    d = math.sqrt(ce_sq)
    sign = np.where(np.arange(b) % 2 == 0, 1.0, -1.0)
    if kind in ("half", "min_mass"):
        y = np.full(b, 0.5)
        s = 0.5 + sign * d
        p = np.full(b, 1.0 / b)
        if kind == "min_mass":
            if b % 2:
                raise ValueError(f"kind 'min_mass' needs an even n_bins, got {n_bins!r}")
            p = np.where(sign > 0, 0.5 / b, 1.5 / b)
    elif kind == "mixed":
        y = np.linspace(0.1, 0.9, b) if b > 1 else np.array([0.5])
        s = y + sign * d
        p = np.full(b, 1.0 / b)
    elif kind == "one_bin":
        if ce_sq > 1.0 / (4 * b):
            raise ValueError(f"kind 'one_bin' needs ce_sq <= 1/(4 n_bins), got {ce_sq!r}")
        y = np.linspace(0.2, 0.8, b) if b > 1 else np.array([0.5])
        s = y.copy()
        s[0] = y[0] + math.sqrt(ce_sq * b)
        p = np.full(b, 1.0 / b)
    else:
        raise ValueError(f"kind must be 'half', 'mixed', 'one_bin' or 'min_mass', got {kind!r}")
    # Outputs must be distinct (equal outputs are one bin): separate them by 1e-12 times
    # the index, which moves E^2 by less than 1e-8 relative; ce_sq is recomputed exactly.
    s = s + np.arange(b) * 1e-12
    if np.any((s < 0) | (s > 1)):
        raise ValueError(f"ce_sq={ce_sq!r} is too large for kind {kind!r} (outputs leave [0, 1])")
    name = f"binned_{kind}_B{b}_E2{ce_sq:g}"
    return BinnedModelLaw(tuple(s), tuple(p), tuple(y), name)
