"""Figures of Gupta, Podkopaev & Ramdas (2020): the covariate-shift experiment of App. D.4."""
