"""gr21 Figure 4: CREDIT validity plots of all methods (see CAPTION)."""

from __future__ import annotations

from ._panels import N_ALL, panels
from .credit import METHODS, credit_experiment

ID = "gr21.fig4"
CAPTION = (
    "Marginal plug-in validity plots on CREDIT for n in {1K, 3K, 5K, 7K} (Fig. 4, App. D), "
    "all methods, with the Theorem 4 curve."
)
N_VALUES = (1000, 3000, 5000, 7000)
KINDS = ("marginal",)


def compute(cache_dir, *, reps=100, seed=2021, data_path=None, **_):
    return credit_experiment(N_ALL, reps=reps, seed=seed, path=data_path, cache_dir=cache_dir)


def draw(data):
    return panels(data, N_VALUES, METHODS, KINDS)
