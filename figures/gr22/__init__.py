"""gr22 (Gupta & Ramdas 2022) tables and figures on the CIFAR logits."""

#: Figure id -> module.
FIGURES = {
    "gr22.fig1": "calcheck.figures.gr22.fig1",
    "gr22.fig2": "calcheck.figures.gr22.fig2",
    "gr22.table2": "calcheck.figures.gr22.table2",
    "gr22.table3": "calcheck.figures.gr22.table3",
    "gr22.table4": "calcheck.figures.gr22.table4",
    "gr22.table5": "calcheck.figures.gr22.table5",
    "gr22.fig5": "calcheck.figures.gr22.fig5",
    "gr22.fig6": "calcheck.figures.gr22.fig6",
    "gr22.fig7": "calcheck.figures.gr22.fig7",
    "gr22.fig8": "calcheck.figures.gr22.fig8",
    "gr22.looseness": "calcheck.figures.gr22.looseness",
}
