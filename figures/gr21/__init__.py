"""Figures of Gupta & Ramdas (2021), one module per figure."""

#: Figure id -> module.
FIGURES = {
    "gr21.fig1a": "calcheck.figures.gr21.fig1a",
    "gr21.fig1b": "calcheck.figures.gr21.fig1b",
    "gr21.fig2": "calcheck.figures.gr21.fig2",
    "gr21.fig3": "calcheck.figures.gr21.fig3",
    "gr21.fig4": "calcheck.figures.gr21.fig4",
    "gr21.fig5": "calcheck.figures.gr21.fig5",
    "gr21.fig6": "calcheck.figures.gr21.fig6",
    "gr21.twin": "calcheck.figures.gr21.twin",
    "gr21.credit_base": "calcheck.figures.gr21.credit_base",
    "gr21.looseness": "calcheck.figures.gr21.looseness",
}
