"""Issue 47, the smaller frictions: each case as the QA battery and the researcher met it.

- ``verify`` from Python could not use a dask scheduler (``scheduler=`` was read as a grid
  key: "gr21.thm3 takes grid parameters ['n', 'n_bins']; unknown: ['scheduler']");
- ``result.plot()`` draws one row per cell, where the researcher wanted coverage against n;
- a bound returning complex values went on with its real part and a numpy ComplexWarning;
- report.html broke check ids mid-name (``gr21.t`` / ``hm3``) in a narrow column;
- "gpr20.fig2a need scikit-learn ... (or leave those figures out)" for one figure;
- loky's resource tracker warned of "leaked semlock objects" after a run killed by SIGKILL;
- ``--scheduler http://...`` was a tornado traceback's line that named no flag.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

from calcheck import define_guarantee, verify
from calcheck.theory_checks.checks.events import real_bound_values
from calcheck.theory_checks.cli.main import main
from calcheck.theory_checks.report.pictures import plot_coverage
from calcheck.theory_checks.user.guarantees import _forget_all

GRID = {"n": [200, 1000], "n_bins": 10, "reps": 300, "rng": 3}


@pytest.fixture
def forget_user_guarantees():
    yield
    _forget_all()


# ----------------------------------------------------------------- verify(scheduler=...)
@pytest.fixture(scope="module")
def local_cluster():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
    ) as cluster:
        yield cluster


def test_verify_on_a_dask_cluster_gives_the_result_without_it(local_cluster):
    before = local_cluster.scheduler.transition_counter
    remote = verify("gr21.thm3", "uniform_half", scheduler=local_cluster.scheduler_address, **GRID)
    assert local_cluster.scheduler.transition_counter > before  # the blocks ran there
    local = verify("gr21.thm3", "uniform_half", **GRID)
    assert remote.cells == local.cells  # the per-replicate successes included
    assert [c.verdict.successes for c in remote.cells] != [c.verdict.trials for c in remote.cells]


@pytest.mark.parametrize(
    ("scheduler", "said"),
    [
        ("http://127.0.0.1:8787", "scheduler must be a dask scheduler's address, tcp://HOST"),
        (8786, "scheduler must be a dask scheduler's address such as 'tcp://10.0.0.5:8786'"),
        ("tcp://127.0.0.1:9", "the dask scheduler 'tcp://127.0.0.1:9': connection refused"),
    ],
)
def test_verify_refuses_a_scheduler_it_cannot_use_in_words(scheduler, said):
    pytest.importorskip("distributed")
    with pytest.raises(ValueError, match="^" + said.replace("(", r"\(").replace(".", r"\.")):
        verify("gr21.thm3", "uniform_half", n=200, n_bins=10, reps=100, rng=0, scheduler=scheduler)


def test_a_scheduler_with_a_scheme_dask_does_not_know_names_the_flag(tmp_path, capsys):
    pytest.importorskip("distributed")
    argv = ["run", "--checks", "gr21.thm3", "--reps", "100", "--out", str(tmp_path / "o")]
    assert main([*argv, "--scheduler", "http://127.0.0.1:8787"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith(
        "calcheck: error: --scheduler must be a dask scheduler's address, tcp://HOST:PORT"
    ), err
    assert "(an http:// address is a dashboard's)" in err[-1]


# ------------------------------------------------------------------ coverage against n
def test_plot_coverage_draws_coverage_against_n_with_intervals_and_the_claim(tmp_path):
    result = verify("gr21.thm3", "uniform_half", alphas=(0.1, 0.05), **GRID)
    ax = plot_coverage(result, x="n")
    bars = [c for c in ax.containers if hasattr(c, "has_yerr")]
    assert len(bars) == 2  # one line per alpha
    assert all(c.has_yerr for c in bars)
    assert [list(c.lines[0].get_xdata()) for c in bars] == [[200, 1000], [200, 1000]]
    dashed = [line for line in ax.get_lines() if line.get_linestyle() == "--"]
    claims = sorted(line.get_ydata()[0] for line in dashed if len(line.get_ydata()))
    assert claims == pytest.approx([0.9, 0.95])
    legend = [t.get_text() for t in ax.figure.legends[0].get_texts()]
    assert legend == ["uniform_half, a=0.1", "uniform_half, a=0.05", "claimed"]
    assert ax.get_xlabel() == "n"
    assert "95% Clopper-Pearson" in ax.get_ylabel()
    ax.figure.savefig(tmp_path / "coverage.png")
    assert (tmp_path / "coverage.png").stat().st_size > 10_000


def test_plot_coverage_joins_results_at_one_n_each_and_marks_the_flagged(
    forget_user_guarantees,
):
    def half(n, n_bins, alpha):
        return 0.5 * np.sqrt(np.log(2 * n_bins / alpha) / (2 * (n / n_bins - 1)))

    define_guarantee("mine.half", half, method="umd", event="conditional")
    results = [
        verify("mine.half", "uniform_logistic", n=n, n_bins=10, reps=300, rng=1)
        for n in (400, 1600)
    ]
    ax = plot_coverage(results)
    (bars,) = [c for c in ax.containers if hasattr(c, "has_yerr")]
    assert list(bars.lines[0].get_xdata()) == [400, 1600]
    assert "violated" in [t.get_text() for t in ax.figure.legends[0].get_texts()]
    assert "NOT as expected" in ax.get_title()


def test_plot_coverage_refuses_what_it_cannot_draw():
    result = verify("gr21.thm3", "uniform_half", **GRID)
    with pytest.raises(ValueError, match=r"^x must be a grid key of the cells, one of \['alpha'"):
        plot_coverage(result, x="points_per_bin")
    with pytest.raises(ValueError, match=r"^results is empty"):
        plot_coverage([])
    with pytest.raises(ValueError, match=r"^results must be a CheckResult"):
        plot_coverage("gr21.thm3")


# ------------------------------------------------------------------ complex bound values
def test_a_bound_returning_complex_values_is_refused_naming_it(forget_user_guarantees):
    def root(n, n_bins, alpha):  # complex where the argument is negative (np.emath)
        return np.emath.sqrt(np.log(2 * n_bins / alpha) / (2 * (n / n_bins - 1)) - 0.5)

    define_guarantee("mine.root", root, method="umd", event="conditional")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(
            ValueError, match=r"^the bound of mine\.root returned complex values at n="
        ):
            verify("mine.root", "uniform_half", n=200, n_bins=5, reps=100, rng=0)
    assert not [w for w in caught if issubclass(w.category, np.exceptions.ComplexWarning)]


def test_complex_values_are_refused_even_with_a_zero_imaginary_part():
    with pytest.raises(ValueError, match=r"^the bound of x\.y returned complex values"):
        real_bound_values(lambda: np.array([0.1 + 0j, 0.2 + 0j]), "the bound of x.y")
    assert real_bound_values(lambda: [0.1, 0.2], "the bound of x.y").dtype == float


def test_a_study_bound_with_complex_values_is_one_line(tmp_path, capsys, forget_user_guarantees):
    (tmp_path / "cbounds.py").write_text(
        "import numpy as np\n\n\ndef root(n, n_bins, alpha):\n"
        "    return np.emath.sqrt(np.log(2 * n_bins / alpha) / (2 * (n / n_bins - 1)) - 0.5)\n"
    )
    (tmp_path / "s.toml").write_text(
        'guarantee = "mine.root"\nbound = "cbounds:root"\nmethod = "umd"\n'
        'event = "conditional"\nreps = 100\nalphas = [0.1]\nlaw = "uniform_half"\n'
        "[grid]\nn = [200]\nn_bins = [5]\n"
    )
    try:
        status = main(["run", "--study", str(tmp_path / "s.toml"), "--out", str(tmp_path / "o")])
    finally:
        sys.modules.pop("cbounds", None)
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2
    assert err[-1].startswith("calcheck: error: the bound of mine.root returned complex values")
    assert not any("ComplexWarning" in line for line in err)


# ------------------------------------------------------------------------- report.html
def test_report_html_breaks_check_ids_only_after_a_dot(tmp_path, capsys):
    out = tmp_path / "o"
    assert main(["run", "--checks", "gr21.thm3", "--reps", "100", "--out", str(out)]) == 0
    page = (out / "report.html").read_text()
    assert "overflow-wrap:anywhere}" not in page.split("</style>")[0].split("td code")[-1]
    assert "<code class='id'>gr21.<wbr>thm3.<wbr>control.<wbr>wrong_bound</code>" in page
    # a dot inside a number is no place to break
    assert "control.<wbr>times_0.7</code>" in page


# --------------------------------------------------------------------- figures' message
@pytest.mark.parametrize(
    ("figures", "said"),
    [
        (["gpr20.fig2a"], "gpr20.fig2a needs scikit-learn, which is not installed"),
        (["gpr20.fig2a", "gpr20.fig2b"], "gpr20.fig2a, gpr20.fig2b need scikit-learn, which"),
    ],
)
def test_a_missing_package_is_said_in_grammar(tmp_path, capsys, monkeypatch, figures, said):
    monkeypatch.setitem(sys.modules, "sklearn", None)  # import sklearn raises ImportError
    assert main(["figures", *figures, "--out", str(tmp_path / "f")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"calcheck: error: {said}"), err
    assert err.endswith("(or leave that figure out)" if len(figures) == 1 else "those figures out)")


# ------------------------------------------------------------ a run killed by SIGKILL
KILLED = textwrap.dedent(
    """
    import sys, time
    from contextlib import ExitStack
    from calcheck.simulations.parallel import parallel_results

    def chunk(i):
        time.sleep(0.2)
        return i

    with ExitStack() as stack:
        for i in parallel_results(chunk, [(i,) for i in range(400)], 2, "loky", stack):
            print("running", flush=True)
            time.sleep(600)  # killed here, its workers busy
    """
)


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_a_run_killed_by_sigkill_leaves_no_tracker_warning(tmp_path):
    (tmp_path / "killed.py").write_text(KILLED)
    proc = subprocess.Popen(
        [sys.executable, str(tmp_path / "killed.py")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    try:
        assert proc.stdout.readline() == "running\n"
        os.kill(proc.pid, signal.SIGKILL)
        # the tracker writes to the same stderr: it is read to its end once the workers and
        # the tracker have gone (the workers exit with their parent, the tracker after them)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:  # pragma: no cover - a failure above
            proc.kill()
    assert "leaked" not in err, err
    assert "resource_tracker" not in err, err
