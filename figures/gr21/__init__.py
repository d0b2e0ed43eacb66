"""Figures of Gupta & Ramdas (2021), one module per figure."""

#: Figure id -> module.
FIGURES = {
    "gr21.fig1a": "figures.gr21.fig1a",
    "gr21.fig1b": "figures.gr21.fig1b",
    "gr21.fig2": "figures.gr21.fig2",
    "gr21.fig3": "figures.gr21.fig3",
    "gr21.fig4": "figures.gr21.fig4",
    "gr21.fig5": "figures.gr21.fig5",
    "gr21.fig6": "figures.gr21.fig6",
    "gr21.twin": "figures.gr21.twin",
    "gr21.credit_base": "figures.gr21.credit_base",
    "gr21.looseness": "figures.gr21.looseness",
}
