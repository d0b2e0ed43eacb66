"""Run checks: simulate what they need (resuming from a store), evaluate, keep the results.

:func:`run_checks` is the one way checks are run (the CLI, the search and the tests;
:func:`calcheck.theory_checks.verify`, which validates its arguments itself, through
:func:`run_validated`). With ``records=True`` (what ``calcheck run`` does) every
evaluated result is also kept in the store as a record
(:mod:`calcheck.theory_checks.running.records`): a rerun reads it instead of simulating, and each
check is evaluated as soon as its last experiment is complete. With ``keep_replicates=False`` the
blocks of an experiment are then deleted once every check of the run that reads it has its record,
so the store holds the verdicts' numbers rather than millions of replicates; a later check that
needs those blocks simulates them again from their seeds (same numbers).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from calcheck.simulations.engine import RunStats, n_blocks_for, run_experiments
from calcheck.simulations.memory import check_experiments_fit
from calcheck.simulations.provenance import content_key

from ..checks.budgets import DEFAULT_FALSE_ALARM
from ..results.export import Exportable
from .evaluation import Evaluations, evaluable_beside, evaluation_processes
from .records import changed_inputs, decode_result, encode_result, result_inputs

__all__ = [
    "RunHooks",
    "RunOptions",
    "RunResult",
    "check_run_fits",
    "check_run_options",
    "run_checks",
    "run_validated",
]

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
    (mymod.py)"``; also logged, at WARNING for a bound or calibrator of the user's);
    ``evaluation_processes`` the processes that evaluated checks beside the workers (0: the
    main process did, :mod:`.evaluation`) and ``evaluation_cpu_seconds`` their CPU time.
    """

    results: list
    stats: RunStats
    recorded: int = 0
    dropped_blocks: int = 0
    damaged_records: int = 0
    changed: tuple = ()
    evaluation_processes: int = 0
    evaluation_cpu_seconds: float = 0.0


@dataclass(frozen=True)
class RunOptions:
    """The settings of one run of checks, as :func:`run_checks` takes them.

    Only ``reps``, ``root_seed`` and ``false_alarm`` change a result; the others say how it
    is computed and what the store keeps (see :func:`run_checks`).
    """

    reps: int
    root_seed: int
    false_alarm: float = DEFAULT_FALSE_ALARM
    n_jobs: int = 1
    backend: str = "loky"
    progress: bool = False
    records: bool = False
    keep_replicates: bool = True


@dataclass(frozen=True)
class RunHooks:
    """The callbacks of a run, each optional (see :func:`run_checks`)."""

    on_block: Callable | None = None
    heartbeat: Callable | None = None
    on_estimate: Callable | None = None
    on_result: Callable | None = None


def check_run_options(options: RunOptions) -> None:
    """Refuse a false-alarm rate outside (0, 1), or dropping replicates without records."""
    false_alarm = options.false_alarm
    if isinstance(false_alarm, bool) or not (0 < false_alarm < 1):
        raise ValueError(f"false_alarm must lie in (0, 1), got {false_alarm!r}")
    if not options.records and not options.keep_replicates:
        raise ValueError("keep_replicates=False needs records=True (the results must be kept)")


def check_run_fits(experiments, options: RunOptions, what: str, evaluators: int = 1) -> None:
    """Refuse a bad ``reps``, or experiments whose blocks cannot fit, before any block.

    What the workers hold at once must fit: ``n_jobs`` blocks, and each cell's ``reps``
    outcomes when it is evaluated, in each of ``evaluators`` processes at once. ``what``
    starts the memory refusal's message.
    """
    n_blocks_for(options.reps)  # reps itself first (a positive integer, at most the per-cell cap)
    check_experiments_fit(
        experiments, reps=options.reps, n_jobs=options.n_jobs, what=what, evaluators=evaluators
    )


#: Store meta key of the inputs of a check's latest record (names what changed on a rerun).
_INPUTS = "record_inputs:"


@dataclass(frozen=True)
class _Records:
    """What a run read from the store's records (nothing, without ``records``).

    ``keys`` and ``inputs`` are every check's result key and inputs (by index), ``found``
    the results read back, ``damaged`` the records that failed their digest or could not
    be rebuilt, ``changed`` the ``(check id, what changed)`` of checks recomputed.
    """

    keys: dict = field(default_factory=dict)
    inputs: dict = field(default_factory=dict)
    found: dict = field(default_factory=dict)
    damaged: int = 0
    changed: tuple = ()


def _read_records(checks, store, options: RunOptions) -> _Records:
    """Every check's result key and inputs, and the results its records in ``store`` give."""
    keys, inputs, found, unreadable, changed = {}, {}, {}, 0, []
    before = len(store.damaged)
    for i, check in enumerate(checks):
        inputs[i] = result_inputs(check, options.reps, options.root_seed, options.false_alarm)
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
    damaged = len(store.damaged) - before + unreadable
    return _Records(keys, inputs, found, damaged, tuple(changed))


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
    options = RunOptions(
        reps=reps,
        root_seed=root_seed,
        false_alarm=false_alarm,
        n_jobs=n_jobs,
        backend=backend,
        progress=progress,
        records=records,
        keep_replicates=keep_replicates,
    )
    check_run_options(options)
    hooks = RunHooks(on_block, heartbeat, on_estimate, on_result)
    run = _Run.start(list(checks), store, options, hooks)
    # the main process evaluates too where some checks stay there (a user's guarantee)
    held = run.evaluating_processes() + (run.evaluated_here() > 0)
    check_run_fits(run.experiments_todo(), options, what="the run", evaluators=max(1, held))
    return run.finish()


def run_validated(checks, store, options: RunOptions, hooks: RunHooks | None = None) -> RunResult:
    """:func:`run_checks` for a caller that has validated ``options`` and sized the run.

    :func:`calcheck.verify` checks its arguments before it opens its store (the memory
    refusal then names ``verify``); nothing is checked a second time here.
    """
    return _Run.start(list(checks), store, options, RunHooks() if hooks is None else hooks).finish()


class _Run:
    """A run of checks: each check is evaluated once every experiment it reads is stored.

    With ``records``, an evaluated result is recorded at once and, without
    ``keep_replicates``, an experiment's blocks are dropped once every check of the run
    that reads it has its record. Where :func:`~.evaluation.evaluation_processes` gives
    processes, the checks are evaluated there and their results collected after each
    commit of blocks (:meth:`collect`).
    """

    def __init__(self, checks, store, options: RunOptions, hooks: RunHooks, records: _Records):
        self.checks, self.store, self.options, self.hooks = checks, store, options, hooks
        self.records = records
        self.results = dict(records.found)
        self.todo = [i for i in range(len(checks)) if i not in self.results]
        # the experiments each check still waits for, and the checks that read each one
        self.waiting = {i: {e.key for e in checks[i].simulations()} for i in self.todo}
        self.readers: dict[str, set] = {}
        self.stamps = {}
        for i in self.todo:
            for e in checks[i].simulations():
                self.readers.setdefault(e.key, set()).add(i)
                self.stamps[e.key] = e.code_stamp
        self.dropped = 0
        self.started: set = set()  # checks evaluated, or handed to the evaluations
        self.evaluations = None

    @classmethod
    def start(cls, checks, store, options: RunOptions, hooks: RunHooks) -> _Run:
        """Read the records (with ``records``) and hand each result found to ``on_result``."""
        records = _read_records(checks, store, options) if options.records else _Records()
        if hooks.on_result is not None:
            for i in sorted(records.found):
                hooks.on_result(i, records.found[i])
        return cls(checks, store, options, hooks, records)

    def experiments_todo(self):
        """The experiments of the checks left to evaluate, once each."""
        checks = self.checks
        return {e.key: e for i in self.todo for e in checks[i].simulations()}.values()

    def evaluate(self, i) -> None:
        """Evaluate check ``i`` (here, or hand it to the evaluation processes)."""
        self.started.add(i)
        if self.evaluations is not None and evaluable_beside(self.checks[i]):
            self.evaluations.submit(i, self.checks[i])
            return
        options = self.options
        result = self.checks[i].evaluate(
            self.store, options.reps, options.root_seed, options.false_alarm
        )
        self.keep(i, result)

    def keep(self, i, result, text: str | None = None) -> None:
        """Check ``i``'s result: record it and drop the blocks no check of the run needs.

        ``text`` is its record's text where an evaluation process sent it (the result is
        its decoding).
        """
        checks, store, options = self.checks, self.store, self.options
        self.results[i] = result
        if self.hooks.on_result is not None:
            self.hooks.on_result(i, result)
        if not options.records:
            return
        text = encode_result(result) if text is None else text
        store.put_result(self.records.keys[i], checks[i].id, text)
        store.set_meta(_INPUTS + checks[i].id, self.records.inputs[i])
        if options.keep_replicates:
            return
        for key in {e.key for e in checks[i].simulations()}:
            if all(j in self.results for j in self.readers[key]):
                self.dropped += store.drop_blocks(options.root_seed, key, self.stamps[key])

    def collect(self, wait: bool = False) -> None:
        """Keep the results the evaluation processes have finished (all of them: ``wait``)."""
        evaluations = self.evaluations
        if evaluations is None:
            return
        while True:
            for i, text in evaluations.finished(wait=wait):
                self.keep(i, decode_result(text, self.checks[i]), text)
            if not wait or not evaluations.pending:
                return

    def cell_done(self, key) -> None:
        """Every block of experiment ``key`` is stored: evaluate the checks it completes."""
        for i in sorted(self.readers.get(key, ())):
            self.waiting[i].discard(key)
            if not self.waiting[i] and i not in self.started:
                self.evaluate(i)
        self.collect()

    def heartbeat(self, done, total, work_done) -> None:
        """After each commit of blocks: keep the results finished, then the run's heartbeat."""
        self.collect()
        if self.hooks.heartbeat is not None:
            self.hooks.heartbeat(done, total, work_done)

    def evaluating_processes(self) -> int:
        """Processes that will evaluate this run's checks beside the workers (0: none)."""
        options = self.options
        processes = evaluation_processes(
            options.n_jobs, options.backend, self.store, options.records
        )
        beside = sum(evaluable_beside(self.checks[i]) for i in self.todo) if processes else 0
        return min(processes, beside)

    def evaluated_here(self) -> int:
        """Checks left that the main process evaluates itself."""
        if not self.evaluating_processes():
            return len(self.todo)
        return sum(not evaluable_beside(self.checks[i]) for i in self.todo)

    def finish(self) -> RunResult:
        """Simulate what is missing, evaluate every check left, and return the results."""
        options = self.options
        processes = self.evaluating_processes()
        if processes:
            self.evaluations = Evaluations(
                processes, self.store.path, options.reps, options.root_seed, options.false_alarm
            )
        try:
            stats = self.simulate_and_evaluate()
        except BaseException:
            if self.evaluations is not None:  # their work in flight is not wanted: stop now
                self.evaluations.close(kill=True)
            raise
        if self.evaluations is not None:
            self.evaluations.close()
        if self.dropped:
            self.store.compact()
        ordered = [self.results[i] for i in range(len(self.checks))]
        records, evaluations = self.records, self.evaluations
        if evaluations is not None:
            logger.info(
                "%d checks evaluated in %d processes beside the workers (%.1f CPU-s)",
                evaluations.submitted,
                evaluations.pool.processes,
                evaluations.cpu_seconds,
            )
        return RunResult(
            ordered,
            stats,
            len(records.found),
            self.dropped,
            records.damaged,
            records.changed,
            0 if evaluations is None else evaluations.pool.processes,
            0.0 if evaluations is None else evaluations.cpu_seconds,
        )

    def simulate_and_evaluate(self) -> RunStats:
        """The engine's run, each check evaluated as its experiments complete (records)."""
        options, hooks, checks = self.options, self.hooks, self.checks
        stats = run_experiments(
            [e for i in _sharing_groups(self.todo, checks) for e in checks[i].simulations()],
            options.reps,
            options.root_seed,
            self.store,
            n_jobs=options.n_jobs,
            backend=options.backend,
            progress=options.progress,
            on_block=hooks.on_block,
            heartbeat=self.heartbeat,
            on_estimate=hooks.on_estimate,
            on_cell_done=self.cell_done if options.records else None,
        )
        for i in self.todo:
            if i not in self.started:
                self.evaluate(i)
        self.collect(wait=True)
        return stats
