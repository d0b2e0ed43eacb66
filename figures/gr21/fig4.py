"""gr21 Figure 4: CREDIT validity plots of all methods (see CAPTION)."""

from __future__ import annotations

from ._panels import compute_credit as compute  # noqa: F401 (the module's compute)
from ._panels import panels
from .credit import METHODS

ID = "gr21.fig4"
CAPTION = (
    "Marginal plug-in validity plots on CREDIT for n in {1K, 3K, 5K, 7K} (Fig. 4, App. D), "
    "all methods, with the Theorem 4 curve."
)
N_VALUES = (1000, 3000, 5000, 7000)
KINDS = ("marginal",)


def draw(data):
    """Draw the figure from computed data; returns a matplotlib Figure."""
    return panels(data, N_VALUES, METHODS, KINDS)
