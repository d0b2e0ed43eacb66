"""gr22 App. G checks: Algorithm 10's bin occupancy (projection histogram binning).

Gupta, C. and Ramdas, A. (2022). ICLR. App. G.3: "each bin contains at least
floor((n+1)/B) - 1 many points in its interior", whatever the unit vectors q. An identity
on every calibration set without ties among the projections (claim "one"), run on
Dirichlet scores with the paper's cyclic directions and with random ones. The fixed
binnings of App. G.1-G.2 (Sierpinski and grid counts, volumes, Propositions 2-3) are
exact facts of fixed partitions, checked by unit tests instead
(``tests/papers/test_gr22_simplex_bins.py``).

Controls: the bound without its ``- 1`` (bins 1..B-1 hold exactly ``c - 1``, so it fails on
every replicate) and, as a dropped hypothesis, atomic scores (ties: a cut removes more
than c points and a later bin is left short).
"""

from __future__ import annotations

from calcheck.simulations.experiments.gr22_canonical import Alg10OccupancyExperiment

from ..checks.check import Check
from ..checks.events import AtLeast, BoundRule

__all__ = ["REFUSED", "checks"]

_GID = "gr22.alg10.occupancy"
_WITHOUT_MINUS_ONE = BoundRule(
    "without_minus_one",
    function=lambda s, alpha: (s["n"] + 1) // s["n_bins"],
    description="floor((n+1)/B) interior points per bin (the boundary point counted)",
)

#: Guarantees whose law is fixed by the check itself, with the reason.
REFUSED = {
    _GID: "a statement about Algorithm 10 on any tie-free calibration set: the check draws "
    "its own continuous scores (labels play no part)",
}


def checks(full: bool, alphas) -> list[Check]:
    """Algorithm 10's occupancy check and its controls (a few seconds at the quick budget)."""
    sizes = ((200, 10, 3), (101, 7, 4)) if not full else ((200, 10, 3), (101, 7, 4), (1000, 27, 3))
    exps = tuple(
        Alg10OccupancyExperiment(n, b, L, directions, concentration=a)
        for n, b, L in sizes
        for directions, a in (("cyclic", 1.0), ("random", 0.5))
    )
    event = AtLeast("min_interior")
    return [
        Check(
            _GID,
            _GID,
            exps,
            event,
            alphas,
            "one",
            description="projection HB (Algorithm 10), Dirichlet scores, cyclic -e_l and "
            "random unit q: every bin holds >= floor((n+1)/B) - 1 interior points",
        ),
        Check(
            f"{_GID}.control.without_minus_one",
            _GID,
            exps[:1],
            event,
            alphas,
            "one",
            "violated",
            _WITHOUT_MINUS_ONE,
            "negative control: floor((n+1)/B) in place of floor((n+1)/B) - 1",
        ),
        Check(
            f"{_GID}.control.atoms",
            _GID,
            (Alg10OccupancyExperiment(200, 10, 3, "cyclic", "atoms"),),
            event,
            alphas,
            "one",
            "violated",
            description="dropped hypothesis: 5 atomic score vectors (ties among the "
            "projections), where a cut removes more than c points",
            role="hypothesis",
        ),
    ]
