"""Every example's claim about a radius, through exact coverage (issue 35, part 5).

The examples (``examples/*.py`` and the gallery's ``docs/examples/plot_*.py``) claim that
radii hold or fail. On uniform-mass binning at constant eta those claims have exact answers
(gr21 Lemma 2: independent binomial bins), so each is checked here without Monte Carlo:

* a radius claimed valid has exact coverage >= 1 - alpha at **every** constant eta: a
  lattice scan (:func:`calcheck.simulations.conditional_coverage.worst_constant_eta` over
  (0.001, 0.999), with every lattice line ``k/m +- eps`` where the coverage jumps) and, for
  the examples' exact binomial radius, the certificate ``prod_b (1 - sup_p tail_b) >=
  1 - alpha`` (:func:`calcheck.simulations.binomial_sup.sup_binomial_tail`), which holds
  for every eta and every law;
* a radius claimed wrong has exact coverage < 1 - alpha at its worst constant eta.

The examples' own code is read without running them: ``examples/own_bound.py`` is imported
(its work is in ``main``); a gallery script's imports, functions and upper-case constants
are executed, not its cells (``_definitions``).
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import numpy as np
import pytest

import calcheck
from calcheck.simulations.binomial_sup import sup_binomial_tail
from calcheck.simulations.conditional_coverage import worst_constant_eta
from calcheck.simulations.exact_coverage import bin_point_counts

ROOT = Path(__file__).resolve().parent.parent
EVERY_ETA = (1e-3, 1 - 1e-3)


def _module(path: Path):
    spec = importlib.util.spec_from_file_location(f"example_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _definitions(path: Path) -> dict:
    """A gallery script's imports, functions and UPPER_CASE constants, executed (no cells)."""
    tree = ast.parse(path.read_text())
    keep = [
        node
        for node in tree.body
        if isinstance(node, ast.Import | ast.ImportFrom | ast.FunctionDef)
        or (
            isinstance(node, ast.Assign)
            and all(isinstance(t, ast.Name) and t.id.isupper() for t in node.targets)
        )
    ]
    namespace: dict = {}
    exec(compile(ast.Module(keep, []), str(path), "exec"), namespace)
    return namespace


@pytest.fixture(scope="module")
def own_bound():
    return _module(ROOT / "examples" / "own_bound.py")


@pytest.fixture(scope="module")
def gallery_own_bound():
    return _definitions(ROOT / "docs" / "examples" / "plot_own_bound.py")


@pytest.fixture(scope="module")
def gallery_regression():
    return _definitions(ROOT / "docs" / "examples" / "plot_pytest_regression.py")


def _lowest(eps, n, n_bins, event="conditional", scheme="umd"):
    eta, failure = worst_constant_eta(
        n, n_bins, eps, event=event, scheme=scheme, eta_range=EVERY_ETA
    )
    return eta, 1.0 - failure


def _certificate(eps, n, n_bins):
    """prod_b (1 - sup_p P(|Bin(m_b, p)/m_b - p| > eps)): a lower bound for every law."""
    return float(
        np.prod([1.0 - sup_binomial_tail(int(m), eps)[0] for m in bin_point_counts(n, n_bins)])
    )


#: (n, B, alpha) of the examples' claims, and a few more.
OWN_BOUND_CELLS = [
    (200, 10, 0.1),
    (200, 10, 0.05),
    (300, 10, 0.1),
    (1000, 10, 0.1),
    (1000, 10, 0.05),
    (3000, 20, 0.1),
]


@pytest.mark.parametrize(("n", "n_bins", "alpha"), OWN_BOUND_CELLS)
@pytest.mark.parametrize("source", ["examples/own_bound.py", "docs/examples/plot_own_bound.py"])
def test_the_exact_binomial_radius_holds_at_every_constant_eta(
    source, n, n_bins, alpha, own_bound, gallery_own_bound
):
    radius = (
        own_bound.exact_binomial_radius
        if source.startswith("examples")
        else gallery_own_bound["exact_binomial_radius"]
    )
    eps = radius(n, n_bins, alpha)
    eta, lowest = _lowest(eps, n, n_bins)
    assert lowest >= 1 - alpha, f"{source}: exact coverage {lowest:.5f} at eta = {eta:.6f}"
    assert _certificate(eps, n, n_bins) >= 1 - alpha
    assert eps < calcheck.get_guarantee("gr21.thm3").function(n=n, n_bins=n_bins, alpha=alpha)


def test_the_first_version_fails_as_the_example_says(own_bound, gallery_own_bound):
    """The sup over a 2001-point grid of p: 0.13127, exact coverage 0.8923 near eta = 0.495."""
    for radius in (own_bound.grid_binomial_radius, gallery_own_bound["grid_binomial_radius"]):
        eps = radius(1000, 10, 0.1)
        assert round(eps, 5) == 0.13127
        eta, lowest = _lowest(eps, 1000, 10)
        assert round(lowest, 4) == 0.8923
        assert abs(eta - 0.5) == pytest.approx(0.005006, abs=1e-5)
        # a check at eta = 1/2 alone passes it
        assert calcheck.exact_coverage(
            calcheck.define_guarantee("mine.grid", radius, method="umd", event="conditional"),
            n=1000,
            n_bins=10,
            alpha=0.1,
        ).holds


@pytest.mark.parametrize(("m", "eps"), [(4, 0.3), (99, 0.13127), (100, 0.0517), (20, 0.25)])
def test_the_examples_exact_tail_is_the_supremum(m, eps, own_bound, gallery_own_bound):
    sup, _ = sup_binomial_tail(m, eps)
    assert own_bound._worst_tail(m, eps) == pytest.approx(sup, abs=1e-12)
    assert gallery_own_bound["worst_tail"](m, eps) == pytest.approx(sup, abs=1e-12)
    # a grid's maximum never exceeds the supremum, and a fine one approaches it from below
    p = np.linspace(0, 1, 100_001)
    from scipy import stats

    grid = stats.binom.cdf(np.ceil(m * (p - eps)) - 1, m, p) + stats.binom.sf(
        np.floor(m * (p + eps)), m, p
    )
    assert grid.max() <= sup + 1e-12
    assert grid.max() >= sup - 1e-3


def test_the_shortcut_at_one_half_fails(own_bound):
    eps = own_bound.radius_at_half(1000, 10, 0.1)
    assert _lowest(eps, 1000, 10)[1] < 0.9


#: Paper guarantees the gallery says hold at n = 1000, B = 10, alpha = 0.1 (plot_exact_coverage,
#: plot_search_worst_law, plot_pytest_regression, plot_verify_own_law at n = 300 too).
PAPER_CLAIMS = [
    ("gr21.thm3", 1000),
    ("gr21.thm3", 300),
    ("gr21.thm4.marginal", 1000),
    ("nch14.thm31", 1000),
]


@pytest.mark.parametrize(("gid", "n"), PAPER_CLAIMS)
def test_paper_radii_the_gallery_calls_valid_hold_at_every_constant_eta(gid, n):
    at_half = calcheck.exact_coverage(gid, n=n, n_bins=10, alpha=0.1)
    eta, lowest = _lowest(at_half.eps, n, 10, at_half.event, at_half.scheme)
    assert lowest >= 0.9, f"{gid}: {lowest:.5f} at eta = {eta:.6f}"


def test_radii_the_gallery_calls_wrong_fail_exactly(gallery_regression):
    # plot_search_worst_law: Theorem 3 times 0.7 (exact worst failure about 0.23)
    eps = 0.7 * calcheck.exact_coverage("gr21.thm3", n=1000, n_bins=10, alpha=0.1).eps
    assert _lowest(eps, 1000, 10)[1] < 0.8
    # plot_pytest_regression: without the union bound (Theorem 4's eps1 for every bin)
    eps = gallery_regression["radius_without_union_bound"](1000, 10, 0.1)
    assert _lowest(eps, 1000, 10)[1] < 0.9


def test_the_scan_range_is_validated():
    for bad in ((0.0, 0.5), (0.6, 0.4), (0.1,), "wide"):
        with pytest.raises(ValueError, match="eta_range"):
            worst_constant_eta(1000, 10, 0.1, eta_range=bad)
