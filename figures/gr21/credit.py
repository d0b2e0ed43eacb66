"""The CREDIT experiment of gr21 §2.2 and §4, shared by Figures 1(b), 3, 4, 5 and 6.

Protocol (Sec. 2.2 and Fig. 1(b) of the paper): standardise the features; one fixed random split
into A / B / C of 10K / 5K / 15K; logistic regression on A and Platt scaling on B give g; for
each of ``reps`` repetitions draw ``n`` calibration points and a ``n_test`` test set without
replacement from C, fit every method with B = 10 and compute the plug-in validity and
conditional-validity curves (gr21 eq. (6), §4) on the test set.

Randomness (the one seed protocol, :func:`calcheck.simulations.provenance.generator`): the
split uses
``generator(seed, "gr21.credit.split")``; repetition ``r`` at calibration size ``n`` uses
``generator(seed, "gr21.credit", n, r)``.
"""

from __future__ import annotations

import numpy as np

from calcheck.simulations.calibrators import (
    DoubleDippedScalingBinning,
    FixedWidthBinning,
    IsotonicBinning,
    RandomizedUniformMassBinning,
    UniformMassSampleSplitting,
)
from calcheck.simulations.metrics import plugin_conditional_validity, plugin_validity
from calcheck.simulations.provenance import generator

from ..cache import cached
from ..data import credit_base_model, load_credit

__all__ = ["EPS_GRID", "METHODS", "credit_experiment", "make_method"]

METHODS = ("randomized_umd", "ums", "fixed_width", "isotonic", "scaling_binning_double_dipped")
#: eps grid of the validity plots (the paper's is not stated; its authors' later code uses
#: steps of 0.001).
EPS_GRID = np.round(np.arange(0, 0.2 + 1e-9, 0.001), 3)


def make_method(name: str, n_bins: int, rng):
    """A fresh calibrator of gr21 §4 by short name."""
    if name == "randomized_umd":
        return RandomizedUniformMassBinning(n_bins, rng=rng)
    if name == "ums":
        return UniformMassSampleSplitting(n_bins, split=0.5, rng=rng)
    if name == "fixed_width":
        return FixedWidthBinning(n_bins, rng=rng)
    if name == "isotonic":
        return IsotonicBinning(rng=rng)
    if name == "scaling_binning_double_dipped":
        return DoubleDippedScalingBinning(n_bins, rng=rng)
    raise ValueError(f"method must be one of {METHODS}, got {name!r}")


def _run(n_values, methods, reps, n_test, n_bins, sizes, seed, path):
    x, y = load_credit(path)
    split_rng = generator(seed, "gr21.credit.split")
    split = credit_base_model(x, y, sizes=sizes, rng=split_rng)
    pool_s, pool_y = split.pool_scores, split.pool_labels
    out = {"eps": EPS_GRID, "n_values": np.asarray(n_values), "methods": np.asarray(methods)}
    for n in n_values:
        if n + n_test > pool_s.size:
            raise ValueError(
                f"n + n_test must be at most {pool_s.size}, got n={n}, n_test={n_test}"
            )
        marg = np.empty((len(methods), reps, EPS_GRID.size))
        cond = np.empty_like(marg)
        for r in range(reps):
            rng = generator(seed, "gr21.credit", n, r)
            idx = rng.choice(pool_s.size, n + n_test, replace=False)
            cal, test = idx[:n], idx[n:]
            for m, name in enumerate(methods):
                h = make_method(name, n_bins, rng).fit(pool_s[cal], pool_y[cal])
                pred = h.predict(pool_s[test], rng=rng)
                marg[m, r] = plugin_validity(pred, pool_y[test], EPS_GRID)
                cond[m, r] = plugin_conditional_validity(pred, pool_y[test], EPS_GRID)
        for m, name in enumerate(methods):
            out[f"marginal/{name}/{n}"] = marg[m]
            out[f"conditional/{name}/{n}"] = cond[m]
    return out


def credit_experiment(
    n_values,
    *,
    methods=METHODS,
    reps=100,
    n_test=5000,
    n_bins=10,
    sizes=(10_000, 5_000, 15_000),
    seed=2021,
    path=None,
    cache_dir,
):
    """Plug-in validity curves of every method on CREDIT (cached).

    Returns
    -------
    dict of ndarray
        ``eps``; ``marginal/<method>/<n>`` and ``conditional/<method>/<n>`` of shape
        (reps, len(eps)).
    """
    params = {
        "n_values": [int(n) for n in n_values],
        "methods": list(methods),
        "reps": reps,
        "n_test": n_test,
        "n_bins": n_bins,
        "sizes": list(sizes),
        "seed": seed,
        "data": str(path) if path else "default",
    }
    return cached(
        "gr21-credit",
        params,
        lambda: _run(n_values, methods, reps, n_test, n_bins, sizes, seed, path),
        cache_dir,
    )
