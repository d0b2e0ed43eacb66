"""How a law family's parameter vector becomes a law: the builders and their helpers.

Each :class:`~calcheck.simulations.laws.families.LawFamily` names its coordinates and a
builder ``build(params, *, name, **options) -> Law`` from this module; the families
themselves (coordinates, bounds, benign start points) are in
:mod:`calcheck.simulations.laws.families`. Atom masses are multiples of 2^-40 that sum to
the total exactly, so that a law's masses do not drift with the optimiser's rounding.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from .binary import BinaryLaw
from .binned import BinnedModelLaw
from .eta import ConditionalMean, ScoreLaw
from .multiclass import DirichletAffineLaw, TopLabelLaw
from .shift import LinearShiftLaw

__all__ = [
    "benign_etas",
    "build_atoms",
    "build_beta_piecewise",
    "build_binned_model",
    "build_dirichlet_affine",
    "build_linear_shift",
    "build_mixture",
    "build_staircase",
    "build_top_label",
    "indexed",
    "spread",
]

#: Atom masses are multiples of 1 / _DYADIC (exact sums).
_DYADIC = 2.0**40


def indexed(prefix, k):
    """``("<prefix>_1", ..., "<prefix>_k")``: the coordinate names of k indexed parameters."""
    return tuple(f"{prefix}_{j + 1}" for j in range(k))


def _masses(weights, total=1.0) -> tuple[float, ...]:
    """Weights normalised to ``total``, multiples of 2^-40 summing to it exactly."""
    w = np.asarray(weights, dtype=float)
    units = np.floor(w / w.sum() * total * _DYADIC)
    units[-1] = np.floor(total * _DYADIC) - units[:-1].sum()
    if np.any(units <= 0):
        raise ValueError(f"weights {list(weights)} give an empty atom")
    return tuple(float(u / _DYADIC) for u in units)


def _merge(positions, masses, etas):
    """Atoms at equal positions merged (masses added, eta mass-weighted), sorted."""
    merged: dict[float, list[float]] = {}
    for x, m, e in zip(positions, masses, etas, strict=True):
        mass, moment = merged.get(x, (0.0, 0.0))
        merged[x] = [mass + m, moment + m * e]
    xs = sorted(merged)
    ms = tuple(merged[x][0] for x in xs)
    es = tuple(min(1.0, max(0.0, merged[x][1] / merged[x][0])) for x in xs)
    return tuple(xs), ms, es


def _get(params, prefix, k):
    return [params[n] for n in indexed(prefix, k)]


def build_atoms(params, *, name, k):
    """Atoms at positions ``pos_j``, weights ``w_j`` and means ``eta_j`` (merged where equal)."""
    pos, masses = _get(params, "pos", k), _masses(_get(params, "w", k))
    atoms, probs, etas = _merge(pos, masses, _get(params, "eta", k))
    scores = ScoreLaw(atoms=atoms, atom_probs=probs)
    return BinaryLaw(scores, ConditionalMean("constant"), name=name, atom_eta=etas)


def build_beta_piecewise(params, *, name, k, a, b):
    """Beta(a, b) scores with eta constant ``eta_j`` on each of k equal-mass pieces."""
    knots = tuple(float(x) for x in ScoreLaw(a, b).ppf(np.arange(1, k) / k))
    eta = ConditionalMean("piecewise_constant", {"knots": knots, "values": _get(params, "eta", k)})
    return BinaryLaw(ScoreLaw(a, b), eta, name=name)


def build_mixture(params, *, name, k, a, b):
    """A Platt curve on Beta(a, b) scores plus k atoms (``pos_j``, ``mass_j``, ``eta_j``)."""
    atoms, probs, etas = _merge(
        _get(params, "pos", k), _get(params, "mass", k), _get(params, "eta", k)
    )
    eta = ConditionalMean("logistic", {"slope": params["slope"], "intercept": params["intercept"]})
    return BinaryLaw(ScoreLaw(a, b, atoms, probs), eta, name=name, atom_eta=etas)


def build_top_label(params, *, name, n_classes):
    """A top-label law: class weights ``w_j``, per class an eta linear from ``lo_j`` to ``hi_j``."""
    probs = _masses(_get(params, "w", n_classes))
    laws = tuple(
        BinaryLaw(
            ScoreLaw(),
            ConditionalMean(
                "piecewise_linear",
                {"knots": (0.0, 1.0), "values": (params[f"lo_{j}"], params[f"hi_{j}"])},
            ),
            name=f"{name}[{j}]",
        )
        for j in range(1, n_classes + 1)
    )
    return TopLabelLaw(probs, laws, name)


def build_binned_model(params, *, name, n_bins):
    """A binned model: outputs ``s_j``, masses ``w_j``, label means ``y_j``."""
    s = np.asarray(_get(params, "s", n_bins))
    # equal outputs are one bin: separate exact ties by 1e-12 times the index
    for j in range(1, s.size):
        while np.any(s[:j] == s[j]):
            s[j] = s[j] - 1e-12 if s[j] >= 0.5 else s[j] + 1e-12
    return BinnedModelLaw(
        tuple(float(x) for x in s),
        _masses(_get(params, "w", n_bins)),
        tuple(_get(params, "y", n_bins)),
        name,
    )


def build_staircase(params, *, name, n_bins):
    """A staircase eta: knots from the ``theta_j`` and levels between ``low`` and ``high``."""
    knots = []
    for k, t in enumerate(_get(params, "theta", n_bins)):
        knots.append((k + 1.0 - t) / n_bins)
        if k < n_bins - 1:
            knots.append((k + 1.0) / n_bins)
    values = ([params["low"], params["high"]] * n_bins)[: len(knots) + 1]
    eta = ConditionalMean("piecewise_constant", {"knots": tuple(knots), "values": tuple(values)})
    return BinaryLaw(ScoreLaw(), eta, name=name)


def build_linear_shift(params, *, name):
    """A covariate-shift law whose density ratio is a sine around ``center``."""
    c, amp = params["center"], params["amp"] * min(params["center"], 1.0 - params["center"])
    sine = {"center": c, "amplitude": amp, "frequency": params["frequency"]}
    return LinearShiftLaw(params["c0"], ConditionalMean("sine", sine), name=name)


class _InversionDirichletAffineLaw(DirichletAffineLaw):
    """The same law; Gamma(a_l) = P^-1(a_l, U) (numpy's sampler rejects a-dependent draws)."""

    def spec(self):
        return {**super().spec(), "sampler": "gamma_inversion"}

    def sample(self, size, rng: np.random.Generator):
        size = tuple(np.atleast_1d(size))
        u = rng.random((*size, self.n_classes)) + 2.0**-54  # in (0, 1): no exact zero
        gam = special.gammaincinv(np.asarray(self.concentration, dtype=float), u)
        g = gam / gam.sum(axis=-1, keepdims=True)
        cum = np.cumsum(self.shrink * g + (1.0 - self.shrink) / self.n_classes, axis=-1)
        return g, np.minimum((cum < rng.random((*size, 1))).sum(axis=-1), self.n_classes - 1)


def build_dirichlet_affine(params, *, name, n_classes):
    """Dirichlet scores with concentrations ``2^log2_a_j`` and an affine shrink."""
    a = tuple(2.0 ** params[f"log2_a_{j}"] for j in range(1, n_classes + 1))
    return _InversionDirichletAffineLaw(a, params["shrink"], name=name)


def spread(k, lo, hi):
    """K points evenly from lo to hi (the middle one when k = 1)."""
    return tuple(float(x) for x in np.linspace(lo, hi, k)) if k > 1 else ((lo + hi) / 2,)


def benign_etas(k, low_side=True):
    """Eta values far from 1/2: alternating 0.1 / 0.9 (or 0.15 / 0.85)."""
    a, b = (0.1, 0.9) if low_side else (0.15, 0.85)
    return tuple(a if j % 2 == 0 else b for j in range(k))
