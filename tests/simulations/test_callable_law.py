"""A binary law from any vectorised callable eta: validation, exact truth, keys, verify."""

from __future__ import annotations

import importlib
import sys

import numpy as np
import pytest
from scipy import integrate, stats

import calcheck
from calcheck.simulations.experiments.binning import BinningExperiment
from calcheck.simulations.laws import BinaryLaw, ScoreLaw, law_from_spec
from calcheck.simulations.laws.callable_eta import MAX_HALVINGS, CallableMean


def square(s):
    return s**2


def _scalar(s):
    return 0.5


def _nan_at_zero(s):
    return np.where(s == 0, np.nan, s)


def _raises(s):
    raise KeyError("boom")


_calls = {"n": 0}


def _drifting(s):
    _calls["n"] += 1
    return np.full_like(s, 0.25 * (_calls["n"] % 2) + 0.25)


@pytest.mark.parametrize(
    ("eta", "match"),
    [
        (3, r"eta must be a callable eta\(s\) -> values in \[0, 1\], got int 3"),
        (_scalar, r"one value per score \(shape \(1029,\)\), got shape \(\).*np.full_like"),
        (_nan_at_zero, r"values in \[0, 1\] \(no NaN\), got nan at score 0.0"),
        (lambda s: 1.5 * s, r"got 1.0\d* at score 0.6\d*"),
        (_raises, r"_raises raised KeyError: 'boom' when called on an array"),
        (_drifting, r"must be deterministic: two calls give 0.5 and 0.25 at score 0.0"),
        (lambda s: ["a"] * len(s), r"must return numbers, got list"),
    ],
)
def test_a_bad_eta_is_refused_at_construction_naming_it(eta, match):
    with pytest.raises(ValueError, match=match):
        BinaryLaw.from_callable(eta)


def test_scores_must_be_a_score_law_and_callables_are_binary_only():
    with pytest.raises(ValueError, match=r"scores must be a ScoreLaw .*got str 'uniform'"):
        BinaryLaw.from_callable(square, scores="uniform")
    with pytest.raises(ValueError, match=r"table, got the function square; a callable eta is for"):
        law_from_spec({"family": "linear_shift", "eta": square}, name="x")


def test_exact_truth_agrees_with_the_closed_form_of_s_squared_on_uniform_scores():
    law = BinaryLaw.from_callable(square, name="square")
    lo = np.array([0.0, 0.1, 0.25, 0.5, 0.9, 0.3])
    hi = np.array([1.0, 0.2, 0.5, 0.75, 1.0, 0.3])  # the last one empty
    mass, moment = law.interval_moments(lo, 0.0, hi, 0.0)
    np.testing.assert_allclose(mass, hi - lo, rtol=0, atol=1e-15)
    np.testing.assert_allclose(moment, (hi**3 - lo**3) / 3, rtol=0, atol=1e-15)
    # the chained fast path of the binning experiments gives the same numbers
    edges = np.array([[0.0, 0.1, 0.25, 0.5, 1.0]])
    _, mo2 = law._chained_moments(edges, np.zeros((1, 4)), np.array([[0, 0, 0, 1.0]]))
    np.testing.assert_allclose(mo2[0], np.diff(edges[0] ** 3) / 3, rtol=0, atol=1e-15)


def test_beta_scores_jumps_and_atoms_to_the_stated_tolerance():
    def jumpy(s):
        return np.where(s < 0.37, 0.1, 0.8) + 0.1 * np.sin(3 * s)

    scores = ScoreLaw(2.0, 5.0, atoms=(0.37, 0.9), atom_probs=(0.2, 0.1))
    law = BinaryLaw.from_callable(jumpy, scores)
    pdf = stats.beta(2.0, 5.0).pdf
    for lo, hi in ((0.0, 1.0), (0.3, 0.45), (0.5, 0.95)):
        want = integrate.quad(
            lambda s: jumpy(np.array([s]))[0] * pdf(s),
            lo,
            hi,
            points=[0.37],
            epsabs=1e-14,
            epsrel=1e-14,
            limit=200,
        )[0]
        got = law.eta.integral(lo, hi, scores)
        # the jump's leftover piece errs by at most its mass 2^-40 (module doc)
        assert float(got) == pytest.approx(want, abs=1e-10 + 2.0**-MAX_HALVINGS)
    # atoms contribute eta(atom) exactly
    assert law.atom_means() == (float(jumpy(np.array([0.37]))[0]), float(jumpy(np.array([0.9]))[0]))


def test_the_content_key_follows_the_code_the_closure_and_the_values(tmp_path, monkeypatch):
    module = tmp_path / "my_eta_mod.py"
    module.write_text("import numpy as np\n\ndef eta(s):\n    return 0.5 * s\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module("my_eta_mod")
    first = BinningExperiment({"name": "umd"}, BinaryLaw.from_callable(mod.eta), 100, 5)
    module.write_text("import numpy as np\n\ndef eta(s):\n    return 0.25 * s  # edited\n")
    mod = importlib.reload(mod)
    second = BinningExperiment({"name": "umd"}, BinaryLaw.from_callable(mod.eta), 100, 5)
    assert first.key != second.key
    sys.modules.pop("my_eta_mod", None)

    def power(k):
        return lambda s: s**k

    umd = {"name": "umd"}
    keys = {BinningExperiment(umd, BinaryLaw.from_callable(power(k)), 100, 5).key for k in (2, 3)}
    assert len(keys) == 2
    again = BinningExperiment({"name": "umd"}, BinaryLaw.from_callable(power(2)), 100, 5)
    assert again.key in keys  # the same function and values: the same key


def test_law_from_spec_takes_a_callable_and_a_score_law():
    law = law_from_spec({"eta": square, "scores": ScoreLaw(2.0, 2.0)}, name="sq")
    assert isinstance(law.eta, CallableMean)
    assert law.name == "sq"
    assert law.scores == ScoreLaw(2.0, 2.0)
    s, y = law.sample(50, np.random.default_rng(0))
    assert s.shape == y.shape == (50,)


def test_verify_runs_on_a_callable_law_and_catches_a_wrong_bound():
    law = BinaryLaw.from_callable(square, name="square")

    def radius(n, n_bins, alpha):  # gr21 Theorem 3
        return np.sqrt(np.log(2 * n_bins / alpha) / (2 * (np.floor(n / n_bins) - 1)))

    mine = calcheck.define_guarantee("mine.callable", radius, method="umd", event="conditional")
    half = calcheck.define_guarantee(
        "mine.callable.half",
        lambda n, n_bins, alpha: 0.4 * radius(n, n_bins, alpha),
        method="umd",
        event="conditional",
    )
    ok = calcheck.verify(mine, law, n=500, n_bins=5, reps=300, rng=0)
    assert ok.verdict == "consistent"
    assert ok.cells[0].law == "square"
    bad = calcheck.verify(half, law, n=500, n_bins=5, reps=300, rng=0, expect="violated")
    assert bad.verdict == "violated"
    # two workers: the same cells (the law's key is the parent's, its lambda sent by value)
    lam = BinaryLaw.from_callable(lambda s: s**2, name="square")
    two = calcheck.verify(mine, lam, n=500, n_bins=5, reps=300, rng=0, n_jobs=2)
    assert two.cells == calcheck.verify(mine, lam, n=500, n_bins=5, reps=300, rng=0).cells
