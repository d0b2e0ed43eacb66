"""Study files: every studiable guarantee on a user law through `calcheck run --study`."""

import json

import pytest

from calcheck.theory_checks.catalog import refused, studiable
from calcheck.theory_checks.cli.main import main
from calcheck.theory_checks.study.files import load_study

# One user law per family (none of them is a law the suite ships).
LAWS = {
    "binary": """
[law]
name = "user_binary"
scores = { kind = "mixture", a = 2.0, b = 3.0, atoms = [0.3, 0.9], atom_probs = [0.1, 0.1] }
eta = { kind = "piecewise_linear", knots = [0.0, 0.5, 1.0], values = [0.1, 0.7, 0.4] }
atom_eta = [0.95, 0.05]
""",
    "adversary": 'laws = ["adversary_q"]\n',
    "linear_shift": """
[law]
name = "user_shift"
family = "linear_shift"
c0 = 0.3
eta = { kind = "logistic", slope = 1.5 }
""",
    "top_label": """
[law]
name = "user_top_label"
family = "top_label"
class_probs = [0.5, 0.3, 0.2]
[[law.classes]]
scores = { kind = "beta", a = 2.0, b = 1.0 }
eta = { kind = "piecewise_constant", knots = [0.5], values = [0.4, 0.8] }
[[law.classes]]
eta = { kind = "constant", value = 0.6 }
[[law.classes]]
scores = { kind = "atoms", atoms = [0.2, 0.6] }
atom_eta = [0.3, 0.9]
""",
    "dirichlet_affine": """
[law]
name = "user_dirichlet"
family = "dirichlet_affine"
concentration = [3.0, 1.0, 0.5, 0.5]
shrink = 0.8
""",
}
# Theorem 3.4's hypothesis H3 (continuous scores) refuses the law above with atoms
CONTINUOUS = {"nch14.thm34", "nch14.thm34.unequal", "nch14.loss2"}
LAWS["binary_continuous"] = """
[law]
name = "user_continuous"
scores = { kind = "beta", a = 2.0, b = 3.0 }
eta = { kind = "piecewise_linear", knots = [0.0, 0.5, 1.0], values = [0.1, 0.7, 0.4] }
"""
LAWS["binned_model"] = """
[law]
name = "user_binned"
family = "binned_model"
values = [0.05, 0.45, 0.35, 0.95]
masses = [0.2, 0.3, 0.3, 0.2]
label_means = [0.2, 0.3, 0.5, 0.8]
"""
LAWS["recalibration"] = """
[law]
name = "user_recalibration"
family = "recalibration"
a = 1.5
b = -0.5
"""
GRIDS = {
    ("n", "n_bins"): "[grid]\nn = [400]\nn_bins = [5]\n",
    ("n1", "n2", "n_bins"): "[grid]\nn1 = [300]\nn2 = [1000]\nn_bins = [5]\n",
    ("n_bins",): "[grid]\nn_bins = [6]\n",
    ("n", "points_per_bin"): "[grid]\nn = [600]\npoints_per_bin = [20]\n",
    ("ce_sq_divisor",): "[grid]\nce_sq_divisor = [1, 10, 100]\n",
    ("n",): "[grid]\nn = [50, 500]\n",
    ("n_bins", "inv_eps_sq"): "[grid]\nn_bins = [5]\ninv_eps_sq = [25, 100, 400]\n",
}


@pytest.mark.parametrize("gid", sorted(studiable()))
def test_every_studiable_guarantee_runs_on_a_user_law(gid, tmp_path, capsys):
    adapter = studiable()[gid]
    family = "binary_continuous" if gid in CONTINUOUS else adapter.families[0]
    path = tmp_path / "study.toml"
    path.write_text(
        f'guarantee = "{gid}"\nid = "mine"\nreps = 100\nalphas = [0.1]\n'
        + LAWS[family]
        + GRIDS[adapter.grid_keys]
    )
    code = main(["run", "--study", str(path), "--out", str(tmp_path / "o"), "--json"])
    check, *controls = json.loads(capsys.readouterr().out)["checks"]
    assert check["id"] == "study:mine"
    assert check["guarantee"] == gid
    assert check["verdict"] == "consistent"
    # at 100 replicates on an arbitrary law a guarantee may be unable to fail (its same-path
    # mutant not caught): the run then says so and exits 1, never "verified"
    caught = check["mutant"] is None or check["mutant"]["caught"]
    assert code == (0 if caught else 1)
    # klm19's rate and mean studies run their own controls (series, not cells)
    assert all(c["id"].startswith("study:mine.control.") for c in controls)
    assert all(c["verdict"] == "violated" for c in controls)
    if check["cells"]:
        assert check["cells"][0]["law"].startswith(("user_", "adversary_q"))
    else:
        assert check["series"]


def test_adversary_and_binary_laws_both_work_for_corollary_3(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(
        'guarantee = "gpr20.cor3.max_halfwidth"\n' + LAWS["adversary"] + GRIDS[("n", "n_bins")]
    )
    check, options = load_study(path)
    assert options == {"controls": []}
    assert [e.law_name for e in check.experiments] == ["adversary_q"]


@pytest.mark.parametrize("gid", sorted(refused()))
def test_refused_guarantees_say_why(gid, tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(f'guarantee = "{gid}"\n' + LAWS["binary"] + GRIDS[("n", "n_bins")])
    with pytest.raises(ValueError, match=f"{gid}.*cannot be checked.*Studiable"):
        load_study(path)


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("reps = 0\n", "reps must be a positive integer"),
        ("reps = 1.5\n", "reps must be a positive integer"),
        ("reps = true\n", "reps must be a positive integer"),
        ("false_alarm = 0\n", r"false_alarm must be a number in \(0, 1\)"),
        ("alphas = []\n", "alphas must be a non-empty list"),
        ('calibrator = { name = "umd" }\n', r"unknown keys .*\['calibrator'\]"),
    ],
)
def test_bad_top_level_values_are_refused(text, match, tmp_path):
    path = tmp_path / "s.toml"
    path.write_text('guarantee = "gr21.thm3"\n' + text + LAWS["binary"] + GRIDS[("n", "n_bins")])
    with pytest.raises(ValueError, match=match):
        load_study(path)


@pytest.mark.parametrize(
    ("grid", "match"),
    [
        ("[grid]\nn = [500.7]\nn_bins = [5]\n", "grid n must be a positive integer"),
        ("[grid]\nn = [500]\nnbins = [5]\n", r"unknown: \['nbins'\], missing: \['n_bins'\]"),
    ],
)
def test_bad_grids_are_refused(grid, match, tmp_path):
    path = tmp_path / "s.toml"
    path.write_text('guarantee = "gr21.thm3"\n' + LAWS["binary"] + grid)
    with pytest.raises(ValueError, match=match):
        load_study(path)


def test_law_of_the_wrong_family_is_refused(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text('guarantee = "gr21.thm3"\n' + LAWS["linear_shift"] + GRIDS[("n", "n_bins")])
    with pytest.raises(ValueError, match="family binary"):
        load_study(path)
