r"""
Verify a guarantee on a law of your own
=======================================

gr21 Theorem 3 says that uniform-mass binning without sample splitting (UMD, B bins fitted
on n points) is conditionally calibrated: with probability at least 1 - alpha over the
calibration data, every bin's output is within

.. math:: \varepsilon = \sqrt{\frac{\log(2B/\alpha)}{2(\lfloor n/B \rfloor - 1)}}

of the true mean label of that bin, whatever the law of (score, label). The theorem is
distribution-free, so a check can only ever test it on laws: here three of them, built
three ways (by hand, from a table and by name), each with exact ground truth, so the error
of every bin in every replicate is exact and only the coverage is estimated.
"""

# %%
# Three laws
# ----------
# A :class:`calcheck.BinaryLaw` is a score law (a Beta part, possibly with atoms) and a
# conditional mean ``eta(s) = E[Y | S = s]``. :func:`calcheck.law_from_spec` builds the same
# kind of law from a table (the format of study files), and :data:`calcheck.LAWS` holds
# every law the suite ships by name.

import matplotlib.pyplot as plt
import numpy as np

import calcheck

platt = calcheck.BinaryLaw(
    calcheck.ScoreLaw(2.0, 5.0),  # scores ~ Beta(2, 5)
    calcheck.ConditionalMean("logistic", {"slope": 4.0, "intercept": -1.0}),
    name="beta25_platt",
)
atoms_step = calcheck.law_from_spec(
    {
        "scores": {
            "kind": "mixture",
            "a": 1.0,
            "b": 1.0,
            "atoms": [0.3, 0.7],
            "atom_probs": [0.2, 0.2],
        },
        "eta": {"kind": "step", "threshold": 0.5, "low": 0.2, "high": 0.8},
    },
    name="atoms_step",
)
two_atoms = calcheck.LAWS["two_atoms"]  # scores on {0.2, 0.8} only: ties everywhere
laws = [platt, atoms_step, two_atoms]

s = np.linspace(0.0, 1.0, 501)
fig, ax = plt.subplots(figsize=(5.5, 3.6), layout="constrained")
for law, color in zip(laws, ("C0", "C1", "C2"), strict=True):
    if law.scores.continuous_weight > 0:  # two_atoms has no continuous part
        ax.plot(s, law.eta(s), color=color)
    atoms = law.scores.atoms
    if atoms:
        ax.plot(atoms, law.atom_means(), "o", color=color, ms=7, mfc="none")
    ax.plot([], [], "o-", color=color, mfc="none", label=law.name)
ax.plot([0, 1], [0, 1], "k:", lw=1, label="calibrated")
ax.set_xlabel("score s")
ax.set_ylabel("E[Y | S = s]")
ax.set_title("eta of the three laws (circles: atoms of the score law)", fontsize=9)
_ = ax.legend(fontsize=8)

# %%
# The check
# ---------
# :func:`calcheck.verify` simulates UMD on each law at every grid point (here n = 300 and
# 1000, B = 10), computes each bin's exact error and asks, with an exact one-sided binomial
# test per cell (Bonferroni over the cells, false-alarm rate 1e-3), whether the coverage can
# be at least 1 - alpha. ``rng`` is the root seed: the result is reproducible and does not
# depend on ``n_jobs``.

result = calcheck.verify(
    "gr21.thm3", laws, n=[300, 1000], n_bins=10, alphas=(0.1,), reps=1000, rng=0, n_jobs=1
)
print(result)
for cell in result.cells:
    v = cell.verdict
    print(
        f"{cell.law:>13} n={cell.n:>4}: eps = {cell.bound:.3f}, coverage {v.coverage:.3f} "
        f"[{v.ci_low:.3f}, {v.ci_high:.3f}], tightness {cell.tightness:.2f}"
    )

# %%
# Every cell is consistent. The *tightness* of a cell is how many times larger the bound is
# than what the law needed at the claimed level (the claimed-level quantile of error / eps):
# around 1.6-2 here, the price of Hoeffding plus a union bound over the B bins.
#
# A check that cannot fail proves nothing. The *detectable factor* is the largest k such
# that the bound times any factor below k would be flagged at this budget;
# :func:`calcheck.sharper_control` checks the bound times a factor below it, on a fresh
# seed, and expects the suite to flag it.

print(f"detectable factor: {result.detectable_factor:.2f}")
control = calcheck.sharper_control(result, rng=1)
print(control)
assert result.passed  # consistent, as expected
assert control.passed  # violated, as expected

# %%
# Both results draw their cells: coverage with its Clopper-Pearson interval against the
# claim (black tick).

fig, axes = plt.subplots(2, 1, figsize=(6.4, 5.6), layout="constrained")
result.plot(ax=axes[0])
control.plot(ax=axes[1])
for ax in axes:
    ax.set_xlim(0.5, 1.01)
    ax.legend(fontsize=7, loc="lower left")
plt.show()
