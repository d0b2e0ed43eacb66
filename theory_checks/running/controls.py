"""A sharper negative control for any check: the stated bound times a factor, fresh seed.

Every check reports its *detectable factor* k (:attr:`CheckResult.detectable_factor`): at
its budget it would flag the stated bound multiplied by any factor below k. Read off the
check's own data, that is a property of those replicates; :func:`sharper_control` tests it
honestly: it takes a factor below k (by default the largest multiple of 0.05 not above
0.9 k), simulates the same experiments again on a *fresh* root seed, and returns the
control's result, which must come out violated. A control that is not flagged means the
check's power against a constant that much too small is not real at this budget.
"""

from __future__ import annotations

import dataclasses
import math

from calcheck.simulations.store import ResultStore

from ..checks.check import CheckResult
from ..checks.events import scaled
from .runner import run_checks

__all__ = ["sharper_control"]


def default_factor(detectable: float) -> float:
    """The largest multiple of 0.05 not above 0.9 times the detectable factor."""
    return math.floor(0.9 * detectable * 20 + 1e-9) / 20


def sharper_control(
    result: CheckResult, *, factor=None, rng=None, reps=None, n_jobs=1, store=None
) -> CheckResult:
    """Check the stated bound times ``factor`` on the same experiments, on a fresh seed.

    Parameters
    ----------
    result : CheckResult
        A check of a stated bound (``calcheck.verify`` returns one).
    factor : float, optional
        In (0, 1); default: the largest multiple of 0.05 not above 0.9 times the result's
        detectable factor.
    rng : int, numpy Generator or None
        Root seed of the control's simulation; it should differ from the check's.
    reps : int, optional
        Replicates per cell (default: the check's).
    n_jobs : int, default 1
    store : ResultStore, optional
        In memory by default.

    Returns
    -------
    CheckResult
        The control ``<id>.control.times_<factor>``, expected violated: ``passed`` is True
        when the suite flags it.

    Raises
    ------
    ValueError
        When the check is not of a stated bound, or has no detectable factor (lower-bound
        and randomised events) and no factor is given, or the factor is not in (0, 1).

    Examples
    --------
    >>> from calcheck import sharper_control, verify
    >>> result = verify("gr21.thm3", "uniform_half", n=1000, n_bins=10, reps=1000, rng=0)
    >>> control = sharper_control(result, factor=0.6, rng=1)
    >>> control.check.id, control.verdict, control.passed
    ('study:gr21.thm3.control.times_0.6', 'violated', True)
    """
    from .verify import _root_seed  # the one home of rng -> root seed

    if not isinstance(result, CheckResult):
        raise ValueError(f"result must be a CheckResult, got {type(result).__name__}")
    check = result.check
    if check.is_control or check.bound.name != "stated":
        raise ValueError(f"{check.id!r} is not a check of a stated bound")
    if factor is None:
        k = result.detectable_factor
        if k is None or default_factor(k) <= 0:
            raise ValueError(
                f"{check.id!r} has no usable detectable factor ({k!r}): its event is not "
                "'error <= bound' or it has no power; pass factor= explicitly"
            )
        factor = default_factor(k)
    control = dataclasses.replace(
        check,
        id=f"{check.id}.control.times_{factor:g}",
        expect="violated",
        role="control",
        bound=scaled(float(factor)),
        description=f"sharper negative control: the stated bound times {factor:g} (fresh seed)",
    )
    own = store is None
    store = ResultStore(":memory:") if own else store
    try:
        run = run_checks(
            [control],
            store,
            reps=result.reps if reps is None else reps,
            root_seed=_root_seed(rng),
            false_alarm=result.false_alarm,
            n_jobs=n_jobs,
        )
    finally:
        if own:
            store.close()
    return run.results[0]
