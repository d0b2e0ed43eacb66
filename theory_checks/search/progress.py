"""What a search will cost, said before it starts, and its progress bar while it runs.

:func:`calcheck.search` first evaluates the family's benign start points one after the
other in the calling process and times them; :func:`estimate_search` turns that measured
cost per evaluation into an estimate of the whole search (:class:`SearchEstimate`), which is
logged at INFO (``calcheck search`` prints it). Then a tqdm bar on standard error counts the
evaluations (:func:`progress_bar`; the engine's bar of ``calcheck run`` in the same form), on
where standard error is a terminal unless asked.
"""

from __future__ import annotations

import contextlib
import math
import os
import statistics
import sys
import time
from dataclasses import dataclass

from calcheck.simulations.experiments.base import BLOCK_REPS
from calcheck.simulations.search import evaluate_batch, evaluations_counted

from .refine import refinement_evaluations

__all__ = [
    "SearchEstimate",
    "estimate_search",
    "format_duration",
    "progress_bar",
    "show_progress",
    "timed_batch",
]


def show_progress(progress) -> bool:
    """``progress`` as a bool: None means "when standard error is a terminal"."""
    if progress is None:
        return bool(getattr(sys.stderr, "isatty", lambda: False)())
    if not isinstance(progress, bool):
        raise ValueError(f"progress must be True, False or None, got {progress!r}")
    return progress


def timed_batch(objective, thetas) -> tuple:
    """``objective`` at each theta, one after the other here, and the seconds of each."""
    values, seconds = [], []
    for theta in thetas:
        start = time.perf_counter()
        values.append(float(evaluate_batch(objective, [theta], n_jobs=1, backend="sequential")[0]))
        seconds.append(time.perf_counter() - start)
    return values, seconds


def _blocks(reps: int) -> int:
    return max(1, math.ceil(int(reps) / BLOCK_REPS))


@dataclass(frozen=True)
class SearchEstimate:
    """The size of a search and its estimated wall time (:func:`estimate_search`).

    Attributes
    ----------
    evaluations : int
        Evaluations the progress bar counts: benign start points, differential evolution,
        refinement, the comparison with the known hard laws, random sampling.
    reps : int
        Replicates per evaluation of the search.
    fresh_reps : int
        Replicates of each fresh-seed re-check (and of each law in the comparison with the
        known hard laws).
    rechecks : int
        Fresh-seed re-checks (2 with the random-sampling baseline, else 1).
    grid : dict
        The cell searched.
    seconds_per_evaluation : float
        Measured: the median time of the first evaluations (the benign start points, one
        after the other in this process).
    measured_on : int
        How many evaluations were timed.
    workers : int
        Parallel workers assumed (``n_jobs``; all CPUs for -1; at most one population).
    seconds : float
        The estimate (see :func:`estimate_search`).
    """

    evaluations: int
    reps: int
    fresh_reps: int
    rechecks: int
    grid: dict
    seconds_per_evaluation: float
    measured_on: int
    workers: int
    seconds: float

    def line(self) -> str:
        """``about N evaluations of R replicates at n=...; about X s (how it was measured)``."""
        grid = ", ".join(f"{k}={v}" for k, v in self.grid.items())
        return (
            f"about {self.evaluations} evaluations of {self.reps} replicates at {grid}, and "
            f"{self.rechecks} re-check{'s' if self.rechecks > 1 else ''} of {self.fresh_reps}; "
            f"about {format_duration(self.seconds)} ({self.seconds_per_evaluation:.3g} s an "
            f"evaluation, measured on the first {self.measured_on}; {self.workers} "
            f"worker{'s' if self.workers > 1 else ''})"
        )


def format_duration(seconds: float) -> str:
    """``"40 s"``, ``"12 min"`` or ``"1.5 h"`` (at least 1 s), as ``calcheck run`` says it."""
    seconds = max(float(seconds), 1.0)
    if seconds < 90:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min" if seconds < 5400 else f"{seconds / 3600:.1f} h"


def estimate_search(
    criterion, family, budget, seconds, *, known: int, baseline: bool, n_jobs: int
) -> SearchEstimate:
    """Estimate a search from the measured seconds of its first evaluations.

    With t the median of ``seconds`` (one evaluation of ``budget.reps`` replicates) and
    cost proportional to whole blocks of replicates, the search costs t times: its
    evaluations (differential evolution, refinement, random sampling), the comparison with
    the ``known`` hard laws (``1 + known`` evaluations of ``fresh_reps`` replicates), and the
    re-checks (one of ``fresh_reps`` per law re-checked), divided among the workers
    (``n_jobs``, at most a population at a time). Start-up of the workers, and a refinement
    objective that costs less than the criterion (labels integrated out), are not counted:
    the estimate is a rough guide, typically within a factor of two.
    """
    benign = len(family.benign)
    dim_evals = budget.evaluations + refinement_evaluations(criterion, family, budget)
    random = budget.total_evaluations(family.dim) if baseline else 0
    compared = 1 + known if known else 0
    rechecks = 2 if baseline else 1
    t = statistics.median(seconds) if seconds else 0.0
    ratio = _blocks(budget.fresh_reps) / _blocks(budget.reps)
    # the re-checked laws' criterion at the search's replicates (one evaluation each)
    work = dim_evals + random + rechecks + (compared + rechecks) * ratio
    jobs = (os.cpu_count() or 1) if n_jobs == -1 else n_jobs
    workers = max(1, min(int(jobs), budget.population))
    return SearchEstimate(
        benign + dim_evals + random + compared,
        budget.reps,
        budget.fresh_reps,
        rechecks,
        dict(criterion.grid),
        t,
        len(seconds),
        workers,
        t * work / workers,
    )


@contextlib.contextmanager
def progress_bar(estimate: SearchEstimate, progress: bool, done: int = 0):
    """A tqdm bar of the search's evaluations on standard error (nothing if not ``progress``)."""
    from tqdm.auto import tqdm

    with (
        tqdm(
            total=estimate.evaluations,
            initial=done,
            disable=not progress,
            unit="law",
            desc="calcheck search",
            leave=False,
        ) as bar,
        evaluations_counted(bar.update),
    ):
        yield bar
