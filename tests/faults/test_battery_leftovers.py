"""The leftovers of issue 47's battery: nothing stale, nothing trusted, no flag ignored.

1. A study calibrator whose ``fit`` reads a constant from ``factor.txt``: after the file
   changes, a rerun into the same ``--out`` with ``--keep-replicates`` recomputes the
   blocks (the calibrator's values at fixed probe data join the experiment's key; calcheck's
   own calibrators keep their keys).
2. A law whose eta reads a file: the same law object, after the file changes, has another
   key (eta's values on the probe grid are taken when the law is described).
3. Series results read from data: their tuples are checked (lengths, finite numbers,
   counts of the result's replicates, levels and ``violated`` recomputed).
4. ``run --study --budget X --reps N``: the run says which wins.
5. ``search --seeds K`` without ``--power``: refused in one line naming both.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import sys
import uuid
from pathlib import Path

import numpy as np
import pytest

from calcheck import verify
from calcheck.simulations.calibrators import ClassWiseHistogramBinning, UniformMassBinning
from calcheck.simulations.experiments.calibrator import CalibratorExperiment
from calcheck.simulations.experiments.calibrator_multiclass import (
    MulticlassCalibratorExperiment,
)
from calcheck.simulations.experiments.calibrator_protocol import (
    calibrator_values,
    describe_calibrator,
)
from calcheck.simulations.laws import LAWS
from calcheck.simulations.laws.binary import BinaryLaw
from calcheck.simulations.store import ResultStore
from calcheck.theory_checks.catalog import all_checks
from calcheck.theory_checks.cli.main import main
from calcheck.theory_checks.running.runner import run_checks
from calcheck.theory_checks.running.verify import cloudpickle_module
from calcheck.theory_checks.user.guarantees import _forget_all

# ------------------------------------------------------------------ 1. calibrator reads a file
CALIBRATOR = """\
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent


def radius(n, alpha):
    return 0.1


class Cal:
    def fit(self, scores, labels):
        self.shift = float((HERE / "factor.txt").read_text())
        return self

    def predict(self, scores):
        return np.full(np.shape(scores), 0.5 * self.shift)
"""
STUDY = """\
guarantee = "mine.cal"
bound = "{module}:radius"
method = "{module}:Cal"
event = "ece"
reps = 50
alphas = [0.1]
law = "uniform_half"
[grid]
n = [200]
n_bins = [5]
"""


@pytest.fixture
def calibrator_study(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    module = f"readcal_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{module}.py").write_text(CALIBRATOR)
    (tmp_path / "s.toml").write_text(STUDY.format(module=module))
    yield tmp_path, module
    sys.modules.pop(module, None)
    _forget_all()


def _run_keeping_replicates(folder: Path, module: str, capsys) -> tuple[str, str]:
    sys.modules.pop(module, None)  # as a new process reads it
    capsys.readouterr()
    argv = ["run", "--study", str(folder / "s.toml"), "--out", str(folder / "out")]
    main([*argv, "--jobs", "1", "--keep-replicates"])
    verdict = json.loads((folder / "out" / "results.json").read_text())["checks"][0]["verdict"]
    return verdict, capsys.readouterr().out


def test_a_calibrator_that_reads_a_file_recomputes_its_blocks(calibrator_study, capsys):
    folder, module = calibrator_study
    (folder / "factor.txt").write_text("1.0\n")
    assert _run_keeping_replicates(folder, module, capsys)[0] == "consistent"
    (folder / "factor.txt").write_text("0.0\n")
    # before: the record was recomputed (with its reason) from the stored blocks of the old
    # calibrator: "consistent", "Blocks of 100 replicates: 0 computed, 1 reused"
    verdict, out = _run_keeping_replicates(folder, module, capsys)
    assert verdict == "violated"
    assert "Blocks of 100 replicates: 1 computed, 0 reused" in out


def test_only_a_users_calibrator_is_keyed_by_its_values(tmp_path):
    factor = tmp_path / "factor.txt"
    factor.write_text("1.0")

    class ReadsAFile:
        n_classes = 3

        def fit(self, scores, labels):
            self.shift = float(factor.read_text())
            return self

        def predict_proba(self, scores):
            return np.round(np.asarray(scores) * self.shift, 1)

    own = ReadsAFile()
    # calcheck's own calibrators: class, parameters and source, as before (keys unchanged)
    for builtin in (UniformMassBinning(5), ClassWiseHistogramBinning(20)):
        assert set(describe_calibrator(builtin)) == {"class", "params", "source"}
    binary = CalibratorExperiment(UniformMassBinning(5), LAWS["uniform_half"], 300, 5)
    assert "values" not in binary.description()["calibrator"]
    law = LAWS["tl_atoms"]
    before = MulticlassCalibratorExperiment(own, law, 300, 5)
    assert before.description()["calibrator"]["values"] == calibrator_values(own, 3)
    assert calibrator_values(own, 3) not in (calibrator_values(own), "nondeterministic")
    factor.write_text("0.5")
    after = MulticlassCalibratorExperiment(own, law, 300, 5)
    assert after.key != before.key


# ------------------------------------------------------------------ 2. eta reads a file
def test_the_same_law_object_has_another_key_after_its_eta_file_changes(tmp_path):
    level = tmp_path / "level.txt"
    level.write_text("0.5")

    def eta(s):
        return np.full_like(s, float(level.read_text()))

    law = BinaryLaw.from_callable(eta, name="reads")
    store = tmp_path / "store"
    first = law.spec()["eta"]["probe_values"]
    verify("gr21.thm3", law, n=200, n_bins=5, reps=100, rng=0, store=store)
    pickler = cloudpickle_module()
    confirmed, sent = (pickler.loads(pickler.dumps(law)) for _ in range(2))  # to workers
    assert confirmed.spec()["eta"]["probe_values"] == first  # keyed as its parent sent it
    level.write_text("0.9")
    assert law.spec()["eta"]["probe_values"] != first
    assert confirmed.spec()["eta"]["probe_values"] == first
    # a copy whose eta gives other values where it runs than where it was sent from
    with pytest.raises(ValueError, match=r"^eta .*eta gives 0\.9 at score 0\.0 in this process "):
        sent.spec()
    # before: the blocks simulated with eta = 0.5 were read back (coverage 0.99, not 1.0)
    again = verify("gr21.thm3", law, n=200, n_bins=5, reps=100, rng=0, store=store)
    fresh = verify("gr21.thm3", law, n=200, n_bins=5, reps=100, rng=0)
    assert again.worst_cell().verdict == fresh.worst_cell().verdict


# ------------------------------------------------------------------ 3. series on load
SERIES_IDS = ("gpr20.cor1", "klm19.lem43", "nch14.cor32.control.one_over_n", "klm19.def52")


@pytest.fixture(scope="module")
def series_json() -> dict:
    found = {c.id: c for c in all_checks("quick") if c.id in SERIES_IDS}
    mean = found["klm19.def52"]  # its three smallest experiments (its 17 take seconds)
    found["klm19.def52"] = dataclasses.replace(mean, experiments=mean.experiments[:3])
    with ResultStore(":memory:") as store:
        run = run_checks([found[i] for i in SERIES_IDS], store, reps=100, root_seed=3)
    return {r.kind: (type(r), r.to_dict()) for r in run.results}


def _first(data: dict) -> dict:
    return data["series"][0]


NAN = {"__float__": "nan"}
SERIES_EDITS = [
    ("rate", lambda d: _first(d)["n_star"].pop(), r"series\[0\]\.n_star must hold 6 values"),
    ("rate", lambda d: _first(d)["h"].__setitem__(5, NAN), r"series\[0\]\.h must be finite"),
    ("rate", lambda d: _first(d).update(slope=NAN), r"series\[0\]\.slope must be finite"),
    ("rate", lambda d: _first(d).update(violated=True), r"series\[0\]\.violated must be False"),
    ("rate", lambda d: _first(d).update(unbracketed=9), r"series\[0\]\.unbracketed must count"),
    ("rate", lambda d: _first(d).update(level=0.5), r"series\[0\]\.level must be false_alarm"),
    ("rate", lambda d: d.update(reps=0), r"reps must be a positive integer, got 0"),
    ("rate", lambda d: d.update(false_alarm=2.0), r"false_alarm must lie in \(0, 1\)"),
    ("mean", lambda d: _first(d)["z"].pop(), r"series\[0\]\.z must hold 17 values"),
    ("mean", lambda d: _first(d)["z"].__setitem__(0, 9.0), r"series\[0\]\.z must be means / se"),
    ("mean", lambda d: _first(d)["means"].__setitem__(0, NAN), r"series\[0\]\.means must be"),
    ("exponent", lambda d: _first(d)["means"].__setitem__(0, -1.0), r"\.means must be finite"),
    ("exponent", lambda d: _first(d).update(excess_ci=[1.0]), r"\.excess_ci must hold 2 values"),
    (
        "tradeoff",
        lambda d: _first(d)["wide"].update(successes=500, trials=500, coverage=1.0),
        r"series\[0\]\.wide\.trials must be the result's reps \(100\), got 500",
    ),
    ("tradeoff", lambda d: _first(d).update(median_width=NAN), r"\.median_width must be finite"),
    ("tradeoff", lambda d: _first(d).update(alpha=0.2), r"\.wide\.claimed must be 0\.6"),
]


@pytest.mark.parametrize(("kind", "edit", "message"), SERIES_EDITS)
def test_a_series_result_whose_tuples_disagree_is_refused(series_json, kind, edit, message):
    cls, data = series_json[kind]
    data = json.loads(json.dumps(data))  # a copy to craft
    edit(data)
    # before: each was read back as a result, its verdict recomputed from the crafted flags
    with pytest.raises(ValueError, match=message):
        cls.from_json(json.dumps(data))


def test_a_series_entry_of_another_kind_is_refused(series_json):
    cls, data = series_json["rate"]
    data = json.loads(json.dumps(data))
    data["series"][0] = series_json["mean"][1]["series"][0]
    with pytest.raises(ValueError, match=r"series\[0\] must be a SeriesResult .* MeanCellsResult"):
        cls.from_json(json.dumps(data))


def test_honest_series_results_still_read_back(series_json):
    for cls, data in series_json.values():
        assert cls.from_dict(data).to_dict() == data


# ------------------------------------------------------------------ 4. run --budget --reps
class _Stop(Exception):
    """Raised by the stubs once the arguments of the work are captured."""


RUN = """guarantee = "gr21.thm3"
reps = 200
laws = ["uniform_half"]
[grid]
n = [200]
n_bins = [5]
"""


@pytest.mark.parametrize("file_reps", ["reps = 200\n", ""], ids=["file_reps", "no_file_reps"])
def test_run_says_reps_wins_over_budget_with_a_study(tmp_path, capsys, monkeypatch, file_reps):
    import calcheck.theory_checks.running.runner as runner

    seen = {}

    def run_checks_stub(checks, store, **kw):
        seen.update(kw)
        raise _Stop

    monkeypatch.setattr(runner, "run_checks", run_checks_stub)
    path = tmp_path / "s.toml"
    path.write_text(RUN.replace("reps = 200\n", file_reps))
    argv = ["run", "--study", str(path), "--out", str(tmp_path / "o"), "--jobs", "1"]
    with contextlib.suppress(_Stop):
        main([*argv, "--budget", "full", "--reps", "300"])
    assert seen["reps"] == 300
    # before: not a word of --budget full (only the file's reps line, where it has one)
    lines = [line for line in capsys.readouterr().err.splitlines() if "--budget" in line]
    assert lines == [
        "calcheck: --reps 300 overrides --budget full (10000 replicates per cell; with "
        "--study the budget sets nothing else)"
    ]


# ------------------------------------------------------------------ 5. search --seeds
@pytest.mark.parametrize(
    "mode",
    [["gr21.thm3", "--family", "beta_piecewise", "--n", "200", "--n-bins", "5"], ["--all"]],
    ids=["single", "all"],
)
def test_seeds_without_power_is_refused(tmp_path, capsys, mode):
    # before: the single search ran with root seed 0, --seeds 3 ignored, exit 0
    assert main(["search", *mode, "--seeds", "3", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        "calcheck: error: --seeds 3 is the number of root seeds of --power, which is not "
        "given; for the root seed of this search give --seed"
    )


def test_seeds_with_power_reaches_the_power_searches(tmp_path, monkeypatch):
    import calcheck.theory_checks.search.power as power

    seen = {}

    def search_power(*args, **kw):
        seen.update(kw)
        raise _Stop

    monkeypatch.setattr(power, "search_power", search_power)
    with contextlib.suppress(_Stop):
        main(["search", "--power", "--seeds", "3", "--out", str(tmp_path / "o"), "--jobs", "1"])
    assert seen["seeds"] == 3
