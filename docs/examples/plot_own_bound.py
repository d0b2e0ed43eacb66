r"""
Check a bound of your own
=========================

gr21 Theorem 3 bounds every bin of uniform-mass binning with Hoeffding's inequality and a
union bound over the B bins. Its proof gives more: given the bin edges, the labels of each
bin are i.i.d. and the bins independent (gr21 Lemma 2), each with
:math:`m = \lfloor n/B \rfloor - 1` or :math:`m + 1` points. For binary labels a bin's mean
is then an exact binomial proportion, so the radius can be the smallest eps whose worst
binomial tail over the unknown mean p is at most the Sidak level
:math:`1 - (1 - \alpha)^{1/B}`:

.. math:: \varepsilon = \min\Big\{\varepsilon :\ \sup_p P\big(|\mathrm{Bin}(m', p)/m' - p|
          > \varepsilon\big) \le 1 - (1 - \alpha)^{1/B},\ m' \in \{m, m + 1\}\Big\}.

:func:`calcheck.define_guarantee` turns this function into a guarantee that every entry
point accepts in place of a paper's id.

**The first version of this example was wrong, and calcheck caught it.** It took the
supremum over p on a grid of 2001 values, the obvious thing to write. The tail jumps
wherever a cut-off :math:`m(p \pm \varepsilon)` crosses an integer and its supremum is a
limit just past such a jump, which a grid misses: the maximum over the grid is too small,
and so is the radius (0.13127 at n = 1000, B = 10, alpha = 0.1, with exact coverage
0.8923 < 0.9 at the constant eta 0.494994). The fix takes the supremum exactly, on those
lattice lines. (``examples/own_bound.py`` in the repository is the longer version of this
example, with a search of the exact radius and a tempting shortcut that fails.)
"""

# %%
# The radius, first as it was written, then exactly
# -------------------------------------------------
# Between the p where ``m (p - eps)`` or ``m (p + eps)`` crosses an integer the failing
# counts are fixed and the tail is quasi-convex in p, so its supremum is a one-sided limit
# at a crossing: just after ``p = k/m + eps`` (count k starts to fail from below) or just
# before ``p = k/m - eps`` (count k fails from above). ``worst_tail`` evaluates those
# 2 (m + 1) limits; ``grid_tail`` is the first version.

import functools

import matplotlib.pyplot as plt
import numpy as np
from scipy import stats

import calcheck
from calcheck.simulations.conditional_coverage import lattice_etas, worst_constant_eta
from calcheck.simulations.exact_coverage import bin_point_counts
from calcheck.simulations.exact_coverage import exact_coverage as coverage_at_radius
from calcheck.simulations.search import SearchBudget

P_GRID = np.linspace(0.0, 1.0, 2001)


def grid_tail(m, eps):
    """First version: max over a grid of p of P(|Bin(m, p)/m - p| > eps) (too small)."""
    below = stats.binom.cdf(np.ceil(m * (P_GRID - eps)) - 1, m, P_GRID)
    above = stats.binom.sf(np.floor(m * (P_GRID + eps)), m, P_GRID)
    return float(np.max(below + above))


def worst_tail(m, eps):
    """Sup over p of P(|Bin(m, p)/m - p| > eps), exactly (one-sided limits at the lattice)."""
    k = np.arange(m + 1)
    after, before = k / m + eps, k / m - eps
    a, b = after <= 1, before >= 0
    tails = np.concatenate(
        [
            stats.binom.cdf(k[a], m, after[a])
            + stats.binom.sf(np.floor(k[a] + 2 * m * eps), m, after[a]),
            stats.binom.sf(k[b] - 1, m, before[b])
            + stats.binom.cdf(np.ceil(k[b] - 2 * m * eps) - 1, m, before[b]),
            [0.0],
        ]
    )
    return float(tails.max())


def binomial_radius(n, n_bins, alpha, tail):
    """Bisection on eps (the worst tail does not increase with eps)."""
    m = int(np.floor(n / n_bins) - 1)
    if m < 1:
        return np.inf
    level = 1 - (1 - alpha) ** (1 / n_bins)
    lo, hi = 0.0, 1.0
    for _ in range(40):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if max(tail(k, mid) for k in (m, m + 1)) <= level else (mid, hi)
    return hi


@functools.cache
def grid_binomial_radius(n, n_bins, alpha):
    """The first version (sup over a grid of p): not valid."""
    return binomial_radius(n, n_bins, alpha, grid_tail)


@functools.cache
def exact_binomial_radius(n, n_bins, alpha):
    """The radius above, with the sup over p taken exactly."""
    return binomial_radius(n, n_bins, alpha, worst_tail)


first = calcheck.define_guarantee(
    "mine.binomial_umd_grid", grid_binomial_radius, method="umd", event="conditional"
)
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
print(
    f"n={n}, B={n_bins}, alpha={alpha}: first version (grid of p) "
    f"{grid_binomial_radius(n, n_bins, alpha):.5f}, exact binomial radius "
    f"{exact_binomial_radius(n, n_bins, alpha):.5f}, gr21 Theorem 3 {theorem_3:.4f}"
)

# %%
# The first version, caught
# -------------------------
# The Monte Carlo on a few laws would not have seen it: at eta = 1/2 the first version's
# exact coverage is 0.919, and the shortfall at the worst eta is 0.008. The exact route
# does: :func:`calcheck.search` scans the constant etas on the lattice lines (exactly, no
# replicates), and its reference fails, so it reports the law as found whatever its own
# replicates say; :func:`calcheck.verify` on that law takes its verdict from the exact
# coverage, with the Monte Carlo beside it as a cross-check.

budget = SearchBudget("gallery", population=6, generations=2, reps=100, fresh_reps=500)
search = calcheck.search(
    first,
    "beta_piecewise",
    grid={"n": n, "n_bins": n_bins},
    alpha=alpha,
    budget=budget,
    baseline=False,
)
print(search.summary())
worst_eta = search.reference["eta"]
law = calcheck.BinaryLaw(
    eta=calcheck.ConditionalMean("constant", {"value": worst_eta}), name=f"eta={worst_eta:.6f}"
)
at_worst = calcheck.verify(first, law, n=n, n_bins=n_bins, reps=1000, rng=3)
cell = at_worst.cells[0]
print(
    f"first version at eta = {worst_eta:.6f}: exact coverage {cell.exact_coverage:.4f}, "
    f"Monte Carlo {cell.verdict.coverage:.4f} (1000 replicates): {at_worst.verdict}"
)
assert search.found
assert at_worst.verdict == "violated"

# %%
# Verify the exact radius, and catch it when it is made too small
# ---------------------------------------------------------------
# The same calls as for a paper's guarantee: :func:`calcheck.verify` on shipped laws (the
# largest label variance eta = 1/2, a miscalibrated Platt curve and a law with
# atoms, where ties are broken lexicographically), then :func:`calcheck.sharper_control`
# with the radius times 0.8, which must be flagged. A radius 20% below Theorem 3's leaves
# little slack, so 0.8 times it is caught, where 0.8 times Theorem 3 (about the same radius
# as ours) is valid.

result = calcheck.verify(
    mine,
    ["uniform_half", "uniform_logistic", "two_atoms"],
    n=[300, 1000],
    n_bins=n_bins,
    reps=1000,
    rng=0,
)
print(result)
control = calcheck.sharper_control(result, factor=0.8, rng=1)
print(control)
assert result.passed  # consistent, as expected
assert control.passed  # violated, as expected

# %%
# Exact coverage at every constant eta
# ------------------------------------
# On uniform-mass binning the exact coverage at constant eta applies to a guarantee of
# your own too. An exact radius is not worst at eta = 1/2 as Hoeffding's is: its lowest
# coverage is at an eta just past a lattice line, so the scan takes every line
# (``worst_constant_eta`` with ``eta_range``). The exact radius stays above 1 - alpha
# everywhere; the first version dips below it on the lines near 1/2.

exact = calcheck.exact_coverage(mine, n=n, n_bins=n_bins, alpha=alpha)
print(exact)
radius, first_radius = (
    exact_binomial_radius(n, n_bins, alpha),
    grid_binomial_radius(n, n_bins, alpha),
)
low_eta, low_failure = worst_constant_eta(n, n_bins, radius, eta_range=(1e-3, 1 - 1e-3))
print(f"lowest exact coverage over constant eta: {1 - low_failure:.4f} at eta = {low_eta:.6f}")
assert 1 - low_failure >= 1 - alpha

sizes = bin_point_counts(n, n_bins)
etas = np.linspace(0.46, 0.54, 801)
curves = {}
for name, eps, color in (
    ("first version (grid of p)", first_radius, "C3"),
    ("exact binomial radius", radius, "C1"),
):
    lines = lattice_etas(sizes, eps)
    x = np.union1d(etas, lines[(lines > 0.46) & (lines < 0.54)])
    curves[name] = (x, [coverage_at_radius(n, n_bins, e, eps) for e in x], color)
ns = np.unique(np.geomspace(100, 10000, 12).astype(int))

fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), layout="constrained")
ax = axes[0]
ax.loglog(
    ns,
    calcheck.get_guarantee("gr21.thm3").function(n=ns, n_bins=n_bins, alpha=alpha),
    "o-",
    ms=3,
    label="gr21 Theorem 3",
)
ax.loglog(
    ns,
    [exact_binomial_radius(int(k), n_bins, alpha) for k in ns],
    "s-",
    ms=3,
    label="exact binomial radius",
)
ax.set_xlabel(f"n (B = {n_bins}, alpha = {alpha})")
ax.set_ylabel("radius eps")
ax.legend(fontsize=8)
ax = axes[1]
for name, (x, y, color) in curves.items():
    ax.plot(x, y, color=color, lw=0.8, label=name)
ax.axhline(1 - alpha, color="k", ls=":", lw=1, label="claimed 1 - alpha")
ax.set_xlabel("constant eta (lattice lines included)")
ax.set_ylabel(f"exact coverage (n = {n}, B = {n_bins})")
ax.legend(fontsize=7, loc="upper right")
plt.show()
