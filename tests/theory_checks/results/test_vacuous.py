"""A check that cannot fail has no power: its verdict says "vacuous", never a pass.

Issue: a study of gpr20.cor3.max_halfwidth at n = 5 with B = 10 bins (every replicate has
an empty bin, so the radius is infinite) was reported "consistent" with detectable factor
x0.00.
"""

import json

import numpy as np
import pytest

from calcheck.theory_checks.checks.events import Within
from calcheck.theory_checks.cli.main import main
from calcheck.theory_checks.results.power import no_power as _no_power
from calcheck.theory_checks.results.verdicts import coverage_verdict


def _study(tmp_path, n, n_bins=(10,)):
    path = tmp_path / "study.toml"
    path.write_text(
        'guarantee = "gpr20.cor3.max_halfwidth"\nid = "tiny"\nlaws = ["uniform_half"]\n'
        f"reps = 200\nalphas = [0.1]\n[grid]\nn = {list(n)}\nn_bins = {list(n_bins)}\n"
    )
    return path


def _run_json(tmp_path, capsys, path):
    code = main(["run", "--study", str(path), "--out", str(tmp_path / "o"), "--json"])
    (check,) = json.loads(capsys.readouterr().out)["checks"]
    return code, check


def test_a_study_whose_bound_is_infinite_in_every_replicate_is_vacuous(tmp_path, capsys):
    code, check = _run_json(tmp_path, capsys, _study(tmp_path, [5]))
    assert code == 1
    assert check["verdict"] == "vacuous"
    assert check["passed"] is False
    assert "cannot be exceeded in any replicate" in check["vacuity"]
    assert "empty bin" in check["vacuity"]
    (cell,) = check["cells"]
    assert cell["verdict"] == "vacuous"
    assert cell["vacuous_replicates"] == 200
    assert cell["detectable_factor"] == 0.0


def test_the_terminal_and_markdown_reports_say_why(tmp_path, capsys):
    out = tmp_path / "o"
    assert main(["run", "--study", str(_study(tmp_path, [5])), "--out", str(out)]) == 1
    text = capsys.readouterr().out
    assert "vacuous (NOT as expected)" in text
    assert "Cells without power" in text
    assert "the bound cannot be exceeded in any replicate" in text
    assert "0 of 1 guarantees verified" in text
    assert "1 vacuous" in text
    assert "the bound cannot be exceeded in any replicate" in (out / "report.md").read_text()


def test_a_study_with_power_is_unaffected(tmp_path, capsys):
    code, check = _run_json(tmp_path, capsys, _study(tmp_path, [400], [5]))
    assert code == 0
    assert check["verdict"] == "consistent"
    assert check["passed"] is True
    assert check["vacuity"] is None
    assert all(c["no_power"] is None and c["verdict"] == "consistent" for c in check["cells"])


def test_cells_without_power_are_reported_and_the_verdict_comes_from_the_others(tmp_path, capsys):
    code, check = _run_json(tmp_path, capsys, _study(tmp_path, [5, 400], [5]))
    assert code == 0
    assert check["verdict"] == "consistent"
    assert check["vacuity"].startswith("1 of 2 cells have no power")
    assert [c["verdict"] for c in check["cells"]] == ["vacuous", "consistent"]


def test_too_few_replicates_or_a_trivial_claim_is_no_power():
    assert "too few replicates" in _no_power(coverage_verdict(2, 2, 0.9, level=1e-3), None, None)
    assert _no_power(coverage_verdict(100, 100, 0.9, level=1e-3), None, None) == ""
    # an expectation bound >= 1 on a [0, 1] quantity: the claim is clamped to the tiniest float
    trivial = coverage_verdict(90, 100, np.nextafter(0.0, 1.0), level=1e-3)
    assert "the claim is trivial" in _no_power(trivial, None, None)


@pytest.mark.parametrize(
    ("radius", "vacuous"),
    [
        ([[np.inf, np.inf], [np.inf, 0.5]], [True, False]),  # one finite bin can still fail
        ([np.inf, 0.5], [True, False]),  # one radius per replicate
    ],
)
def test_within_marks_the_replicates_whose_bound_is_infinite(radius, vacuous):
    class Experiment:
        def statistic(self, outcome, name, alpha):
            return np.array([[0.1, 0.2], [0.3, 0.4]])

    radius = np.asarray(radius)
    if radius.ndim == 1:
        radius = radius[:, None]
    values = Within("max_error").evaluate(Experiment(), None, radius, 0.1)
    assert values.vacuous.tolist() == vacuous
    assert values.success.tolist() == [True, True]
