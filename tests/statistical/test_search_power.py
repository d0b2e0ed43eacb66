"""The search's own power on a scaled bound whose worst case is known exactly.

At n = 1000, B = 20, alpha = 0.01 gr21 Theorem 3 times 0.8 fails at eta = 1/2 with exact
probability 0.0272 (> alpha): from every seed of the stated range the quick search must flag
it on the fresh seed, reach that worst case within Monte Carlo error, and keep the stated
bound consistent there. ``calcheck search --power`` measures the same over 20 seeds for
every row of the documented table (docs, "How powerful is the search?").
"""

from __future__ import annotations

import pytest

from calcheck.theory_checks.search_power import search_power

pytestmark = pytest.mark.statistical


def test_quick_search_flags_gr21_thm3_times_0_8_and_reaches_the_worst_case(seed):
    power = search_power(
        "gr21.thm3.times_0.8", "beta_piecewise", grid={"n": 1000, "n_bins": 20}, alpha=0.01,
        seeds=1, first_seed=1000 * seed,
    )  # fmt: skip
    record = power.records[0]
    assert power.reference == pytest.approx(0.02726, abs=1e-4)  # the worst constant eta
    assert record["outcome"] == "violated", record
    assert power.reached == 1, record
    assert power.above == 0, record
    assert record["stated_outcome"] == "consistent", record
