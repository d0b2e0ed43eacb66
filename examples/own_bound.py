"""Check a radius of your own for uniform-mass binning, as a researcher would.

The radius: gr21 Theorem 3 bounds every bin of uniform-mass binning (Algorithm 1) with
Hoeffding's inequality and a union bound over the B bins. Its proof gives more: given the
bin edges, the labels of each bin are i.i.d. and the bins are independent (gr21 Lemma 2),
each with m = floor(n/B) - 1 or m + 1 points. For binary labels the deviation of a bin's
mean then has an exact binomial law, so the radius can be the smallest eps whose worst
binomial tail over the unknown mean p is at most the Sidak level 1 - (1 - alpha)^(1/B):

    eps(n, B, alpha) = min { eps : sup_p P(|Bin(m', p)/m' - p| > eps) <= 1 - (1 - alpha)^(1/B),
                             for m' = m and m + 1 }.

About 20% smaller than Theorem 3's.

What the first version got wrong. It took the supremum over p on a grid of 2001 values
(``np.linspace(0, 1, 2001)``): the obvious thing to write, and wrong. The tail
``P(|K/m - p| > eps)`` jumps wherever a cut-off ``m (p - eps)`` or ``m (p + eps)`` crosses
an integer, and its supremum is a limit just past such a jump (``p = k/m + eps``) or just
before one (``p = k/m - eps``): a grid misses those tops by up to a grid step, so its
maximum is too small and so is the radius. At n = 1000, B = 10, alpha = 0.1 the grid
version gives 0.13127, whose exact coverage is 0.8923 < 0.9 at the constant eta 0.494994
(0.9188 at eta = 1/2, so a check at 1/2 alone would pass it). calcheck catches it: the
search's exact reference (the worst constant eta, scanned on these lattice lines) fails,
and ``verify`` on that law is decided by the exact coverage. The fix takes the supremum
exactly, at the lattice lines (``_worst_tail``); the radius becomes 0.13131, and its exact
coverage is at least 1 - alpha at every constant eta.

This script shows both: the first version caught, then the exact radius defined as a
guarantee, verified on several binary laws, its radius times 0.8 caught, a law family
searched for its worst case and the exact coverage beside the Monte Carlo. It also shows why
the supremum over p is needed at all: the same radius computed at p = 1/2 only has exact
coverage below 1 - alpha at eta = 0.48 (the binomial is discrete, so eta = 1/2 is not the
worst case of an exact radius as it is of Hoeffding's).

Run it with ``python examples/own_bound.py`` (about 15 s on one core) or
``python examples/own_bound.py --quick`` (6 s, fewer replicates).
"""

from __future__ import annotations

import argparse
import functools

import numpy as np
from scipy import stats

import calcheck
from calcheck.simulations.conditional_coverage import worst_constant_eta
from calcheck.simulations.exact_coverage import exact_coverage as exact_coverage_at_eta
from calcheck.simulations.search import SearchBudget

#: The first version's grid of p (the mistake: a supremum over a grid).
P_GRID = np.linspace(0.0, 1.0, 2001)


def _grid_tail(m: int, eps: float) -> float:
    """First version: max over a grid of p of P(|Bin(m, p)/m - p| > eps) (too small)."""
    below = stats.binom.cdf(np.ceil(m * (P_GRID - eps)) - 1, m, P_GRID)
    above = stats.binom.sf(np.floor(m * (P_GRID + eps)), m, P_GRID)
    return float(np.max(below + above))


def _worst_tail(m: int, eps: float) -> float:
    """Sup over p of P(|Bin(m, p)/m - p| > eps), exactly.

    Between the p where ``m (p - eps)`` or ``m (p + eps)`` crosses an integer the failing
    counts are fixed (``K <= a`` or ``K >= b``) and the tail is quasi-convex in p, so its
    supremum is a one-sided limit at a crossing: just after ``p = k/m + eps`` (where count
    k starts to fail from below) or just before ``p = k/m - eps`` (count k fails from
    above), k = 0..m. Those are the search's lattice lines.
    """
    k = np.arange(m + 1)
    after = k / m + eps
    ok = after <= 1
    tails = [
        # K <= k fails, and K > k + 2 m eps
        stats.binom.cdf(k[ok], m, after[ok])
        + stats.binom.sf(np.floor(k[ok] + 2 * m * eps), m, after[ok])
    ]
    before = k / m - eps
    ok = before >= 0
    tails.append(  # K >= k fails, and K < k - 2 m eps
        stats.binom.sf(k[ok] - 1, m, before[ok])
        + stats.binom.cdf(np.ceil(k[ok] - 2 * m * eps) - 1, m, before[ok])
    )
    return float(np.max(np.concatenate([*tails, [0.0]])))


def _radius(sizes, level: float, tail) -> float:
    """The smallest eps whose worst tail (``tail(m, eps)``) over ``sizes`` is <= level."""
    lo, hi = 0.0, 1.0
    for _ in range(50):  # bisection: the worst tail does not increase with eps
        mid = (lo + hi) / 2
        if max(tail(m, mid) for m in sizes) <= level:
            hi = mid
        else:
            lo = mid
    return hi


def _sizes(n, n_bins):
    m = int(np.floor(n / n_bins) - 1)
    return m, (m, m + 1)


@functools.cache
def exact_binomial_radius(n, n_bins, alpha):
    """The radius of the module text: exact sup over p, bin sizes m and m + 1."""
    m, sizes = _sizes(n, n_bins)
    if m < 1:
        return np.inf
    return _radius(sizes, 1 - (1 - alpha) ** (1 / n_bins), _worst_tail)


@functools.cache
def grid_binomial_radius(n, n_bins, alpha):
    """The first version: the same radius with the sup over p taken on a grid (not valid)."""
    m, sizes = _sizes(n, n_bins)
    if m < 1:
        return np.inf
    return _radius(sizes, 1 - (1 - alpha) ** (1 / n_bins), _grid_tail)


def _tail_at_half(m: int, eps: float) -> float:
    below = stats.binom.cdf(np.ceil(m * (0.5 - eps)) - 1, m, 0.5)
    return float(below + stats.binom.sf(np.floor(m * (0.5 + eps)), m, 0.5))


def radius_at_half(n, n_bins, alpha):
    """The tempting shortcut: the binomial tail at p = 1/2 and m points only (not valid)."""
    m, _ = _sizes(n, n_bins)
    return _radius((m,), 1 - (1 - alpha) ** (1 / n_bins), _tail_at_half)


def radius_times_08(n, n_bins, alpha):
    """The same radius times 0.8: a deliberately wrong constant that must be caught."""
    return 0.8 * exact_binomial_radius(n, n_bins, alpha)


def constant_eta_law(eta: float):
    """Uniform scores with ``E[Y | S] = eta`` everywhere: a law with exact coverage."""
    return calcheck.BinaryLaw(
        eta=calcheck.ConditionalMean("constant", {"value": eta}), name=f"eta={eta:.6f}"
    )


def catch_the_first_version(n, n_bins, alpha, reps, budget) -> bool:
    """The grid version: the search's exact reference fails, verify at that law says so."""
    first = calcheck.define_guarantee(
        "binomial.umd_grid", grid_binomial_radius, method="umd", event="conditional"
    )
    found = calcheck.search(
        first,
        "beta_piecewise",
        grid={"n": n, "n_bins": n_bins},
        alpha=alpha,
        budget=budget,
        baseline=False,
    )
    print("first version (sup over a grid of p), searched:", found.summary(), sep="\n")
    eta = found.reference["eta"]
    at = calcheck.verify(first, constant_eta_law(eta), n=n, n_bins=n_bins, reps=reps, rng=3)
    cell = at.cells[0]
    print(
        f"first version at constant eta = {eta:.6f}: exact coverage {cell.exact_coverage:.4f} "
        f"< {1 - alpha:.2f}, verdict {at.verdict} (exact evidence decides; Monte Carlo "
        f"{cell.verdict.coverage:.4f} over {reps} replicates beside it)"
    )
    return found.found and at.verdict == "violated"


def main(argv=None) -> int:
    """Run the example; exit status 0 when every conclusion stated above holds."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer replicates")
    args = parser.parse_args(argv)
    reps = 500 if args.quick else 4000
    budget = SearchBudget("example", 6, 3, 100, reps)
    n, n_bins, alpha = 1000, 10, 0.1

    hoeffding = calcheck.get_guarantee("gr21.thm3").function(n=n, n_bins=n_bins, alpha=alpha)
    first_eps = grid_binomial_radius(n, n_bins, alpha)
    mine_eps = exact_binomial_radius(n, n_bins, alpha)
    print(
        f"radius at n={n}, B={n_bins}, alpha={alpha}: first version (grid of p) "
        f"{first_eps:.5f}, exact binomial {mine_eps:.5f}, gr21 Theorem 3 {hoeffding:.4f}\n"
    )
    caught_first = catch_the_first_version(n, n_bins, alpha, reps, budget)

    mine = calcheck.define_guarantee(
        "binomial.umd",
        exact_binomial_radius,
        method="umd",
        event="conditional",
        statement="w.p. >= 1 - alpha every bin of UMD is within the exact binomial radius",
        hypotheses=("binary labels", "lexicographic tie-breaking"),
    )
    wrong = calcheck.define_guarantee(
        "binomial.umd_x08", radius_times_08, method="umd", event="conditional"
    )
    laws = ["uniform_half", "uniform_logistic", "skewed_beta", "two_atoms", "mixture_atoms"]
    result = calcheck.verify(
        mine, laws, n=[200, 1000], n_bins=10, alphas=(0.1, 0.05), reps=reps, rng=0
    )
    print("\nvalid on five laws:", result)
    caught = calcheck.verify(
        wrong, "uniform_half", n=n, n_bins=n_bins, reps=reps, rng=1, expect="violated"
    )
    print("\nthe radius x 0.8 (a negative control):", caught)

    exact = calcheck.exact_coverage(mine, n=n, n_bins=n_bins, alpha=alpha)
    mc = calcheck.verify(mine, "uniform_half", n=n, n_bins=n_bins, reps=reps, rng=2)
    v = mc.cells[0].verdict
    print(
        f"\nat eta = 1/2: exact coverage {exact.coverage:.4f} (claimed {exact.claimed:.2f});"
        f" Monte Carlo {v.coverage:.4f} [{v.ci_low:.4f}, {v.ci_high:.4f}], {reps} replicates"
    )
    eta, failure = worst_constant_eta(n, n_bins, mine_eps, eta_range=(1e-3, 1 - 1e-3))
    print(
        f"every constant eta (lattice scan): the lowest exact coverage is {1 - failure:.4f}, "
        f"at eta = {eta:.6f}, >= {1 - alpha:.2f}"
    )
    naive = radius_at_half(n, n_bins, alpha)
    worse = exact_coverage_at_eta(n, n_bins, 0.48, naive)
    print(
        f"the radius at p = 1/2 and m points only ({naive:.4f}) has exact coverage "
        f"{worse:.4f} at eta = 0.48, below {1 - alpha:.2f}: the supremum over p is needed"
    )

    found = calcheck.search(
        mine,
        "beta_piecewise",
        grid={"n": n, "n_bins": n_bins},
        alpha=alpha,
        budget=budget,
        baseline=False,
    )
    print("\nworst law found:", found.summary())
    ok = result.passed and caught.verdict == "violated" and exact.holds and worse < 1 - alpha
    ok = ok and caught_first and 1 - failure >= 1 - alpha and not found.found
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
