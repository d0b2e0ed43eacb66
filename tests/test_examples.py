"""The runnable examples run (at their --quick size) and reach their stated conclusions."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _load(name):
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_own_bound_example(capsys):
    example = _load("own_bound")
    assert example.main(["--quick"]) == 0
    out = capsys.readouterr().out
    assert "valid on five laws: <CheckResult study:binomial.umd" in out
    assert "negative control of binomial.umd_x08): violated, as expected" in out
    assert "the supremum over p is needed" in out


def test_own_bound_radius_is_below_theorem_3_and_exact_at_half():
    example = _load("own_bound")
    import calcheck

    for n, b, a in ((200, 10, 0.1), (1000, 10, 0.05), (3000, 20, 0.1)):
        r = example.exact_binomial_radius(n, b, a)
        assert r < calcheck.get_guarantee("gr21.thm3").function(n=n, n_bins=b, alpha=a)
        assert example.radius_at_half(n, b, a) <= r
    # the shortcut's failure at eta = 0.48 is exact, not sampled
    from calcheck.simulations.exact_coverage import exact_coverage

    assert exact_coverage(1000, 10, 0.48, example.radius_at_half(1000, 10, 0.1)) < 0.9
    with pytest.raises(SystemExit):
        example.main(["--bad-flag"])


def test_python_blocks_of_the_own_bound_docs_page_run():
    page = (EXAMPLES.parent / "docs" / "user_guide" / "extending.md").read_text()
    section = page.split("# Your own bound, calibrator or paper", 1)[1].split("\n## Adding", 1)[0]
    blocks = [b.split("```", 1)[0] for b in section.split("```python\n")[1:]]
    assert len(blocks) == 2
    namespace: dict = {}  # one session: the second block uses the first one's imports
    for code in blocks:
        exec(compile(code, "extending.md", "exec"), namespace)
    assert namespace["result"].verdict == "consistent"
    assert namespace["iso_result"].verdict == "consistent"


def test_readme_python_tour_runs_and_says_what_it_prints():
    readme = (EXAMPLES.parent / "README.md").read_text()
    blocks = [b.split("```", 1)[0] for b in readme.split("```python\n")[1:]]
    assert len(blocks) == 1
    namespace: dict = {}
    exec(compile(blocks[0], "README.md", "exec"), namespace)
    assert namespace["result"].verdict == "consistent"
    # the comments' numbers
    assert "0.9885" in blocks[0]
    exact = namespace["exact_coverage"]("gr21.thm3", n=1000, n_bins=10, alpha=0.1)
    assert round(exact.coverage, 4) == 0.9885
    assert "0.9879" in blocks[0]
    assert round(exact.certified, 4) == 0.9879


def test_readme_keeps_the_two_commands_and_fits_two_screens():
    readme = (EXAMPLES.parent / "README.md").read_text()
    assert "python -m pip install . && calcheck run" in readme
    assert (
        'python -m pip install -e ".[test,distributed,repro,compare]" && python -m pytest' in readme
    )
    assert len(readme.splitlines()) <= 150
