"""Assertions and checks for test suites of theoretical constants (pytest or unittest).

``assert_guarantee_holds`` fails when the exact binomial test flags the guarantee violated on
the law (where it holds, with probability at most ``false_alarm``, 1e-3 by default);
``assert_guarantee_violated`` when it does not (a negative control; its power is each cell's
``shortfall_90``); both state the worst cell's coverage, its Clopper-Pearson interval and the
claim. ``assert_tightness`` pins the bound's critical factor (a constant shrunk while the bound
stays valid fails it). :func:`guarantee_checks` and :func:`parametrize_with_checks` check one
guarantee as scikit-learn's ``check_estimator`` and ``parametrize_with_checks`` check an
estimator. Only the decorator needs pytest (the ``test`` extra: ``pip install "calcheck[test]"``).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

import numpy as np

from calcheck.bounds import registry
from calcheck.simulations.engine import simulate_block
from calcheck.simulations.laws import LAWS
from calcheck.theory_checks.catalog import DEFAULT_CHECK_ON, all_checks, for_law, studiable
from calcheck.theory_checks.checks.check import Check, CheckResult, StudyAdapter
from calcheck.theory_checks.running.controls import default_factor, sharper_control
from calcheck.theory_checks.running.tightness import assert_tightness, critical_factor
from calcheck.theory_checks.running.verify import verify
from calcheck.theory_checks.user.guarantees import DefinedGuarantee, definition_of, guarantee_id

__all__ = [
    "CHECK_NAMES",
    "GuaranteeCheck",
    "assert_guarantee_holds",
    "assert_guarantee_violated",
    "assert_tightness",
    "guarantee_checks",
    "parametrize_with_checks",
]

#: The checks of :func:`~calcheck.testing.guarantee_checks`, in the order they are yielded.
#: ``bound_finite``: the bound is >= 0 on the keywords verify supplies (one read off the first
#: block's data may be ``inf`` where it says nothing, e.g. an empty bin; else it is finite).
#: ``coverage_holds``: :func:`calcheck.verify` finds it consistent on ``laws`` x ``grid``.
#: ``sharper_bound_caught`` (not for an identity): the bound times a factor below 1
#: (:func:`calcheck.sharper_control`, seed ``rng + 1``) is flagged, which exposes a check
#: that cannot fail. ``critical_factor_at_most_one``, where :func:`calcheck.critical_factor`
#: applies (an exact route): f* <= 1 at constant ``eta``, at every ``(n, n_bins)``.
CHECK_NAMES = (
    "bound_finite",
    "coverage_holds",
    "sharper_bound_caught",
    "critical_factor_at_most_one",
)


def _message_lines(result: CheckResult, wanted: str) -> list[str]:
    """What was expected, the worst cell, the exact value if any: a few short lines."""
    w = result.worst_cell()
    v = w.verdict
    alpha = "" if w.alpha is None else f", alpha={w.alpha:g}"
    lines = [
        f"{result.check.guarantee} was expected {wanted} but is {result.verdict} "
        f"(false-alarm rate {result.false_alarm:g}; {result.reps} replicates in each of "
        f"{len(result.cells)} cell(s))",
        f"worst cell: {w.law} n={w.n} B={w.n_bins}{alpha}",
        f"coverage {v.coverage:.4f} [95% CP {v.ci_low:.4f}, {v.ci_high:.4f}] vs claimed "
        f"{v.claimed:.4f}; one-sided p = {v.p_value:.3g} (level {v.level:.3g} per cell)",
    ]
    if w.decided_text():
        lines.append(w.decided_text())
    return lines


def assert_guarantee_holds(guarantee_id, law, **kwargs) -> CheckResult:
    """Assert that the guarantee is consistent on ``law``.

    Arguments as :func:`calcheck.verify`.

    Returns
    -------
    CheckResult
        The result, for further assertions.

    Raises
    ------
    AssertionError
        When the check is violated (or vacuous); the message gives the worst cell's coverage,
        its Clopper-Pearson interval and the claim. Also when the check cannot fail on its
        design: its same-path mutant (the bound times 0.05, say) is not caught either, so
        "holds" would say nothing (choose a law or n where the bound is nearer tight).

    Examples
    --------
    A regression test on a constant (pytest collects ``test_*`` functions):

    >>> from calcheck.testing import assert_guarantee_holds
    >>> def test_theorem3_holds_on_a_uniform_law():
    ...     assert_guarantee_holds("gr21.thm3", "uniform_half", n=1000, n_bins=10, reps=500, rng=0)
    >>> test_theorem3_holds_on_a_uniform_law()
    """
    __tracebackhide__ = True  # pytest shows the test's line and the message, not this body
    result = verify(guarantee_id, law, **kwargs)
    if result.verdict != "consistent":
        raise AssertionError("\n".join(_message_lines(result, "consistent")))
    if result.mutant is not None and not result.mutant.caught:
        raise AssertionError(
            f"{result.check.guarantee} is consistent on this design but cannot fail on it: "
            f"its same-path mutant ({result.mutant.claim}) is not caught either "
            f"({result.mutant.detail}); choose a law, n or B where the bound is nearer tight"
        )
    return result


def assert_guarantee_violated(guarantee_id, law, **kwargs) -> CheckResult:
    """Assert that the guarantee is flagged as violated on ``law``.

    Arguments as :func:`calcheck.verify`.

    Returns
    -------
    CheckResult

    Raises
    ------
    AssertionError
        When the check is not flagged.

    Examples
    --------
    gpr20 Corollary 3 as printed fails on its counterexample law:

    >>> from calcheck.testing import assert_guarantee_violated
    >>> result = assert_guarantee_violated(
    ...     "gpr20.cor3", "cor3_counterexample", n=3000, n_bins=2, reps=1000, rng=0)
    >>> result.verdict
    'violated'
    """
    __tracebackhide__ = True
    result = verify(guarantee_id, law, expect="violated", **kwargs)
    if result.verdict != "violated":
        raise AssertionError("\n".join(_message_lines(result, "violated")))
    return result


@dataclass(frozen=True)
class GuaranteeCheck:
    """A named check (:data:`~calcheck.testing.CHECK_NAMES`) of a guarantee; call it to run it.

    ``run`` takes no argument and raises AssertionError with a one-line reason on failure.
    """

    guarantee: str
    name: str
    run: Callable[[], None] = field(repr=False, compare=False)

    @property
    def id(self) -> str:
        """``"<guarantee id>-<check name>"``: the test id :func:`parametrize_with_checks` gives."""
        return f"{self.guarantee}-{self.name}"

    def __call__(self) -> None:
        """Run the check (AssertionError with its reason when it fails)."""
        __tracebackhide__ = True
        self.run()


class _Trial:
    """One guarantee on its laws and grid: the verify run its checks share, made once."""

    def __init__(self, guarantee, laws, grid, alpha, reps, rng):
        if isinstance(rng, bool) or not isinstance(rng, int) or rng < 0:
            raise ValueError(f"rng must be a non-negative integer (a root seed), got {rng!r}")
        self.guarantee = guarantee  # the object given: a definition registers again when run
        self.laws, self.grid, self.alpha, self.reps, self.rng = laws, grid, alpha, reps, rng
        self._result = None

    def check(self) -> Check:
        """The check verify runs (its experiments, bound rule and alphas), not simulated."""
        gid = guarantee_id(self.guarantee)
        return for_law(gid, self.laws, grid=self.grid, alphas=(self.alpha,))

    def result(self) -> CheckResult:
        if self._result is None:
            run = {"alphas": self.alpha, "reps": self.reps, "rng": self.rng}
            self._result = verify(self.guarantee, self.laws, **run, **self.grid)
        return self._result


def _bound_finite(trial: _Trial) -> None:
    """The bound on the keywords verify supplies (first block): >= 0, finite where fixed."""
    check = trial.check()
    for experiment in check.experiments if check.event.uses_bound else ():
        symbols = experiment.symbols(simulate_block(experiment, trial.rng, 0))
        for alpha in check.effective_alphas():
            try:
                values = np.asarray(check.bound.radius(check.guarantee, symbols, alpha))
            except ValueError as exc:  # a define_guarantee bound refuses NaN and negatives
                raise AssertionError(str(exc).splitlines()[0]) from None
            bad = values[np.isnan(values) | (values < 0) | (np.isinf(values) & (values.ndim == 0))]
            if bad.size:
                at = "" if alpha is None else f", alpha={alpha:g}"
                raise AssertionError(
                    f"{check.guarantee}: its bound is {float(bad[0])!r} at {experiment.label()}"
                    f"{at}; a bound must be >= 0, and finite where it reads no data"
                )


def _coverage_holds(trial: _Trial) -> None:
    result = trial.result()
    if result.verdict != "consistent":
        raise AssertionError("; ".join(_message_lines(result, "consistent")))


def _sharper_caught(trial: _Trial, factor) -> None:
    result = trial.result()
    gid = result.check.guarantee
    if factor is None:
        k = result.detectable_factor
        factor = 0.0 if k is None else min(default_factor(k), 0.95)
        if factor <= 0:
            raise AssertionError(
                f"{gid}: no bound times a factor below 1 can be caught on this design "
                f"({result.reps} replicates, detectable factor {k!r}), so the check cannot "
                "fail; choose laws, n or B where the bound is nearer tight, or more reps"
            )
    control = sharper_control(result, factor=factor, rng=trial.rng + 1)
    if control.verdict != "violated":
        v = control.worst_cell().verdict
        raise AssertionError(
            f"{gid}: the stated bound times {factor:g} is not caught ({control.verdict}: "
            f"worst coverage {v.coverage:.4f} vs claimed {v.claimed:.4f}, {control.reps} "
            f"replicates, seed {trial.rng + 1}); the check could not fail for a bound that small"
        )


def _critical_factor_at_most_one(trial: _Trial, eta: float) -> None:
    for n, n_bins in itertools.product(trial.grid["n"], trial.grid["n_bins"]):
        f = critical_factor(trial.guarantee, n=n, n_bins=n_bins, alpha=trial.alpha, eta=eta)
        if f.factor > 1:
            raise AssertionError(
                f"{f.guarantee}: critical factor f* = {f.factor:.4g} > 1 at n={n}, "
                f"B={n_bins}, alpha={trial.alpha:g}, constant eta = {eta:g}: the bound fails "
                "on that law (exact, no Monte Carlo)"
            )


def _has_exact_route(trial: _Trial, eta: float) -> bool:
    """Whether :func:`calcheck.critical_factor` applies (it raises where it does not)."""
    try:
        n, n_bins = trial.grid["n"][0], trial.grid["n_bins"][0]
        critical_factor(trial.guarantee, n=n, n_bins=n_bins, alpha=trial.alpha, eta=eta)
    except (KeyError, ValueError):  # no grid of sizes, or no exact route
        return False
    return True


def _as_laws(laws) -> tuple:
    """A law, a shipped law's name, or a sequence of either, as a tuple of laws."""
    items = list(laws) if isinstance(laws, list | tuple) else [laws]
    unknown = [law for law in items if isinstance(law, str) and law not in LAWS]
    if not items or unknown:
        raise ValueError(f"laws must be laws or names of calcheck.LAWS, got {laws!r}")
    return tuple(LAWS[law] if isinstance(law, str) else law for law in items)


def _as_grid(grid) -> dict:
    if not isinstance(grid, Mapping) or not grid:
        raise ValueError(f"grid must map grid parameters to values, got {grid!r}")
    return {k: list(v) if isinstance(v, list | tuple | range) else [v] for k, v in grid.items()}


def _studied_on(gid: str, adapter: StudyAdapter):
    """``(laws, grid)`` of its own check in the catalog (None: unreadable), else the default."""
    own = [c for c in all_checks("quick") if isinstance(c, Check) and c.id == gid]
    if own:
        experiments = own[0].experiments
        try:
            laws = tuple({e.law.name: e.law for e in experiments}.values())
            grid = {k: sorted({getattr(e, k) for e in experiments}) for k in adapter.grid_keys}
        except AttributeError:
            return None
        return laws, grid
    if "binary" in adapter.families and set(adapter.grid_keys) == {"n", "n_bins"}:
        return _as_laws(list(DEFAULT_CHECK_ON["laws"])), _as_grid(DEFAULT_CHECK_ON["grid"])
    raise ValueError(
        f"laws and grid: {gid} has no check in the catalog to read them from; pass laws= and "
        f"grid= (its grid parameters: {list(adapter.grid_keys)})"
    )


def _design(gid: str, adapter: StudyAdapter, laws, grid):
    """``(laws, grid)``: as given, else the guarantee's study's (None: unreadable)."""
    studied = _studied_on(gid, adapter) if laws is None or grid is None else (None, None)
    if studied is not None:
        laws = studied[0] if laws is None else _as_laws(laws)
        return laws, studied[1] if grid is None else _as_grid(grid)
    return None


def guarantee_checks(
    guarantee, *, laws=None, grid=None, alpha=0.1, reps=500, rng=0, factor=None, eta=0.5
) -> Iterator[GuaranteeCheck]:
    """The named checks of one guarantee, as scikit-learn's ``check_estimator`` has them.

    :data:`CHECK_NAMES` says what each asserts. They share one :func:`calcheck.verify` run,
    made when the first check needs it; each raises AssertionError with a one-line reason.

    Parameters
    ----------
    guarantee : str or DefinedGuarantee
        A registered id (the catalog's, a plugin paper's) or a :func:`calcheck.define_guarantee`
        result. One not checkable on a law of your choosing (a law fixed by its theorem, a
        rate claim: ``calcheck list`` says why), or whose laws and grid are not given and
        cannot be read off its catalog check, yields no check: ``calcheck run`` checks it.
    laws : law, str or sequence of them, optional
        Default: the laws of the guarantee's own check in the catalog (``calcheck run``'s),
        else those of ``calcheck.theory_checks.catalog.DEFAULT_CHECK_ON`` (binary laws).
    grid : dict, optional
        Grid parameter -> value or values (``{"n": 1000, "n_bins": 10}``); default: every
        value of each parameter in the same check, else ``DEFAULT_CHECK_ON``'s.
    alpha : float, default 0.1
        Miscoverage.
    reps : int, default 500
        Replicates per cell (a budget a test can afford).
    rng : int, default 0
        Root seed of verify; the sharper bound runs on ``rng + 1``.
    factor : float, optional
        In (0, 1); default: 0.9 times the detectable factor down to 0.05's, at most 0.95.
    eta : float, default 0.5
        The constant eta of the exact route.

    Yields
    ------
    GuaranteeCheck
        In the order of :data:`CHECK_NAMES`.

    Raises
    ------
    ValueError
        For an unknown guarantee, bad ``laws``, ``grid`` or ``rng``, or none given for a
        guarantee of your own off binary laws.

    Examples
    --------
    >>> from calcheck.testing import guarantee_checks
    >>> checks = list(guarantee_checks(
    ...     "gr21.thm3", laws="uniform_half", grid={"n": 1000, "n_bins": 10}, reps=200))
    >>> [check.id for check in checks]
    ['gr21.thm3-bound_finite', 'gr21.thm3-coverage_holds', 'gr21.thm3-sharper_bound_caught',
     'gr21.thm3-critical_factor_at_most_one']
    >>> for check in checks:
    ...     check()  # raises AssertionError with its reason when the check fails

    The whole catalog is the same generator over every registered guarantee (slow):

    >>> from calcheck import list_guarantees
    >>> every = [c for g in list_guarantees() for c in guarantee_checks(g.id)]  # doctest: +SKIP
    """
    gid = guarantee_id(guarantee)
    definition = definition_of(gid)
    adapter = definition.adapter() if definition is not None else studiable().get(gid)
    if not isinstance(adapter, StudyAdapter):
        registry.get(gid)  # an unknown id is an error; a refused one yields nothing
        return
    design = _design(gid, adapter, laws, grid)
    if design is None:
        return
    trial = _Trial(guarantee, *design, alpha, reps, rng)
    yield GuaranteeCheck(gid, "bound_finite", lambda: _bound_finite(trial))
    yield GuaranteeCheck(gid, "coverage_holds", lambda: _coverage_holds(trial))
    if adapter.role != "identity":
        yield GuaranteeCheck(gid, "sharper_bound_caught", lambda: _sharper_caught(trial, factor))
    if _has_exact_route(trial, eta):
        yield GuaranteeCheck(
            gid, "critical_factor_at_most_one", lambda: _critical_factor_at_most_one(trial, eta)
        )


def _expected_reasons(expected_failures, checks: list[GuaranteeCheck]) -> dict[str, str]:
    """Check id -> reason; a ``"<id>:<name>"`` key overrides a bare name's reason."""
    if expected_failures is None:
        return {}
    if not isinstance(expected_failures, Mapping):
        raise ValueError(f"expected_failures must map checks to reasons, got {expected_failures!r}")
    reasons = {}
    for key in sorted(expected_failures, key=lambda k: ":" in str(k)):  # bare names first
        reason = expected_failures[key]
        if not isinstance(reason, str) or not reason.strip():
            raise ValueError(f"expected_failures[{key!r}] must be a reason (a non-empty string)")
        gid, _, name = str(key).rpartition(":")
        matched = [c for c in checks if c.name == name and gid in ("", c.guarantee)]
        if not isinstance(key, str) or not matched:
            raise ValueError(
                f"expected_failures names {key!r}, not a check of these guarantees; the "
                f"checks are {', '.join(CHECK_NAMES)}, or '<guarantee id>:<check name>'"
            )
        reasons.update({c.id: reason for c in matched})
    return reasons


def parametrize_with_checks(guarantees, *, expected_failures=None, **options):
    """A pytest decorator: the test runs once per (guarantee, check) pair.

    As scikit-learn's: the test takes ``guarantee`` (as given) and ``check`` (a
    :class:`GuaranteeCheck`) and calls ``check()``; ids read ``"gr21.thm3-coverage_holds"``.

    Parameters
    ----------
    guarantees : str, DefinedGuarantee or sequence of them
        As :func:`guarantee_checks` takes one.
    expected_failures : dict, optional
        Check name (every guarantee's) or ``"<guarantee id>:<check name>"`` -> the reason it
        fails; those cases are marked ``pytest.mark.xfail(reason=..., strict=True,
        raises=AssertionError)``: they must fail, and by their assertion.
    **options
        Keywords of :func:`guarantee_checks` (``laws``, ``grid``, ``reps``, ``rng``, ...).

    Returns
    -------
    pytest.MarkDecorator

    Raises
    ------
    ValueError
        For a key of ``expected_failures`` that names no check here, or an empty reason.

    Examples
    --------
    >>> from calcheck.testing import parametrize_with_checks
    >>> @parametrize_with_checks(
    ...     ["gr21.thm3"], laws="uniform_half", grid={"n": 1000, "n_bins": 10}, reps=200)
    ... def test_guarantee(guarantee, check):
    ...     check()

    Over the whole catalog (slow: each guarantee on its own laws and grid):

    >>> from calcheck import list_guarantees
    >>> @parametrize_with_checks([g.id for g in list_guarantees()])  # doctest: +SKIP
    ... def test_every_guarantee(guarantee, check):
    ...     check()
    """
    import pytest  # the test extra, not a dependency of calcheck

    if isinstance(guarantees, str | DefinedGuarantee):
        guarantees = [guarantees]
    pairs = [(g, c) for g in guarantees for c in guarantee_checks(g, **options)]
    reasons = _expected_reasons(expected_failures, [c for _, c in pairs])
    xfail = {
        key: pytest.mark.xfail(reason=reason, strict=True, raises=AssertionError)
        for key, reason in reasons.items()
    }
    cases = [
        pytest.param(g, c, id=c.id, marks=[xfail[c.id]] if c.id in xfail else []) for g, c in pairs
    ]
    return pytest.mark.parametrize(("guarantee", "check"), cases)
