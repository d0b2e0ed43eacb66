"""The one law protocol of calcheck (the D of ADEMP).

Every data-generating law is a frozen dataclass deriving from :class:`Law`: it has a
``name`` (for reports), a ``family`` (what kind of data it generates) and a JSON-able
``spec()`` (its content, used in simulation keys and results files). What a law can
compute exactly depends on its family:

``binary``
    (score, label) pairs with exact bin masses and bin means (:class:`BinaryLaw`).
``linear_shift``
    source and target laws with a known likelihood ratio (:class:`LinearShiftLaw`).
``top_label``, ``dirichlet_affine``
    multiclass laws whose top-label or class-wise truth reduces to binary laws.
``adversary``
    the adversary Q of Gupta, Podkopaev & Ramdas (2020), Theorem 2.

An experiment states which families it accepts (``accepts`` in
:mod:`calcheck.simulations.experiments.base`), so a law of the wrong kind is refused by name.
"""

from __future__ import annotations

from typing import ClassVar

__all__ = ["Law"]


class Law:
    """Base of every law: ``name``, ``family`` and ``spec()``."""

    family: ClassVar[str] = "law"

    def spec(self) -> dict:  # pragma: no cover - every law overrides it
        """JSON-able description of the law's content (not its name)."""
        raise NotImplementedError

    def describe(self) -> str:
        """One line for reports: name and family."""
        return f"{self.name} ({self.family})"
