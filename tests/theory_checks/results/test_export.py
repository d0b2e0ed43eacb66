"""Results out: to_dict / to_json round trips for every result class, and to_frame."""

import dataclasses
import json
import math
import sys

import numpy as np
import pytest

import calcheck
from calcheck.simulations.search import SearchBudget
from calcheck.simulations.store import ResultStore
from calcheck.theory_checks.catalog import all_checks
from calcheck.theory_checks.checks.check import CellResult, CheckResult
from calcheck.theory_checks.report.files import results_to_dict
from calcheck.theory_checks.results.export import CheckRecord, decode, encode
from calcheck.theory_checks.results.verdicts import CoverageVerdict
from calcheck.theory_checks.running.bench import BenchResult, benchmark_cell
from calcheck.theory_checks.running.exact import ExactCoverage, exact_coverage
from calcheck.theory_checks.running.runner import RunResult, run_checks
from calcheck.theory_checks.running.verify import verify
from calcheck.theory_checks.search.result import Found, FreshCheck, SearchResult

#: One check of each series kind (trade-off, rate, exponent, mean) and a coverage control.
IDS = ("gpr20.cor1", "klm19.lem43", "nch14.cor32.control.one_over_n", "klm19.def52")


@pytest.fixture(scope="module")
def run():
    found = {c.id: c for c in all_checks("quick") if c.id in IDS}
    # the mean check on its three smallest experiments (its 17 take seconds)
    found["klm19.def52"] = dataclasses.replace(
        found["klm19.def52"], experiments=found["klm19.def52"].experiments[:3]
    )
    with ResultStore(":memory:") as store:
        return run_checks([found[i] for i in IDS], store, reps=100, root_seed=3)


@pytest.fixture(scope="module")
def verified():
    return verify(
        "gr21.thm3",
        ["uniform_logistic", "uniform_half"],
        n=200,
        n_bins=5,
        alphas=(0.1, 0.2),
        reps=200,
        rng=0,
    )


@pytest.fixture(scope="module")
def searched():
    tiny = SearchBudget("tiny", population=5, generations=1, reps=100, fresh_reps=200)
    return calcheck.search(
        "gr21.thm3.times_0.5",
        "beta_piecewise",
        grid={"n": 200, "n_bins": 5},
        budget=tiny,
        criterion="mean_ratio",
    )


def _round_trips(result, check=None):
    text = result.to_json()
    json.loads(text)  # strict JSON: no NaN / Infinity literals
    again = type(result).from_json(text, check=check)
    assert again == result
    assert again.to_json() == text
    assert type(result).from_dict(result.to_dict(), check=check) == result
    return again


def test_check_result_round_trips_with_and_without_its_check(verified):
    assert isinstance(verified, CheckResult)
    assert len(verified.cells) == 4
    _round_trips(verified, check=verified.check)
    loaded = CheckResult.from_json(verified.to_json())
    # without the live check (laws and calibrators are code) the result holds its record
    assert isinstance(loaded.check, CheckRecord)
    assert loaded.check.id == verified.check.id
    assert loaded.check.role == "guarantee"
    assert loaded.check.law_specs() == verified.check.law_specs()
    assert loaded.cells == verified.cells
    assert (loaded.verdict, loaded.passed, repr(loaded)) == (
        verified.verdict,
        verified.passed,
        repr(verified),
    )
    assert loaded.to_json() == verified.to_json()
    assert results_to_dict([loaded], {}) == results_to_dict([verified], {})
    assert loaded.cells[0].successes().tolist() == verified.cells[0].successes().tolist()


def test_cell_and_verdict_round_trip(verified):
    cell = verified.cells[0]
    assert _round_trips(cell).verdict == cell.verdict
    _round_trips(cell.verdict)
    assert isinstance(CoverageVerdict.from_json(cell.verdict.to_json()), CoverageVerdict)


def test_every_series_result_and_the_run_round_trip(run):
    kinds = {type(r).__name__ for r in run.results}
    assert kinds == {
        "TradeoffCheckResult",
        "RateCheckResult",
        "ExponentCheckResult",
        "MeanZeroCheckResult",
    }
    for result in run.results:
        _round_trips(result, check=result.check)
        loaded = type(result).from_json(result.to_json())
        assert loaded.series == result.series
        assert loaded.verdict == result.verdict
        assert repr(loaded) == repr(result)  # settings such as a rate's slack are kept
    checks = [r.check for r in run.results]
    again = _round_trips(run, check=checks)
    assert again.results[1].check is checks[1]
    loaded = RunResult.from_json(run.to_json())
    assert results_to_dict(loaded.results, {}) == results_to_dict(run.results, {})


def test_search_results_round_trip(searched):
    for result in (searched, searched.search, searched.search.fresh):
        _round_trips(result)
    assert isinstance(searched.search, Found)
    assert isinstance(searched.search.fresh, FreshCheck)
    d = searched.to_dict()
    assert d["budget"]["name"] == "tiny"
    assert d["search"]["fresh"]["outcome"] == "violated"
    # the family's lists stay lists, its tuples tuples
    assert SearchResult.from_dict(d).family == searched.family


def test_exact_coverage_and_bench_round_trip():
    exact = exact_coverage("gr21.thm3", n=200, n_bins=5, alpha=0.1)
    assert _round_trips(exact).holds is exact.holds
    assert isinstance(exact, ExactCoverage)
    bench = benchmark_cell(n=200, n_bins=5, rounds=1)
    assert isinstance(_round_trips(bench), BenchResult)


def test_non_finite_numbers_numpy_and_containers_are_exact():
    value = {
        "inf": math.inf,
        "-inf": -math.inf,
        "nan": math.nan,
        "list": [1, (2.5, None)],
        (1, 2): "tuple key",
        "__type__": "a plain key that looks like a tag",
        "array": np.array([[0.5, np.inf], [np.nan, -0.0]]),
        "ints": np.arange(3, dtype=np.int32),
        "empty": np.zeros((0, 2), dtype=bool),
        "scalar": np.float32(0.1),
        "flag": np.bool_(True),
    }
    text = json.dumps(encode(value), allow_nan=False)
    back = decode(json.loads(text))
    assert set(back) == set(value)
    assert back["inf"] == math.inf
    assert back["-inf"] == -math.inf
    assert math.isnan(back["nan"])
    assert back["list"] == [1, (2.5, None)]
    assert back[(1, 2)] == "tuple key"
    assert back["__type__"] == value["__type__"]
    for key in ("array", "ints", "empty"):
        assert back[key].dtype == value[key].dtype
        assert back[key].shape == value[key].shape
        np.testing.assert_array_equal(back[key], value[key])
    assert np.signbit(back["array"][1, 1])
    assert type(back["scalar"]) is np.float32
    assert back["scalar"] == value["scalar"]
    assert type(back["flag"]) is np.bool_


def test_a_cell_with_an_infinite_tightness_round_trips(verified):
    cell = dataclasses.replace(verified.cells[0], tightness=math.inf, detectable_factor=None)
    assert cell.to_dict()["tightness"] == {"__float__": "inf"}
    assert CellResult.from_json(cell.to_json()) == cell


def test_to_frame_one_row_per_cell_per_series_per_law(verified, run, searched):
    frame = verified.to_frame()
    assert len(frame) == 4
    assert {"check", "law", "n", "alpha", "verdict.coverage", "violated"} <= set(frame.columns)
    assert "success_bits" not in frame.columns
    assert frame["verdict.coverage"].tolist() == [c.verdict.coverage for c in verified.cells]
    assert len(run.to_frame()) == sum(len(r.series) for r in run.results)
    laws = searched.to_frame()
    methods = [searched.search.method, searched.random.method, "worst constant eta"]
    assert laws["method"].tolist() == methods


def test_to_frame_without_pandas_names_the_install(verified, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match="pip install pandas"):
        verified.to_frame()


def test_wrong_data_is_refused_in_one_line(verified):
    with pytest.raises(ValueError, match="holds a result of class CellResult, not CheckResult"):
        CheckResult.from_dict(verified.cells[0].to_dict())
    with pytest.raises(ValueError, match="needs a dict written by to_dict"):
        CheckResult.from_dict({"id": 1})
    with pytest.raises(ValueError, match="not JSON text"):
        CheckResult.from_json("{")
    with pytest.raises(ValueError, match=r"unknown result class .os\.system."):
        CheckResult.from_dict({"__type__": "os.system"})
    other = dataclasses.replace(verified.check, id="another")
    with pytest.raises(ValueError, match="check 'another' is not the result's check"):
        CheckResult.from_dict(verified.to_dict(), check=other)
    with pytest.raises(ValueError, match="cannot export a object"):
        encode(object())
