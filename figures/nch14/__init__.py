"""nch14 (Naeini, Cooper & Hauskrecht 2014) figures: AUC loss, Tables 1-2, Figs. 1-2."""

#: Figure id -> module.
FIGURES = {
    "nch14.fig1": "calcheck.figures.nch14.fig1",
    "nch14.fig2": "calcheck.figures.nch14.fig2",
    "nch14.auc": "calcheck.figures.nch14.auc",
    "nch14.table1": "calcheck.figures.nch14.table1",
    "nch14.table2": "calcheck.figures.nch14.table2",
    "nch14.looseness": "calcheck.figures.nch14.looseness",
    "nch14.rates": "calcheck.figures.nch14.rates",
}

#: Figure id -> why it cannot be regenerated.
UNAVAILABLE = {
    "nch14.table3": "needs the KDD-98 data (not available offline)",
}
