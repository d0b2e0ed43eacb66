r"""
A bound that reads the data: empirical Bernstein
================================================

gr21 Theorem 3 gives every bin of uniform-mass binning the same Hoeffding radius, whatever
its labels. A bound may instead read each bin's data: its calibration points and their
sample variance. Which points? Given the B - 1 boundary order statistics, the
:math:`N_b = A_b - A_{b-1} - 1` points strictly inside bin b are i.i.d. draws from the law
restricted to that bin (gr21 Lemma 2, the Markov property of order statistics;
:math:`N_b \ge \lfloor n/B \rfloor - 1`), so their labels are i.i.d. with mean
:math:`\mu_b`, the bin's truth. These are the points the bin's mean :math:`\bar y_b`
averages: the ``counts`` keyword. The empirical Bernstein inequality of Maurer & Pontil
(2009, Theorem 4) for :math:`N \ge 2` i.i.d. values in [0, 1] bounds one side at level t
with :math:`\log(2/t)`; applied to :math:`y` and :math:`1 - y` at level
:math:`\alpha / (2B)` each and joined over the B bins, every bin has, with probability at
least :math:`1 - \alpha`,

.. math:: |\mu_b - \bar y_b| \le \sqrt{\frac{2 V_b \log(4B/\alpha)}{N_b}}
          + \frac{7 \log(4B/\alpha)}{3 (N_b - 1)},

with :math:`V_b` the unbiased sample variance of the bin's labels. A bin's radius is
infinite below two points. :func:`calcheck.define_guarantee` hands the bound each replicate's
``counts`` and ``variances`` (biased, :math:`\frac1N \sum (y - \bar y)^2`) as arrays of shape
(replicates, bins), and the bound returns one radius per bin.
"""

# %%
# The radius, per bin
# -------------------
# The signature asks for ``counts`` and ``variances``: the check then simulates uniform-mass
# binning with its calibration data recorded (``calcheck list --methods`` lists the data
# keywords of each method), and the conditional event asks every output within its own
# radius.

import matplotlib.pyplot as plt
import numpy as np
from scipy import stats

import calcheck
from calcheck import SearchBudget
from calcheck.simulations.exact_coverage import bin_point_counts


def eb_radius(counts, variances, n_bins, alpha):
    """Maurer & Pontil (2009) Thm 4, both sides, union over the B bins; inf below 2 points."""
    enough = counts >= 2
    n_b = np.where(enough, counts, 2.0)
    log = np.log(4 * n_bins / alpha)
    unbiased = variances * n_b / (n_b - 1)
    radius = np.sqrt(2 * unbiased * log / n_b) + 7 * log / (3 * (n_b - 1))
    return np.where(enough, radius, np.inf)


eb = calcheck.define_guarantee(
    "mine.eb_umd",
    eb_radius,
    method="umd",
    event="conditional",
    statement="w.p. >= 1 - alpha every bin of UMD is within its empirical-Bernstein radius",
    hypotheses=("labels in [0, 1]", "lexicographic tie-breaking"),
)
n, n_bins, alpha = 1000, 10, 0.1
hoeffding = calcheck.get_guarantee("gr21.thm3").function(n=n, n_bins=n_bins, alpha=alpha)
print(
    f"n={n}, B={n_bins}, alpha={alpha}: {bin_point_counts(n, n_bins).tolist()} points per "
    f"bin; gr21 Theorem 3 radius {hoeffding:.4f}"
)

# %%
# Verified on two laws, then searched
# -----------------------------------
# :func:`calcheck.verify` on eta = 1/2 (the largest label variance) and on a miscalibrated
# logistic curve, then :func:`calcheck.search` over piecewise-constant laws with a small
# budget; the law it finds is re-checked on a fresh seed.

result = calcheck.verify(
    eb, ["uniform_half", "uniform_logistic"], n=n, n_bins=n_bins, reps=1000, rng=0
)
print(result)
assert result.verdict == "consistent"
budget = SearchBudget("gallery", population=5, generations=2, reps=200, fresh_reps=1000)
search = calcheck.search(
    eb,
    "beta_piecewise",
    grid={"n": n, "n_bins": n_bins},
    alpha=alpha,
    budget=budget,
    baseline=False,
)
print(search.summary())
assert search.search.fresh.outcome == "consistent"

# %%
# The radius times 0.8 is not caught, and cannot be
# -------------------------------------------------
# :func:`calcheck.sharper_control` checks the radius times 0.8 on a fresh seed, expecting a
# violation: it is not flagged. Empirical Bernstein pays for estimating the variance (the
# second term) and for its constant :math:`\sqrt{2 \log(4B/\alpha)}`, so 0.8 times it still
# holds. The check says which factors it would catch: those below its *detectable factor*.
# At a constant eta the evidence is exact: the labels are then i.i.d. Bernoulli(eta)
# whatever the scores, each bin's count of ones is binomial and the bins are independent,
# so the exact coverage of the radius times f is a product of binomial sums (``exact``
# below; at f = 0.4 it agrees with the Monte Carlo of ``uniform_half``, eta = 1/2).

at_08 = calcheck.sharper_control(result, factor=0.8, rng=1)
print(at_08)
assert at_08.verdict == "consistent"  # the control is not caught: the claim at 0.8 holds
print(f"detectable factor of the check: {result.detectable_factor:.3f}")


def exact(factor, eta):
    """Exact P(every bin within factor x its EB radius) at constant eta (UMD)."""
    coverage = 1.0
    for m in bin_point_counts(n, n_bins):
        k = np.arange(m + 1)
        mean = k / m
        radius = eb_radius(np.full(k.size, m), mean * (1 - mean), n_bins, alpha)
        coverage *= stats.binom.pmf(k, m, eta) @ (np.abs(mean - eta) <= factor * radius)
    return float(coverage)


etas = np.linspace(0.01, 0.99, 99)
lowest_08 = min(exact(0.8, e) for e in etas)
print(
    f"radius x 0.8: exact coverage at eta = 1/2 is 1 - {1 - exact(0.8, 0.5):.1e}; lowest "
    f"over eta = 0.01, 0.02, ..., 0.99: {lowest_08:.6f} > {1 - alpha:g}, a claim that "
    "holds: no number of replicates catches it"
)
assert lowest_08 > 1 - alpha
factors = np.linspace(0.2, 1.0, 81)
curve = np.array([exact(f, 0.5) for f in factors])
lowest_valid = factors[np.argmax(curve >= 1 - alpha)]
print(
    f"at eta = 1/2 the radius times f fails (exact coverage < {1 - alpha:g}) for "
    f"f < {lowest_valid:.2f}"
)

# %%
# A factor below the detectable one is caught
# -------------------------------------------

at_04 = calcheck.sharper_control(result, factor=0.4, rng=1)
print(at_04)
cell = next(c for c in at_04.cells if c.law == "uniform_half")
print(
    f"radius x 0.4 at eta = 1/2: exact coverage {exact(0.4, 0.5):.4f}, Monte Carlo "
    f"{cell.verdict.coverage:.4f} ({at_04.reps} replicates)"
)
assert at_04.passed  # violated, as expected

# %%
# Where empirical Bernstein wins
# ------------------------------
# Left: a bin's radius against its sample variance (N = 99 points), with Theorem 3's
# Hoeffding radius, which ignores the variance: the data-dependent radius is smaller only
# for bins whose labels vary little. Right: the exact coverage at eta = 1/2 of the radius
# times f.

v = np.linspace(0, 0.25, 2501)
below = v[eb_radius(np.full(v.size, 99), v, n_bins, alpha) < hoeffding]
print(
    f"with 99 points a bin's empirical-Bernstein radius is below Theorem 3's for a sample "
    f"variance up to {below.max():.4f} (of at most 0.25)"
)
fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), layout="constrained")
ax = axes[0]
ax.plot(v, eb_radius(np.full(v.size, 99), v, n_bins, alpha), label="empirical Bernstein")
ax.axhline(hoeffding, color="C1", ls="--", label="gr21 Theorem 3 (Hoeffding)")
ax.set_xlabel("bin's sample variance (biased)")
ax.set_ylabel(f"radius (N = 99, B = {n_bins}, alpha = {alpha})")
ax.legend(fontsize=8)
ax = axes[1]
ax.plot(factors, curve, color="C2")
ax.axhline(1 - alpha, color="k", ls=":", lw=1, label="claimed 1 - alpha")
ax.axvline(0.8, color="C3", lw=0.8, label="factor 0.8")
ax.axvline(result.detectable_factor, color="C0", lw=0.8, ls="--", label="detectable factor")
ax.set_xlabel("factor f")
ax.set_ylabel(f"exact coverage at eta = 1/2 (n = {n})")
ax.legend(fontsize=8)
plt.show()
