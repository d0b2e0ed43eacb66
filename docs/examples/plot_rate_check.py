r"""
Check a rate with an unspecified constant
=========================================

Many sample-size results hold "for a universal constant c": klm19 Lemma 4.3 says that
uniform-mass bins fitted on n points are 2-well-balanced (every bin has probability between
1/(2B) and 2/B) with probability at least 1 - delta once :math:`n \ge c\, B \log(B/\delta)`.
No fixed n can be checked against such a claim. What it does claim is that the *threshold*
n*(B), the smallest n at which the event holds with probability 1 - delta, grows no faster
than h(B) = B log(B/delta): n*/h stays bounded.

A :class:`~calcheck.theory_checks.series.rates.RateCheck` measures n* for B from 10 to 3000 (the
coverage of the event on a geometric grid of n, interpolated where it crosses 1 - delta),
fits the slope of log n* on log h and decides with a bootstrap lower confidence bound of the
slope against 1 (plus a stated slack for lower-order terms on a finite range). A negative
control claims a wrong rate on the same simulated data. Rate checks are catalog checks with
no one-call entry point in :mod:`calcheck`; this example runs them the way
``calcheck run --checks klm19.lem43`` does.
"""

# %%
# The catalog's check, its control and one of our own
# ----------------------------------------------------
# The klm19 catalog ships the check (``klm19.lem43``) and a control that claims the rate B
# without the log. A wrong rate of our own is the same check with another ``h``: here
# :math:`B^{0.9} \log(B/\delta)`, a rate only slightly too fast.

import dataclasses

import matplotlib.pyplot as plt
import numpy as np

from calcheck.simulations.store import ResultStore
from calcheck.theory_checks.catalog import klm19
from calcheck.theory_checks.checks.events import BoundRule
from calcheck.theory_checks.running.runner import run_checks

catalog = {check.id: check for check in klm19.checks("quick")}
stated = catalog["klm19.lem43"]
no_log = catalog["klm19.lem43.control.no_log"]
DELTA = klm19.DELTA  # 0.1: n* is where the coverage reaches 0.9


def rate_b_to_09(symbols, alpha):
    """h(B) = B^0.9 log(B/delta): the rate our wrong claim names (alpha is unused)."""
    b = symbols["n_bins"]
    return b**0.9 * np.log(b / DELTA)


mine = dataclasses.replace(
    stated,
    id="mine.lem43.control.b_to_0.9",
    expect="violated",
    bound=BoundRule(
        "B^0.9 log(B/delta)",
        function=rate_b_to_09,
        description="Lemma 4.3 claimed at n >= c B^0.9 log(B/delta)",
    ),
)
print(stated.description)
print("B values:", [int(e.n_bins) for e in stated.series[0].experiments])

# %%
# The three checks read the same experiments, simulated once (1000 replicates per grid
# point; the quick budget uses 4000). The root seed makes the run reproducible.

with ResultStore(":memory:") as store:
    run = run_checks([stated, no_log, mine], store, reps=1000, root_seed=0, n_jobs=1)
for result in run.results:
    print(result)
assert all(result.passed for result in run.results)

# %%
# n* grows like :math:`B^{1.18}` over this range, and the slope on
# :math:`\log(B \log(B/\delta))` is 1.04, within the slack of 0.1 that the catalog allows
# because n*/(B log(B/delta)) still rises from about 3 at B = 10 towards its large-deviation
# limit 5.2. Claimed at the rate B, the slope is 1.18 and its lower confidence bound (1.17) is
# above 1.1: the control is flagged, and so is :math:`B^{0.9} \log(B/\delta)` (slope 1.14).
#
# The pictures: the thresholds against the claimed rate h on log-log axes (a claim that
# holds stays on or below a line of slope 1, dotted), and n*/h against B for each claimed
# rate (bounded only for the right one).

stated_result = run.results[0]
fig, axes = plt.subplots(1, 2, figsize=(10, 3.9), layout="constrained")
stated_result.plot(ax=axes[0])
ax = axes[1]
names = ("B log(B/delta) (stated)", "B (no log)", "B^0.9 log(B/delta)")
for result, name, color in zip(run.results, names, ("C0", "C3", "C1"), strict=True):
    series = result.series[0]
    ratio = np.asarray(series.n_star) / np.asarray(series.h)
    ax.loglog(
        series.theta, ratio, "o-", ms=4, color=color, label=f"h = {name}: slope {series.slope:.2f}"
    )
ax.set_xlabel("number of bins B")
ax.set_ylabel("n* / h(B)")
ax.set_title("a right rate keeps n*/h bounded", fontsize=9)
ax.legend(fontsize=7)
plt.show()
