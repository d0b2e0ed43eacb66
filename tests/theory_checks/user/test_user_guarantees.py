"""A guarantee of your own: define_guarantee through every entry point (issue 24)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import calcheck
from calcheck.bounds import registry
from calcheck.simulations.search import SearchBudget
from calcheck.simulations.store import ResultStore
from calcheck.testing import assert_guarantee_holds, assert_guarantee_violated
from calcheck.theory_checks.cli.main import main

TINY = SearchBudget("tiny", 6, 2, 100, 400)


def thm3_by_hand(n, n_bins, alpha):
    """gr21 Theorem 3, eq. (8), written as a user would."""
    return np.sqrt(np.log(2 * n_bins / alpha) / (2 * (np.floor(n / n_bins) - 1)))


def thm3_times_075(n, n_bins, alpha):
    return 0.75 * thm3_by_hand(n, n_bins, alpha)


@pytest.fixture(scope="module")
def mine():
    return calcheck.define_guarantee("mine.thm", thm3_by_hand, method="umd", event="conditional")


@pytest.fixture(scope="module")
def mine_075():
    return calcheck.define_guarantee(
        "mine.thm.x075", thm3_times_075, method="umd", event="conditional"
    )


ARGS = {"n": 1000, "n_bins": 10, "alphas": (0.1,), "reps": 2000, "rng": 0}


def test_verify_the_issues_example(mine, mine_075):
    ok = calcheck.verify(mine, "uniform_half", **ARGS)
    assert ok.verdict == "consistent"
    assert ok.passed
    assert ok.check.guarantee == "mine.thm"
    # the same numbers as the paper's registered Theorem 3 on the same seed
    paper = calcheck.verify("gr21.thm3", "uniform_half", **ARGS)
    assert ok.cells[0].verdict == paper.cells[0].verdict
    assert ok.detectable_factor == paper.detectable_factor
    bad = calcheck.verify(mine_075, "uniform_half", **ARGS)
    assert bad.verdict == "violated"
    # an id works as well as the object once defined
    assert calcheck.verify("mine.thm", "uniform_half", **ARGS).cells == ok.cells


def test_testing_helpers_accept_a_defined_guarantee(mine, mine_075):
    assert_guarantee_holds(mine, "uniform_logistic", n=1000, n_bins=10, reps=1000, rng=1)
    assert_guarantee_violated(mine_075, "uniform_half", n=1000, n_bins=10, reps=1000, rng=1)
    with pytest.raises(AssertionError, match=r"mine\.thm\.x075 was expected consistent"):
        assert_guarantee_holds(mine_075, "uniform_half", n=1000, n_bins=10, reps=1000, rng=1)


def test_search_on_a_defined_guarantee_in_two_processes(mine):
    # n_jobs=2: the workers start without the definition and must receive it
    res = calcheck.search(
        mine,
        "beta_piecewise",
        grid={"n": 1000, "n_bins": 10},
        alpha=0.1,
        budget=TINY,
        n_jobs=2,
        baseline=False,
    )
    assert res.guarantee == "mine.thm"
    assert res.search.fresh.outcome == "consistent"
    exact = calcheck.exact_coverage(mine, n=1000, n_bins=10, alpha=0.1)
    assert res.reference["failure_at_half"] == pytest.approx(exact.failure, abs=0)  # eta = 1/2
    assert res.reference["failure"] >= exact.failure  # the worst constant eta
    one = calcheck.search(
        "mine.thm.times_0.5",
        "beta_piecewise",
        grid={"n": 1000, "n_bins": 10},
        alpha=0.1,
        budget=TINY,
        baseline=False,
    )
    assert one.search.fresh.outcome == "violated"


def test_exact_coverage_of_a_defined_guarantee_matches_the_papers(mine):
    mine_exact = calcheck.exact_coverage(mine, n=1000, n_bins=10, alpha=0.1)
    paper = calcheck.exact_coverage("gr21.thm3", n=1000, n_bins=10, alpha=0.1)
    assert mine_exact.coverage == paper.coverage
    assert mine_exact.eps == paper.eps
    assert mine_exact.holds
    assert mine_exact.scheme == "umd"
    assert mine_exact.eta == 0.5
    # beside the Monte Carlo of the same event at eta = 1/2: within 3 standard errors
    mc = calcheck.verify(mine, "uniform_half", **ARGS).cells[0].verdict.coverage
    se = np.sqrt(paper.coverage * (1 - paper.coverage) / 2000)
    assert abs(mc - paper.coverage) < 3 * se
    ums = calcheck.define_guarantee("mine.ums", thm3_by_hand, method="ums", event="conditional")
    with pytest.raises(ValueError, match=r"exact coverage does not apply to .mine\.ums."):
        calcheck.exact_coverage(ums, n=1000, n_bins=10, alpha=0.1)


def test_sharper_control_on_a_fresh_seed(mine):
    result = calcheck.verify(mine, "uniform_half", **ARGS)
    control = calcheck.sharper_control(result, rng=12345)
    assert control.check.expect == "violated"
    assert control.verdict == "violated"
    assert control.check.id == "study:mine.thm.control.times_0.65"  # 0.9 x 0.77 -> 0.65
    mean = calcheck.define_guarantee(
        "mine.mean", lambda n, n_bins: 0.5, method="umd", event="ece_mean"
    )
    res = calcheck.verify(mean, "uniform_half", n=200, n_bins=10, reps=200, rng=0)
    # an expectation cell reports the factor it can detect (the test of 1 - f b), so its
    # sharper control exists: the bound times 0.05 (0.9 x 0.099, rounded down to 0.05)
    assert res.detectable_factor == pytest.approx(0.099, abs=0.002)
    mean_control = calcheck.sharper_control(res, rng=1)
    assert mean_control.check.id == "study:mine.mean.control.times_0.05"
    assert mean_control.verdict == "violated"


def test_study_file_names_a_bound_as_module_function(tmp_path):
    (tmp_path / "my_radius_module.py").write_text(
        "import numpy as np\n\n"
        "def radius(n, n_bins, alpha):\n"
        "    return np.sqrt(np.log(2 * n_bins / alpha) / (2 * (np.floor(n / n_bins) - 1)))\n"
    )
    study = tmp_path / "s.toml"
    study.write_text(
        'guarantee = "mine.study"\nbound = "my_radius_module:radius"\nmethod = "umd"\n'
        'event = "conditional"\ncontrols = [0.75]\nlaws = ["uniform_half"]\nreps = 1000\n'
        "alphas = [0.1]\n[grid]\nn = [1000]\nn_bins = [10]\n"
    )
    out = tmp_path / "out"
    assert main(["run", "--study", str(study), "--out", str(out)]) == 0
    checks = {c["id"]: c for c in json.loads((out / "results.json").read_text())["checks"]}
    assert checks["study:mine.study"]["verdict"] == "consistent"
    assert checks["study:mine.study.control.times_0.75"]["verdict"] == "violated"
    assert "mine.study" in (out / "report.html").read_text()


@pytest.mark.parametrize(
    ("text", "match"),
    [
        (
            'bound = "nowhere_module_x:radius"\nmethod = "umd"\nevent = "conditional"\n',
            "cannot import 'nowhere_module_x'",
        ),
        (
            'bound = "json:nothing_here"\nmethod = "umd"\nevent = "conditional"\n',
            "has no attribute 'nothing_here'",
        ),
        ('bound = "no colon"\nmethod = "umd"\nevent = "conditional"\n', "package.module:name"),
        ('bound = "json:dumps"\nmethod = "umd"\n', "needs bound, method and event"),
        (
            'bound = "math:sqrt"\nmethod = "umd"\nevent = "conditional"\n',
            "cannot be read|named keywords only",
        ),
    ],
)
def test_study_file_errors_name_the_key(tmp_path, text, match):
    from calcheck.theory_checks.study.files import load_study

    study = tmp_path / "s.toml"
    study.write_text(
        'guarantee = "mine.err"\n' + text + 'laws = ["uniform_half"]\n[grid]\nn = [100]\n'
        "n_bins = [5]\n"
    )
    with pytest.raises(ValueError, match=match):
        load_study(study)


def test_bad_definitions_are_refused_with_what_is_available():
    define = calcheck.define_guarantee
    with pytest.raises(ValueError, match=r"asks for \['k'\].*available: \['alpha', 'delta'"):
        define("mine.k", lambda n, k, alpha: 1.0, method="umd", event="conditional")
    with pytest.raises(ValueError, match="named keywords only"):
        define("mine.kw", lambda **kw: 1.0, method="umd", event="conditional")
    with pytest.raises(ValueError, match=r"method must be one of \[.*'umd'"):
        define("mine.m", thm3_by_hand, method="nope", event="conditional")
    with pytest.raises(ValueError, match=r"event must be one of \[.*'marginal'"):
        define("mine.e", thm3_by_hand, method="umd", event="nope")
    with pytest.raises(ValueError, match="quantifier must be 'conditional'"):
        define("mine.q", thm3_by_hand, method="umd", event="conditional", quantifier="marginal")
    for taken in ("gr21.thm3", "gr21.my_variant"):
        with pytest.raises(ValueError, match="starts with 'gr21', a paper's key"):
            define(taken, thm3_by_hand, method="umd", event="conditional")
    for bad_id in ("nodot", "x.control.y", "x.times_0.5", "", 3):
        with pytest.raises(ValueError, match="id must look like"):
            define(bad_id, thm3_by_hand, method="umd", event="conditional")
    # alpha-free events do not supply alpha
    with pytest.raises(ValueError, match=r"asks for \['alpha'\]"):
        define("mine.a", thm3_by_hand, method="umd", event="ece_mean")
    assert registry.get("gr21.thm3").function.__module__ == "calcheck.bounds.gr21"


def test_nan_from_a_bound_is_an_error():
    nan = calcheck.define_guarantee(
        "mine.nan", lambda n, n_bins, alpha: float("nan"), method="umd", event="conditional"
    )
    with pytest.raises(ValueError, match=r"the bound of mine.nan returned \[?nan"):
        calcheck.verify(nan, "uniform_half", n=100, n_bins=5, reps=100, rng=0)


def test_redefinition_replaces_and_never_reads_the_old_records(tmp_path):
    with ResultStore(tmp_path / "s.sqlite") as store:
        a = calcheck.define_guarantee(
            "mine.redef", lambda n, n_bins, alpha: 0.5, method="umd", event="conditional"
        )
        first = calcheck.verify(a, "uniform_half", n=200, n_bins=5, reps=200, rng=0, store=store)
        from calcheck.theory_checks.running.runner import run_checks

        # a recorded result keyed by the definition: same check, redefined bound
        b = calcheck.define_guarantee(
            "mine.redef", lambda n, n_bins, alpha: 0.01, method="umd", event="conditional"
        )
        second = calcheck.verify(b, "uniform_half", n=200, n_bins=5, reps=200, rng=0, store=store)
        assert run_checks is not None
    assert first.verdict == "consistent"
    assert second.verdict == "violated"
    assert registry.get("mine.redef").function(n=1, n_bins=1, alpha=0.1) == 0.01


def test_laws_by_name_and_unknown_names():
    with pytest.raises(ValueError, match=r"unknown law name .nope..*uniform_half"):
        calcheck.verify("gr21.thm3", "nope", n=100, n_bins=5, reps=100, rng=0)
    res = calcheck.verify(
        "gr21.thm3", ["uniform_half", "two_atoms"], n=200, n_bins=5, reps=100, rng=0
    )
    assert [c.law for c in res.cells] == ["uniform_half", "two_atoms"]


def test_top_label_guarantee_of_your_own():
    def eps2(n, points_per_bin, n_classes, alpha):
        # gr22 Theorem 1, eq. (9), by hand
        return np.sqrt(np.log(2 * n / (points_per_bin * alpha)) / (2 * (points_per_bin - 1)))

    tl = calcheck.define_guarantee("mine.tl", eps2, method="tl_hb", event="conditional")
    res = calcheck.verify(
        tl, "tl_balanced_half", n=600, points_per_bin=20, alphas=(0.1,), reps=500, rng=0
    )
    assert res.verdict == "consistent"
    assert res.cells[0].bound == pytest.approx(eps2(600, 20, 3, 0.1))


def test_joint_class_wise_guarantee_of_your_own():
    def eps14(n, points_per_bin, n_classes, alpha):
        # gr22 eq. (14) with alpha_l = alpha / L, by hand
        return np.sqrt(
            np.log(2 * n * n_classes / (points_per_bin * alpha)) / (2 * (points_per_bin - 1))
        )

    g = calcheck.define_guarantee("mine.cw", eps14, method="cw_hb", event="joint_conditional")
    res = calcheck.verify(
        g, "cw_prototype_atoms", n=300, points_per_bin=10, alphas=(0.1,), reps=200, rng=0
    )
    assert res.verdict == "consistent"
    assert res.cells[0].bound == pytest.approx(eps14(300, 10, 3, 0.1))


def test_list_methods(capsys):
    assert main(["list", "--methods"]) == 0
    out = capsys.readouterr().out
    assert "umd             conditional *" in out
    assert "bound(alpha, delta, n, n_bins)" in out
    assert main(["list", "--methods", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["methods"]
    pairs = {(r["method"], r["event"]) for r in rows}
    assert {("umd", "conditional"), ("ums", "marginal"), ("tl_hb", "ece")} <= pairs
    assert {("cw_hb", "cw_ece"), ("fixed_width", "ece")} <= pairs


def test_each_method_supplies_what_its_experiment_does():
    from calcheck.simulations.laws import LAWS
    from calcheck.theory_checks.catalog import methods

    sample = {
        "binary": "uniform_half",
        "top_label": "tl_balanced_half",
        "dirichlet_affine": "cw_dirichlet_balanced",
    }
    for name, spec in methods().items():
        law = LAWS[sample[spec.families[0]]]
        point = {"n": 600, "n_bins": 5, "points_per_bin": 20}
        exp = spec.build(law, **{k: point[k] for k in spec.grid_keys})
        assert set(exp.symbols(None)) == set(spec.symbols), name


def test_code_outside_calcheck_is_part_of_stamps_and_record_keys():
    from dataclasses import dataclass

    from calcheck.simulations.experiments.base import foreign_source_hash
    from calcheck.simulations.experiments.binning import BinningExperiment
    from calcheck.simulations.laws import LAWS

    @dataclass(frozen=True)
    class PluginBinning(BinningExperiment):
        """An experiment a plugin paper might define."""

    spec = {"name": "umd", "tie_breaking": "lexicographic"}
    own = BinningExperiment(spec, LAWS["uniform_half"], 100, 5)
    plugin = PluginBinning(spec, LAWS["uniform_half"], 100, 5)
    assert PluginBinning.code_paths() == tuple(
        p for p in BinningExperiment.code_paths() if "binning.py" not in p
    )
    assert plugin.code_stamp.endswith("+" + foreign_source_hash(PluginBinning))
    assert foreign_source_hash(BinningExperiment) is None
    assert own.code_stamp.count("+") == 1
    assert foreign_source_hash(thm3_by_hand) is not None
