"""gpr20 Figure 2(b): uncalibrated random forest vs weighted binning with uLSIF weights."""

from __future__ import annotations

from ._shift import compute, draw_panels, shift_findings

#: Optional packages, import name -> pip name (checked before any work).
REQUIRES = {"sklearn": "scikit-learn"}
ID = "gpr20.fig2b"
CAPTION = (
    "Covariate shift (App. D.4): the uncalibrated forest vs weighted binning with "
    "uLSIF-estimated weights (eq. 46), and, as a reference the paper does not show, "
    "weighted binning with the true w = 8 x1 x2 x3. Paper, one run: ECE 0.023 vs 0.017."
)
__all__ = ["CAPTION", "ID", "compute", "draw", "findings"]


def draw(data):
    """Draw the figure from computed data; returns a matplotlib Figure."""
    return draw_panels(data, ("uncalibrated", "weighted_ulsif", "weighted_true_w"))


def findings(data):
    """The paper's stated findings with the numbers found and whether they hold."""
    found = shift_findings(data)
    return [found[0], found[3]]
