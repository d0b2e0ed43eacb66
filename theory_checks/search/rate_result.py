"""Records of a rate search: thresholds, the exponent test and the worst law found.

The search is :func:`calcheck.theory_checks.search.rates.rate_worst_law`, which measures
the thresholds (:func:`calcheck.theory_checks.search.rates.measure_threshold`) and fits the
exponent (:func:`calcheck.theory_checks.search.rates.sweep_fit`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["RateSearchResult", "SweepFit", "Threshold", "markdown_table"]


@dataclass(frozen=True)
class Threshold:
    """n* of one point, its rate h and the implied constant c = n*/h with a 95% interval.

    ``censored`` is ``"below"`` (coverage >= 1 - delta at the first grid n: n* is at most
    it), ``"above"`` (not reached at the last: n* is infinite on this grid) or ``""``.
    """

    n_star: float
    h: float
    c: float
    c_ci: tuple
    reps: int
    censored: str = ""

    def describe(self) -> str:
        """``c [lo, hi] (n* = ..., R reps)``."""
        lo, hi = self.c_ci
        cens = f", censored {self.censored}" if self.censored else ""
        return f"{self.c:.3g} [{lo:.3g}, {hi:.3g}] (n* = {self.n_star:.4g}, h = {self.h:.4g}{cens})"


@dataclass(frozen=True)
class SweepFit:
    """The exponent test: n* at the sweep's points and the slope of log n* on log h.

    ``finding``: the 95% interval of the slope lies above ``1 + slack`` (n*/h grows).
    """

    labels: tuple
    thresholds: tuple
    slope: float
    slope_ci: tuple
    slack: float
    finding: bool = field(init=False)

    def __post_init__(self):
        object.__setattr__(self, "finding", bool(self.slope_ci[0] > 1.0 + self.slack))

    def describe(self) -> str:
        """``slope s [lo, hi] over labels: c values``."""
        lo, hi = self.slope_ci
        cs = ", ".join(
            f"{lab}: c={t.c:.3g}" for lab, t in zip(self.labels, self.thresholds, strict=True)
        )
        return f"slope of log n* on log h {self.slope:.2f} [{lo:.2f}, {hi:.2f}] ({cs})"


@dataclass(frozen=True)
class RateSearchResult:
    """What :func:`~calcheck.theory_checks.search.rates.rate_worst_law` found and re-measured.

    Attributes
    ----------
    check_id, family : str
    fixed : dict
        The claim's fixed parameters.
    theta : tuple
        The worst parameter found; ``law`` describes it.
    c_search : float
        c of the winner on the search's CRN replicates (selected: biased upwards).
    c_validation : float
        Its c on the validation seed (the largest of the top candidates there).
    fresh : Threshold
        The winner re-measured on ``fresh_seed``.
    hand_picked : tuple of (str, Threshold)
        The suite's laws, same seed and replicates.
    sweep : SweepFit or None
        The exponent test of the winner's shape.
    evaluations, replicates : int
        Candidates evaluated; replicates simulated in all (each over a whole n grid).
    seconds : float
    """

    check_id: str
    family: str
    fixed: dict
    theta: tuple
    law: str
    c_search: float
    c_validation: float
    fresh: Threshold
    hand_picked: tuple
    sweep: SweepFit | None
    evaluations: int
    replicates: int
    seconds: float
    seed: int
    fresh_seed: int

    @property
    def worst_hand_picked(self) -> tuple:
        """``(name, Threshold)`` of the hand-picked point with the largest c."""
        return max(self.hand_picked, key=lambda p: p[1].c)

    @property
    def ratio(self) -> float:
        """Fresh c of the winner over the largest hand-picked c."""
        return self.fresh.c / self.worst_hand_picked[1].c

    @property
    def verdict(self) -> str:
        """``finding`` (the winner's slope exceeds the claim), else ``survived``."""
        if self.sweep is not None and self.sweep.finding:
            return "finding"
        return "survived"

    def summary(self) -> str:
        """Several lines: law, fresh c, hand-picked c's, exponent test and verdict."""
        name = self.worst_hand_picked[0]
        lines = [
            f"{self.check_id} on {self.family} at {self.fixed}: worst c = {self.c_search:.3g} "
            f"(search), {self.c_validation:.3g} (validation), fresh {self.fresh.describe()}",
            f"  law: {self.law}",
            "  hand-picked: "
            + "; ".join(
                f"{n}: {t.c:.3g} [{t.c_ci[0]:.3g}, {t.c_ci[1]:.3g}]" for n, t in self.hand_picked
            ),
            f"  worst / largest hand-picked ({name}): {self.ratio:.2f}",
        ]
        if self.sweep is not None:
            lines.append(f"  exponent test: {self.sweep.describe()}")
        lines.append(
            f"  verdict: {self.verdict}; {self.evaluations} evaluations, {self.replicates} "
            f"replicates, {self.seconds:.0f} s (seeds {self.seed}, {self.fresh_seed})"
        )
        return "\n".join(lines)

    def table_row(self) -> str:
        """A Markdown table row (check, family, fixed, worst c, fresh c, hand-picked, verdict)."""
        name, hp = self.worst_hand_picked
        fixed = ", ".join(f"{k}={v}" for k, v in self.fixed.items())
        lo, hi = self.fresh.c_ci
        sw = ""
        if self.sweep is not None:
            s_lo, s_hi = self.sweep.slope_ci
            sw = f"slope {self.sweep.slope:.2f} [{s_lo:.2f}, {s_hi:.2f}]; "
        return (
            f"| {self.check_id} | {self.family} | {fixed} | {self.c_search:.3g} "
            f"({self.c_validation:.3g}) | "
            f"{self.fresh.c:.3g} [{lo:.3g}, {hi:.3g}] | {hp.c:.3g} ({name}) | {sw}{self.verdict} |"
        )


_HEADER = (
    "| check | family | fixed | worst c: search (validation) | fresh c [95%] "
    "| largest hand-picked c "
    "| exponent test; verdict |\n|---|---|---|---|---|---|---|"
)


def markdown_table(results) -> str:
    """A Markdown table of :class:`RateSearchResult` rows (for reports and the docs)."""
    return "\n".join([_HEADER, *(r.table_row() for r in results)])
