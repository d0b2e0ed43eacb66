"""calcheck.testing's named checks of one guarantee, as scikit-learn checks an estimator.

Small designs (one law, one size, 200 replicates): the whole file runs in seconds.
"""

import numpy as np
import pytest

from calcheck import define_guarantee
from calcheck.testing import CHECK_NAMES, guarantee_checks, parametrize_with_checks
from calcheck.theory_checks.user.guarantees import _forget_all

SMALL = {"laws": "uniform_half", "grid": {"n": 1000, "n_bins": 10}, "reps": 200}


def thm3_radius(n, n_bins, alpha):
    """gr21 Theorem 3's radius written by hand: a correct bound."""
    return np.sqrt(np.log(2 * n_bins / alpha) / (2 * (np.floor(n / n_bins) - 1)))


def half_radius(n, n_bins, alpha):
    """Half of it: too small (exact coverage 0.33 at eta = 1/2, claimed 0.9)."""
    return 0.5 * thm3_radius(n, n_bins, alpha)


CORRECT = define_guarantee("testing_checks.thm3", thm3_radius, method="umd", event="conditional")
TOO_SMALL = define_guarantee("testing_checks.half", half_radius, method="umd", event="conditional")


@parametrize_with_checks(["gr21.thm3", CORRECT], **SMALL)
def test_a_correct_bound_passes_every_check(guarantee, check):
    check()


@parametrize_with_checks(
    [TOO_SMALL],
    expected_failures={
        "coverage_holds": "the radius is half of gr21 Theorem 3's",
        "testing_checks.half:critical_factor_at_most_one": "f* = 1.54 at eta = 1/2",
    },
    **SMALL,
)
def test_a_bound_too_small_fails_where_expected(guarantee, check):
    check()


# The decorators above registered the two guarantees while this module was collected; every
# module collected after it (tests parametrized over the registry) must see the catalog alone.
# Each test here re-registers them on use (DefinedGuarantee.ensure_registered).
_forget_all()


def test_checks_are_named_and_ordered():
    checks = list(guarantee_checks("gr21.thm3", **SMALL))
    assert [c.name for c in checks] == list(CHECK_NAMES)
    assert checks[1].id == "gr21.thm3-coverage_holds"
    assert checks[1].guarantee == "gr21.thm3"


def test_coverage_holds_raises_a_one_line_assertion_for_a_bound_too_small():
    checks = {c.name: c for c in guarantee_checks(TOO_SMALL, **SMALL)}
    with pytest.raises(AssertionError, match=r"expected consistent but is violated") as info:
        checks["coverage_holds"]()
    assert "\n" not in str(info.value)
    with pytest.raises(AssertionError, match=r"critical factor f\* = 1\.5"):
        checks["critical_factor_at_most_one"]()
    checks["sharper_bound_caught"]()  # a bound smaller still is caught too


def test_the_decorator_marks_expected_failures_strictly_with_their_reason():
    mark = parametrize_with_checks(
        [TOO_SMALL], expected_failures={"coverage_holds": "too small"}, **SMALL
    ).mark
    ids = [param.id for param in mark.args[1]]
    assert ids == [f"testing_checks.half-{name}" for name in CHECK_NAMES]
    marked = {p.id: p.marks[0].kwargs for p in mark.args[1] if p.marks}
    assert marked == {
        "testing_checks.half-coverage_holds": {
            "reason": "too small",
            "strict": True,
            "raises": AssertionError,
        }
    }


@pytest.mark.parametrize("key", ["coverage_hold", "gr21.thm3:coverage_holds"])
def test_an_unknown_expected_failure_is_refused_by_name(key):
    with pytest.raises(ValueError, match=f"expected_failures names '{key}'"):
        parametrize_with_checks([TOO_SMALL], expected_failures={key: "why"}, **SMALL)


def test_a_refused_guarantee_yields_no_check_and_an_unknown_one_raises():
    assert list(guarantee_checks("gpr20.thm3")) == []  # its law is fixed by its theorem
    with pytest.raises(ValueError, match=r"gr21\.nothing"):
        list(guarantee_checks("gr21.nothing"))
