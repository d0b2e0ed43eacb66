"""Multiclass laws with exact top-label and class-wise truth (the D of ADEMP).

Two families, each reducing the multiclass truth to the exact binary machinery of
:class:`~calcheck.simulations.laws.binary.BinaryLaw`:

:class:`TopLabelLaw`
    The predicted class C has probabilities ``class_probs``; given ``C = l``, a latent
    ``U ~ Q_l`` (a :class:`~calcheck.simulations.laws.ScoreLaw`, atoms allowed) sets the top-label
    probability ``s = (1 + U) / 2`` (so s >= 1/2 is the unique maximum), the other L - 1 entries
    share ``1 - s`` equally, and ``P(Y = l | C = l, U) = eta_l(U)``; otherwise Y is uniform on
    the other classes. Because s is increasing in U, binning on s is binning on U, and the
    top-label truth ``P(Y = l | c(X) = l, X in bin)`` of a fitted TL-HB map is the exact bin
    mean of the binary law ``(Q_l, eta_l)`` (Gupta & Ramdas 2022, proof of Theorem 1: the truth
    conditions on the predicted label *and* the output).

:class:`DirichletAffineLaw`
    Score vectors ``g ~ Dirichlet(a)`` (or a finite set of prototype vectors: atoms), and
    ``P(Y = . | g) = lam g + (1 - lam) / L``. Then ``P(Y = l | g_l) = lam g_l + (1 - lam)/L``
    exactly and ``g_l ~ Beta(a_l, sum(a) - a_l)`` (or atoms), so the class-wise truth of a
    fitted CW-HB map is the exact bin mean of a binary law with a linear eta (Gupta & Ramdas
    2022, Theorem 2).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from .base import Law
from .binary import BinaryLaw, ConditionalMean, ScoreLaw

__all__ = ["MULTICLASS_LAWS", "DirichletAffineLaw", "TopLabelLaw", "class_columns"]


def _largest_remainder(n, probs):
    raw = np.asarray(probs) * n
    counts = np.floor(raw).astype(np.int64)
    short = n - counts.sum()
    counts[np.argsort(-(raw - counts), kind="stable")[:short]] += 1
    return counts


@dataclass(frozen=True)
class TopLabelLaw(Law):
    """Law of (score vector, label) given per-predicted-class binary laws (see module doc).

    Parameters
    ----------
    class_probs : tuple of float
        ``P(c(X) = l)``, l = 0..L-1 (L >= 3), summing to 1.
    laws : tuple of Law
        One binary law per class: latent score law ``Q_l`` on [0, 1] and
        ``eta_l(u) = P(Y = l | C = l, U = u)`` (binary labels).
    name : str
    """

    family: ClassVar[str] = "top_label"
    class_probs: tuple[float, ...]
    laws: tuple[BinaryLaw, ...]
    name: str = "top_label"

    def __post_init__(self):
        p = np.asarray(self.class_probs, dtype=float)
        if p.ndim != 1 or p.size < 3 or np.any(p <= 0) or abs(p.sum() - 1) > 1e-9:
            raise ValueError(
                f"class_probs must be >= 3 positive numbers summing to 1, got {self.class_probs!r}"
            )
        if len(self.laws) != p.size:
            raise ValueError(f"laws must have one law per class ({p.size}), got {len(self.laws)}")
        if any(law.labels != "binary" for law in self.laws):
            raise ValueError("the per-class laws must have binary labels")

    @property
    def n_classes(self) -> int:
        """Number of classes L."""
        return len(self.class_probs)

    def spec(self) -> dict:
        """JSON-able description of the content (used in keys and results files)."""
        return {
            "family": "top_label",
            "class_probs": list(self.class_probs),
            "laws": [law.spec() for law in self.laws],
        }

    @staticmethod
    def confidence(u):
        """Top-label probability ``s = (1 + u) / 2`` of a latent u."""
        return (1.0 + np.asarray(u, dtype=float)) / 2.0

    def class_counts(self, n: int) -> np.ndarray:
        """Stratified n_l (largest remainder of n P(c = l)): the proof conditions on n_l."""
        return _largest_remainder(n, self.class_probs)

    def sample_class(self, label: int, size, rng: np.random.Generator):
        """Latent u and the indicator ``1{Y = l}`` of points predicted as class ``label``."""
        return self.laws[label].sample(size, rng)

    def sample(self, n: int, rng: np.random.Generator):
        """``n`` i.i.d. points: an (n, L) probability matrix and 0-based labels."""
        n_cls = self.n_classes
        c = rng.choice(n_cls, size=n, p=np.asarray(self.class_probs))
        u = np.empty(n)
        hit = np.empty(n, dtype=bool)
        for lab in range(n_cls):
            m = c == lab
            u[m], y = self.sample_class(lab, int(m.sum()), rng)
            hit[m] = y > 0.5
        s = self.confidence(u)
        scores = np.repeat(((1.0 - s) / (n_cls - 1))[:, None], n_cls, axis=1)
        scores[np.arange(n), c] = s
        other = (c + 1 + rng.integers(0, n_cls - 1, size=n)) % n_cls
        return scores, np.where(hit, c, other)


@dataclass(frozen=True)
class DirichletAffineLaw(Law):
    """Dirichlet (or prototype) score vectors with an affine label law (see module doc).

    Parameters
    ----------
    concentration : tuple of float
        Dirichlet parameters a_l > 0 (L >= 3); ignored when ``prototypes`` is given.
    shrink : float
        lam in (0, 1]: ``P(Y = . | g) = lam g + (1 - lam) / L`` (lam = 1: calibrated).
    prototypes : tuple of tuple of float
        Optional finite support of g (rows on the simplex): atomic score vectors.
    prototype_probs : tuple of float
        Their probabilities (default uniform).
    name : str
    """

    family: ClassVar[str] = "dirichlet_affine"
    concentration: tuple[float, ...] = (1.0, 1.0, 1.0)
    shrink: float = 0.7
    prototypes: tuple[tuple[float, ...], ...] = ()
    prototype_probs: tuple[float, ...] = ()
    name: str = "dirichlet_affine"
    _support: tuple = field(default=(), init=False, repr=False, compare=False)

    def __post_init__(self):
        if not (0 < self.shrink <= 1):
            raise ValueError(f"shrink must lie in (0, 1], got {self.shrink!r}")
        if self.prototypes:
            g = np.asarray(self.prototypes, dtype=float)
            if (
                g.ndim != 2
                or g.shape[1] < 3
                or np.any(g < 0)
                or np.any(np.abs(g.sum(axis=1) - 1) > 1e-9)
            ):
                raise ValueError(
                    f"prototypes must be rows on the simplex with L >= 3, got {self.prototypes!r}"
                )
            w = (
                np.asarray(self.prototype_probs, dtype=float)
                if self.prototype_probs
                else np.full(g.shape[0], 1.0 / g.shape[0])
            )
            if w.shape != (g.shape[0],) or np.any(w <= 0) or abs(w.sum() - 1) > 1e-9:
                raise ValueError(
                    f"prototype_probs must be {g.shape[0]} positive numbers "
                    f"summing to 1, got {self.prototype_probs!r}"
                )
            object.__setattr__(self, "_support", (g, w))
        else:
            a = np.asarray(self.concentration, dtype=float)
            if a.ndim != 1 or a.size < 3 or np.any(a <= 0):
                raise ValueError(
                    f"concentration must be >= 3 positive numbers, got {self.concentration!r}"
                )

    @property
    def n_classes(self) -> int:
        """Number of classes L."""
        return self._support[0].shape[1] if self.prototypes else len(self.concentration)

    def spec(self) -> dict:
        """JSON-able description of the content (used in keys and results files)."""
        return {
            "family": "dirichlet_affine",
            "concentration": list(self.concentration),
            "shrink": self.shrink,
            "prototypes": [list(p) for p in self.prototypes],
            "prototype_probs": list(self.prototype_probs),
        }

    def class_law(self, label: int) -> BinaryLaw:
        """The exact binary law of ``(g_l(X), 1{Y = l})``."""
        n_cls = self.n_classes
        eta = ConditionalMean(
            "linear", {"intercept": (1.0 - self.shrink) / n_cls, "slope": self.shrink}
        )
        if self.prototypes:
            g, w = self._support
            atoms, inv = np.unique(g[:, label], return_inverse=True)
            probs = np.bincount(inv, weights=w)
            scores = ScoreLaw(
                atoms=tuple(float(x) for x in atoms),
                atom_probs=tuple(float(x) for x in probs / probs.sum()),
            )
        else:
            a = np.asarray(self.concentration, dtype=float)
            scores = ScoreLaw(float(a[label]), float(a.sum() - a[label]))
        return BinaryLaw(scores, eta, name=f"{self.name}[{label}]")

    def sample(self, size, rng: np.random.Generator):
        """Score vectors of shape ``size + (L,)`` and 0-based labels of shape ``size``."""
        size = tuple(np.atleast_1d(size))
        n_cls = self.n_classes
        if self.prototypes:
            g_all, w = self._support
            g = g_all[rng.choice(len(w), size=size, p=w)]
        else:
            g = rng.dirichlet(np.asarray(self.concentration, dtype=float), size=size)
        eta = self.shrink * g
        eta += (1.0 - self.shrink) / n_cls
        u = rng.random(size)
        # y = #{l : eta_1 + ... + eta_l < u}, capped at L - 1: the running sum is cumsum's
        # (same additions in the same order), one class at a time (a short last axis is slow)
        running = eta[..., 0].copy()
        y = (running < u).astype(np.int64)
        for lab in range(1, n_cls):
            running += eta[..., lab]
            y += running < u
        return g, np.minimum(y, n_cls - 1, out=y)

    def _sample_columns(self, size, rng: np.random.Generator):
        """:meth:`sample`'s draws as class columns ``(L, *size)`` of g and labels.

        Internal fast path of the class-wise experiments, which use g one class at a
        time: the columns are contiguous, and the label loop reads them instead of strided
        slices (the same operations in the same order, so the same labels).
        """
        size = tuple(np.atleast_1d(size))
        n_cls = self.n_classes
        if self.prototypes:
            g_all, w = self._support
            pick = rng.choice(len(w), size=size, p=w)
            columns = np.ascontiguousarray(g_all.T).take(pick, axis=1)
        else:
            columns = class_columns(
                rng.dirichlet(np.asarray(self.concentration, dtype=float), size=size)
            )
        u = rng.random(size)
        running = np.multiply(self.shrink, columns[0])
        running += (1.0 - self.shrink) / n_cls
        y = (running < u).astype(np.int64)
        for lab in range(1, n_cls):
            eta = np.multiply(self.shrink, columns[lab])
            eta += (1.0 - self.shrink) / n_cls
            running += eta
            y += running < u
        return columns, np.minimum(y, n_cls - 1, out=y)


def class_columns(g):
    """``g[..., l]`` of every class l as one ``(L, ...)`` array (contiguous per class).

    Row by row, so that each row's block stays in cache: about twice as fast as L strided
    column copies of the whole array.
    """
    out = np.empty((g.shape[-1], *g.shape[:-1]))
    for r in range(g.shape[0]):
        out[:, r] = g[r].T
    return out


def _tl(name, probs, laws):
    return TopLabelLaw(tuple(probs), tuple(laws), name)


_HALF = BinaryLaw(ScoreLaw(), ConditionalMean("constant"), name="half")
# A law per class with miscalibration in both directions (overconfident and underconfident
# classes), so that conf-ECE and TL-ECE differ.
_OVER = BinaryLaw(ScoreLaw(2.0, 1.0), ConditionalMean("power", {"exponent": 2.0, "scale": 0.9}))
_UNDER = BinaryLaw(
    ScoreLaw(1.0, 2.0), ConditionalMean("logistic", {"slope": 0.5, "intercept": 1.5})
)
_SINE = BinaryLaw(
    ScoreLaw(), ConditionalMean("sine", {"center": 0.6, "amplitude": 0.35, "frequency": 3.0})
)
# COVTYPE-like predicted-class frequencies (class 2 ~ 100x class 4).
_COVTYPE = (0.365, 0.488, 0.062, 0.005, 0.016, 0.030, 0.034)

MULTICLASS_LAWS = {
    law.name: law
    for law in [
        # P-B: P(Y = c(X) | X) = 1/2 everywhere: Bernoulli(1/2) in every bin (largest variance).
        _tl("tl_balanced_half", (0.2,) * 5, (_HALF,) * 5),
        # P-D: imbalanced predicted classes, mixed miscalibration.
        _tl("tl_imbalanced", _COVTYPE, (_OVER, _UNDER, _SINE, _HALF, _OVER, _UNDER, _SINE)),
        # P-C: atomic top scores (4 atoms per class): ties across quantile edges.
        _tl(
            "tl_atoms",
            (0.4, 0.35, 0.25),
            tuple(
                BinaryLaw(
                    ScoreLaw(atoms=(0.1, 0.4, 0.7, 0.95), atom_probs=(0.25,) * 4),
                    ConditionalMean("step", {"threshold": 0.5, "low": lo, "high": hi}),
                )
                for lo, hi in ((0.5, 0.5), (0.3, 0.9), (0.6, 0.4))
            ),
        ),
        # Opposite miscalibration in two classes: conf-ECE << TL-ECE for the base model.
        _tl("tl_opposite", (0.5, 0.3, 0.2), (_OVER, _UNDER, _HALF)),
        # Class-wise laws.
        DirichletAffineLaw((1.0,) * 10, 0.7, name="cw_dirichlet_balanced"),
        DirichletAffineLaw((4.0, 2.0, 1.0, 0.5, 0.3, 0.2), 0.8, name="cw_dirichlet_imbalanced"),
        DirichletAffineLaw(
            shrink=0.6,
            prototypes=(
                (0.7, 0.2, 0.1),
                (0.2, 0.7, 0.1),
                (0.1, 0.2, 0.7),
                (0.4, 0.4, 0.2),
                (1 / 3, 1 / 3, 1 / 3),
            ),
            name="cw_prototype_atoms",
        ),
    ]
}
