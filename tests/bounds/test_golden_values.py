"""Golden values: every registered guarantee against the formula its paper prints.

Each expected value below is computed *in this file* from the formula printed in the paper
(the paper text is in ``shared/seeds/``; the catalogs in ``shared/spec/`` give each
guarantee's label and equation), with the standard library's ``math`` only: nothing of
calcheck computes an expected value. Each id is pinned at two to four reference points that
vary every argument it takes (and the randomisation ``delta`` where it has one, so that a
``+ delta`` turned into ``- delta`` is caught), some at the edges of its domain (``n = 2B``,
``B = 1``, ``k = 2``, a huge ``n``, alpha near its upper limit) so that a mutated validation
that refuses a valid input is caught too. Where the library implements a documented
corrected or derived form beside the stated one (a ``variant_of`` id), that form is pinned
and the comment says so.

Tolerance: relative 1e-12 (closed forms; floating-point evaluation order only), absolute
1e-15 for values that are exactly 0. ``gr21.lem1`` is an exact quantile of the
Kolmogorov-Smirnov statistic: its points sit where that law has a closed form (Simard &
L'Ecuyer 2011, J. Stat. Softw. 39(11), section 2), so the same tolerance applies.

``GOLDEN`` and :func:`random_valid_inputs` are also read by ``docs/tools/mutate_bounds.py``
(mutation testing of ``bounds/``): a surviving mutant is equivalent only if every registered
bound is unchanged at these points and at seeded random valid inputs.
"""

from __future__ import annotations

import zlib
from math import e, factorial, floor, log, pi, sqrt

import numpy as np
import pytest

from calcheck.bounds import registry

# ----------------------------------------------------------------------- paper formulas
# Gupta & Ramdas (2021), "Distribution-free calibration guarantees for histogram binning
# without sample splitting" (ICML), shared/seeds/000_*, catalog gr21_*.md section 4.


def gr21_m(n, B):
    """gr21 section 3.2: every bin of Algorithm 1 averages >= floor(n/B) - 1 points."""
    return n // B - 1


def gr21_eps(log_term, m):
    """Hoeffding radius sqrt(log_term / (2 m)) of gr21 eqs. (8), (10), (11) and eq. (17)."""
    return sqrt(log_term / (2 * m))


def ks_quantile(k, alpha):
    """(1 - alpha)-quantile of D_k = sup|F_k - F| where the law of D_k has a closed form.

    P(D_k <= d) = 1 - 2 (1 - d)^k for d >= max(1/2, 1 - 1/k) and k! (2d - 1/k)^k for
    1/(2k) <= d <= 1/k (Simard & L'Ecuyer 2011, section 2).
    """
    upper = 1 - (alpha / 2) ** (1 / k)
    if upper >= max(0.5, 1 - 1 / k):
        return upper
    lower = ((1 - alpha) / factorial(k)) ** (1 / k) / 2 + 1 / (2 * k)
    assert 1 / (2 * k) <= lower <= 1 / k, "no closed form at this (k, alpha)"
    return lower


# Gupta, Podkopaev & Ramdas (2020), "Distribution-free binary classification" (NeurIPS),
# shared/seeds/003_*, catalog gpr20_*.md section 4.


def gpr20_eb(n_b, v, B, alpha, s=1.0):
    """Theorem 4 (V^_b of eq. 17; Audibert et al., Theorem 12, at delta = alpha/B, range s)."""
    if n_b == 0:
        return float("inf")
    L = log(3 * B / alpha)
    return sqrt(2 * v * L / n_b) + 3 * s * L / n_b


def gpr20_thm6(n_b, v, B, alpha):
    """Theorem 6, eq. (21): [7 sqrt(V ln(1 + ln V)) + 5.3 ln(6.3B/alpha)] / N_b, V+ of eq. (20)."""
    v = max(v, 1.0)
    return (7 * sqrt(v * log(1 + log(v))) + 5.3 * log(6.3 * B / alpha)) / n_b


def gpr20_thm6_intermediate(n_b, v, B, alpha):
    """App. C.4, before the last step: 1.46 sqrt(V (1.4 lnln(eV) + l)) + 5.27 lnln(eV) + 3.76 l."""
    v = max(v, 1.0)
    loglog, L = log(log(e * v)), log(6.3 * B / alpha)
    return (1.46 * sqrt(v * (1.4 * loglog + L)) + 5.27 * loglog + 3.76 * L) / n_b


def gpr20_hoeffding_shift(n_b, B, alpha, scale):
    """App. D.1, eq. (44) and step 4: scale * sqrt(ln(6B/alpha) / (2 N_b)) (inf if N_b = 0)."""
    return float("inf") if n_b == 0 else scale * sqrt(log(6 * B / alpha) / (2 * n_b))


def gpr20_thm7_explicit(n_b, B, alpha, U, L, m_b=None):
    """Catalog 4.12 (derived from App. D.1): (2U^2 m^2 + U m) sqrt(ln(6B/a)/(2N_b)), m = 1/L."""
    m = 1 / L if m_b is None else m_b
    lt = log(6 * B / alpha)
    if n_b <= 2 * U**2 * m**2 * lt:  # step 3 needs the weight-mean error below r_b / 2
        return float("inf")
    return (2 * U**2 * m**2 + U * m) * sqrt(lt / (2 * n_b))


# Gupta & Ramdas (2022), "Top-label calibration and multiclass-to-binary reductions" (ICLR),
# shared/seeds/001_*, catalog gr22_*.md section 4.


def gr22_eps(log_term, k, delta):
    """Theorem 1, eq. (10) and Theorem 2, eq. (15): sqrt(log_term / (2(k - 1))) + delta."""
    return sqrt(log_term / (2 * (k - 1))) + delta


def gr22_prop4(prob, cls, conf, p_correct):
    """conf-ECE, TL-ECE (eqs. 3, 4), conf-MCE, TL-MCE (eqs. 16, 17) on a finite support."""

    def errors(same):
        ece, mce = 0.0, 0.0
        for i, w in enumerate(prob):
            group = [j for j in range(len(prob)) if same(i, j)]
            mass = sum(prob[j] for j in group)
            err = abs(sum(prob[j] * p_correct[j] for j in group) / mass - conf[i]) if mass else 0
            ece += w * err
            mce = max(mce, err) if w > 0 else mce
        return ece, mce

    conf_ece, conf_mce = errors(lambda i, j: conf[i] == conf[j])
    tl_ece, tl_mce = errors(lambda i, j: conf[i] == conf[j] and cls[i] == cls[j])
    return conf_ece, tl_ece, conf_mce, tl_mce


# Naeini, Cooper & Hauskrecht (2014), "Binary classifier calibration: non-parametric
# approach" (arXiv:1401.3390), shared/seeds/002_*, catalog nch14_*.md section 4.


def nch14_eq22(eta, theta):
    """App. 7.2, eq. (22) before eta_K = 1/B: sum eta^2 theta (1 - theta) / (2 pi1 pi0)."""
    pi1 = sum(a * b for a, b in zip(eta, theta, strict=True))
    return sum(a * a * b * (1 - b) for a, b in zip(eta, theta, strict=True)) / (2 * pi1 * (1 - pi1))


# --------------------------------------------------------------------- the golden table
#: id -> [(keyword arguments, expected value)]; every expected value from a formula above
#: or written out, with its source in the comment.
GOLDEN: dict[str, list[tuple[dict, object]]] = {
    # ---- gr21 (Gupta & Ramdas 2021) ----
    # Theorem 3, eq. (8): eps = sqrt(log(2B/alpha) / (2(floor(n/B) - 1))); catalog section 5
    # prints 0.0941 at (3000, 10, 0.1). Edges: n = 2B, B = 1, alpha = 0.9, n = 2^50.
    "gr21.thm3": [
        (dict(n=3000, n_bins=10, alpha=0.1), gr21_eps(log(2 * 10 / 0.1), gr21_m(3000, 10))),
        (dict(n=20, n_bins=10, alpha=0.05), gr21_eps(log(2 * 10 / 0.05), gr21_m(20, 10))),
        (dict(n=7, n_bins=1, alpha=0.9), gr21_eps(log(2 * 1 / 0.9), gr21_m(7, 1))),
        (dict(n=2**50, n_bins=7, alpha=0.01), gr21_eps(log(2 * 7 / 0.01), gr21_m(2**50, 7))),
    ],
    # Corollary 1, eq. (10): eq. (8) + 1/floor(n/B); catalog prints 0.0992 at (2900, 10, 0.1).
    "gr21.cor1": [
        (
            dict(n=2900, n_bins=10, alpha=0.1),
            gr21_eps(log(2 * 10 / 0.1), gr21_m(2900, 10)) + 1 / floor(2900 / 10),
        ),
        (
            dict(n=25, n_bins=12, alpha=0.3),
            gr21_eps(log(2 * 12 / 0.3), gr21_m(25, 12)) + 1 / floor(25 / 12),
        ),
    ],
    # Theorem 4, eq. (11), eps1 = sqrt(log(2/alpha) / (2(floor(n/B) - 1))) + delta; catalog
    # prints 0.10026 at (1500, 10, 0.1), delta -> 0.
    "gr21.thm4.marginal": [
        (dict(n=1500, n_bins=10, alpha=0.1), gr21_eps(log(2 / 0.1), gr21_m(1500, 10))),
        (
            dict(n=1000, n_bins=7, alpha=0.05, delta=0.01),
            gr21_eps(log(2 / 0.05), gr21_m(1000, 7)) + 0.01,
        ),
        (dict(n=6, n_bins=3, alpha=0.5, delta=0.2), gr21_eps(log(2 / 0.5), gr21_m(6, 3)) + 0.2),
    ],
    # Theorem 4, eq. (11), eps2 = sqrt(log(2B/alpha) / (2(floor(n/B) - 1))) + delta.
    "gr21.thm4.conditional": [
        (dict(n=3000, n_bins=10, alpha=0.1), gr21_eps(log(2 * 10 / 0.1), gr21_m(3000, 10))),
        (
            dict(n=500, n_bins=3, alpha=0.2, delta=0.003),
            gr21_eps(log(2 * 3 / 0.2), gr21_m(500, 3)) + 0.003,
        ),
    ],
    # Theorem 4(a): w.p. >= 1 - alpha every lp-ECE <= eps2 of eq. (11).
    "gr21.thm4.ece_hp": [
        (
            dict(n=7000, n_bins=10, alpha=0.1, delta=0.001),
            gr21_eps(log(2 * 10 / 0.1), gr21_m(7000, 10)) + 0.001,
        ),
        (dict(n=4, n_bins=2, alpha=0.01), gr21_eps(log(2 * 2 / 0.01), gr21_m(4, 2))),
    ],
    # Theorem 4(b): E[lp-ECE] <= sqrt(B / (2n)) + delta, p in [1, 2].
    "gr21.thm4.ece_mean": [
        (dict(n=100, n_bins=10), sqrt(10 / (2 * 100))),
        (dict(n=29, n_bins=10, delta=0.02), sqrt(10 / (2 * 29)) + 0.02),
    ],
    # Corrected form (documented in its docstring and catalog section 9): what the proof of
    # Theorem 4(b) establishes, E[lp-ECE] <= 1 / (2 sqrt(floor(n/B) - 1)) + delta.
    "gr21.thm4.ece_mean.proof_valid": [
        (dict(n=100, n_bins=10), 1 / (2 * sqrt(gr21_m(100, 10)))),
        (dict(n=29, n_bins=10, delta=0.02), 1 / (2 * sqrt(gr21_m(29, 10))) + 0.02),
    ],
    # A9: the step of Theorem 4(b), eq. (19): E[(l2-ECE)^2] <= 1/(4(floor(n/B) - 1)) + delta^2.
    "gr21.a9": [
        (dict(n=100, n_bins=10), 1 / (4 * gr21_m(100, 10))),
        (dict(n=45, n_bins=4, delta=0.1), 1 / (4 * gr21_m(45, 4)) + 0.1**2),
    ],
    # A4: section 3, the two-bin example: n = 2m + 1, eps = sqrt(log(4/alpha) / (2m)).
    "gr21.a4": [
        (dict(n=301, alpha=0.1), gr21_eps(log(4 / 0.1), 150)),
        (dict(n=3, alpha=0.5), gr21_eps(log(4 / 0.5), 1)),
        (dict(n=25, alpha=0.02), gr21_eps(log(4 / 0.02), 12)),
    ],
    # Lemma 1 (App. A.2, eqs. 12, 15): the k in-between points are iid uniform after the
    # transform, so their KS statistic D_k has the exact level-alpha critical value below.
    "gr21.lem1": [
        (dict(k=1, alpha=0.1), ks_quantile(1, 0.1)),
        (dict(k=2, alpha=0.05), ks_quantile(2, 0.05)),
        (dict(k=5, alpha=0.99), ks_quantile(5, 0.99)),
    ],
    # Lemma 1, independence: the floor(k/2) pair transforms are iid uniform: same quantile.
    "gr21.lem1.independence": [
        (dict(k_pairs=3, alpha=0.05), ks_quantile(3, 0.05)),
        (dict(k_pairs=4, alpha=0.995), ks_quantile(4, 0.995)),
    ],
    # ---- gpr20 (Gupta, Podkopaev & Ramdas 2020) ----
    # Theorem 4 (V^_b of eq. 17): sqrt(2 V ln(3B/alpha)/N_b) + 3 ln(3B/alpha)/N_b; catalog 4.8
    # prints 0.340 at (N_b, V, B, alpha) = (100, 1/4, 10, 0.1). N_b = 0: no interval (inf).
    "gpr20.thm4": [
        (dict(n_bin=100, variance=0.25, n_bins=10, alpha=0.1), gpr20_eb(100, 0.25, 10, 0.1)),
        (dict(n_bin=400, variance=0.16, n_bins=3, alpha=0.02), gpr20_eb(400, 0.16, 3, 0.02)),
        (dict(n_bin=1, variance=0.0, n_bins=1, alpha=0.5), gpr20_eb(1, 0.0, 1, 0.5)),
        (dict(n_bin=0, variance=0.1, n_bins=5, alpha=0.1), float("inf")),
    ],
    # Derived (catalog 4.19-4.21, last bullet; not a claim of the paper): the Hoeffding
    # analogue of Theorem 4, sqrt(ln(2B/alpha) / (2 N_b)).
    "gpr20.thm4.hoeffding": [
        (dict(n_bin=100, n_bins=10, alpha=0.1), sqrt(log(2 * 10 / 0.1) / (2 * 100))),
        (dict(n_bin=7, n_bins=3, alpha=0.02), sqrt(log(2 * 3 / 0.02) / (2 * 7))),
        (dict(n_bin=0, n_bins=3, alpha=0.02), float("inf")),
    ],
    # Corollary 3 as printed: eps = hw_{b*} of Theorem 4, b* = argmin_b N_b (the first one).
    "gpr20.cor3": [
        (dict(counts=[[10, 20]], variances=[[0.0, 0.25]], alpha=0.1), [gpr20_eb(10, 0, 2, 0.1)]),
        (
            dict(counts=[60, 40, 40, 200], variances=[0.25, 0.0, 0.2, 0.05], alpha=0.05),
            gpr20_eb(40, 0.0, 4, 0.05),
        ),
    ],
    # Corollary 3 corrected (catalog 4.9, "important correction"): eps = max_b hw_b, which
    # need not sit at b* (second point: 0.645 at the second N_b = 40, against 0.411 at b*).
    "gpr20.cor3.max_halfwidth": [
        (
            dict(counts=[[10, 20]], variances=[[0.0, 0.25]], alpha=0.1),
            [max(gpr20_eb(10, 0.0, 2, 0.1), gpr20_eb(20, 0.25, 2, 0.1))],
        ),
        (
            dict(counts=[60, 40, 40, 200], variances=[0.25, 0.0, 0.2, 0.05], alpha=0.05),
            max(gpr20_eb(c, v, 4, 0.05) for c, v in [(60, 0.25), (40, 0), (40, 0.2), (200, 0.05)]),
        ),
    ],
    # Theorem 5 (App. C.3, eqs. 38-39): N_b* >= n2/(2B) - sqrt(n2 ln(2B/alpha) / 2); catalog
    # 4.10 prints 134.9 at (5000, 10, 0.1). Raw, also when negative.
    "gpr20.thm5": [
        (dict(n_cal2=5000, n_bins=10, alpha=0.1), 5000 / 20 - sqrt(5000 * log(20 / 0.1) / 2)),
        (dict(n_cal2=100, n_bins=3, alpha=0.3), 100 / 6 - sqrt(100 * log(6 / 0.3) / 2)),
        (dict(n_cal2=1, n_bins=1, alpha=0.9), 1 / 2 - sqrt(1 * log(2 / 0.9) / 2)),
    ],
    # Theorem 6, eq. (21) (stated form); catalog 4.11 prints 0.7616 at (100, 25, 10, 0.1), 0.0551
    # at (10^4, 2500, 10, 0.1). A variance sum of 0.5 is floored at 1 (eq. 20: V+ = 1 v ...).
    "gpr20.thm6": [
        (dict(n_bin=100, v_plus=25, n_bins=10, alpha=0.1), gpr20_thm6(100, 25, 10, 0.1)),
        (dict(n_bin=10**4, v_plus=2500, n_bins=10, alpha=0.1), gpr20_thm6(10**4, 2500, 10, 0.1)),
        (dict(n_bin=50, v_plus=0.5, n_bins=3, alpha=0.2), gpr20_thm6(50, 0.5, 3, 0.2)),
        (dict(n_bin=0, v_plus=3.0, n_bins=3, alpha=0.2), float("inf")),
    ],
    # Theorem 6, the intermediate bound of its proof (App. C.4; V+ multiplies both terms of
    # l(v), catalog 4.11 [RECONSTRUCTED parenthesization]); catalog prints 0.5305, 0.0261.
    "gpr20.thm6.intermediate": [
        (
            dict(n_bin=100, v_plus=25, n_bins=10, alpha=0.1),
            gpr20_thm6_intermediate(100, 25, 10, 0.1),
        ),
        (
            dict(n_bin=10**4, v_plus=2500, n_bins=10, alpha=0.1),
            gpr20_thm6_intermediate(10**4, 2500, 10, 0.1),
        ),
        (
            dict(n_bin=50, v_plus=0.5, n_bins=3, alpha=0.2),
            gpr20_thm6_intermediate(50, 0.5, 3, 0.2),
        ),
        (dict(n_bin=0, v_plus=1.1, n_bins=3, alpha=0.2), float("inf")),
    ],
    # Theorem 7: c (U/L)^2 sqrt(B ln(6B/alpha) / (2n)), c unspecified (default 1).
    "gpr20.thm7": [
        (
            dict(n=5000, n_bins=10, alpha=0.1, upper=2.0, lower=0.5),
            (2.0 / 0.5) ** 2 * sqrt(10 * log(60 / 0.1) / (2 * 5000)),
        ),
        (
            dict(n=800, n_bins=4, alpha=0.05, upper=1.5, lower=0.8, c=3.0),
            3.0 * (1.5 / 0.8) ** 2 * sqrt(4 * log(24 / 0.05) / (2 * 800)),
        ),
        (
            dict(n=1, n_bins=1, alpha=0.9, upper=1.0, lower=1.0),
            sqrt(1 * log(6 / 0.9) / 2),
        ),
    ],
    # Derived from the proof of Theorem 7 (catalog 4.12, "explicit instantiation"): inf
    # where N_b <= 2 U^2 m_b^2 ln(6B/alpha) (204.7 at U = 2, L = 0.5, B = 10, alpha = 0.1).
    "gpr20.thm7.explicit": [
        (
            dict(n_bin=500, n_bins=10, alpha=0.1, upper=2.0, lower=0.5),
            gpr20_thm7_explicit(500, 10, 0.1, 2.0, 0.5),
        ),
        (
            dict(n_bin=230, n_bins=10, alpha=0.1, upper=2.0, lower=0.5),
            gpr20_thm7_explicit(230, 10, 0.1, 2.0, 0.5),
        ),
        (dict(n_bin=180, n_bins=10, alpha=0.1, upper=2.0, lower=0.5), float("inf")),
        (
            dict(n_bin=1000, n_bins=5, alpha=0.2, upper=1.2, lower=0.9, m_b=0.95),
            gpr20_thm7_explicit(1000, 5, 0.2, 1.2, 0.9, 0.95),
        ),
    ],
    # Theorem 10 (App. D.2): Theorem 4's form with the range m_b U of m_b w(X) Y, estimator (40).
    "gpr20.thm10": [
        (
            dict(n_bin=200, variance=0.1, m_b=1.5, upper=2.0, n_bins=10, alpha=0.1),
            gpr20_eb(200, 0.1, 10, 0.1, s=1.5 * 2.0),
        ),
        (
            dict(n_bin=50, variance=0.3, m_b=0.7, upper=1.2, n_bins=4, alpha=0.05),
            gpr20_eb(50, 0.3, 4, 0.05, s=0.7 * 1.2),
        ),
        (dict(n_bin=0, variance=0.3, m_b=0.7, upper=1.2, n_bins=4, alpha=0.05), float("inf")),
    ],
    # Proposition 3 (App. D.2): E~[Y | X_b] = m_b E[w(X) Y | X_b], m_b = P(X_b) / P~(X_b).
    "gpr20.prop3": [
        (dict(source_mass=0.2, target_mass=0.4, source_weighted_mean=0.6), 0.2 / 0.4 * 0.6),
        (
            dict(source_mass=[0.1, 0.5], target_mass=[0.3, 0.25], source_weighted_mean=[0.9, 0.2]),
            [0.1 / 0.3 * 0.9, 0.5 / 0.25 * 0.2],
        ),
    ],
    # G3: proof of Theorem 7, step 2, eq. (44): |r_b - r^_b| <= sqrt(U^2 ln(6B/alpha)/(2N_b)).
    "gpr20.g3": [
        (
            dict(n_bin=100, n_bins=10, alpha=0.1, upper=2.0),
            gpr20_hoeffding_shift(100, 10, 0.1, 2.0),
        ),
        (dict(n_bin=7, n_bins=2, alpha=0.3, upper=1.0), gpr20_hoeffding_shift(7, 2, 0.3, 1.0)),
        (dict(n_bin=0, n_bins=2, alpha=0.3, upper=1.0), float("inf")),
    ],
    # G4: proof of Theorem 7, step 4, as printed (scale U): sqrt(U^2 ln(6B/alpha) / (2N_b)).
    "gpr20.g4": [
        (dict(n_bin=64, n_bins=5, alpha=0.05, upper=3.0), gpr20_hoeffding_shift(64, 5, 0.05, 3.0)),
        (dict(n_bin=1, n_bins=1, alpha=0.5, upper=1.5), gpr20_hoeffding_shift(1, 1, 0.5, 1.5)),
    ],
    # G4 corrected (catalog 4.12 step 4: the summands m_b w Y lie in [0, m_b U]).
    "gpr20.g4.corrected": [
        (
            dict(n_bin=64, n_bins=5, alpha=0.05, upper=3.0, m_b=1.7),
            gpr20_hoeffding_shift(64, 5, 0.05, 1.7 * 3.0),
        ),
        (
            dict(n_bin=9, n_bins=2, alpha=0.2, upper=1.1, m_b=0.4),
            gpr20_hoeffding_shift(9, 2, 0.2, 0.4 * 1.1),
        ),
    ],
    # Proposition 2 (App. D.3, step (3)): the plug-in term is O(Delta): c * Delta.
    "gpr20.prop2": [
        (dict(sup_error=0.01, c=2.0), 0.02),
        (dict(sup_error=0.3, c=0.5), 0.15),
    ],
    # Theorem 3 (App. B.4, with Corollary 1): eps_n >= 0.25 - alpha/2 (0.2 at alpha = 0.1,
    # 0.225 at 0.05, as the catalog prints).
    "gpr20.thm3": [
        (dict(alpha=0.1), 0.25 - 0.1 / 2),
        (dict(alpha=0.05), 0.25 - 0.05 / 2),
        (dict(alpha=0.45), 0.25 - 0.45 / 2),
    ],
    # Corollary 1 (App. B.3): E|C_n| >= 0.5 - alpha.
    "gpr20.cor1": [
        (dict(alpha=0.1), 0.5 - 0.1),
        (dict(alpha=0.45), 0.5 - 0.45),
    ],
    # ---- gr22 (Gupta & Ramdas 2022) ----
    # Theorem 1, eq. (10), eps_1 = sqrt(log(2/alpha) / (2(k - 1))) + delta (the marginal
    # property (8)); catalog G6 prints eps_1 ~ 0.175 at k = 50, alpha = 0.1.
    "gr22.thm1.marginal": [
        (dict(points_per_bin=50, alpha=0.1), gr22_eps(log(2 / 0.1), 50, 0)),
        (dict(points_per_bin=2, alpha=0.05, delta=0.01), gr22_eps(log(2 / 0.05), 2, 0.01)),
    ],
    # Theorem 1, eq. (10), eps_2 = sqrt(log(2n/(k alpha)) / (2(k - 1))) + delta (the
    # conditional property (9)); n the total calibration size, n >= k.
    "gr22.thm1.conditional": [
        (dict(n=2000, points_per_bin=50, alpha=0.1), gr22_eps(log(2 * 2000 / (50 * 0.1)), 50, 0)),
        (
            dict(n=2, points_per_bin=2, alpha=0.3, delta=0.005),
            gr22_eps(log(2 * 2 / (2 * 0.3)), 2, 0.005),
        ),
    ],
    # Theorem 1: P(TL-ECE <= eps_2) >= 1 - alpha, eps_2 of eq. (10).
    "gr22.thm1.ece_hp": [
        (
            dict(n=10000, points_per_bin=100, alpha=0.05, delta=0.002),
            gr22_eps(log(2 * 10000 / (100 * 0.05)), 100, 0.002),
        ),
        (dict(n=7, points_per_bin=3, alpha=0.9), gr22_eps(log(2 * 7 / (3 * 0.9)), 3, 0)),
    ],
    # Tighter variant of the proof of Theorem 1 (catalog G7, App. H.2): delta +
    # max_l sqrt(log(2B/alpha) / (2(floor(n_l/B_l) - 1))), B = sum_l B_l, classes with B_l >= 1.
    "gr22.thm1.conditional.data_dependent": [
        (
            dict(class_counts=[100, 45, 0], bins_per_class=[5, 3, 0], alpha=0.1),
            gr22_eps(log(2 * 8 / 0.1), 45 // 3, 0),
        ),
        (
            dict(class_counts=[[45, 31, 12]], bins_per_class=[[4, 3, 1]], alpha=0.2, delta=0.01),
            [gr22_eps(log(2 * 8 / 0.2), 31 // 3, 0.01)],
        ),
    ],
    # Theorem 1: E[TL-ECE] <= sqrt(1/(2k)) + delta (k = 50 gives 0.1, section 4).
    "gr22.thm1.ece_mean": [
        (dict(points_per_bin=50), sqrt(1 / (2 * 50))),
        (dict(points_per_bin=2, delta=0.03), sqrt(1 / (2 * 2)) + 0.03),
    ],
    # Theorem 2, eq. (15), eps_l^(1) = sqrt(log(2/alpha_l) / (2(k_l - 1))) + delta, per class.
    "gr22.thm2.marginal": [
        (
            dict(points_per_bin=[20, 50], alpha=[0.1, 0.05]),
            [gr22_eps(log(2 / 0.1), 20, 0), gr22_eps(log(2 / 0.05), 50, 0)],
        ),
        (dict(points_per_bin=3, alpha=0.4, delta=0.02), gr22_eps(log(2 / 0.4), 3, 0.02)),
    ],
    # Theorem 2, eq. (15), eps_l^(2) = sqrt(log(2n/(k_l alpha_l)) / (2(k_l - 1))) + delta.
    "gr22.thm2.conditional": [
        (
            dict(n=1000, points_per_bin=[20, 50], alpha=[0.1, 0.05]),
            [
                gr22_eps(log(2 * 1000 / (20 * 0.1)), 20, 0),
                gr22_eps(log(2 * 1000 / (50 * 0.05)), 50, 0),
            ],
        ),
        (
            dict(n=5, points_per_bin=5, alpha=0.2, delta=0.04),
            gr22_eps(log(2 * 5 / (5 * 0.2)), 5, 0.04),
        ),
    ],
    # Theorem 2(a) with alpha_l = alpha / L: max_l eps_l^(2) = eps of eq. (15) at alpha/L.
    "gr22.thm2.ece_hp": [
        (
            dict(n=1000, points_per_bin=20, alpha=0.1, n_classes=3),
            gr22_eps(log(2 * 1000 * 3 / (20 * 0.1)), 20, 0),
        ),
        (
            dict(n=40, points_per_bin=2, alpha=0.5, n_classes=2, delta=0.02),
            gr22_eps(log(2 * 40 * 2 / (2 * 0.5)), 2, 0.02),
        ),
    ],
    # Theorem 2(b): E[CW-ECE] <= max_l sqrt(1/(2 k_l)) + delta = sqrt(1/(2 min_l k_l)) + delta.
    "gr22.thm2.ece_mean": [
        (dict(points_per_bin=[20, 50, 30]), sqrt(1 / (2 * 20))),
        (dict(points_per_bin=2, delta=0.01), sqrt(1 / (2 * 2)) + 0.01),
        (dict(points_per_bin=[[10, 4], [3, 8]]), [sqrt(1 / (2 * 4)), sqrt(1 / (2 * 3))]),
    ],
    # Definition 2, eq. (13) from eq. (11) by a union bound, applied to Theorem 2's eq. (15)
    # with alpha_l = alpha / L: sqrt(log(2L/alpha) / (2(k - 1))) + delta.
    "gr22.eq13": [
        (dict(points_per_bin=20, alpha=0.1, n_classes=3), gr22_eps(log(2 * 3 / 0.1), 20, 0)),
        (
            dict(points_per_bin=2, alpha=0.2, n_classes=2, delta=0.01),
            gr22_eps(log(2 * 2 / 0.2), 2, 0.01),
        ),
    ],
    # Definition 2, eq. (14) from eq. (12), the same way: sqrt(log(2nL/(k alpha))/(2(k-1))) + delta.
    "gr22.eq14": [
        (
            dict(n=1000, points_per_bin=20, alpha=0.1, n_classes=3),
            gr22_eps(log(2 * 1000 * 3 / (20 * 0.1)), 20, 0),
        ),
        (
            dict(n=9, points_per_bin=4, alpha=0.6, n_classes=4, delta=0.03),
            gr22_eps(log(2 * 9 * 4 / (4 * 0.6)), 4, 0.03),
        ),
    ],
    # Proposition 4 (App. H.1) and App. E.3: conf-ECE <= TL-ECE, conf-MCE <= TL-MCE, the four
    # population errors of eqs. (3), (4), (16), (17). Example 1 (section 2): conf-ECE = 0,
    # TL-ECE = 0.4 (catalog section 7); TL-MCE 0.4, conf-MCE 0 (catalog section 5).
    "gr22.prop4": [
        (
            dict(
                prob=[0.5, 0.5], predicted_class=[1, 2], confidence=[0.6, 0.6], p_correct=[0.2, 1.0]
            ),
            gr22_prop4([0.5, 0.5], [1, 2], [0.6, 0.6], [0.2, 1.0]),
        ),
        (
            dict(
                prob=[0.1, 0.2, 0.3, 0.4, 0.0],
                predicted_class=[0, 1, 1, 0, 2],
                confidence=[0.7, 0.7, 0.7, 0.4, 0.4],
                p_correct=[0.9, 0.3, 0.6, 0.5, 0.0],
            ),
            gr22_prop4(
                [0.1, 0.2, 0.3, 0.4, 0.0],
                [0, 1, 1, 0, 2],
                [0.7, 0.7, 0.7, 0.4, 0.4],
                [0.9, 0.3, 0.6, 0.5, 0.0],
            ),
        ),
    ],
    # Section 3.2: top-label calibration keeps c, so the accuracy is the base model's.
    "gr22.accuracy": [
        (dict(base_accuracy=0.73), 0.73),
        (dict(base_accuracy=[0.1, 1.0]), [0.1, 1.0]),
    ],
    # Algorithm 10 (App. G.3): every bin holds >= floor((n+1)/B) - 1 interior points.
    "gr22.alg10.occupancy": [
        (dict(n=100, n_bins=7), (100 + 1) // 7 - 1),
        (dict(n=9, n_bins=10), (9 + 1) // 10 - 1),
        (dict(n=5, n_bins=1), (5 + 1) // 1 - 1),
        (dict(n=[100, 9], n_bins=[7, 10]), [(100 + 1) // 7 - 1, (9 + 1) // 10 - 1]),
        # the smallest valid input: one point, B <= n + 1 = 2 (a validation that refused
        # n = 1 survived the mutation run without it)
        (dict(n=1, n_bins=2), (1 + 1) // 2 - 1),
    ],
    # ---- klm19 (Kumar, Liang & Ma 2019) ----
    # Example 3.2: CE(f_B) = 0 but CE(f) >= 0.49.
    "klm19.ex32": [(dict(), 0.49)],
    # Proposition 3.3: CE_p(f_B) <= CE_p(f): the bound is CE_p(f) itself.
    "klm19.prop33": [(dict(ce=0.3), 0.3), (dict(ce=[0.0, 1.0]), [0.0, 1.0])],
    # Lemma 4.3: n >= c B log(B/delta).
    "klm19.lem43": [
        (dict(n_bins=10, delta=0.1, c=1.0), 10 * log(10 / 0.1)),
        (dict(n_bins=100, delta=0.01, c=5.2), 5.2 * 100 * log(100 / 0.01)),
    ],
    # Section 4.2 remark after Lemma 4.3 (G-I4): a VC argument needs c B^2 log(B/delta).
    "klm19.lem43.vc": [
        (dict(n_bins=10, delta=0.1, c=1.0), 10**2 * log(10 / 0.1)),
        (dict(n_bins=3, delta=0.5, c=2.0), 2.0 * 3**2 * log(3 / 0.5)),
    ],
    # Definition 5.2: E[debiased | counts] = sum_{n_s >= 2} (n_s / n) (s - y_s)^2 (catalog
    # G6 "exact conditional unbiasedness"; bins with n_s < 2 dropped, the authors' code).
    "klm19.def52": [
        (
            dict(values=[0.5, 0.3, 0.9], label_means=[0.25, 0.3, 0.1], counts=[2, 2, 0]),
            (2 * 0.25**2 + 2 * 0.0**2) / 4,
        ),
        (
            dict(values=[0.2, 0.6, 0.8], label_means=[0.1, 0.7, 0.5], counts=[1, 3, 5]),
            (3 * (0.6 - 0.7) ** 2 + 5 * (0.8 - 0.5) ** 2) / 9,
        ),
        (
            dict(values=[0.2, 0.6], label_means=[0.4, 0.1], counts=[[2, 2], [7, 1]]),
            [(2 * 0.2**2 + 2 * 0.5**2) / 4, 7 * 0.2**2 / 8],
        ),
    ],
    # Theorem 5.3: n >= c (B / E^2) log(B / delta).
    "klm19.thm53": [
        (dict(n_bins=10, ce_sq=0.01, delta=0.1, c=1.0), 10 / 0.01 * log(10 / 0.1)),
        (dict(n_bins=50, ce_sq=1.0, delta=0.05, c=0.3), 0.3 * 50 / 1.0 * log(50 / 0.05)),
    ],
    # Theorem 5.4: n >= c (sqrt(B) / E^2) log(B / delta).
    "klm19.thm54": [
        (dict(n_bins=10, ce_sq=0.01, delta=0.1, c=1.0), sqrt(10) / 0.01 * log(10 / 0.1)),
        (dict(n_bins=50, ce_sq=0.2, delta=0.05, c=0.3), 0.3 * sqrt(50) / 0.2 * log(50 / 0.05)),
    ],
    # Theorem 4.1: n >= c (B log B + log B / eps^2).
    "klm19.thm41": [
        (dict(n_bins=10, eps_sq=0.01, c=1.0), 10 * log(10) + log(10) / 0.01),
        (dict(n_bins=2, eps_sq=0.5, c=4.0), 4.0 * (2 * log(2) + log(2) / 0.5)),
    ],
    # G-I1 (section 4, abstract): well-specified scaling, E[CE^2] ~ c / n.
    "klm19.gi1": [(dict(n=1000, c=2.4), 2.4 / 1000), (dict(n=1, c=1.0), 1.0)],
    # G-I2 (section 4, abstract): histogram binning needs n >= c B / eps^2.
    "klm19.gi2": [
        (dict(n_bins=10, eps_sq=0.01, c=1.0), 10 / 0.01),
        (dict(n_bins=3, eps_sq=0.5, c=2.0), 2.0 * 3 / 0.5),
    ],
    # G-I3 (section 5): the plug-in's bias ~ c B / n ("total bias B/n").
    "klm19.gi3": [
        (dict(n_bins=10, n=2000, c=1.0), 10 / 2000),
        (dict(n_bins=7, n=3, c=0.25), 0.25 * 7 / 3),
    ],
    # G-I5 (section 4.3, App. E): scaling-binning E[CE^2] ~ c / n, nearly constant in B.
    "klm19.gi5.sb": [(dict(n=500, c=3.0), 3.0 / 500), (dict(n=4000, c=1.0), 1 / 4000)],
    # G-I5 (section 4.3, App. E): histogram binning E[CE^2] ~ c B / n.
    "klm19.gi5.hist": [
        (dict(n_bins=10, n=2000, c=1.0), 10 / 2000),
        (dict(n_bins=80, n=7, c=0.5), 0.5 * 80 / 7),
    ],
    # ---- nch14 (Naeini, Cooper & Hauskrecht 2014) ----
    # Theorem 3.1 as printed: MCE <= sqrt(2B log(2B/delta) / N); catalog G4 prints 1.03 at
    # (N, B, delta) = (100, 10, 0.1) and 0.326 at (1000, 10, 0.1).
    "nch14.thm31": [
        (dict(n=1000, n_bins=10, alpha=0.1), sqrt(2 * 10 * log(2 * 10 / 0.1) / 1000)),
        (dict(n=100, n_bins=10, alpha=0.1), sqrt(2 * 10 * log(2 * 10 / 0.1) / 100)),
        (dict(n=3, n_bins=1, alpha=0.7), sqrt(2 * 1 * log(2 * 1 / 0.7) / 3)),
    ],
    # Theorem 3.1 with eq. (1)'s exponent (catalog G4, Hoeffding-consistent variant, a
    # documented correction): sqrt(B log(2B/delta) / (2N)); 0.163 at (1000, 10, 0.1).
    "nch14.thm31.hoeffding": [
        (dict(n=1000, n_bins=10, alpha=0.1), sqrt(10 * log(2 * 10 / 0.1) / (2 * 1000))),
        (dict(n=30, n_bins=6, alpha=0.02), sqrt(6 * log(2 * 6 / 0.02) / (2 * 30))),
    ],
    # Eqs. (1), (9): |thetahat_i - theta_i| <= sqrt((B/(2N)) log(2/delta)) for one bin.
    "nch14.eq9": [
        (dict(n=1000, n_bins=10, alpha=0.1), sqrt(10 / (2 * 1000) * log(2 / 0.1))),
        (dict(n=12, n_bins=4, alpha=0.3), sqrt(4 / (2 * 12) * log(2 / 0.3))),
    ],
    # Eqs. (3), (6): 2 k exp(-N eps^2 / (2B)) = delta, i.e. sqrt(2B log(2k/delta) / N).
    "nch14.eq3": [
        (dict(n=1000, n_bins=10, alpha=0.1), sqrt(2 * 10 * log(2 * 1 / 0.1) / 1000)),
        (dict(n=200, n_bins=5, alpha=0.05, k=3), sqrt(2 * 5 * log(2 * 3 / 0.05) / 200)),
    ],
    # Eqs. (8), (10): |etahat_i - eta_i| <= sqrt((1/(2N)) log(2/delta)).
    "nch14.eq10": [
        (dict(n=1000, alpha=0.1), sqrt(log(2 / 0.1) / (2 * 1000))),
        (dict(n=1, alpha=0.9), sqrt(log(2 / 0.9) / 2)),
    ],
    # Eq. (2): |o_i - e_i| <= max_t |thetahat_it - theta_it| (the bound is its argument).
    "nch14.eq2": [(dict(max_bin_error=0.37), 0.37), (dict(max_bin_error=[0.0, 1.0]), [0.0, 1.0])],
    # Corollary 3.2: MCE = O(sqrt(B log B / N)): c sqrt(B log B / N).
    "nch14.cor32": [
        (dict(n=1000, n_bins=10, c=1.0), sqrt(10 * log(10) / 1000)),
        (dict(n=50, n_bins=2, c=3.0), 3.0 * sqrt(2 * log(2) / 50)),
    ],
    # Theorem 3.3, C = sqrt(2 pi) reconstructed from eq. (6) and Lemmas 7.1, 7.2 (catalog G6).
    "nch14.thm33": [
        (dict(n=1000, n_bins=10), sqrt(2 * pi) * sqrt(10 / 1000)),
        (dict(n=3, n_bins=1), sqrt(2 * pi) * sqrt(1 / 3)),
    ],
    # Theorem 3.3, C = sqrt(pi/2) with eq. (1)'s exponent (catalog G6, reconstructed).
    "nch14.thm33.hoeffding": [
        (dict(n=1000, n_bins=10), sqrt(pi / 2) * sqrt(10 / 1000)),
        (dict(n=50, n_bins=5), sqrt(pi / 2) * sqrt(5 / 50)),
    ],
    # Theorem 3.3, C = 1/2 by the binomial variance (catalog G6; not in the paper).
    "nch14.thm33.variance": [
        (dict(n=1000, n_bins=10), 0.5 * sqrt(10 / 1000)),
        (dict(n=50, n_bins=5), 0.5 * sqrt(5 / 50)),
    ],
    # Theorem 3.4 with App. 7.2's constant, eq. (23): AUC loss <= 1/(2B) as n -> infinity.
    "nch14.thm34": [(dict(n_bins=10), 1 / (2 * 10)), (dict(n_bins=1), 1 / 2)],
    # App. 7.2, eq. (22) with unequal masses (catalog G13): sum eta^2 theta(1-theta)/(2 pi1 pi0).
    "nch14.thm34.unequal": [
        (
            dict(bin_masses=[0.25, 0.25, 0.25, 0.25], bin_rates=[0.2, 0.4, 0.6, 0.8]),
            nch14_eq22([0.25] * 4, [0.2, 0.4, 0.6, 0.8]),
        ),
        (
            dict(bin_masses=[0.7, 0.2, 0.1], bin_rates=[0.1, 0.5, 0.95]),
            nch14_eq22([0.7, 0.2, 0.1], [0.1, 0.5, 0.95]),
        ),
    ],
    # App. 7.2, eqs. (16)-(20): Loss_1 (pairs in different bins) <= 0 in the limit.
    "nch14.loss1": [(dict(), 0.0)],
    # App. 7.2, eqs. (21)-(23): Loss_2 (pairs in one bin) <= 1/(2B).
    "nch14.loss2": [(dict(n_bins=10), 1 / (2 * 10)), (dict(n_bins=3), 1 / (2 * 3))],
}


# ------------------------------------------------------------ random valid inputs (mutants)
def _int(rng, lo, hi):
    """A log-uniform integer in [lo, hi]."""
    return int(min(hi, max(lo, round(float(np.exp(rng.uniform(np.log(lo), np.log(hi + 1))))))))


def _unit(rng, lo=0.0, hi=1.0):
    """A float in the open interval (lo, hi)."""
    return float(lo + (hi - lo) * rng.uniform(1e-6, 1 - 1e-6))


def _delta(rng):
    """Algorithm 2's / 8's randomisation: 0 (the limit calcheck implements) or small."""
    return 0.0 if rng.random() < 0.3 else _unit(rng, 0, 0.1)


def _gr21(rng, *, alpha=True, delta=True):
    b = _int(rng, 1, 60)
    kw = dict(n=_int(rng, 2 * b, 10**7), n_bins=b)
    kw.update({"alpha": _unit(rng)} if alpha else {})
    kw.update({"delta": _delta(rng)} if delta else {})
    return kw


def _shift(rng):
    return dict(n_bins=_int(rng, 1, 50), alpha=_unit(rng), upper=_unit(rng, 1, 6))


def _cor3(rng):
    shape = (int(rng.integers(1, 4)), int(rng.integers(1, 6)))
    counts = rng.integers(0, 500, size=shape)
    counts[:, 0] += 1
    return dict(
        counts=counts.tolist(), variances=rng.uniform(0, 0.25, shape).tolist(), alpha=_unit(rng)
    )


def _data_dependent(rng):
    bins = rng.integers(0, 6, size=int(rng.integers(1, 5)))
    bins[0] = max(bins[0], 1)
    counts = 2 * bins + rng.integers(0, 300, size=bins.size) * (bins > 0)
    return dict(
        class_counts=counts.tolist(),
        bins_per_class=bins.tolist(),
        alpha=_unit(rng),
        delta=_delta(rng),
    )


def _prop4(rng):
    m = int(rng.integers(1, 7))
    return dict(
        prob=rng.dirichlet(np.ones(m)).tolist(),
        predicted_class=rng.integers(0, 3, m).tolist(),
        confidence=rng.choice([0.2, 0.5, 0.9], m).tolist(),
        p_correct=rng.uniform(0, 1, m).tolist(),
    )


def _def52(rng):
    b = int(rng.integers(1, 8))
    counts = rng.integers(0, 6, size=b)
    counts[0] += 1
    return dict(
        values=rng.uniform(0, 1, b).tolist(),
        label_means=rng.uniform(0, 1, b).tolist(),
        counts=counts.tolist(),
    )


def _k_gr22(rng, n=None):
    """Points per bin k >= 2 (at most n where n is given)."""
    return _int(rng, 2, 300 if n is None else n)


_SAMPLERS = {
    "gr21.thm3": lambda r: _gr21(r, delta=False),
    "gr21.cor1": lambda r: _gr21(r, delta=False),
    "gr21.thm4.marginal": _gr21,
    "gr21.thm4.conditional": _gr21,
    "gr21.thm4.ece_hp": _gr21,
    "gr21.thm4.ece_mean": lambda r: _gr21(r, alpha=False),
    "gr21.thm4.ece_mean.proof_valid": lambda r: _gr21(r, alpha=False),
    "gr21.a9": lambda r: _gr21(r, alpha=False),
    "gr21.a4": lambda r: dict(n=2 * _int(r, 1, 10**6) + 1, alpha=_unit(r)),
    "gr21.lem1": lambda r: dict(k=_int(r, 1, 500), alpha=_unit(r)),
    "gr21.lem1.independence": lambda r: dict(k_pairs=_int(r, 1, 500), alpha=_unit(r)),
    "gpr20.thm4": lambda r: dict(
        n_bin=_int(r, 1, 10**6) * int(r.random() > 0.1),
        variance=_unit(r, 0, 0.25),
        n_bins=_int(r, 1, 100),
        alpha=_unit(r),
    ),
    "gpr20.thm4.hoeffding": lambda r: dict(
        n_bin=_int(r, 1, 10**6) * int(r.random() > 0.1), n_bins=_int(r, 1, 100), alpha=_unit(r)
    ),
    "gpr20.cor3": _cor3,
    "gpr20.cor3.max_halfwidth": _cor3,
    "gpr20.thm5": lambda r: dict(n_cal2=_int(r, 1, 10**7), n_bins=_int(r, 1, 100), alpha=_unit(r)),
    "gpr20.thm6": lambda r: dict(
        n_bin=_int(r, 1, 10**6), v_plus=_unit(r, 0, 3) ** 4, n_bins=_int(r, 1, 100), alpha=_unit(r)
    ),
    "gpr20.thm6.intermediate": lambda r: dict(
        n_bin=_int(r, 1, 10**6), v_plus=_unit(r, 0, 3) ** 4, n_bins=_int(r, 1, 100), alpha=_unit(r)
    ),
    "gpr20.thm7": lambda r: dict(
        n=_int(r, 1, 10**7), **_shift(r), lower=_unit(r, 0.05, 1), c=_unit(r, 0.1, 5)
    ),
    "gpr20.thm7.explicit": lambda r: dict(
        n_bin=_int(r, 1, 10**7) if r.random() < 0.5 else _int(r, 1, 3000) * int(r.random() > 0.1),
        **_shift(r),
        lower=_unit(r, 0.05, 1),
        m_b=None if r.random() < 0.5 else _unit(r, 0.1, 3),
    ),
    "gpr20.thm10": lambda r: dict(
        n_bin=_int(r, 1, 10**6), variance=_unit(r, 0, 4), m_b=_unit(r, 0.1, 3), **_shift(r)
    ),
    "gpr20.prop3": lambda r: dict(
        source_mass=_unit(r), target_mass=_unit(r), source_weighted_mean=_unit(r, 0, 3)
    ),
    "gpr20.g3": lambda r: dict(n_bin=_int(r, 1, 10**6), **_shift(r)),
    "gpr20.g4": lambda r: dict(n_bin=_int(r, 1, 10**6), **_shift(r)),
    "gpr20.g4.corrected": lambda r: dict(
        n_bin=_int(r, 1, 10**6), **_shift(r), m_b=_unit(r, 0.1, 3)
    ),
    "gpr20.prop2": lambda r: dict(sup_error=_unit(r, 0, 1), c=_unit(r, 0.1, 10)),
    "gpr20.thm3": lambda r: dict(alpha=_unit(r, 0, 0.5)),
    "gpr20.cor1": lambda r: dict(alpha=_unit(r, 0, 0.5)),
    "gr22.thm1.marginal": lambda r: dict(
        points_per_bin=_k_gr22(r), alpha=_unit(r), delta=_delta(r)
    ),
    "gr22.thm1.conditional": lambda r: _gr22_conditional(r),
    "gr22.thm1.ece_hp": lambda r: _gr22_conditional(r),
    "gr22.thm1.conditional.data_dependent": _data_dependent,
    "gr22.thm1.ece_mean": lambda r: dict(points_per_bin=_k_gr22(r), delta=_delta(r)),
    "gr22.thm2.marginal": lambda r: dict(
        points_per_bin=_k_gr22(r), alpha=_unit(r), delta=_delta(r)
    ),
    "gr22.thm2.conditional": lambda r: _gr22_conditional(r),
    "gr22.thm2.ece_hp": lambda r: dict(**_gr22_conditional(r), n_classes=_int(r, 2, 100)),
    "gr22.thm2.ece_mean": lambda r: dict(
        points_per_bin=[_k_gr22(r) for _ in range(int(r.integers(1, 5)))], delta=_delta(r)
    ),
    "gr22.eq13": lambda r: dict(
        points_per_bin=_k_gr22(r), alpha=_unit(r), n_classes=_int(r, 2, 100), delta=_delta(r)
    ),
    "gr22.eq14": lambda r: dict(**_gr22_conditional(r), n_classes=_int(r, 2, 100)),
    "gr22.prop4": _prop4,
    "gr22.accuracy": lambda r: dict(base_accuracy=_unit(r)),
    "gr22.alg10.occupancy": lambda r: _alg10(r),
    "klm19.ex32": lambda r: {},
    "klm19.prop33": lambda r: dict(ce=_unit(r)),
    "klm19.lem43": lambda r: dict(n_bins=_int(r, 1, 10**4), delta=_unit(r), c=_unit(r, 0.1, 10)),
    "klm19.lem43.vc": lambda r: dict(n_bins=_int(r, 1, 10**4), delta=_unit(r), c=_unit(r, 0.1, 10)),
    "klm19.def52": _def52,
    "klm19.thm53": lambda r: dict(
        n_bins=_int(r, 1, 10**4), ce_sq=_unit(r), delta=_unit(r), c=_unit(r, 0.1, 10)
    ),
    "klm19.thm54": lambda r: dict(
        n_bins=_int(r, 1, 10**4), ce_sq=_unit(r), delta=_unit(r), c=_unit(r, 0.1, 10)
    ),
    "klm19.thm41": lambda r: dict(n_bins=_int(r, 2, 10**4), eps_sq=_unit(r), c=_unit(r, 0.1, 10)),
    "klm19.gi1": lambda r: dict(n=_int(r, 1, 10**6), c=_unit(r, 0.1, 10)),
    "klm19.gi2": lambda r: dict(n_bins=_int(r, 1, 10**4), eps_sq=_unit(r), c=_unit(r, 0.1, 10)),
    "klm19.gi3": lambda r: dict(n_bins=_int(r, 1, 10**4), n=_int(r, 1, 10**6), c=_unit(r, 0.1, 10)),
    "klm19.gi5.sb": lambda r: dict(n=_int(r, 1, 10**6), c=_unit(r, 0.1, 10)),
    "klm19.gi5.hist": lambda r: dict(
        n_bins=_int(r, 1, 10**4), n=_int(r, 1, 10**6), c=_unit(r, 0.1, 10)
    ),
    "nch14.thm31": lambda r: dict(n=_int(r, 1, 10**7), n_bins=_int(r, 1, 100), alpha=_unit(r)),
    "nch14.thm31.hoeffding": lambda r: dict(
        n=_int(r, 1, 10**7), n_bins=_int(r, 1, 100), alpha=_unit(r)
    ),
    "nch14.eq9": lambda r: dict(n=_int(r, 1, 10**7), n_bins=_int(r, 1, 100), alpha=_unit(r)),
    "nch14.eq3": lambda r: dict(
        n=_int(r, 1, 10**7), n_bins=_int(r, 1, 100), alpha=_unit(r), k=_int(r, 1, 100)
    ),
    "nch14.eq10": lambda r: dict(n=_int(r, 1, 10**7), alpha=_unit(r)),
    "nch14.eq2": lambda r: dict(max_bin_error=_unit(r)),
    "nch14.cor32": lambda r: dict(n=_int(r, 1, 10**7), n_bins=_int(r, 2, 100), c=_unit(r, 0.1, 10)),
    "nch14.thm33": lambda r: dict(n=_int(r, 1, 10**7), n_bins=_int(r, 1, 100)),
    "nch14.thm33.hoeffding": lambda r: dict(n=_int(r, 1, 10**7), n_bins=_int(r, 1, 100)),
    "nch14.thm33.variance": lambda r: dict(n=_int(r, 1, 10**7), n_bins=_int(r, 1, 100)),
    "nch14.thm34": lambda r: dict(n_bins=_int(r, 1, 1000)),
    "nch14.thm34.unequal": lambda r: _unequal(r),
    "nch14.loss1": lambda r: {},
    "nch14.loss2": lambda r: dict(n_bins=_int(r, 1, 1000)),
}


def _gr22_conditional(rng):
    n = _int(rng, 2, 10**6)
    return dict(n=n, points_per_bin=_k_gr22(rng, n), alpha=_unit(rng), delta=_delta(rng))


def _alg10(rng):
    n = _int(rng, 1, 10**6)
    return dict(n=n, n_bins=_int(rng, 1, n + 1))


def _unequal(rng):
    b = int(rng.integers(1, 8))
    return dict(
        bin_masses=rng.dirichlet(np.ones(b)).tolist(), bin_rates=rng.uniform(0.01, 0.99, b).tolist()
    )


def random_valid_inputs(guarantee_id: str, rng) -> dict:
    """Keyword arguments drawn from the whole valid domain of a registered guarantee."""
    return _SAMPLERS[guarantee_id](rng)


# ---------------------------------------------------------------------------- the tests
def _builtin_ids() -> list[str]:
    return sorted(
        g.id
        for g in registry.all_guarantees()
        if g.paper in registry.PAPERS and not registry.is_user_defined(g.id)
    )


CASES = [(gid, i) for gid in sorted(GOLDEN) for i in range(len(GOLDEN[gid]))]


@pytest.mark.parametrize(("guarantee_id", "index"), CASES, ids=[f"{g}-{i}" for g, i in CASES])
def test_golden_value(guarantee_id, index):
    kwargs, expected = GOLDEN[guarantee_id][index]
    got = registry.get(guarantee_id)(**kwargs)
    if isinstance(expected, tuple):  # several results (gr22.prop4)
        assert isinstance(got, tuple)
        assert len(got) == len(expected)
        for g, x in zip(got, expected, strict=True):
            np.testing.assert_allclose(g, x, rtol=1e-12, atol=1e-15)
        return
    assert np.shape(got) == np.shape(expected)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-15)


def test_every_registered_id_has_golden_values():
    """A guarantee registered by a built-in paper without golden values fails here."""
    missing = [gid for gid in _builtin_ids() if len(GOLDEN.get(gid, ())) < 1]
    assert missing == [], f"registered guarantees without golden values: {missing}"
    thin = [gid for gid in _builtin_ids() if len(GOLDEN[gid]) < 2 and registry.get(gid).parameters]
    assert thin == [], f"pinned at fewer than two points: {thin}"
    assert set(GOLDEN) <= set(_builtin_ids()), "golden values of an id no paper registers"


def test_every_registered_id_has_a_sampler_of_valid_inputs():
    assert set(_SAMPLERS) == set(_builtin_ids())


@pytest.mark.parametrize("guarantee_id", sorted(_SAMPLERS))
def test_random_inputs_are_valid(guarantee_id):
    """The sampler the mutation tool uses draws inputs the bound accepts."""
    rng = np.random.default_rng([7, zlib.crc32(guarantee_id.encode())])
    g = registry.get(guarantee_id)
    for _ in range(20):
        value = g(**random_valid_inputs(guarantee_id, rng))
        values = value if isinstance(value, tuple) else (value,)
        assert all(not np.any(np.isnan(np.asarray(v, dtype=float))) for v in values)


#: Numbers printed in the papers or the catalogs (4 digits), against the formulas above:
#: a check that the formulas were transcribed right.
PRINTED = [
    (lambda: gr21_eps(log(2 * 10 / 0.1), gr21_m(3000, 10)), 0.0941),  # gr21 catalog section 5
    (lambda: gr21_eps(log(2 / 0.1), gr21_m(1500, 10)), 0.10026),  # gr21 section 3.2 / catalog
    (lambda: gr21_eps(log(2 * 10 / 0.1), gr21_m(2900, 10)) + 1 / 290, 0.0992),  # eq. (10)
    (lambda: gpr20_eb(100, 0.25, 10, 0.1), 0.340),  # gpr20 catalog 4.8
    (lambda: 5000 / 20 - sqrt(5000 * log(200) / 2), 134.9),  # gpr20 catalog 4.10
    (lambda: gpr20_thm6(100, 25, 10, 0.1), 0.7616),  # gpr20 catalog 4.11
    (lambda: gpr20_thm6(10**4, 2500, 10, 0.1), 0.0551),
    (lambda: gpr20_thm6_intermediate(100, 25, 10, 0.1), 0.5305),
    (lambda: gpr20_thm6_intermediate(10**4, 2500, 10, 0.1), 0.0261),
    (lambda: 3 * (2 / 0.5) ** 2 * sqrt(log(60 / 0.1) / (2 * 500)), 3.84),  # gpr20 catalog 4.12
    (lambda: 2 * 2**2 * (1 / 0.5) ** 2 * log(60 / 0.1), 204.7),  # its validity threshold
    (lambda: gr22_eps(log(2 / 0.1), 50, 0), 0.175),  # gr22 catalog G6
    (lambda: sqrt(2 * 10 * log(2 * 10 / 0.1) / 100), 1.03),  # nch14 catalog G4
    (lambda: sqrt(2 * 10 * log(2 * 10 / 0.1) / 1000), 0.326),
    (lambda: sqrt(10 * log(2 * 10 / 0.1) / 2000), 0.163),
    (lambda: gr22_prop4([0.5, 0.5], [1, 2], [0.6, 0.6], [0.2, 1.0])[1], 0.4),  # gr22 Example 1
]


@pytest.mark.parametrize(("formula", "printed"), PRINTED)
def test_formulas_reproduce_the_printed_numbers(formula, printed):
    digits = len(repr(printed).split(".")[1])  # printed rounded or cut to these decimals
    assert formula() == pytest.approx(printed, abs=10**-digits)
