"""Exact coverage of a guarantee at constant eta, its certificate over every law, its tightness.

Where eta is constant (every law with ``E[Y | S] = eta``), the label sums of uniform-mass
bins are independent binomials given the bin counts (gr21 Lemma 2), so the probability of
the conditional or marginal event is a finite sum (:mod:`calcheck.simulations.exact_coverage`,
and :mod:`calcheck.simulations.radius_coverage` for a radius read off each bin's data). The
same reduction, with each bin's mean left free, gives a lower bound over **every** law at
the same sizes (:mod:`calcheck.simulations.certified_coverage`): the certified coverage,
which is what a guarantee must survive; no single eta is the worst law (at n = 200, B = 10,
alpha = 0.05, gr21 Theorem 3's exact coverage is 0.99891 at eta = 1/2 and 0.99527 at
eta = 0.392). :func:`exact_coverage` returns both with everything they were computed on;
:func:`critical_factor` the smallest multiple of the bound that still reaches ``1 - alpha``
(the bound's tightness, a number a regression test can pin: a constant shrunk while the bound
stays valid moves it). The same values decide the cells of every check, study and ``verify``
call where they apply (:mod:`calcheck.theory_checks.checks.exact_evidence`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from calcheck.bounds import registry
from calcheck.simulations.certified_coverage import certified_bins, certified_coverage
from calcheck.simulations.exact_coverage import exact_coverage as _exact_coverage
from calcheck.simulations.laws import LAWS
from calcheck.simulations.radius_coverage import exact_radius_coverage

from ..catalog import studiable
from ..catalog.exact_routes import EXACT_WORST_CASE
from ..checks.events import BoundRule
from ..checks.exact_evidence import certified_route
from ..checks.methods import DATA_KEYWORDS
from ..results.export import Exportable
from ..user.guarantees import definition_of, guarantee_id

__all__ = [
    "ExactCoverage",
    "exact_coverage",
    "exact_worst_case",
    "merged_outputs",
    "radius_of",
]


def merged_outputs(guarantee: str) -> bool:
    """Whether the guarantee's calibrator returns bins with equal values as one output.

    Read off the guarantee's own study adapter (its method, as its checks run it) by the
    rule that decides the cells
    (:func:`calcheck.theory_checks.checks.exact_evidence.certified_route`): UMD and Zadrozny-Elkan
    merge equal outputs, randomized UMD in the delta -> 0 limit (gr21 Theorem 4, TL-HB) keeps every
    bin apart. Their marginal event is then certified only through the conditional one (``pooled``
    of :func:`calcheck.simulations.certified_coverage.certified_coverage`). True (the
    conservative answer) where no uniform-mass route applies.
    """
    definition = definition_of(guarantee)
    adapter = definition.adapter() if definition is not None else studiable().get(guarantee)
    if adapter is None or tuple(adapter.grid_keys) != ("n", "n_bins"):
        return True
    experiment = adapter.build(LAWS["uniform_half"], n=100, n_bins=10)
    route = certified_route(experiment, adapter.event)
    return True if route is None else route.pooled


def exact_worst_case(guarantee: str):
    """``(scheme, event)`` of a guarantee with a fixed radius and an exact route, or None.

    The paper guarantees of :data:`EXACT_WORST_CASE`, and a user's guarantee on a method
    with an exact scheme (uniform-mass binning) and a conditional or marginal event whose
    bound reads no data (the search's reference evaluates one radius per size).
    """
    if guarantee in EXACT_WORST_CASE:
        return EXACT_WORST_CASE[guarantee]
    definition = definition_of(guarantee)
    if (
        definition is not None
        and definition.method.exact_scheme is not None
        and definition.event in ("conditional", "marginal")
        and not set(definition.guarantee.parameters) & set(DATA_KEYWORDS)
    ):
        return definition.method.exact_scheme, definition.event
    return None


@dataclass(frozen=True)
class ExactCoverage(Exportable):
    """The exact probability of a guarantee's event at constant eta, and its certificate.

    Attributes
    ----------
    guarantee : str
    n, n_bins : int
    alpha : float
    eta : float
        The constant ``E[Y | S]`` (any score law).
    eps : float or None
        The guarantee's bound at ``(n, n_bins, alpha)``; None where the bound is a radius
        per bin computed from the bin's data (``radius`` says so).
    coverage : float
        Exact probability of the event (conditional: every bin within eps; marginal: a
        fresh test point within eps).
    claimed : float
        ``1 - alpha``.
    scheme, event : str
        The binning scheme and event of :func:`calcheck.simulations.exact_coverage.exact_coverage`.
    certified : float
        A lower bound on the event's probability over every law at ``(n, n_bins)``
        (:func:`calcheck.simulations.certified_coverage.certified_coverage`).
    radius : {"fixed", "data"}
        One radius for every bin, or one per bin from its label sum and size.
    holds : bool
        ``coverage >= claimed``.
    certified_holds : bool
        ``certified >= claimed``: the claim holds for every law at these sizes.
    """

    guarantee: str
    n: int
    n_bins: int
    alpha: float
    eta: float
    eps: float | None
    coverage: float
    claimed: float
    scheme: str
    event: str
    certified: float = float("nan")
    radius: str = "fixed"
    holds: bool = field(init=False)
    certified_holds: bool = field(init=False)

    def __post_init__(self):
        object.__setattr__(self, "holds", bool(self.coverage >= self.claimed))
        object.__setattr__(self, "certified_holds", bool(self.certified >= self.claimed))

    @property
    def failure(self) -> float:
        """``1 - coverage``: the exact failure rate."""
        return 1.0 - self.coverage


def _route(gid: str):
    worst = exact_worst_case(gid)
    definition = definition_of(gid)
    from_data = definition is not None and definition.method.exact_scheme is not None
    if worst is None and from_data and definition.event in ("conditional", "marginal"):
        worst = definition.method.exact_scheme, definition.event  # a radius from the data
    if worst is None:
        raise ValueError(
            f"exact coverage does not apply to {gid!r}: it needs uniform-mass binning with a "
            f"conditional or marginal event (paper guarantees: {sorted(EXACT_WORST_CASE)}, or "
            "a calcheck.define_guarantee on method 'umd', 'zadrozny_elkan' or "
            "'randomized_umd')"
        )
    return worst


def _alpha(alpha) -> float:
    if isinstance(alpha, bool) or not isinstance(alpha, int | float) or not (0 < alpha < 1):
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    return float(alpha)


def radius_of(guarantee, *, n: int, n_bins: int, alpha: float, scheme: str = "umd"):
    """The guarantee's radius at ``(n, n_bins, alpha)``: a float, or ``r(k, m)`` from the data.

    A bound that asks for data keywords (``counts``, ``means``, ``variances``, ``n_used``)
    is evaluated on every label sum k = 0..m_b of every bin (binary labels: the mean is k/m,
    the biased variance ``mean - mean^2``, as the simulation computes them) and returned as a
    callable ``r(k, m)``; it must depend on a bin only through its own data (bins of one size
    must agree), the hypothesis of the exact and certified routes.
    """
    gid = guarantee_id(guarantee)
    asks = set(registry.get(gid).parameters) & set(DATA_KEYWORDS)
    symbols = {"n": n, "n_bins": n_bins, "delta": 0.0}
    if not asks:
        return float(BoundRule().radius(gid, symbols, _alpha(alpha)))
    sizes = np.array([m for m, _ in certified_bins(n, n_bins, scheme)], dtype=np.int64)
    rows = int(sizes.max()) + 1
    k = np.minimum(np.arange(rows)[:, None], sizes[None, :])
    counts = np.broadcast_to(sizes, (rows, sizes.size)).copy()
    means = k / counts
    symbols.update(
        counts=counts,
        means=means,
        variances=np.maximum(means - means * means, 0.0),
        n_used=np.full(rows, int(sizes.sum())),
    )
    table = np.broadcast_to(BoundRule().radius(gid, symbols, _alpha(alpha)), counts.shape)
    return _table_radius(gid, table, sizes)


def _table_radius(gid: str, table: np.ndarray, sizes: np.ndarray):
    column = {}
    for b, m in enumerate(sizes):
        first = column.setdefault(int(m), b)
        if not np.array_equal(table[: m + 1, b], table[: m + 1, first], equal_nan=True):
            raise ValueError(
                f"the bound of {gid} gives bins of {m} labels different radii for the same "
                "label sum: the exact and certified routes need a radius of each bin's own "
                "data r(k, m)"
            )

    def radius(k, m):
        return table[np.asarray(k, dtype=np.int64), column[int(m)]]

    return radius


def exact_coverage(guarantee, *, n: int, n_bins: int, alpha: float, eta: float = 0.5):
    """Exact coverage of a guarantee's event at constant eta, with its certificate.

    Parameters
    ----------
    guarantee : str or DefinedGuarantee
        A paper's guarantee on uniform-mass binning with a conditional or marginal event
        (gr21 Theorems 3-4 and Corollary 1, nch14 Theorem 3.1 and eq. (9)), or a user's
        guarantee on method ``"umd"``, ``"zadrozny_elkan"`` or ``"randomized_umd"`` with
        event ``"conditional"`` or ``"marginal"``, whose radius may read each bin's data
        (an empirical-Bernstein radius: ``calcheck.theory_checks.running.exact.radius_of``).
    n, n_bins : int
    alpha : float
        Miscoverage in (0, 1); the bound is evaluated at it.
    eta : float, default 0.5
        The constant conditional mean, in (0, 1). No single eta is the worst law: the
        ``certified`` value is the bound over every law.

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
    gr21 Theorem 3 at eta = 1/2, and over every law at the same sizes:

    >>> from calcheck import exact_coverage
    >>> res = exact_coverage("gr21.thm3", n=1000, n_bins=10, alpha=0.1)
    >>> round(res.eps, 4), round(res.coverage, 4), res.claimed, res.holds
    (0.1636, 0.9885, 0.9, True)
    >>> round(res.certified, 4), res.certified_holds
    (0.9879, True)
    """
    gid = guarantee_id(guarantee)
    registry.get(gid)
    scheme, event = _route(gid)
    radius = radius_of(gid, n=n, n_bins=n_bins, alpha=alpha, scheme=scheme)
    if callable(radius):
        coverage = exact_radius_coverage(n, n_bins, eta, radius, event=event, scheme=scheme)
    else:
        coverage = float(_exact_coverage(n, n_bins, eta, radius, event=event, scheme=scheme))
    pooled = merged_outputs(gid)
    cert = certified_coverage(
        n, n_bins, radius, event=event, scheme=scheme, pooled=pooled, threshold=1 - alpha
    )
    return ExactCoverage(
        gid,
        int(n),
        int(n_bins),
        float(alpha),
        float(eta),
        None if callable(radius) else radius,
        coverage,
        1.0 - alpha,
        scheme,
        event,
        cert.value,
        "data" if callable(radius) else "fixed",
    )
