"""Data-generating laws with exact ground truth, one protocol (:class:`Law`), one registry.

:data:`LAWS` maps the name of every law the suite ships to the law; its families are
``binary``, ``linear_shift``, ``top_label``, ``dirichlet_affine`` and ``adversary``
(see :mod:`simulations.laws.base`).
"""

from .adversary import AdversaryQ
from .base import Law
from .binary import BINARY_LAWS, BinaryLaw, ConditionalMean, ScoreLaw
from .multiclass import MULTICLASS_LAWS, DirichletAffineLaw, TopLabelLaw
from .shift import SHIFT_LAWS, LinearShiftLaw
from .spec import law_from_spec

__all__ = [
    "LAWS",
    "AdversaryQ",
    "BinaryLaw",
    "ConditionalMean",
    "DirichletAffineLaw",
    "Law",
    "LinearShiftLaw",
    "ScoreLaw",
    "TopLabelLaw",
    "law_from_spec",
    "laws_of_family",
]

_ADVERSARY = AdversaryQ()

#: Every named law of the suite, all families.
LAWS: dict[str, Law] = {**BINARY_LAWS, **SHIFT_LAWS, **MULTICLASS_LAWS,
                        _ADVERSARY.name: _ADVERSARY}


def laws_of_family(*families: str) -> dict[str, Law]:
    """The named laws of the given families."""
    return {k: v for k, v in LAWS.items() if v.family in families}
