"""The wheel installs exactly one top-level import package, ``calcheck``.

Builds the wheel from the repository (hatchling, without build isolation), reads its file
list, then imports it from a folder of its own with the repository taken off the path. An
editable install (and a source tree) has the repository root on the path, so the layers are
importable by their bare names too: ``bounds`` must then be ``calcheck.bounds`` itself, never a
second copy of it.
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
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(out),
            str(ROOT),
        ],
        check=True,
    )
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
    assert b"calcheck = calcheck._entry:main" in entry


def test_installed_wheel_imports_calcheck_only(wheel, tmp_path):
    with zipfile.ZipFile(wheel) as z:
        z.extractall(tmp_path)
    probe = f"""
import sys
from pathlib import Path
root = Path({str(ROOT)!r})
sys.path[:] = [{str(tmp_path)!r}] + [p for p in sys.path[1:] if Path(p or '.').resolve() != root]
import calcheck, calcheck.bounds, calcheck.simulations.engine, calcheck.figures.registry
import calcheck.theory_checks.cli.main
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


# Imports a layer by its bare name and through calcheck, in the order given, and checks that
# both names are the same module objects (a second copy has its own Guarantee class).
ALIAS_PROBE = """
import sys
first = sys.argv[1]
__import__(first)
import bounds, bounds.guarantee, simulations.laws, theory_checks, figures
import calcheck, calcheck.bounds.guarantee, calcheck.simulations.laws
from bounds.guarantee import Guarantee
from figures import registry
assert Path(bounds.__file__).parent == root / 'bounds', bounds.__file__
assert bounds is calcheck.bounds, (bounds, calcheck.bounds)
assert bounds.guarantee is calcheck.bounds.guarantee
assert Guarantee is calcheck.bounds.guarantee.Guarantee
assert isinstance(calcheck.get_guarantee('gr21.thm3'), Guarantee)
assert simulations.laws is calcheck.simulations.laws and simulations is calcheck.simulations
assert theory_checks is calcheck.theory_checks and figures is calcheck.figures
assert registry is calcheck.figures.registry
import simulations.engine  # not loaded yet: loaded once, under calcheck's name
assert simulations.engine is sys.modules['calcheck.simulations.engine']
assert simulations.engine.__spec__.name == 'calcheck.simulations.engine'
layers = ('bounds', 'simulations', 'theory_checks', 'figures')
bare = {k: m for k, m in sys.modules.items() if k.split('.')[0] in layers}
for name, module in bare.items():
    assert module is sys.modules['calcheck.' + name], name
try:
    import bounds.no_such_module
except ModuleNotFoundError as error:
    assert error.name == 'bounds.no_such_module', error.name
print('one copy')
"""


@pytest.fixture(scope="module")
def editable(tmp_path_factory) -> Path:
    """The editable wheel hatchling builds for ``pip install -e``, unpacked."""
    out = tmp_path_factory.mktemp("editable")
    build = "import sys; from hatchling.build import build_editable; build_editable(sys.argv[1])"
    subprocess.run([sys.executable, "-c", build, str(out)], cwd=ROOT, check=True)
    (path,) = out.glob("calcheck-*.whl")
    site = out / "site"
    with zipfile.ZipFile(path) as z:
        z.extractall(site)
    return site


@pytest.mark.parametrize("first", ["bounds", "calcheck.bounds"])
def test_editable_install_loads_each_layer_once(editable, first, tmp_path):
    # the editable install's .pth alone puts the repository on the path (first, so that an
    # installed copy of calcheck cannot come before it)
    setup = f"""
import site, sys
from pathlib import Path
root = Path({str(ROOT)!r})
sys.path[:] = [p for p in sys.path[1:] if Path(p or '.').resolve() != root]
before = list(sys.path)
site.addsitedir({str(editable)!r})
sys.path[:] = [p for p in sys.path if p not in before] + before
"""
    _assert_one_copy(setup, first, tmp_path)


def _assert_one_copy(setup: str, first: str, cwd) -> None:
    done = subprocess.run(
        [sys.executable, "-c", setup + ALIAS_PROBE, first],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "one copy"


@pytest.mark.parametrize("first", ["bounds", "calcheck.bounds"])
def test_source_tree_loads_each_layer_once(first):
    # ``python -c`` from the repository root: the root is on the path as the current folder
    setup = f"""
from pathlib import Path
root = Path({str(ROOT)!r})
"""
    _assert_one_copy(setup, first, ROOT)
