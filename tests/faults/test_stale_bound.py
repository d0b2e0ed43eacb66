"""S1.1: a study's bound whose module constant or imported helper changes is recomputed.

The bound ``mymod:radius`` is gr21 Theorem 3's radius times ``FACTOR * helper.scale()``. With
``FACTOR = 1.0`` the check is consistent; with ``0.0`` the radius is 0 and the check must
say violated, even when the rerun goes into the same ``--out`` (whose store holds the
earlier verdict as a record), and the run must say which input changed.
"""

from __future__ import annotations

import json
import logging
import sys

import pytest

from calcheck.simulations.provenance import code_fingerprint, code_inputs
from calcheck.theory_checks.cli.main import main
from calcheck.theory_checks.user.guarantees import _forget_all

MODULE = """\
import numpy as np
from helper import scale

FACTOR = {factor}


def radius(n, n_bins, alpha):
    return FACTOR * scale() * np.sqrt(np.log(2 * n_bins / alpha) / (2 * (n // n_bins - 1)))
"""
HELPER = "def scale():\n    return {value}\n"
STUDY = """\
guarantee = "mine.stale"
bound = "mymod:radius"
method = "umd"
event = "conditional"
reps = 200
alphas = [0.1]
law = "uniform_half"
[grid]
n = [500]
n_bins = [5]
"""


@pytest.fixture
def study(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "dont_write_bytecode", True)  # an edit within a second counts
    (tmp_path / "s.toml").write_text(STUDY)
    yield tmp_path
    for name in ("mymod", "helper"):
        sys.modules.pop(name, None)
    _forget_all()


def _run(folder, caplog, *, factor="1.0", scale="1.0"):
    """``calcheck run --study s.toml --out out`` as a new process would (modules re-read)."""
    (folder / "mymod.py").write_text(MODULE.format(factor=factor))
    (folder / "helper.py").write_text(HELPER.format(value=scale))
    for name in ("mymod", "helper"):
        sys.modules.pop(name, None)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="calcheck"):
        status = main(["run", "--study", str(folder / "s.toml"), "--out", str(folder / "out")])
    verdict = json.loads((folder / "out" / "results.json").read_text())["checks"][0]["verdict"]
    said = [r.getMessage() for r in caplog.records if "recomputed" in r.getMessage()]
    return status, verdict, said


def test_a_changed_module_constant_is_recomputed_and_named(study, caplog):
    assert _run(study, caplog)[1] == "consistent"
    status, verdict, said = _run(study, caplog, factor="0.0")
    assert (status, verdict) == (1, "violated")  # not the stored "consistent"
    assert said == ["study:mine.stale: recomputed: the bound's code changed (mymod.py)"]
    # unchanged: the record is read back, nothing said
    assert _run(study, caplog, factor="0.0")[1:] == ("violated", [])


def test_a_changed_helper_in_an_imported_module_is_recomputed_and_named(study, caplog):
    assert _run(study, caplog)[1] == "consistent"
    _, verdict, said = _run(study, caplog, scale="0.0")
    assert verdict == "violated"
    assert said == ["study:mine.stale: recomputed: the bound's code changed (helper.py)"]


def test_a_constant_changed_at_run_time_changes_the_fingerprint(study):
    (study / "mymod.py").write_text(MODULE.format(factor="1.0"))
    (study / "helper.py").write_text(HELPER.format(value="1.0"))
    sys.path.insert(0, str(study))
    try:
        import mymod
    finally:
        sys.path.remove(str(study))
    before = code_inputs(mymod.radius)
    assert set(before) == {"mymod.py", "mymod (values)", "helper.py", "helper (values)"}
    mymod.FACTOR = 0.0
    after = code_inputs(mymod.radius)
    assert [k for k in before if before[k] != after[k]] == ["mymod (values)"]
    assert code_fingerprint(main) is None  # calcheck's own code: its code stamp covers it


def test_bounds_made_by_a_factory_or_interactively_differ_by_what_they_capture(study):
    from calcheck import define_guarantee

    def make(factor):
        return lambda n, n_bins, alpha: factor * 0.1

    one = define_guarantee("mine.fac", make(1.0), method="umd", event="conditional")
    one_print = one.fingerprint
    zero = define_guarantee("mine.fac", make(0.0), method="umd", event="conditional")
    assert zero.fingerprint != one_print
    namespace = {"K": 1.0}
    exec("def typed(n, n_bins, alpha):\n    return K * 0.1\n", namespace)  # no source file
    typed = define_guarantee("mine.typed", namespace["typed"], method="umd", event="conditional")
    before = typed.fingerprint
    namespace["K"] = 0.0
    assert typed.fingerprint != before  # computed when a key is made, not at definition
