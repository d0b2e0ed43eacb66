"""gpr20 Figure 3: the alternative m_b estimator (47)."""

from __future__ import annotations

from ._shift import compute, draw_panels, shift_findings

#: Optional packages, import name -> pip name (checked before any work).
REQUIRES = {"sklearn": "scikit-learn"}
ID = "gpr20.fig3"
CAPTION = (
    "Covariate shift (App. D.4): binning with m_b estimated from bin frequencies of "
    "extra unlabeled source and target data (eq. 47; the paper's caption says eq. 42, "
    "a typo) against weighted binning (eq. 46). Paper, one run: ECE "
    "about 0.05, 'significantly worse'."
)
__all__ = ["CAPTION", "ID", "compute", "draw", "findings"]


def draw(data):
    """Draw the figure from computed data; returns a matplotlib Figure."""
    return draw_panels(data, ("weighted_ulsif", "alternative_mb"))


def findings(data):
    """The paper's stated findings with the numbers found and whether they hold."""
    return [shift_findings(data)[2]]
