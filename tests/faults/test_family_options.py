"""An unknown law-family option lists the family's options (issue 38, S3)."""

from __future__ import annotations

import pytest

from calcheck.simulations.laws.families import get_family
from calcheck.theory_checks.cli.main import main


def test_an_unknown_option_lists_the_allowed_ones():
    with pytest.raises(
        ValueError,
        match=r"family 'beta_piecewise' has no option \['bogus'\]; "
        r"its options are \['k', 'a', 'b'\]",
    ):
        get_family("beta_piecewise", bogus=1)


def test_the_cli_says_it_in_one_line(tmp_path, capsys):
    argv = ["search", "gr21.thm3", "--family", "beta_piecewise", "--family-opt", "bogus=1"]
    assert main([*argv, "--n", "100", "--n-bins", "5", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.strip() == (
        "calcheck: error: family 'beta_piecewise' has no option ['bogus']; its options are "
        "['k', 'a', 'b']"
    )
