"""Plug-in top-label, confidence and class-wise calibration errors (Gupta & Ramdas 2022).

Equal-width bins ``[0, 1/B), ..., [1 - 1/B, 1]`` for continuous outputs, and one group per
distinct output for binning outputs (pass the ``groups`` returned by ``predict_groups``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..calibrators.edges import fixed_width_bin_index
from ..validation import check_n_bins

__all__ = [
    "PluginErrors",
    "plugin_classwise_ece",
    "plugin_reliability_mce",
    "plugin_top_label_errors",
    "top_label_reliability",
]


# ------------------------------------------------------------------------- metrics
def _group_inverse(keys):
    """``np.unique(keys, axis=0, return_inverse=True)[1]`` (groups in sorted order), 1-d.

    Integer keys of a small range (rows of an (n, k) array read as mixed-radix digits) are
    grouped by a count over the range instead of a sort: the same groups in the same order,
    several times faster for gr22's per-class, per-bin groups.
    """
    k = np.asarray(keys)
    n = k.shape[0] if k.ndim else 0
    if k.dtype.kind in "iu" and n > 0 and k.ndim in (1, 2):
        cols = k.reshape(n, -1).astype(np.int64)
        lo = cols.min(axis=0)
        span = cols.max(axis=0) - lo + 1
        if float(np.prod(span.astype(float))) <= max(8 * n, 1 << 20):
            code = np.zeros(n, dtype=np.int64)
            for j in range(cols.shape[1]):
                code = code * int(span[j]) + (cols[:, j] - lo[j])
            present = np.bincount(code) > 0
            return (np.cumsum(present) - 1)[code]
    return np.unique(k, axis=0, return_inverse=True)[1].ravel()


def _group_errors(keys, conf, hit):
    """Per group of equal keys: weight N_g / N and |mean(hit) - mean(conf)|."""
    inv = _group_inverse(keys)
    count = np.bincount(inv).astype(float)
    gap = np.abs(np.bincount(inv, weights=hit) - np.bincount(inv, weights=conf)) / count
    return count / conf.size, gap


@dataclass(frozen=True)
class PluginErrors:
    """Plug-in top-label and confidence errors of one predictor on one test set.

    Attributes
    ----------
    tl_ece, tl_mce : float
        Groups (predicted class, bin).
    conf_ece, conf_mce : float
        Groups (bin) pooled over classes (Guo et al. 2017).
    """

    tl_ece: float
    tl_mce: float
    conf_ece: float
    conf_mce: float


def _unit(values, name):
    v = np.asarray(values, dtype=float)
    ok = (v >= 0) & (v <= 1)  # false for NaN too
    if not np.all(ok):
        raise ValueError(f"{name} must lie in [0, 1], got e.g. {v[~ok][:3].tolist()}")
    return v


def _top_label_inputs(pred_class, confidence, labels):
    """Validated ``(c, h, y)``: 1-d of one non-zero length, h in [0, 1], c and y integers."""
    c = np.asarray(pred_class)
    h = _unit(confidence, "confidence")
    y = np.asarray(labels)
    if not (c.shape == h.shape == y.shape) or c.ndim != 1 or c.size == 0:
        raise ValueError(
            f"pred_class, confidence and labels must be 1-d of one non-zero length, got "
            f"{c.shape}, {h.shape}, {y.shape}"
        )
    for name, v in (("pred_class", c), ("labels", y)):
        if v.dtype.kind not in "iu" and not (
            v.dtype.kind == "f" and np.all(np.isfinite(v)) and np.all(v == np.round(v))
        ):
            raise ValueError(f"{name} must hold integer class indices, got e.g. {v[:3]!r}")
    return c, h, y


def plugin_top_label_errors(
    pred_class, confidence, labels, *, n_bins=15, groups=None
) -> PluginErrors:
    """Plug-in TL-ECE, TL-MCE, conf-ECE and conf-MCE (Gupta & Ramdas 2022, Sec. 2).

    Parameters
    ----------
    pred_class, confidence, labels : array_like, shape (n,)
        c(X_i), h(X_i) and Y_i (0-based).
    n_bins : int, default 15
        Equal-width estimation bins (continuous outputs).
    groups : array_like of int, shape (n,), optional
        Output ids of a binning calibrator (``predict_groups``): each distinct output is
        its own group ("unbinned", as the paper evaluates TL-HB); overrides ``n_bins``.
        Groups with an id < 0 (uncalibrated classes) fall back to equal-width bins.
    """
    c, h, y = _top_label_inputs(pred_class, confidence, labels)
    n_bins = check_n_bins(n_bins)
    hit = (c == y).astype(float)
    if groups is None:
        key = fixed_width_bin_index(h, n_bins)
    else:
        g = np.asarray(groups, dtype=np.int64)
        if g.shape != c.shape:
            raise ValueError(f"groups must have shape {c.shape}, got {g.shape}")
        key = np.where(g >= 0, g, -1 - fixed_width_bin_index(h, n_bins))
    w_tl, gap_tl = _group_errors(np.column_stack([c, key]), h, hit)
    w_c, gap_c = _group_errors(key, h, hit)
    return PluginErrors(
        float(w_tl @ gap_tl), float(gap_tl.max()), float(w_c @ gap_c), float(gap_c.max())
    )


def plugin_classwise_ece(probs, labels, *, n_bins=15, groups=None) -> float:
    """Plug-in CW-ECE: the mean over classes of the binned ECE of ``(h_l, 1{Y = l})``.

    ``groups`` (an (n, L) array of per-class bin ids, from CW-HB's ``predict_groups``)
    replaces the equal-width bins by one group per distinct output.
    """
    p = _unit(probs, "probs")
    y = np.asarray(labels)
    if p.ndim != 2 or y.shape != (p.shape[0],) or p.size == 0:
        raise ValueError(
            f"probs must be (n, L) with n, L >= 1 and labels (n,), got {p.shape} and {y.shape}"
        )
    if groups is not None and np.shape(groups) != p.shape:
        raise ValueError(f"groups must have the shape of probs {p.shape}, got {np.shape(groups)}")
    n_bins = check_n_bins(n_bins)
    total = 0.0
    for lab in range(p.shape[1]):
        key = (
            fixed_width_bin_index(p[:, lab], n_bins)
            if groups is None
            else np.asarray(groups)[:, lab]
        )
        w, gap = _group_errors(key, p[:, lab], (y == lab).astype(float))
        total += float(w @ gap)
    return total / p.shape[1]


def _group_tl_gaps(keys, pred_class, confidence, hit):
    """Top-label reliability gap per group of ``keys``: ``(inverse, Delta_g)``.

    ``Delta_g = sum_l P^(c = l | g) |acc_{g,l} - conf_{g,l}|`` (Gupta & Ramdas 2022,
    Sec. 2.1).
    """
    inv = _group_inverse(keys)
    n_groups = inv.max() + 1
    sub = _group_inverse(np.column_stack([inv, pred_class]))
    count = np.bincount(sub).astype(float)
    gap = np.abs(np.bincount(sub, weights=hit) - np.bincount(sub, weights=confidence))
    owner = np.zeros(count.size, dtype=np.int64)
    owner[sub] = inv
    # sum over classes in the group of (N_{g,l}/N_g) |acc - conf| = sum |.| N_{g,l} / N_g
    per_group = np.bincount(owner, weights=gap, minlength=n_groups)
    return inv, per_group / np.bincount(inv, minlength=n_groups)


def plugin_reliability_mce(pred_class, confidence, labels, *, n_bins=15, groups=None) -> float:
    """The TL-MCE estimator of gr22's tables: ``max_b Delta^_b`` of the top-label diagram.

    Not the plug-in of eq. (17) (``PluginErrors.tl_mce``, a max over (class, bin)): it
    averages the per-class gaps inside each bin with weights ``P^(c = l | bin)``. It
    reproduces all 12 Base TL-MCE cells of gr22 Tables 2 and 4. Bins are equal-width, or the
    output groups of a binning calibrator.
    """
    c, h, y = _top_label_inputs(pred_class, confidence, labels)
    hit = (c == y).astype(float)
    if groups is None:
        key = fixed_width_bin_index(h, check_n_bins(n_bins))
    else:
        key = np.asarray(groups)
        if key.shape != c.shape:
            raise ValueError(
                f"groups must have one key per point ({c.size}), got shape {key.shape}"
            )
    return float(_group_tl_gaps(key, c, h, hit)[1].max())


def top_label_reliability(pred_class, confidence, labels, *, n_bins=10, groups=None):
    """Confidence and top-label reliability diagrams on equal-width bins (Sec. 2.1, Fig. 1).

    ``groups`` (one key per point) replaces the equal-width bins, as for
    :func:`plugin_reliability_mce`; the bin of largest ``tl_gap`` and its size say how many
    test points set the TL-MCE estimate.

    Returns
    -------
    dict of ndarray, one entry per non-empty bin
        ``conf`` (mean h), ``acc`` (P^(Y = c | bin)), ``tl_gap`` (Delta^_b =
        sum_l P^(c = l | bin) |acc_{b,l} - conf_{b,l}|), ``fraction`` (N_b / N) and ``bin``
        (the bin index or group key).
    """
    c, h, y = _top_label_inputs(pred_class, confidence, labels)
    hit = (c == y).astype(float)
    if groups is None:
        b = fixed_width_bin_index(h, check_n_bins(n_bins))
    else:
        b = np.asarray(groups)
        if b.shape != c.shape:
            raise ValueError(f"groups must have one key per point ({c.size}), got shape {b.shape}")
    inv, tl_gap = _group_tl_gaps(b, c, h, hit)
    count = np.bincount(inv).astype(float)
    return {
        "bin": np.unique(b),
        "conf": np.bincount(inv, weights=h) / count,
        "acc": np.bincount(inv, weights=hit) / count,
        "tl_gap": tl_gap,
        "fraction": count / h.size,
    }
