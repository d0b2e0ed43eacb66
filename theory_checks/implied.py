"""Implied checks: a check whose evidence is contained in another's on the same draws.

Two guarantee checks of one paper that read the same experiments at the same alphas with
the same claimed coverage in every cell, neither with randomness of its own (a fresh test
point, an auxiliary uniform), are compared replicate by replicate: if in every
cell each replicate where check X's event holds is one where check Y's holds too (Y's
success set contains X's -- a weaker radius on the same statistic, or a smaller statistic
against the same radius: ECE <= max error), then X consistent implies Y consistent and Y
violated implies X violated. Y's verdict adds nothing to X's: it is reported as *implied
by X* and counted apart, not as a second verified guarantee. Where the two sets are equal
the earlier check in the catalog order implies the later one.
"""

from __future__ import annotations

import numpy as np

from .roles import role_of

__all__ = ["implied_by"]


def _signature(result):
    cells = result.cells
    return tuple((c.experiment, c.alpha, c.verdict.claimed, c.verdict.trials) for c in cells)


def _contains(big, small) -> bool:
    """Every success of ``small`` is a success of ``big``, in every cell."""
    for cb, cs in zip(big.cells, small.cells, strict=True):
        if not cb.success_bits or not cs.success_bits:
            return False
        sb, ss = cb.successes(), cs.successes()
        if np.any(ss & ~sb):
            return False
    return True


def implied_by(results) -> dict:
    """Check id -> the id of the check that implies it (see the module docstring).

    Only coverage checks of role ``guarantee`` whose cells carry their successes take
    part; a check is never implied by one that is itself implied.
    """
    groups: dict = {}
    for order, r in enumerate(results):
        if getattr(r, "kind", "") != "coverage" or role_of(r.check) != "guarantee":
            continue
        if r.check.event.randomised:  # its own test point or U: no structural implication
            continue
        if not r.cells:
            continue
        paper = r.check.guarantee.split(".")[0]
        groups.setdefault((paper, _signature(r)), []).append((order, r))
    out = {}
    for members in groups.values():
        if len(members) < 2:
            continue
        for oy, y in members:
            if y.check.id in out:
                continue
            for ox, x in members:
                if x is y or x.check.id in out:
                    continue
                if _contains(y, x):
                    # equal success sets: the earlier one implies the later one only
                    if ox > oy and _contains(x, y):
                        continue
                    out[y.check.id] = x.check.id
                    break
    return out
