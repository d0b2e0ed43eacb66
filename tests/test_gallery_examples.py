"""The docs gallery (docs/examples, sphinx-gallery) is well formed and every script runs.

Each ``plot_*.py`` runs in a subprocess as sphinx-gallery runs it (its own folder as the
working directory, a non-interactive matplotlib backend) and must exit 0 (the scripts
assert their own conclusions) and print what its prose says it finds.

Where ``CALCHECK_GALLERY_BUILT`` holds a time (seconds since the epoch: ``.ci/run`` exports
the start of its clean docs build), a script whose output that build captured is not run a
second time: the build ran it (and stops on a script's error, ``abort_on_example_error``;
sphinx-gallery writes a script's ``.md5`` only after it ran), and its captured output is
checked instead, but only where it was written after that time, from this very script (the
``.md5``), and after the last change to any of calcheck's modules; otherwise the script runs
here. The captured output is a little looser than a run of its own: sphinx-gallery captures
stderr with stdout and the repr of a cell's last expression, not what child processes
print, and runs several scripts in one process.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GALLERY = ROOT / "docs" / "examples"
BUILT = ROOT / "docs" / "auto_examples"  # sphinx-gallery's output (gallery_dirs)
PACKAGE = ("calcheck", "bounds", "simulations", "theory_checks", "figures")
SCRIPTS = sorted(p.name for p in GALLERY.glob("plot_*.py"))

#: Lines each script must print (its stated conclusions).
EXPECTED = {
    "plot_eb_bound.py": [
        "<CheckResult study:mine.eb_umd (check of mine.eb_umd): consistent, as expected",
        "a claim that holds: no number of replicates catches it",
        "mine.eb_umd.control.times_0.4 (negative control of mine.eb_umd): violated, as expected",
    ],
    "plot_verify_own_law.py": [
        "<CheckResult study:gr21.thm3 (check of gr21.thm3): consistent, as expected",
        "(negative control of gr21.thm3): violated, as expected",
    ],
    "plot_pytest_regression.py": [
        "the three tests pass",
        "mine.thm3_no_union was expected consistent but is violated",
    ],
    "plot_search_worst_law.py": [
        "gr21.thm3 (stated bound) on beta_piecewise5",
        "fresh seed: consistent",
        "fresh seed: violated",
    ],
    "plot_exact_coverage.py": [
        "gr21.thm3: eps = 0.1636, exact coverage at eta = 1/2 0.9885",
        "(check of gr21.thm3): consistent, as expected",
    ],
    "plot_rate_check.py": [
        "klm19.lem43 (rate check of klm19.lem43): consistent, as expected",
        "klm19.lem43.control.no_log (negative control of klm19.lem43): violated, as expected",
        "mine.lem43.control.b_to_0.9 (negative control of klm19.lem43): violated, as expected",
    ],
    "plot_paper_figure.py": ["[holds]"],
    "plot_own_bound.py": [
        "(check of mine.binomial_umd): consistent, as expected",
        "(negative control of mine.binomial_umd): violated, as expected",
        "holds=True",
    ],
}


def _title(text: str) -> tuple[str, str]:
    lines = [line.rstrip() for line in text.strip().splitlines()]
    return lines[0], lines[1]


def test_gallery_readme_and_scripts_are_well_formed():
    title, rule = _title((GALLERY / "README.txt").read_text())
    assert title
    assert set(rule) == {"="}
    assert len(rule) >= len(title)
    assert len(SCRIPTS) >= 6
    assert set(EXPECTED) == set(SCRIPTS)
    for name in SCRIPTS:
        source = (GALLERY / name).read_text()
        docstring = re.match(r'r?"""\n(.*?)"""', source, re.S)
        assert docstring, f"{name}: no module docstring at the top"
        title, rule = _title(docstring.group(1))
        assert set(rule) == {"="}, f"{name}: no RST title"
        assert len(rule) == len(title), f"{name}: title underline of the wrong length"
        assert "\n# %%\n" in source, f"{name}: no code cells"
        assert "plt.show()" in source, f"{name}: draws no figure"


def _captured_by_the_docs_build(name: str) -> str | None:
    """The output the docs build captured from ``name``, where it is this script's, and fresh."""
    built_after = os.environ.get("CALCHECK_GALLERY_BUILT", "")
    if not built_after.isdigit():
        return None
    rst, md5 = BUILT / name.replace(".py", ".rst"), BUILT / f"{name}.md5"
    if not (rst.is_file() and md5.is_file()):
        return None
    if rst.stat().st_mtime < int(built_after):
        return None  # from an earlier build
    # sphinx-gallery's md5 (get_md5sum, text mode): universal newlines, utf-8
    source = (GALLERY / name).read_text(encoding="utf-8", errors="surrogateescape")
    if (
        md5.read_text().strip()
        != hashlib.md5(source.encode("utf-8", "surrogateescape")).hexdigest()
    ):
        return None  # made from another version of the script
    modules = [p for folder in PACKAGE for p in (ROOT / folder).rglob("*.py")]
    if rst.stat().st_mtime < max(p.stat().st_mtime for p in modules):
        return None  # made before calcheck's code last changed
    return _script_output(rst.read_text())


def _script_output(rst: str) -> str:
    """The text of the ``sphx-glr-script-out`` blocks of a sphinx-gallery page, in order."""
    out, lines = [], rst.splitlines()
    for i, line in enumerate(lines):
        if line.strip() != ".. rst-class:: sphx-glr-script-out":
            continue
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(".. code-block::"):
            j += 1
        for body in lines[j + 1 :]:
            if body.strip() and not body.startswith("    "):
                break
            out.append(body[4:])
    return "\n".join(out)


def test_script_output_is_read_from_a_gallery_page():
    page = (
        "text\n\n.. rst-class:: sphx-glr-script-out\n\n .. code-block:: none\n\n"
        "    first line\n      indented\n\n    after a blank\n\n.. code-block:: Python\n\n"
        "    code = 1\n"
    )
    assert _script_output(page).split() == ["first", "line", "indented", "after", "a", "blank"]


@pytest.mark.slow
@pytest.mark.parametrize("name", SCRIPTS)
def test_gallery_script_runs(name):
    stdout = _captured_by_the_docs_build(name)
    if stdout is None:
        env = dict(os.environ, MPLBACKEND="Agg", CALCHECK_PLUGINS="0")
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
        run = subprocess.run(
            [sys.executable, name],
            cwd=GALLERY,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert run.returncode == 0, run.stderr[-3000:]
        stdout = run.stdout
    for line in EXPECTED[name]:
        assert line in stdout, f"{name} did not print {line!r}:\n{stdout[-3000:]}"
    assert "does NOT hold" not in stdout
