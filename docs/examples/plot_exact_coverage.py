"""
Exact coverage, the certificate over every law, and how loose a bound is
========================================================================

When the conditional mean eta = E[Y | S] is constant, the label sums of uniform-mass bins
are independent binomials given the bin counts (gr21 Lemma 2), so the probability that a
binning guarantee's event holds is a finite sum: no Monte Carlo at all.
:func:`calcheck.exact_coverage` evaluates it for the guarantees where it applies (gr21
Theorems 3 and 4, Corollary 1, nch14 Theorem 3.1 and eq. (9), and guarantees of your own on
uniform-mass binning). No single eta is the worst law (the coverage is smallest near, not
at, eta = 1/2, where the binomial cut-offs cross integers). Lemma 2 holds for every law
given the bin edges, with each bin's bias left free, so the smallest coverage over each
bin's bias bounds the coverage of *every* law from below: the **certified** coverage
(``ExactCoverage.certified``), and the smallest multiple of the bound that keeps it above
1 - alpha, :func:`calcheck.critical_factor`, measures how loose the bound is against the
worst law.
"""

# %%
# Exact against Monte Carlo
# -------------------------
# The exact coverage of gr21 Theorem 3 (conditional: every bin within eps) as a function of
# the constant eta, at n = 1000 and B = 10, beside :func:`calcheck.verify` on three laws with
# that constant eta (uniform scores, 2000 replicates each).

import matplotlib.pyplot as plt
import numpy as np

import calcheck

n, n_bins, alpha = 1000, 10, 0.1
etas = np.linspace(0.02, 0.98, 49)
guarantees = {
    "gr21.thm3": "gr21 Thm 3 (conditional)",
    "gr21.thm4.marginal": "gr21 Thm 4 eps1 (marginal)",
    "nch14.thm31": "nch14 Thm 3.1 (MCE, as printed)",
}
exact = {
    g: [calcheck.exact_coverage(g, n=n, n_bins=n_bins, alpha=alpha, eta=e) for e in etas]
    for g in guarantees
}
at_half = {g: calcheck.exact_coverage(g, n=n, n_bins=n_bins, alpha=alpha) for g in guarantees}
for g, e in at_half.items():
    print(
        f"{g:>19}: eps = {e.eps:.4f}, exact coverage at eta = 1/2 {e.coverage:.4f}, "
        f"certified over every law {e.certified:.4f} "
        f"(claimed {e.claimed:.2f}, {e.scheme} binning, {e.event} event)"
    )

constant_laws = [
    calcheck.BinaryLaw(eta=calcheck.ConditionalMean("constant", {"value": v}), name=f"eta={v}")
    for v in (0.1, 0.3, 0.5)
]
mc = calcheck.verify("gr21.thm3", constant_laws, n=n, n_bins=n_bins, reps=2000, rng=0)
print(mc)

# %%
# The Monte Carlo intervals cover the exact values. The coverage is smallest near eta = 1/2
# but not at it, and every law's coverage stays above the certified value (dashed), which
# stays above 1 - alpha: the claims hold for every law at these sizes. nch14's Theorem 3.1
# as printed (``sqrt(2B log(2B/alpha)/n)``, an exponent 4 times weaker than its own
# eq. (1)) is never close.

fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), layout="constrained")
ax = axes[0]
for (g, label), color in zip(guarantees.items(), ("C0", "C1", "C2"), strict=True):
    ax.plot(etas, [e.coverage for e in exact[g]], color=color, label=f"{label}, exact")
    ax.axhline(at_half[g].certified, color=color, ls="--", lw=1, label="certified, every law")
cov = np.array([c.verdict.coverage for c in mc.cells])
lo = np.array([c.verdict.ci_low for c in mc.cells])
hi = np.array([c.verdict.ci_high for c in mc.cells])
ax.errorbar(
    [0.1, 0.3, 0.5],
    cov,
    yerr=[cov - lo, hi - cov],
    fmt="kD",
    ms=4,
    label="gr21 Thm 3, Monte Carlo (95% CP)",
)
ax.axhline(1 - alpha, color="k", ls=":", lw=1, label="claimed 1 - alpha")
ax.set_xlabel("constant eta = E[Y | S]")
ax.set_ylabel(f"coverage (n = {n}, B = {n_bins})")
ax.set_ylim(0.88, 1.005)
ax.legend(fontsize=7, loc="lower left")

# %%
# Looseness
# ----------
# The critical factor f* is the smallest multiple of the bound whose certified coverage
# still reaches 1 - alpha: 1 / f* is how many times too large the bound is against the
# worst law at these sizes (a valid bound has f* <= 1). Beside it, the same at eta = 1/2
# alone, which overstates the looseness.

ns = np.unique(np.geomspace(100, 20000, 12).astype(int))
loose = {g: [] for g in guarantees}
loose_half = {g: [] for g in guarantees}
for g in guarantees:
    for m in ns:
        f = calcheck.critical_factor(g, n=int(m), n_bins=n_bins, alpha=alpha, tolerance=1e-4)
        half = calcheck.critical_factor(
            g, n=int(m), n_bins=n_bins, alpha=alpha, eta=0.5, tolerance=1e-4
        )
        loose[g].append(f.looseness)
        loose_half[g].append(half.looseness)
for g in guarantees:
    print(
        f"{g:>19}: 1 / f* from {min(loose[g]):.2f} to {max(loose[g]):.2f} (every law), "
        f"{min(loose_half[g]):.2f} to {max(loose_half[g]):.2f} at eta = 1/2"
    )

ax = axes[1]
for (g, label), color in zip(guarantees.items(), ("C0", "C1", "C2"), strict=True):
    ax.semilogx(ns, loose[g], "o-", ms=3, color=color, label=f"{label}, every law")
    ax.semilogx(ns, loose_half[g], ":", color=color, label="at eta = 1/2")
ax.axhline(1.0, color="k", ls=":", lw=1)
ax.set_xlabel(f"n (B = {n_bins}, alpha = {alpha})")
ax.set_ylabel("1 / critical factor (bound / smallest valid bound)")
ax.set_ylim(bottom=0)
ax.legend(fontsize=6)
plt.show()
