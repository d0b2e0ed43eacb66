"""Sample size of uniform-mass binning with sample splitting (UMS), Gupta & Ramdas (2021).

Appendix B's recipe, kept apart from :mod:`calcheck.bounds.gr21` (which re-exports it) for size.

References
----------
.. [1] C. Gupta and A. Ramdas, "Distribution-free calibration guarantees for histogram binning
       without sample splitting", ICML 2021, Appendix B.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._validation import (
    MAX_INTEGER,
    as_integer_array,
    as_open_unit,
    as_positive,
    as_scalar,
    guard_public,
)

__all__ = ["UMSSampleSize", "ums_required_n"]


@dataclass(frozen=True)
class UMSSampleSize:
    """Sample-size recipe for UMS of Appendix B (Gupta & Ramdas 2021).

    Attributes
    ----------
    min_bin_count : int
        Points needed in the smallest bin of split 2 (Hoeffding step, failure alpha/2).
    n_quantile : int
        Size of split 1 for reliable quantiles, ``ceil(c B log(10 B / (alpha/4)))``.
    n_count : int
        Size of split 2 so that the smallest bin holds ``min_bin_count`` points w.h.p.
    n_total : int
        ``n_quantile + n_count``.
    """

    min_bin_count: int
    n_quantile: int
    n_count: int
    n_total: int


def ums_required_n(eps, alpha, n_bins, *, c=100.0):
    r"""Calibration points UMS needs for (eps, alpha)-marginal calibration, Appendix B.

    Parameters
    ----------
    eps : float
        Target radius in (0, 1).
    alpha : float
        Target miscoverage in (0, 1), split as alpha/2 (Hoeffding), alpha/4 (quantiles),
        alpha/4 (bin counts) as in Appendix B.
    n_bins : int
        Number of bins B.
    c : float, default 100
        The unspecified constant of Kumar et al. (2019, Lemma 4.3); Appendix B "optimistically"
        takes 100 (the original proof needs c >= 2000).

    Returns
    -------
    UMSSampleSize

    Notes
    -----
    Paper: Gupta & Ramdas (2021), Appendix B, quoting Gupta et al. (2020, Thm 5) and Kumar
    et al. (2019, Lemma 4.3). The printed count step ``n'/2B - sqrt(n'/log(2B/delta)/2)``
    is a typo: its numeric coefficient 1.8 matches
    ``sqrt(n' log(2B/delta)/2)``, which is implemented. With (0.1, 0.1, 10) this gives
    about 17.9K against the paper's rounded 17.5K.
    """
    e = as_scalar(as_open_unit(eps, "eps"), "eps", eps)
    a = as_scalar(as_open_unit(alpha, "alpha"), "alpha", alpha)
    b = as_scalar(as_integer_array(n_bins, "n_bins", minimum=1), "n_bins", n_bins)
    c = as_scalar(as_positive(c, "c"), "c", c)
    log_term = np.log(2 * b / (a / 4))
    coef = np.sqrt(log_term / 2)
    # eps**2 may underflow to 0 and the sizes overflow: both give inf, refused just below.
    with np.errstate(over="ignore", divide="ignore"):
        min_count_f = np.ceil(np.log(2 * b / (a / 2)) / (2 * e**2))
        n_quantile_f = np.ceil(c * b * np.log(10 * b / (a / 4)))
        # Smallest n' with n'/(2B) - sqrt(n' L / 2) >= min_count: a quadratic in sqrt(n').
        root_sq = (b * (coef + np.sqrt(coef**2 + 2 * min_count_f / b))) ** 2
    # Beyond 2**53 the counts are no longer exact integers in float64: refuse rather than
    # return a rounded or infinite sample size (or search for one for ever).
    if not (root_sq + n_quantile_f <= MAX_INTEGER):
        raise ValueError(
            f"UMS would need more than 2**53 calibration points for eps={eps!r}, "
            f"alpha={alpha!r}, n_bins={n_bins!r}, c={c!r}: eps or alpha too small, "
            "or n_bins or c too large"
        )
    min_count, n_quantile = int(min_count_f), int(n_quantile_f)

    def enough(n2):
        return n2 / (2 * b) - np.sqrt(n2 * log_term / 2) >= min_count

    # ceil of the float root may overshoot by a few ulps of n': bisect down to the smallest
    # n' that is enough (a bounded search, about 40 steps at most).
    hi = int(np.ceil(root_sq))
    lo = max(0, int(np.floor(root_sq * (1.0 - 1e-9))) - 2)
    while not enough(hi):  # rounding the other way: step up (at most a few times)
        hi += 1
    while hi - lo > 1:  # invariant: enough(hi); lo is 0 or not enough
        mid = (lo + hi) // 2
        if enough(mid):
            hi = mid
        else:
            lo = mid
    n_count = hi
    return UMSSampleSize(min_count, n_quantile, n_count, n_quantile + n_count)


guard_public(globals())
