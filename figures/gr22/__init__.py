"""gr22 (Gupta & Ramdas 2022) tables and figures: the CIFAR logits; App. G's simplex bins."""

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
    "gr22.fig10": "calcheck.figures.gr22.fig10",
    "gr22.fig11": "calcheck.figures.gr22.fig11",
}

#: Figure id -> why it cannot be regenerated (``calcheck figures --list`` shows them).
UNAVAILABLE = {
    "gr22.fig3": "the App. A.2 toy's numbers are only in the image, not in the text",
    "gr22.fig4": "needs the COVTYPE data (sklearn's fetch_covtype downloads it; offline here)",
    "gr22.fig9": "needs the COVTYPE data (offline here)",
    "gr22.fig12": "needs the 3-class COVTYPE data (offline here); its binnings are built "
    "(simulations.simplex_bins, calibrators.ProjectionHistogramBinning)",
}
