"""Parametric law families: a vector theta in a box -> a law with exact truth.

A :class:`LawFamily` names its parameters (``names``), states its box (``bounds``) and builds,
for any theta in the box, a law of the protocol of :mod:`calcheck.simulations.laws` with exact
ground truth: :meth:`LawFamily.law`; :meth:`LawFamily.describe` gives theta as a dict. Benign
start points (``benign``, eta away from 1/2) are where an adversarial search starts.

Families (``FAMILIES``, built by :func:`get_family`):

``atoms`` (k)
    k atoms, purely atomic scores: positions ``pos_j``, weights ``w_j`` (masses
    ``w_j / sum w``) and per-atom ``eta_j``.
``beta_piecewise`` (K, a, b)
    Beta(a, b) scores (a, b fixed) and a piecewise-constant eta with values ``eta_j`` on
    the K pieces between the Beta quantiles j / K (equal-mass pieces).
``mixture`` (k, a, b)
    Beta(a, b) scores (fixed) with a logistic eta (``slope``, ``intercept``) plus k atoms
    (``pos_j``, ``mass_j``, ``eta_j``).
``top_label`` (L)
    A top-label law (:class:`~calcheck.simulations.laws.TopLabelLaw`) with L classes: weights
    ``w_l`` of the predicted classes and, per class, uniform latent scores and a linear
    ``eta_l(u)`` from ``lo_l`` (u = 0) to ``hi_l`` (u = 1).
``binned_model`` (B) (Kumar, Liang & Ma 2019, Sec. 5)
    A binned model (:class:`~calcheck.simulations.laws.binned.BinnedModelLaw`): outputs ``s_b``,
    weights ``w_b`` and label means ``y_b``; exact E^2.
``staircase`` (B) (Naeini, Cooper & Hauskrecht 2014, Theorem 3.4)
    Uniform scores; on each bin ``[k/B, (k+1)/B)`` eta is ``low`` below and ``high`` above
    the top ``theta_k`` fraction of the bin (``low = 0, high = 1`` and nearly equal
    ``theta_k`` is :func:`~calcheck.simulations.laws.binary.staircase_law`).

``linear_shift`` (gpr20 Sec. 4.4) and ``dirichlet_affine`` (L) (gr22 Theorem 2)
    See :func:`linear_shift_family` and :func:`dirichlet_affine_family`.

Common random numbers: the search draws every candidate from the same seeds, so a family
keeps the random-number consumption of its laws independent of theta where it can: the
Beta parameters of the continuous part are fixed options (not in theta), and atomic masses
are rounded to multiples of 2^-40 so that they sum to exactly 1 (a purely atomic law never
gains a rounding-sized continuous part, which would change how scores are drawn). Shift laws
and ``dirichlet_affine`` (each Gamma(a_l) from one uniform) draw by inversion.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .base import Law
from .eta import ScoreLaw
from .family_builders import (
    benign_etas,
    build_atoms,
    build_beta_piecewise,
    build_binned_model,
    build_dirichlet_affine,
    build_linear_shift,
    build_mixture,
    build_staircase,
    build_top_label,
    indexed,
    spread,
)

__all__ = ["FAMILIES", "LawFamily", "get_family"]


@dataclass(frozen=True)
class LawFamily:
    """A box of parameters and a map theta -> law with exact truth.

    Parameters
    ----------
    name : str
        Family name with its options (``"atoms3"``).
    names : tuple of str
        Readable parameter names, one per coordinate of theta.
    lower, upper : tuple of float
        The box ``lower <= theta <= upper``.
    builder : callable
        ``builder(params: dict, **options) -> Law`` (a module-level function: picklable).
    benign : tuple of tuple of float
        Benign start points (inside the box).
    options : tuple of (str, value)
        Fixed hyperparameters passed to ``builder``.
    law_family : str
        The ``family`` of the laws built (``"binary"``, ``"top_label"``, ...).
    description : str
    """

    name: str
    names: tuple[str, ...]
    lower: tuple[float, ...]
    upper: tuple[float, ...]
    builder: Callable
    benign: tuple[tuple[float, ...], ...]
    options: tuple = ()
    law_family: str = "binary"
    description: str = ""

    def __post_init__(self):
        d = len(self.names)
        if len(self.lower) != d or len(self.upper) != d or len(set(self.names)) != d:
            raise ValueError(f"family {self.name!r}: names, lower and upper must match")
        if any(not lo < hi for lo, hi in zip(self.lower, self.upper, strict=True)):
            raise ValueError(f"family {self.name!r}: every lower bound must be < its upper")
        for point in self.benign:
            self.check(point)

    @property
    def dim(self) -> int:
        """Number of parameters."""
        return len(self.names)

    @property
    def bounds(self) -> tuple[tuple[float, float], ...]:
        """The box as ``((lower, upper), ...)``, one pair per parameter."""
        return tuple(zip(self.lower, self.upper, strict=True))

    def check(self, theta) -> np.ndarray:
        """Theta as a float array; ValueError naming the parameter outside the box."""
        try:
            t = np.asarray(theta, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(f"theta must be {self.dim} numbers, got {theta!r}") from None
        if t.shape != (self.dim,):
            raise ValueError(
                f"family {self.name!r} takes {self.dim} parameters {list(self.names)}, "
                f"got shape {t.shape}"
            )
        for name, v, lo, hi in zip(self.names, t, self.lower, self.upper, strict=True):
            if not (math.isfinite(v) and lo <= v <= hi):
                raise ValueError(
                    f"family {self.name!r}: parameter {name} = {float(v)!r} must lie in "
                    f"[{lo}, {hi}]"
                )
        return t

    def params(self, theta) -> dict:
        """``{name: value}`` of a (checked) theta."""
        t = self.check(theta)
        return {k: float(v) for k, v in zip(self.names, t, strict=True)}

    def law(self, theta) -> Law:
        """The law at theta (exact truth, the existing protocol)."""
        return self.builder(self.params(theta), name=self.law_name(theta), **dict(self.options))

    def law_name(self, theta) -> str:
        """A short name of the law at theta (family and rounded parameters)."""
        t = self.check(theta)
        return f"{self.name}[{','.join(f'{v:.3g}' for v in t)}]"

    def describe(self, theta) -> dict:
        """Readable theta: family, options and ``{name: value}`` (values rounded to 6 digits)."""
        return {
            "family": self.name,
            **{k: v for k, v in self.options},
            **{k: round(v, 6) for k, v in self.params(theta).items()},
        }

    def spec(self) -> dict:
        """JSON-able description of the family (for results and keys)."""
        return {
            "family": self.name,
            "options": {k: v for k, v in self.options},
            "names": list(self.names),
            "lower": list(self.lower),
            "upper": list(self.upper),
        }


def atoms_family(k: int = 3) -> LawFamily:
    """K atoms with free positions, weights and per-atom eta."""
    k = _count(k, "k")
    names = indexed("pos", k) + indexed("w", k) + indexed("eta", k)
    lower = (0.0,) * k + (0.05,) * k + (0.0,) * k
    upper = (1.0,) * k + (1.0,) * k + (1.0,) * k
    pos = spread(k, 0.1, 0.9)
    benign = (
        pos + (1.0,) * k + benign_etas(k),
        pos + spread(k, 0.3, 1.0) + tuple(0.05 + 0.9 * (j % 2) for j in range(k)),
        spread(k, 0.02, 0.98) + (1.0,) * k + tuple(0.9 if p > 0.5 else 0.1 for p in pos),
    )
    return LawFamily(
        f"atoms{k}",
        names,
        lower,
        upper,
        build_atoms,
        benign,
        (("k", k),),
        description=f"{k} atoms: positions, weights (masses w/sum w) and per-atom eta",
    )


def beta_piecewise_family(k: int = 5, a: float = 2.0, b: float = 5.0) -> LawFamily:
    """Piecewise-constant eta on the K equal-mass pieces of a Beta(a, b) score law."""
    k = _count(k, "k")
    ScoreLaw(a, b)  # validates a, b
    names = indexed("eta", k)
    benign = (benign_etas(k), (0.1,) * k, benign_etas(k, False)[::-1])
    return LawFamily(
        f"beta_piecewise{k}",
        names,
        (0.0,) * k,
        (1.0,) * k,
        build_beta_piecewise,
        benign,
        (("k", k), ("a", float(a)), ("b", float(b))),
        description=f"Beta({a:g}, {b:g}) scores, eta constant on {k} equal-mass pieces",
    )


def mixture_family(k: int = 2, a: float = 2.0, b: float = 2.0) -> LawFamily:
    """Beta(a, b) scores with a logistic eta plus k atoms (positions, masses, etas)."""
    k = _count(k, "k")
    ScoreLaw(a, b)
    names = ("slope", "intercept", *indexed("pos", k), *indexed("mass", k), *indexed("eta", k))
    cap = 0.8 / k
    lower = (-5.0, -3.0) + (0.0,) * k + (0.005,) * k + (0.0,) * k
    upper = (5.0, 3.0) + (1.0,) * k + (cap,) * k + (1.0,) * k
    pos = spread(k, 0.2, 0.8)
    benign = (
        (3.0, 0.0) + pos + (cap / 2,) * k + pos,
        (4.0, 1.5) + pos + (cap / 4,) * k + benign_etas(k),
        (-3.0, -1.5) + pos + (cap,) * k + benign_etas(k, False),
    )
    return LawFamily(
        f"mixture{k}",
        names,
        lower,
        upper,
        build_mixture,
        benign,
        (("k", k), ("a", float(a)), ("b", float(b))),
        description=f"Beta({a:g}, {b:g}) scores with a logistic eta, plus {k} atoms",
    )


def top_label_family(n_classes: int = 3) -> LawFamily:
    """Top-label laws: class weights and a linear eta_l(u) per predicted class."""
    n = _count(n_classes, "n_classes", minimum=3)
    names = indexed("w", n) + tuple(x for j in range(1, n + 1) for x in (f"lo_{j}", f"hi_{j}"))
    lower = (0.1,) * n + (0.0,) * (2 * n)
    upper = (1.0,) * n + (1.0,) * (2 * n)
    benign = (
        (1.0,) * n + (0.8, 0.95) * n,
        spread(n, 0.3, 1.0) + (0.05, 0.2) * n,
        (1.0,) * n + (0.7, 1.0) * n,
    )
    return LawFamily(
        f"top_label{n}",
        names,
        lower,
        upper,
        build_top_label,
        benign,
        (("n_classes", n),),
        "top_label",
        f"{n} predicted classes: weights, and eta_l linear in the latent score from lo to hi",
    )


def binned_model_family(n_bins: int = 5) -> LawFamily:
    """klm19's binned models: outputs, weights and label means (exact E^2)."""
    n = _count(n_bins, "n_bins")
    names = indexed("s", n) + indexed("w", n) + indexed("y", n)
    lower = (0.0,) * n + (0.05,) * n + (0.0,) * n
    upper = (1.0,) * n + (1.0,) * n + (1.0,) * n
    s = spread(n, 0.1, 0.9)
    benign = (
        s + (1.0,) * n + s,  # calibrated
        s + (1.0,) * n + tuple(min(1.0, x + 0.05) for x in s),
        s + spread(n, 0.5, 1.0) + tuple(max(0.0, x - 0.05) for x in s),
    )
    return LawFamily(
        f"binned_model{n}",
        names,
        lower,
        upper,
        build_binned_model,
        benign,
        (("n_bins", n),),
        "binned_model",
        f"binned model with {n} outputs s_b, masses w_b / sum w and label means y_b",
    )


def staircase_family(n_bins: int = 5) -> LawFamily:
    """nch14's staircase: per-bin thresholds theta_k and the two levels low, high."""
    n = _count(n_bins, "n_bins")
    names = (*indexed("theta", n), "low", "high")
    lower = (0.02,) * n + (0.0, 0.0)
    upper = (0.98,) * n + (1.0, 1.0)
    benign = (
        (*spread(n, 0.5, 0.5 + 0.001 * (n - 1)), 0.0, 1.0),
        (*spread(n, 0.2, 0.8), 0.1, 0.9),
        (0.5,) * n + (0.05, 0.95),
    )
    return LawFamily(
        f"staircase{n}",
        names,
        lower,
        upper,
        build_staircase,
        benign,
        (("n_bins", n),),
        description=f"uniform scores; on each of {n} bins eta = low below and high above "
        "the top theta_k fraction",
    )


def linear_shift_family() -> LawFamily:
    """gpr20's shift laws: c0 (L = 1 - c0, U = 1 + c0), a sine eta (relative amplitude amp)."""
    names = ("c0", "center", "amp", "frequency")
    # eta within [0.075, 0.225], [0.775, 0.925] and [0.2, 0.3]: far from 1/2
    benign = ((0.3, 0.15, 0.5, 1.0), (0.5, 0.85, 0.5, 2.0), (0.2, 0.2, 0.5, 0.5))
    return LawFamily(
        "linear_shift",
        names,
        (0.0, 0.02, 0.0, 0.25),
        (0.9, 0.98, 1.0, 4.0),
        build_linear_shift,
        benign,
        (),
        "linear_shift",
        "U[0, 1] to density 1 + c0 (2x - 1); eta = center + amp min(c, 1 - c) sin(2 pi f x)",
    )


def dirichlet_affine_family(n_classes: int = 3) -> LawFamily:
    """gr22's CW-HB laws: shrink lam and concentrations a_l = 2 ** log2_a_l (log scale)."""
    n = _count(n_classes, "n_classes", minimum=3)
    # one class dominant (its g_l near 1, the others' near 0): eta far from 1/2 in every class
    dominant = ((1.0, 0), (0.9, n - 1), (0.95, 1))  # (shrink, dominant class)
    benign = tuple((t, *(3.0 if j == d else -2.0 for j in range(n))) for t, d in dominant)
    return LawFamily(
        f"dirichlet_affine{n}",
        ("shrink", *indexed("log2_a", n)),
        (0.05,) + (-2.0,) * n,
        (1.0,) + (3.0,) * n,
        build_dirichlet_affine,
        benign,
        (("n_classes", n),),
        "dirichlet_affine",
        f"Dirichlet(2 ** log2_a) on {n} classes, P(Y | g) = shrink g + (1 - shrink) / L",
    )


def _count(value, name, minimum=1):
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if value > 64:
        raise ValueError(f"{name} must be at most 64, got {value!r}")
    return int(value)


#: Family name -> constructor (keyword options: k, a, b, n_classes, n_bins).
FAMILIES: dict[str, Callable[..., LawFamily]] = {
    "atoms": atoms_family,
    "beta_piecewise": beta_piecewise_family,
    "mixture": mixture_family,
    "top_label": top_label_family,
    "binned_model": binned_model_family,
    "staircase": staircase_family,
    "linear_shift": linear_shift_family,
    "dirichlet_affine": dirichlet_affine_family,
}


def get_family(name: str, **options) -> LawFamily:
    """The family ``name`` with its options (ValueError listing the known families)."""
    if name not in FAMILIES:
        raise ValueError(f"law family must be one of {sorted(FAMILIES)}, got {name!r}")
    allowed = list(inspect.signature(FAMILIES[name]).parameters)
    if unknown := sorted(set(options) - set(allowed)):
        raise ValueError(f"family {name!r} has no option {unknown}; its options are {allowed}")
    try:
        return FAMILIES[name](**options)
    except TypeError as exc:
        raise ValueError(f"family {name!r}: {exc}; its options are {allowed}") from None
