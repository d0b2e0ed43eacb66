"""Your own paper: the ``calcheck.papers`` entry-point group (issue 24, item 4)."""

from __future__ import annotations

import json
import logging
import os
import re
import textwrap
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from calcheck.bounds import plugins, registry
from calcheck.theory_checks import catalog
from calcheck.theory_checks.cli.main import main
from calcheck.theory_checks.user.guarantees import _forget_all

FIXTURES = Path(__file__).parents[2] / "fixtures"
#: The example plugin (paper ex23) and the plugin of define_guarantee results (dg24).
PLUGIN_ROOTS = (FIXTURES / "example_plugin", FIXTURES / "define_plugin")
BUILTIN = ("gr21", "gpr20", "gr22", "klm19", "nch14")


@pytest.fixture
def fake_plugins(monkeypatch, tmp_path):
    """Install entry points by hand: ``fake_plugins({"ex23": "module.path", ...})``.

    Modules in ``tmp_path`` and the fixture plugins are importable. The plugin modules stay
    imported between calls; the guarantees they define at run time register again.
    """
    for root in (*PLUGIN_ROOTS, tmp_path):
        monkeypatch.syspath_prepend(str(root))
    monkeypatch.delenv(plugins.ENV, raising=False)
    registry._forget_plugins()

    def install(mapping):
        points = tuple(EntryPoint(k, v, plugins.GROUP) for k, v in mapping.items())
        monkeypatch.setattr(plugins, "entry_points", lambda: points)
        registry._forget_plugins()
        _forget_all()
        return registry.plugin_papers()

    yield install
    registry._forget_plugins()
    _forget_all()


def _module(tmp_path, name, text):
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(text))
    return name


def test_the_example_plugin_joins_every_entry_point(fake_plugins, capsys, tmp_path):
    builtin_checks = len([c for c in catalog.all_checks("quick") if c.id.split(".")[0] in BUILTIN])
    loaded = fake_plugins({"ex23": "calcheck_example_paper.paper"})
    assert list(loaded) == ["ex23"]
    assert registry.paper_keys() == (*BUILTIN, "ex23")
    assert [g.id for g in registry.guarantees_of("ex23")] == ["ex23.bin_hoeffding"]
    checks = catalog.all_checks("quick")
    assert len(checks) == builtin_checks + 3  # the built-in papers are all there
    assert "ex23.bin_hoeffding" in catalog.studiable()
    assert main(["list"]) == 0
    assert "ex23.bin_hoeffding.control.times_0.7" in capsys.readouterr().out
    out = tmp_path / "run"
    assert main(["run", "--checks", "ex23", "--out", str(out), "--reps", "300"]) == 0
    results = json.loads((out / "results.json").read_text())["checks"]
    assert {c["id"]: c["verdict"] for c in results} == {
        "ex23.bin_hoeffding": "consistent",
        "ex23.bin_hoeffding.control.wrong_bound": "violated",
        "ex23.bin_hoeffding.control.times_0.7": "violated",
    }
    from calcheck.figures.registry import select_figures

    assert select_figures(["ex23"]) == ["ex23.radius"]
    assert main(["figures", "ex23", "--out", str(tmp_path / "fig")]) == 0
    assert (tmp_path / "fig" / "ex23_radius.png").stat().st_size > 1000


def test_a_plugin_that_fails_to_import_is_one_line_and_hides_nothing(
    fake_plugins, caplog, tmp_path
):
    caplog.set_level(logging.WARNING, logger="calcheck.plugins")
    _module(tmp_path, "broken_paper_x", "import no_such_module_anywhere\n")
    loaded = fake_plugins({"brk": "broken_paper_x", "ex23": "calcheck_example_paper.paper"})
    assert list(loaded) == ["ex23"]
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 1
    assert "paper plugin 'brk' (broken_paper_x) not loaded: ModuleNotFoundError" in lines[0]
    assert "\n" not in lines[0]
    assert {g.paper for g in registry.all_guarantees()} >= {*BUILTIN, "ex23"}


@pytest.mark.parametrize(
    ("points", "text", "match"),
    [
        ({"gr21": "calcheck_example_paper.paper"}, "", "is a built-in paper's"),
        ({"Bad-Key": "calcheck_example_paper.paper"}, "", "lower-case letters"),
        (
            {"ex23": "calcheck_example_paper.paper", "ex24": "clash_ex24"},
            "from calcheck_example_paper.paper import GUARANTEES\ndef checks(budget): return []\n",
            "'ex23.bin_hoeffding' .paper 'ex23'.: a guarantee of paper 'ex24'",
        ),
        (
            {"ex25": "clash_ex25"},
            "import dataclasses\nfrom calcheck.bounds import registry\n"
            "GUARANTEES = [dataclasses.replace(registry.get('gr21.thm3'), paper='ex25', "
            "id='ex25.x'), dataclasses.replace(registry.get('gr21.thm3'), paper='ex25', "
            "id='ex25.x')]\ndef checks(budget): return []\n",
            "'ex25.x' is already registered",
        ),
        ({"ex26": "clash_ex26"}, "GUARANTEES = []\n", "GUARANTEES is empty"),
        (
            {"ex27": "clash_ex27"},
            "import dataclasses\nfrom calcheck.bounds import registry\n"
            "GUARANTEES = [dataclasses.replace(registry.get('gr21.thm3'), paper='ex27', "
            "id='ex27.x')]\n",
            "defines no checks",
        ),
    ],
)
def test_collisions_and_malformed_plugins_are_refused(
    fake_plugins, caplog, tmp_path, points, text, match
):
    caplog.set_level(logging.WARNING, logger="calcheck.plugins")
    if text:
        _module(tmp_path, next(v for v in points.values() if v.startswith("clash_")), text)
    before = {g.id: g for g in registry.all_guarantees()}
    fake_plugins(points)
    messages = " | ".join(r.getMessage() for r in caplog.records)
    assert any(re.search(match, r.getMessage()) for r in caplog.records), messages
    # nothing of a refused plugin is registered; the built-in guarantees are untouched
    after = {g.id: g for g in registry.all_guarantees()}
    assert all(after[k] is v for k, v in before.items() if k.split(".")[0] in BUILTIN)
    assert not any(k.startswith(("ex24.", "ex25.", "ex26.", "ex27.")) for k in after)


def test_checks_that_fail_to_build_skip_the_plugin_only(fake_plugins, caplog, tmp_path):
    caplog.set_level(logging.WARNING, logger="calcheck.plugins")
    _module(
        tmp_path,
        "raising_paper_x",
        """
        import dataclasses
        from calcheck.bounds import registry
        GUARANTEES = [dataclasses.replace(registry.get("gr21.thm3"), paper="ex28", id="ex28.x")]
        def checks(budget):
            raise RuntimeError("no data today")
        """,
    )
    fake_plugins({"ex28": "raising_paper_x", "ex23": "calcheck_example_paper.paper"})
    ids = [c.id for c in catalog.all_checks("quick")]
    assert "gr21.thm3" in ids
    assert "ex23.bin_hoeffding" in ids
    assert not any(i.startswith("ex28.") for i in ids)
    assert "checks of paper plugin 'ex28'" in caplog.records[-1].getMessage()
    assert "RuntimeError: no data today" in caplog.records[-1].getMessage()


def test_the_environment_variable_turns_plugins_off(fake_plugins, monkeypatch):
    monkeypatch.setenv(plugins.ENV, "0")
    assert fake_plugins({"ex23": "calcheck_example_paper.paper"}) == {}
    assert registry.paper_keys() == BUILTIN
    with pytest.raises(ValueError, match=r"unknown guarantee id 'ex23\.bin_hoeffding'"):
        registry.get("ex23.bin_hoeffding")


def test_an_unknown_id_looks_for_plugins_once(fake_plugins):
    fake_plugins({"ex23": "calcheck_example_paper.paper"})
    registry._forget_plugins()
    # a plugin paper's id is found without anything having listed the papers first
    assert registry.get("ex23.bin_hoeffding").paper == "ex23"


@pytest.mark.skipif(
    not any(ep.name == "ex23" for ep in plugins.entry_points())
    and not os.environ.get("CALCHECK_EXPECT_EXAMPLE_PLUGIN"),
    reason="the example plugin is not installed (CI installs it: .ci/run)",
)
def test_the_installed_example_plugin_in_list_and_run(tmp_path):
    """In CI the fixture is pip-installed: the real entry point, through the CLI."""
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != plugins.ENV}
    listed = subprocess.run(
        [sys.executable, "-m", "calcheck", "list"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    assert "ex23.bin_hoeffding" in listed.stdout
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "calcheck",
            "run",
            "--checks",
            "ex23",
            "--reps",
            "300",
            "--out",
            str(tmp_path / "run"),
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    assert run.returncode == 0, run.stderr
    assert "3 of 3 checks as expected" in run.stdout
