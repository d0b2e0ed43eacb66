"""The gr21 checks of Lemma 1 and of the two-bin heuristic (A4), with their controls.

Gupta, C. and Ramdas, A. (2021). Distribution-free calibration guarantees for histogram
binning without sample splitting. ICML. Lemma 1 (App. A.2, eqs. 12 and 15) and the
two-bin example of §3. Part of the gr21 catalog module, which adds these checks to its own.

Lemma 1 is checked by exact tests: in each replicate the KS statistic of the points
between two order statistics, transformed by the exact truncated CDF, must stay below its
exact level-alpha critical value, which happens with probability exactly 1 - alpha when the
lemma holds; the suite's binomial test of "coverage >= 1 - alpha" then controls the false
alarms. The same for the pair transforms of consecutive unordered points (independence).
"""

from __future__ import annotations

from calcheck.simulations.experiments.binning import BinningExperiment
from calcheck.simulations.experiments.gr21_lemma1 import OrderStatisticPITExperiment
from calcheck.simulations.laws import LAWS

from ..checks.check import Check
from ..checks.events import Within

__all__ = ["LEMMA_REFUSED", "lemma_checks"]

_UMD = {"name": "umd", "tie_breaking": "lexicographic"}

# (law, n, l, u): eq. (15) with both ranks inside; eq. (12) one-sided (u = n + 1) and its
# mirror (l = 0, S_(0) := 0); a UMD bin (n = 1000, B = 10: ranks A_4 = 401, A_5 = 501);
# atomic laws with lexicographic tie-breaking
_CELLS = (
    ("uniform_half", 50, 10, 31),
    ("skewed_beta", 50, 40, 51),
    ("skewed_beta", 1000, 401, 501),
    ("two_atoms", 60, 5, 40),
    ("mixture_atoms", 200, 0, 40),
)
_EXTRA_CELLS = (("atoms_30", 300, 100, 201), ("uniform_logistic", 20, 1, 20))
_A4_LAWS = ("uniform_half", "uniform_logistic", "skewed_beta", "two_atoms", "mixture_atoms")


def _pit(cells, **kw):
    return tuple(
        OrderStatisticPITExperiment(LAWS[law], n, lo, hi, **kw) for law, n, lo, hi in cells
    )


def lemma_checks(bud) -> list[Check]:
    """Lemma 1 (uniformity, independence) and A4, with their negative controls."""
    cells = _CELLS + (_EXTRA_CELLS if bud.full else ())
    exps = _pit(cells)
    atoms = _pit((("two_atoms", 60, 5, 40), ("mixture_atoms", 200, 0, 40)), tie_breaking="none")
    out = [
        Check(
            "gr21.lem1",
            "gr21.lem1",
            exps,
            Within("ks"),
            bud.alphas,
            description="the in-between points, transformed by the exact truncated CDF, pass "
            "the exact level-alpha KS test of Unif(0, 1) w.p. exactly 1 - alpha",
        ),
        Check(
            "gr21.lem1.control.no_tie_breaking",
            "gr21.lem1",
            atoms,
            Within("ks"),
            bud.alphas,
            expect="violated",
            role="hypothesis",
            description="atoms without tie-breaking: points tied with a conditioning order "
            "statistic transform to exactly 0 or 1, so the transforms are not uniform",
        ),
        Check(
            "gr21.lem1.independence",
            "gr21.lem1.independence",
            exps,
            Within("ks_pairs"),
            bud.alphas,
            description="pairs of consecutive unordered points: (1 - |U - U'|)^2 passes the "
            "exact level-alpha KS test w.p. exactly 1 - alpha (independent uniforms)",
        ),
        Check(
            "gr21.lem1.independence.control.sorted",
            "gr21.lem1.independence",
            _pit(_CELLS[:1], labelling="sorted"),
            Within("ks_pairs"),
            bud.alphas,
            expect="violated",
            description="negative control: consecutive order statistics (sorted, not "
            "unordered) are dependent; the pair test must flag them",
        ),
    ]
    ns = (21, 201, 1001) + ((2001, 10001) if bud.full else ())
    a4 = tuple(BinningExperiment(_UMD, LAWS[law], n, 2) for law in _A4_LAWS for n in ns)
    out.append(
        Check(
            "gr21.a4",
            "gr21.a4",
            a4,
            Within("max_error"),
            bud.alphas,
            description="two bins split at the empirical median S_(m+1), n = 2m + 1 (UMD with "
            "B = 2): both bins within sqrt(log(4/alpha)/(2m))",
        )
    )
    return out


#: Guarantees of this module whose law the check fixes, with the reason.
LEMMA_REFUSED = {
    "gr21.lem1": "a distributional statement about the order statistics of the score law, "
    "checked at fixed ranks (l, u), not on an (n, n_bins) grid",
    "gr21.lem1.independence": "as gr21.lem1",
    "gr21.a4": "the two-bin case fixes B = 2 and an odd n; study gr21.thm3 with n_bins = 2",
}
