"""The vectorised fast paths of the gpr20 and gr22 experiments equal the generic code."""

import numpy as np

from simulations.calibrators.binning import RandomizedUniformMassBinning
from simulations.calibrators.edges import bin_index_from_edges, uniform_mass_edges
from simulations.experiments.gpr20_shift import _flat_bin_index
from simulations.experiments.gr22 import _sort_binary_labels


def test_flat_bin_index_matches_bin_index_from_edges():
    rng = np.random.default_rng(0)
    x = rng.random((7, 300))
    edges = uniform_mass_edges(np.sort(rng.random((7, 40)), axis=1), 5)
    x[:, :4] = edges[:, 1:-1]  # values on an edge go to the upper bin
    expected = bin_index_from_edges(x, edges) + 5 * np.arange(7)[:, None]
    np.testing.assert_array_equal(_flat_bin_index(x, edges), expected)


def test_sort_binary_labels_matches_fit_batch():
    for atoms in (False, True):  # continuous rows, and rows with ties (U drawn)
        rng = np.random.default_rng(1)
        s = rng.choice([0.0, 0.2, 0.7, 1.0], (6, 80)) if atoms else rng.random((6, 80))
        y = (rng.random(s.shape) < 0.4).astype(float)
        cal = RandomizedUniformMassBinning(4)
        a = cal.fit_batch(s, y, 4, np.random.default_rng(2))
        b = cal.fit_sorted_batch(*_sort_binary_labels(s, y, np.random.default_rng(2)), 4, None)
        for name in ("lower_s", "lower_u", "upper_s", "upper_u", "values", "counts"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
