"""A radius per bin: how events read a bound that returns one radius per bin ``(R, B)``.

A data-dependent bound (``calcheck.define_guarantee`` with the data keywords of
:data:`calcheck.theory_checks.checks.methods.DATA_KEYWORDS`) may return a radius per bin. The
conditional event asks every output within its radius and the marginal one a fresh test point
within the radius of its bin; bins merged into one output (equal predictions) take the largest
of their radii
(:meth:`~calcheck.simulations.experiments.binning_data.BinDataOutcome.output_radius`).
"""

from __future__ import annotations

import numpy as np

__all__ = ["broadcast_radius", "output_radius", "test_bin"]


def broadcast_radius(radius, shape, statistic: str) -> np.ndarray:
    """The radius broadcast to the statistic's shape; a per-bin radius where none fits refused."""
    r = np.asarray(radius, dtype=float)
    try:
        return np.broadcast_to(r, shape)
    except ValueError:
        raise ValueError(
            f"a radius of shape {r.shape} does not fit the statistic {statistic!r} of shape "
            f"{shape}: a radius per bin (R, B) is defined for the conditional and marginal "
            "events only; for this event return one radius per replicate (R,) or a number"
        ) from None


def output_radius(outcome, radius) -> np.ndarray:
    """A per-bin radius ``(R, B)`` per output (merged bins: their largest; see the outcome)."""
    err = np.asarray(outcome.error)
    r = np.asarray(radius, dtype=float)
    if r.ndim != 2 or r.shape[0] not in (1, err.shape[0]) or r.shape[1] != err.shape[1]:
        raise ValueError(
            f"a radius per bin must have shape {err.shape} (replicates, bins), got {r.shape}"
        )
    merge = getattr(outcome, "output_radius", None)
    return merge(r) if merge is not None else np.broadcast_to(r, err.shape)


def test_bin(outcome) -> np.ndarray:
    """The bin of the fresh test point (``test_u[:, 0]`` and the exact masses), shape ``(R,)``."""
    cum = np.cumsum(outcome.mass, axis=1)
    cum /= cum[:, -1:]
    return np.minimum((cum < outcome.test_u[:, :1]).sum(axis=1), outcome.mass.shape[1] - 1)
