"""Run checks: simulate what they need (resuming from a store), evaluate, keep the results.

:func:`run_checks` is the one way checks are run (the CLI, :func:`calcheck.theory_checks.verify`,
the search and the tests). With ``records=True`` (what ``calcheck run`` does) every
evaluated result is also kept in the store as a record
(:mod:`calcheck.theory_checks.running.records`): a rerun reads it instead of simulating, and each
check is evaluated as soon as its last experiment is complete. With ``keep_replicates=False`` the
blocks of an experiment are then deleted once every check of the run that reads it has its record,
so the store holds the verdicts' numbers rather than millions of replicates; a later check that
needs those blocks simulates them again from their seeds (same numbers).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from calcheck.simulations.engine import RunStats, run_experiments
from calcheck.simulations.provenance import content_key

from ..checks.budgets import DEFAULT_FALSE_ALARM
from ..results.export import Exportable
from .records import changed_inputs, decode_result, encode_result, result_inputs

__all__ = ["RunResult", "run_checks"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class RunResult(Exportable):
    """Results of :func:`run_checks` and what the engine did.

    ``stats`` counts blocks computed and reused; ``recorded`` the checks whose results were
    read from the store's records (nothing simulated for them); ``dropped_blocks`` the
    blocks deleted once their readers' results were recorded (``keep_replicates=False``);
    ``damaged_records`` the records that failed their digest or could not be rebuilt
    (recomputed); ``changed`` the checks recomputed because an input of their earlier
    record changed, as ``(check id, what changed)`` (e.g. ``"the bound's code changed
    (mymod.py)"``; also logged, at WARNING for a bound or calibrator of the user's).
    """

    results: list
    stats: RunStats
    recorded: int = 0
    dropped_blocks: int = 0
    damaged_records: int = 0
    changed: tuple = ()


#: Store meta key of the inputs of a check's latest record (names what changed on a rerun).
_INPUTS = "record_inputs:"


def _read_records(checks, store, reps, root_seed, false_alarm):
    keys, inputs, found, unreadable, changed = {}, {}, {}, 0, []
    before = len(store.damaged)
    for i, check in enumerate(checks):
        inputs[i] = result_inputs(check, reps, root_seed, false_alarm)
        keys[i] = content_key(inputs[i])
        text = store.get_result(keys[i])
        if text is None:
            earlier = store.get_meta(_INPUTS + check.id)
            reasons = changed_inputs(earlier, inputs[i]) if earlier is not None else []
            if reasons:
                changed.append((check.id, "; ".join(reasons)))
            continue
        try:
            found[i] = decode_result(text, check)
        except (ValueError, TypeError, KeyError) as exc:
            # a record this code cannot rebuild is recomputed (and overwritten), never trusted
            logger.warning("unreadable result record of %s (%s): recomputing it", check.id, exc)
            unreadable += 1
    _say_changed(changed)
    return keys, inputs, found, len(store.damaged) - before + unreadable, changed


def _say_changed(changed) -> None:
    """One line per reason: the user's own code by check, calcheck's changes in a count."""
    by_reason: dict[str, list] = {}
    for check_id, reason in changed:
        by_reason.setdefault(reason, []).append(check_id)
    for reason, ids in by_reason.items():
        own = "the bound's" in reason or "the calibrator's" in reason
        if own or len(ids) == 1:
            for check_id in ids:
                logger.log(
                    logging.WARNING if own else logging.INFO,
                    "%s: recomputed: %s",
                    check_id,
                    reason,
                )
        else:
            logger.info("%d checks recomputed (%s, ...): %s", len(ids), ids[0], reason)


def _sharing_groups(todo, checks):
    """``todo`` reordered so that checks sharing an experiment (transitively) are adjacent.

    Experiments are simulated in the order they are listed, and the blocks of one are kept
    until every check that reads it is evaluated: checks that share experiments but sit far
    apart in the catalog (gr21 Corollary 1 and nch14 eq. 9) would hold them meanwhile. The
    order changes no result (each block has its own seed).
    """
    parent = {i: i for i in todo}

    def root(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first = {}
    for i in todo:
        for e in checks[i].simulations():
            if e.key in first:
                parent[root(i)] = root(first[e.key])
            else:
                first[e.key] = i
    groups: dict[int, list] = {}
    for i in todo:
        groups.setdefault(root(i), []).append(i)
    return [i for members in groups.values() for i in members]


def run_checks(
    checks,
    store,
    *,
    reps: int,
    root_seed: int,
    false_alarm: float = DEFAULT_FALSE_ALARM,
    n_jobs: int = 1,
    backend: str = "loky",
    progress: bool = False,
    on_block=None,
    heartbeat=None,
    on_estimate=None,
    records: bool = False,
    keep_replicates: bool = True,
    on_result=None,
) -> RunResult:
    """Simulate every experiment the checks need (resuming from ``store``), then evaluate.

    Parameters
    ----------
    checks : list
        Checks (:class:`~calcheck.theory_checks.checks.check.Check` or the series checks).
    store : ResultStore
    reps : int
        Replicates per cell.
    root_seed : int
    false_alarm : float, default 1e-3
        False-alarm rate per check, in (0, 1).
    n_jobs, backend, progress, on_block, heartbeat, on_estimate
        Passed to :func:`calcheck.simulations.engine.run_experiments`.
    records : bool, default False
        Read and write result records in ``store`` (see the module docstring).
    keep_replicates : bool, default True
        With ``records``, False deletes an experiment's blocks once every check of this
        run that reads it has its record, and compacts the store file at the end.
    on_result : callable, optional
        Called as ``on_result(i, result)`` once check ``i`` has its result (read from a
        record, or evaluated as its last experiment completes), e.g. to draw its picture.

    Returns
    -------
    RunResult
    """
    if isinstance(false_alarm, bool) or not (0 < false_alarm < 1):
        raise ValueError(f"false_alarm must lie in (0, 1), got {false_alarm!r}")
    if not records and not keep_replicates:
        raise ValueError("keep_replicates=False needs records=True (the results must be kept)")
    checks = list(checks)
    keys, inputs, results, damaged, changed = (
        _read_records(checks, store, reps, root_seed, false_alarm)
        if records
        else ({}, {}, {}, 0, [])
    )
    recorded = len(results)
    if on_result is not None:
        for i in sorted(results):
            on_result(i, results[i])
    todo = [i for i in range(len(checks)) if i not in results]
    waiting = {i: {e.key for e in checks[i].simulations()} for i in todo}
    readers: dict[str, set] = {}
    stamps = {}
    for i in todo:
        for e in checks[i].simulations():
            readers.setdefault(e.key, set()).add(i)
            stamps[e.key] = e.code_stamp
    # before any block: what the workers hold at once must fit (n_jobs blocks, reps outcomes)
    from calcheck.simulations.engine import n_blocks_for
    from calcheck.simulations.memory import check_experiments_fit

    n_blocks_for(reps)  # reps itself first (a positive integer, at most the per-cell cap)
    todo_experiments = {e.key: e for i in todo for e in checks[i].simulations()}
    check_experiments_fit(todo_experiments.values(), reps=reps, n_jobs=n_jobs, what="the run")
    dropped = {"blocks": 0}

    def evaluate(i):
        results[i] = checks[i].evaluate(store, reps, root_seed, false_alarm)
        if on_result is not None:
            on_result(i, results[i])
        if not records:
            return
        store.put_result(keys[i], checks[i].id, encode_result(results[i]))
        store.set_meta(_INPUTS + checks[i].id, inputs[i])
        if keep_replicates:
            return
        for key in {e.key for e in checks[i].simulations()}:
            if all(j in results for j in readers[key]):
                dropped["blocks"] += store.drop_blocks(root_seed, key, stamps[key])

    def cell_done(key):
        for i in sorted(readers.get(key, ())):
            waiting[i].discard(key)
            if not waiting[i] and i not in results:
                evaluate(i)

    stats = run_experiments(
        [e for i in _sharing_groups(todo, checks) for e in checks[i].simulations()],
        reps,
        root_seed,
        store,
        n_jobs=n_jobs,
        backend=backend,
        progress=progress,
        on_block=on_block,
        heartbeat=heartbeat,
        on_estimate=on_estimate,
        on_cell_done=cell_done if records else None,
    )
    for i in todo:
        if i not in results:
            evaluate(i)
    if dropped["blocks"]:
        store.compact()
    ordered = [results[i] for i in range(len(checks))]
    return RunResult(ordered, stats, recorded, dropped["blocks"], damaged, tuple(changed))
