"""Python API: check a guarantee on a law of your own from a notebook or a test suite.

``verify`` returns the same :class:`~calcheck.theory_checks.checks.check.CheckResult` the CLI
reports (its repr states the verdict, the worst cell with its Clopper-Pearson interval and the
claim; ``plot()`` draws every cell). Results are reproducible: an integer ``rng`` is the root seed
of the engine's seed protocol, and the result does not depend on ``n_jobs``.

Exact evidence first. Every cell is simulated and tested by the suite's exact binomial test.
Where calcheck can compute the cell's probability exactly -- uniform-mass binning (and top-label
binning class by class) on a law whose eta is constant, with the conditional or marginal event
and a fixed radius (:mod:`calcheck.theory_checks.checks.exact_evidence`, gr21 Lemma 2) -- the
exact value decides the cell (``cell.exact_coverage < claimed`` is violated, whatever the
replicates say) and the Monte Carlo coverage is its cross-check: an exact value outside the
Monte Carlo's 1 - 1e-6 Clopper-Pearson interval raises RuntimeError. Here gr21 Theorem 3 at
eta = 1/2, where the certificate over every law at these sizes decides first where it reaches
the claim:

>>> from calcheck import verify
>>> cell = verify("gr21.thm3", "uniform_half", n=1000, n_bins=10, reps=500, rng=0).cells[0]
>>> round(cell.exact_coverage, 4), round(cell.certified_coverage, 4), cell.violated
(0.9885, 0.9879, False)
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from calcheck.simulations.engine import n_blocks_for
from calcheck.simulations.memory import check_experiments_fit
from calcheck.simulations.provenance import check_root_seed
from calcheck.simulations.store import ResultStore

from ..catalog import for_law
from ..checks.budgets import DEFAULT_FALSE_ALARM
from ..checks.check import CheckResult
from ..user.guarantees import guarantee_id as as_id
from .cluster import dask_scheduler
from .runner import RunOptions, check_run_options, run_validated

__all__ = ["verify"]


def _root_seed(rng) -> int:
    if rng is None:
        return int(np.random.SeedSequence().entropy % (2**63))
    if isinstance(rng, np.random.Generator):
        return int(rng.integers(0, 2**63 - 1))
    return check_root_seed(rng)


def _laws(law):
    """A law, a law's name, or a sequence of either, as a tuple of laws."""
    from calcheck.simulations.laws import LAWS

    items = list(law) if isinstance(law, list | tuple) else [law]
    if not items:
        raise ValueError("law must be a law, a law's name or a non-empty sequence of them")
    out = []
    for item in items:
        if isinstance(item, str):
            if item not in LAWS:
                raise ValueError(f"unknown law name {item!r}; shipped laws: {sorted(LAWS)}")
            item = LAWS[item]
        out.append(item)
    return tuple(out)


def _alphas(alphas) -> tuple:
    """One alpha (a number) or a sequence of them, as a tuple; a string is refused."""
    if isinstance(alphas, int | float | np.integer | np.floating) and not isinstance(alphas, bool):
        return (float(alphas),)
    items = list(alphas) if isinstance(alphas, list | tuple | np.ndarray) else None
    if not items or any(
        isinstance(a, bool) or not isinstance(a, int | float | np.integer | np.floating)
        for a in items
    ):
        raise ValueError(
            f"alphas must be a number or a non-empty sequence of numbers in (0, 1), got {alphas!r}"
        )
    return tuple(float(a) for a in items)


def _store(store):
    """``(store, owned)``: a ResultStore as given, or one opened at a path (closed after)."""
    if store is None:
        return ResultStore(":memory:"), True
    if isinstance(store, ResultStore):
        return store, False
    if isinstance(store, str | Path) and str(store):
        path = Path(store)
        if path.is_dir():  # a run's --out folder: its store
            path = path / "store.sqlite"
        try:
            return ResultStore(path), True
        except OSError as exc:
            raise ValueError(f"store {str(store)!r}: cannot open a store there ({exc})") from None
    raise ValueError(
        f"store must be a ResultStore, a path to its sqlite file (or a folder holding "
        f"store.sqlite) or None, got {type(store).__name__}: {store!r}"
    )


def cloudpickle_module():
    """The cloudpickle joblib's workers use (a dependency of joblib >= 1.5, vendored before)."""
    try:
        import cloudpickle
    except ImportError:  # pragma: no cover - older joblib
        from joblib.externals import cloudpickle
    return cloudpickle


def check_picklable(experiments, n_jobs, scheduler=None) -> None:
    """Refuse, before any work, experiments that cannot be sent to parallel workers.

    With a ``scheduler`` they go to the cluster's workers whatever ``n_jobs`` is.
    """
    one_process = isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs == 1
    if scheduler is None and one_process:
        return
    where = f"n_jobs = {n_jobs}" if scheduler is None else f"scheduler = {scheduler!r}"
    remedy = "use n_jobs=1" if scheduler is None else "run without a scheduler"
    bigger = "n_jobs > 1" if scheduler is None else "a scheduler"
    cloudpickle = cloudpickle_module()
    for exp in {id(e): e for e in experiments}.values():
        try:
            cloudpickle.dumps(exp)
        except Exception as exc:  # any failure to pickle: TypeError, PicklingError, ...
            what = type(getattr(exp, "calibrator", None) or exp).__name__
            raise ValueError(
                f"{where}: {what} in {exp.label()} cannot be sent to the workers "
                f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}); "
                f"a calibrator or bound of your own must be picklable for {bigger} (define "
                f"it at module level, without locks, open files or generators), or {remedy}"
            ) from None


def verify(
    guarantee_id,
    law,
    *,
    n=None,
    n_bins=None,
    alphas=(0.1,),
    reps=2000,
    rng=None,
    n_jobs=1,
    false_alarm=DEFAULT_FALSE_ALARM,
    store=None,
    expect="consistent",
    scheduler=None,
    **grid,
) -> CheckResult:
    """Check a registered guarantee on ``law``: exact evidence first, Monte Carlo beside it.

    Every cell is tested by the suite's exact binomial test; where calcheck can compute the
    cell's probability exactly (the module docstring says where), that value decides it.

    Parameters
    ----------
    guarantee_id : str or DefinedGuarantee
        A studiable guarantee (``calcheck list`` prints them and why the others are
        refused), or one of your own (:func:`calcheck.define_guarantee`).
    law : Law, str or sequence of them
        Laws of a family the guarantee's experiment accepts (``simulations.laws``), or
        names of shipped laws (``"uniform_half"``; ``calcheck.LAWS`` lists them).
    n, n_bins : int or sequence of int, optional
        Grid values; each guarantee names its own grid parameters (``n`` and ``n_bins``
        for gr21; ``n`` and ``points_per_bin`` for gr22 -- pass those as keywords).
    alphas : float or sequence of float, default (0.1,)
        Miscoverages in (0, 1); a single number is one alpha (a string is refused).
    reps : int, default 2000
        Replicates per cell, >= 1 (rounded up to whole blocks of 100).
    rng : int, numpy Generator or None
        Root seed of the seed protocol (an integer as is; a Generator draws one; None: entropy).
    n_jobs : int, default 1
        Parallel workers (results are identical for any number); with more than one, the
        experiments (a calibrator of your own included) must be picklable.
    false_alarm : float, default 1e-3
        Probability that a guarantee that holds is reported violated (Bonferroni over cells).
    store : ResultStore, str or Path, optional
        Where blocks are kept (resume, reuse), in memory by default; a path opens (or
        creates) the sqlite store there (a folder: its ``store.sqlite``) and closes it after.
    expect : {"consistent", "violated"}, default "consistent"
        ``"violated"`` marks a negative control: ``passed`` then says whether it was flagged.
    scheduler : str, optional
        The address of a running dask scheduler (``"tcp://10.0.0.5:8786"``; a
        ``LocalCluster``'s ``scheduler_address``): the replicates are simulated on its
        workers (``calcheck run --scheduler`` does the same), and the result is identical to
        one without it. Needs ``dask[distributed]``; the experiments (a calibrator or bound
        of your own included) must be picklable. ``n_jobs`` is then not used for the
        simulation: the cluster's workers are.
    **grid : int or sequence of int
        Other grid parameters of the guarantee (e.g. ``points_per_bin=20``).

    Returns
    -------
    CheckResult
        With ``passed``, ``verdict``, per-cell verdicts, ``worst_cell()`` and ``plot()``;
        a cell decided exactly has ``exact_coverage`` and ``exact_route`` set.

    Raises
    ------
    ValueError
        For a refused or unknown guarantee (the message says why and lists the studiable
        ones), a law of the wrong family, bad grid values, alphas, reps or store, a size
        whose memory estimate exceeds the memory available
        (:class:`~calcheck.simulations.memory.MemoryRefused`, naming the largest that
        fits), or, with ``n_jobs`` > 1 or a scheduler, a calibrator that cannot be pickled;
        a scheduler that does not answer as one (refused, timed out, another server) or
        without dask.distributed installed.
    RuntimeError
        Where a cell's exact and Monte Carlo coverages disagree beyond Monte Carlo error (a
        bug in one of the two routes, never a verdict).

    Examples
    --------
    >>> from calcheck import verify
    >>> result = verify("gr21.thm3", "uniform_logistic", n=1000, n_bins=10, reps=500, rng=0)
    >>> result.verdict, result.passed, result.worst_cell().law
    ('consistent', True, 'uniform_logistic')
    >>> round(result.worst_cell().verdict.coverage, 3)
    0.998
    """
    n_blocks_for(reps)  # validates reps before anything is simulated
    check = _check_for(guarantee_id, law, _grid(n, n_bins, grid), alphas, expect)
    return _run_one(
        check,
        store,
        scheduler,
        reps=reps,
        rng=rng,
        n_jobs=n_jobs,
        false_alarm=false_alarm,
    )


def _grid(n, n_bins, grid) -> dict:
    """The grid parameters given (``n``, ``n_bins`` and the others), each as a list of values."""
    points = {k: v for k, v in (("n", n), ("n_bins", n_bins)) if v is not None} | grid
    return {
        k: list(v) if isinstance(v, list | tuple | np.ndarray) else [v] for k, v in points.items()
    }


def _check_for(guarantee_id, law, points, alphas, expect):
    """The check of a guarantee on laws at grid ``points``: a negative control if expected so."""
    if expect not in ("consistent", "violated"):
        raise ValueError(f"expect must be 'consistent' or 'violated', got {expect!r}")
    check = for_law(as_id(guarantee_id), _laws(law), grid=points, alphas=_alphas(alphas))
    if expect == "violated":
        check = dataclasses.replace(check, expect="violated")
    return check


def _run_one(check, store, scheduler, *, reps, rng, n_jobs, false_alarm) -> CheckResult:
    """Run one check, validating what :func:`verify` has not yet, before the store opens.

    The run itself (:func:`~calcheck.theory_checks.running.runner.run_validated`) checks
    nothing again: a memory refusal names ``verify``, not the run. A scheduler is reached
    (or refused) before the store opens too.
    """
    check_experiments_fit(check.simulations(), reps=reps, n_jobs=n_jobs, what="verify")
    check_picklable(check.simulations(), n_jobs, scheduler)
    options = RunOptions(
        reps=reps, root_seed=_root_seed(rng), false_alarm=false_alarm, n_jobs=n_jobs
    )
    check_run_options(options)
    with dask_scheduler(scheduler, options.backend) as backend:
        options = dataclasses.replace(options, backend=backend)
        store, own = _store(store)
        try:
            run = run_validated([check], store, options)
        finally:
            if own:
                store.close()
    return run.results[0]
