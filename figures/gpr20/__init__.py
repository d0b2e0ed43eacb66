"""Figures of Gupta, Podkopaev & Ramdas (2020).

The covariate-shift experiment of App. D.4, and Corollary 1's width/validity frontier (not
a paper figure).
"""

#: Figure id -> module.
FIGURES = {
    "gpr20.fig2a": "calcheck.figures.gpr20.fig2a",
    "gpr20.fig2b": "calcheck.figures.gpr20.fig2b",
    "gpr20.fig3": "calcheck.figures.gpr20.fig3",
    "gpr20.cor1_frontier": "calcheck.figures.gpr20.cor1_frontier",
}

#: Figure id -> why it cannot be regenerated (``calcheck figures --list`` shows them).
UNAVAILABLE = {
    "gpr20.fig1": "a diagram (calibration, confidence intervals, prediction sets): nothing "
    "numeric to reproduce",
    "gpr20.table1": "a notation table: no numbers",
}
