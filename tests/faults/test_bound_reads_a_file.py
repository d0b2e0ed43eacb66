"""Issue 47 S1 stale: a bound whose values change without its code changing is recomputed.

The study bound ``mine:radius`` is gr21 Theorem 3's radius times a factor it reads from
``factor.txt`` on each call. With ``1.0`` the check is consistent; after the file says
``0.0`` a rerun into the same ``--out`` must recompute (violated, exit 1) and say why:
the record key holds the bound's values at fixed probe arguments, not only its code. Also
(S3): after editing a helper module the bound's module imports constants from, or imports
inside the bound, the reason names ``helper.py``, not the bound's module.
"""

from __future__ import annotations

import json
import logging
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from calcheck import define_guarantee
from calcheck.bounds import registry
from calcheck.bounds.guarantee import Guarantee
from calcheck.simulations.provenance import values_fingerprint
from calcheck.theory_checks import catalog
from calcheck.theory_checks.cli.main import main
from calcheck.theory_checks.running.records import changed_inputs, result_inputs
from calcheck.theory_checks.user.guarantees import _forget_all, bound_values, probe_arguments

READS = """\
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent


def radius(n, n_bins, alpha):
    factor = float((HERE / "factor.txt").read_text())
    return factor * np.sqrt(np.log(2 * n_bins / alpha) / (2 * (n // n_bins - 1)))
"""
#: The constant comes from the helper: ``mine`` holds a float, no module of it.
FROM_HELPER = """\
import numpy as np
from helper import SCALE


def radius(n, n_bins, alpha):
    return SCALE * np.sqrt(np.log(2 * n_bins / alpha) / (2 * (n // n_bins - 1)))
"""
#: The helper is imported where the bound runs: not among the module's globals at all.
IMPORTS_INSIDE = """\
import numpy as np


def radius(n, n_bins, alpha):
    import helper

    return helper.SCALE * np.sqrt(np.log(2 * n_bins / alpha) / (2 * (n // n_bins - 1)))
"""
STUDY = """\
guarantee = "mine.reads"
bound = "mine:radius"
method = "umd"
event = "conditional"
reps = 200
alphas = [0.1]
law = "uniform_half"
[grid]
n = [500]
n_bins = [5]
"""
RECOMPUTED = "study:mine.reads: recomputed: "
VALUES_CHANGED = "the bound's values changed at fixed probe arguments (its code did not)"


@pytest.fixture
def study(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "dont_write_bytecode", True)  # an edit within a second counts
    # a study leaves its folder on the path (last): earlier tests' helper.py must not be
    # what the bound imports when it runs (a new process has only this study's folder)
    others = [p for p in sys.path if not (Path(p or ".") / "helper.py").exists()]
    monkeypatch.setattr(sys, "path", others)
    (tmp_path / "s.toml").write_text(STUDY)
    yield tmp_path
    for name in ("mine", "helper"):
        sys.modules.pop(name, None)
    _forget_all()


def _run(folder, caplog, capsys, *, jobs="1"):
    """``calcheck run --study s.toml --out out`` as a new process would (modules re-read)."""
    for name in ("mine", "helper"):
        sys.modules.pop(name, None)
    caplog.clear()
    capsys.readouterr()
    argv = ["run", "--study", str(folder / "s.toml"), "--out", str(folder / "out"), "--jobs", jobs]
    with caplog.at_level(logging.WARNING, logger="calcheck"):
        status = main(argv)
    verdict = json.loads((folder / "out" / "results.json").read_text())["checks"][0]["verdict"]
    said = [r.getMessage() for r in caplog.records if "recomputed" in r.getMessage()]
    return status, verdict, said, capsys.readouterr().out


def test_a_bound_that_reads_a_file_is_recomputed_after_the_file_changes(study, caplog, capsys):
    (study / "mine.py").write_text(READS)
    (study / "factor.txt").write_text("1.0\n")
    assert _run(study, caplog, capsys)[:3] == (0, "consistent", [])
    (study / "factor.txt").write_text("0.0\n")
    # before: the stored record was read back, "consistent (as expected)", exit 0, no warning
    status, verdict, said, _ = _run(study, caplog, capsys)
    assert (status, verdict) == (1, "violated")
    assert said == [
        RECOMPUTED + "the bound's values changed at fixed probe arguments (its code did not)"
    ]
    # nothing changed (and another --jobs): the record is read back, nothing recomputed
    status, verdict, said, out = _run(study, caplog, capsys, jobs="2")
    assert (status, verdict, said) == (1, "violated", [])
    assert "1 checks' results read from the store's records" in out


@pytest.mark.parametrize("module", [FROM_HELPER, IMPORTS_INSIDE], ids=["from_import", "inside"])
def test_an_edited_helper_module_is_named(study, caplog, capsys, module):
    (study / "mine.py").write_text(module)
    (study / "helper.py").write_text("SCALE = 1.0\n")
    assert _run(study, caplog, capsys)[1] == "consistent"
    (study / "helper.py").write_text("SCALE = 0.0\n")
    # before: "the bound's module-level values changed (mine)" (from_import), or the stale
    # record read back with no word (inside)
    _, verdict, said, _ = _run(study, caplog, capsys)
    assert verdict == "violated"
    assert said == [RECOMPUTED + "the bound's code changed (helper.py)"]


def test_values_fingerprint_is_stable_and_records_what_a_probe_raised():
    def refuses_large(n, n_bins, alpha):
        if n > 2000:
            raise ValueError(f"n={n} is too large")  # the message (the size) is left out
        return np.sqrt(np.log(2 * n_bins / alpha) / n)

    def refuses_otherwise(n, n_bins, alpha):
        if n > 2000:
            raise OverflowError("too large")
        return refuses_large(n, n_bins, alpha)

    first = bound_values(refuses_large)
    assert first == bound_values(refuses_large)  # same values, same hash
    assert first != bound_values(refuses_otherwise)  # another exception is another behaviour
    assert values_fingerprint(lambda: np.float32(0.5), [{}]) != values_fingerprint(
        lambda: 0.5000001, [{}]
    )
    # a NaN is one value whatever its bits; what cannot be a number is named by its type
    nan = np.frombuffer(np.array([0x7FF8000000000001], dtype=np.uint64).tobytes(), float)
    assert values_fingerprint(lambda: nan, [{}]) == values_fingerprint(lambda: [np.nan], [{}])
    assert values_fingerprint(lambda: None, [{}]) == values_fingerprint(lambda: None, [{}])
    # each probe's arrays are fresh, with the shapes the method supplies
    one, again = probe_arguments(["counts", "n_used", "n", "other"]), probe_arguments(["counts"])
    assert one[0]["counts"].shape == (2, 10)
    assert one[1]["n_used"].shape == (2,)
    assert (one[0]["counts"].sum(axis=1) == one[0]["n_used"]).all()
    assert one[0]["counts"] is not again[0]["counts"]
    assert one[0]["other"] == 0.5


def test_a_data_bound_and_a_calibrator_that_read_a_file(tmp_path):
    factor = tmp_path / "factor.txt"
    factor.write_text("1.0")

    def per_bin(counts, alpha):
        return float(factor.read_text()) * np.sqrt(np.log(2 / alpha) / (2 * counts))

    class ReadsAFile:
        def fit(self, scores, labels):
            self.shift = float(factor.read_text())
            return self

        def predict(self, scores):
            return np.round(np.clip(np.asarray(scores) * self.shift, 0, 1), 1)

    try:
        bound = define_guarantee("mine.data", per_bin, method="umd", event="conditional")
        own = define_guarantee("mine.own", lambda n, alpha: 0.1, method=ReadsAFile(), event="ece")
        before = (bound.inputs(), own.inputs())
        assert (bound.inputs(), own.inputs()) == before  # deterministic
        factor.write_text("0.5")
        after = (bound.inputs(), own.inputs())
    finally:
        _forget_all()
    assert after[0]["bound_values"] != before[0]["bound_values"]
    assert after[1]["calibrator_values"] != before[1]["calibrator_values"]
    assert after[1]["bound_values"] == before[1]["bound_values"]
    assert changed_inputs({"user_guarantee": before[1]}, {"user_guarantee": after[1]}) == [
        "the calibrator's values changed at fixed probe arguments (its code did not)"
    ]


def test_a_plugin_bound_gets_values_and_the_catalogs_own_do_not(tmp_path, monkeypatch):
    (tmp_path / "factor.txt").write_text("1.0")
    (tmp_path / "rdpaper.py").write_text(
        textwrap.dedent(
            f"""\
            def radius(n, n_bins, alpha):
                return float(open({str(tmp_path / "factor.txt")!r}).read()) / n_bins
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    import rdpaper

    check = next(c for c in catalog.all_checks("quick") if c.id == "gr21.thm3")
    # the check's guarantee stands for a plugin paper's (registered like ex23's)
    g = Guarantee("rd1.radius", rdpaper.radius, "rd1", "Theorem 1", "", (), "conditional")
    monkeypatch.setattr(registry, "get", lambda gid: g)
    before = result_inputs(check, 100, 0, 0.01)
    (tmp_path / "factor.txt").write_text("2.0")
    after = result_inputs(check, 100, 0, 0.01)
    sys.modules.pop("rdpaper", None)
    assert changed_inputs(before, after) == [VALUES_CHANGED]
    monkeypatch.undo()
    own = result_inputs(check, 100, 0, 0.01)  # calcheck's code stamp covers its own bounds
    assert set(own) == {"check", "reps", "root_seed", "false_alarm", "code"}
