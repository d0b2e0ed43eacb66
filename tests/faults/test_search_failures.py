"""``calcheck search``: what it writes or reads back is checked before any search (issue 38, S2).

Before: a folder where a search's record or picture goes gave an IsADirectoryError traceback
after the whole search; a hand-edited ``results.json`` was named only after it; searching
klm19.def52 (an identity, no bound) gave a TypeError from ``dataclasses.replace``.
"""

from __future__ import annotations

import pytest

from calcheck.simulations.laws.families import get_family
from calcheck.theory_checks.cli.main import main
from calcheck.theory_checks.search.driver import resolve_target
from calcheck.theory_checks.search.report import SWEEP, stored_name

SEARCH = ["search", "gr21.thm3", "--family", "atoms", "--n", "100", "--n-bins", "5"]
#: The name a real run of SEARCH stores its record and picture under (search/NAME.json, .png).
NAME = "gr21.thm3-atoms3-n100_n_bins5-a0.1-s0"

STUDY = """
guarantee = "gr21.thm3"
alphas = [0.1]

[search]
family = "atoms"
target = "gr21.thm3.control.wrong_bound"

[grid]
n = [200]
n_bins = [5]
"""


def _nothing_searched(out):
    return sorted(p.name for p in (out / "search").iterdir())


def test_the_stored_name_is_the_one_save_search_uses():
    fam = get_family("atoms")
    assert stored_name("gr21.thm3", fam, {"n": 100, "n_bins": 5}, 0.1, 0) == NAME


@pytest.mark.parametrize("ext", [".json", ".png"])
def test_a_folder_where_the_search_writes_a_file_is_refused_first(tmp_path, capsys, ext):
    (tmp_path / "search" / f"{NAME}{ext}").mkdir(parents=True)
    assert main([*SEARCH, "--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        f"calcheck: error: --out {str(tmp_path / 'search')!r} holds a folder "
        f"'{NAME}{ext}' where the command writes a file; move it away or choose another "
        "folder\n"
    )
    assert _nothing_searched(tmp_path) == [f"{NAME}{ext}"]


def test_a_study_search_checks_every_cell_first(tmp_path, capsys):
    study = tmp_path / "s.toml"
    study.write_text(STUDY)
    name = "gr21.thm3.control.wrong_bound-atoms3-n200_n_bins5-a0.1-s0.json"
    (tmp_path / "o" / "search" / name).mkdir(parents=True)
    assert main(["search", "--study", str(study), "--out", str(tmp_path / "o")]) == 2
    assert f"holds a folder {name!r} where the command writes a file" in capsys.readouterr().err
    assert _nothing_searched(tmp_path / "o") == [name]


def test_the_sweep_checks_every_row_first(tmp_path, capsys):
    target, fam, opts, grid, alpha, *_ = SWEEP[-1]
    name = stored_name(target, get_family(fam, **opts), grid, alpha, 0) + ".png"
    (tmp_path / "search" / name).mkdir(parents=True)
    assert main(["search", "--all", "--out", str(tmp_path)]) == 2
    assert f"holds a folder {name!r} where the command writes a file" in capsys.readouterr().err
    assert _nothing_searched(tmp_path) == [name]


@pytest.mark.parametrize(
    ("where", "text"),
    [("results.json", '{"checks": 3}'), ("figures/index.json", "{")],
    ids=["results", "figures-index"],
)
def test_an_edited_file_read_back_is_refused_before_the_search(tmp_path, capsys, where, text):
    # the report drawn at the end reads them back: before, only after the search
    (tmp_path / where).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / where).write_text(text)
    assert main([*SEARCH, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"calcheck: error: {str(tmp_path / where)!r} is not ")
    assert err.endswith("; delete it (it is rewritten) or choose another --out\n")
    assert _nothing_searched(tmp_path) == []


@pytest.mark.parametrize("target", ["klm19.def52", "klm19.def52.times_2"])
def test_an_identity_without_a_bound_is_not_searched(tmp_path, capsys, target):
    with pytest.raises(ValueError, match=r"klm19\.def52 claims a mean of zero, no bound"):
        resolve_target(target)
    argv = ["search", target, "--family", "binned_model", "--n", "100"]
    assert main([*argv, "--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        f"calcheck: error: cannot search {target!r}: klm19.def52 claims a mean of zero, no "
        "bound to search against; `calcheck run --checks klm19.def52` tests it\n"
    )
