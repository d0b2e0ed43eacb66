"""The scaling-binning calibrator of Kumar, Liang & Ma (2019, Sec. 4.1), and its variants.

Algorithm (klm19 Sec. 4.1; catalog Sec. 3.4), on recalibration data T split into T1, T2, T3:

1. *Function fitting*: ``g = argmin_{g in G} sum_{T1} (y - g(z))^2`` over Platt's family
   ``G = {sigma(a logit z + b)}`` (``loss="squared"``, the algorithm as written), or by
   maximum likelihood (``loss="log"``, what the paper's experiments and code do: "we fit a
   sigmoid").
2. *Bins*: uniform-mass bins of the values g(z) on T2 (order statistics at the project's
   ranks, :func:`~calcheck.simulations.calibrators.edges.uniform_mass_edge_ranks`).
3. *Discretisation*: the output on bin j is the mean of the *values* g(z) (not the labels)
   of the T3 points in bin j. An empty bin outputs the midpoint of its edges (the authors'
   code; the paper does not say).

Steps 2 and 3 use no labels. ``split="thirds"`` gives T1, T2, T3 the first, second and
last third of the data (sizes ``n // 3``, then half of the rest each; the paper does not
give proportions); ``split="none"`` uses all the data for every step (the authors'
``PlattBinnerCalibrator``, with which the paper's Sec. 4.3 experiments were run).

Every output of bin j is its T3 mean, which lies inside bin j, so distinct bins have
distinct outputs (no merging is needed to evaluate the map). The multiclass forms run one
binary calibrator per class (``marginal``, on ``(p_k, 1{y = k})``, outputs not
renormalised, as the paper and code) or on the confidence of the uncalibrated argmax
(``top-label``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from ..validation import as_generator, check_n_bins, check_scores_labels
from .binning import _bin_means
from .edges import uniform_mass_edge_ranks
from .multiclass_binning import check_probability_matrix
from .scaling import LogLossData, _halved_steps, _logit

__all__ = [
    "LOSSES",
    "SPLITS",
    "MarginalScalingBinning",
    "ScalingBinning",
    "ScalingBinningBatch",
    "TopLabelScalingBinning",
    "bin_platt_values",
    "platt_fit_batch",
    "scaling_binning_fit_batch",
]

LOSSES = ("squared", "log")
_BLOCK = 1 << 16  # entries per work array of the log-loss fit's Newton sums (~L2 cache)
_COMPARE_EDGES = 48  # _row_bins counts edges up to this many inner edges (timed: B ~ 80 ties)
SPLITS = ("thirds", "none")


def _solve2(h11, h12, h22, g1, g2):
    det = h11 * h22 - h12 * h12
    return (h22 * g1 - h12 * g2) / det, (h11 * g2 - h12 * g1) / det


def _moments(x, v, out):
    """``(sum v x^2, sum v x, sum v)`` row-wise (``out``: a work array shaped as x)."""
    s1 = np.sum(np.multiply(v, x, out=out), axis=1)
    return np.sum(np.multiply(out, x, out=out), axis=1), s1, np.sum(v, axis=1)


def _affine_sigmoid(a, b, x, out):
    """``sigmoid(a x + b)`` row-wise into ``out``, bit for bit (the fits reuse work arrays)."""
    # on (100, 30000) rows a fresh temporary costs as much as the arithmetic (page faults)
    np.multiply(a[:, None], x, out=out)
    out += b[:, None]
    out *= 0.5
    np.tanh(out, out=out)
    out += 1.0
    out *= 0.5
    return out


def _platt_log_loss_fit(x, y, *, max_iter=200, tol=1e-9, penalty=1e-10):
    """Maximum likelihood for ``sigma(a x + b)`` row-wise (Newton, closed-form 2x2 steps).

    The same estimator as :func:`~calcheck.simulations.calibrators.scaling.logistic_newton_batch`
    with features ``(x, 1)`` (tested equal), written out for two parameters because the
    generic batched einsum dominates the Monte Carlo cost, and globalised: a step is halved
    until the objective decreases (plain Newton cycles on nearly separable data, e.g. a
    confident network's class probabilities). ``penalty`` adds ``penalty (a^2 + b^2) / 2``
    to the negative log-likelihood (the authors' code fits scikit-learn's logistic
    regression with C = 1e10): it changes nothing measurable on overlapping classes and
    keeps the fit finite when they are separable (no maximum exists then; the penalised
    optimum sits where the likelihood has flattened, |a| ~ log(n / penalty) / margin).
    """
    # Each Newton step's sums are taken a few rows at a time, in work arrays that stay in
    # cache (row sums are the same whatever the block: bit for bit the whole-array code).
    r, n = x.shape
    block = max(1, _BLOCK // n)
    bufs = tuple(np.empty((min(block, r), n)) for _ in range(4))  # the objective uses 4
    p, w, work = bufs[:3]
    stats = np.empty((5, r))
    # start at the identity map sigma(logit z) = z: scores are usually near-calibrated
    a, b = np.ones(r), np.zeros(r)
    for _ in range(max_iter):
        for i in range(0, r, block):
            rows = slice(i, i + block)
            xb, k = x[rows], min(block, r - i)
            pb, wb = _affine_sigmoid(a[rows], b[rows], xb, p[:k]), w[:k]
            np.multiply(np.subtract(1.0, pb, out=wb), pb, out=wb)  # p (1 - p)
            stats[:3, rows] = _moments(xb, wb, out=work[:k])
            stats[4, rows] = np.sum(np.subtract(y[rows], pb, out=wb), axis=1)
            stats[3, rows] = np.sum(np.multiply(wb, xb, out=wb), axis=1)
        h11, h12, h22, g1, g2 = stats  # g: the gradient, sum (y - p) x and sum (y - p)
        da, db = _solve2(h11 + penalty, h12, h22 + penalty, g1 - penalty * a, g2 - penalty * b)
        size = np.maximum(np.abs(da), np.abs(db))
        # Near the optimum Newton's step is safe; a large one is halved until the
        # objective decreases (only those rows pay for evaluating it).
        rows = np.flatnonzero(size > 0.5)
        if rows.size:
            step = _halved_steps(LogLossData(x, y, penalty, bufs), rows, a, b, da, db)
            da[rows] *= step
            db[rows] *= step
        a, b = a + da, b + db
        if np.all(size < tol * (1.0 + np.abs(a) + np.abs(b))):
            break
    return a, b


def _platt_squared_loss_fit(x, y, a, b, *, max_iter=100, tol=1e-7):
    """Least squares ``min sum (y - sigma(a x + b))^2`` row-wise, from ``(a, b)``.

    Newton's method with the exact Hessian, damped Levenberg-Marquardt style (a step is
    taken only if it lowers the loss; the damping adapts per row), started from the
    maximum-likelihood fit, which is close. Steps below ``tol`` stop it: near the optimum
    the loss changes less than its rounding error, and a coefficient error of 1e-7 moves
    CE^2 by ~1e-14.
    """
    # Rows are independent until the stopping rule: each iteration runs a few rows at a
    # time in work arrays that stay in cache (row sums as the whole-array code's)
    m, n = x.shape
    block = max(1, _BLOCK // n)
    lam, a, b, current = (
        np.full(m, 1e-6),
        np.array(a, dtype=float),
        np.array(b, dtype=float),
        np.empty(m),
    )
    p = np.empty((m, n))  # sigma(a x + b) at the current (a, b)
    trial_p, w, r, v, work = (np.empty((min(block, m), n)) for _ in range(5))
    blocks = [(slice(i, i + block), min(block, m - i)) for i in range(0, m, block)]

    def loss(a_, b_, xb, yb, out, k):
        # sigma(a_ x + b_) is left in out: an accepted step's p is the next iteration's
        _affine_sigmoid(a_, b_, xb, out)
        res = np.subtract(yb, out, out=work[:k])
        return np.sum(np.square(res, out=res), axis=1)

    for rows, k in blocks:
        current[rows] = loss(a[rows], b[rows], x[rows], y[rows], p[rows], k)
    da, db = np.empty(m), np.empty(m)
    for _ in range(max_iter):
        for rows, k in blocks:
            xb, yb, pb = x[rows], y[rows], p[rows]
            wb, rb, vb = w[:k], r[:k], v[:k]
            np.multiply(np.subtract(1.0, pb, out=wb), pb, out=wb)  # w = p (1 - p)
            np.multiply(np.subtract(yb, pb, out=rb), wb, out=rb)  # r w, r = y - p
            np.subtract(1.0, np.multiply(pb, 2.0, out=vb), out=vb)
            vb *= rb  # r w (1 - 2 p)
            wb *= wb  # w^2
            np.subtract(wb, vb, out=vb)  # w^2 - r w (1 - 2 p)
            h11, h12, h22 = _moments(xb, vb, out=work[:k])
            g11, _, g22 = _moments(xb, wb, out=work[:k])
            g2 = np.sum(rb, axis=1)
            g1 = np.sum(np.multiply(rb, xb, out=rb), axis=1)
            # damping on the Gauss-Newton diagonal keeps the system positive definite
            lb = lam[rows]
            dab, dbb = _solve2(h11 + lb * (g11 + 1.0), h12, h22 + lb * (g22 + 1.0), g1, g2)
            ab, bb, tp = a[rows], b[rows], trial_p[:k]
            new = loss(ab + dab, bb + dbb, xb, yb, tp, k)
            better = np.isfinite(new) & (new <= current[rows])
            a[rows], b[rows] = np.where(better, ab + dab, ab), np.where(better, bb + dbb, bb)
            current[rows] = np.where(better, new, current[rows])
            pb[better] = tp[better]
            # bounded damping: the squared-loss minimiser need not exist on small sets (a
            # step function is the infimum); the iterates then drift to large |a| until
            # steps vanish
            lam[rows] = np.clip(np.where(better, lb / 10.0, lb * 10.0), 1e-12, 1e12)
            da[rows], db[rows] = dab, dbb
        if max(np.max(np.abs(da)), np.max(np.abs(db))) < tol:
            break
    return a, b


def platt_fit_batch(scores, labels, *, loss="squared", start=None, logits=None):
    """Platt coefficients ``(a, b)`` of ``sigma(a logit z + b)`` for R data sets, ``(R, 2)``.

    ``loss="log"``: maximum likelihood; ``loss="squared"``: least squares (klm19 Sec. 4.1,
    step 1 as written), started from the maximum-likelihood fit, or from ``start``
    (``(R, 2)``, e.g. that fit computed already). ``logits``: ``logit(scores)`` if the
    caller has it (the Monte Carlo reuses it across fits).
    """
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")
    x = _logit(np.asarray(scores, dtype=float)) if logits is None else logits
    y = np.asarray(labels, dtype=float)
    if start is None or loss == "log":
        a, b = _platt_log_loss_fit(x, y)
    else:
        a, b = np.array(start[:, 0], dtype=float), np.array(start[:, 1], dtype=float)
    if loss == "squared":
        a, b = _platt_squared_loss_fit(x, y, a, b)
    return np.column_stack([a, b])


@dataclass(frozen=True)
class ScalingBinningBatch:
    """R fitted scaling-binning maps.

    Bins are kept on the scale of g's logit ``t = a logit z + b`` (``t_edges``): the map
    is the same, but g(z) = sigma(t) underflows to exactly 0 for t < -745 (and is 1.0 in
    floating point for t > 37), where a steep fit (separable data) would merge bins.

    Attributes
    ----------
    coef : ndarray, shape (R, 2)
        Platt coefficients ``(a, b)`` of g.
    t_edges : ndarray, shape (R, B + 1)
        Bin edges on ``t`` (``-inf = t_0 <= ... <= t_B = inf``).
    values : ndarray, shape (R, B)
        Output of each bin.
    counts : ndarray, shape (R, B)
        T3 points averaged into each bin (0: empty, the midpoint is output).
    """

    coef: np.ndarray
    t_edges: np.ndarray
    values: np.ndarray
    counts: np.ndarray

    @property
    def edges(self) -> np.ndarray:
        """Bin edges on g's values, ``sigma(t_edges)`` (``0 = e_0 <= ... <= e_B = 1``)."""
        return expit(self.t_edges)

    def z_edges(self) -> np.ndarray:
        """Bin edges on the score scale (decreasing in a row where ``a < 0``)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return expit((self.t_edges - self.coef[:, 1:2]) / self.coef[:, :1])

    def bins(self, scores):
        """Bin of every score ``(R, m)`` (a score on an edge belongs to the upper bin)."""
        t = self.coef[:, :1] * _logit(np.asarray(scores, dtype=float)) + self.coef[:, 1:2]
        return _row_bins(t, self.t_edges)

    def predict(self, scores):
        """Outputs for scores ``(R, m)``."""
        return np.take_along_axis(self.values, self.bins(scores), axis=1)


def _row_bins(values, edges):
    """Row-wise ``searchsorted`` on the inner edges (any real values; upper bin on ties)."""
    inner = edges[:, 1:-1]
    if inner.shape[1] <= _COMPARE_EDGES and not (np.isnan(inner).any() or np.isnan(values).any()):
        # the bin is the number of inner edges <= v: with few edges, counting them beats a
        # binary search per row (~4x at B = 10); NaN (searchsorted: last) takes the other path
        bins = np.zeros(values.shape, dtype=np.int16)
        ge = np.empty(values.shape, dtype=bool)
        for k in range(inner.shape[1]):
            np.greater_equal(values, inner[:, k : k + 1], out=ge)
            np.add(bins, ge, out=bins, casting="unsafe")
        return bins.astype(np.intp)
    return np.stack(
        [np.searchsorted(e, v, side="right") for e, v in zip(inner, values, strict=True)]
    )


def _split_sizes(n, split):
    if split == "none":
        return (0, n), (0, n), (0, n)
    n1 = n // 3
    n2 = (n - n1) // 2
    return (0, n1), (n1, n1 + n2), (n1 + n2, n)


def scaling_binning_fit_batch(scores, labels, n_bins, *, split="thirds", loss="squared"):
    """Fit R scaling-binning calibrators at once (rows are i.i.d. recalibration sets).

    Parameters
    ----------
    scores, labels : ndarray, shape (R, n)
    n_bins : int
    split : {"thirds", "none"}
    loss : {"squared", "log"}

    Returns
    -------
    ScalingBinningBatch
    """
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    s = np.asarray(scores, dtype=float)
    y = np.asarray(labels, dtype=float)
    (a1, b1), (a2, b2), _ = _split_sizes(s.shape[1], split)
    if b2 - a2 < n_bins or b1 - a1 < 2:
        raise ValueError(
            f"too few points: n={s.shape[1]} with split={split!r} leaves {b1 - a1} to fit g "
            f"and {b2 - a2} to form n_bins={n_bins} bins"
        )
    x = _logit(s)
    coef = platt_fit_batch(None, y[:, a1:b1], loss=loss, logits=x[:, a1:b1])
    return bin_platt_values(coef, x, n_bins, split=split)


def bin_platt_values(coef, logits, n_bins, *, split="thirds"):
    """Steps 2 and 3 of scaling-binning for fitted Platt maps ``coef`` ``(R, 2)``.

    ``logits`` are ``logit(z)`` of the data rows ``(R, n)``. Bins from the values g(z) of
    T2, outputs the means of g(z) on T3 (no labels); the parts are those of
    :func:`scaling_binning_fit_batch` for the same ``split``.
    """
    x = np.asarray(logits, dtype=float)
    _, (a2, b2), (a3, b3) = _split_sizes(x.shape[1], split)
    a, b = coef[:, :1], coef[:, 1:2]
    t2 = np.multiply(a, x[:, a2:b2])
    t2 += b
    t2.sort(axis=1)
    inner = t2[:, uniform_mass_edge_ranks(t2.shape[1], n_bins)[1:-1] - 1]
    inf = np.full((x.shape[0], 1), np.inf)
    t_edges = np.concatenate([-inf, inner, inf], axis=1)
    t3 = np.multiply(a, x[:, a3:b3], out=t2 if (a3, b3) == (a2, b2) else None)  # t2 is spent
    t3 += b
    g_edges = expit(t_edges)
    values, counts = _bin_means(
        _row_bins(t3, t_edges), expit(t3), n_bins, g_edges[:, :-1], g_edges[:, 1:]
    )
    return ScalingBinningBatch(coef, t_edges, values, counts)


class _ScalingBinningParams:
    """The parameters every scaling-binning estimator takes (see :class:`ScalingBinning`)."""

    def __init__(self, n_bins=10, *, split="thirds", loss="squared", rng=None):
        self.n_bins = n_bins
        self.split = split
        self.loss = loss
        self.rng = rng


class ScalingBinning(_ScalingBinningParams):
    """Scaling-binning calibrator (klm19 Sec. 4.1), scikit-learn style.

    Parameters
    ----------
    n_bins : int
        B, the number of bins.
    split : {"thirds", "none"}
        ``"thirds"``: the paper's T1/T2/T3 split (a random permutation drawn from ``rng``,
        then thirds); ``"none"``: all data for every step (the authors' code).
    loss : {"squared", "log"}
        Loss of step 1 (``"squared"`` as the algorithm is written; ``"log"`` as the
        paper's experiments).
    rng : None, int, SeedSequence or Generator
        Randomness of the split (unused with ``split="none"``).

    Attributes
    ----------
    coef_ : ndarray, shape (2,)
        ``(a, b)`` of the fitted sigmoid ``sigma(a logit z + b)``.
    edges_ : ndarray, shape (B + 1,)
        Bin edges on g's values.
    values_ : ndarray, shape (B,)
        Output per bin.
    """

    def fit(self, scores, labels, *, rng=None):
        """Fit on scores in [0, 1] and labels in {0, 1}.

        ``rng`` (optional) draws the split in place of the ``rng`` parameter, so that a
        simulation hands every replicate its own stream.
        """
        check_n_bins(self.n_bins)
        s, y = check_scores_labels(scores, labels, allow_fractional=False)
        if self.split == "thirds":
            perm = as_generator(self.rng if rng is None else rng).permutation(s.size)
            s, y = s[perm], y[perm]
        fit = scaling_binning_fit_batch(
            s[None], y[None].astype(float), self.n_bins, split=self.split, loss=self.loss
        )
        self._batch = fit
        self.coef_, self.edges_ = fit.coef[0], fit.edges[0]
        self.values_ = fit.values[0]
        return self

    def predict(self, scores):
        """Calibrated probability of class 1 (one of at most B values)."""
        if not hasattr(self, "_batch"):
            raise ValueError("this ScalingBinning is not fitted yet; call fit first")
        s = np.asarray(scores, dtype=float)
        if s.ndim != 1 or not np.all((s >= 0) & (s <= 1)):
            raise ValueError("scores must be a 1-d array of values in [0, 1]")
        return self._batch.predict(s[None])[0]

    def predict_proba(self, scores):
        """Class probabilities, shape ``(n, 2)``."""
        h = self.predict(scores)
        return np.column_stack([1.0 - h, h])


class MarginalScalingBinning(_ScalingBinningParams):
    """One :class:`ScalingBinning` per class on ``(p_k, 1{y = k})`` (klm19 Sec. 4.3).

    ``predict_proba`` returns the per-class outputs, not renormalised (as the paper and the
    authors' code). Parameters as :class:`ScalingBinning`; each class gets its own child
    seed of ``rng``.
    """

    def fit(self, probs, labels):
        """Fit on probabilities ``(n, K)`` and integer labels ``(n,)``."""
        p, y = check_probability_matrix(probs, labels, name="probs")
        seeds = as_generator(self.rng).spawn(p.shape[1])
        self.calibrators_ = [
            ScalingBinning(self.n_bins, split=self.split, loss=self.loss, rng=seeds[k]).fit(
                p[:, k], (y == k).astype(float)
            )
            for k in range(p.shape[1])
        ]
        return self

    def predict_proba(self, probs):
        """Recalibrated per-class probabilities ``(n, K)``."""
        if not hasattr(self, "calibrators_"):
            raise ValueError("this MarginalScalingBinning is not fitted yet; call fit first")
        p = check_probability_matrix(probs, name="probs")
        return np.column_stack([c.predict(p[:, k]) for k, c in enumerate(self.calibrators_)])


class TopLabelScalingBinning(_ScalingBinningParams):
    """One :class:`ScalingBinning` on the confidence of the uncalibrated argmax.

    ``predict`` returns ``(predicted class, calibrated confidence)``; the argmax is not
    changed (klm19 Sec. 4.3, App. E). Parameters as :class:`ScalingBinning`.
    """

    def fit(self, probs, labels):
        """Fit on probabilities ``(n, K)`` and integer labels ``(n,)``."""
        p, y = check_probability_matrix(probs, labels, name="probs")
        pred = np.argmax(p, axis=1)
        self.calibrator_ = ScalingBinning(
            self.n_bins, split=self.split, loss=self.loss, rng=self.rng
        ).fit(p.max(axis=1), (pred == y).astype(float))
        return self

    def predict(self, probs):
        """``(classes, confidences)`` for probabilities ``(n, K)``."""
        if not hasattr(self, "calibrator_"):
            raise ValueError("this TopLabelScalingBinning is not fitted yet; call fit first")
        p = check_probability_matrix(probs, name="probs")
        return np.argmax(p, axis=1), self.calibrator_.predict(p.max(axis=1))
