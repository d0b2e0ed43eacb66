"""Exact top-label and confidence errors of a predictor on a finite support, gr22 Prop. 4.

Kept apart from :mod:`calcheck.bounds.gr22` (which re-exports it and registers ``gr22.prop4``) for
size.

References
----------
.. [1] C. Gupta and A. Ramdas, "Top-label calibration and multiclass-to-binary reductions",
       ICLR 2022, Proposition 4 (App. H.1) and App. E.3.
"""

from __future__ import annotations

import numpy as np

from ._validation import as_integer_array, as_unit, guard_public

__all__ = ["discrete_top_label_errors"]


def discrete_top_label_errors(prob, predicted_class, confidence, p_correct):
    r"""Exact conf-ECE, TL-ECE, conf-MCE and TL-MCE of a predictor on a finite support.

    Proposition 4 (App. H.1) states ``conf-ECE <= TL-ECE`` for every predictor and law, and
    App. E.3 ``conf-MCE <= TL-MCE``; this function computes all four
    population quantities exactly (eqs. 3, 4, 16, 17), so the inequalities can be checked on
    any discrete instance. Quantifier: identity.

    Parameters
    ----------
    prob : array_like, shape (..., M)
        P(X = x_m), non-negative, summing to 1 over the last axis.
    predicted_class : array_like of int, shape (..., M)
        c(x_m).
    confidence : array_like, shape (..., M)
        h(x_m) in [0, 1]. Points with equal confidence form one level set of h.
    p_correct : array_like, shape (..., M)
        P(Y = c(X) | X = x_m).

    Returns
    -------
    conf_ece, tl_ece, conf_mce, tl_mce : ndarray, shape (...)
        The sup of an MCE runs over level sets of positive probability only.

    Notes
    -----
    Equality holds iff, on every level set of h, the classes err in one direction (e.g. when
    c is a function of h); Example 1 (conf-ECE 0, TL-ECE 0.4) is the extreme case. Cost is
    O(M^2) per instance (pairwise level-set matching), meant for small supports.
    """
    w, h, p = (
        as_unit(prob, "prob"),
        as_unit(confidence, "confidence"),
        as_unit(p_correct, "p_correct"),
    )
    c = as_integer_array(predicted_class, "predicted_class", minimum=0)
    if w.ndim == 0 or w.shape[-1] == 0:
        raise ValueError(f"prob must be an array of shape (..., M) with M >= 1, got {prob!r}")
    if not (w.shape == c.shape == h.shape == p.shape):
        raise ValueError(
            "prob, predicted_class, confidence and p_correct must have one shape, got "
            f"{w.shape}, {c.shape}, {h.shape}, {p.shape}"
        )
    if not np.allclose(w.sum(axis=-1), 1.0):
        raise ValueError(f"prob must sum to 1 over its last axis, got sums {w.sum(axis=-1)!r}")
    same_h = h[..., :, None] == h[..., None, :]
    same_ch = same_h & (c[..., :, None] == c[..., None, :])

    def group_errors(same):
        mass = (same * w[..., None, :]).sum(axis=-1)
        moment = (same * (w * p)[..., None, :]).sum(axis=-1)
        with np.errstate(invalid="ignore", divide="ignore"):
            err = np.where(mass > 0, np.abs(moment / np.where(mass > 0, mass, 1.0) - h), 0.0)
        ece = (w * err).sum(axis=-1)
        mce = np.where(w > 0, err, 0.0).max(axis=-1)
        return ece, mce

    conf_ece, conf_mce = group_errors(same_h)
    tl_ece, tl_mce = group_errors(same_ch)
    return conf_ece, tl_ece, conf_mce, tl_mce


guard_public(globals())
