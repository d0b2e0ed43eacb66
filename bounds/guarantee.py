"""The record of one guarantee: id, function, paper, label, hypotheses, quantifier.

A guarantee id follows the convention ``<paper>.<label>[.<part>]`` (``gr21.thm4.marginal``).
Each paper module of :mod:`bounds` lists its guarantees in ``GUARANTEES``;
:mod:`calcheck.bounds.registry` indexes them.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["QUANTIFIERS", "Guarantee"]

#: conditional: w.p. >= 1 - alpha over the calibration data, for every bin / output;
#: marginal: over the data and a test point; expectation: a bound on a mean;
#: time_uniform: conditional, simultaneously for every sample size of a stream;
#: lower_bound: an impossibility (no method can do better on some law);
#: identity: exact, no probability;
#: rate: there is an (unspecified) constant c such that n >= c h(...) suffices for the event
#: w.p. >= 1 - delta (checked by thresholds, :mod:`calcheck.theory_checks.series.rates`);
#: informal_rate: a rate stated in prose, not as a theorem ("needs O(B/eps^2) samples",
#: "decreases as 1/n"), checked by thresholds or by fitted exponents
#: (:mod:`calcheck.theory_checks.series.exponents`);
#: asymptotic: holds in a limit (e.g. n/B -> infinity), not at any finite n: checked exactly
#: in the limit, finite-n behaviour reported, never judged against the bound.
QUANTIFIERS = (
    "conditional",
    "marginal",
    "expectation",
    "time_uniform",
    "lower_bound",
    "identity",
    "rate",
    "informal_rate",
    "asymptotic",
)


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
        One of ``calcheck.bounds.guarantee.QUANTIFIERS``.
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
        """Evaluate the bound with keyword arguments named as in the function signature.

        Raises
        ------
        ValueError
            For a keyword the function does not take (a typo is never silently dropped).
        """
        unknown = sorted(set(kwargs) - set(self.parameters))
        if unknown:
            raise ValueError(
                f"{self.id} takes no parameter(s) {unknown}; its parameters are "
                f"{list(self.parameters)}"
            )
        return self.function(**kwargs)

    def select(self, symbols) -> dict:
        """The entries of a pool of available ``symbols`` that the function takes.

        Raises
        ------
        ValueError
            Naming a required parameter (one without a default) missing from the pool.
        """
        sig = inspect.signature(self.function).parameters
        missing = [
            p
            for p in self.parameters
            if p not in symbols and sig[p].default is inspect.Parameter.empty
        ]
        if missing:
            raise ValueError(f"{self.id} needs {missing}; available: {sorted(symbols)}")
        return {k: symbols[k] for k in self.parameters if k in symbols}
