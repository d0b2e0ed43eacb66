"""Study files that fail give one clear line naming the file or module (issue 38)."""

import subprocess
import sys
import uuid

import pytest

from calcheck.simulations.memory import MemoryRefused
from calcheck.theory_checks.cli.main import main
from calcheck.theory_checks.study.files import load_search_study, load_study

LAW = """
[law]
name = "u"
scores = { kind = "uniform" }
eta = { kind = "logistic", slope = 2.0, intercept = 0.0 }
"""


def _study(tmp_path, head, grid="n = [100]\nn_bins = [5]", law=LAW):
    path = tmp_path / "s.toml"
    path.write_text(f"{head}\nalphas = [0.1]\n{law}\n[grid]\n{grid}\n")
    return path


def _own(tmp_path, source, *, method="umd"):
    """A study whose bound lives in a module of its own beside it (a fresh module name)."""
    name = f"mybound_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(source)
    gid = f"faults{uuid.uuid4().hex[:6]}.thm1"
    head = f'guarantee = "{gid}"\nbound = "{name}:radius"\nmethod = "{method}"\nevent = "marginal"'
    return _study(tmp_path, head + "\nreps = 200"), name


def test_huge_n_is_refused_before_allocating(tmp_path):
    path = _study(tmp_path, 'guarantee = "gr21.thm3"', grid="n = [1000000000000]\nn_bins = [10]")
    with pytest.raises(MemoryRefused, match=r"^study file '.*s\.toml': n = 1000000000000 with"):
        load_study(path)
    with pytest.raises(MemoryRefused, match="the largest n that fits is"):
        load_study(path)


def test_missing_guarantee_key_names_the_key_and_the_file(tmp_path):
    path = _study(tmp_path, "reps = 200")
    with pytest.raises(ValueError, match=r"s\.toml' has no guarantee key: add guarantee = "):
        load_study(path)


@pytest.mark.parametrize("reps", [0, -3])
def test_reps_below_one_is_refused(tmp_path, reps):
    path = _study(tmp_path, f'guarantee = "gr21.thm3"\nreps = {reps}')
    with pytest.raises(
        ValueError, match=rf"^study file '.*s\.toml': reps must be a positive integer, got {reps}$"
    ):
        load_study(path)


@pytest.mark.parametrize(
    ("source", "what"),
    [
        ("def radius(n, alpha)\n    return 0.5\n", "SyntaxError: expected ':'"),
        ("import sys\nsys.exit(3)\n", "it called sys.exit(3) while being imported"),
        ("X = 1 / 0\n", "ZeroDivisionError: division by zero"),
        ("import no_such_module_c2\n", "ModuleNotFoundError: No module named 'no_such_module_c2'"),
    ],
)
def test_a_module_that_fails_to_import_is_one_line(tmp_path, source, what):
    path, name = _own(tmp_path, source)
    with pytest.raises(ValueError, match="failed") as info:
        load_study(path)
    message = str(info.value)
    assert message.startswith(f"bound '{name}:radius': importing '{name}' failed (")
    assert f"{name}.py, line " in message
    assert message.endswith(what)
    assert "\n" not in message


def test_a_missing_module_says_where_to_put_it(tmp_path):
    path = _study(
        tmp_path, 'guarantee = "x.y"\nbound = "nomod_c2:r"\nmethod = "umd"\nevent = "ece"'
    )
    with pytest.raises(ValueError, match=r"cannot import 'nomod_c2'.*put it beside the study file"):
        load_study(path)


RADIUS = "import math\n\ndef radius(n, n_bins, alpha):\n    return 0.4 + 0 * math.pi\n"


def test_the_users_module_reaches_workers_that_lack_its_folder(tmp_path):
    path, name = _own(tmp_path, RADIUS)
    text = path.read_text() + "[search]\nfamily = 'beta_piecewise'\n"
    path.write_text(
        text.replace("[law]", "[unused]").split("[unused]")[0] + text[text.index("[grid]") :]
    )
    load_search_study(path)
    from calcheck.theory_checks.running.verify import cloudpickle_module

    blob = cloudpickle_module().dumps(sys.modules[name].radius)
    code = (
        "import pickle, sys; print(pickle.loads(sys.stdin.buffer.read())(n=1, n_bins=1, alpha=0.1))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], input=blob, capture_output=True, cwd="/", check=False
    )
    assert done.stdout.decode().strip() == "0.4", done.stderr.decode()[-300:]


CALIBRATOR = """import numpy as np


class Cal:
    def __init__(self, n_bins=5):
        self.n_bins = n_bins

    def fit(self, s, y):
        self.m = float(np.mean(y))
        return self

    def predict(self, s):
        return np.full(np.shape(s), self.m)
"""


@pytest.mark.slow  # about 7 s: starts two loky workers
def test_a_study_calibrator_beside_the_file_runs_with_two_jobs(tmp_path, monkeypatch, capsys):
    path, _ = _own(tmp_path, RADIUS)
    cal = f"mycal_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{cal}.py").write_text(CALIBRATOR)
    path.write_text(path.read_text().replace('method = "umd"', f'method = "{cal}:Cal"'))
    monkeypatch.chdir(tmp_path)
    status = main(["run", "--study", str(path), "--jobs", "2", "--out", str(tmp_path / "o")])
    out = capsys.readouterr()
    assert status == 0, out.err[-500:]
    assert "1 of 1 checks as expected" in out.out


def test_a_calibrator_whose_constructor_raises_is_one_line(tmp_path):
    path, _ = _own(tmp_path, RADIUS)
    cal = f"mycal_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{cal}.py").write_text(
        "class Cal:\n    def __init__(self):\n        raise RuntimeError('no GPU')\n"
    )
    path.write_text(path.read_text().replace('method = "umd"', f'method = "{cal}:Cal"'))
    with pytest.raises(
        ValueError, match=r":Cal' with \{\}: constructing it raised RuntimeError: no GPU$"
    ):
        load_study(path)
