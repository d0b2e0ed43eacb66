"""Nothing trusted on load (issue 47, S2 "trusted on load" and S3's decompression bomb).

``from_json``/``from_dict`` rebuilt impossible cells as ``consistent / passed`` (0 of 200
successes with ``violated=False``, 500 of 200, a NaN coverage), accepted NaN and Infinity
literals, and raised TypeError, KeyError, OverflowError or RecursionError where they promise
ValueError. A result record in the store went through the same decoder, so a forged record
was read as the check's result. A stored block crafted to inflate to 400 MB was inflated
whole (932 MB) before it was refused. Now decoding checks every field's type and the
invariants that tie a result's numbers together (the verdict is recomputed from its counts),
a record that fails them is recomputed, and a block inflates no further than its header
declares.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import sqlite3
import tracemalloc
import zlib

import numpy as np
import pytest

from calcheck.simulations.payload import BLOCK_MAGIC, _decoded, _digest, _pack
from calcheck.simulations.store import ResultStore
from calcheck.theory_checks.catalog import all_checks
from calcheck.theory_checks.checks.check import CheckResult
from calcheck.theory_checks.results.export import decode
from calcheck.theory_checks.results.verdicts import coverage_verdict
from calcheck.theory_checks.running.records import decode_result, encode_result, result_key
from calcheck.theory_checks.running.runner import run_checks
from calcheck.theory_checks.running.verify import verify


@pytest.fixture(scope="module")
def result():
    """A guarantee's result of one cell, with exact and certified coverage (200 replicates)."""
    return verify("gr21.thm3", ["uniform_half"], n=200, n_bins=5, alphas=(0.1,), reps=200, rng=0)


def _forged(result, edit) -> str:
    data = result.to_dict()
    edit(data, data["cells"][0], data["cells"][0]["verdict"])
    return json.dumps(data)


def _honest_verdict(successes, trials, claimed, level, **changes) -> dict:
    """A verdict's data for these counts, consistent but for ``changes``."""
    verdict = coverage_verdict(successes, trials, claimed, level=level)
    return dataclasses.replace(verdict, **changes).to_dict()


def _without_exact_evidence(cell):
    cell["exact_coverage"] = cell["certified_coverage"] = None


def _zero_of_200_not_violated(data, cell, verdict):
    _without_exact_evidence(cell)
    cell["verdict"] = _honest_verdict(0, 200, verdict["claimed"], verdict["level"], violated=False)
    cell["success_bits"] = ""


# ------------------------------------------------------------------ impossible cells
@pytest.mark.parametrize(
    ("edit", "message"),
    [
        # before: CheckResult consistent / passed
        (_zero_of_200_not_violated, r"violated=False, but 0 of 200 .* violated=True"),
        (
            lambda d, c, v: v.update(successes=500, coverage=2.5),
            r"need 0 <= successes <= trials .* got 500 of 200",
        ),
        (lambda d, c, v: v.update(coverage={"__float__": "nan"}), r"coverage must lie in \[0, 1\]"),
        (lambda d, c, v: v.update(ci_low=0.999, ci_high=0.5), "the interval .* must hold"),
        (lambda d, c, v: v.update(ci_high=1.5), r"ci_high must lie in \[0, 1\], got 1.5"),
        (lambda d, c, v: v.update(p_value=0.5), "p_value 0.5 is not that of 200 of 200"),
        (lambda d, c, v: v.update(coverage=0.5), r"coverage 0.5 is not successes / trials"),
        (lambda d, c, v: v.update(violated=True), "violated=True, but 200 of 200"),
    ],
    ids=["0-of-200", "500-of-200", "nan-coverage", "reversed-ci", "ci>1", "p", "cov", "flag"],
)
def test_an_impossible_verdict_is_refused(result, edit, message):
    with pytest.raises(ValueError, match=message):
        CheckResult.from_json(_forged(result, edit))


def test_a_certificate_that_its_replicates_contradict_is_refused(result):
    # 0 of 200 with an honest (violated) verdict, but the certificate of 0.98 kept: the cell
    # would read "certified, consistent"; computing it would have failed the cross-check
    def edit(data, cell, verdict):
        cell["verdict"] = _honest_verdict(0, 200, verdict["claimed"], verdict["level"])
        cell["success_bits"] = ""
        cell["exact_coverage"] = None

    with pytest.raises(ValueError, match=r"certified_coverage .* disagrees with 0 of 200"):
        CheckResult.from_json(_forged(result, edit))


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d, c, v: c.update(success_bits="AAAA"), "success_bits holds 3 bytes"),
        (
            lambda d, c, v: c.update(success_bits=base64.b64encode(bytes(25)).decode()),
            "success_bits holds 0 successes, the verdict 200",
        ),
        (lambda d, c, v: c.update(success_bits="!!"), "success_bits is not base64"),
        (lambda d, c, v: c.update(exact_coverage=1.5), r"exact_coverage must lie in \[0, 1\]"),
        (lambda d, c, v: c.update(vacuous_replicates=200), "no_power is empty, but 200"),
        (lambda d, c, v: c.update(alpha=2.0), r"alpha must lie in \(0, 1\)"),
        (lambda d, c, v: d.update(reps=300), "counts 200 replicates, the result 300"),
        (lambda d, c, v: d.update(false_alarm=0.5), "tested at level 0.001, not false_alarm"),
        (lambda d, c, v: d.update(mutant=None), "needs its mutant, got None"),
        (lambda d, c, v: d.update(cells=[]), "at least one cell"),
        (lambda d, c, v: d["check"].update(expect="maybe"), "expect must be 'consistent'"),
    ],
    ids=[
        "bits-len",
        "bits-count",
        "bits-b64",
        "exact",
        "power",
        "alpha",
        "reps",
        "level",
        "mutant",
        "no-cells",
        "expect",
    ],
)
def test_a_cell_or_result_whose_numbers_disagree_is_refused(result, edit, message):
    with pytest.raises(ValueError, match=message):
        CheckResult.from_json(_forged(result, edit))


# ------------------------------------------------------------------ malformed data
@pytest.mark.parametrize("number", [float("nan"), float("inf"), -float("inf")])
def test_nan_and_infinity_literals_are_refused(result, number):
    data = result.to_dict()
    data["cells"][0]["estimate"] = number
    literal = json.dumps(number)  # NaN, Infinity, -Infinity: not JSON, but json.loads reads it
    with pytest.raises(ValueError, match=f"not JSON text .*the literal {literal}"):
        CheckResult.from_json(json.dumps(data))  # before: read, the estimate NaN
    # a dict from Python holding one raw: not what to_dict writes (it tags them)
    with pytest.raises(ValueError, match=r"cells\[0\].estimate: an untagged non-finite number"):
        CheckResult.from_dict(data)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d, c, v: v.update(successes="many"), "successes must be int, got 'many'"),
        (lambda d, c, v: d.update(reps="200"), "reps must be int, got '200'"),
        (lambda d, c, v: d.update(cells=5), "cells must be tuple"),
        (lambda d, c, v: d.update(cells=[v]), r"cells must be tuple\[CellResult, ...\]"),
        (lambda d, c, v: c.update(__type__=["x"]), r"unknown result class \['x'\]"),
        (lambda d, c, v: d.update(reps={"__numpy__": 200}), "unsupported numpy dtype None"),
        (lambda d, c, v: d.update(reps={"__numpy__": 2.5, "dtype": "int64"}), "cannot hold 2.5"),
        (lambda d, c, v: d.update(mutant={"__dict__": 5}), "'__dict__' must hold a list"),
        (
            lambda d, c, v: d.update(mutant={"__dict__": [[{"__list__": []}, 1]]}),
            "cannot be a dict key",
        ),
        (lambda d, c, v: d.update(check=5), "check must be a check's record, got 5"),
        (lambda d, c, v: v.pop("trials"), r"missing fields \['trials'\]"),
        (lambda d, c, v: v.update(extra=1), r"unknown fields \['extra'\]"),
        (lambda d, c, v: v.update(trials=10**300, successes=10**300), "trials must be at most"),
        (
            lambda d, c, v: d.update(reps={"__numpy__": 10**30, "dtype": "int64"}),
            "numpy int64 value does not fit",
        ),
        (
            lambda d, c, v: c.update(critical_factor_ci={"__ndarray__": [1], "dtype": "f8"}),
            "shape must be a list of sizes",
        ),
    ],
    ids=[
        "str",
        "reps",
        "cells",
        "cell-type",
        "type-list",
        "dtype",
        "np-float",
        "dict",
        "key",
        "check",
        "missing",
        "extra",
        "huge",
        "huge-np",
        "ndarray",
    ],
)
def test_malformed_data_raises_value_error_naming_where(result, edit, message):
    with pytest.raises(ValueError, match=message):
        CheckResult.from_json(_forged(result, edit))


def test_deep_nesting_raises_value_error_not_recursion_error():
    for depth in (500, 100_000):  # one Python's json reads, one it does not
        text = '{"__type__": "CheckResult", "cells": ' + "[" * depth + "]" * depth + "}"
        with pytest.raises(ValueError, match="nest"):
            CheckResult.from_json(text)
    deep = {"__list__": []}
    for _ in range(200):
        deep = {"__list__": [deep]}
    with pytest.raises(ValueError, match="nests deeper than 64 levels"):
        decode(deep)


def test_an_honest_result_still_reads_back(result):
    again = CheckResult.from_json(result.to_json(), check=result.check)
    assert again == result
    assert (again.verdict, again.passed) == (result.verdict, result.passed)
    no_bits = _forged(result, lambda d, c, v: c.update(success_bits=""))
    assert CheckResult.from_json(no_bits).verdict == result.verdict  # bits are optional


# ------------------------------------------------------------------ records in the store
def _one_cell_check():
    check = next(c for c in all_checks("quick") if c.id == "gr21.thm3")
    return dataclasses.replace(check, experiments=check.experiments[:1], alphas=(0.1,))


def test_a_forged_record_is_recomputed_not_trusted(tmp_path):
    check = _one_cell_check()
    path = tmp_path / "store.sqlite"
    with ResultStore(path) as store:
        first = run_checks([check], store, reps=100, root_seed=3, records=True)
    honest = first.results[0]
    data = json.loads(encode_result(honest))
    cell = data["cells"][0]
    _zero_of_200_not_violated(data, cell, cell["verdict"])
    cell["verdict"] = _honest_verdict(
        0, 100, cell["verdict"]["claimed"], cell["verdict"]["level"], violated=False
    )
    forged = json.dumps(data)
    with pytest.raises(ValueError, match="violated=False, but 0 of 100"):
        decode_result(forged, check)
    with ResultStore(path) as store:
        store.put_result(result_key(check, 100, 3, 1e-3), check.id, forged)
        again = run_checks([check], store, reps=100, root_seed=3, records=True)
    assert again.damaged_records == 1
    assert again.results[0].to_json() == honest.to_json()


def test_a_record_with_a_nan_literal_is_refused():
    # records.decode_result parses strictly (parse_json): the NaN literal is refused there
    check = _one_cell_check()
    with ResultStore(":memory:") as store:
        honest = run_checks([check], store, reps=100, root_seed=3).results[0]
    data = json.loads(encode_result(honest))
    data["cells"][0]["estimate"] = float("nan")
    with pytest.raises(ValueError, match=r"^a result record: not JSON text \(the literal NaN"):
        decode_result(json.dumps(data), check)


# ------------------------------------------------------------------ the decompression bomb
def _bomb(inflated: int = 400 * 2**20, reps: int = 100) -> bytes:
    """A block-format payload declaring ``reps`` float64s whose body inflates to ``inflated``."""
    head = json.dumps({"arrays": [["x", "<f8", [reps]]], "zlib": True}).encode()
    deflate = zlib.compressobj(1)
    chunk = bytes(2**20)
    body = b"".join(deflate.compress(chunk) for _ in range(inflated // 2**20)) + deflate.flush()
    return BLOCK_MAGIC + len(head).to_bytes(4, "little") + head + body


def _peak_mib(fn) -> float:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def test_a_block_crafted_to_inflate_far_is_refused_without_inflating_it():
    bomb = _bomb()
    assert len(bomb) < 4 * 2**20
    got = []
    # before: the whole 400 MB inflated (a peak of 830 MiB here) before the size check
    assert _peak_mib(lambda: got.append(_decoded(bomb, 100))) < 20
    assert got == [None]
    # a sound block of the same shape still reads
    sound = _pack({"x": np.arange(100.0)})
    np.testing.assert_array_equal(_decoded(sound, 100)["x"], np.arange(100.0))


def test_a_header_declaring_other_replicates_is_refused_before_inflating():
    bomb = _bomb(inflated=64 * 2**20, reps=8 * 2**20)  # declares 64 MB honestly
    assert _peak_mib(lambda: _decoded(bomb, 100)) < 20
    assert _decoded(bomb, 100) is None


def test_a_stored_bomb_with_a_right_digest_is_a_damaged_block(tmp_path):
    path = tmp_path / "store.sqlite"
    with ResultStore(path) as store:
        store.put(7, "cell", "code", 0, {"x": np.arange(100.0)})
    bomb = _bomb()
    con = sqlite3.connect(path)
    con.execute(
        "UPDATE blocks SET payload = ?, digest = ?",
        (bomb, _digest(7, "cell", "code", 0, 100, bomb)),
    )
    con.commit()
    con.close()
    with ResultStore(path) as store:
        assert _peak_mib(lambda: store.done_blocks(7, "cell", "code")) < 40
        assert store.done_blocks(7, "cell", "code") == set()
        assert len(store.damaged) >= 1
