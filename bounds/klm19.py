"""Guarantees of Kumar, Liang & Ma (2019), verified uncertainty calibration.

Symbols: ``n`` points, ``n_bins`` (the paper's B), the squared calibration error ``ce_sq``
of a binned model (the paper's script E^2), failure probability ``delta`` and the
unspecified universal constant ``c`` ("there is a universal constant c such that
n >= c h(...) suffices"). Logs are natural (the paper does not say; only c changes).

The paper's sample-size results hold for *some* constant c that it never gives, so a
fixed-n coverage check does not apply to them: they are registered with the quantifier
``rate`` and checked by their thresholds (:mod:`calcheck.theory_checks.series.rates`): the smallest
n at which the event holds w.p. >= 1 - delta must grow no faster than the stated ``h``. Their
functions return ``c * h`` with ``c`` a required keyword, so that no default constant is
ever mistaken for the paper's.

Only the main text is available (appendices B-G, with every proof, are not); the formulas
below are rebuilt from the text with the glyphs the extraction dropped (delta, sqrt, >=).

References
----------
.. [1] A. Kumar, P. Liang and T. Ma, "Verified uncertainty calibration", NeurIPS 2019,
       pp. 3792-3803.
"""

from __future__ import annotations

import numpy as np

from ._validation import as_integer_array, as_open_unit, as_positive, guard_public, scalar_or_array
from .guarantee import Guarantee

__all__ = [
    "def52_conditional_mean",
    "ex32_hidden_ce",
    "lem43_sample_size",
    "lem43_vc_sample_size",
    "prop33_binned_ce_bound",
    "thm53_sample_size",
    "thm54_sample_size",
]


def _b(n_bins, minimum=1):
    return as_integer_array(n_bins, "n_bins", minimum=minimum).astype(float)


def _c(c):
    if c is None:
        raise ValueError("c must be given: the paper leaves its universal constant unspecified")
    return as_positive(c, "c")


def _ce_sq(ce_sq):
    e = as_positive(ce_sq, "ce_sq")
    if np.any(e > 1):
        raise ValueError(f"ce_sq must lie in (0, 1], got {ce_sq!r}")
    return e


def ex32_hidden_ce():
    r"""Example 3.2: a law on which binning hides almost all miscalibration.

    For every binning scheme B and continuous bijection f: [0, 1] -> [0, 1] there is a law
    P with :math:`CE(f_\mathcal{B}) = 0` but :math:`CE(f) \ge 0.49`, for every l_p calibration
    error (p >= 1, including the ECE).

    Paper: klm19, Example 3.2 (Sec. 3; proof in App. B, not available).

    Hypotheses: f continuous and bijective; B any partition of [0, 1] into intervals.

    Quantifier: lower_bound (an existence statement: for all B and f there is a law).

    Returns
    -------
    float
        0.49, the stated CE(f) that binning can hide.

    Notes
    -----
    The construction calcheck uses (the paper's is in the missing appendix): in one bin,
    f(X) ~ U[c - w, c + w] with E[Y | f(X) = z] = 1 above c and 2c - 1 below; the bin's
    mean score and mean label are both c, so CE(f_B) = 0, and ``|z - E[Y | z]| >= 1 - c - w``
    everywhere. c = 0.505, w = 0.004 give 0.491; any constant below 1/2 can be reached.
    """
    return 0.49


def prop33_binned_ce_bound(ce):
    r"""Proposition 3.3: binning can only lower the calibration error.

    .. math:: CE_p(f_\mathcal{B}) \le CE_p(f), \quad p \ge 1.

    Paper: klm19, Proposition 3.3 (eq. 4 defines f_B); proof by Jensen's inequality.

    Hypotheses: none beyond measurability; population quantities (exact conditional
    expectations), not estimates.

    Quantifier: identity (an exact inequality, no probability).

    Parameters
    ----------
    ce : float or array_like
        CE_p(f) in [0, 1].

    Returns
    -------
    float or ndarray
        The bound on CE_p(f_B), i.e. ``ce`` itself.

    Notes
    -----
    A *nested* refinement B' of B gives CE(f_B) <= CE(f_B') <= CE(f); a finer scheme that is
    not nested need not increase the binned CE (the suite's negative control shows it).
    """
    arr = np.asarray(ce, dtype=float)
    if not np.all((arr >= 0) & (arr <= 1)):
        raise ValueError(f"ce must lie in [0, 1], got {ce!r}")
    return scalar_or_array(arr)


def lem43_sample_size(n_bins, delta, *, c):
    r"""Lemma 4.3: uniform-mass bins are 2-well-balanced once n >= c B log(B / delta).

    .. math:: n \ge c\, B \log(B/\delta) \Rightarrow
       \tfrac{1}{2B} \le P(g(Z) \in I_j) \le \tfrac{2}{B}\ \forall j \text{ w.p.} \ge 1-\delta.

    Paper: klm19, Lemma 4.3 and Definition 4.2 (Sec. 4.2).

    Hypotheses: n i.i.d. points build the uniform-mass bins (``|T2|`` in the scaling-binning
    calibrator); g(Z) continuous (an atom heavier than 2/B can never be balanced).

    Quantifier: rate (there is a universal c such that n >= c h suffices).

    Parameters
    ----------
    n_bins : int or array_like of int
        B >= 1.
    delta : float or array_like
        Failure probability in (0, 1).
    c : float
        The unspecified universal constant (required).

    Returns
    -------
    float or ndarray
        ``c * B * log(B / delta)``.

    Notes
    -----
    With order-statistic edges and continuous scores the bin masses are sums of uniform
    spacings, distribution-free; large deviations of Gamma(m) / m (rate x - 1 - ln x,
    0.193 at x = 1/2) predict a threshold near 5.2 B ln(B / delta) for many points per bin.
    """
    b = _b(n_bins)
    d = as_open_unit(delta, "delta")
    return scalar_or_array(_c(c) * b * np.log(b / d))


def lem43_vc_sample_size(n_bins, delta, *, c):
    r"""Sec. 4.2 remark: a Chernoff / VC argument needs n >= c B^2 log(B / delta).

    Paper: klm19, Sec. 4.2, the remark after Lemma 4.3 (informal claim G-I4).

    Hypotheses: those of Lemma 4.3.

    Quantifier: rate. Looser than Lemma 4.3 by a factor B, so its check must be consistent.

    Parameters
    ----------
    n_bins : int or array_like of int
    delta : float or array_like
    c : float

    Returns
    -------
    float or ndarray
        ``c * B**2 * log(B / delta)``.

    Notes
    -----
    The extracted text reads "O(B2 log B ) samples"; the exponent and the delta are rebuilt.
    """
    b = _b(n_bins)
    d = as_open_unit(delta, "delta")
    return scalar_or_array(_c(c) * b**2 * np.log(b / d))


def def52_conditional_mean(values, label_means, counts):
    r"""Conditional mean of the debiased estimator (Definition 5.2) given the bin counts.

    .. math:: E[\hat E^2_{db} \mid n_1, \ldots, n_B] = \sum_{s: n_s \ge 2} \frac{n_s}{n}
        (s - y_s)^2

    since :math:`E[(s - \hat y_s)^2 \mid n_s] = (s - y_s)^2 + y_s (1 - y_s) / n_s` and the
    correction :math:`\hat y_s (1 - \hat y_s) / (n_s - 1)` has conditional mean
    :math:`y_s (1 - y_s) / n_s`. Bins with :math:`n_s < 2` contribute 0 (the authors' code).

    Paper: klm19, Definition 5.2 (the debiased estimator of Broecker 2012 and Ferro & Fricker
    2012); the identity is what makes its bias vanish, the basis of Theorem 5.4.

    Hypotheses: a binned model with values s and true label means y_s; labels independent
    Bernoulli(y_s) given the counts.

    Quantifier: expectation (an exact conditional mean).

    Parameters
    ----------
    values, label_means : array_like, shape (B,)
        s and y_s, in [0, 1].
    counts : array_like of int, shape (B,) or (R, B)
        n_s.

    Returns
    -------
    float or ndarray

    Notes
    -----
    The plug-in estimator's conditional mean adds :math:`\sum_s y_s (1 - y_s) / n` over
    non-empty bins (its bias, G-I3): the suite's control claims the plug-in is unbiased.
    """
    s = np.asarray(values, dtype=float)
    y = np.asarray(label_means, dtype=float)
    n_s = np.asarray(counts, dtype=float)
    if s.shape != y.shape or n_s.shape[-1:] != s.shape:
        raise ValueError(
            f"values, label_means and counts disagree: {s.shape}, {y.shape}, {n_s.shape}"
        )
    if not (np.all((s >= 0) & (s <= 1)) and np.all((y >= 0) & (y <= 1))):
        raise ValueError("values and label_means must lie in [0, 1]")
    if np.any(n_s < 0) or np.any(n_s != np.round(n_s)) or np.any(n_s.sum(axis=-1) == 0):
        raise ValueError("counts must be non-negative integers with a positive total")
    big = np.where(n_s >= 2, n_s, 0.0)
    return scalar_or_array(np.sum(big * (s - y) ** 2, axis=-1) / n_s.sum(axis=-1))


def thm53_sample_size(n_bins, ce_sq, delta, *, c):
    r"""Theorem 5.3: the plug-in estimator is within a factor 1/2 once n >= c (B/E^2) log(B/delta).

    .. math:: n \ge c\,\frac{B}{E^2}\log\frac{B}{\delta} \Rightarrow
       \tfrac12 E^2 \le \hat E^2_{pl} \le \tfrac32 E^2 \text{ w.p.} \ge 1 - \delta.

    Paper: klm19, Theorem 5.3 and Definition 5.1 (Sec. 5).

    Hypotheses: a fixed binned model with B values, each of mass >= 1/(2B) (footnote 1: the
    upper half of 2-well-balance is not needed); n i.i.d. evaluation points; E^2 > 0.

    Quantifier: rate.

    Parameters
    ----------
    n_bins : int or array_like of int
    ce_sq : float or array_like
        The squared calibration error E^2 in (0, 1].
    delta : float or array_like
    c : float

    Returns
    -------
    float or ndarray

    Notes
    -----
    The B / E^2 rate is necessary for the plug-in: given the counts its bias is
    (1/n) sum_s y_s (1 - y_s), about B / (4n) when y_s is near 1/2, so the upper
    inequality fails for n < B / (2 E^2) even without variance.
    """
    b = _b(n_bins)
    return scalar_or_array(_c(c) * b / _ce_sq(ce_sq) * np.log(b / as_open_unit(delta, "delta")))


def thm54_sample_size(n_bins, ce_sq, delta, *, c):
    r"""Theorem 5.4: the debiased estimator needs only n >= c (sqrt(B)/E^2) log(B/delta).

    .. math:: n \ge c\,\frac{\sqrt B}{E^2}\log\frac{B}{\delta} \Rightarrow
       \tfrac12 E^2 \le \hat E^2_{db} \le \tfrac32 E^2 \text{ w.p.} \ge 1 - \delta.

    Paper: klm19, Theorem 5.4 and Definition 5.2 (Sec. 5; proof via Lemma F.8, not
    available).

    Hypotheses: those of Theorem 5.3 (lower mass bound 1/(2B) only).

    Quantifier: rate.

    Parameters
    ----------
    n_bins : int or array_like of int
    ce_sq : float or array_like
    delta : float or array_like
    c : float

    Returns
    -------
    float or ndarray

    Notes
    -----
    The paper does not say how bins with fewer than two points enter the debiased
    estimator (its correction divides by n_s - 1); calcheck follows the authors' code (such
    a bin contributes 0) and states it. When E^2 >> 1/sqrt(B) the stated n is far below
    B log B, so many bins hold fewer than two points.
    """
    b = _b(n_bins)
    return scalar_or_array(
        _c(c) * np.sqrt(b) / _ce_sq(ce_sq) * np.log(b / as_open_unit(delta, "delta"))
    )


_RATE_HYP = ("universal constant c unspecified", "natural log (only c depends on the base)")
_ESTIMATOR_HYP = (
    "binned model fixed, B values of mass >= 1/(2B)",
    "n i.i.d. evaluation points",
    "E^2 > 0",
    *_RATE_HYP,
)

guard_public(globals())  # broadcasting errors name the arguments

GUARANTEES = (
    Guarantee(
        "klm19.ex32",
        ex32_hidden_ce,
        "klm19",
        "Example 3.2",
        "for every binning and continuous bijection f a law has CE(f_B) = 0, CE(f) >= 0.49",
        ("f continuous and bijective", "B a partition of [0, 1] into intervals"),
        "lower_bound",
    ),
    Guarantee(
        "klm19.prop33",
        prop33_binned_ce_bound,
        "klm19",
        "Proposition 3.3",
        "CE_p(f_B) <= CE_p(f) for every binning and p >= 1",
        ("population quantities (exact conditional expectations)",),
        "identity",
    ),
    Guarantee(
        "klm19.lem43",
        lem43_sample_size,
        "klm19",
        "Lemma 4.3",
        "n >= c B log(B/delta) gives 2-well-balanced uniform-mass bins w.p. >= 1 - delta",
        ("scores continuous (no atoms)", "n i.i.d. points build the bins", *_RATE_HYP),
        "rate",
    ),
    Guarantee(
        "klm19.lem43.vc",
        lem43_vc_sample_size,
        "klm19",
        "Sec. 4.2 (G-I4)",
        "a VC argument: n >= c B^2 log(B/delta) gives 2-well-balanced bins",
        ("scores continuous (no atoms)", "n i.i.d. points build the bins", *_RATE_HYP),
        "rate",
        variant_of="klm19.lem43",
    ),
    Guarantee(
        "klm19.def52",
        def52_conditional_mean,
        "klm19",
        "Definition 5.2",
        "the debiased estimator is conditionally unbiased for sum_{n_s >= 2} (n_s/n)(s - y_s)^2",
        ("binned model", "labels Bernoulli(y_s) given the counts", "bins with n_s < 2 dropped"),
        "expectation",
    ),
    Guarantee(
        "klm19.thm53",
        thm53_sample_size,
        "klm19",
        "Theorem 5.3",
        "plug-in: n >= c (B/E^2) log(B/delta) gives E^2/2 <= Ehat^2 <= 3E^2/2 w.p. >= 1 - delta",
        _ESTIMATOR_HYP,
        "rate",
    ),
    Guarantee(
        "klm19.thm54",
        thm54_sample_size,
        "klm19",
        "Theorem 5.4",
        "debiased: n >= c (sqrt(B)/E^2) log(B/delta) gives E^2/2 <= Ehat^2 <= 3E^2/2 "
        "w.p. >= 1 - delta",
        _ESTIMATOR_HYP,
        "rate",
    ),
)
