"""gr21 Figure 6 (App. D): the reviewer setting, 14K LR / 1K Platt / n = 1K binning."""

from __future__ import annotations

from ..data import data_file
from ._panels import panels
from .credit import METHODS, credit_experiment

ID = "gr21.fig6"
CAPTION = (
    "Reviewer setting of Fig. 6 (App. D): logistic regression on 14K points, Platt scaling "
    "on 1K, binning on n = 1K, 5K test points from the remaining 15K; (a) marginal and "
    "(b) conditional plug-in validity plots of all methods with the Theorem 4 curve."
)


def compute(cache_dir, *, reps=100, seed=2021, data_root=None, **_):
    """Compute (or read from the cache) the figure's data."""
    return credit_experiment(
        (1000,),
        reps=reps,
        seed=seed,
        path=data_file(data_root, "credit.csv"),
        sizes=(14_000, 1_000, 15_000),
        cache_dir=cache_dir,
    )


def draw(data):
    """Draw the figure from computed data; returns a matplotlib Figure."""
    return panels(data, (1000,), METHODS, ("marginal", "conditional"))
