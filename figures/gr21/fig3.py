"""gr21 Figure 3: CREDIT validity plots of all methods (see CAPTION)."""

from __future__ import annotations

from ._panels import compute_credit as compute  # noqa: F401 (the module's compute)
from ._panels import credit_findings, panels
from .credit import METHODS

ID = "gr21.fig3"
CAPTION = (
    "Marginal (top) and conditional (bottom) plug-in validity plots on CREDIT at n = 3K and "
    "7K (Fig. 3): randomized UMD, UMS, fixed-width binning, isotonic regression and "
    "double-dipped scaling-binning, B = 10, with the Theorem 4 curve (reconstructed: eq. (11) "
    "solved for alpha)."
)
N_VALUES = (3000, 7000)
KINDS = ("marginal", "conditional")


def draw(data):
    """Draw the figure from computed data; returns a matplotlib Figure."""
    return panels(data, N_VALUES, METHODS, KINDS)


def findings(data):
    """The paper's stated findings with the numbers found and whether they hold."""
    return credit_findings(data)
