"""What a check's cell can detect: its detectable factor, and whether it has power at all.

A cell's exact binomial test flags a success count at or below its critical count c. The
*detectable factor* is the smallest multiple of the bound the data would still let pass;
a cell has *no power* when no outcome is flagged, or when the event holds by construction
(an infinite bound) in more replicates than c: such a cell cannot fail, whatever the law.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from .verdicts import critical_count

__all__ = [
    "detectable_factor",
    "flag_count",
    "mean_detectable_factor",
    "no_power",
    "quantile_interval",
]


#: A claimed coverage this small is an expectation bound >= 1 (its claim is 1 - bound).
_TRIVIAL_CLAIM = 1e-300


def flag_count(verdict) -> int:
    """Largest success count the cell's test flags (-1: no outcome is flagged)."""
    trials, claimed, level = verdict.trials, verdict.claimed, verdict.level
    return trials - 1 if claimed >= 1 else critical_count(trials, claimed, level)


def no_power(verdict, vacuous, n_empty) -> str:
    """Why the cell cannot flag anything whatever the data ("" if it can).

    A cell has no power when its test flags no outcome at all (too few replicates for the
    claim), or when the event holds by construction (an infinite bound, or a radius that
    reaches the statistic's range) in more replicates than the test may count as successes
    and still flag.
    """
    c = flag_count(verdict)
    if c < 0 and verdict.claimed <= _TRIVIAL_CLAIM:
        return "the claim is trivial: a bound >= 1 on the mean of a [0, 1] quantity always holds"
    if c < 0:
        return (
            f"no outcome of {verdict.trials} replicates is flagged at claimed coverage "
            f"{verdict.claimed:.4g} and level {verdict.level:.3g} (too few replicates)"
        )
    if vacuous is None:
        return ""
    vacuous = np.asarray(vacuous, dtype=bool)
    k = int(vacuous.sum())
    if k <= c:
        return ""
    why = "the event holds by construction there (an infinite bound, or one that reaches the "
    why += "statistic's largest value: a radius >= 1 on an error in [0, 1])"
    empty = None if n_empty is None else np.asarray(n_empty)
    if empty is not None and empty.shape == vacuous.shape and np.all(empty[vacuous] > 0):
        every = "every" if k == vacuous.size else "every such"
        why = f"e.g. {every} replicate has an empty bin (N_b = 0)"
    if k == vacuous.size:
        return f"the bound cannot be exceeded in any replicate ({k} of {k}); {why}"
    return (
        f"the bound cannot be exceeded in {k} of {vacuous.size} replicates, more than the "
        f"{c} successes the test may count and still flag; {why}"
    )


def detectable_factor(success, ratio, verdict) -> float | None:
    """Largest k such that the cell flags the bound times any factor below k (from the data).

    Defined where success is exactly ``ratio <= 1`` (error / bound): the bound times k has
    successes ``#{ratio <= k}``, and the test flags ``successes <= c``, its critical count,
    so every k below the (c + 1)-th smallest ratio is flagged. None where the event is not
    of that form (expectations, randomised events, lower bounds on a statistic).
    """
    ratio = np.asarray(ratio, dtype=float)
    if ratio.shape != success.shape or not np.array_equal(success, ratio <= 1):
        return None
    c = flag_count(verdict)
    if c < 0:
        return 0.0  # no outcome is flagged: the test has no power at all
    return float(np.partition(ratio, c)[c])


def quantile_interval(ratio, level: float, confidence: float = 0.95):
    """Order-statistic interval of the ``level`` quantile of ``ratio`` (distribution-free).

    The critical factor f* of a cell on its law is the ``level`` quantile of error / bound;
    the interval ``[r_(l), r_(u)]`` with l, u the binomial ``(1 -/+ confidence) / 2``
    quantiles of ``Bin(R, level)`` covers it with probability at least ``confidence``
    (Hahn & Meeker). ``None`` when a bound reaches past the replicates (an end at 0 or R).
    """
    r = np.sort(np.asarray(ratio, dtype=float).ravel())
    n = r.size
    tail = (1.0 - confidence) / 2.0
    lo = int(stats.binom.ppf(tail, n, level)) - 1
    hi = int(stats.binom.ppf(1.0 - tail, n, level))
    if lo < 0 or hi >= n:
        return None
    return float(r[lo]), float(r[hi])


def mean_detectable_factor(verdict, bound: float) -> float | None:
    """Largest k such that an expectation cell flags the bound times any factor below k.

    An expectation bound ``E[Z] <= b`` is tested as the coverage ``P(U >= Z) >= 1 - b``
    (:mod:`~calcheck.theory_checks.results.verdicts`): its successes do not depend on b, so the
    bound times f is flagged exactly when the successes are at or below the critical count of the
    claim ``1 - f b``, which grows as f shrinks. The largest such f, by bisection to 1e-3
    (None for a bound that is not a positive finite number; 0 when even f -> 0 is not flagged).
    """
    if not (np.isfinite(bound) and bound > 0):
        return None
    k, trials, level = verdict.successes, verdict.trials, verdict.level

    def flagged(f: float) -> bool:
        claimed = 1.0 - f * bound
        if claimed >= 1.0:
            return k < trials
        return claimed > 0 and k <= critical_count(trials, claimed, level)

    if not flagged(1e-9):
        return 0.0
    lo, hi = 1e-9, 1.0 / bound
    if flagged(hi):
        return float(hi)
    while hi - lo > 1e-3:
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if flagged(mid) else (lo, mid)
    return float(lo)
