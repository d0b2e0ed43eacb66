"""Registry of guarantees: id -> function and the metadata a theory check needs.

A guarantee id follows the project convention ``<paper>.<label>[.<part>]`` (shared/spec
README, item 1). The registry lets tests assert that every registered guarantee has a
theory check, and lets the CLI evaluate any bound by id.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field

from . import gr21

QUANTIFIERS = ("conditional", "marginal", "expectation")


@dataclass(frozen=True)
class Guarantee:
    """One guarantee of one paper.

    Attributes
    ----------
    id : str
        Project id, e.g. ``"gr21.thm4.marginal"``.
    function : callable
        Vectorised bound of the paper's symbols.
    paper : str
        Paper key (``gr21``, ...).
    label : str
        Label in the paper (``"Theorem 4"``) and equation.
    statement : str
        One-line statement of what is bounded.
    hypotheses : tuple of str
        Hypotheses of the guarantee.
    quantifier : str
        ``"conditional"``, ``"marginal"`` or ``"expectation"``.
    variant_of : str or None
        For corrected / proof-valid variants, the id of the stated guarantee.
    """

    id: str
    function: Callable
    paper: str
    label: str
    statement: str
    hypotheses: tuple[str, ...]
    quantifier: str
    variant_of: str | None = None
    parameters: tuple[str, ...] = field(default=())

    def __post_init__(self):
        if self.quantifier not in QUANTIFIERS:
            raise ValueError(f"quantifier must be one of {QUANTIFIERS}, got {self.quantifier!r}")
        names = tuple(inspect.signature(self.function).parameters)
        object.__setattr__(self, "parameters", names)

    def __call__(self, **kwargs):
        """Evaluate the bound with keyword arguments named as in the function signature."""
        return self.function(**{k: v for k, v in kwargs.items() if k in self.parameters})


_REGISTRY: dict[str, Guarantee] = {}


def register(guarantee: Guarantee) -> Guarantee:
    """Add a guarantee; ids are unique."""
    if guarantee.id in _REGISTRY:
        raise ValueError(f"guarantee id already registered: {guarantee.id!r}")
    _REGISTRY[guarantee.id] = guarantee
    return guarantee


def get(guarantee_id: str) -> Guarantee:
    """Return the guarantee with this id, or raise ValueError listing the known ids."""
    try:
        return _REGISTRY[guarantee_id]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY))
        raise ValueError(f"unknown guarantee id {guarantee_id!r}; known: {known}") from None


def all_guarantees() -> list[Guarantee]:
    """All registered guarantees, sorted by id."""
    return [_REGISTRY[k] for k in sorted(_REGISTRY)]


_IID = "calibration data and test point iid"
_N2B = "n >= 2B"
_CONT = "g(X) absolutely continuous (or ties broken on an independent uniform)"

register(Guarantee(
    "gr21.thm3", gr21.thm3_conditional_eps, "gr21", "Theorem 3, eq. (8)",
    "UMD (Algorithm 1): w.p. >= 1-alpha, |E[Y|h(X)=r]-r| <= eps for all r in Range(h)",
    (_IID, _CONT, _N2B), "conditional"))
register(Guarantee(
    "gr21.cor1", gr21.cor1_conditional_eps, "gr21", "Corollary 1, eq. (10)",
    "original Zadrozny-Elkan UMD: w.p. >= 1-alpha, all bins within eps",
    (_IID, _CONT, _N2B), "conditional"))
register(Guarantee(
    "gr21.thm4.marginal", gr21.thm4_marginal_eps, "gr21", "Theorem 4, eq. (11) eps1",
    "randomized UMD (Algorithm 2): Pr(|E[Y|h(X)]-h(X)| <= eps1) >= 1-alpha",
    (_IID, _N2B, "bin values a.s. distinct (Algorithm 2 lines 14-15)"), "marginal"))
register(Guarantee(
    "gr21.thm4.conditional", gr21.thm4_conditional_eps, "gr21", "Theorem 4, eq. (11) eps2",
    "randomized UMD: w.p. >= 1-alpha, all bins within eps2",
    (_IID, _N2B), "conditional"))
register(Guarantee(
    "gr21.thm4.ece_hp", gr21.thm4_conditional_eps, "gr21", "Theorem 4(a)",
    "randomized UMD: w.p. >= 1-alpha, lp-ECE(h) <= eps2 for all p >= 1",
    (_IID, _N2B), "conditional"))
register(Guarantee(
    "gr21.thm4.ece_mean", gr21.thm4_ece_mean_bound, "gr21", "Theorem 4(b)",
    "randomized UMD: E[lp-ECE(h)] <= sqrt(B/2n) + delta for p in [1, 2]",
    (_IID, _N2B), "expectation"))
register(Guarantee(
    "gr21.thm4.ece_mean.proof_valid", gr21.thm4_ece_mean_bound_proof_valid, "gr21",
    "Theorem 4(b), proof as corrected (catalog §9 items 4-5)",
    "randomized UMD: E[lp-ECE(h)] <= 1/(2 sqrt(floor(n/B)-1)) + delta for p in [1, 2]",
    (_IID, _N2B), "expectation", variant_of="gr21.thm4.ece_mean"))
