"""A failing ``assert_guarantee_holds`` reads in a few lines under pytest (issue 36).

pytest prints the source of every frame between the test and the raise; the helpers hide
their own frame (``__tracebackhide__``), so the failure shows the test's line and a message
of at most four short lines, never the helper's docstring.
"""

import subprocess
import sys
import textwrap

TEST = textwrap.dedent(
    """
    import numpy as np
    from calcheck import define_guarantee
    from calcheck.testing import assert_guarantee_holds

    def radius(n, n_bins, alpha):
        return 0.5 * np.sqrt(np.log(2 * n_bins / alpha) / (2 * (np.floor(n / n_bins) - 1)))

    def test_half_radius():
        half = define_guarantee("mine.half", radius, method="umd", event="conditional")
        assert_guarantee_holds(half, "uniform_half", n=1000, n_bins=10, reps=300, rng=0)
    """
)


def test_failure_report_is_short(tmp_path):
    (tmp_path / "test_half.py").write_text(TEST)
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_half.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    section = out[out.index("_ test_half_radius _") : out.index("short test summary")]
    lines = [line for line in section.splitlines() if line.strip()]
    message = [line for line in lines if line.startswith("E ")]
    assert len(lines) <= 10, section
    assert 3 <= len(message) <= 4, section
    assert "Assert that the guarantee" not in section  # the helper's docstring is hidden
    assert message[0].startswith("E       AssertionError: mine.half was expected consistent")
    assert any("exact coverage 0.3280 decides" in line for line in message), section
