"""gr22 checks of the joint class-wise statements (13)/(14) and of the M2B wrappers.

Gupta, C. and Ramdas, A. (2022). Top-label calibration and multiclass-to-binary reductions.
ICLR. Definition 2, eqs. (13)-(14) (catalog G15); Algorithms 5-7 (catalog G4).

* ``gr22.eq13`` / ``gr22.eq14`` are built in :mod:`.gr22` beside Theorem 2 (same CW-HB
  simulations, :class:`~simulations.experiments.gr22.ClassWiseBinningExperiment`, whose
  outcome holds every class's exact errors). Here: their extra negative controls.
  The natural control, the per-class radius without the union correction (alpha in place of
  alpha/L), is *not* flagged on any law calcheck has: its joint coverage is 0.98-1.0 at a
  claimed 0.9 (Hoeffding's slack per class dwarfs the union over classes). So the controls
  are dropping both union bounds (bins and classes: eq. 11's eps^(1) at alpha for the joint
  conditional event), k = n points per bin, and the stated radius times a factor.
"""

from __future__ import annotations

from ..check import Check
from ..events import Within, other_guarantee

__all__ = ["UNION_SHARPER", "union_controls"]

#: Sharper controls (stated radius times a factor) of the joint statements. At the quick
#: budget the (1 - alpha)-quantile of error / radius is 0.51-0.70 for eq. (13) and its 0.95
#: quantile 0.71-0.80 for eq. (14) (cw laws, n = 1000, k = 10), so these factors are flagged.
UNION_SHARPER = {"gr22.eq13": 0.5, "gr22.eq14": 0.6}

_NO_UNION = other_guarantee(
    "without_union_bound",
    "gr22.thm2.marginal",
    "the per-class marginal eps^(1) at alpha (no union over bins or classes) for eq. (14)",
)


def union_controls(cw_experiments, alphas) -> list[Check]:
    """Controls of eq. (14) beyond the catalog's ``n_in_place_of_k`` (see module doc)."""
    return [
        Check(
            "gr22.eq14.control.without_union_bound",
            "gr22.eq14",
            tuple(cw_experiments),
            Within("class_max_error"),
            alphas,
            expect="violated",
            bound=_NO_UNION,
            description="negative control: eq. (11)'s per-class marginal eps^(1) at alpha "
            "(neither union bound) for the joint conditional event",
        )
    ]
