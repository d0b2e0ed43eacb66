r"""
A pytest regression test on a theoretical constant
==================================================

A bound's constants are easy to get wrong when a proof is rewritten or a formula copied:
a union bound dropped, a 2 moved. :mod:`calcheck.testing` turns "this bound holds" and
"this wrong bound is caught" into assertions for a test suite. Both run the suite's exact
binomial test: ``assert_guarantee_holds`` fails with probability at most the false-alarm
rate (1e-3) when the guarantee holds, and ``assert_guarantee_violated`` states its power.
A constant shrunk while the bound stays valid is caught by neither; ``assert_tightness``
pins the bound's critical factor f* (the smallest multiple of it that still holds for every
law at the sizes given, computed exactly), which any change of a constant moves.

The constant under test: gr21 Theorem 3's radius for uniform-mass binning,
:math:`\sqrt{\log(2B/\alpha) / (2(\lfloor n/B \rfloor - 1))}`, whose :math:`2B` comes from
a union bound over the B bins. A version without it, :math:`\log(2/\alpha)`, bounds each
bin at level alpha but not all B bins at once: it is Theorem 4's marginal radius
:math:`\varepsilon_1` (right for the bin of a fresh test point), used for the conditional
event (every bin at once), where it is wrong.
"""

# %%
# The tests
# ---------
# This is what goes into ``tests/test_my_bounds.py``. Each test is deterministic (``rng=``)
# and takes a fraction of a second: a few thousand replicates of one cell.

import matplotlib.pyplot as plt
import numpy as np

import calcheck
from calcheck.testing import assert_guarantee_holds, assert_guarantee_violated, assert_tightness


def radius_without_union_bound(n, n_bins, alpha):
    """gr21 Theorem 3's radius with log(2/alpha) in place of log(2B/alpha) (wrong)."""
    return np.sqrt(np.log(2 / alpha) / (2 * (np.floor(n / n_bins) - 1)))


no_union = calcheck.define_guarantee(
    "mine.thm3_no_union", radius_without_union_bound, method="umd", event="conditional"
)


def test_theorem_3_holds_at_eta_one_half():
    # eta = 1/2: the largest label variance (a law with E[Y | S] = 1/2), not the worst law:
    # no single law is; the next test pins the bound against every law
    assert_guarantee_holds(
        "gr21.thm3", calcheck.LAWS["uniform_half"], n=1000, n_bins=10, reps=3000, rng=0
    )


def test_theorem_3_constant_is_pinned():
    # f* = 0.8027 at n = 1000, B = 10, alpha = 0.1: a constant 2 % smaller moves it
    assert_tightness("gr21.thm3", 0.8027, n=1000, n_bins=10, alpha=0.1, rtol=1e-3)


def test_dropping_the_union_bound_is_caught():
    assert_guarantee_violated(no_union, "uniform_half", n=1000, n_bins=10, reps=3000, rng=1)


# %%
# Run them here as pytest would (a test passes when it returns without raising):

test_theorem_3_holds_at_eta_one_half()
test_theorem_3_constant_is_pinned()
test_dropping_the_union_bound_is_caught()
print("the three tests pass")

# %%
# What a failing test says
# ------------------------
# Asserting that the wrong radius *holds* fails, and the message carries what is needed to
# judge it: the worst cell, its coverage with a Clopper-Pearson interval, the claim and the
# one-sided p-value against the per-cell level.

try:
    assert_guarantee_holds(no_union, "uniform_half", n=1000, n_bins=10, reps=3000, rng=2)
except AssertionError as error:
    print(error)

# %%
# Why the test is sharp enough
# ----------------------------
# At constant eta the coverage is an exact binomial sum (:func:`calcheck.exact_coverage`):
# the radius without the union bound covers about 0.86 at eta = 1/2 against the claimed
# 0.9 once n is above a few hundred (below, the discrete binomial makes the coverage jump
# around 0.9: a test at n = 300 could pass by luck of the grid). The returned result's
# ``shortfall_90`` says which shortfall 3000 replicates detect with probability 0.9; a
# smaller one would need more replicates.

result = assert_guarantee_violated(no_union, "uniform_half", n=1000, n_bins=10, reps=3000, rng=1)
v = result.cells[0].verdict
print(
    f"Monte Carlo coverage {v.coverage:.4f}; detects a shortfall of {v.shortfall_90:.4f} "
    "with probability 0.9"
)

ns = np.unique(np.r_[np.geomspace(100, 5000, 40).astype(int), 1000])
stated = [calcheck.exact_coverage("gr21.thm3", n=n, n_bins=10, alpha=0.1).coverage for n in ns]
wrong = [calcheck.exact_coverage(no_union, n=n, n_bins=10, alpha=0.1).coverage for n in ns]

fig, ax = plt.subplots(figsize=(6, 4.2), layout="constrained")
ax.semilogx(ns, stated, "o-", ms=3, label="gr21 Theorem 3 (log 2B/alpha)")
ax.semilogx(ns, wrong, "s-", ms=3, color="tab:red", label="without the union bound (log 2/alpha)")
ax.errorbar(
    [1000],
    [v.coverage],
    yerr=[[v.coverage - v.ci_low], [v.ci_high - v.coverage]],
    fmt="kD",
    ms=5,
    label="Monte Carlo of the test (95% CP)",
)
ax.axhline(0.9, color="k", ls=":", lw=1, label="claimed 1 - alpha")
ax.set_xlabel("n (B = 10, alpha = 0.1)")
ax.set_ylabel("exact coverage at eta = 1/2")
fig.legend(fontsize=8, loc="outside lower center", ncol=2, frameon=False)
plt.show()
