r"""Worst-law search targets of klm19's rate claims.

Used by :mod:`calcheck.theory_checks.search.rates`.

A target says how to draw a rate claim's event on a grid of n for a *point* (a law at the
claim's fixed parameters), which points the search ranges over (a
:class:`~calcheck.simulations.laws.families.LawFamily` box), the suite's hand-picked
points, and how a point's *shape* is carried to larger problems for the exponent test.

:class:`EstimatorTarget` (Theorems 5.3 and 5.4)
    A binned model with B outputs at a FIXED exact E^2 (:func:`motif_family`): the E^2
    constraint is built into the parametrisation (the gaps ``|s_b - y_b|`` are rescaled so
    that ``sum_b pi_b (s_b - y_b)^2 = E^2``) and the masses respect the theorems'
    hypothesis ``pi_b >= 1/(2B)``. So c(theta) = n*(theta) / h(B, E^2) compares laws at
    one h: the search maximises n*, not a ratio that could grow by shrinking E^2.
:class:`BalanceTarget` (Lemma 4.3 and the Sec. 4.2 VC remark)
    Over continuous score laws the masses of uniform-mass bins are sums of uniform
    spacings whatever the law
    (:class:`~calcheck.simulations.experiments.klm19.BinBalanceExperiment`): n* does not
    depend on the law, so a law search is degenerate (every law is the worst). Atoms break
    the hypothesis (an atom of mass > 2/B is never balanced). The constant is universal
    over B and delta, so the search ranges over ``(log10 B, log10 delta)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from calcheck.bounds import registry
from calcheck.simulations.experiments.klm19 import BinBalanceExperiment, EstimatorRateExperiment
from calcheck.simulations.laws import LAWS
from calcheck.simulations.laws.binned import BinnedModelLaw, binned_model
from calcheck.simulations.laws.families import LawFamily
from calcheck.simulations.search import simulate_crn

from ..series.rates import Balanced, FactorWithin
from .klm19 import geometric_grid

__all__ = ["RATE_TARGETS", "BalanceTarget", "EstimatorTarget", "motif_family"]


def stated_rate(guarantee, delta, symbols) -> float:
    """``h``: the registry function of ``guarantee`` at c = 1."""
    g = registry.get(guarantee)
    pool = {"c": 1.0, "delta": delta, **symbols}
    return float(g.function(**{k: pool[k] for k in g.parameters if k in pool}))


# ------------------------------------------------------------- binned models at fixed E^2
def _build_motif(params, *, name, n_bins, ce_sq, motif):
    """A binned model: ``motif`` bins (w_k, y_k, u_k, side_k) tiled to ``n_bins`` outputs."""
    k = np.arange(n_bins) % motif
    w = np.array([params[f"w_{j + 1}"] for j in range(motif)])[k] + 0.01
    y = np.array([params[f"y_{j + 1}"] for j in range(motif)])[k]
    u = np.array([params[f"u_{j + 1}"] for j in range(motif)])[k] + 1e-3
    side = np.array([params[f"side_{j + 1}"] for j in range(motif)])[k]
    pi = 0.5 / n_bins + 0.5 * w / w.sum()  # pi_b >= 1/(2B): the theorems' hypothesis
    gap = np.sqrt(ce_sq * u / np.sum(pi * u))  # sum pi gap^2 = E^2; gap <= 1/2 (see family)
    up = (side > 0.5) & (y + gap <= 1.0) | (y - gap < 0.0)
    s = np.where(up, y + gap, y - gap)
    # equal outputs would be one bin: move output b by b * 1e-10 towards 1/2 (distinct
    # values; E^2 moves by < 1e-6 relative and the law's exact ce_sq is what h uses)
    nudge = np.arange(n_bins) * 1e-10
    s = np.where(s > 0.5, s - nudge, s + nudge)
    while np.unique(s).size < n_bins:  # an exact coincidence of two nudged outputs
        nudge = nudge * 1.5
        s = np.where(s > 0.5, s - nudge, s + nudge)
    return BinnedModelLaw(tuple(s), tuple(pi / pi.sum()), tuple(y), name)


def motif_family(n_bins: int, ce_sq: float, motif: int = 5) -> LawFamily:
    """Binned models with B outputs, masses >= 1/(2B) and exact E^2 = ``ce_sq``.

    Parameters per motif bin k (the motif is tiled over the B outputs): ``w_k`` (mass
    share above the floor: ``pi_b = 1/(2B) + (w_b + 0.01) / (2 sum(w + 0.01))``), ``y_k``
    (label mean), ``u_k`` (share of E^2: ``(s_b - y_b)^2`` proportional to ``u_b + 0.001``)
    and ``side_k`` (``s_b`` above ``y_b`` if > 1/2 and it fits in [0, 1]). Needs
    ``E^2 <= 1/(8B)`` so that every gap is at most 1/2 and fits on one side of ``y_b``.
    """
    if isinstance(n_bins, bool) or not isinstance(n_bins, int) or n_bins < motif:
        raise ValueError(f"n_bins must be an integer >= motif = {motif}, got {n_bins!r}")
    if not 0 < ce_sq <= 1.0 / (8 * n_bins):
        raise ValueError(
            f"ce_sq must lie in (0, 1/(8 n_bins)] = (0, {1 / (8 * n_bins):g}], got {ce_sq!r}"
        )
    names = tuple(f"{p}_{j + 1}" for p in ("w", "y", "u", "side") for j in range(motif))
    ys = tuple(0.1 if j % 2 == 0 else 0.9 for j in range(motif))
    benign = (
        (1.0,) * motif + ys + (1.0,) * motif + (1.0,) * motif,
        (1.0,) * motif
        + tuple(0.15 + 0.7 * j / max(motif - 1, 1) for j in range(motif))
        + (1.0,) * motif
        + (0.0,) * motif,
        (0.5,) * motif + ys[::-1] + (0.5,) * motif + (1.0,) * motif,
    )
    return LawFamily(
        f"binned_fixed_e2_B{n_bins}_m{motif}",
        names,
        (0.0,) * (4 * motif),
        (1.0,) * (4 * motif),
        _build_motif,
        benign,
        (("n_bins", n_bins), ("ce_sq", float(ce_sq)), ("motif", motif)),
        "binned_model",
        f"binned model, B = {n_bins}, E^2 = {ce_sq:g}, a {motif}-bin motif tiled",
    )


@dataclass(frozen=True)
class EstimatorTarget:
    """klm19 Theorem 5.3 (``statistic="plugin"``) or 5.4 (``"debiased"``) at fixed (B, E^2).

    ``grid_span``: the n grid runs from ``max(lo h, 8)`` to ``hi h`` (3 points per octave).
    Sweep: the found motif at ``(m B, E^2 / m)`` for m = 1, 4, 16 (E^2 must scale down with
    B to stay feasible; h changes by two decades).
    """

    check_id: str
    statistic: str
    n_bins: int = 20
    ce_sq: float = 0.005
    delta: float = 0.1
    grid_span: tuple = (0.005, 10.0)
    slack: float = 0.05

    @property
    def guarantee(self) -> str:
        """The registry id of the claim."""
        return self.check_id

    @property
    def family(self) -> LawFamily:
        """The searched family (fixed B and E^2)."""
        return motif_family(self.n_bins, self.ce_sq)

    def fixed(self) -> dict:
        """The claim's fixed parameters."""
        return {"B": self.n_bins, "E^2": self.ce_sq, "delta": self.delta}

    def point(self, theta, scale: int = 1):
        """The law at theta (``scale`` multiplies B and divides E^2)."""
        fam = motif_family(self.n_bins * scale, self.ce_sq / scale)
        return fam.law(theta)

    def rate(self, law) -> float:
        """The rate h at the law's own B and exact E^2."""
        return stated_rate(self.guarantee, self.delta, {"n_bins": law.n_bins, "ce_sq": law.ce_sq})

    def grid(self, law) -> tuple:
        """Geometric n grid around h."""
        h = self.rate(law)
        lo, hi = self.grid_span
        return geometric_grid(max(lo * h, 8.0), hi * h)

    def successes(self, law, seed, reps) -> tuple:
        """``(R, G)`` booleans of ``|Ehat^2 - E^2| <= E^2/2`` and the grid."""
        exp = EstimatorRateExperiment(law, self.grid(law))
        out = simulate_crn(exp, seed, reps)
        return FactorWithin(self.statistic).success(exp, out), exp.n_grid

    def point_delta(self, point) -> float:
        """The claim's delta (fixed)."""
        return self.delta

    def hand_picked(self) -> tuple:
        """The catalog's kinds at the same (B, E^2)."""
        return tuple(
            (kind, binned_model(kind, self.n_bins, self.ce_sq))
            for kind in ("half", "min_mass", "one_bin", "mixed")
        )

    def sweep(self, theta) -> tuple:
        """Points of the exponent test: ``(label, point)`` for m = 1, 4, 16."""
        return tuple(
            (f"B={self.n_bins * m}, E^2={self.ce_sq / m:g}", self.point(theta, m))
            for m in (1, 4, 16)
        )

    def describe_point(self, law) -> str:
        """Short readable law."""
        return (
            f"B={law.n_bins}, E^2={law.ce_sq:.4g}, B min pi={law.min_mass_ratio:.2f}, "
            f"y={np.round(law.label_means[:5], 2).tolist()}, "
            f"s-y={np.round(np.subtract(law.values, law.label_means)[:5], 3).tolist()}, "
            f"B pi={np.round(np.multiply(law.masses[:5], law.n_bins), 2).tolist()}"
        )


# ---------------------------------------------------------------------- bin balance
def _build_balance(params, *, name):
    """Any continuous law: the experiment is distribution-free (uniform scores as a name)."""
    return LAWS["uniform_half"]


def balance_family() -> LawFamily:
    """``(log10 B, log10 delta)`` in ``[1, 3] x [-2, log10 0.3]`` (law-free, see the module).

    delta >= 0.01: a coverage of 1 - delta is only measured with >> 1/delta replicates (at
    delta = 0.003 and 300 replicates the search's c was 5.4, the fresh one 4.1).
    """
    return LawFamily(
        "balance_B_delta",
        ("log10_B", "log10_delta"),
        (1.0, -2.0),
        (3.0, math.log10(0.3)),
        _build_balance,
        ((2.0, -1.0), (3.0, -1.0), (1.5, -2.0)),
        description="uniform-mass bins of any continuous law: B and delta of the claim",
    )


@dataclass(frozen=True)
class BalanceTarget:
    """klm19 Lemma 4.3 (rate B log(B/delta)) or the VC remark (B^2 log(B/delta)).

    A point is ``(B, delta)``; the grid is 4 points per octave from ``lo`` to ``hi`` times
    ``B ln(B/delta)``. Sweep: B, 10 B, 100 B (capped at 10^4) at the point's delta.
    """

    check_id: str
    grid_span: tuple = (0.5, 12.0)
    slack: float = 0.1  # the catalog's _LEM43_SLACK (lower-order terms, see klm19.py)

    guarantee = property(lambda self: self.check_id)
    family = property(lambda self: balance_family())
    delta = property(lambda self: None)  # part of the point

    def fixed(self) -> dict:
        """Nothing is fixed but the factor 2 of Definition 4.2 (B, delta are searched)."""
        return {"factor": 2.0, "B, delta": "searched"}

    def point(self, theta, scale: int = 1):
        """``(B, delta)`` at theta."""
        t = self.family.check(theta)
        return (min(10000, round(10 ** t[0]) * scale), float(10 ** t[1]))

    def rate(self, point) -> float:
        """The rate h(B, delta)."""
        b, d = point
        return stated_rate(self.guarantee, d, {"n_bins": b})

    def grid(self, point) -> tuple:
        """Geometric grid around B ln(B/delta)."""
        b, d = point
        m = b * math.log(b / d)
        lo, hi = self.grid_span
        return geometric_grid(max(lo * m, b), hi * m, 4)

    def successes(self, point, seed, reps) -> tuple:
        """``(R, G)`` booleans: the fitted bins are 2-well-balanced."""
        exp = BinBalanceExperiment(point[0], self.grid(point))
        out = simulate_crn(exp, seed, reps)
        return Balanced(2.0).success(exp, out), exp.n_grid

    def point_delta(self, point) -> float:
        """The claim's delta at this point."""
        return point[1]

    def hand_picked(self) -> tuple:
        """The catalog's points (delta = 0.1)."""
        return tuple((f"B={b}, delta=0.1", (b, 0.1)) for b in (10, 30, 100, 300, 1000, 3000))

    def sweep(self, theta) -> tuple:
        """B = 10, 100, 1000 at the point's delta."""
        d = self.point(theta)[1]
        return tuple((f"B={b}, delta={d:.3g}", (b, d)) for b in (10, 100, 1000))

    def describe_point(self, point) -> str:
        """``B=..., delta=...``."""
        return f"B={point[0]}, delta={point[1]:.3g} (any continuous score law)"


#: klm19 rate check id -> its search target (Theorem 4.1: see the rate checks page).
RATE_TARGETS = {
    "klm19.thm53": EstimatorTarget("klm19.thm53", "plugin"),
    "klm19.thm54": EstimatorTarget("klm19.thm54", "debiased"),
    "klm19.lem43": BalanceTarget("klm19.lem43"),
    "klm19.lem43.vc": BalanceTarget("klm19.lem43.vc", slack=0.05),
}
