"""A paper plugin from public names only (issue 36, item 3): calcheck.plugin, and a plugin
built from calcheck.define_guarantee alone through ``calcheck list``, ``run`` and ``search``."""

from __future__ import annotations

import ast
import doctest
import importlib
import json
import logging
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import test_plugins

import calcheck
import calcheck.plugin
from calcheck.bounds import registry
from calcheck.simulations import search as search_core
from calcheck.theory_checks import catalog
from calcheck.theory_checks.cli.main import main
from calcheck.theory_checks.user.guarantees import _forget_all

# the entry points by hand, and the fixture plugins importable (one home: test_plugins.py)
fake_plugins = test_plugins.fake_plugins
PUBLIC_MODULES = {"calcheck": calcheck, "calcheck.plugin": calcheck.plugin}


def _private_imports(path: Path) -> list[str]:
    """The imports of calcheck in ``path`` that reach past the public surface."""
    bad = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]
                if top == "calcheck" and alias.name not in ("calcheck", "calcheck.plugin"):
                    bad.append(f"import {alias.name}")
        elif isinstance(node, ast.ImportFrom) and not node.level:
            module = node.module or ""
            if module.split(".")[0] != "calcheck":
                continue
            public = PUBLIC_MODULES.get(module)
            names = [a.name for a in node.names]
            if public is None or any(n not in public.__all__ for n in names):
                bad.append(f"from {module} import {', '.join(names)}")
    return [f"{path.name}: {b}" for b in bad]


def test_the_plugins_import_only_public_names():
    files = [p for root in test_plugins.PLUGIN_ROOTS for p in sorted(root.rglob("*.py"))]
    assert len(files) >= 4
    assert [b for p in files for b in _private_imports(p)] == []


def test_the_import_check_flags_a_private_name(tmp_path):
    path = tmp_path / "private.py"
    path.write_text(
        "import calcheck\nfrom calcheck.plugin import Check\nfrom calcheck import LAWS\n"
        "from calcheck.theory_checks.checks.check import Check\nimport calcheck.bounds.registry\n"
        "from calcheck import _EXPORTS\n"
    )
    assert _private_imports(path) == [
        "private.py: from calcheck.theory_checks.checks.check import Check",
        "private.py: import calcheck.bounds.registry",
        "private.py: from calcheck import _EXPORTS",
    ]


def test_the_plugin_module_is_public_and_its_example_runs():
    assert "plugin" in calcheck.__all__
    assert calcheck.plugin is calcheck.__getattr__("plugin")
    for name in calcheck.plugin.__all__:
        assert getattr(calcheck.plugin, name).__doc__, name
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    for test in finder.find(calcheck.plugin, "calcheck.plugin"):
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0


def test_a_figure_module_meets_the_figure_protocol(fake_plugins):
    fake_plugins({"ex23": "calcheck_example_paper.paper"})
    from calcheck_example_paper import radius_figure

    assert isinstance(radius_figure, calcheck.plugin.FigureModule)
    assert not isinstance(calcheck.plugin, calcheck.plugin.FigureModule)


def test_a_plugin_of_define_guarantee_alone_runs_through_list_run_search(
    fake_plugins, monkeypatch, capsys, tmp_path
):
    assert list(fake_plugins({"dg24": "calcheck_define_paper.paper"})) == ["dg24"]
    assert [g.id for g in registry.guarantees_of("dg24")] == ["dg24.bin_radius"]
    assert main(["list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    ids = [c["id"] for c in listed["checks"]]
    assert ids[-2:] == ["dg24.bin_radius", "dg24.bin_radius.control.times_0.6"]
    assert "dg24.bin_radius" in listed["studiable"]
    out = tmp_path / "out"
    # --jobs 1: the fixture registers the plugin in this process only (an installed one is
    # found by the workers too)
    assert main(["run", "--checks", "dg24", "--out", str(out), "--reps", "300", "--jobs", "1"]) == 0
    results = json.loads((out / "results.json").read_text())["checks"]
    assert {c["id"]: c["verdict"] for c in results} == {
        "dg24.bin_radius": "consistent",
        "dg24.bin_radius.control.times_0.6": "violated",
    }
    # the search of the stated bound, at a budget small enough for a test
    tiny = search_core.SearchBudget("quick", population=5, generations=1, reps=100, fresh_reps=500)
    monkeypatch.setitem(search_core.SEARCH_BUDGETS, "quick", tiny)
    argv = [
        "search",
        "dg24.bin_radius",
        "--family",
        "beta_piecewise",
        "--n",
        "200",
        "--n-bins",
        "4",
        "--out",
        str(out),
        "--jobs",
        "1",
    ]
    assert main(argv) == 0
    stored = json.loads(next((out / "search").glob("dg24.bin_radius-*.json")).read_text())
    assert stored["target"] == "dg24.bin_radius"


def test_a_defined_guarantee_of_a_plugin_is_studiable(fake_plugins):
    fake_plugins({"dg24": "calcheck_define_paper.paper"})
    assert calcheck.get_guarantee("dg24.bin_radius").paper == "dg24"
    result = calcheck.verify("dg24.bin_radius", "skewed_beta", n=200, n_bins=4, reps=200, rng=0)
    assert result.verdict == "consistent"


def _module(tmp_path, name, text):
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(text))
    return name


RADIUS = """
import numpy as np
from calcheck import define_guarantee
def radius(n, n_bins, alpha):
    return np.sqrt(np.log(2 * n_bins / alpha) / (2 * (np.floor(n / n_bins) - 1)))
"""


@pytest.mark.parametrize(
    ("key", "text", "message"),
    [
        (
            "dg25",
            "GUARANTEES = [define_guarantee('other.x', radius, method='umd', event='conditional')]",
            "calcheck: paper plugin 'dg25' (mod_dg25) not loaded: PluginError: guarantee "
            "'other.x' (defined with calcheck.define_guarantee): a guarantee of paper 'dg25' has "
            "an id starting with 'dg25.' (the other papers are unaffected)",
        ),
        (
            "dg26",
            "GUARANTEES = [define_guarantee('dg26.x', radius, method='umd', "
            "event='conditional')]\nCHECK_ON = {'dg26.x': {'laws': ['nope'], 'grid': {}}}",
            "calcheck: the checks of paper plugin 'dg26' (mod_dg26) not loaded: ValueError: "
            "CHECK_ON['dg26.x']: unknown law name 'nope' (calcheck.LAWS and `calcheck list` name "
            "the shipped laws)",
        ),
        (
            "dg27",
            "GUARANTEES = [define_guarantee('dg27.x', lambda n, alpha: 0.5 + 0 * n, "
            "method='tl_hb', event='conditional')]",
            "calcheck: the checks of paper plugin 'dg27' (mod_dg27) not loaded: ValueError: "
            "dg27.x (laws of family top_label, grid ['n', 'points_per_bin']) has no default "
            "check: give CHECK_ON = {'dg27.x': {'laws': [...], 'grid': {...}}} in mod_dg27",
        ),
    ],
)
def test_a_malformed_define_plugin_is_one_warning_line(
    fake_plugins, caplog, tmp_path, key, text, message
):
    caplog.set_level(logging.WARNING, logger="calcheck.plugins")
    name = _module(tmp_path, f"mod_{key}", RADIUS + text)
    fake_plugins({key: name, "dg24": "calcheck_define_paper.paper"})
    ids = [c.id for c in catalog.all_checks("quick")]
    assert "dg24.bin_radius" in ids
    assert not any(i.startswith(key + ".") for i in ids)
    assert [r.getMessage() for r in caplog.records] == [message]


def test_a_built_in_method_is_found_without_looking_for_plugins(fake_plugins):
    """define_guarantee in a plugin module being imported must not load the plugins."""
    fake_plugins({"dg24": "calcheck_define_paper.paper"})
    registry._forget_plugins()
    known = catalog.methods()
    assert "umd" in known
    assert known["umd"].name == "umd"
    assert registry._PLUGINS is None  # not looked for
    assert "tl_hb" in dict(known.items())
    assert registry._PLUGINS is not None  # listing every method looks for them


def _page_blocks(heading: str) -> list[str]:
    """The ``{code-block} python`` blocks of one section of the extending page."""
    page = (Path(__file__).parents[3] / "docs" / "user_guide" / "extending.md").read_text()
    section = page.split(f"\n{heading}\n", 1)[1].split("\n## ", 1)[0].split("\n### ", 1)[0]
    return [b.split("```", 1)[0] for b in section.split("```{code-block} python\n")[1:]]


@pytest.mark.parametrize(
    ("heading", "ids"),
    [
        (
            "### GUARANTEES from define_guarantee alone",
            {"xyz.thm1": "consistent", "xyz.thm1.control.times_0.7": "violated"},
        ),
        (
            "### GUARANTEES, checks and STUDIES with calcheck.plugin",
            {
                "xyz.thm1": "consistent",
                "xyz.thm1.control.wrong_n": "violated",
                "xyz.thm1.control.times_0.7": "violated",
            },
        ),
    ],
)
def test_the_plugin_modules_of_the_extending_page_run(fake_plugins, tmp_path, heading, ids):
    (block,) = _page_blocks(heading)
    prelude = (
        ""
        if "def bin_radius" in block
        else _page_blocks("### GUARANTEES from define_guarantee alone")[0].split(
            "\n\nGUARANTEES", 1
        )[0]
        + "\n\n"
    )
    name = f"xyz_paper_{len(ids)}"  # a module name of its own: modules stay imported
    (tmp_path / f"{name}.py").write_text(prelude + block)
    assert list(fake_plugins({"xyz": name})) == ["xyz"]
    out = tmp_path / "out"
    assert main(["run", "--checks", "xyz", "--out", str(out), "--reps", "300"]) == 0
    results = json.loads((out / "results.json").read_text())["checks"]
    assert {c["id"]: c["verdict"] for c in results} == ids


def test_the_law_of_the_extending_page_is_checked():
    (block,) = _page_blocks("## Your law")
    namespace = {"calcheck": calcheck}
    exec(compile(block, "extending.md", "exec"), namespace)
    assert namespace["law"].name == "beta25_platt"


def test_the_data_dependent_bound_of_the_extending_page_holds():
    (block,) = _page_blocks("### A bound that sees the data")
    namespace = {"calcheck": calcheck, "np": np}
    exec(compile(block, "extending.md", "exec"), namespace)
    assert namespace["eb_result"].verdict == "consistent"


def test_the_multiclass_calibrator_of_the_extending_page_holds():
    (block,) = _page_blocks("### Multiclass calibrators")
    namespace = {"calcheck": calcheck, "np": np}
    exec(compile(block, "extending.md", "exec"), namespace)
    assert namespace["tl_result"].verdict == "consistent"
    assert namespace["tl"].method.families == ("top_label", "dirichlet_affine")


def test_the_callable_eta_law_of_the_extending_page_is_checked():
    (block,) = _page_blocks("### A law from a callable eta")
    namespace = {"calcheck": calcheck, "np": np}
    exec(compile(block, "extending.md", "exec"), namespace)
    assert namespace["law"].name == "sine"
    assert (
        calcheck.verify("gr21.thm3", namespace["law"], n=500, n_bins=5, reps=200, rng=0).verdict
        == "consistent"
    )


def test_a_plugin_module_imported_before_the_plugins_load(fake_plugins, monkeypatch, caplog):
    """A plugin author's test imports the paper module first: it defines its guarantees
    without loading the plugins (itself half imported), and is a paper when they load."""
    caplog.set_level(logging.WARNING, logger="calcheck.plugins")
    fake_plugins({"dg24": "calcheck_define_paper.paper"})
    registry._forget_plugins()
    _forget_all()
    monkeypatch.delitem(sys.modules, "calcheck_define_paper.paper")
    paper = importlib.import_module("calcheck_define_paper.paper")
    assert registry._PLUGINS is None  # importing it did not look for plugins
    assert (
        calcheck.verify(
            paper.GUARANTEES[0], "uniform_half", n=200, n_bins=4, reps=100, rng=0
        ).verdict
        == "consistent"
    )
    assert registry.paper_keys()[-1] == "dg24"
    ids = [c.id for c in catalog.all_checks("quick") if c.id.startswith("dg24.")]
    assert ids == ["dg24.bin_radius", "dg24.bin_radius.control.times_0.6"]
    assert caplog.records == []
