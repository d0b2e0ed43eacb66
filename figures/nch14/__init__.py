"""nch14 (Naeini, Cooper & Hauskrecht 2014) figures: the AUC loss of histogram binning."""

#: Figure id -> module.
FIGURES = {
    "nch14.fig1": "calcheck.figures.nch14.fig1",
    "nch14.auc": "calcheck.figures.nch14.auc",
    "nch14.table1": "calcheck.figures.nch14.table1",
    "nch14.table2": "calcheck.figures.nch14.table2",
    "nch14.looseness": "calcheck.figures.nch14.looseness",
}

#: Figure id -> why it cannot be regenerated.
UNAVAILABLE = {
    "nch14.table3": "needs the KDD-98 data (not available offline)",
    "nch14.fig2": "the paper gives no generating parameters for its simulated data; a "
    "look-alike feeds Tables 1-2, but its scatter would not be the paper's",
}
