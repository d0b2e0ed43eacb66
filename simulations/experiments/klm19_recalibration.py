"""Recalibration experiment for Kumar, Liang & Ma (2019): exact CE^2 of fitted calibrators.

One parameter point (law, B, target eps^2) on a geometric grid of recalibration sizes n;
at each n, every replicate draws n points and fits, on the same data:

``sb``         scaling-binning as the paper writes it (T1/T2/T3 thirds, squared-loss Platt),
``sb_log``     the same with log-loss Platt (the paper's experiments "fit a sigmoid"),
``sb_nosplit`` log-loss Platt, bins and means on all n points (the authors' code),
``hist``       histogram binning (uniform-mass bins on all n points, label means:
               :class:`~calcheck.simulations.calibrators.binning.ZadroznyElkanBinning`),
``platt``      log-loss Platt scaling on all n points (a continuous map),

and records each map's exact CE^2 and MSE (:mod:`calcheck.simulations.metrics.recalibration`; no
Monte Carlo truth). Outcomes have shape ``(R, G)``, one column per n, with independent
draws per column, as the rate checks need (:mod:`calcheck.theory_checks.series.rates`).

References
----------
Kumar, A., Liang, P. and Ma, T. (2019). Verified uncertainty calibration. NeurIPS.
Sec. 4.1 (the calibrator), Theorem 4.1, Sec. 4.3 and the informal rates of Sec. 4.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..calibrators.edges import uniform_mass_edge_ranks
from ..calibrators.scaling_binning import bin_platt_values, platt_fit_batch
from ..laws.recalibration import RecalibrationLaw, logit
from ..metrics.recalibration import (
    binned_map_truth,
    binned_map_truth_both,
    min_platt_ce_sq,
    platt_truth,
)
from ..validation import check_n_grid
from .base import BLOCK_REPS, Experiment, Outcome

__all__ = [
    "METHODS",
    "RecalibrationBenchResult",
    "RecalibrationExperiment",
    "RecalibrationGridOutcome",
    "benchmark_recalibration_cell",
    "fit_all",
    "smallest_thirds_size",
]

#: Calibrators fitted in every replicate (outcome fields ``<method>`` and ``mse_<method>``).
METHODS = ("sb", "sb_log", "sb_nosplit", "hist", "platt")


@dataclass(frozen=True)
class RecalibrationGridOutcome(Outcome):
    """Exact CE^2 and MSE of each method's fitted map, shape ``(R, G)``.

    ``hist_bins`` is histogram binning's CE^2 with every bin its own level set (tied label
    means not merged): the CE of the binning, which bounds that of the map from above.
    """

    sb: np.ndarray
    sb_log: np.ndarray
    sb_nosplit: np.ndarray
    hist: np.ndarray
    platt: np.ndarray
    hist_bins: np.ndarray
    mse_sb: np.ndarray
    mse_sb_log: np.ndarray
    mse_sb_nosplit: np.ndarray
    mse_hist: np.ndarray
    mse_platt: np.ndarray


@dataclass(frozen=True)
class RecalibrationExperiment(Experiment):
    """Fit the calibrators of :data:`METHODS` on n points of ``law``, for every n of a grid.

    Parameters
    ----------
    law : RecalibrationLaw
    n_bins : int
        B (bins of every binning method).
    n_grid : tuple of int
        Recalibration sizes, each at least :func:`smallest_thirds_size` (B points in T2).
    eps_sq : float or None
        The target eps^2 of Theorem 4.1 at this point (only reported in ``symbols``: the
        rate checks read it; it does not change the simulation).
    """

    law: RecalibrationLaw
    n_bins: int
    n_grid: tuple[int, ...]
    eps_sq: float | None = None

    accepts: ClassVar[tuple[str, ...]] = ("recalibration",)
    outcome_type: ClassVar[type] = RecalibrationGridOutcome

    def __post_init__(self):
        self._check_law(self.law)
        object.__setattr__(self, "n_grid", check_n_grid(self.n_grid, minimum=self.n_min))
        if self.eps_sq is not None and not 0 < self.eps_sq < 1:
            raise ValueError(f"eps_sq must lie in (0, 1), got {self.eps_sq!r}")

    n = property(lambda self: self.n_grid[-1])
    bins = property(lambda self: self.n_bins)

    @property
    def n_min(self) -> int:
        """Smallest n the thirds split accepts: B points in T2 (and n >= 2B for ``hist``)."""
        return smallest_thirds_size(self.n_bins)

    cost = property(lambda self: 60 * sum(self.n_grid))
    #: one n of the grid at a time: about 7 arrays of n x reps at its largest (tracemalloc)
    memory_points = property(lambda self: max(self.n_grid))

    def label(self) -> str:
        """Readable one-line identification."""
        eps = "" if self.eps_sq is None else f"/eps^2={self.eps_sq:g}"
        return (
            f"Recalibration/{self.law.name}/B={self.n_bins}{eps}/"
            f"n={self.n_grid[0]}..{self.n_grid[-1]}"
        )

    def symbols(self, outcome) -> dict:
        """``n_bins``, ``eps_sq``, the grid and ``min_ce_sq`` = min over Platt's family."""
        return {
            "n_bins": self.n_bins,
            "eps_sq": self.eps_sq,
            "n_grid": self.n_grid,
            "min_ce_sq": min_platt_ce_sq(self.law)[0],
            "n_min": self.n_min,
        }

    def simulate(self, rng, reps):
        """``reps`` replicates at every n of the grid (independent draws per n)."""
        shape = (reps, len(self.n_grid))
        out = {k: np.empty(shape) for k in RecalibrationGridOutcome.__dataclass_fields__}
        for j, n in enumerate(self.n_grid):
            z, x, y = self.law.sample_logits(n, reps, rng)
            fits = fit_all(self.law, z, y, self.n_bins, logits=x)
            for name in METHODS:
                out[name][:, j], out[f"mse_{name}"][:, j] = fits[name]
            out["hist_bins"][:, j] = fits["hist_bins"][0]
        return RecalibrationGridOutcome(**out)


def smallest_thirds_size(n_bins: int) -> int:
    """Smallest n whose thirds split leaves ``n_bins`` points to T2 (and >= 2 to T1)."""
    n = max(3 * n_bins - 2, 6)
    while (n - n // 3) // 2 < n_bins:
        n += 1
    return n


def _binned_truth(law, fit):
    z_edges = fit.z_edges()
    return binned_map_truth(law, z_edges[:, :-1], z_edges[:, 1:], fit.values)


def fit_all(law, z, y, n_bins, *, logits=None) -> dict:
    """Exact ``(ce_sq, mse)`` per method of :data:`METHODS` (and ``hist_bins``).

    ``logits``: ``logit(z)`` if the caller has it (sampling computes it for q).
    """
    t1 = slice(0, z.shape[1] // 3)  # T1 of the thirds split
    x = logit(z) if logits is None else logits
    log_t1 = platt_fit_batch(None, y[:, t1], loss="log", logits=x[:, t1])
    sq_t1 = platt_fit_batch(None, y[:, t1], loss="squared", start=log_t1, logits=x[:, t1])
    log_all = platt_fit_batch(None, y, loss="log", logits=x)
    out = {
        "sb": _binned_truth(law, bin_platt_values(sq_t1, x, n_bins)),
        "sb_log": _binned_truth(law, bin_platt_values(log_t1, x, n_bins)),
        "sb_nosplit": _binned_truth(law, bin_platt_values(log_all, x, n_bins, split="none")),
    }
    lower, upper, values = _hist_fit(z, y, n_bins)
    # the outer edges of the binning batch are 0 and 1; the law clips them to its support
    ce_sq, ce_sq_bins, mse = binned_map_truth_both(law, lower, upper, values)
    out["hist"], out["hist_bins"] = (ce_sq, mse), (ce_sq_bins, mse)
    out["platt"] = platt_truth(law, log_all)
    return out


def _hist_fit(z, y, n_bins):
    """Histogram binning's ``(lower_s, upper_s, values)`` for 0/1 labels ``y``.

    Bit for bit ``uniform_mass_fit_sorted(..., include_upper=True)`` on the sorted rows
    (:class:`~calcheck.simulations.calibrators.binning.ZadroznyElkanBinning`; tested equal), which
    needs the sorted scores only at the edge ranks and the labels only through their
    counts between the ranks: exact integers in any summation order, so the label counts
    are summed per segment instead of a full cumulative sum of the sorted labels.
    """
    r, n = z.shape
    if n < 2 * n_bins:
        raise ValueError(f"n must be >= 2 * n_bins, got n={n}, n_bins={n_bins}")
    ranks = uniform_mass_edge_ranks(n, n_bins)
    lo, hi = ranks[:-1], np.minimum(ranks[1:], n)  # ZE: the upper boundary point too
    order = np.argsort(z, axis=1)
    cuts = np.union1d(lo, hi)  # 0, the inner ranks, n
    csum = np.zeros((r, cuts.size))
    segments = np.add.reduceat(np.take_along_axis(y, order, axis=1), cuts[:-1], axis=1)
    np.cumsum(segments, axis=1, out=csum[:, 1:])
    counts = (hi - lo).astype(float)
    values = (csum[:, np.searchsorted(cuts, hi)] - csum[:, np.searchsorted(cuts, lo)]) / counts
    inner = np.take_along_axis(z, order[:, ranks[1:-1] - 1], axis=1)
    return np.hstack([np.zeros((r, 1)), inner]), np.hstack([inner, np.ones((r, 1))]), values


@dataclass(frozen=True)
class RecalibrationBenchResult:
    """Median seconds per replicate of a klm19 recalibration replicate and of its floor.

    The replicate draws n points and fits every method of
    :data:`calcheck.simulations.experiments.klm19_recalibration.METHODS` (three Platt fits,
    two binnings) with their exact CE^2 and MSE; the floor draws the same data and fits one
    log-loss Platt map to all of it, by the same batched Newton method.
    """

    n: int
    n_bins: int
    law: str
    rounds: int
    seconds_per_replicate: float
    floor_seconds_per_replicate: float
    ratio_to_floor: float


def benchmark_recalibration_cell(n=10_000, n_bins=10, *, rounds=5, seed=0):
    """Time one block of klm19 recalibration replicates against draw + one Platt fit.

    Parameters
    ----------
    n : int
        Recalibration points per replicate (at least the thirds split's minimum for
        ``n_bins``).
    n_bins : int
    rounds : int
        Medians over this many interleaved rounds of ``BLOCK_REPS`` replicates each.
    seed : int

    Returns
    -------
    RecalibrationBenchResult
    """
    import time

    from ..engine import simulate_block
    from ..laws.recalibration import platt_law

    if rounds < 1:
        raise ValueError(f"rounds must be >= 1, got {rounds!r}")
    if n < smallest_thirds_size(n_bins):
        raise ValueError(
            f"n must be >= {smallest_thirds_size(n_bins)} for n_bins={n_bins}, got {n!r}"
        )
    law = platt_law()
    cell = RecalibrationExperiment(law, n_bins, (n,))
    rng = np.random.default_rng(seed)

    def floor():
        _, x, y = law.sample_logits(n, BLOCK_REPS, rng)
        platt_fit_batch(None, y, loss="log", logits=x)

    simulate_block(cell, seed, 0)  # warm-up
    times = {"full": [], "floor": []}
    for k in range(rounds):
        for name, work in (("full", lambda k=k: simulate_block(cell, seed, k)), ("floor", floor)):
            t0 = time.perf_counter()
            work()
            times[name].append(time.perf_counter() - t0)
    f, a = (float(np.median(times[k])) / BLOCK_REPS for k in ("full", "floor"))
    return RecalibrationBenchResult(n, n_bins, law.name, rounds, f, a, f / a)
