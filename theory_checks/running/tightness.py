r"""The tightness of a bound as a result: its critical factor f*, certified or exact.

A valid bound stays valid when its constant grows, and also when a regression shrinks it a
little while it still covers: no verdict moves. What moves is the bound's **critical factor**

.. math:: f^\ast = \min\{f > 0 : P(\text{event at } f \cdot \text{bound}) \ge 1 - \alpha\},

the smallest multiple of the bound that still holds. On the exact route (one law)
``f* <= 1`` means the bound holds there and ``1 / f*`` is how many times larger than needed
it is; above 1 it fails there. On the certified route (a lower bound over every law)
``f* <= 1`` proves the bound for every law at these sizes and ``1 / f*`` is a lower bound on
its looseness; above 1 the bound is *not certified*, which is not a failure (the
certificate is conservative where outputs merge). Where a route exists it is a number: over
every law at the sizes given (the certified coverage,
:mod:`calcheck.simulations.certified_coverage`), or on one law at constant eta (the exact
coverage). :func:`assert_tightness` pins it in a test, so a constant shrunk from 3 to 1 in an
empirical-Bernstein radius fails although the smaller radius is still valid. Elsewhere each
cell's Monte Carlo value is its claimed-level quantile of error / bound
(``CellResult.ratio_quantile``) with its order-statistic interval.
"""

from __future__ import annotations

from dataclasses import dataclass

from calcheck.bounds import registry
from calcheck.simulations.certified_coverage import certified_coverage, smallest_factor
from calcheck.simulations.radius_coverage import exact_radius_coverage

from ..results.export import Exportable
from ..user.guarantees import guarantee_id
from .exact import _alpha, _route, merged_outputs, radius_of

__all__ = ["CriticalFactor", "assert_tightness", "critical_factor"]


@dataclass(frozen=True)
class CriticalFactor(Exportable):
    """The smallest multiple of a guarantee's bound whose coverage reaches ``1 - alpha``.

    Attributes
    ----------
    guarantee : str
    n, n_bins : int
    alpha : float
    route : {"certified", "exact"}
        Over every law at these sizes, or on the laws with constant ``eta``.
    eta : float or None
        The constant eta of the exact route (None: certified).
    factor : float
        f*, to within ``tolerance`` above (the coverage at ``factor`` reaches the claim);
        ``inf`` when not even 64 times the bound does
        (``calcheck.simulations.certified_coverage.MAX_FACTOR``).
    tolerance : float
        Width of the final bisection bracket.
    """

    guarantee: str
    n: int
    n_bins: int
    alpha: float
    route: str
    eta: float | None
    factor: float
    tolerance: float

    @property
    def looseness(self) -> float:
        """``1 / f*``: how many times larger than needed the bound is (certified: at least)."""
        return 1.0 / self.factor


def _scaled(radius, f: float):
    if callable(radius):
        return lambda k, m: f * radius(k, m)
    return f * radius


def critical_factor(guarantee, *, n, n_bins, alpha, eta=None, tolerance=1e-6) -> CriticalFactor:
    """f*: the smallest multiple of the bound that still holds (see the module docstring).

    Parameters
    ----------
    guarantee : str or DefinedGuarantee
        As :func:`calcheck.exact_coverage` takes (a data radius ``r(k, m)`` included).
    n, n_bins : int
    alpha : float
        Miscoverage in (0, 1).
    eta : float, optional
        A constant eta: the exact route on those laws. Omitted: the certified route, over
        every law at ``(n, n_bins)``.
    tolerance : float, default 1e-6

    Returns
    -------
    CriticalFactor

    Examples
    --------
    gr21 Theorem 3 at n = 1000, B = 10, alpha = 0.1: 0.80 times its radius still holds on
    every law (the paper's bound is at least 1.25 times larger than needed); at eta = 1/2 0.77
    would do:

    >>> f = critical_factor("gr21.thm3", n=1000, n_bins=10, alpha=0.1)
    >>> round(f.factor, 3), f.route, round(f.looseness, 2)
    (0.803, 'certified', 1.25)
    >>> round(critical_factor("gr21.thm3", n=1000, n_bins=10, alpha=0.1, eta=0.5).factor, 3)
    0.772
    """
    gid = guarantee_id(guarantee)
    registry.get(gid)
    scheme, event = _route(gid)
    alpha = _alpha(alpha)
    radius = radius_of(gid, n=n, n_bins=n_bins, alpha=alpha, scheme=scheme)
    pooled = merged_outputs(gid)

    def covers(f: float) -> bool:
        r = _scaled(radius, f)
        if eta is None:
            value = certified_coverage(
                n, n_bins, r, event=event, scheme=scheme, pooled=pooled
            ).value
        else:
            value = exact_radius_coverage(n, n_bins, eta, r, event=event, scheme=scheme)
        return value >= 1.0 - alpha

    factor = smallest_factor(covers, _positive("tolerance", tolerance, below=1.0))
    route = "certified" if eta is None else "exact"
    at = None if eta is None else float(eta)
    return CriticalFactor(gid, int(n), int(n_bins), alpha, route, at, factor, float(tolerance))


def _positive(name: str, value, below: float = float("inf")) -> float:
    """A finite number in (0, below); ValueError naming the argument otherwise."""
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if not ok or not 0 < value < below:
        raise ValueError(f"{name} must be a number in (0, {below:g}), got {value!r}")
    return float(value)


def _above_one(route: str) -> str:
    if route == "exact":
        return "; above 1 the bound fails on this law"
    return "; above 1 the bound is not certified for every law (not a failure)"


def assert_tightness(guarantee, expected, *, n, n_bins, alpha, eta=None, rtol=1e-3):
    """Assert that the bound's critical factor f* is ``expected`` (a regression test).

    Parameters
    ----------
    guarantee : str or DefinedGuarantee
    expected : float
        The golden f* (computed once from the bound as the paper states it).
    n, n_bins, alpha, eta
        As :func:`calcheck.theory_checks.running.tightness.critical_factor`.
    rtol : float, default 1e-3
        Relative tolerance; f* is computed to 1e-6.

    Returns
    -------
    CriticalFactor

    Raises
    ------
    AssertionError
        When f* moved: a smaller f* is a larger bound than before (a constant grew), a larger
        one a smaller bound (a constant shrank; above 1 the bound fails on the exact route's
        law, or is no longer certified on the certified route).

    Examples
    --------
    >>> from calcheck.testing import assert_tightness
    >>> assert_tightness("gr21.thm3", 0.8027, n=1000, n_bins=10, alpha=0.1, rtol=1e-3).route
    'certified'
    """
    __tracebackhide__ = True
    expected = _positive("expected", expected)
    rtol = _positive("rtol", rtol, below=1.0)
    got = critical_factor(guarantee, n=n, n_bins=n_bins, alpha=alpha, eta=eta)
    if not abs(got.factor - float(expected)) <= float(rtol) * abs(float(expected)):
        where = "every law" if eta is None else f"constant eta = {eta:g}"
        moved = "a larger bound" if got.factor < expected else "a smaller bound"
        raise AssertionError(
            f"{got.guarantee}: critical factor f* = {got.factor:.6g} ({got.route}, {where}, "
            f"n={n}, B={n_bins}, alpha={alpha:g}), expected {float(expected):.6g} within "
            f"rtol {rtol:g}: {moved} than the one pinned"
            + (_above_one(got.route) if got.factor > 1 else "")
        )
    return got
