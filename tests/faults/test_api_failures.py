"""``calcheck.verify`` refuses bad arguments with one clear ValueError (issue 38)."""

import threading

import numpy as np
import pytest

from calcheck import define_guarantee, verify
from calcheck.simulations.memory import MemoryRefused

SMALL = {"n": 100, "n_bins": 10, "reps": 100, "rng": 0}


def test_one_alpha_may_be_given_as_a_number():
    assert verify("gr21.thm3", "uniform_logistic", alphas=0.1, **SMALL).cells[0].alpha == 0.1


@pytest.mark.parametrize("alphas", ["0.1", [0.1, "x"], [], [True]])
def test_alphas_that_are_not_numbers_are_refused_naming_them(alphas):
    with pytest.raises(ValueError, match=r"^alphas must be a number or a non-empty sequence") as e:
        verify("gr21.thm3", "uniform_logistic", alphas=alphas, **SMALL)
    assert str(e.value).endswith(f"numbers in (0, 1), got {alphas!r}")


def test_a_string_alpha_is_echoed_whole():
    with pytest.raises(ValueError, match=r"got '0\.1'$"):
        verify("gr21.thm3", "uniform_logistic", alphas="0.1", **SMALL)


def test_store_may_be_a_path_or_a_folder(tmp_path):
    file = tmp_path / "blocks.sqlite"
    first = verify("gr21.thm3", "uniform_logistic", store=str(file), **SMALL)
    assert file.is_file()
    again = verify("gr21.thm3", "uniform_logistic", store=file, **SMALL)
    assert again.cells[0].verdict.coverage == first.cells[0].verdict.coverage
    verify("gr21.thm3", "uniform_logistic", store=tmp_path, **SMALL)
    assert (tmp_path / "store.sqlite").is_file()


def test_a_store_of_another_type_is_refused():
    with pytest.raises(ValueError, match=r"^store must be a ResultStore, a path .*got int: 3$"):
        verify("gr21.thm3", "uniform_logistic", store=3, **SMALL)


def test_a_store_that_cannot_be_opened_names_its_path(tmp_path):
    (tmp_path / "file").write_text("")
    with pytest.raises(ValueError, match=r"^store '.*file/x\.sqlite': cannot open a store there"):
        verify("gr21.thm3", "uniform_logistic", store=tmp_path / "file" / "x.sqlite", **SMALL)


@pytest.mark.parametrize("reps", [0, -3])
def test_reps_below_one_is_refused(reps):
    with pytest.raises(ValueError, match=f"^reps must be a positive integer, got {reps}$"):
        verify("gr21.thm3", "uniform_logistic", **(SMALL | {"reps": reps}))


def test_huge_n_is_refused_before_allocating():
    with pytest.raises(MemoryRefused, match=r"^verify: n = 1000000000000 with reps = 100 needs"):
        verify("gr21.thm3", "uniform_logistic", **(SMALL | {"n": 10**12}))


class _Locked:
    """A calibrator holding a lock: it copies itself (each replicate's fit gets a copy), but
    it cannot be pickled."""

    def __init__(self):
        self.lock = threading.Lock()

    def __deepcopy__(self, memo):
        return _Locked()

    def fit(self, scores, labels):
        self.mean = float(np.mean(labels))
        return self

    def predict(self, scores):
        return np.full(np.shape(scores), self.mean)


def test_an_unpicklable_calibrator_with_two_jobs_is_refused_before_work():
    mine = define_guarantee(
        "faultsapi.thm1", lambda n, alpha: 0.5, method=_Locked(), event="marginal"
    )
    with pytest.raises(
        ValueError, match=r"^n_jobs = 2: _Locked in .* cannot be sent to the"
    ) as info:
        verify(mine, "uniform_logistic", n_jobs=2, **SMALL)
    assert "must be picklable for n_jobs > 1" in str(info.value)
    assert str(info.value).endswith("or use n_jobs=1")
    assert verify(mine, "uniform_logistic", n_jobs=1, **SMALL).verdict == "consistent"


def test_a_bound_of_at_least_one_is_reported_vacuous():
    # gr21 Theorem 3 at n = 20, B = 10, alpha = 0.1: sqrt(log(200) / (2 (2 - 1))) = 1.63
    result = verify("gr21.thm3", "uniform_logistic", **(SMALL | {"n": 20}))
    assert round(result.cells[0].bound, 2) == 1.63
    assert result.verdict == "vacuous"
    assert not result.passed
    assert "a radius >= 1 on an error in [0, 1]" in result.vacuity_note()
    assert "vacuous" in repr(result)
