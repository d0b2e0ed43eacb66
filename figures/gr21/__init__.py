"""Figures of Gupta & Ramdas (2021), one module per figure."""
