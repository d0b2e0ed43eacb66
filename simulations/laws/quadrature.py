"""Quadrature rules for exact ground truth: tanh-sinh in quantile space, Gauss-Legendre.

Tanh-sinh (double-exponential) rule in quantile space, step 1/16 on [-3.2, 3.2]: 103 nodes.
It is robust to the endpoint singularities of F^{-1} (Beta a > 1 near 0, b > 1 near 1);
against scipy quad its error is below 1e-10 for the eta families shipped here, including a
ten-period sine over [0, 1] (tests). Gauss-Legendre with 64 nodes per interval is exact to
rounding for the smooth integrands of the covariate-shift laws.
"""

from __future__ import annotations

import numpy as np

__all__ = ["gauss_legendre", "quantile_integral", "quantile_space_integral"]

_TS_T = np.arange(-3.2, 3.2 + 1 / 32, 1 / 16)
_TS_NODES = np.tanh(np.pi / 2 * np.sinh(_TS_T))
_TS_WEIGHTS = (1 / 16) * (np.pi / 2) * np.cosh(_TS_T) / np.cosh(np.pi / 2 * np.sinh(_TS_T)) ** 2


def quantile_space_integral(f, lo, hi, scores):
    """``int_{F(lo)}^{F(hi)} f(F^{-1}(q)) dq`` by tanh-sinh quadrature.

    Integrating in quantile space removes the density (and its singularities at 0 or 1
    for Beta parameters below 1); ``scores`` has ``cdf`` and ``ppf``.
    """
    return quantile_integral(f, scores.cdf(lo), scores.cdf(hi), scores)


def quantile_integral(f, q_lo, q_hi, scores):
    """``int_{q_lo}^{q_hi} f(F^{-1}(q)) dq`` given the quantile bounds (see above)."""
    shape = np.shape(q_lo)
    q_lo, q_hi = np.ravel(q_lo), np.ravel(q_hi)
    half = (q_hi - q_lo) / 2
    # mid + half * node, built in place (the same additions as an expression)
    nodes = half[:, None] * _TS_NODES
    nodes += (q_lo + half)[:, None]
    np.clip(nodes, 0.0, 1.0, out=nodes)
    # a ScoreLaw maps the nodes in place: one large temporary less
    values = f(getattr(scores, "_ppf_into", scores.ppf)(nodes))
    return ((values @ _TS_WEIGHTS) * half).reshape(shape)


_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(64)


def gauss_legendre(f, lo, hi):
    """``int_lo^hi f`` for arrays of intervals (64-point Gauss-Legendre per interval)."""
    lo = np.asarray(lo, dtype=float)
    hi = np.asarray(hi, dtype=float)
    half = (hi - lo) / 2.0
    x = (lo + half)[..., None] + half[..., None] * _GL_NODES
    return (f(x) @ _GL_WEIGHTS) * half
