"""gr22 App. G (catalog G18-G22): exact facts of the canonical binnings of the simplex.

Sierpinski binning (G21: counts and volumes, the printed 14 for 13), grid-style binning
(G18 Proposition 2: the bins cover the simplex; G19 Proposition 3: every bin holds a
scaled simplex; G22: equal volumes only for L = 3) and Algorithm 10's occupancy (G20,
also the catalog check ``gr22.alg10.occupancy``). These are identities of fixed partitions
(or, for Algorithm 10, of every tie-free data set), so they are checked exactly: hand
cases, properties over L and the level parameter, exact rational volumes cross-checked with
convex hulls and Dirichlet(1) Monte Carlo (uniform on the simplex).
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats
from scipy.spatial import ConvexHull

from calcheck.bounds import gr22_canonical as stated
from calcheck.simulations import simplex_bins as sb
from calcheck.simulations.calibrators import ProjectionHistogramBinning
from calcheck.simulations.calibrators.projection_binning import (
    cyclic_directions,
    projection_bins,
    projection_thresholds,
    random_directions,
)
from calcheck.simulations.experiments.gr22_canonical import Alg10OccupancyExperiment


def _hull_fraction(vertices: np.ndarray) -> float:
    """Volume of conv(vertices) in Delta^(L-1) over the simplex's (first L-1 coordinates)."""
    L = vertices.shape[1]
    return ConvexHull(vertices[:, :-1]).volume / ConvexHull(np.eye(L)[:, :-1]).volume


def _inside(points: np.ndarray, vertices: np.ndarray, tol=1e-12) -> np.ndarray:
    eq = ConvexHull(vertices[:, :-1]).equations
    return np.all(points[:, :-1] @ eq[:, :-1].T + eq[:, -1] <= tol, axis=1)


def _gof_pvalue(bins, volumes):
    expected = np.array([float(v) for v in volumes]) * len(bins)
    observed = np.bincount(bins, minlength=len(volumes))
    return stats.chisquare(observed, expected).pvalue


# ------------------------------------------------------------------ Sierpinski (G21)
def test_sierpinski_eq18_and_depth2_by_hand():
    s = np.array([[0.7, 0.2, 0.1], [0.2, 0.7, 0.1], [0.1, 0.2, 0.7], [0.4, 0.3, 0.3]])
    assert sb.sierpinski_bin(s, 1).tolist() == [0, 1, 2, 3]
    assert sb.sierpinski_bin([[0.5, 0.5, 0.0], [0.5, 0.25, 0.25]], 1).tolist() == [3, 3]
    # depth 2: t = 2s - e_1 for s_1 > 1/2; paths (0,0), (0,1), (0,3), middle (3,)
    s2 = [[0.9, 0.05, 0.05], [0.6, 0.3, 0.1], [0.6, 0.2, 0.2], [0.3, 0.3, 0.4]]
    assert sb.sierpinski_bin(s2, 2).tolist() == [0, 1, 3, 12]
    assert sb.sierpinski_paths(3, 2)[12] == (3,)


def test_sierpinski_counts_formula_and_the_printed_typo():
    for L in range(2, 7):
        for q in range(1, 5):
            assert len(sb.sierpinski_paths(L, q)) == stated.sierpinski_n_bins(L, q)
    assert [stated.sierpinski_n_bins(3, q) for q in (1, 2, 3)] == [4, 13, 40]
    assert stated.sierpinski_n_bins_as_printed(1) == 4
    assert stated.sierpinski_n_bins_as_printed(3) == 40
    # the typo: App. G.1 prints B = 14 at q = 2; formula and counting (3 * 4 + 1) give 13
    assert (
        stated.sierpinski_n_bins_as_printed(2) == 14 != 3 * 4 + 1 == len(sb.sierpinski_paths(3, 2))
    )
    with pytest.raises(ValueError, match="depth"):
        stated.sierpinski_n_bins_as_printed(4)


def test_sierpinski_volumes_exact_and_equal_only_for_three_classes():
    for L in range(3, 8):
        corner, middle = stated.sierpinski_volume_fractions(L)
        vols = sb.sierpinski_bin_volumes(L, 1)
        assert vols == [Fraction(corner)] * L + [Fraction(middle)]
        assert (corner == middle) == (L == 3)
        assert middle >= corner
        for q in (1, 2, 3):
            assert sum(sb.sierpinski_bin_volumes(L, q)) == 1
    assert sb.sierpinski_bin_volumes(3, 1) == [Fraction(1, 4)] * 4
    assert stated.sierpinski_volume_fractions(4) == (0.125, 0.5)
    assert stated.sierpinski_volume_fractions(5) == (0.0625, 0.6875)


@pytest.mark.parametrize(("L", "q"), [(3, 1), (3, 2), (4, 1), (4, 2), (5, 1)])
def test_sierpinski_geometry_hulls_and_monte_carlo(L, q):
    verts = sb.sierpinski_bin_vertices(L, q)
    vols = sb.sierpinski_bin_volumes(L, q)
    assert [_hull_fraction(v) for v in verts] == pytest.approx([float(v) for v in vols], abs=1e-12)
    s = np.random.default_rng(L * 10 + q).dirichlet(np.ones(L), size=40_000)
    bins = sb.sierpinski_bin(s, q)
    assert _gof_pvalue(bins, vols) > 1e-4
    for b, v in enumerate(verts[:6]):  # each point lies in the polytope of its bin
        assert _inside(s[bins == b], v).all()


# ----------------------------------------------------------- grid (G18, G19, G22)
def test_grid_index_set_sizes():
    assert [len(sb.grid_index_set(3, k)) for k in range(1, 9)] == [
        stated.grid_n_bins_l3(k) for k in range(1, 9)
    ]
    assert stated.grid_n_bins_l3([4, 5]).tolist() == [16, 25]  # Figure 11
    assert len(sb.grid_index_set(4, 4)) == 34
    assert sb.grid_index_set(3, 1).tolist() == [[1, 1, 1]]  # K = 1: the whole triangle


def test_grid_bins_by_hand():
    i4 = [tuple(k) for k in sb.grid_index_set(3, 4)]
    s = np.array([[0.25, 0.25, 0.5], [0.1, 0.3, 0.6]])
    # (1, 1) * 4 = (1, 1, 2) is a vertex: candidates {1,2} x {1,2} x {2,3}, sum in [5, 6]
    assert [i4[b] for b in sb.grid_bin(s, 4)] == [(1, 1, 3), (1, 2, 3)]
    assert sb.grid_cover_index(s, 4).tolist() == [[2, 1, 2], [1, 2, 3]]  # the proof's k
    # a vertex: the printed proof's k = (K + 1, 1, 1) sums to K + L, outside I (a gap)
    assert sb.grid_cover_index_as_printed([[1.0, 0.0, 0.0]], 4).tolist() == [[5, 1, 1]]
    assert sb.grid_cover_index([[1.0, 0.0, 0.0]], 4).tolist() == [[4, 1, 1]]
    assert i4[sb.grid_bin([[1.0, 0.0, 0.0]], 4)[0]] == (4, 1, 1)


def _lattice_and_edge_points(L, K):
    pts = [np.array(j) / K for j in itertools.product(range(K + 1), repeat=L) if sum(j) == K]
    rng = np.random.default_rng(K)
    for _ in range(60):  # one coordinate on a grid face, the others continuous
        j = rng.integers(0, K + 1)
        rest = rng.dirichlet(np.ones(L - 1)) * (1 - j / K)
        pts.append(np.insert(rest, rng.integers(0, L), j / K))
    return np.array(pts)


@pytest.mark.parametrize(("L", "K"), [(3, 4), (3, 5), (4, 4), (4, 3), (5, 3)])
def test_prop2_cover_and_lexicographic_assignment(L, K):
    rng = np.random.default_rng(L + K)
    s = np.vstack([rng.dirichlet(np.ones(L), size=300), _lattice_and_edge_points(L, K)])
    index = sb.grid_index_set(L, K)
    codes = {tuple(r) for r in index}
    k = sb.grid_cover_index(s, K)  # Proposition 2's construction, corrected at the vertices
    assert sb.grid_contains(s, k, K).all()
    assert {tuple(r) for r in k} <= codes
    printed = sb.grid_cover_index_as_printed(s, K)
    assert sb.grid_contains(s, printed, K).all()
    outside = np.array([tuple(r) not in codes for r in printed])
    vertex = np.isclose(s.max(axis=1), 1.0)
    assert vertex.any()
    assert (outside == vertex).all()
    x = s[:, None, :] * K
    member = np.all((x >= index - 1 - 1e-9) & (x <= index + 1e-9), axis=-1)  # (m, |I|)
    assert member.any(axis=1).all()
    assert (sb.grid_bin(s, K) == np.argmax(member, axis=1)).all()  # lexicographic min
    # off the faces exactly one bin contains the point
    assert (member[:300].sum(axis=1) == 1).all()


@pytest.mark.parametrize("L", [3, 4, 5])
def test_prop3_every_bin_contains_a_scaled_simplex_exactly(L):
    for K in range(1, 6 if L < 5 else 4):
        for k in sb.grid_index_set(L, K):
            u, v, tau = sb.grid_inner_simplex(k, K)
            assert 0 <= tau < 1
            assert v > 0
            for j in range(L):
                vertex = [u[i] + (v if i == j else 0) for i in range(L)]
                assert sum(vertex) == 1
                assert min(vertex) >= 0
                assert all(k[i] - 1 <= vertex[i] * K <= k[i] for i in range(L))
    # control: k outside I (sum k = K) gives tau = 1, v = 0 -- a degenerate "bin"
    _, v, tau = sb.grid_inner_simplex([1, 1, 2], 4)
    assert (tau, v) == (1, 0)


def test_grid_volumes_equal_only_for_three_classes():
    for K in range(1, 9):
        assert sb.grid_bin_volumes(3, K) == [Fraction(1, stated.grid_n_bins_l3(K))] * K**2
    for L in (4, 5, 6):
        for K in (1, 2, 3):
            vols = sb.grid_bin_volumes(L, K)
            assert sum(vols) == 1
            assert (len(set(vols)) == 1) == (K == 1)  # unequal once there are two bins
    assert sorted(set(sb.grid_bin_volumes(4, 4))) == [Fraction(1, 64), Fraction(4, 64)]


@pytest.mark.parametrize(("L", "K"), [(3, 5), (4, 3), (4, 4), (5, 2)])
def test_grid_volumes_hulls_and_monte_carlo(L, K):
    vols = sb.grid_bin_volumes(L, K)
    for k, vol in zip(sb.grid_index_set(L, K), vols, strict=True):
        m = K + L - int(k.sum())
        corners = [np.array(c) for c in itertools.product((0, 1), repeat=L) if sum(c) == m]
        verts = np.array([(k - 1 + c) / K for c in corners])
        if L == 3 or len(verts) > L - 1:
            assert _hull_fraction(verts) == pytest.approx(float(vol), abs=1e-12)
    s = np.random.default_rng(7 * L + K).dirichlet(np.ones(L), size=40_000)
    assert _gof_pvalue(sb.grid_bin(s, K), vols) > 1e-4


# ------------------------------------------------------------------- Algorithm 10 (G20)
def test_alg10_by_hand():
    g = np.array(
        [[0.9, 0.05, 0.05], [0.8, 0.1, 0.1], [0.7, 0.2, 0.1], [0.2, 0.5, 0.3], [0.1, 0.1, 0.8]]
    )
    y = np.array([0, 1, 0, 1, 2])
    cal = ProjectionHistogramBinning(2).fit(g, y)  # c = 3, q_1 = -e_1
    assert cal.thresholds_.tolist() == [-0.7, 1.01]
    assert cal.interior_counts_.tolist() == [2, 2] == [stated.alg10_interior_count(5, 2)] * 2
    assert cal.bin_probs_.tolist() == [[0.5, 0.5, 0.0], [0.0, 0.5, 0.5]]
    assert cal.predict_bin([[0.75, 0.2, 0.05], [0.6, 0.2, 0.2]]).tolist() == [0, 1]


def test_alg10_occupancy_on_tie_free_data_is_exact():
    rng = np.random.default_rng(3)
    for _ in range(200):
        L, B = int(rng.integers(2, 6)), int(rng.integers(1, 30))
        n = int(rng.integers(max(B - 1, 1), 300))
        g = rng.dirichlet(np.full(L, rng.uniform(0.3, 3)), size=n)
        q = cyclic_directions(L, B) if rng.random() < 0.5 else random_directions(L, B, rng=rng)
        p = g @ q.T
        bins, interior = projection_bins(p, projection_thresholds(p, B))
        counts = np.bincount(bins[interior], minlength=B)
        c = (n + 1) // B
        assert (counts[:-1] == c - 1).all()
        assert counts[-1] == n - (B - 1) * c
        assert counts.min() >= stated.alg10_interior_count(n, B)
        assert stated.alg10_interior_count(n, B) >= stated.alg10_interior_count_floor_n(n, B)
        assert B == 1 or counts.min() < c  # the bound without its "- 1" fails


def test_alg10_with_ties_leaves_bins_short():
    g = np.tile([0.5, 0.3, 0.2], (8, 1))  # one atom: every projection ties
    cal = ProjectionHistogramBinning(3).fit(g, np.zeros(8, int))
    assert cal.thresholds_[1] == -np.inf  # the first cut removed all 8 points
    assert cal.interior_counts_.tolist() == [0, 0, 0] != [stated.alg10_interior_count(8, 3)] * 3
    assert np.allclose(cal.bin_probs_, 1 / 3)  # empty bins predict 1/L
    out = Alg10OccupancyExperiment(60, 6, 3, scores="atoms").simulate(np.random.default_rng(0), 20)
    assert (out.min_interior < stated.alg10_interior_count(60, 6)).mean() > 0.5


def test_alg10_experiment_and_validation():
    exp = Alg10OccupancyExperiment(101, 7, 4, "random", concentration=0.5)
    out = exp.simulate(np.random.default_rng(1), 30)
    assert (out.interior[:, :-1] == 13).all()
    assert (out.min_interior == 13).all()
    with pytest.raises(ValueError, match="directions"):
        ProjectionHistogramBinning(3, directions="sideways")
    with pytest.raises(ValueError, match="unit"):
        ProjectionHistogramBinning(2, directions=[[1, 0], [1, 1]]).fit([[0.5, 0.5]] * 3, [0, 1, 0])
    with pytest.raises(ValueError, match="n_bins"):
        ProjectionHistogramBinning(5).fit([[0.5, 0.5]] * 3, [0, 1, 0])
    with pytest.raises(ValueError, match="sum to 1"):
        sb.sierpinski_bin([[0.5, 0.6, 0.0]], 1)
    with pytest.raises(ValueError, match="n_bins"):
        stated.alg10_interior_count(3, 5)
