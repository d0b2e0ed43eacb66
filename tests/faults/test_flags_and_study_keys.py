"""Flags against a study file's keys, what the data keywords count, study-file messages (issue 47).

A flag that sets what a study file's key sets wins, and the command says so in one line
(``calcheck: --criterion tightness overrides the study file's criterion = failure``); a flag
that names something else to check is refused. Every key a study file and a flag of ``run``
or ``search`` both set is tested here, through the command line, with the search and the
run stopped at their start (their arguments captured).
"""

import contextlib
import re

import numpy as np
import pytest

from calcheck.theory_checks.checks.methods import DATA_KEYWORDS
from calcheck.theory_checks.cli.main import main
from calcheck.theory_checks.study.files import load_search_study, load_study

GRID = "[grid]\nn = [200, 400]\nn_bins = [5]\n"
SEARCH = (
    """guarantee = "gr21.thm3"
alphas = [0.1, 0.05]

[search]
family = "beta_piecewise"
options = { k = 2 }
criterion = "failure"
budget = "quick"
seed = 3
evaluations = 20
reps = 100

"""
    + GRID
)
RUN = 'guarantee = "gr21.thm3"\nreps = 200\nfalse_alarm = 0.01\nlaws = ["uniform_half"]\n' + GRID


class _Stop(Exception):
    """Raised by the stubs once the arguments of the work are captured."""


@pytest.fixture
def searched(monkeypatch):
    """Stub the searches: the cells each would run, and the first one's keywords."""
    import calcheck.theory_checks.search.driver as driver
    import calcheck.theory_checks.search.report as report

    seen = {}

    def cells(out, runs):
        seen["cells"] = [(target, grid, alpha, seed) for target, _, grid, alpha, seed in runs]

    def search(target, family, **kw):
        seen.update(kw, family=family)
        raise _Stop

    monkeypatch.setattr(report, "check_search_folder", cells)
    monkeypatch.setattr(driver, "search", search)
    return seen


@pytest.fixture
def ran(monkeypatch):
    """Stub the run: the replicates and false-alarm rate it would run with."""
    import calcheck.theory_checks.running.runner as runner

    seen = {}

    def run_checks(checks, store, **kw):
        seen.update(kw)
        raise _Stop

    monkeypatch.setattr(runner, "run_checks", run_checks)
    return seen


def _stopped(argv, seen: dict) -> None:
    """Run the command line until a stub stops it (``seen`` then holds what it captured)."""
    with contextlib.suppress(_Stop):  # (or it comes out as one line, as user code's failures)
        main(argv)
    assert seen, "the command stopped before the work"


def _search(tmp_path, text, seen, *flags):
    path = tmp_path / "s.toml"
    path.write_text(text)
    out = str(tmp_path / "o")
    _stopped(["search", "--study", str(path), "--out", out, "--jobs", "1", *flags], seen)


def _overrides(err: str) -> list[str]:
    return [line for line in err.splitlines() if "overrides the study file's" in line]


# ------------------------------------------------------------------ search --study
@pytest.mark.parametrize(
    ("flags", "line"),
    [
        (
            ["--criterion", "tightness"],
            "--criterion tightness overrides the study file's criterion = failure",
        ),
        (["--seed", "0"], "--seed 0 overrides the study file's seed = 3"),
        (["--budget", "full"], "--budget full overrides the study file's budget = quick"),
        (["--evaluations", "10"], "--evaluations 10 overrides the study file's evaluations = 20"),
        (["--reps", "50"], "--reps 50 overrides the study file's reps = 100"),
        (["--alpha", "0.2"], "--alpha 0.2 overrides the study file's alphas = [0.1, 0.05]"),
        (["--n", "300"], "--n 300 overrides the study file's grid.n = [200, 400]"),
        (["--n-bins", "4"], "--n-bins 4 overrides the study file's grid.n_bins = [5]"),
        (["--grid", "n=300"], "--grid n=300 overrides the study file's grid.n = [200, 400]"),
        (["--family-opt", "k=3"], "--family-opt k=3 overrides the study file's options.k = 2"),
    ],
)
def test_a_search_flag_wins_over_the_study_key_and_says_so(tmp_path, capsys, searched, flags, line):
    # before: every one of these flags was silently ignored but --evaluations and --reps
    # (which won silently); `--criterion tightness` searched with criterion failure
    _search(tmp_path, SEARCH, searched, *flags)
    assert _overrides(capsys.readouterr().err) == [f"calcheck: {line}"]
    budget, cells = searched["budget"], searched["cells"]
    expected = {
        "--criterion": lambda: searched["criterion"] == "tightness",
        "--seed": lambda: searched["seed"] == 0 and {c[3] for c in cells} == {0},
        "--budget": lambda: budget.name.startswith("full,") and budget.fresh_reps == 20000,
        "--evaluations": lambda: budget.reps == 100,  # the file's reps stay
        "--reps": lambda: budget.reps == 50,
        "--alpha": lambda: [c[2] for c in cells] == [0.2, 0.2],  # one search per cell
        "--n": lambda: [c[1] for c in cells] == [{"n": 300, "n_bins": 5}] * 2,
        "--n-bins": lambda: [c[1]["n_bins"] for c in cells] == [4, 4, 4, 4],
        "--grid": lambda: [c[1] for c in cells] == [{"n": 300, "n_bins": 5}] * 2,
        "--family-opt": lambda: searched["family"].name == "beta_piecewise3",
    }[flags[0]]
    assert expected()


def test_search_flags_not_given_leave_the_file_keys(tmp_path, capsys, searched):
    text = SEARCH.replace('"failure"', '"tightness"').replace('"quick"', '"full"')
    _search(tmp_path, text, searched)
    assert _overrides(capsys.readouterr().err) == []
    assert (searched["criterion"], searched["seed"], searched["alpha"]) == ("tightness", 3, 0.1)
    assert searched["budget"].name == "full, 20 evaluations x 100"
    assert searched["budget"].reps == 100
    assert searched["family"].name == "beta_piecewise2"
    assert len(searched["cells"]) == 4  # 2 n x 1 n_bins x 2 alphas


def test_a_flag_for_a_key_the_file_leaves_out_applies_without_a_line(tmp_path, capsys, searched):
    # the case: the file has no criterion, and --criterion tightness was ignored
    text = SEARCH.replace('criterion = "failure"\n', "")
    _search(tmp_path, text, searched, "--criterion", "tightness", "--grid", "points=3")
    assert _overrides(capsys.readouterr().err) == []
    assert searched["criterion"] == "tightness"
    assert searched["cells"][0][1] == {"n": 200, "n_bins": 5, "points": 3}


@pytest.mark.parametrize(
    "flags",
    [["gr21.thm3"], ["--family", "atoms"], ["--all"], ["--power"], ["--rate", "all"]],
)
def test_a_search_flag_that_names_another_search_is_refused(tmp_path, capsys, flags):
    path = tmp_path / "s.toml"
    path.write_text(SEARCH)
    assert main(["search", "--study", str(path), "--out", str(tmp_path / "o"), *flags]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "--study" in err


def test_a_grid_parameter_given_twice_is_refused_in_one_line(tmp_path, capsys):
    path = tmp_path / "s.toml"
    path.write_text(SEARCH)
    assert main(["search", "--study", str(path), "--n", "300", "--grid", "n=400"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "calcheck: error: grid n is given twice (--grid n=400 and --n 300)"


def test_the_loader_replaces_only_the_keys_a_flag_sets(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(SEARCH)
    said = []
    runs = load_search_study(
        path,
        {"search.criterion": "mean_ratio", "search.options.a": 1.5},
        on_replace=lambda key, value: said.append((key, value)),
    )
    assert said == [("search.criterion", "failure")]  # the file has no options.a
    assert {r["criterion"] for r in runs} == {"mean_ratio"}
    assert runs[0]["family_options"] == {"k": 2, "a": 1.5}
    with pytest.raises(ValueError, match=re.escape("got 'search.family'")):
        load_search_study(path, {"search.family": "atoms"})


# ------------------------------------------------------------------ run --study
@pytest.mark.parametrize(
    ("flags", "reps", "false_alarm", "lines"),
    [
        ([], 200, 0.01, []),
        (["--reps", "300"], 300, 0.01, ["--reps 300 overrides the study file's reps = 200"]),
        (
            ["--false-alarm", "0.001"],
            200,
            0.001,
            ["--false-alarm 0.001 overrides the study file's false_alarm = 0.01"],
        ),
        (
            ["--budget", "full"],
            10000,
            0.01,
            ["--budget full (10000 replicates per cell) overrides the study file's reps = 200"],
        ),
        (  # given, though it is the default: it wins all the same
            ["--budget", "quick"],
            4000,
            0.01,
            ["--budget quick (4000 replicates per cell) overrides the study file's reps = 200"],
        ),
        (
            ["--budget", "full", "--reps", "300"],
            300,
            0.01,
            ["--reps 300 overrides the study file's reps = 200"],
        ),
    ],
)
def test_a_run_flag_wins_over_the_study_key_and_says_so(
    tmp_path, capsys, ran, flags, reps, false_alarm, lines
):
    # before: --reps and --false-alarm won without a word; --budget was silently ignored
    path = tmp_path / "s.toml"
    path.write_text(RUN)
    _stopped(
        ["run", "--study", str(path), "--out", str(tmp_path / "o"), "--jobs", "1", *flags], ran
    )
    assert _overrides(capsys.readouterr().err) == [f"calcheck: {line}" for line in lines]
    assert (ran["reps"], ran["false_alarm"]) == (reps, false_alarm)


def test_run_flags_for_keys_the_file_leaves_out_apply_without_a_line(tmp_path, capsys, ran):
    path = tmp_path / "s.toml"
    path.write_text(RUN.replace("reps = 200\nfalse_alarm = 0.01\n", ""))
    _stopped(["run", "--study", str(path), "--out", str(tmp_path / "o"), "--reps", "300"], ran)
    assert _overrides(capsys.readouterr().err) == []
    assert (ran["reps"], ran["false_alarm"]) == (300, 1e-3)


def test_run_checks_with_a_study_is_refused(tmp_path, capsys):
    path = tmp_path / "s.toml"
    path.write_text(RUN)
    assert main(["run", "--study", str(path), "--checks", "gr21"]) == 2
    assert "give either --study or --checks" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("command", "option", "default"),
    [
        ("search", "--criterion", "failure"),
        ("search", "--alpha", "0.1"),
        ("search", "--budget", "quick"),
        ("run", "--budget", "quick"),
        ("run", "--seed", "20210718"),
    ],
)
def test_the_help_still_states_the_defaults_of_the_recorded_options(
    capsys, command, option, default
):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    after = text.split(f" {option} ", 1)[1]
    assert f"(default: {default})" in after.split(" --", 1)[0]


# ------------------------------------------------------------------ data keywords
def test_the_data_keywords_say_which_points_a_calibrator_of_ones_own_counts():
    # before: "calibration points whose labels the bin averages (its level set's points)"
    counts = DATA_KEYWORDS["counts"]
    assert "calibrator of your own" in counts
    assert "summing to n" in counts
    assert "did not average" in counts
    assert "scaling_binning n" in DATA_KEYWORDS["n_used"]


def _worked_example() -> str:
    from pathlib import Path

    page = Path(__file__).parents[2] / "docs" / "user_guide" / "extending.md"
    section = page.read_text().split("### What the data keywords count", 1)[1]
    return section.split("```{code-block} python\n", 1)[1].split("```", 1)[0]


def test_the_worked_example_counts_every_point_of_the_level_set():
    namespace = {"np": np}
    code = _worked_example().split("for name, bound in", 1)[0]  # the classes and bounds
    exec(compile(code, "extending.md", "exec"), namespace)
    from calcheck.simulations.experiments.calibrator import CalibratorExperiment
    from calcheck.simulations.laws import LAWS

    n, n_bins = 1000, 10
    exp = CalibratorExperiment(namespace["SplitBins"](n_bins), LAWS["uniform_half"], n, n_bins)
    out = exp.simulate(np.random.default_rng(0), 3)
    assert out.counts.sum(axis=1).tolist() == [n] * 3  # every point, both halves
    assert out.n_used.tolist() == [n] * 3
    # each level set: its bin's (or merged bins') k = 50 first-half points and second-half ones
    assert np.all(out.counts[out.counts > 0] >= 50)
    assert np.all(out.counts[:, : out.n_levels.min()] > 0)
    assert 0.3 < float(namespace["split_radius"](n, n_bins, 0.1)) < 0.34


def test_the_worked_example_reports_the_naive_bound_and_passes_the_split_one(capsys):
    import calcheck

    code = _worked_example().replace("reps=1000", "reps=500")
    exec(compile(code, "extending.md", "exec"), {"np": np, "calcheck": calcheck})
    naive, split = capsys.readouterr().out.strip().splitlines()
    assert "mine.naive" in naive
    assert "violated" in naive
    coverage = float(re.search(r"coverage (\S+)", naive).group(1))
    assert 0.74 < coverage < 0.84  # the page says 0.79 (at 1000 replicates)
    assert "mine.split" in split
    assert "consistent" in split


# ------------------------------------------------------------------ study-file messages
@pytest.mark.parametrize("command", ["run", "search"])
def test_a_study_file_that_is_not_utf8_is_named(tmp_path, capsys, command):
    # before: calcheck: error: 'utf-8' codec can't decode byte 0xff in position 26: ...
    path = tmp_path / "s.toml"
    path.write_bytes(b'guarantee = "gr21.thm3"\n# \xff\xfe caf\xe9\n')
    assert main([command, "--study", str(path), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert re.fullmatch(
        r"calcheck: error: study file '.*s\.toml' is not UTF-8 text \(byte 0xff on line 2\); "
        r"TOML files are UTF-8: save it as UTF-8",
        err,
    )


@pytest.mark.parametrize("command", ["run", "search"])
def test_a_study_folder_is_said_to_be_a_folder(tmp_path, capsys, command):
    # before: calcheck: error: study file not found: '<folder>'
    (tmp_path / "a.toml").write_text(RUN)
    assert main([command, "--study", str(tmp_path), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("is a folder, not a file (it holds a.toml): give the TOML file itself")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        # before: RecursionError: maximum recursion depth exceeded (a traceback)
        pytest.param(
            "a = " + "[" * 5000 + "]" * 5000, "is not valid TOML: nested too deeply", id="deep"
        ),
        # before: unknown law name 't' (the string read letter by letter)
        pytest.param(
            'guarantee = "gr21.thm3"\nlaws = "two_atoms"\n' + GRID,
            "laws must be a list",
            id="laws-a-string",
        ),
    ],
)
def test_malformed_study_files_are_one_line(tmp_path, capsys, content, message):
    path = tmp_path / "s.toml"
    path.write_text(content)
    assert main(["run", "--study", str(path), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert message in err


def test_a_search_key_that_is_not_a_table_is_named(tmp_path):
    # before: study file '...' has no [search] table
    path = tmp_path / "s.toml"
    path.write_text('guarantee = "gr21.thm3"\nsearch = 5\n' + GRID)
    with pytest.raises(ValueError, match=r"search must be a \[search\] table, got 5$"):
        load_search_study(path)


def test_an_unreadable_or_special_study_file_is_named(tmp_path, monkeypatch):
    from pathlib import Path

    # before: /dev/null was "not found"
    with pytest.raises(ValueError, match=r"^study file '/dev/null' is not a regular file$"):
        load_study("/dev/null")
    path = tmp_path / "s.toml"
    path.write_text(RUN)

    def denied(self):
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "read_bytes", denied)  # (tests may run as root: no chmod)
    with pytest.raises(ValueError, match=r"s\.toml' cannot be read: Permission denied$"):
        load_study(path)


def test_a_byte_order_mark_is_read_as_utf8(tmp_path):
    # before: not valid TOML: Invalid statement (at line 1, column 1)
    path = tmp_path / "s.toml"
    path.write_bytes(b"\xef\xbb\xbf" + RUN.encode())
    check, options = load_study(path)
    assert check.id == "study:gr21.thm3"
    assert options["reps"] == 200
