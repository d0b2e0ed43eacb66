"""Shared fixtures and the statistical tier's size and seeds.

Statistical tests are seeded and must hold for **every** seed in :data:`SEED_RANGE` (each
check runs at a false-alarm rate small enough that a clean run of all seeds is expected).
By default CI runs the first :data:`CI_SEEDS` seeds; ``CALCHECK_SEEDS=all`` runs the whole
range, ``CALCHECK_SEEDS=7`` or ``CALCHECK_SEEDS=3-9`` a chosen part of it.

Sizes: CI-sized by default; ``CALCHECK_FULL=1`` runs the statistical tier at the quick
budget of ``calcheck run`` and ``CALCHECK_FULL=full`` at the full budget.
"""

from __future__ import annotations

import os

import pytest

# The suite tests calcheck's own papers: installed paper plugins (the calcheck.papers entry
# points) stay off unless a test turns them on (tests/theory_checks/catalog/test_plugins.py).
os.environ.setdefault("CALCHECK_PLUGINS", "0")


@pytest.fixture(autouse=True, scope="module")
def _forget_guarantees_defined_at_run_time():
    """A module's calcheck.define_guarantee calls never reach the next module's registry."""
    yield
    from calcheck.theory_checks.user.guarantees import _forget_all

    _forget_all()


#: Seeds for which every statistical test is stated to hold.
SEED_RANGE = range(20)
#: Seeds run by default (CI): one, so that the default run stays under 8 minutes on two
#: cores; the others run on demand (CALCHECK_SEEDS).
CI_SEEDS = 1

_FULL = os.environ.get("CALCHECK_FULL", "")
#: Budget name of the statistical tier ("quick" unless CALCHECK_FULL=full).
STAT_BUDGET = "full" if _FULL == "full" else "quick"
#: Replicates per cell of the statistical tier: 1000 at CI size (a shortfall of about 0.05
#: below 1 - alpha is detected with power 0.9), the budget's otherwise.
STAT_REPS = None if _FULL else 1000


def _selected_seeds() -> list[int]:
    text = os.environ.get("CALCHECK_SEEDS", "").strip()
    if not text:
        return list(SEED_RANGE)[:CI_SEEDS]
    if text == "all":
        return list(SEED_RANGE)
    if "-" in text:
        lo, hi = (int(x) for x in text.split("-"))
        seeds = list(range(lo, hi + 1))
    else:
        seeds = [int(x) for x in text.split(",")]
    outside = [s for s in seeds if s not in SEED_RANGE]
    if outside:
        raise pytest.UsageError(
            f"CALCHECK_SEEDS {outside} outside the stated range "
            f"{SEED_RANGE.start}-{SEED_RANGE.stop - 1}"
        )
    return seeds


def pytest_generate_tests(metafunc):
    """Parametrise every test that takes ``seed`` over the selected seeds."""
    if "seed" in metafunc.fixturenames:
        metafunc.parametrize("seed", _selected_seeds(), scope="module")


@pytest.fixture
def rng(request):
    """A numpy Generator seeded from the test's node id (independent across tests)."""
    import zlib

    import numpy as np

    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))
