"""gr22 checks of the joint class-wise statements (13)/(14) and of the M2B wrappers.

Gupta, C. and Ramdas, A. (2022). Top-label calibration and multiclass-to-binary reductions.
ICLR. Definition 2, eqs. (13)-(14) (catalog G15); Algorithms 5-7 (catalog G4).

* ``gr22.eq13`` / ``gr22.eq14`` are built in :mod:`.gr22` beside Theorem 2 (same CW-HB
  simulations, :class:`~calcheck.simulations.experiments.gr22.ClassWiseBinningExperiment`, whose
  outcome holds every class's exact errors). Here: their extra negative controls.
  The natural control, the per-class radius without the union correction (alpha in place of
  alpha/L), is *not* flagged on any law calcheck has: its joint coverage is 0.98-1.0 at a
  claimed 0.9 (Hoeffding's slack per class dwarfs the union over classes). So the controls
  are dropping both union bounds (bins and classes: eq. 11's eps^(1) at alpha for the joint
  conditional event), k = n points per bin, and the stated radius times a factor.
* ``gr22.accuracy.top_k``: the top-K-label (Algorithm 6) and top-K-confidence (Algorithm 7)
  calibrators return the base model's labels c^(1..K) on every test point (Sec. 3.2, App.
  A.1), on a law with tied scores. The labels returned are ``top_k_labels`` of the scores,
  compared with the same function, so the check is an *identity* (role ``identity``,
  checked exactly by the hand-computed labels of ``tests/simulations/test_m2b.py`` and
  ``test_experiments_gr22.py``; no control). The labels re-ranked by the calibrated h^(k)
  (which need not decrease in k) do change: ``test_experiments_gr22.py`` shows it with
  :class:`~calcheck.simulations.experiments.gr22_m2b.TopKLabelsExperiment`'s
  ``top_k_confidence_resorted``. Each replicate fits the user-facing calibrator
  (one binary binning per sub-problem), so the sizes are small; n = 150 with k = 5 keeps
  every sub-problem of the atom law (predicted-label frequencies >= 0.2) above one bin.
"""

from __future__ import annotations

from calcheck.simulations.experiments.gr22_m2b import TopKLabelsExperiment
from calcheck.simulations.laws import LAWS

from ..checks.check import Check
from ..checks.events import Within, constant, other_guarantee

__all__ = ["UNION_SHARPER", "top_k_checks", "union_controls"]

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


def top_k_checks(alphas) -> list[Check]:
    """The top-K labels kept by Algorithms 6 and 7 (an identity: no control)."""
    unchanged = constant("unchanged", 0.0, "no returned label differs from g's c^(k)")
    atoms = LAWS["cw_prototype_atoms"]  # ties: (0.4, 0.4, 0.2) and (1/3, 1/3, 1/3)
    return [
        Check(
            "gr22.accuracy.top_k",
            "gr22.accuracy",
            (
                TopKLabelsExperiment(atoms, 150, 30, "top_k_label", 2, 5),
                TopKLabelsExperiment(atoms, 150, 30, "top_k_confidence", 3, 5),
            ),
            Within("changed"),
            alphas,
            "one",
            bound=unchanged,
            description="identity (holds by construction: the labels returned are "
            "top_k_labels(x), compared with top_k_labels(x)): Algorithms 6 and 7 return the "
            "base model's top-K labels c^(1..K) on every test point",
            role="identity",
        ),
    ]
