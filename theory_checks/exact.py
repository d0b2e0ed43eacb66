"""Exact coverage of a guarantee at constant eta, beside its Monte Carlo check.

Where eta is constant (every law with ``E[Y | S] = eta``), the label sums of uniform-mass
bins are independent binomials given the bin counts (gr21 Lemma 2), so the probability of
the conditional or marginal event is a finite sum (:mod:`calcheck.simulations.exact_coverage`).
At eta = 1/2 that is the worst case of every Hoeffding step, so the exact failure rate is
what the guarantee must survive on any law of that method. :func:`exact_coverage` takes a
guarantee (a paper's or one of :func:`calcheck.define_guarantee`), evaluates its bound and
returns the exact probability with everything it was computed on. The same exact values
decide the cells of every check, study and ``verify`` call where they apply, with the Monte
Carlo beside them as a cross-check (:mod:`calcheck.theory_checks.exact_evidence`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from calcheck.bounds import registry
from calcheck.simulations.exact_coverage import exact_coverage as _exact_coverage

from .events import BoundRule
from .export import Exportable
from .search import EXACT_WORST_CASE, exact_worst_case
from .user import guarantee_id

__all__ = ["ExactCoverage", "exact_coverage"]


@dataclass(frozen=True)
class ExactCoverage(Exportable):
    """The exact probability of a guarantee's event at constant eta.

    Attributes
    ----------
    guarantee : str
    n, n_bins : int
    alpha : float
    eta : float
        The constant ``E[Y | S]`` (any score law).
    eps : float
        The guarantee's bound at ``(n, n_bins, alpha)``.
    coverage : float
        Exact probability of the event (conditional: every bin within eps; marginal: a
        fresh test point within eps).
    claimed : float
        ``1 - alpha``.
    scheme, event : str
        The binning scheme and event of :func:`calcheck.simulations.exact_coverage.exact_coverage`.
    holds : bool
        ``coverage >= claimed``.
    """

    guarantee: str
    n: int
    n_bins: int
    alpha: float
    eta: float
    eps: float
    coverage: float
    claimed: float
    scheme: str
    event: str
    holds: bool = field(init=False)

    def __post_init__(self):
        object.__setattr__(self, "holds", bool(self.coverage >= self.claimed))

    @property
    def failure(self) -> float:
        """``1 - coverage``: the exact failure rate."""
        return 1.0 - self.coverage


def exact_coverage(guarantee, *, n: int, n_bins: int, alpha: float, eta: float = 0.5):
    """Exact coverage of a guarantee's event at constant eta (no Monte Carlo).

    Parameters
    ----------
    guarantee : str or DefinedGuarantee
        A paper's guarantee whose worst case is eta = 1/2 (gr21 Theorems 3-4 and Corollary
        1, nch14 Theorem 3.1 and eq. (9)), or a user's guarantee on method ``"umd"``,
        ``"zadrozny_elkan"`` or ``"randomized_umd"`` with event ``"conditional"`` or
        ``"marginal"``.
    n, n_bins : int
    alpha : float
        Miscoverage in (0, 1); the bound is evaluated at it.
    eta : float, default 0.5
        The constant conditional mean, in (0, 1).

    Returns
    -------
    ExactCoverage

    Raises
    ------
    ValueError
        For a guarantee whose event has no exact coverage here (the message lists where it
        applies), or bad n, n_bins, alpha, eta.

    Examples
    --------
    gr21 Theorem 3 at eta = 1/2, its worst case: the exact coverage of the stated radius.

    >>> from calcheck import exact_coverage
    >>> res = exact_coverage("gr21.thm3", n=1000, n_bins=10, alpha=0.1)
    >>> round(res.eps, 4), round(res.coverage, 4), res.claimed, res.holds
    (0.1636, 0.9885, 0.9, True)
    """
    gid = guarantee_id(guarantee)
    registry.get(gid)
    worst = exact_worst_case(gid)
    if worst is None:
        raise ValueError(
            f"exact coverage does not apply to {gid!r}: it needs uniform-mass binning with a "
            f"conditional or marginal event (paper guarantees: {sorted(EXACT_WORST_CASE)}, or "
            "a calcheck.define_guarantee on method 'umd', 'zadrozny_elkan' or "
            "'randomized_umd' whose bound asks for no data keyword: a radius computed from "
            "each replicate's data has no exact route)"
        )
    if isinstance(alpha, bool) or not isinstance(alpha, int | float) or not (0 < alpha < 1):
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    scheme, event = worst
    symbols = {"n": n, "n_bins": n_bins, "delta": 0.0}
    eps = float(BoundRule().radius(gid, symbols, float(alpha)))
    coverage = float(_exact_coverage(n, n_bins, eta, eps, event=event, scheme=scheme))
    return ExactCoverage(
        gid, int(n), int(n_bins), float(alpha), float(eta), eps, coverage, 1.0 - alpha, scheme,
        event,
    )  # fmt: skip
