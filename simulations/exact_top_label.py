"""Exact coverage of top-label histogram binning (gr22 Algorithm 8) at constant eta.

Class by class, top-label binning runs uniform-mass binning on the points predicted in that
class; with fixed class counts and a constant eta per class, every bin's label sum is an
independent binomial (:mod:`calcheck.simulations.exact_coverage`), so the conditional and
marginal events are the same finite sums over the union of the classes' bins.
"""

from __future__ import annotations

import numpy as np

from .exact_coverage import (
    EVENTS,
    MAX_POINTS,
    _alpha,
    _choice,
    _coverage,
    _eta,
    _layout,
    _scalar_or_array,
    _smallest,
)
from .validation import check_eps, check_positive_int

__all__ = ["smallest_top_label_eps", "top_label_exact_coverage"]


def _top_label_layout(class_counts, bins_per_class, class_probs, eta):
    counts = [check_positive_int(c, "class_counts entries", 2, MAX_POINTS) for c in class_counts]
    bins = list(bins_per_class)
    if len(bins) != len(counts):
        raise ValueError(
            f"bins_per_class must have one entry per class ({len(counts)}), got {bins_per_class!r}"
        )
    probs = np.asarray(class_probs, dtype=float)
    if probs.shape != (len(counts),) or np.any(~np.isfinite(probs) | (probs <= 0)):
        raise ValueError(f"class_probs must be {len(counts)} positive numbers, got {class_probs!r}")
    if abs(probs.sum() - 1.0) > 1e-9:
        raise ValueError(f"class_probs must sum to 1, got {class_probs!r}")
    etas = np.broadcast_to(np.asarray(eta, dtype=object), (len(counts),))
    m_all, w_all, eta_all = [], [], []
    for n_l, b_l, p_l, e_l in zip(counts, bins, probs, etas, strict=True):
        b_l = check_positive_int(b_l, "bins_per_class entries")
        m, w = _layout(n_l, b_l, "umd")
        m_all.append(m)
        w_all.append(p_l * w)
        eta_all.append(np.full(m.shape, _eta(e_l)))
    return np.concatenate(m_all), np.concatenate(w_all), np.concatenate(eta_all)


def top_label_exact_coverage(
    class_counts, bins_per_class, class_probs, eta, eps, *, event="conditional"
):
    r"""Exact coverage of top-label histogram binning (gr22 Algorithm 8) at constant eta.

    Class l has ``n_l`` calibration points and ``B_l`` UMD bins (Algorithm 8:
    ``B_l = floor(n_l / k)``); ``eta_l = P(Y = c(X) | c(X) = l, X)`` is constant per class.
    Conditional: every output of every class within eps, ``prod_l prod_b``; marginal:
    ``sum_l P(c = l) sum_b E[w_{l,b}] P(|K_{l,b}/m_{l,b} - eta_l| <= eps)``. With one class
    (``class_probs = [1]``) this is the per-class statement the proof of gr22 Theorem 1
    establishes, i.e. :func:`exact_coverage` at ``(n_l, B_l)``.

    Parameters
    ----------
    class_counts : sequence of int
        ``n_l >= 2 B_l`` (stratified: the proof conditions on the n_l).
    bins_per_class : sequence of int
        ``B_l``.
    class_probs : sequence of float
        ``P(c(X) = l)``, positive, summing to 1 (marginal weights).
    eta : float or sequence of float
        Constant top-label bias per class, in (0, 1).
    eps : float or 1-d array_like
    event : {"conditional", "marginal"}

    Returns
    -------
    float or ndarray
        In [0, 1], shape of ``eps``.

    Notes
    -----
    Paper: gr22, Theorem 1, eqs. (8) (marginal eps_1) and (9) (conditional eps_2).
    Hypotheses: as :func:`exact_coverage`, per class, with fixed ``n_l`` (what
    :class:`~calcheck.simulations.experiments.gr22.TopLabelBinningExperiment` simulates) and
    delta -> 0 (distinct outputs; merging equal outputs of a class changes nothing when
    eta_l is constant).
    """
    m, w, etas = _top_label_layout(class_counts, bins_per_class, class_probs, eta)
    _choice(event, EVENTS, "event")
    e = check_eps(eps)
    return _scalar_or_array(_coverage(m, w, etas, e, event))


# --------------------------------------------------------------------- smallest radius
def smallest_top_label_eps(
    class_counts, bins_per_class, class_probs, eta, alpha, *, event="conditional"
) -> float:
    """Smallest eps with top-label exact coverage (:func:`top_label_exact_coverage`) >= 1 - alpha.

    Parameters
    ----------
    class_counts, bins_per_class, class_probs, eta, event
        As in :func:`top_label_exact_coverage`.
    alpha : float
        Miscoverage in (0, 1).

    Notes
    -----
    The exact counterpart of gr22 Theorem 1's eps_1 (eq. 8, marginal) and eps_2 (eq. 9,
    conditional); exact search over the jump points, as :func:`smallest_exact_eps`.
    """
    m, w, etas = _top_label_layout(class_counts, bins_per_class, class_probs, eta)
    _choice(event, EVENTS, "event")
    return _smallest(m, w, etas, _alpha(alpha), event)
