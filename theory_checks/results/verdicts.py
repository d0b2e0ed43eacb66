"""Verdicts: exact one-sided binomial tests of a claimed coverage at a stated false-alarm rate.

A guarantee claims ``Pr(success) >= claimed`` for a per-replicate success event. Given k
successes in R independent replicates, the verdict tests ``H0: p >= claimed`` against
``p < claimed`` with ``scipy.stats.binomtest(alternative="less")`` at a stated false-alarm
rate, and reports the Clopper-Pearson interval of the coverage.

Expectation guarantees ``E[Z] <= bound`` for ``Z in [0, 1]`` are reduced to the same test:
with an independent ``V ~ Unif(0, 1)``, ``1{V >= Z}`` is Bernoulli with mean ``1 - E[Z]``,
so the claim is a coverage ``>= 1 - bound``. The reduction is exact (valid for any law of
Z) at the price of some power.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from .export import Exportable

# scipy.stats is imported where it is used: it takes about half a second, and the command
# line refuses a bad argument (calcheck plan's) before it loads

__all__ = [
    "DEFAULT_FALSE_ALARM",
    "CoverageVerdict",
    "clopper_pearson",
    "coverage_verdict",
    "critical_count",
    "detectable_shortfall",
]

#: False-alarm rate per check (Bonferroni over its cells): the one default of every verdict,
#: budget, plan and run.
DEFAULT_FALSE_ALARM = 1e-3


#: Most replicates a verdict read from data may count: every count up to it is a float64
#: exactly, and scipy's binomial takes it (a larger one overflows its C integer).
_MOST_TRIALS = 2**53


@dataclass(frozen=True)
class CoverageVerdict(Exportable):
    """Outcome of one exact binomial coverage test.

    Attributes
    ----------
    successes, trials : int
    coverage : float
        ``successes / trials``.
    claimed : float
        Coverage the guarantee claims.
    p_value : float
        One-sided exact p-value of ``H0: coverage >= claimed``.
    level : float
        False-alarm rate the test was run at.
    violated : bool
        ``p_value < level``.
    ci_low, ci_high : float
        Two-sided Clopper-Pearson interval of the coverage at ``ci_level``.
    ci_level : float
    shortfall_90 : float
        Smallest shortfall ``claimed - p`` the test detects with probability >= 0.9 (its
        power statement).
    """

    successes: int
    trials: int
    coverage: float
    claimed: float
    p_value: float
    level: float
    violated: bool
    ci_low: float
    ci_high: float
    ci_level: float
    shortfall_90: float

    def check_invariants(self) -> None:
        """Raise ValueError unless the numbers are those of a test of these counts.

        Called on a verdict read from data (:func:`~calcheck.theory_checks.results.export.decode`),
        never on one ``coverage_verdict`` computed: the counts lie in ``0 <= successes
        <= trials``, ``coverage`` is ``successes / trials``, the rates lie in their ranges,
        the p-value and ``violated`` are recomputed from the counts (the same cached scipy
        call) and compared, and the interval lies in [0, 1] around the coverage.
        """
        k, r = self.successes, self.trials
        if r > _MOST_TRIALS:
            raise ValueError(f"trials must be at most 2**53, got {r!r:.40}")
        if r < 1 or not 0 <= k <= r:
            raise ValueError(f"need 0 <= successes <= trials and trials >= 1, got {k!r} of {r!r}")
        for name, low, high in (
            ("claimed", 0.0, 1.0),
            ("level", 0.0, 1.0),
            ("ci_level", 0.0, 1.0),
            ("coverage", 0.0, 1.0),
            ("p_value", 0.0, 1.0),
            ("ci_low", 0.0, 1.0),
            ("ci_high", 0.0, 1.0),
            ("shortfall_90", 0.0, 1.0),
        ):
            value = getattr(self, name)
            if not low <= value <= high:  # NaN fails too
                raise ValueError(f"{name} must lie in [{low:g}, {high:g}], got {value!r}")
        if self.claimed == 0 or self.level in (0, 1) or self.ci_level in (0, 1):
            raise ValueError(
                f"need 0 < claimed <= 1 and level, ci_level in (0, 1), got {self.claimed!r}, "
                f"{self.level!r}, {self.ci_level!r}"
            )
        if not math.isclose(self.coverage, k / r, rel_tol=1e-12, abs_tol=1e-15):
            raise ValueError(f"coverage {self.coverage!r} is not successes / trials = {k}/{r}")
        if not self.ci_low <= self.coverage <= self.ci_high:
            raise ValueError(
                f"the interval [{self.ci_low!r}, {self.ci_high!r}] must hold the coverage "
                f"{self.coverage!r}"
            )
        claimed = float(self.claimed)
        p_value = (
            (1.0 if k == r else 0.0) if claimed == 1 else _p_value_less(int(k), int(r), claimed)
        )
        # scipy's p-value, as when the verdict was computed (a later scipy may differ in
        # the last digits: a record is still read, a verdict that its counts flip is not)
        if not math.isclose(self.p_value, p_value, rel_tol=1e-9, abs_tol=1e-12):
            raise ValueError(
                f"p_value {self.p_value!r} is not that of {k} of {r} against {claimed!r} "
                f"({p_value!r})"
            )
        if bool(self.violated) != (p_value < self.level):
            raise ValueError(
                f"violated={self.violated!r}, but {k} of {r} against {claimed!r} at level "
                f"{self.level!r} gives p={p_value:.3g}: violated={p_value < self.level}"
            )


def critical_count(trials: int, claimed: float, level: float) -> int:
    """Largest k with ``P(Bin(trials, claimed) <= k) < level`` (-1 if none)."""
    from scipy import stats

    k = int(stats.binom.ppf(level, trials, claimed))
    while k >= 0 and stats.binom.cdf(k, trials, claimed) >= level:
        k -= 1
    while stats.binom.cdf(k + 1, trials, claimed) < level:
        k += 1
    return k


def detectable_shortfall(trials: int, claimed: float, level: float, power: float = 0.9) -> float:
    """Smallest ``claimed - p`` that the one-sided test rejects with probability >= power."""
    return _detectable_shortfall(int(trials), float(claimed), float(level), float(power))


@functools.lru_cache(maxsize=4096)
def _detectable_shortfall(trials: int, claimed: float, level: float, power: float) -> float:
    # a run asks the same (trials, claimed, level) for hundreds of cells, and the search
    # costs 60 binomial cdfs: once each
    from scipy import stats

    k = critical_count(trials, claimed, level)
    if k < 0:
        return float(claimed)  # no outcome rejects: the test has no power at all
    lo, hi = 0.0, claimed  # rejection probability binom.cdf(k, trials, p) decreases in p
    for _ in range(60):
        mid = (lo + hi) / 2
        if stats.binom.cdf(k, trials, mid) >= power:
            lo = mid
        else:
            hi = mid
    return float(claimed - lo)


# A run asks the same (successes, trials) of many cells (no failure at all, most often), and
# an exact interval is two root searches (3 ms): each pair is computed once per process, by
# the same scipy calls, so the numbers are those of an uncached call bit for bit.
@functools.lru_cache(maxsize=16384)
def _p_value_less(successes: int, trials: int, claimed: float) -> float:
    from scipy import stats

    return float(stats.binomtest(successes, trials, claimed, alternative="less").pvalue)


def clopper_pearson(successes: int, trials: int, confidence: float) -> tuple[float, float]:
    """Two-sided Clopper-Pearson interval ``(low, high)`` of ``successes / trials``.

    scipy's ``binomtest(...).proportion_ci(method="exact")``, computed once per process for
    each ``(successes, trials, confidence)``.
    """
    for name, value in (("successes", successes), ("trials", trials)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer):
            raise ValueError(f"{name} must be an integer, got {value!r}")
    if trials < 1 or not 0 <= successes <= trials:
        raise ValueError(
            f"need 0 <= successes <= trials and trials >= 1, got {successes!r}, {trials!r}"
        )
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence!r}")
    return _clopper_pearson(int(successes), int(trials), float(confidence))


@functools.lru_cache(maxsize=16384)
def _clopper_pearson(successes: int, trials: int, confidence: float) -> tuple[float, float]:
    from scipy import stats

    ci = stats.binomtest(successes, trials, 0.5).proportion_ci(
        confidence_level=confidence, method="exact"
    )
    return float(ci.low), float(ci.high)


def coverage_verdict(
    successes, trials, claimed, *, level=DEFAULT_FALSE_ALARM, ci_level=0.95
) -> CoverageVerdict:
    """Exact one-sided binomial test of ``coverage >= claimed``.

    Parameters
    ----------
    successes : int
        Replicates in which the guaranteed event held.
    trials : int
        Independent replicates.
    claimed : float
        Claimed coverage in (0, 1]; a claim of 1 - alpha for a miscoverage alpha.
    level : float, default 1e-3
        False-alarm rate: probability of "violated" when the claim holds.
    ci_level : float, default 0.95
        Confidence level of the Clopper-Pearson interval.

    Returns
    -------
    CoverageVerdict
    """
    k, r = int(successes), int(trials)
    if r < 1 or not (0 <= k <= r):
        raise ValueError(f"need 0 <= successes <= trials and trials >= 1, got {k!r}, {r!r}")
    if not (0 < claimed <= 1):
        raise ValueError(f"claimed must lie in (0, 1], got {claimed!r}")
    if not (0 < level < 1):
        raise ValueError(f"level must lie in (0, 1), got {level!r}")
    # binomtest needs p < 1; a claim of certainty is violated by any failure
    p_value = (1.0 if k == r else 0.0) if claimed == 1 else _p_value_less(k, r, float(claimed))
    ci_low, ci_high = _clopper_pearson(k, r, float(ci_level))
    shortfall = detectable_shortfall(r, claimed, level) if claimed < 1 else 0.0
    return CoverageVerdict(
        k,
        r,
        k / r,
        float(claimed),
        p_value,
        float(level),
        bool(p_value < level),
        ci_low,
        ci_high,
        float(ci_level),
        shortfall,
    )
