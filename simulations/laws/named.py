"""The named laws the suite ships, every family in one registry."""

from __future__ import annotations

from .adversary import AdversaryQ
from .base import Law
from .binary import BINARY_LAWS
from .multiclass import MULTICLASS_LAWS
from .shift import SHIFT_LAWS

__all__ = ["LAWS", "laws_of_family"]

_ADVERSARY = AdversaryQ()

#: Every named law of the suite, all families.
LAWS: dict[str, Law] = {**BINARY_LAWS, **SHIFT_LAWS, **MULTICLASS_LAWS, _ADVERSARY.name: _ADVERSARY}


def laws_of_family(*families: str) -> dict[str, Law]:
    """The named laws of the given families."""
    return {k: v for k, v in LAWS.items() if v.family in families}
