"""Study files: every studiable guarantee on a user law, strict keys, refusals."""


import pytest

# ------------------------------------------------------------------ reference values

def test_cor3_study_file_on_a_user_law(tmp_path):
    from theory_checks.study import load_study

    path = tmp_path / "s.toml"
    path.write_text('guarantee = "gpr20.cor3.max_halfwidth"\nreps = 200\n'
                    '[law]\nname = "beta22"\nscores = { kind = "beta", a = 2.0, b = 2.0 }\n'
                    '[grid]\nn = [500]\nn_bins = [5]\n')
    check, options = load_study(path)
    assert options == {"reps": 200}
    assert [e.law_name for e in check.experiments] == ["beta22"]
    path.write_text('guarantee = "gpr20.thm6"\n[law]\nname = "x"\n[grid]\nn = [5]\n')
    with pytest.raises(ValueError, match="guarantee must be one of"):
        load_study(path)
