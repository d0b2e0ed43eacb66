"""klm19 study forms (issue 26): Theorems 5.3, 5.4 and Definition 5.2 on a user's binned model.

The rate claims are the suite's RateCheck on series of the user's models (an E^2 sweep of
one model through ``ce_sq_divisor``, or several models), with the study's own controls.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from calcheck.simulations.laws import law_from_spec
from calcheck.simulations.laws.binned import BinnedModelLaw
from calcheck.simulations.store import ResultStore
from calcheck.theory_checks.catalog import for_law, refused, studiable
from calcheck.theory_checks.catalog.klm19_studies import scaled_model
from calcheck.theory_checks.running.runner import run_checks
from calcheck.theory_checks.study.files import load_study

# B = 8, unequal masses (all >= 1/(2B) = 0.0625), label means spread, E^2 = 0.0135
MODEL = BinnedModelLaw(
    (0.05, 0.45, 0.25, 0.65, 0.4, 0.8, 0.6, 0.99),
    (0.1, 0.15, 0.1, 0.15, 0.1, 0.15, 0.1, 0.15),
    (0.15, 0.3, 0.35, 0.5, 0.5, 0.7, 0.7, 0.9),
    "user_model",
)
TABLE = """
[law]
name = "user_model"
family = "binned_model"
values = [0.05, 0.45, 0.25, 0.65, 0.4, 0.8, 0.6, 0.99]
masses = [0.1, 0.15, 0.1, 0.15, 0.1, 0.15, 0.1, 0.15]
label_means = [0.15, 0.3, 0.35, 0.5, 0.5, 0.7, 0.7, 0.9]
"""


def _run(checks, reps):
    with ResultStore(":memory:") as store:
        return run_checks(checks, store, reps=reps, root_seed=7).results


def test_binned_model_law_tables_and_scaling():
    law = law_from_spec(
        {
            "family": "binned_model",
            "values": [0.2, 0.9],
            "masses": [0.5, 0.5],
            "label_means": [0.1, 0.5],
        },
        "two",
    )
    assert law.ce_sq == pytest.approx(0.5 * 0.01 + 0.5 * 0.16)
    tenth = scaled_model(law, 10)
    assert tenth.ce_sq == pytest.approx(law.ce_sq / 10)
    assert (tenth.masses, tenth.label_means) == (law.masses, law.label_means)
    assert tenth.values[0] == pytest.approx(0.1 + 0.1 / math.sqrt(10))
    with pytest.raises(ValueError, match=r"needs \['masses'\]"):
        law_from_spec({"family": "binned_model", "values": [0.5], "label_means": [0.5]})
    with pytest.raises(ValueError, match="unknown key"):
        law_from_spec({"family": "binned_model", "values": [0.5], "eta": {}})
    assert {"klm19.thm53", "klm19.thm54", "klm19.def52"} <= set(studiable())
    assert not {"klm19.thm53", "klm19.thm54", "klm19.def52"} & set(refused())
    assert "distribution-free" in refused()["klm19.lem43"]


@pytest.mark.parametrize("gid", ["klm19.thm53", "klm19.thm54"])
def test_rate_study_on_an_e2_sweep_of_a_users_model_and_its_control(gid):
    check = for_law(gid, MODEL, grid={"ce_sq_divisor": [1, 10, 100]}, alphas=(0.1,))
    (control,) = studiable()[gid].controls(check)
    assert control.bound.name == "e_not_squared"
    ce = sorted(e.law.ce_sq for e in check.simulations())
    assert ce == pytest.approx([MODEL.ce_sq / 100, MODEL.ce_sq / 10, MODEL.ce_sq])
    res, ctl = _run([check, control], reps=200)
    assert res.verdict == "consistent"
    assert ctl.verdict == "violated"
    (s,) = res.series
    assert s.unbracketed == 0
    assert -1.15 < s.exponent < -0.85  # n* ~ 1/E^2
    assert ctl.series[0].slope_lower > 1.5  # E in place of E^2: slope 2


def test_rate_study_refuses_a_law_that_breaks_a_hypothesis():
    small = BinnedModelLaw((0.1, 0.6, 0.9), (0.1, 0.45, 0.45), (0.2, 0.5, 0.7), "small_mass")
    with pytest.raises(ValueError, match=r"P\(f\(X\) = s\) >= 1/\(2B\).*0.1 < 1/\(2B\)"):
        for_law("klm19.thm53", small, grid={"ce_sq_divisor": [1, 10, 100]}, alphas=(0.1,))
    calibrated = BinnedModelLaw((0.2, 0.8), (0.5, 0.5), (0.2, 0.8), "calibrated")
    with pytest.raises(ValueError, match=r"hypothesis E\^2 > 0"):
        for_law("klm19.thm54", calibrated, grid={"ce_sq_divisor": [1, 10, 100]}, alphas=(0.1,))
    with pytest.raises(ValueError, match="at least 3 binned models"):
        for_law("klm19.thm54", MODEL, grid={"ce_sq_divisor": [1, 10]}, alphas=(0.1,))
    copies = [dataclasses.replace(MODEL, name=f"copy{i}") for i in range(3)]
    with pytest.raises(ValueError, match=r"spans a factor 1 < 3"):
        for_law("klm19.thm53", copies, grid={"ce_sq_divisor": [1]}, alphas=(0.1,))


def test_study_file_runs_its_own_controls_and_refuses_factors(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(
        'guarantee = "klm19.thm54"\n' + TABLE + "[grid]\nce_sq_divisor = [1, 10, 100]\n"
    )
    _, options = load_study(path)
    assert [c.id for c in options["controls"]] == ["study:klm19.thm54.control.e_not_squared"]
    path.write_text("controls = [0.5]\n" + path.read_text())
    with pytest.raises(ValueError, match="runs its own negative controls"):
        load_study(path)


def test_definition_52_on_a_users_model_and_the_plugin_control():
    check = for_law("klm19.def52", MODEL, grid={"n": [500, 20, 100]}, alphas=(0.1,))
    assert check.experiments[0].n_grid == (20, 100, 500)
    (control,) = studiable()["klm19.def52"].controls(check)
    res, ctl = _run([check, control], reps=1000)
    assert (res.verdict, ctl.verdict) == ("consistent", "violated")
    bias = np.sum(np.asarray(MODEL.label_means) * (1 - np.asarray(MODEL.label_means))) / 20
    assert bias > 0.01


def test_proposition_33_on_a_users_law_with_atoms_and_its_control():
    user = law_from_spec(
        {
            "scores": {
                "kind": "mixture",
                "a": 2.0,
                "b": 3.0,
                "atoms": [0.3, 0.9],
                "atom_probs": [0.1, 0.1],
            },
            "eta": {"kind": "piecewise_linear", "knots": [0, 0.5, 1], "values": [0.1, 0.7, 0.4]},
            "atom_eta": [0.95, 0.05],
        },
        "user_atoms",
    )
    check = for_law("klm19.prop33", user, grid={"n_bins": [2, 20]}, alphas=(0.1,))
    (control,) = studiable()["klm19.prop33"].controls(check)
    res, ctl = _run([check, control], reps=100)
    assert res.verdict == "consistent"
    assert all(c.verdict.coverage == 1.0 for c in res.cells)
    assert ctl.verdict == "violated"  # a non-nested finer scheme can lower the binned CE
    calibrated = law_from_spec({"eta": {"kind": "linear", "intercept": 0.0, "slope": 1.0}})
    check = for_law("klm19.prop33", calibrated, grid={"n_bins": [5]}, alphas=(0.1,))
    (control,) = studiable()["klm19.prop33"].controls(check)
    assert _run([control], reps=100)[0].verdict == "consistent"  # CE = 0: no power


RECALIBRATION = {
    "family": "recalibration",
    "a": 1.5,
    "b": -0.5,
    "kind": "sine",
    "amplitude": 0.03,
    "cycles": 3,
    "lo": 0.2,
    "hi": 0.8,
}


def test_theorem_41_on_a_users_misspecified_score_law_and_its_control():
    law = law_from_spec(RECALIBRATION, "user_sine")
    grid = {"n_bins": [5], "inv_eps_sq": [25, 100, 400]}
    check = for_law("klm19.thm41", law, grid=grid, alphas=(0.1,))
    (control,) = studiable()["klm19.thm41"].controls(check)
    assert [s.varying for s in check.series] == ["eps_sq"]
    res, ctl = _run([check, control], reps=100)
    assert res.verdict == "consistent"
    assert res.series[0].unbracketed == 0
    assert ctl.verdict == "violated"  # eps in place of eps^2: slope ~2.6
    with pytest.raises(ValueError, match="three or more inv_eps_sq"):
        for_law("klm19.thm41", law, grid={"n_bins": [5], "inv_eps_sq": [25]}, alphas=(0.1,))
    with pytest.raises(ValueError, match="family recalibration"):
        for_law("klm19.thm41", MODEL, grid=grid, alphas=(0.1,))
    with pytest.raises(ValueError, match="cycles must be a positive integer"):
        law_from_spec(RECALIBRATION | {"cycles": 0})
