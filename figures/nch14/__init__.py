"""nch14 (Naeini, Cooper & Hauskrecht 2014) figures: the AUC loss of histogram binning."""

#: Figure id -> module.
FIGURES = {
    "nch14.auc": "figures.nch14.auc",
}

#: Figure id -> why it cannot be regenerated.
UNAVAILABLE = {
    "nch14.table3": "needs the KDD-98 data (not available offline)",
}
