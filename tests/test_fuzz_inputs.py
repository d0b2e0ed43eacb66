"""Fuzz every public function of ``bounds``, the calibrators and the metrics with odd inputs.

"Nothing lost, nothing silently wrong": each call either returns a result whose every entry
is finite (``+inf`` only where the function documents it, e.g. an empty bin) or raises
``ValueError`` / ``TypeError`` whose message names one of the arguments. No call may hang
(hypothesis ``deadline``, 10 s) or allocate gigabytes (it would blow the deadline too).

Inputs mix plausible values for each argument (by its name) with hostile ones: 0,
negatives, NaN, inf, integers beyond int64, 1e-300, empty arrays, scalars where arrays are
expected, wrong shapes and bools. Runs are derandomised so CI is reproducible.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import math
import os
import re
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from calcheck import bounds
from calcheck.bounds import inverse, registry
from calcheck.simulations import calibrators, metrics

FUZZ = settings(
    derandomize=True,
    # generous: a loaded CI machine must not flake; a hang or a gigabyte allocation still
    # blows it by orders of magnitude
    deadline=10_000,
    max_examples=60,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    database=None,
    # no "explain" phase; FUZZ_NO_SHRINK=1 reports the first failure unshrunk (development)
    phases=[Phase.explicit, Phase.reuse, Phase.generate]
    + ([] if os.environ.get("FUZZ_NO_SHRINK") else [Phase.shrink]),
)
FUZZ_SLOW = settings(FUZZ, max_examples=25)


# ----------------------------------------------------------------------------- values
HOSTILE = [
    0,
    -1,
    -2.5,
    math.nan,
    math.inf,
    -math.inf,
    10**12,
    10**30,
    -(10**30),
    1e-300,
    True,
    False,
    None,
    np.array([]),
    np.array([[0.2, 0.3], [0.4, 0.5]]),
    np.array([0.1, np.nan, 0.3]),
    [1, 2, 3, 4, 5],
]
hostile = st.sampled_from(HOSTILE)


def _vec(elements, size=3):
    return st.lists(elements, min_size=size, max_size=size).map(np.array)


counts_like = st.integers(0, 2000)
unit_open = st.floats(1e-6, 1 - 1e-6)
unit = st.floats(0.0, 1.0)
positive = st.floats(1e-3, 100.0)

#: Plausible values by argument name; anything unnamed gets ``positive``.
GOOD = {
    "n": st.integers(1, 10**6),
    "n_cal2": st.integers(1, 10**6),
    "n_bins": st.integers(1, 200),
    "n_classes": st.integers(2, 20),
    "points_per_bin": st.integers(2, 200),
    "n_bin": counts_like | _vec(counts_like),
    "counts": _vec(counts_like),
    "class_counts": _vec(st.integers(0, 500)),
    "bins_per_class": _vec(st.integers(0, 20)),
    "alpha": unit_open,
    "delta": st.floats(0.0, 0.5) | unit_open,
    "eps": unit_open,
    "eps_sq": unit_open,
    "ce_sq": unit_open,
    "ce": unit,
    "min_ce_sq": unit,
    "base_accuracy": unit,
    "max_bin_error": unit,
    "variance": unit | _vec(unit),
    "variances": _vec(unit),
    "v_plus": st.floats(0.0, 1e4),
    "upper": st.floats(1.0, 10.0),
    "lower": st.floats(1e-3, 1.0),
    "m_b": positive,
    "c": positive,
    "scale": positive,
    "prob": st.just(np.array([0.2, 0.3, 0.5])),
    "predicted_class": _vec(st.integers(0, 2)),
    "confidence": _vec(unit),
    "p_correct": _vec(unit),
    "values": _vec(unit),
    "label_means": _vec(unit),
    "masses": st.just(np.array([0.2, 0.3, 0.5])),
    "bin_masses": st.just(np.array([0.2, 0.3, 0.5])),
    "bin_rates": _vec(unit),
    "source_mass": unit,
    "target_mass": unit,
    "source_weighted_mean": unit,
    "a": _vec(unit),
    "b": _vec(unit),
    "value": unit | _vec(st.floats(0, 5)),
}


def arg(name: str):
    """Plausible (about 2 in 3) or hostile values for the argument ``name``."""
    good = GOOD.get(name, positive)
    return st.one_of(good, good, hostile)


# ----------------------------------------------------------------------------- checks
def _names_argument(message: str, names) -> bool:
    return any(re.search(rf"\b{re.escape(n)}\b", message) for n in names)


def _check_finite(value, *, allow_inf: bool, where: str, allow_nan: bool = False) -> None:
    if value is None or isinstance(value, str | bool | np.bool_):
        return
    if dataclasses.is_dataclass(value):
        for f in dataclasses.fields(value):
            _check_finite(
                getattr(value, f.name), allow_inf=allow_inf, where=where, allow_nan=allow_nan
            )
        return
    if isinstance(value, dict):
        for v in value.values():
            _check_finite(v, allow_inf=allow_inf, where=where, allow_nan=allow_nan)
        return
    if isinstance(value, tuple | list):
        for v in value:
            _check_finite(v, allow_inf=allow_inf, where=where, allow_nan=allow_nan)
        return
    if not isinstance(value, np.ndarray | np.generic | int | float):
        return  # a fitted calibrator: its predictions are checked instead
    arr = np.asarray(value)
    if arr.dtype.kind in "biu":
        return
    arr = arr.astype(float)
    ok = np.isfinite(arr) | (allow_inf & (arr == np.inf)) | (allow_nan & np.isnan(arr))
    assert np.all(ok), f"{where} returned a non-finite value: {value!r}"


def run_checked(fn, kwargs, names, *, allow_inf=False, allow_nan=False, where=None):
    """Call ``fn(**kwargs)``; the outcome must be finite or a ValueError/TypeError naming one
    of ``names``. Returns the result (None when the call was refused).
    """
    where = where or getattr(fn, "__qualname__", repr(fn))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a RuntimeWarning is a silent NaN/overflow in waiting
        try:
            result = fn(**kwargs)
        except (ValueError, TypeError) as exc:
            refusal = exc
        else:
            refusal = None
    if refusal is not None:
        assert _names_argument(str(refusal), names), (
            f"{where}({kwargs!r}) raised {type(refusal).__name__} not naming an argument "
            f"of {sorted(names)}: {refusal}"
        )
        return None
    _check_finite(result, allow_inf=allow_inf, allow_nan=allow_nan, where=f"{where}({kwargs!r})")
    return result


# ----------------------------------------------------------------------------- bounds
def _documents_inf(fn) -> bool:
    """The function (or its module) documents ``inf`` as a possible value."""
    docs = (inspect.getdoc(fn) or "") + (inspect.getmodule(fn).__doc__ or "")
    return "``inf``" in docs


def _public_bound_functions():
    found = {}
    for g in registry.all_guarantees():
        found[f"{g.function.__module__}.{g.function.__name__}"] = g.function
    modules = {m for mods in registry.PAPERS.values() for m in mods}
    for mod_name in sorted(modules):
        mod = importlib.import_module(mod_name)
        for name in mod.__all__:
            obj = getattr(mod, name)
            if inspect.isfunction(obj):
                found.setdefault(f"{obj.__module__}.{obj.__name__}", obj)
    # inverse's helpers take a bound function: fuzzed separately below
    return dict(sorted(found.items()))


BOUND_FUNCTIONS = _public_bound_functions()


def test_fuzz_covers_every_registered_guarantee():
    fns = set(BOUND_FUNCTIONS.values())
    assert all(g.function in fns for g in registry.all_guarantees())
    assert len(BOUND_FUNCTIONS) >= 60


@pytest.mark.parametrize("qualname", list(BOUND_FUNCTIONS))
@FUZZ
@given(data=st.data())
def test_fuzz_bound_function(qualname, data):
    fn = BOUND_FUNCTIONS[qualname]
    params = inspect.signature(fn).parameters
    kwargs = {name: data.draw(arg(name), label=name) for name in params}
    run_checked(fn, kwargs, params, allow_inf=_documents_inf(fn), where=qualname)


SEARCHABLE = [
    bounds.gr21.thm3_conditional_eps,
    bounds.gr21.thm4_marginal_eps,
    bounds.gr21.cor1_conditional_eps,
]


@FUZZ
@given(
    bound=st.sampled_from(SEARCHABLE),
    eps=arg("eps"),
    n=st.one_of(st.integers(2, 10**6), st.sampled_from([10**10, 10**12]), hostile),
    alpha=arg("alpha"),
)
def test_fuzz_max_bins_for_eps(bound, eps, n, alpha):
    kwargs = {"bound": bound, "eps": eps, "n": n, "alpha": alpha}
    b = run_checked(inverse.max_bins_for_eps, kwargs, kwargs)
    if b is not None:
        assert 1 <= b <= n // 2
        assert bound(n, b, alpha) <= eps


@FUZZ
@given(
    bound=st.sampled_from(SEARCHABLE),
    eps=arg("eps"),
    n_bins=st.one_of(st.integers(1, 10**4), hostile),
    alpha=arg("alpha"),
    n_max=st.one_of(st.just(10**9), st.integers(1, 10**6), hostile),
)
def test_fuzz_min_n_for_eps(bound, eps, n_bins, alpha, n_max):
    kwargs = {"bound": bound, "eps": eps, "n_bins": n_bins, "alpha": alpha, "n_max": n_max}
    n = run_checked(inverse.min_n_for_eps, kwargs, kwargs)
    if n is not None:
        assert bound(n, n_bins, alpha) <= eps


@FUZZ
@given(value=arg("value"))
def test_fuzz_is_informative(value):
    run_checked(inverse.is_informative, {"value": value}, ["value"], allow_inf=True)


@FUZZ
@given(
    eps=st.one_of(unit_open, st.sampled_from([1e-300, 1e-8]), hostile),
    alpha=st.one_of(unit_open, st.sampled_from([1e-300]), hostile),
    n_bins=st.one_of(st.integers(1, 1000), st.sampled_from([10**9, 10**12, 10**30]), hostile),
    c=arg("c"),
)
def test_fuzz_ums_required_n(eps, alpha, n_bins, c):
    kwargs = {"eps": eps, "alpha": alpha, "n_bins": n_bins, "c": c}
    run_checked(bounds.gr21.ums_required_n, kwargs, kwargs)


# ------------------------------------------------------------------------ calibrators
def _binary_data(draw, n):
    scores = draw(st.lists(unit, min_size=n, max_size=n).map(np.array))
    labels = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n).map(np.array))
    return scores, labels


@st.composite
def binary_scores_labels(draw):
    n = draw(st.integers(0, 80))
    scores, labels = _binary_data(draw, n)
    return draw(st.one_of(st.just(scores), st.just(scores), hostile)), draw(
        st.one_of(st.just(labels), st.just(labels), hostile)
    )


@st.composite
def multiclass_scores_labels(draw):
    n = draw(st.integers(0, 80))
    n_classes = draw(st.integers(2, 4))
    logits = draw(
        st.lists(st.floats(-5, 5), min_size=n * n_classes, max_size=n * n_classes).map(np.array)
    )
    p = calibrators.softmax(logits.reshape(n, n_classes)) if n else np.empty((0, n_classes))
    y = np.array(draw(st.lists(st.integers(0, n_classes - 1), min_size=n, max_size=n)), int)
    return draw(st.one_of(st.just(p), st.just(p), hostile)), draw(
        st.one_of(st.just(y), st.just(y), hostile)
    )


def _ctor_kwargs(draw, cls):
    kwargs = {}
    for name, p in inspect.signature(cls).parameters.items():
        if name == "rng":
            kwargs[name] = 0
        elif name in ("n_bins", "points_per_bin", "n_components", "max_iter", "n_centers"):
            default = 10 if p.default in (None, inspect.Parameter.empty) else p.default
            big = st.sampled_from([10**9, 10**12, 10**30])
            kwargs[name] = draw(st.one_of(st.just(default), st.integers(1, 30), big, hostile))
    return kwargs


BINARY = [
    c
    for c in (
        *calibrators.CALIBRATORS.values(),
        calibrators.IsotonicBinning,
        calibrators.PlattScaling,
        calibrators.TemperatureScaling,
        calibrators.BetaCalibration,
        calibrators.WeightedHistogramBinning,
    )
]
MULTICLASS = [
    calibrators.TopLabelHistogramBinning,
    calibrators.ClassWiseHistogramBinning,
    calibrators.NormalizedHistogramBinning,
    calibrators.MulticlassTemperatureScaling,
    calibrators.VectorScaling,
    calibrators.DirichletScaling,
    calibrators.ProjectionHistogramBinning,
    calibrators.M2BCalibrator,
    calibrators.TopKLabelCalibrator,
    calibrators.TopKConfidenceCalibrator,
]


def _fit_predict(cls, ctor, data, test):
    names = {*ctor, "scores", "labels", "n_bins", "points_per_bin"}
    where = f"{cls.__name__}({ctor!r})"
    cal = run_checked(cls, ctor, names, where=where)
    if cal is None:
        return
    scores, labels = data
    fitted = run_checked(cal.fit, {"scores": scores, "labels": labels}, names, where=where + ".fit")
    if fitted is None:
        return
    run_checked(cal.predict, {"scores": test}, names, where=where + ".predict")


@pytest.mark.parametrize("cls", BINARY, ids=lambda c: c.__name__)
@FUZZ_SLOW
@given(data=st.data())
def test_fuzz_binary_calibrator(cls, data):
    ctor = _ctor_kwargs(data.draw, cls)
    train = data.draw(binary_scores_labels(), label="train")
    test = data.draw(st.one_of(binary_scores_labels().map(lambda t: t[0]), hostile), label="test")
    _fit_predict(cls, ctor, train, test)


@pytest.mark.parametrize("cls", MULTICLASS, ids=lambda c: c.__name__)
@FUZZ_SLOW
@given(data=st.data())
def test_fuzz_multiclass_calibrator(cls, data):
    ctor = _ctor_kwargs(data.draw, cls)
    train = data.draw(multiclass_scores_labels(), label="train")
    test = data.draw(st.one_of(multiclass_scores_labels().map(lambda t: t[0]), hostile))
    _fit_predict(cls, ctor, train, test)


@FUZZ
@given(scores_labels=multiclass_scores_labels())
def test_fuzz_multiclass_helpers(scores_labels):
    scores, labels = scores_labels
    for fn, kwargs in (
        (calibrators.check_probability_matrix, {"scores": scores, "labels": labels}),
        (calibrators.top_label, {"scores": scores}),
        (calibrators.softmax, {"logits": scores}),
    ):
        run_checked(fn, kwargs, kwargs)


@FUZZ
@given(
    name=st.sampled_from([*calibrators.CALIBRATORS, "nope"]),
    n_bins=st.one_of(st.integers(1, 30), st.sampled_from([10**9, 10**30]), hostile),
)
def test_fuzz_calibrator_from_spec(name, n_bins):
    run_checked(
        calibrators.calibrator_from_spec,
        {"spec": {"name": name}, "n_bins": n_bins},
        {
            "spec",
            "n_bins",
            "name",
            "calibrator",
        },
    )


# ---------------------------------------------------------------------------- metrics
@st.composite
def error_mass(draw):
    rows, b = draw(st.integers(1, 3)), draw(st.integers(1, 4))
    err = draw(st.lists(st.one_of(unit, st.just(math.nan)), min_size=rows * b, max_size=rows * b))
    err = np.array(err).reshape(rows, b)
    mass = np.where(np.isnan(err), 0.0, 1.0 / b)
    return draw(st.one_of(st.just(err), st.just(err), hostile)), draw(
        st.one_of(st.just(mass), st.just(mass), hostile)
    )


@FUZZ
@given(
    em=error_mass(),
    eps=st.one_of(unit, _vec(unit), hostile),
    p=st.one_of(st.floats(1, 5), st.just(math.inf), hostile),
)
def test_fuzz_exact_metrics(em, eps, p):
    error, mass = em
    run_checked(metrics.conditional_max_error, {"error": error}, ["error"])
    for fn in (metrics.marginal_validity, metrics.validity_curve):
        run_checked(fn, {"error": error, "mass": mass, "eps": eps}, ["error", "mass", "eps"])
    run_checked(metrics.lp_ece, {"error": error, "mass": mass, "p": p}, ["error", "mass", "p"])


@FUZZ
@given(
    keys=st.one_of(_vec(st.integers(0, 3), 4).map(lambda a: a.reshape(1, 4)), hostile),
    mass=st.one_of(_vec(unit, 4).map(lambda a: a.reshape(1, 4)), hostile),
    moment=st.one_of(_vec(unit, 4).map(lambda a: a.reshape(1, 4)), hostile),
)
def test_fuzz_merge_equal_outputs(keys, mass, moment):
    kwargs = {"keys": keys, "mass": mass, "moment": moment}
    run_checked(metrics.merge_equal_outputs, kwargs, kwargs)


@FUZZ
@given(batch=hostile, law=hostile)
def test_fuzz_exact_bin_errors_wrong_types(batch, law):
    kwargs = {"batch": batch, "law": law}
    run_checked(metrics.exact_bin_errors, kwargs, kwargs)


@FUZZ
@given(
    data=binary_scores_labels(),
    eps=st.one_of(unit, _vec(unit), hostile),
    n_bins=st.one_of(st.integers(1, 30), st.sampled_from([10**9, 10**30]), hostile),
)
def test_fuzz_binary_plugin_metrics(data, eps, n_bins):
    predictions, labels = data
    base = {"predictions": predictions, "labels": labels}
    names = [*base, "eps", "n_bins"]
    run_checked(metrics.plugin_validity, {**base, "eps": eps}, names)
    run_checked(metrics.plugin_conditional_validity, {**base, "eps": eps}, names)
    run_checked(metrics.plugin_ece_fixed_width, {**base, "n_bins": n_bins}, names)
    # empty bins report NaN means by design ("Empty bins have mass 0 and NaN means")
    run_checked(metrics.fixed_width_reliability, {**base, "n_bins": n_bins}, names, allow_nan=True)


@FUZZ
@given(
    data=multiclass_scores_labels(),
    n_bins=st.one_of(st.integers(1, 30), st.sampled_from([10**9, 10**30]), hostile),
)
def test_fuzz_multiclass_plugin_metrics(data, n_bins):
    probs, labels = data
    names = ["probs", "labels", "pred_class", "confidence", "n_bins", "groups"]
    run_checked(
        metrics.plugin_classwise_ece, {"probs": probs, "labels": labels, "n_bins": n_bins}, names
    )
    try:
        c, h = calibrators.top_label(calibrators.check_probability_matrix(probs))
    except ValueError:
        c, h = probs, labels  # hostile inputs go straight through
    kwargs = {"pred_class": c, "confidence": h, "labels": labels, "n_bins": n_bins}
    run_checked(metrics.plugin_top_label_errors, kwargs, names)
    run_checked(metrics.plugin_reliability_mce, kwargs, names)
    run_checked(metrics.top_label_reliability, kwargs, names)
