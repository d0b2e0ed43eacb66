"""The budget of an adversarial law search: evaluations and replicates (:class:`SearchBudget`).

A search (:func:`calcheck.search`) spends ``population x (generations + 1)`` evaluations of
differential evolution and ``refine x dim`` of line-search refinement for a family of ``dim``
parameters, each on ``reps`` replicates, then re-checks its best law on ``fresh_reps``
replicates of a fresh seed. The named budgets are :data:`SEARCH_BUDGETS`;
:meth:`SearchBudget.sized` derives one from a total number of evaluations and replicates
(``calcheck search --evaluations N --reps R``).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from .experiments.base import BLOCK_REPS

__all__ = ["SEARCH_BUDGETS", "SearchBudget", "get_search_budget"]

#: The least population of differential evolution and the least generations after it:
#: the least search is ``5 x (1 + 1) = 10`` evaluations.
MIN_POPULATION = 5
MIN_EVALUATIONS = 2 * MIN_POPULATION
#: About the least refinement that runs both of its stages (a third in lines of 8 points on
#: the smoothed objective, the rest in lines of 16 on the exact one;
#: :mod:`calcheck.theory_checks.search.refine`): :meth:`SearchBudget.sized` gives a smaller
#: share to differential evolution instead.
MIN_REFINEMENT = 32


def _whole(value, least: int, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ValueError(f"SearchBudget {field} must be an integer >= {least}, got {value!r}")
    return value


@dataclass(frozen=True)
class SearchBudget:
    """Evaluations and replicates of a search (:func:`calcheck.search`).

    Parameters
    ----------
    name : str
        A label shown in the search's summary and stored with its result.
    population : int
        Candidate laws per generation of differential evolution (at least 5).
    generations : int
        Generations after the start population (at least 1): differential evolution
        evaluates ``population x (generations + 1)`` laws.
    reps : int
        Replicates per evaluation, on common random numbers (at least 1; simulated in whole
        blocks of 100).
    fresh_reps : int
        Replicates of the fresh-seed re-check of the law found (at least 1), with the suite's
        exact binomial verdict; also the replicates on which the law found is compared with
        the family's known hard points (eta = 1/2).
    refine : int, default 0
        Evaluations of the refinement of differential evolution's best law *per parameter of
        the family* (coordinate line searches at ``reps`` replicates each); 0: none.

    Raises
    ------
    ValueError
        Naming the field and echoing its value: a name that is not a non-empty string, a
        population below 5, generations, reps or fresh_reps below 1, a negative refine, or
        any of them not an integer.

    See Also
    --------
    calcheck.search : the search that spends it (``budget="quick"`` or ``"full"``: the named
        budgets, ``calcheck.simulations.search.SEARCH_BUDGETS``).

    Examples
    --------
    A tiny search: 10 laws over 3 generations (30 evaluations), 100 replicates each, and
    8 line-search evaluations per parameter:

    >>> from calcheck.simulations.search import SearchBudget
    >>> tiny = SearchBudget("tiny", population=10, generations=2, reps=100, fresh_reps=1000,
    ...                     refine=8)
    >>> tiny.evaluations, tiny.total_evaluations(dim=5)
    (30, 70)
    >>> SearchBudget("bad", population=2, generations=1, reps=100, fresh_reps=1000)
    Traceback (most recent call last):
    ...
    ValueError: SearchBudget population must be an integer >= 5, got 2

    The quick budget resized to about 100 evaluations of 50 replicates for a family of five
    parameters (the quick budget's share of refinement is kept):

    >>> small = SearchBudget.named("quick").sized(evaluations=100, reps=50, dim=5)
    >>> small.total_evaluations(5), small.reps
    (100, 50)
    """

    name: str
    population: int
    generations: int
    reps: int
    fresh_reps: int
    refine: int = 0

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"SearchBudget name must be a non-empty string, got {self.name!r}")
        _whole(self.population, MIN_POPULATION, "population")
        for field in ("generations", "reps", "fresh_reps"):
            _whole(getattr(self, field), 1, field)
        _whole(self.refine, 0, "refine")

    @property
    def evaluations(self) -> int:
        """Evaluations of differential evolution: ``population x (generations + 1)``."""
        return self.population * (self.generations + 1)

    def total_evaluations(self, dim: int) -> int:
        """All candidate evaluations for a family of ``dim`` parameters (with refinement)."""
        return self.evaluations + self.refine * int(dim)

    @property
    def replicates(self) -> int:
        """Replicates simulated by differential evolution (evaluations x reps, whole blocks)."""
        return self.evaluations * math.ceil(self.reps / BLOCK_REPS) * BLOCK_REPS

    @classmethod
    def named(cls, name: str) -> SearchBudget:
        """The named budget ``"quick"`` or ``"full"`` (ValueError listing the names).

        Examples
        --------
        >>> from calcheck.simulations.search import SearchBudget
        >>> SearchBudget.named("quick").total_evaluations(dim=5)
        290
        """
        if not isinstance(name, str):
            raise ValueError(
                f"a named search budget is one of {sorted(SEARCH_BUDGETS)}, got {name!r}"
            )
        return get_search_budget(name)

    def sized(self, *, evaluations: int | None = None, reps: int | None = None, dim: int = 1):
        """A copy with about ``evaluations`` evaluations in all and ``reps`` replicates.

        Parameters
        ----------
        evaluations : int, optional
            Evaluations of the whole search (differential evolution and refinement) for a
            family of ``dim`` parameters, at least 10. They are shared as in this budget
            (its share of refinement, unless that is under 32 evaluations, too few to run:
            then all go to differential evolution; its population, or fewer for a small
            total), rounded to whole generations: ``total_evaluations`` may differ by
            less than one population. None: this budget's.
        reps : int, optional
            Replicates per evaluation (at least 1); None: this budget's. The fresh re-check
            keeps ``fresh_reps``.
        dim : int, default 1
            Parameters of the family searched (``LawFamily.dim``).

        Returns
        -------
        SearchBudget
            Named after this one and the sizes given (``"quick, 100 evaluations x 50"``).

        Raises
        ------
        ValueError
            For evaluations below 10 or reps below 1 (naming the argument and its value).
        """
        if evaluations is None and reps is None:
            return self
        name = self.name
        out = self
        if evaluations is not None:
            total = _whole(evaluations, MIN_EVALUATIONS, "evaluations")
            dim = _whole(dim, 1, "dim")
            share = self.refine * dim / self.total_evaluations(dim)
            refine = int(total * share) // dim
            if refine * dim < MIN_REFINEMENT:  # too few to run: differential evolution's
                refine = 0
            de = max(MIN_EVALUATIONS, total - refine * dim)
            population = max(MIN_POPULATION, min(self.population, de // 2))
            generations = max(1, round(de / population) - 1)
            # whatever differential evolution's rounding left goes to the refinement
            if refine:  # what differential evolution's rounding left, if enough to run
                refine = max(0, total - population * (generations + 1)) // dim
                if refine * dim < MIN_REFINEMENT:
                    refine, generations = 0, max(1, round(total / population) - 1)
            out = dataclasses.replace(
                out, population=population, generations=generations, refine=refine
            )
            name += f", {total} evaluations"
        if reps is not None:
            out = dataclasses.replace(out, reps=_whole(reps, 1, "reps"))
            name += f" x {reps}"
        return dataclasses.replace(out, name=name)


#: quick: 50 evaluations of differential evolution and 48 of refinement per parameter (240
#: for 5 parameters), 200 replicates each (a guarantee in seconds at n <= 3000), fresh
#: re-check on 4000; full: 300 + 96 per parameter x 1000, re-check on 20000. Measured
#: power: docs, "How powerful is the search?".
SEARCH_BUDGETS = {
    "quick": SearchBudget("quick", 10, 4, 200, 4000, refine=48),
    "full": SearchBudget("full", 20, 14, 1000, 20000, refine=96),
}


def get_search_budget(budget) -> SearchBudget:
    """A :class:`SearchBudget` or the name of one (ValueError listing the known ones)."""
    if isinstance(budget, SearchBudget):
        return budget
    if budget not in SEARCH_BUDGETS:
        raise ValueError(f"search budget must be one of {sorted(SEARCH_BUDGETS)}, got {budget!r}")
    return SEARCH_BUDGETS[budget]
