"""gr21 Figure 3: CREDIT validity plots of all methods (see CAPTION)."""

from __future__ import annotations

from ._panels import N_ALL, credit_findings, panels
from .credit import METHODS, credit_experiment

ID = "gr21.fig3"
CAPTION = (
    "Marginal (top) and conditional (bottom) plug-in validity plots on CREDIT at n = 3K and "
    "7K (Fig. 3): randomized UMD, UMS, fixed-width binning, isotonic regression and "
    "double-dipped scaling-binning, B = 10, with the Theorem 4 curve (reconstructed: eq. (11) "
    "solved for alpha)."
)
N_VALUES = (3000, 7000)
KINDS = ("marginal", "conditional")


def compute(cache_dir, *, reps=100, seed=2021, data_path=None, **_):
    return credit_experiment(N_ALL, reps=reps, seed=seed, path=data_path, cache_dir=cache_dir)


def draw(data):
    return panels(data, N_VALUES, METHODS, KINDS)


def findings(data):
    return credit_findings(data)
