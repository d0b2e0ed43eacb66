r"""Trade-off checks: an impossibility checked on a family of methods with a width knob.

gpr20 Corollary 1 says that a confidence interval for ``E[Y | f(X)]`` that is valid for
every law (coverage >= 1 - alpha) has width >= 1/2 with probability >= 1 - 2 alpha when
``E[Y | X] = 1/2`` and f(X) is nonatomic. An interval that is always [0, 1] satisfies it
trivially, so the statement is checked as the trade-off it is: for each member of a family
with a width knob (e.g. the empirical-Bernstein interval of the k nearest calibration
labels, k from small to large),

* *wide*: ``P(width >= 1/2) >= 1 - 2 alpha`` on the eta = 1/2 law (exact binomial test), or
* *invalid*: coverage ``>= 1 - alpha`` is rejected on some law (the adversary Q).

A member that is significantly narrow **and** not shown invalid contradicts the corollary:
the check is then violated. Both tests run at the check's false-alarm rate split over its
2 x members x alphas tests (Bonferroni). A member is "shown invalid" only by a rejection, so
too few replicates cannot make a narrow member pass: they make it a contradiction.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from calcheck.bounds import registry
from calcheck.simulations.engine import BLOCK_REPS, load_outcome, n_blocks_for

from ..checks.budgets import DEFAULT_FALSE_ALARM
from ..results.export import Exportable
from ..results.protocol import Mutant
from ..results.roles import check_role, role_of
from ..results.verdicts import CoverageVerdict, coverage_verdict, critical_count
from .rates import SeriesCheckResult

__all__ = ["TradeoffCheck", "TradeoffCheckResult", "TradeoffMember"]


@dataclass(frozen=True)
class TradeoffCheck:
    """Every member is wide on ``wide_law`` experiments or invalid on ``valid_law`` ones.

    Parameters
    ----------
    id, guarantee : str
    members : tuple of (str, Experiment, Experiment)
        ``(name, on the law where width is claimed, on the law where validity is tested)``;
        the experiments have ``statistic(outcome, "width" | "miss_ratio", alpha)``.
    alphas : tuple of float
    expect : {"consistent", "violated"}
    description : str
    """

    id: str
    guarantee: str
    members: tuple
    alphas: tuple = (0.1,)
    expect: str = "consistent"
    description: str = ""
    role: str = ""

    def __post_init__(self):
        check_role(self)
        registry.get(self.guarantee)
        if self.expect not in ("consistent", "violated"):
            raise ValueError(f"expect must be 'consistent' or 'violated', got {self.expect!r}")
        if not self.members:
            raise ValueError(f"check {self.id!r} needs at least one member")
        for a in self.alphas:
            if isinstance(a, bool) or not (0 < a < 0.5):
                raise ValueError(f"alpha must lie in (0, 1/2), got {a!r}")

    claim = property(lambda self: "wide or invalid")
    is_control = property(lambda self: self.expect == "violated")
    bound_mode = property(lambda self: "width >= 1/2")
    metric = property(lambda self: "width and coverage")

    def simulations(self) -> list:
        """Every member's two experiments."""
        return [e for _, wide, valid in self.members for e in (wide, valid)]

    def law_specs(self) -> dict:
        """Readable description of each experiment, by label."""
        return {e.label(): e.description() for e in self.simulations()}

    def evaluate(self, store, reps, root_seed, false_alarm=DEFAULT_FALSE_ALARM):
        """The two exact tests of every member and alpha, from outcomes in ``store``."""
        level = false_alarm / (2 * len(self.members) * len(self.alphas))
        series = []
        mutant_hits = {w: [] for w in MUTANT_WIDTHS}
        narrow_any = []
        for name, wide_exp, valid_exp in self.members:
            wide_out = load_outcome(store, wide_exp, reps, root_seed)
            valid_out = load_outcome(store, valid_exp, reps, root_seed)
            for alpha in self.alphas:
                width = wide_exp.statistic(wide_out, "width", alpha)
                miss = valid_exp.statistic(valid_out, "miss_ratio", alpha)
                wide = coverage_verdict(
                    int(np.sum(width >= 0.5)), width.size, 1 - 2 * alpha, level=level
                )
                valid = coverage_verdict(int(np.sum(miss <= 1)), miss.size, 1 - alpha, level=level)
                crit = critical_count(width.size, 1 - 2 * alpha, level)
                for w in MUTANT_WIDTHS:  # the claim with a larger width: same draws, same test
                    if int(np.sum(width >= w)) <= crit and not valid.violated:
                        mutant_hits[w].append(f"{name} a={alpha:g}")
                if wide.violated:
                    narrow_any.append(f"{name} a={alpha:g}")
                series.append(
                    TradeoffMember(
                        name,
                        alpha,
                        wide_exp.label(),
                        valid_exp.label(),
                        float(np.median(width)),
                        wide,
                        valid,
                    )
                )
        mutant = _mutant(mutant_hits, narrow_any) if role_of(self) == "guarantee" else None
        return TradeoffCheckResult(
            self, tuple(series), n_blocks_for(reps) * BLOCK_REPS, false_alarm, mutant=mutant
        )


#: Widths a mutant claims in place of 1/2 (smallest first).
MUTANT_WIDTHS = (0.6, 0.7, 0.8, 0.9, 1.0)


def _mutant(hits: dict, narrow_any: list) -> Mutant:
    """The smallest claimed width above 1/2 that some valid member is shown to miss.

    When no valid member is narrower than 1 (on an adversary whose truths are 0 or 1 every
    valid interval is [0, 1]-wide, so the data cannot tell 1/2 from 1), the last rung drops
    the claim's escape: every member wide, valid or not -- caught when the width test flags
    some member, which shows that side of the check has power.
    """
    tried = ", ".join(f"{w:g}" for w in MUTANT_WIDTHS) + ", then every member wide"
    for w in MUTANT_WIDTHS:
        if hits[w]:
            return Mutant(
                f"valid intervals have width >= {w:g} w.p. >= 1 - 2 alpha",
                True,
                w,
                f"widths {tried}",
                f"narrow and valid: {', '.join(hits[w][:3])}",
            )
    if narrow_any:
        return Mutant(
            "every member wide (P(width >= 1/2) >= 1 - 2 alpha), valid or not",
            True,
            None,
            f"widths {tried}",
            f"no valid member is shown narrower than 1; narrow: {', '.join(narrow_any[:3])}",
        )
    return Mutant(
        "every member wide (P(width >= 1/2) >= 1 - 2 alpha), valid or not",
        False,
        1.0,
        f"widths {tried}",
        "no valid member is shown narrower than 1, and no member is narrow",
    )


@dataclass(frozen=True)
class TradeoffMember(Exportable):
    """One member at one alpha: its width test on one law and its coverage test on another."""

    name: str
    alpha: float
    wide_law: str
    valid_law: str
    median_width: float
    wide: CoverageVerdict
    valid: CoverageVerdict

    @property
    def narrow(self) -> bool:
        """``P(width >= 1/2) >= 1 - 2 alpha`` is rejected."""
        return self.wide.violated

    @property
    def invalid(self) -> bool:
        """Coverage ``>= 1 - alpha`` is rejected on the validity law."""
        return self.valid.violated

    @property
    def violated(self) -> bool:
        """Narrow and not shown invalid: a contradiction of the impossibility."""
        return self.narrow and not self.invalid

    def as_dict(self) -> dict:
        """The member as JSON-able numbers (``results.json``)."""
        return {
            "name": self.name,
            "alpha": self.alpha,
            "wide_law": self.wide_law,
            "valid_law": self.valid_law,
            "median_width": self.median_width,
            "p_wide": self.wide.coverage,
            "p_wide_ci": [self.wide.ci_low, self.wide.ci_high],
            "coverage": self.valid.coverage,
            "coverage_ci": [self.valid.ci_low, self.valid.ci_high],
            "narrow": self.narrow,
            "invalid": self.invalid,
            "level": self.wide.level,
            "verdict": "violated" if self.violated else "consistent",
        }

    def describe(self) -> str:
        """One line: width, coverage, and what the member is."""
        what = (
            "NARROW AND VALID (contradiction)"
            if self.violated
            else "narrow, invalid"
            if self.narrow
            else "wide, invalid"
            if self.invalid
            else "wide, valid"
        )
        return (
            f"{self.name} a={self.alpha:g}: P(width >= 1/2) = {self.wide.coverage:.3f} "
            f"(median {self.median_width:.3f}) on {self.wide_law}; coverage "
            f"{self.valid.coverage:.3f} on {self.valid_law}: {what}"
        )


@dataclass(frozen=True, repr=False)  # the shared __repr__
class TradeoffCheckResult(SeriesCheckResult):
    """Members of a trade-off check; violated if any member is narrow and valid."""

    kind_name = "trade-off check"
    kind = "tradeoff"

    def evidence(self) -> dict:
        """Every member's two tests, JSON-able (the protocol's evidence)."""
        return {
            "claim": "every member wide (P(width >= 1/2) >= 1 - 2 alpha) or invalid",
            "series": [m.as_dict() for m in self.series],
            "cells": [],
        }

    def _settings(self) -> str:
        return f"{self.reps} replicates per law"
