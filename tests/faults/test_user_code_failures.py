"""S2: every failure of the user's code, and of the disk under the store, is one line (issue 47).

A calibrator whose ``fit`` or ``predict`` raises, a law whose eta raises, a plugin's bound
that raises: ``calcheck: error: <what> raised <Error>: <msg> (file:line)``, exit 2, with
``--jobs 1`` or ``2`` and any backend. A plugin that exits or raises at import: one warning,
the built-in papers still listed. SQLite's I/O errors (a file-size limit) and a write that
finds no room: one line. ``calcheck audit`` on a damaged results.json: one line naming the
file and what is wrong.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from importlib.metadata import EntryPoint

import pytest

import calcheck
from calcheck.bounds import plugins, registry
from calcheck.simulations.parallel import UserCodeError
from calcheck.theory_checks.cli.main import main
from calcheck.theory_checks.user.guarantees import _forget_all

USER_MODULE = """\
import numpy as np


class FitRaises:
    def fit(self, scores, labels):
        raise RuntimeError("fit exploded")

    def predict(self, scores):
        return scores


class PredictRaises:
    def fit(self, scores, labels):
        return self

    def predict(self, scores):
        raise KeyError("nope")


def radius(n, n_bins, alpha):
    return 0.5


def eta_raises(s):
    if s.size == 1029:  # the probe grid of the law's checks passes
        return np.full_like(s, 0.5)
    raise ArithmeticError("eta exploded")
"""
#: Lines of USER_MODULE that raise: fit, predict, eta.
FIT_LINE, PREDICT_LINE, ETA_LINE = 6, 17, 27
STUDY = """\
guarantee = "mine.{name}"
bound = "ucf_user:radius"
method = "ucf_user:{name}"
event = "ece"
reps = 100
alphas = [0.1]
{law}
[grid]
n = [200]
n_bins = [5]
"""
SEARCH = """
[search]
family = "beta_piecewise"
evaluations = 10
reps = 100
"""


@pytest.fixture
def user_module(tmp_path):
    """The user's module beside the study files; forgotten afterwards."""
    (tmp_path / "ucf_user.py").write_text(USER_MODULE)
    yield tmp_path / "ucf_user.py"
    sys.modules.pop("ucf_user", None)
    if str(tmp_path) in sys.path:
        sys.path.remove(str(tmp_path))
    _forget_all()


def _one_line(capsys) -> list[str]:
    err = capsys.readouterr().err.strip().splitlines()
    assert not any("Traceback" in line for line in err)
    return err


@pytest.mark.parametrize("jobs", ["1", "2"])
@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("FitRaises", f"FitRaises.fit raised RuntimeError: fit exploded ({{file}}:{FIT_LINE})"),
        (
            "PredictRaises",
            f"PredictRaises.predict raised KeyError: 'nope' ({{file}}:{PREDICT_LINE})",
        ),
    ],
)
def test_a_calibrator_that_raises_is_one_line(tmp_path, capsys, user_module, jobs, name, said):
    # before: a 48-72 line traceback ending in "RuntimeError: fit exploded", exit 1
    study = tmp_path / "s.toml"
    study.write_text(STUDY.format(name=name, law='law = "uniform_half"'))
    status = main(["run", "--study", str(study), "--out", str(tmp_path / "o"), "--jobs", jobs])
    err = _one_line(capsys)
    expected = "calcheck: error: the calibrator ucf_user." + said.format(file=user_module)
    assert (status, err) == (2, [expected])


def test_a_calibrator_that_raises_in_a_search_is_one_line(tmp_path, capsys, user_module):
    study = tmp_path / "s.toml"
    study.write_text(STUDY.format(name="FitRaises", law="") + SEARCH)
    status = main(["search", "--study", str(study), "--out", str(tmp_path / "o"), "--jobs", "2"])
    expected = (
        "calcheck: error: the calibrator ucf_user.FitRaises.fit raised RuntimeError: fit "
        f"exploded ({user_module}:{FIT_LINE})"
    )
    assert (status, _one_line(capsys)) == (2, [expected])


def test_a_calibrator_that_raises_on_dask_is_one_line(tmp_path, capsys, user_module):
    pytest.importorskip("distributed")
    study = tmp_path / "s.toml"
    study.write_text(STUDY.format(name="PredictRaises", law='law = "uniform_half"'))
    out = str(tmp_path / "o")
    status = main(["run", "--study", str(study), "--out", out, "--jobs", "2", "--backend", "dask"])
    expected = (
        "calcheck: error: the calibrator ucf_user.PredictRaises.predict raised KeyError: 'nope' "
        f"({user_module}:{PREDICT_LINE})"
    )
    assert (status, _one_line(capsys)[-1:]) == (2, [expected])


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_a_law_whose_eta_raises_is_one_line(user_module, monkeypatch, n_jobs):
    # before: the eta's ArithmeticError with its traceback (through joblib's with n_jobs=2)
    monkeypatch.syspath_prepend(str(user_module.parent))
    from ucf_user import eta_raises

    law = calcheck.BinaryLaw.from_callable(eta_raises, calcheck.ScoreLaw(2.0, 5.0), name="e")
    with pytest.raises(UserCodeError) as info:
        calcheck.verify("gr21.thm3", law, n=200, n_bins=5, reps=100, rng=0, n_jobs=n_jobs)
    assert str(info.value) == (
        "the law's eta ucf_user.eta_raises raised ArithmeticError: eta exploded "
        f"({user_module}:{ETA_LINE})"
    )


# ---------------------------------------------------------------------- plugins


@pytest.fixture
def fake_plugins(monkeypatch, tmp_path):
    """Entry points installed by hand (as in tests/theory_checks/catalog/test_plugins.py)."""
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv(plugins.ENV, raising=False)

    def install(mapping):
        points = tuple(EntryPoint(k, v, plugins.GROUP) for k, v in mapping.items())
        monkeypatch.setattr(plugins, "entry_points", lambda: points)
        registry._forget_plugins()
        _forget_all()

    yield install
    registry._forget_plugins()
    _forget_all()


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ("import sys\nsys.exit(3)\n", "it called sys.exit(3)"),
        ("raise RuntimeError('no licence')\n", "RuntimeError: no licence"),
        ("class Odd(BaseException):\n    pass\n\n\nraise Odd()\n", "Odd"),
    ],
)
def test_a_plugin_that_exits_or_raises_at_import_is_one_warning(
    fake_plugins, tmp_path, capsys, caplog, body, said
):
    # before (sys.exit): every command, `calcheck list` too, exited 3 with no output
    caplog.set_level(logging.WARNING, logger="calcheck.plugins")
    (tmp_path / "ucf_exits.py").write_text(body)
    fake_plugins({"ucfx": "ucf_exits"})
    assert main(["list"]) == 0
    assert "gr21.thm3" in capsys.readouterr().out  # the built-in papers are all there
    line = body.count("\n")  # the module's last line raises
    assert [r.getMessage() for r in caplog.records] == [
        f"calcheck: paper plugin 'ucfx' (ucf_exits) not loaded: {said} "
        f"({tmp_path / 'ucf_exits.py'}:{line}) (the other papers are unaffected)"
    ]


def test_a_plugin_interrupted_at_import_stops_the_command(fake_plugins, tmp_path):
    (tmp_path / "ucf_ctrl_c.py").write_text("raise KeyboardInterrupt\n")
    fake_plugins({"ucfk": "ucf_ctrl_c"})
    with pytest.raises(KeyboardInterrupt):
        registry.plugin_papers()


PLUGIN_BOUND = """\
from calcheck.plugin import Guarantee


def radius(n, n_bins, alpha):
    return n / (n_bins - n_bins)


GUARANTEES = [
    Guarantee("ucfb.radius", radius, "ucfb", "Theorem 1", "a radius", ("n >= 2B",), "conditional")
]


def checks(budget="quick"):
    return []
"""


def test_a_plugin_bound_that_raises_is_one_line(fake_plugins, tmp_path, capsys):
    # before: a ZeroDivisionError traceback, exit 1
    (tmp_path / "ucf_bound.py").write_text(PLUGIN_BOUND)
    fake_plugins({"ucfb": "ucf_bound"})
    status = main(["bound", "ucfb.radius", "--n", "100", "--n-bins", "10", "--alpha", "0.1"])
    expected = (
        "calcheck: error: the bound ucf_bound.radius raised ZeroDivisionError: division by "
        f"zero ({tmp_path / 'ucf_bound.py'}:5)"
    )
    assert (status, _one_line(capsys)) == (2, [expected])


# ---------------------------------------------------------------------- no room to write


def _limited_calcheck(args, cwd, kib: int, stdout=subprocess.PIPE):
    """``python -m calcheck ARGS`` with files limited to ``kib`` KiB (``ulimit -f``)."""
    import resource

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (kib * 1024, kib * 1024))

    return subprocess.run(
        [sys.executable, "-m", "calcheck", *args],
        cwd=cwd,
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=limit,
        env={**os.environ, "CALCHECK_PLUGINS": "0"},
        timeout=300,
    )


@pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_FSIZE is POSIX")
def test_a_file_size_limit_under_the_store_is_one_line(tmp_path):
    # before: "sqlite3.OperationalError: disk I/O error" and its traceback, exit 1
    args = ["run", "--checks", "gr21.thm3", "--out", "o", "--reps", "200", "--jobs", "1"]
    done = _limited_calcheck(args, tmp_path, kib=40)
    err = done.stderr.strip().splitlines()
    assert done.returncode == 2, done.stderr
    assert not any("Traceback" in line for line in err)
    assert err[-1] == (
        "calcheck: error: no room to write the store 'o/store.sqlite' (disk I/O error: no "
        "space, a file-size limit (ulimit -f) or a disk quota); the blocks stored so far are "
        "kept: free space (or raise the limit) and rerun the same command to resume"
    )


@pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_FSIZE is POSIX")
def test_a_file_size_limit_on_any_output_is_one_line(tmp_path):
    # before: "OSError: [Errno 27] File too large" and its traceback, exit 1
    with open(tmp_path / "list.json", "w") as out:
        done = _limited_calcheck(["list", "--json"], tmp_path, kib=4, stdout=out)
    assert (done.returncode, done.stderr.strip().splitlines()) == (
        2,
        [
            "calcheck: error: File too large (a full disk, a file-size limit (ulimit -f) or a "
            "disk quota); the previous outputs are unchanged and stored blocks are kept: free "
            "space (or raise the limit) and rerun the same command"
        ],
    )


# ---------------------------------------------------------------------- audit

GOOD_RESULTS = {
    "meta": {"seed": 1},
    "headline": {"text": "1 of 1 checks as expected"},
    "checks": [
        {
            "id": "mine.x",
            "role": "guarantee",
            "verdict": "consistent",
            "kind": "coverage",
            "mutant": {"claim": "the bound times 0.7", "caught": True, "detail": "1 of 1 cell"},
            "powerless": [],
            "cells": [{"experiment": "e", "alpha": 0.1, "certified_factor": 0.5}],
        }
    ],
}


def _damaged(change):
    data = json.loads(json.dumps(GOOD_RESULTS))
    return change(data)


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (  # before: AttributeError: 'list' object has no attribute 'get'
            _damaged(lambda d: {**d, "headline": [1, 2]}),
            "'headline' must be an object, got a list [1, 2]",
        ),
        ([GOOD_RESULTS["headline"]], "its top level must be an object, got a list"),
        ({"headline": {}}, "it has no 'checks'"),
        (  # before: AttributeError: 'str' object has no attribute 'get'
            _damaged(lambda d: {**d, "checks": "x"}),
            "'checks' must be a list, got a string 'x'",
        ),
        (_damaged(lambda d: {**d, "checks": [{"role": "guarantee"}]}), "checks[0] has no 'id'"),
        (  # before: audited as caught
            _damaged(lambda d: d["checks"][0]["mutant"].update(caught="yes") or d),
            "checks[0].mutant.caught must be true or false, got a string 'yes'",
        ),
        (  # before: AttributeError: 'int' object has no attribute 'get'
            _damaged(lambda d: d["checks"][0].update(cells=[3]) or d),
            "checks[0].cells[0] must be an object, got a number 3",
        ),
        (
            _damaged(lambda d: d["checks"][0].update(kind="rate", slack="big") or d),
            "checks[0].slack must be a number or null, got a string 'big'",
        ),
        (
            _damaged(lambda d: d["checks"][0].update(powerless=3) or d),
            "checks[0].powerless must be a list or null, got a number 3",
        ),
    ],
)
def test_a_damaged_results_json_is_one_line_naming_it(tmp_path, capsys, data, said):
    path = tmp_path / "results.json"
    path.write_text(json.dumps(data))
    status = main(["audit", "--results", str(path)])
    err = _one_line(capsys)
    assert status == 2
    assert len(err) == 1
    assert err[0].startswith(
        f"calcheck: error: {path} is not a calcheck run's results.json: {said}"
    )


def test_a_sound_results_json_is_audited(tmp_path, capsys):
    path = tmp_path / "results.json"
    path.write_text(json.dumps(GOOD_RESULTS))
    assert main(["audit", "--results", str(path)]) == 0
    out = capsys.readouterr().out
    assert "mine.x" in out
    assert "1 of 1 checks as expected." in out


def test_the_user_module_lines_are_those_that_raise():
    lines = USER_MODULE.splitlines()
    assert "fit exploded" in lines[FIT_LINE - 1]
    assert "nope" in lines[PREDICT_LINE - 1]
    assert "eta exploded" in lines[ETA_LINE - 1]
