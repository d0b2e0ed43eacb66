"""The wheel installs exactly one top-level import package, ``calcheck``.

Builds the wheel from the repository (hatchling, without build isolation), reads its file
list, then imports it from a folder of its own with the repository taken off the path.
"""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ("bounds", "simulations", "theory_checks", "figures")

pytest.importorskip("hatchling")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(out), str(ROOT)],
        check=True,
    )  # fmt: skip
    (path,) = out.glob("calcheck-*.whl")
    return path


def test_wheel_has_one_top_level_package(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    top = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert top == {"calcheck"}
    for layer in LAYERS:
        assert f"calcheck/{layer}/__init__.py" in names
    assert not [n for n in names if "__pycache__" in n or n.startswith("calcheck/tests")]
    entry = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("entry_points.txt")))
    assert b"calcheck = calcheck.theory_checks.cli:main" in entry


def test_installed_wheel_imports_calcheck_only(wheel, tmp_path):
    with zipfile.ZipFile(wheel) as z:
        z.extractall(tmp_path)
    probe = f"""
import sys
from pathlib import Path
root = Path({str(ROOT)!r})
sys.path[:] = [{str(tmp_path)!r}] + [p for p in sys.path[1:] if Path(p or '.').resolve() != root]
import calcheck, calcheck.bounds, calcheck.simulations.engine, calcheck.figures.registry
import calcheck.theory_checks.cli
from calcheck.theory_checks.catalog import all_checks
assert len(all_checks("quick")) > 100
bare = sorted(m for m in sys.modules if m.split(".")[0] in {LAYERS!r})
assert not bare, bare
assert Path(calcheck.bounds.__file__).is_relative_to({str(tmp_path)!r}), calcheck.bounds.__file__
assert calcheck.__path__ == [str(Path({str(tmp_path)!r}) / 'calcheck')], calcheck.__path__
for name in {LAYERS!r}:
    try:
        __import__(name)
    except ModuleNotFoundError:
        continue
    raise SystemExit(f'import {{name}} worked')
print(calcheck.get_guarantee('gr21.thm3').function(n=3000, n_bins=10, alpha=0.1))
"""
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("0.094")
