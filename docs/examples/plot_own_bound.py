r"""
Check a bound of your own
=========================

gr21 Theorem 3 bounds every bin of uniform-mass binning with Hoeffding's inequality and a
union bound over the B bins. Its proof gives more: given the bin edges, the labels of each
bin are i.i.d. and the bins independent (gr21 Lemma 2), each with
:math:`m = \lfloor n/B \rfloor - 1` points or more. For binary labels a bin's mean is then
an exact binomial proportion, so the radius can be the smallest eps whose worst binomial
tail over the unknown mean p is at most the Sidak level :math:`1 - (1 - \alpha)^{1/B}`:

.. math:: \varepsilon = \min\Big\{\varepsilon :\ \sup_p P\big(|\mathrm{Bin}(m', p)/m' - p|
          > \varepsilon\big) \le 1 - (1 - \alpha)^{1/B},\ m' \in \{m, m + 1\}\Big\}.

:func:`calcheck.define_guarantee` turns this function into a guarantee that every entry
point accepts in place of a paper's id. (``examples/own_bound.py`` in the repository is the
longer version of this example, with a search and a tempting shortcut that fails.)
"""

# %%
# The radius and the guarantee
# ----------------------------

import functools

import matplotlib.pyplot as plt
import numpy as np
from scipy import stats

import calcheck
from calcheck.simulations.exact_coverage import exact_coverage as coverage_at_radius

P_GRID = np.linspace(0.0, 1.0, 2001)


def worst_tail(m, eps):
    """Sup over p (on a grid) of P(|Bin(m, p)/m - p| > eps)."""
    below = stats.binom.cdf(np.ceil(m * (P_GRID - eps)) - 1, m, P_GRID)
    above = stats.binom.sf(np.floor(m * (P_GRID + eps)), m, P_GRID)
    return float(np.max(below + above))


@functools.cache
def exact_binomial_radius(n, n_bins, alpha):
    """The radius above: bisection on eps (the worst tail does not increase with eps)."""
    m = int(np.floor(n / n_bins) - 1)
    if m < 1:
        return np.inf
    level = 1 - (1 - alpha) ** (1 / n_bins)
    lo, hi = 0.0, 1.0
    for _ in range(40):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if max(worst_tail(k, mid) for k in (m, m + 1)) <= level else (mid, hi)
    return hi


mine = calcheck.define_guarantee(
    "mine.binomial_umd",
    exact_binomial_radius,
    method="umd",
    event="conditional",
    statement="w.p. >= 1 - alpha every bin of UMD is within the exact binomial radius",
    hypotheses=("binary labels", "lexicographic tie-breaking"),
)
n, n_bins, alpha = 1000, 10, 0.1
theorem_3 = calcheck.get_guarantee("gr21.thm3").function(n=n, n_bins=n_bins, alpha=alpha)
print(f"n={n}, B={n_bins}, alpha={alpha}: exact binomial radius "
      f"{exact_binomial_radius(n, n_bins, alpha):.4f}, gr21 Theorem 3 {theorem_3:.4f}")  # fmt: skip

# %%
# Verify it, and catch it when it is made too small
# -------------------------------------------------
# The same calls as for a paper's guarantee: :func:`calcheck.verify` on shipped laws (the
# worst case eta = 1/2, a miscalibrated Platt curve and a law with atoms, where ties are
# broken lexicographically), then :func:`calcheck.sharper_control` with the radius times
# 0.8, which must be flagged. A radius 20% below Theorem 3's leaves little slack, so 0.8
# times it is caught, where 0.8 times Theorem 3 (about the same radius as ours) is valid.

result = calcheck.verify(
    mine, ["uniform_half", "uniform_logistic", "two_atoms"], n=[300, 1000], n_bins=n_bins,
    reps=1000, rng=0,
)  # fmt: skip
print(result)
control = calcheck.sharper_control(result, factor=0.8, rng=1)
print(control)
assert result.passed  # consistent, as expected
assert control.passed  # violated, as expected

# %%
# Exact coverage
# --------------
# On uniform-mass binning the exact coverage at constant eta applies to a guarantee of
# your own too. It is close to 1 - alpha at eta = 1/2 (the radius is nearly exact there)
# while Theorem 3's is near 0.99; the 0.8 times smaller radius falls well below.

exact = calcheck.exact_coverage(mine, n=n, n_bins=n_bins, alpha=alpha)
print(exact)
mc = next(c for c in result.cells if c.law == "uniform_half" and c.n == n).verdict
print(f"Monte Carlo at eta = 1/2: {mc.coverage:.4f} [{mc.ci_low:.4f}, {mc.ci_high:.4f}]")
print(f"0.8 x Theorem 3 = {0.8 * theorem_3:.4f}: exact coverage at eta = 1/2 "
      f"{coverage_at_radius(n, n_bins, 0.5, 0.8 * theorem_3):.4f}")  # fmt: skip

etas = np.linspace(0.02, 0.98, 97)
radius = exact_binomial_radius(n, n_bins, alpha)
curves = {
    "gr21 Theorem 3": [coverage_at_radius(n, n_bins, e, theorem_3) for e in etas],
    "exact binomial radius": [coverage_at_radius(n, n_bins, e, radius) for e in etas],
    "exact binomial radius x 0.8": [coverage_at_radius(n, n_bins, e, 0.8 * radius) for e in etas],
}
ns = np.unique(np.geomspace(100, 10000, 12).astype(int))

fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), layout="constrained")
ax = axes[0]
ax.loglog(ns, calcheck.get_guarantee("gr21.thm3").function(n=ns, n_bins=n_bins, alpha=alpha),
          "o-", ms=3, label="gr21 Theorem 3")  # fmt: skip
ax.loglog(ns, [exact_binomial_radius(int(k), n_bins, alpha) for k in ns], "s-", ms=3,
          label="exact binomial radius")  # fmt: skip
ax.set_xlabel(f"n (B = {n_bins}, alpha = {alpha})")
ax.set_ylabel("radius eps")
ax.legend(fontsize=8)
ax = axes[1]
for (name, curve), color in zip(curves.items(), ("C0", "C1", "C3"), strict=True):
    ax.plot(etas, curve, color=color, label=name)
ax.errorbar([0.5], [mc.coverage], yerr=[[mc.coverage - mc.ci_low], [mc.ci_high - mc.coverage]],
            fmt="kD", ms=4, label="Monte Carlo (95% CP)")  # fmt: skip
ax.axhline(1 - alpha, color="k", ls=":", lw=1, label="claimed 1 - alpha")
ax.set_xlabel("constant eta")
ax.set_ylabel(f"exact coverage (n = {n}, B = {n_bins})")
ax.legend(fontsize=7, loc="lower right")
plt.show()
