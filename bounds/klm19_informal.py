"""Informal rate claims of Kumar, Liang & Ma (2019): stated in prose, not as theorems.

The paper states several rates in words ("O(1/eps^2) samples", "bias B/n", "decreases
approximately as 1/n"). They are registered with the quantifier ``informal_rate`` so that
no one mistakes them for theorems, and checked like rates: a "needs O(h) samples" claim
by thresholds (:mod:`calcheck.theory_checks.series.rates`), a "behaves like h" claim by the fitted
exponent of a mean (:mod:`calcheck.theory_checks.series.exponents`). Each function returns ``c * h``
with the unspecified constant ``c`` a required keyword. The catalog numbers them G-I1 .. G-I5;
G-I4 (the VC remark on Lemma 4.3) is :func:`calcheck.bounds.klm19.lem43_vc_sample_size`.

References
----------
.. [1] A. Kumar, P. Liang and T. Ma, "Verified uncertainty calibration", NeurIPS 2019,
       Secs. 4, 4.3 and 5.
"""

from __future__ import annotations

import numpy as np

from ._validation import as_integer_array, as_open_unit, as_positive, guard_public, scalar_or_array
from .guarantee import Guarantee
from .klm19 import _b, _c

__all__ = [
    "gi1_scaling_ce_sq",
    "gi2_histogram_sample_size",
    "gi3_plugin_bias",
    "gi3_plugin_bias_exact",
    "gi5_histogram_ce_sq",
    "gi5_scaling_binning_ce_sq",
]


def _n(n):
    return as_integer_array(n, "n", minimum=1).astype(float)


def gi1_scaling_ce_sq(n, *, c):
    r"""G-I1: a well-specified scaling method has :math:`E[CE(g)^2] \approx c / n`.

    Paper: klm19, Sec. 4 and abstract: scaling methods need O(1/eps^2) samples "if the
    function family has at least one function that can achieve calibration error eps".

    Hypotheses: the family contains a calibrated function (well-specified); n recalibration
    points. Under misspecification the CE^2 plateaus at min_G CE^2 instead.

    Quantifier: informal_rate (a proportionality, checked by the fitted exponent in n).

    Parameters
    ----------
    n : int or array_like of int
    c : float

    Returns
    -------
    float or ndarray

    Notes
    -----
    calcheck checks the exponent of E[CE^2] in n for log-loss Platt scaling on the App. E
    law (Z uniform, q = sigma(2 logit z + 1)), with CE^2 = int (g - q)^2 by quadrature.
    """
    return scalar_or_array(_c(c) / _n(n))


def gi2_histogram_sample_size(n_bins, eps_sq, *, c):
    r"""G-I2: histogram binning needs :math:`n \ge c B / \epsilon^2` for CE^2 <= eps^2.

    Paper: klm19, Sec. 4 and abstract, citing Naeini et al. (2015): O(B/eps^2) samples.

    Hypotheses: uniform-mass histogram binning, B bins, n recalibration points.

    Quantifier: informal_rate (a sample size, checked by thresholds).

    Parameters
    ----------
    n_bins : int or array_like of int
    eps_sq : float or array_like
    c : float

    Returns
    -------
    float or ndarray

    Notes
    -----
    calcheck's histogram binning is Zadrozny-Elkan (uniform-mass bins on all n points,
    label means); its output merges bins with equal means, which makes its CE^2 grow
    more slowly than B when bins hold few points, so the threshold grows more slowly than
    B/eps^2 there (the claim is an upper bound on the sample size and still holds).
    """
    return scalar_or_array(_c(c) * _b(n_bins) / as_open_unit(eps_sq, "eps_sq"))


def gi3_plugin_bias(n_bins, n, *, c):
    r"""G-I3: the plug-in estimator's bias is about :math:`c B / n` (c = 1 in the text).

    Paper: klm19, Sec. 5: "each term in the sum has bias 1/n ... total bias B/n". The
    exact bias is :func:`gi3_plugin_bias_exact`, at most B/(4n).

    Quantifier: informal_rate (checked by the fitted exponents in B and n).

    Parameters
    ----------
    n_bins, n : int or array_like of int
    c : float

    Returns
    -------
    float or ndarray

    Notes
    -----
    "Bias 1/n per bin" is y_s (1 - y_s)/n <= 1/(4n) per non-empty bin: the exact bias is
    at most B/(4n), equal to it when every y_s = 1/2 and n >> B.
    """
    return scalar_or_array(_c(c) * _b(n_bins) / _n(n))


def gi3_plugin_bias_exact(label_means, masses, n):
    r"""Exact bias of the plug-in squared-CE estimator of a binned model.

    .. math:: E[\hat E^2_{pl}] - E^2 = \frac1n \sum_s y_s (1 - y_s) (1 - (1 - \pi_s)^n)

    (given the counts, bin s contributes ``(n_s / n) Var(ybar_s) = y_s (1 - y_s) / n`` if
    it is non-empty). Derived, not printed in the paper; it is at most B / (4n).

    Parameters
    ----------
    label_means : array_like
        y_s, in [0, 1].
    masses : array_like
        pi_s, positive, summing to 1.
    n : int

    Returns
    -------
    float

    Notes
    -----
    Not a registered claim; the exact value behind G-I3, tested against simulation.
    """
    y = np.asarray(label_means, dtype=float)
    pi = as_positive(masses, "masses")
    if y.shape != pi.shape or not np.all((y >= 0) & (y <= 1)):
        raise ValueError("label_means must lie in [0, 1] with the shape of masses")
    if abs(pi.sum() - 1.0) > 1e-9:
        raise ValueError(f"masses must sum to 1, got {pi.sum()!r}")
    nn = _n(n)
    if nn.ndim:  # one n: the bias of one estimator (float() of an array is a TypeError)
        raise ValueError(f"n must be a single integer, got {n!r}")
    nn = float(nn)
    return float(np.sum(y * (1 - y) * -np.expm1(nn * np.log1p(-pi))) / nn)


def gi5_scaling_binning_ce_sq(n, *, c):
    r"""G-I5 (scaling-binning): :math:`E[CE^2] \approx c / n`, nearly constant in B.

    Paper: klm19, Sec. 4.3 (App. E synthetic experiments): "if we fix the number of samples
    n, and vary the number of bins B, the squared calibration error for the scaling-binning
    calibrator is nearly constant ... decreases approximately as 1/n".

    Quantifier: informal_rate (fitted exponents: 0 in B, -1 in n).

    Parameters
    ----------
    n : int or array_like of int
    c : float

    Returns
    -------
    float or ndarray

    Notes
    -----
    Checked on the App. E grids (n = 500..4000 at B = 10; B = 10..80 at n = 2000) for the
    paper's calibrator (T1/T2/T3 thirds, squared-loss Platt), CE^2 exact by quadrature.
    """
    return scalar_or_array(_c(c) / _n(n))


def gi5_histogram_ce_sq(n_bins, n, *, c):
    r"""G-I5 (histogram binning): :math:`E[CE^2] \approx c B / n`.

    Paper: klm19, Sec. 4.3: "for histogram binning increases nearly linearly with B ...
    decreases approximately as 1/n".

    Quantifier: informal_rate (fitted exponents: 1 in B, -1 in n).

    Parameters
    ----------
    n_bins, n : int or array_like of int
    c : float

    Returns
    -------
    float or ndarray

    Notes
    -----
    Linear in B for the binning's CE (every bin its own level set). The map a user gets
    merges bins with tied label means (E[Y | h(Z)] averages over a level set), and at
    n/B = 25 its CE^2 stops growing with B: measured exponent 0.6 over B = 10..80 at
    n = 2000 (the suite's documented control).
    """
    return scalar_or_array(_c(c) * _b(n_bins) / _n(n))


_HYP = ("stated informally (prose, not a theorem)", "constant c unspecified")

guard_public(globals())  # broadcasting errors name the arguments

GUARANTEES = (
    Guarantee(
        "klm19.gi1",
        gi1_scaling_ce_sq,
        "klm19",
        "Sec. 4, abstract (G-I1)",
        "well-specified scaling (Platt): E[CE^2] ~ c/n, i.e. O(1/eps^2) samples",
        ("the family contains a calibrated function", *_HYP),
        "informal_rate",
    ),
    Guarantee(
        "klm19.gi2",
        gi2_histogram_sample_size,
        "klm19",
        "Sec. 4, abstract (G-I2)",
        "histogram binning: n >= c B/eps^2 gives CE^2 <= eps^2",
        ("uniform-mass histogram binning", *_HYP),
        "informal_rate",
    ),
    Guarantee(
        "klm19.gi3",
        gi3_plugin_bias,
        "klm19",
        "Sec. 5 (G-I3)",
        "plug-in squared-CE estimator: bias ~ B/n",
        ("binned model, n evaluation points", *_HYP),
        "informal_rate",
    ),
    Guarantee(
        "klm19.gi5.sb",
        gi5_scaling_binning_ce_sq,
        "klm19",
        "Sec. 4.3, App. E (G-I5)",
        "scaling-binning: E[CE^2] ~ c/n, nearly constant in B",
        ("synthetic Platt law of App. E", *_HYP),
        "informal_rate",
    ),
    Guarantee(
        "klm19.gi5.hist",
        gi5_histogram_ce_sq,
        "klm19",
        "Sec. 4.3, App. E (G-I5)",
        "histogram binning: E[CE^2] ~ c B/n, nearly linear in B",
        ("synthetic Platt law of App. E", *_HYP),
        "informal_rate",
    ),
)
