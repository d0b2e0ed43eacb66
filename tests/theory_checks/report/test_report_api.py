"""calcheck.report from Python results writes the report `calcheck run` writes."""

import json
import re

import pytest

from calcheck.simulations.store import ResultStore
from calcheck.theory_checks.catalog import all_checks
from calcheck.theory_checks.checks.check import CheckResult
from calcheck.theory_checks.cli.main import main
from calcheck.theory_checks.report.from_results import FROM_PYTHON, report
from calcheck.theory_checks.running.runner import run_checks

#: A guarantee and its controls on shared draws (`--checks gpr20.thm3` selects them).
PREFIX = "gpr20.thm3"
REPS, SEED = 100, 3


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    cli = tmp_path_factory.mktemp("cli")
    argv = ["run", "--checks", PREFIX, "--reps", str(REPS), "--seed", str(SEED), "--out", str(cli)]
    assert main(argv) == 0
    checks = [c for c in all_checks("quick") if c.id.startswith(PREFIX)]
    assert len(checks) == 2
    with ResultStore(":memory:") as store:
        run = run_checks(checks, store, reps=REPS, root_seed=SEED)
    py = tmp_path_factory.mktemp("py")
    paths = report(run.results, py, seed=SEED)
    return cli, py, paths, run


def _md(path):
    # the "Regenerate:" line names the command that made the results: the CLI's command
    # line there, a note that they come from Python here
    return [line for line in path.read_text().splitlines() if not line.startswith("Regenerate:")]


def _html(path):
    # the same command, inside the verdict table's paragraph
    return re.sub(r"Regenerate: <code>[^<]*</code>", "Regenerate: <code></code>", path.read_text())


def test_report_from_python_equals_the_cli_report(folders):
    cli, py, paths, _ = folders
    assert paths == {
        "json": py / "results.json",
        "markdown": py / "report.md",
        "html": py / "report.html",
        "plots": py / "plots",
    }
    a, b = (json.loads((d / "results.json").read_text()) for d in (cli, py))
    # meta: the CLI adds what the engine did (blocks computed, CPU seconds, workers, budget,
    # its command line); the Python report knows only the results and the seed it is given
    assert {k: a["meta"][k] for k in b["meta"] if k != "command"} == {
        k: v for k, v in b["meta"].items() if k != "command"
    }
    assert b["meta"]["command"] == FROM_PYTHON
    assert {k: v for k, v in a.items() if k != "meta"} == {
        k: v for k, v in b.items() if k != "meta"
    }
    assert _md(cli / "report.md") == _md(py / "report.md")
    assert _html(cli / "report.html") == _html(py / "report.html")
    pictures = sorted(p.name for p in (cli / "plots").iterdir())
    assert pictures
    assert pictures == sorted(p.name for p in (py / "plots").iterdir())


def test_results_read_back_from_json_give_the_same_report(folders, tmp_path):
    _, py, _, run = folders
    loaded = [CheckResult.from_json(r.to_json()) for r in run.results]
    report(loaded, tmp_path, seed=SEED)
    for name in ("results.json", "report.md", "report.html"):
        assert (tmp_path / name).read_text() == (py / name).read_text()


def test_title_seed_and_one_format(folders, tmp_path):
    _, _, _, run = folders
    paths = report(run, tmp_path, format="markdown", title="My bound, 2 checks")
    assert sorted(paths) == ["json", "markdown"]
    text = paths["markdown"].read_text()
    assert text.startswith("# My bound, 2 checks\n")
    assert "Root seed not given, 100 replicates per cell" in text
    assert not (tmp_path / "report.html").exists()
    page = report(run.results[0], tmp_path / "h", format="html", title="A <b> title")["html"]
    assert "<h1>A &lt;b&gt; title</h1>" in page.read_text()
    assert not (tmp_path / "h" / "report.md").exists()


def test_bad_arguments_are_refused_in_one_line(folders, tmp_path):
    _, _, _, run = folders
    with pytest.raises(ValueError, match=r"results\[1\] is of type str, not a check's result"):
        report([run.results[0], "gpr20.thm3"], tmp_path)
    with pytest.raises(ValueError, match="results is empty"):
        report([], tmp_path)
    with pytest.raises(ValueError, match=r"check ids \['gpr20.thm3'\] more than once"):
        report([run.results[0], run.results[0]], tmp_path)
    with pytest.raises(ValueError, match="format must be one of"):
        report(run, tmp_path, format="pdf")
    (tmp_path / "file").write_text("")
    with pytest.raises(ValueError, match="is a file, not a folder"):
        report(run, tmp_path / "file")
