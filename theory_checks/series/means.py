r"""Mean checks: "E[statistic] = 0 exactly" (an unbiasedness identity), by z-tests.

Some guarantees are exact statements about a mean, e.g. that an estimator minus its
conditional target has mean 0 (klm19 Definition 5.2). Each cell (an experiment at one grid
column) gives R independent replicates of the statistic; its mean is tested against 0 with
a two-sided z-test (the statistic is bounded, R is in the thousands, so the normal
approximation of the mean is accurate; this is not an exact binomial test, which does not
apply to a mean of real values). Cells are combined by Bonferroni at the check's
false-alarm rate. A result states the bias each cell could detect with power 0.9,
``(z_{1 - level/2} + z_{0.9}) * se``, so "consistent" says how small a bias was ruled out.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import norm

from calcheck.bounds import registry
from calcheck.simulations.engine import BLOCK_REPS, load_outcome, n_blocks_for

from ..checks.budgets import DEFAULT_FALSE_ALARM
from ..results.export import Exportable
from ..results.protocol import Mutant, json_number
from ..results.roles import check_role, role_of
from .rates import SeriesCheckResult

__all__ = ["MeanCellsResult", "MeanZeroCheck", "MeanZeroCheckResult"]


@dataclass(frozen=True)
class MeanZeroCheck:
    """``E[statistic] = 0`` in every cell (see the module docstring).

    Parameters
    ----------
    id, guarantee : str
    experiments : tuple
        Each read at every column of its grid.
    statistic : callable
        ``f(experiment, outcome) -> (R, G)``.
    expect : {"consistent", "violated"}
    description : str
    """

    id: str
    guarantee: str
    experiments: tuple
    statistic: object
    expect: str = "consistent"
    description: str = ""
    role: str = ""

    def __post_init__(self):
        check_role(self)
        registry.get(self.guarantee)
        if self.expect not in ("consistent", "violated"):
            raise ValueError(f"expect must be 'consistent' or 'violated', got {self.expect!r}")

    claim = property(lambda self: "mean 0")
    is_control = property(lambda self: self.expect == "violated")
    bound_mode = property(lambda self: "exact")
    metric = property(lambda self: f"E[{self.statistic.__name__}] = 0")

    def simulations(self) -> list:
        """The experiments."""
        return list(self.experiments)

    def law_specs(self) -> dict:
        """Readable description of each experiment, by label."""
        return {e.label(): e.description() for e in self.experiments}

    def evaluate(self, store, reps, root_seed, false_alarm=DEFAULT_FALSE_ALARM):
        """z-tests of every cell from outcomes already in ``store``."""
        values = []
        for exp in self.experiments:
            outcome = load_outcome(store, exp, reps, root_seed)
            values.append((exp, np.asarray(self.statistic(exp, outcome), dtype=float)))
        cells = sum(v.shape[1] for _, v in values)
        level = false_alarm / cells
        z_level = norm.ppf(1 - level / 2)
        crit = z_level + norm.ppf(0.9)
        results = []
        for exp, v in values:
            mean = v.mean(axis=0)
            se = v.std(axis=0, ddof=1) / np.sqrt(v.shape[0])
            with np.errstate(divide="ignore", invalid="ignore"):
                z = np.where(se > 0, mean / se, np.where(mean == 0, 0.0, np.inf))
            p = 2 * norm.sf(np.abs(z))
            results.append(
                MeanCellsResult(
                    exp.label(),
                    tuple(exp.n_grid),
                    tuple(float(m) for m in mean),
                    tuple(float(x) for x in z),
                    (float(np.min(crit * se)), float(np.max(crit * se))),
                    bool(np.any(p < level)),
                    level,
                    tuple(float(x) for x in se),
                )
            )
        mutant = mean_mutant(results, z_level) if role_of(self) == "guarantee" else None
        return MeanZeroCheckResult(
            self, tuple(results), n_blocks_for(reps) * BLOCK_REPS, false_alarm, mutant=mutant
        )


@dataclass(frozen=True)
class MeanCellsResult(Exportable):
    """The cells of one experiment: means, z-scores, the decision.

    ``detectable`` is the range over cells of the bias a cell detects with power 0.9.
    """

    name: str
    n_grid: tuple
    means: tuple
    z: tuple
    detectable: tuple
    violated: bool
    level: float
    se: tuple = ()

    @property
    def vacuous(self) -> bool:
        """Every cell's statistic is identically 0: the mean holds by construction."""
        return bool(self.se) and all(
            s == 0 and m == 0 for s, m in zip(self.se, self.means, strict=True)
        )

    def powerless_note(self) -> str:
        """Cells whose statistic is identically 0 (no replicate could move the mean)."""
        k = sum(s == 0 and m == 0 for s, m in zip(self.se, self.means, strict=True))
        return f"{k} of {len(self.se)} cells have a statistic identically 0" if k else ""

    def describe(self) -> str:
        """One line: the largest |z| and the bias detectable with power 0.9."""
        worst = int(np.argmax(np.abs(self.z)))
        return (
            f"{self.name}: largest |z| = {abs(self.z[worst]):.2f} at n = {self.n_grid[worst]} "
            f"(mean {self.means[worst]:.3g}); detectable bias {self.detectable[0]:.2g} to "
            f"{self.detectable[1]:.2g} (power 0.9, level {self.level:.2g})"
        )


def mean_mutant(cells, z_level: float) -> Mutant:
    """The claim ``E[stat] = +-b`` with b the largest bias a cell detects with power 0.9.

    Caught when, for each sign, some cell's mean differs from the claimed b by more than
    ``z_level`` standard errors (the cells' own two-sided test, on the same replicates).
    """
    b = max(c.detectable[1] for c in cells)
    hit = {}
    for sign in (1, -1):
        hit[sign] = any(
            abs(m - sign * b) > z_level * se
            for c in cells
            for m, se in zip(c.means, c.se, strict=True)
        )
    return Mutant(
        f"E[stat] = +-{b:.3g} in every cell (a bias the cells detect with power 0.9)",
        hit[1] and hit[-1],
        float(b),
        "the largest power-0.9 bias of the cells, both signs",
        "" if hit[1] and hit[-1] else "no cell's mean is that far from the claimed bias",
    )


@dataclass(frozen=True, repr=False)  # the shared __repr__
class MeanZeroCheckResult(SeriesCheckResult):
    """Cells of a mean check and its verdict (violated if any cell's mean is not 0)."""

    kind_name = "mean check"
    kind = "mean"

    def evidence(self) -> dict:
        """The cells' means and z-scores, JSON-able (the protocol's evidence)."""
        return {
            "claim": "E[stat] = 0 in every cell (two-sided z-tests, Bonferroni)",
            "series": [
                {
                    "name": s.name,
                    "n_grid": list(s.n_grid),
                    "means": list(s.means),
                    "z": [json_number(x) for x in s.z],
                    "detectable": list(s.detectable),
                    "level": s.level,
                    "verdict": "violated" if s.violated else "consistent",
                }
                for s in self.series
            ],
            "cells": [],
        }

    def _settings(self) -> str:
        return f"{self.reps} replicates per cell"
