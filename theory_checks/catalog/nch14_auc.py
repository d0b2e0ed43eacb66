"""nch14 Theorem 3.4: the AUC loss of histogram binning, an asymptotic and tight bound.

Naeini, Cooper & Hauskrecht (2014), Theorem 3.4 and App. 7.2 (eqs. 15-23).

The theorem holds as n/B -> infinity, so it is checked *in the limit*, exactly: the
population B-quantile bins each output their true rate, and the loss
AUC(y) - AUC(yhat) (ties 1/2) is computed by quadrature
(:func:`calcheck.simulations.metrics.auc.population_auc_loss`); every law and B must satisfy
loss <= 1/(2B). Laws: smooth monotone (c(y) = y, a Platt curve, Beta(0.1, 5) scores),
non-monotone (a sine: binning *gains* AUC), a step, and the staircase (labels deterministic
within bins), on which the bound is attained (tightness ratio 1 - 1e-5). Equal-width bins on
the skewed law break equal masses: there eq. (22)'s unequal-mass form holds and 1/(2B) does
not. In the limit eq. (22) follows from A_K <= 1 and Loss_1 <= 0, its bound and the loss
come from the same bin masses and rates, so ``nch14.thm34.unequal`` is an *identity* (role
``identity``: holds by construction, checked exactly by the unit tests of
:func:`~calcheck.simulations.metrics.auc.auc_loss` in ``tests/simulations/test_nch14.py``,
no control); the informative side is the hypothesis check beside it (1/(2B) with H2
dropped, ``nch14.thm34.equal_width``). The finite-n
total loss (``AucLossExperiment``) is reported by ``calcheck figures nch14``, not judged: an
asymptotic statement says nothing about a given n.

Loss_2 <= 1/(2B) (pairs in the same bin) is checked the same way. Loss_1 <= 0 (pairs in
different bins) holds in the limit by the algebra of eq. (19) (a misordered pair contributes
theta_K - theta_L < 0), so it is checked as the paper's "with high probability" on fitted maps
at n/B = 1000, on laws whose adjacent bin rates are well separated; where rates nearly tie
(a step law, Beta(0.1, 5) scores) Loss_1 > 0 in 16-100% of such fits, by tiny amounts. At
n/B = 1000 a misordering is a many-sigma event (no fit of 4000 has Loss_1 > 0), so the check
also reads n/B = 100 at B = 5, where Loss_1 > 0 in 0.2-0.3% of fits: the data can decide.
Its control claims Loss_1 <= 0 surely on those draws (the limit's statement at finite n).

Negative controls: 1/(4B) claimed on the staircase (total and Loss_2); Loss_1 <= 0 claimed
with probability one at n/B = 100. Dropped hypothesis:
1/(2B) claimed for equal-width bins on Beta(0.1, 5) scores (loss 0.23 at B = 10).

Study forms (``STUDIES``; a user's binary law, ``calcheck run --study``):

- ``nch14.thm34``, ``nch14.loss2`` (grid ``n_bins``): the limit, exactly, as the suite's
  check: population B-quantile bins, each outputting its true rate; the loss (or Loss_2)
  must be <= 1/(2B). ``nch14.thm34.unequal`` (grid ``n_bins``): the same with equal-width
  population bins against eq. (22)'s bound. Hypotheses checked on the law, each refusal
  naming it: H3 (continuous scores: no atoms), binary labels (the AUC of z in {0, 1}) and
  both classes present (0 < P(Z = 1) < 1). H2 (equal masses) holds by construction of the
  quantile bins; H4 (distinct rates) is not needed in the limit, where bins of equal rates
  tie and the tie adds 0 to Loss_1. Control: ``controls = [0.9]`` (the bound times 0.9) is
  flagged on a law that comes within 10% of the bound (deterministic labels within bins).
- ``nch14.eq2``, ``nch14.eq10`` (grid ``n``, ``n_bins``, n >= 2B): Hist fitted on n points
  of the law (atoms allowed: lexicographic ties), eq. (2) on the two output partitions in
  every replicate and eq. (10) for one random bin at 1 - alpha. Control for eq. (10):
  ``controls = [0.25]``. Eq. (2) is an identity (holds by construction on any law: the
  study runs the same bookkeeping on yours) and takes no control.
"""

from __future__ import annotations

import numpy as np

from calcheck.simulations.experiments.nch14 import (
    AucLimitExperiment,
    AucLossExperiment,
    BinPartsExperiment,
)
from calcheck.simulations.laws import LAWS
from calcheck.simulations.laws.binary import staircase_law

from ..checks.check import Check, StudyAdapter
from ..checks.events import BoundRule, Within, constant

__all__ = ["REFUSED", "STUDIES", "auc_checks", "part_checks"]

_SMOOTH = ("uniform_identity", "uniform_logistic", "skewed_beta", "uniform_sine", "uniform_step")
_B = (2, 5, 10, 20)

REFUSED = {
    "nch14.loss1": "in the limit n/B -> infinity Loss_1 <= 0 holds on every law by the "
    "algebra of eq. (19) (a misordered pair adds theta_K - theta_L, and the limit map orders "
    "bins as their true rates), so a limit study has no event that can fail; the paper's "
    "'with high probability' names no n, so a violation at your n would not contradict it. "
    "The suite checks it at n/B = 1000 on laws with well-separated bin rates; on your law, "
    "study nch14.thm34 or nch14.loss2 (the limit, exactly)",
}


def auc_checks(full: bool, alphas) -> list:
    """Theorem 3.4, eq. (22) and Loss_2 in the limit n/B -> infinity; Loss_1 at large n."""
    b_values = _B + ((50, 100) if full else ())
    limit = tuple(AucLimitExperiment(LAWS[name], b) for name in _SMOOTH for b in b_values) + tuple(
        AucLimitExperiment(staircase_law(b), b) for b in b_values
    )
    stairs = tuple(e for e in limit if e.law.name.startswith("staircase"))
    quarter = BoundRule(
        "quarter",
        function=lambda s, alpha: 1.0 / (4.0 * s["n_bins"]),
        description="1/(4B): half the stated bound",
    )
    return [
        *_thm34_checks(limit, stairs, quarter),
        *_loss1_checks(alphas),
        *_loss2_checks(limit, stairs, quarter),
        *_unequal_mass_checks(b_values),
    ]


def _thm34_checks(limit, stairs, quarter) -> list:
    """Theorem 3.4 in the limit on every law; 1/(4B) on the staircase, which attains 1/(2B)."""
    return [
        Check(
            "nch14.thm34",
            "nch14.thm34",
            limit,
            Within("loss"),
            claim="one",
            description="n/B -> infinity: population quantile bins output their true rates; "
            "AUC loss (ties 1/2) <= 1/(2B) on smooth, non-monotone, step and staircase laws",
        ),
        Check(
            "nch14.thm34.control.quarter",
            "nch14.thm34",
            stairs,
            Within("loss"),
            claim="one",
            expect="violated",
            bound=quarter,
            description="the staircase attains 1/(2B): a bound of 1/(4B) must fail",
        ),
    ]


def _loss1_checks(alphas) -> list:
    """Loss_1 <= 0 with high probability on fitted maps, and claimed surely as a control.

    In the limit (thetahat = theta) Loss_1 <= 0 holds by the algebra of eq. (19), so the
    check is the paper's "with high probability" at finite n instead: at n/B = 100 the data
    can fail it (misordered or tied bins in 0.2-0.3% of fits, far below alpha), and the
    control on the same draws claims it surely.
    """
    # n/B = 1000 and, for B = 5, n/B = 100, where misordered or tied bins (Loss_1 > 0) occur
    # in 0.2-0.3% of fits (0.43 at B = 10: that law is left at n/B = 1000)
    moderate = tuple(
        AucLossExperiment(LAWS[name], 5, (500,))
        for name in ("uniform_identity", "uniform_logistic")
    )
    separated = moderate + tuple(
        AucLossExperiment(LAWS[name], b, (1000 * b,))
        for name, b in (("uniform_identity", 5), ("uniform_identity", 10), ("uniform_logistic", 5))
    )
    return [
        Check(
            "nch14.loss1",
            "nch14.loss1",
            separated,
            Within("loss1"),
            alphas,
            description="P(Loss_1 <= 0) >= 1 - alpha for fitted maps at n/B = 100 (B = 5) "
            "and 1000, on laws whose adjacent bin rates differ by much more than sqrt(B/n)",
        ),
        Check(
            "nch14.loss1.control.surely",
            "nch14.loss1",
            moderate,
            Within("loss1"),
            claim="one",
            expect="violated",
            description="negative control on the guarantee's draws (n/B = 100, B = 5): the "
            "limit's Loss_1 <= 0 claimed in every fit (probability one, not 1 - alpha); "
            "misordered or tied bin rates give Loss_1 > 0 in about 0.3% of fits",
        ),
    ]


def _loss2_checks(limit, stairs, quarter) -> list:
    """Loss_2 (pairs in the same bin) <= 1/(2B) in the limit; 1/(4B) on the staircase."""
    return [
        Check(
            "nch14.loss2",
            "nch14.loss2",
            limit,
            Within("loss2"),
            claim="one",
            description="the limit: Loss_2 (pairs in the same bin) <= 1/(2B) on every law",
        ),
        Check(
            "nch14.loss2.control.quarter",
            "nch14.loss2",
            stairs,
            Within("loss2"),
            claim="one",
            expect="violated",
            bound=quarter,
            description="the staircase's Loss_2 attains 1/(2B): 1/(4B) must fail",
        ),
    ]


def _unequal_mass_checks(b_values) -> list:
    """Eq. (22) on equal-width bins (an identity), and Theorem 3.4 there with H2 dropped.

    Eq. (22) in the limit is an identity of the code (bound and loss from the same bin
    masses and rates: A_K <= 1 and Loss_1 <= 0 by algebra), checked exactly by the unit
    tests of auc_loss; no control. The same experiments decide Theorem 3.4's own bound with
    H2 dropped (a hypothesis check of nch14.thm34).
    """
    unequal = tuple(
        AucLimitExperiment(LAWS[name], b, "equal_width")
        for name in ("skewed_beta", "uniform_identity")
        for b in b_values
    )
    skewed = tuple(e for e in unequal if e.law.name == "skewed_beta")
    return [
        Check(
            "nch14.thm34.unequal",
            "nch14.thm34.unequal",
            unequal,
            Within("loss"),
            claim="one",
            description="identity (holds by construction): equal-width population bins, "
            "loss <= sum eta_K^2 theta_K (1 - theta_K) / (2 pi1 pi0), eq. (22); bound and "
            "loss come from the same masses and rates, so only the quadrature could fail",
            role="identity",
        ),
        Check(
            "nch14.thm34.equal_width",
            "nch14.thm34",
            skewed,
            Within("loss"),
            claim="one",
            expect="violated",
            description="hypothesis H2 (equal masses) dropped: Theorem 3.4's 1/(2B) claimed "
            "for equal-width bins on Beta(0.1, 5) scores",
            role="hypothesis",
        ),
    ]


_PART_LAWS = ("uniform_half", "uniform_logistic", "skewed_beta", "two_atoms", "mixture_atoms")


def part_checks(alphas) -> list:
    """Eq. (2) on two output partitions (every replicate) and eq. (10) for one bin.

    Eq. (2) is a deterministic inequality (a weighted mean is at most the largest term) and
    both sides come from the same arrays, so ``nch14.eq2`` has the role ``identity``: it
    can fail only through calcheck's output-partition bookkeeping, which
    ``tests/simulations/test_nch14.py`` checks exactly against a loop written from the
    definitions. It has no control (the former min-for-max control read another statistic
    and was violated by construction).
    """
    grid = ((200, 10), (1000, 10), (3000, 20))
    exps = tuple(BinPartsExperiment(LAWS[k], n, b) for k in _PART_LAWS for n, b in grid)
    zero = constant("zero", 1e-12, "|o_i - e_i| - max_t |thetahat - theta| <= 0 (rounding)")
    return [
        Check(
            "nch14.eq2",
            "nch14.eq2",
            exps,
            Within("excess"),
            claim="one",
            bound=zero,
            description="identity (holds by construction): |o_i - e_i| <= max over the "
            "output bin's input bins, on 10 equal-frequency output bins and on one bin per "
            "distinct output; gap and max come from the same v, theta and grouping (a "
            "weighted mean is at most its largest term)",
            role="identity",
        ),
        Check(
            "nch14.eq10",
            "nch14.eq10",
            exps,
            Within("mass_error"),
            alphas,
            description="one bin's mass: |N_J/n - eta_J| within sqrt(log(2/alpha)/(2n))",
        ),
        Check(
            "nch14.eq10.control.quarter",
            "nch14.eq10",
            exps[:3],
            Within("mass_error"),
            alphas,
            expect="violated",
            bound=BoundRule(
                "quarter",
                function=lambda s, a: np.sqrt(np.log(2 / a) / (2 * s["n"])) / 4,
                description="a quarter of eq. (10)'s radius",
            ),
            description="a quarter of the radius (the bound is loose by about 2.3x)",
        ),
    ]


def _auc_law(gid, law):
    """Refuse a law that breaks Theorem 3.4's hypotheses (the message names the hypothesis)."""
    where = f"{gid} on law {law.name!r}"
    if law.scores.atoms:
        raise ValueError(
            f"{where}: hypothesis H3 (a continuous score: no ties in y between bins) fails, "
            f"the law has atoms {list(law.scores.atoms)}"
        )
    if law.labels != "binary":
        raise ValueError(
            f"{where}: the AUC is defined for binary labels z in {{0, 1}}, the law has "
            f"labels = {law.labels!r}"
        )
    mass, pi1 = law.interval_moments(0.0, 0.0, 1.0, 1.0)
    pi1 = float(pi1 / mass)
    if not 1e-9 < pi1 < 1 - 1e-9:
        raise ValueError(
            f"{where}: the AUC needs both classes, 0 < P(Z = 1) < 1; the law has "
            f"P(Z = 1) = {pi1:.6g}"
        )
    return law


def _limit(gid, binning="quantile"):
    def build(law, n_bins):
        return AucLimitExperiment(_auc_law(gid, law), n_bins, binning)

    return build


_LIMIT = "n/B -> infinity (exact): population {} bins output their true rates; "
#: Guarantees checked on a user's law (see the module docstring).
STUDIES = {
    "nch14.thm34": StudyAdapter(
        "nch14.thm34",
        ("binary",),
        ("n_bins",),
        _limit("nch14.thm34"),
        Within("loss"),
        "one",
        description=_LIMIT.format("B-quantile") + "AUC loss (ties 1/2) <= 1/(2B)",
    ),
    "nch14.loss2": StudyAdapter(
        "nch14.loss2",
        ("binary",),
        ("n_bins",),
        _limit("nch14.loss2"),
        Within("loss2"),
        "one",
        description=_LIMIT.format("B-quantile") + "Loss_2 <= 1/(2B)",
    ),
    "nch14.thm34.unequal": StudyAdapter(
        "nch14.thm34.unequal",
        ("binary",),
        ("n_bins",),
        _limit("nch14.thm34.unequal", "equal_width"),
        Within("loss"),
        "one",
        description=_LIMIT.format("equal-width") + "AUC loss <= eq. (22)'s "
        "sum eta_K^2 theta_K (1 - theta_K) / (2 pi1 pi0) (an identity: holds by "
        "construction)",
        role="identity",
    ),
    "nch14.eq2": StudyAdapter(
        "nch14.eq2",
        ("binary",),
        ("n", "n_bins"),
        BinPartsExperiment,
        Within("excess"),
        "one",
        constant("zero", 1e-12, "|o_i - e_i| - max_t |thetahat - theta| <= 0 (rounding)"),
        "Hist on n points: |o_i - e_i| <= max over the output bin's input "
        "bins, on 10 equal-frequency output bins and one bin per distinct output (an "
        "identity: holds by construction)",
        role="identity",
    ),
    "nch14.eq10": StudyAdapter(
        "nch14.eq10",
        ("binary",),
        ("n", "n_bins"),
        BinPartsExperiment,
        Within("mass_error"),
        description="Hist on n points: one random bin's mass |N_J/n - eta_J| within "
        "sqrt(log(2/alpha)/(2n))",
    ),
}
