"""Assertions for regression tests on theoretical constants (pytest or unittest).

They need no test runner themselves; pytest, which the examples use, comes with the
``test`` extra (``pip install "calcheck[test]"``).

``assert_guarantee_holds`` fails when the exact binomial test flags the guarantee as
violated on the law; ``assert_guarantee_violated`` fails when it does not (a negative
control: your wrong constant must be caught). Both state the false-alarm rate and, on
failure, the worst cell's coverage, its Clopper-Pearson interval and the claim.

Example (a pytest test)::

    from calcheck.simulations.laws import BINARY_LAWS
    from calcheck.theory_checks.running.assertions import assert_guarantee_holds

    def test_thm3_holds_on_a_platt_curve():
        assert_guarantee_holds("gr21.thm3", BINARY_LAWS["uniform_logistic"], n=1000,
                               n_bins=10, reps=1000, rng=0)

A holding guarantee fails ``assert_guarantee_holds`` with probability at most
``false_alarm`` (1e-3 by default); ``assert_guarantee_violated`` has the power the result
reports (``shortfall_90`` of each cell: the shortfall detected with probability 0.9).
"""

from __future__ import annotations

from ..checks.check import CheckResult
from .verify import verify

__all__ = ["assert_guarantee_holds", "assert_guarantee_violated"]


def _message(result: CheckResult, wanted: str) -> str:
    """At most a few short lines: what was expected, the worst cell, the exact value if any."""
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
    return "\n".join(lines)


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
        raise AssertionError(_message(result, "consistent"))
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
        raise AssertionError(_message(result, "violated"))
    return result
