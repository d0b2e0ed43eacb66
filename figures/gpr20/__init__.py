"""Figures of Gupta, Podkopaev & Ramdas (2020): the covariate-shift experiment of App. D.4."""

#: Figure id -> module.
FIGURES = {
    "gpr20.fig2a": "figures.gpr20.fig2a",
    "gpr20.fig2b": "figures.gpr20.fig2b",
    "gpr20.fig3": "figures.gpr20.fig3",
}
