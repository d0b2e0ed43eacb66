"""Result records: exact round trips for every result type, reruns that read them, blocks
dropped only once every reader is recorded, damaged or foreign records never trusted."""

import json
import sqlite3

import pytest

from calcheck.simulations.store import ResultStore
from calcheck.theory_checks.catalog import all_checks
from calcheck.theory_checks.cli.main import main
from calcheck.theory_checks.report.files import results_to_dict
from calcheck.theory_checks.running.records import decode_result, encode_result, result_key
from calcheck.theory_checks.running.runner import run_checks

#: One cheap check of every check type (Check, Tradeoff, Rate, Exponent, MeanZero) and a
#: check sharing its guarantee's experiments (a control).
IDS = (
    "gr21.thm3",
    "gr21.thm3.control.wrong_bound",
    "gpr20.cor1",
    "klm19.lem43",
    "nch14.cor32.control.one_over_n",
    "klm19.def52",
)
REPS = 100


def _checks(ids=IDS):
    found = {c.id: c for c in all_checks("quick") if c.id in ids}
    assert set(found) == set(ids), set(ids) - set(found)
    return [found[i] for i in ids]


def _numbers(results):
    # everything the reports print, as exact JSON (floats by repr)
    return json.dumps(results_to_dict(results, {}), sort_keys=True)


@pytest.fixture(scope="module")
def plain():
    """The checks run the old way: evaluated from replicates, nothing recorded."""
    with ResultStore(":memory:") as store:
        return run_checks(_checks(), store, reps=REPS, root_seed=3)


def test_every_result_type_round_trips_exactly(plain):
    assert {type(r).__name__ for r in plain.results} >= {
        "CheckResult",
        "TradeoffCheckResult",
        "RateCheckResult",
        "ExponentCheckResult",
        "MeanZeroCheckResult",
    }
    for result in plain.results:
        text = encode_result(result)
        again = decode_result(text, result.check)
        assert again.check is result.check
        assert encode_result(again) == text
        assert repr(again) == repr(result)
        assert (again.verdict, again.passed) == (result.verdict, result.passed)
    rebuilt = [decode_result(encode_result(r), r.check) for r in plain.results]
    assert _numbers(rebuilt) == _numbers(plain.results)


def test_recorded_run_drops_blocks_and_a_rerun_reads_the_records(plain, tmp_path):
    path = tmp_path / "store.sqlite"
    with ResultStore(path) as store:
        first = run_checks(
            _checks(), store, reps=REPS, root_seed=3, records=True, keep_replicates=False
        )
    assert _numbers(first.results) == _numbers(plain.results)  # bit-identical verdicts
    assert first.recorded == 0
    assert first.dropped_blocks == first.stats.computed > 0
    con = sqlite3.connect(path)
    assert con.execute("SELECT COUNT(*) FROM blocks").fetchone()[0] == 0
    assert con.execute("SELECT COUNT(*) FROM results").fetchone()[0] == len(IDS)
    con.close()
    with ResultStore(path) as store:
        second = run_checks(
            _checks(), store, reps=REPS, root_seed=3, records=True, keep_replicates=False
        )
    assert second.recorded == len(IDS)
    assert (second.stats.computed, second.stats.reused) == (0, 0)
    assert _numbers(second.results) == _numbers(plain.results)
    # another seed, budget or false-alarm rate is another result: simulated, not read
    with ResultStore(path) as store:
        other = run_checks(_checks(IDS[:1]), store, reps=REPS, root_seed=4, records=True)
        assert other.recorded == 0
        assert other.stats.computed > 0
        other = run_checks(
            _checks(IDS[:1]), store, reps=REPS, root_seed=3, false_alarm=0.01, records=True
        )
        assert other.recorded == 0


def test_blocks_stay_until_every_reader_of_the_run_is_recorded(plain, tmp_path):
    # the control reads some of its guarantee's cells: a shared cell is dropped only once
    # both results are recorded, every cell exactly once
    check, control = _checks(IDS[:2])
    shared = {e.key for e in check.simulations()} & {e.key for e in control.simulations()}
    assert shared
    keys = [result_key(c, REPS, 3, 1e-3) for c in (check, control)]
    with ResultStore(tmp_path / "a.sqlite") as store:
        seen = []
        drop = store.drop_blocks

        def watched(root_seed, cell_key, code):
            readers = [c for c in (check, control) if cell_key in {e.key for e in c.simulations()}]
            recorded = [store.get_result(keys[(check, control).index(c)]) for c in readers]
            seen.append((cell_key, all(r is not None for r in recorded)))
            return drop(root_seed, cell_key, code)

        store.drop_blocks = watched
        run = run_checks(
            [control, check], store, reps=REPS, root_seed=3, records=True, keep_replicates=False
        )
    assert all(ok for _, ok in seen)
    assert sorted(k for k, _ in seen) == sorted({e.key for e in check.simulations()})
    assert run.dropped_blocks == run.stats.computed
    assert _numbers(run.results[1:]) == _numbers(plain.results[:1])


def test_keep_replicates_keeps_every_block(tmp_path):
    with ResultStore(tmp_path / "s.sqlite") as store:
        run = run_checks(_checks(IDS[:1]), store, reps=REPS, root_seed=3, records=True)
        assert run.dropped_blocks == 0
        kept = store._con.execute("SELECT COUNT(*) FROM blocks").fetchone()[0]
        assert kept == run.stats.computed > 0


def test_dropping_replicates_needs_records():
    with ResultStore(":memory:") as store, pytest.raises(ValueError, match="records=True"):
        run_checks(_checks(IDS[:1]), store, reps=REPS, root_seed=3, keep_replicates=False)


def test_a_damaged_or_unreadable_record_is_recomputed(plain, tmp_path):
    path = tmp_path / "store.sqlite"
    checks = _checks(IDS[:1])
    with ResultStore(path) as store:
        run_checks(checks, store, reps=REPS, root_seed=3, records=True, keep_replicates=False)
    con = sqlite3.connect(path)
    con.execute(
        "UPDATE results SET payload = replace(payload, '\"successes\":', '\"successes\": ')"
    )
    con.commit()
    with ResultStore(path) as store:
        again = run_checks(checks, store, reps=REPS, root_seed=3, records=True)
    assert again.recorded == 0
    assert again.damaged_records == 1
    assert _numbers(again.results) == _numbers(plain.results[:1])
    # a record whose digest is right but which names a type no result has: recomputed
    key = result_key(checks[0], REPS, 3, 1e-3)
    with ResultStore(path) as store:
        store.put_result(key, checks[0].id, '{"__result__": "os.system", "fields": {}}')
        again = run_checks(checks, store, reps=REPS, root_seed=3, records=True)
    assert again.recorded == 0
    assert again.damaged_records == 1
    assert _numbers(again.results) == _numbers(plain.results[:1])


def test_the_record_key_covers_the_check_definition():
    check, control = _checks(IDS[:2])
    assert result_key(check, REPS, 3, 1e-3) != result_key(control, REPS, 3, 1e-3)
    assert result_key(check, REPS, 3, 1e-3) != result_key(check, 2 * REPS, 3, 1e-3)
    other_alphas = type(check)(**{**check.__dict__, "alphas": (0.2,)})
    assert result_key(check, REPS, 3, 1e-3) != result_key(other_alphas, REPS, 3, 1e-3)
    assert result_key(check, REPS, 3, 1e-3) == result_key(_checks(IDS[:1])[0], REPS, 3, 1e-3)


def test_cli_rerun_reads_records_and_keep_replicates_keeps_blocks(tmp_path, capsys):
    out = tmp_path / "out"
    args = ["run", "--checks", "gr21.thm3", "--reps", "100", "--out", str(out)]
    assert main(args) == 0
    first = json.loads((out / "results.json").read_text())
    assert first["meta"]["blocks"]["dropped_after_recording"] > 0
    assert main(args) == 0
    second = json.loads((out / "results.json").read_text())
    assert second["meta"]["checks_read_from_records"] == len(first["checks"]) == 4
    assert second["checks"] == first["checks"]
    assert "results read from the store's records" in capsys.readouterr().out
    kept = tmp_path / "kept"
    assert main([*args[:-1], str(kept), "--keep-replicates"]) == 0
    con = sqlite3.connect(kept / "store.sqlite")
    assert con.execute("SELECT COUNT(*) FROM blocks").fetchone()[0] > 0
    con.close()
    assert json.loads((kept / "results.json").read_text())["checks"] == first["checks"]


def test_checks_sharing_experiments_are_simulated_together():
    from types import SimpleNamespace

    from calcheck.theory_checks.running.runner import _sharing_groups

    def check(*keys):
        return SimpleNamespace(simulations=lambda: [SimpleNamespace(key=k) for k in keys])

    # 0 and 3 share "a"; 3 and 4 share "d"; 1 and 2 share nothing with anyone
    checks = [check("a"), check("b"), check("c"), check("a", "d"), check("d")]
    assert _sharing_groups([0, 1, 2, 3, 4], checks) == [0, 3, 4, 1, 2]
    assert _sharing_groups([1, 4], checks) == [1, 4]
