"""klm19 (Kumar, Liang & Ma 2019) figures: the toy, CIFAR-10 VGG16 and the App. E sweeps."""

#: Figure id -> module.
FIGURES = {
    "klm19.fig1": "calcheck.figures.klm19.fig1",
    "klm19.fig2b": "calcheck.figures.klm19.fig2b",
    "klm19.fig3a": "calcheck.figures.klm19.fig3a",
    "klm19.fig3b": "calcheck.figures.klm19.fig3b",
    "klm19.fig4a": "calcheck.figures.klm19.fig4a",
    "klm19.fig4b": "calcheck.figures.klm19.fig4b",
    "klm19.appE": "calcheck.figures.klm19.app_e",
}

#: Figure id -> why it cannot be regenerated.
UNAVAILABLE = {
    "klm19.fig2a": "needs the ImageNet VGG16 logits (50,000 validation images), which are not "
    "available offline; Fig. 2(b) is the same experiment on CIFAR-10",
    "klm19.appC": "App. C (l1 CE, other binning schemes) is missing from the paper's text",
    "klm19.appG": "App. G (estimator error histograms, the debiased l1 ECE) is missing from "
    "the paper's text",
}
