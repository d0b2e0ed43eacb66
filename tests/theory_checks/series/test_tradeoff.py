"""gpr20 Corollary 1 as a trade-off: every interval wide or invalid; a narrow interval whose
validity is judged on the wrong law is caught; the frontier figure regenerates."""

import json

from calcheck.simulations.store import ResultStore
from calcheck.theory_checks.catalog import all_checks
from calcheck.theory_checks.cli.main import main
from calcheck.theory_checks.running.runner import run_checks


def _run(ids, reps=300):
    checks = [c for c in all_checks("quick") if c.id in ids]
    return {
        r.check.id: r
        for r in run_checks(checks, ResultStore(":memory:"), reps=reps, root_seed=4).results
    }


def test_every_member_is_wide_or_invalid_and_the_control_is_caught():
    res = _run({"gpr20.cor1", "gpr20.cor1.control.validity_on_benign_law"})
    check, control = res["gpr20.cor1"], res["gpr20.cor1.control.validity_on_benign_law"]
    assert check.verdict == "consistent"
    assert control.verdict == "violated"
    narrow = [m for m in check.series if m.narrow]
    assert narrow  # the family reaches narrow intervals, so the check could fail
    assert all(m.invalid for m in narrow)
    assert any(m.violated for m in control.series)
    assert "NARROW AND VALID" in repr(control)


def test_the_frontier_figure_regenerates(tmp_path, capsys):
    out = tmp_path / "figs"
    assert main(["figures", "gpr20.cor1_frontier", "--out", str(out)]) == 0
    assert (out / "gpr20_cor1_frontier.png").stat().st_size > 10_000
    entry = json.loads((out / "index.json").read_text())["figures"][0]
    assert [f["holds"] for f in entry["findings"]] == [True, True]
