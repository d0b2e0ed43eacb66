"""The gpr20 checks on the adversary Q of Theorem 2: Theorem 3 and Corollary 1.

Gupta, C., Podkopaev, A. and Ramdas, A. (2020). Distribution-free binary classification:
prediction sets, confidence intervals and calibration. NeurIPS. Theorem 3 (injective maps
cannot be calibrated under Q) and Corollary 1 (a confidence interval w.r.t. f is wide or
invalid). Part of the gpr20 catalog module, which adds these checks to its own.
"""

from __future__ import annotations

from calcheck.simulations.experiments.gpr20_adversary import (
    AdversaryScalingExperiment,
    CIWidthExperiment,
)
from calcheck.simulations.laws import LAWS

from ..checks.check import Check
from ..checks.events import AtLeast, Exceeds, Within, constant
from ..series.tradeoff import TradeoffCheck
from .common import make_check

__all__ = ["cor1_checks", "thm3_checks"]


def thm3_checks(bud) -> list[Check]:
    """Theorem 3: the adversary Q defeats injective maps, not histogram binning."""
    n_q = (1000,) if not bud.full else (200, 1000, 5000)
    return [
        make_check(
            bud.alphas,
            "gpr20.thm3",
            "gpr20.thm3",
            [
                AdversaryScalingExperiment(m, n)
                for m in ("platt", "temperature", "beta")
                for n in n_q
            ],
            Exceeds("test_error"),
            "alpha",
            description="under Q, injective maps have P(error > 0.25 - alpha/2) >= alpha",
        ),
        make_check(
            bud.alphas,
            "gpr20.thm3.control.histogram_binning",
            "gpr20.thm3",
            [AdversaryScalingExperiment("fixed_width", n) for n in n_q],
            Exceeds("test_error"),
            "alpha",
            expect="violated",
            description="negative control: histogram binning (not injective) is calibrated under Q",
        ),
    ]


def _knn_member(k, valid_law):
    """A trade-off member: the k-NN interval on eta = 1/2 (width) and on ``valid_law``."""

    def exp(law):
        return CIWidthExperiment("knn_eb", LAWS[law], 5000, neighbors=k)

    return (f"knn k={k}", exp("uniform_half"), exp(valid_law))


def cor1_checks(al) -> list[Check]:
    """Corollary 1 as the trade-off it states, its premise, and the bin interval's controls.

    The atom-wise interval is always [0, 1] on continuous scores, so a width check of it
    could not fail: the trade-off is checked on k-nearest-neighbour empirical-Bernstein
    intervals from wide (k = 4) to narrow (k = 1024).
    """
    knobs = (4, 16, 64, 256, 1024)
    covers = constant("covers", 1.0, "the truth lies in C")
    return [
        TradeoffCheck(
            "gpr20.cor1",
            "gpr20.cor1",
            tuple(_knn_member(k, "adversary_q") for k in knobs),
            al,
            description="every k-NN empirical-Bernstein interval is wide (P(width >= 1/2) "
            ">= 1 - 2 alpha, eta = 1/2) or invalid w.r.t. f (coverage rejected under Q)",
        ),
        TradeoffCheck(
            "gpr20.cor1.control.validity_on_benign_law",
            "gpr20.cor1",
            tuple(_knn_member(k, "uniform_half") for k in knobs),
            al,
            expect="violated",
            description="negative control: validity tested only on the eta = 1/2 law, where "
            "narrow intervals cover: a narrow interval is declared valid",
        ),
        # Atomic laws only: under Q (a nonatomic f(X)) every atom holds one point, so the
        # atom-wise interval is [0, 1] in every replicate and that cell could not fail.
        # Thirty atoms at n = 3000 (not 300, where 10 points per atom clip the interval to
        # [0, 1] in about half the replicates); on mixture_atoms a test point in the
        # continuous part (60%) gets [0, 1], the atoms decide.
        make_check(
            al,
            "gpr20.cor1.premise",
            "gpr20.cor1",
            [
                CIWidthExperiment("atomwise_eb", LAWS[name], n)
                for name, n in (
                    ("two_atoms", 1000),
                    ("atoms_30", 3000),
                    ("mixture_atoms", 1000),
                )
            ],
            Within("miss_ratio"),
            bound=covers,
            description="premise: the atom-wise interval covers E[Y | f(X)] on atomic laws "
            "(not under Q, where it is [0, 1] in every replicate: no power)",
        ),
        make_check(
            al,
            "gpr20.cor1.control.bin_interval_width",
            "gpr20.cor1",
            [CIWidthExperiment("bin_thm4", LAWS["uniform_half"], 5000)],
            AtLeast("width"),
            "1-2alpha",
            expect="violated",
            bound=constant("width_one_half", 0.5, "|C| >= 1/2"),
            description="negative control: Theorem 4's bin interval used as a CI w.r.t. f is "
            "narrower",
        ),
        make_check(
            al,
            "gpr20.cor1.control.bin_interval_validity",
            "gpr20.cor1",
            [CIWidthExperiment("bin_thm4", LAWS["adversary_q"], 5000)],
            Within("miss_ratio"),
            expect="violated",
            bound=covers,
            description="... and, as Corollary 1 predicts, not valid w.r.t. f: it misses "
            "E_Q[Y|f(X)] = Y",
        ),
    ]
