"""The paper guarantees whose coverage has an exact route and a certificate (a paper table)."""

from __future__ import annotations

__all__ = ["EXACT_WORST_CASE"]

#: Guarantees whose event has an exact route at constant eta and a certified one over every
#: law (uniform-mass binning, gr21 Lemma 2), with the binning scheme and event of
#: :func:`calcheck.simulations.exact_coverage.exact_coverage`.
EXACT_WORST_CASE = {
    "gr21.thm3": ("umd", "conditional"),
    "gr21.cor1": ("zadrozny_elkan", "conditional"),
    "gr21.thm4.conditional": ("umd", "conditional"),
    "gr21.thm4.marginal": ("umd", "marginal"),
    "nch14.thm31": ("zadrozny_elkan", "conditional"),
    "nch14.thm31.hoeffding": ("zadrozny_elkan", "conditional"),
    "nch14.eq9": ("zadrozny_elkan", "marginal"),
}
