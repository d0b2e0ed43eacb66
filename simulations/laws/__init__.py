"""Data-generating laws with exact ground truth, one protocol (:class:`Law`), one registry.

:data:`LAWS` maps the name of every law the suite ships to the law; its families are
``binary``, ``linear_shift``, ``top_label``, ``dirichlet_affine`` and ``adversary``
(see :mod:`calcheck.simulations.laws.base`). :func:`law_from_spec` builds a law of any family from a
table (study files).
"""

from .adversary import AdversaryQ
from .base import Law
from .binary import BINARY_LAWS, BinaryLaw, ConditionalMean, ScoreLaw
from .multiclass import DirichletAffineLaw, TopLabelLaw
from .named import LAWS, laws_of_family
from .shift import LinearShiftLaw
from .spec import law_from_spec

__all__ = [
    "BINARY_LAWS",
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
