"""Laws from tables (study files, JSON): one parser for every family, strict keys.

A law table is a TOML/JSON table; ``family`` selects the kind (default ``"binary"``). A
string instead of a table names a law the suite ships (``simulations.laws.LAWS``). Every
table rejects unknown keys, naming them and the allowed ones.

``family = "binary"`` (the default)::

    scores = { kind = "uniform" }                         # U[0, 1]
    scores = { kind = "beta", a = 2.0, b = 5.0 }
    scores = { kind = "atoms", atoms = [0.2, 0.8], atom_probs = [0.5, 0.5] }  # sum 1
    scores = { kind = "mixture", a = 2.0, b = 2.0, atoms = [0.5], atom_probs = [0.2] }
    eta = { kind = "logistic", slope = 2.0, intercept = -0.5 }
        # constant (value) | power (exponent, scale) | logistic (slope, intercept)
        # | step (threshold, low, high) | sine (center, amplitude, frequency)
        # | linear (intercept, slope)
        # | piecewise_constant (knots = interior breakpoints, values = one more)
        # | piecewise_linear (knots = [0, ..., 1], values = one per knot)
    atom_eta = [0.1, 0.9]         # optional: E[Y | S = atom], one value per atom
    labels = "binary"             # or "beta" with concentration = 4.0

From Python, a binary table's ``eta`` may also be any vectorised function ``eta(s)`` (a
:class:`~calcheck.simulations.laws.callable_eta.CallableMean`, as
:meth:`BinaryLaw.from_callable <calcheck.simulations.laws.binary.BinaryLaw.from_callable>`
builds) and its ``scores`` a :class:`~calcheck.simulations.laws.eta.ScoreLaw`.

``family = "linear_shift"``: ``c0`` (shift strength in [0, 1)) and ``eta`` (a smooth kind).

``family = "top_label"``: ``class_probs = [...]`` (L >= 3, summing to 1) and ``classes``, one
binary table per class (``[[law.classes]]``; scores are the latent top-score law, eta the
probability that the predicted class is right).

``family = "dirichlet_affine"``: ``shrink`` in (0, 1] and either ``concentration = [...]``
(Dirichlet, L >= 3) or ``prototypes = [[...], ...]`` with optional ``prototype_probs``.

``family = "binned_model"`` (a model with B outputs, klm19 Sec. 5;
:class:`~calcheck.simulations.laws.binned.BinnedModelLaw`)::

    values = [0.2, 0.5, 0.9]        # the model's distinct outputs s in [0, 1]
    masses = [0.3, 0.4, 0.3]        # P(f(X) = s) > 0, summing to 1
    label_means = [0.1, 0.5, 0.8]   # E[Y | f(X) = s] in [0, 1]

``family = "recalibration"`` (a score to recalibrate with Platt's family, klm19 Sec. 4;
:class:`~calcheck.simulations.laws.recalibration.RecalibrationLaw`): Z ~ U[lo, hi] and
``q(z) = sigma(a logit z + b) + xi(z)``::

    a = 2.0                         # > 0 (default 2.0)
    b = 1.0                         # (default 1.0)
    kind = "sine"                   # sigmoid (xi = 0, default) | noisy | sine
    amplitude = 0.05                # size of xi, in [0, 0.5); 0 for "sigmoid"
    lo = 0.0                        # support of Z (defaults 0 and 1)
    hi = 1.0
    cycles = 2                      # "sine": periods on [lo, hi]
    cells = 100000                  # "noisy": cells of +-amplitude
    seed = 0                        # "noisy": seed of the signs (part of the law)
"""

from __future__ import annotations

import math

from .base import Law
from .binary import BinaryLaw, ConditionalMean, ScoreLaw
from .binned import BinnedModelLaw
from .callable_eta import CallableMean
from .multiclass import DirichletAffineLaw, TopLabelLaw
from .named import LAWS
from .recalibration import RecalibrationLaw
from .shift import LinearShiftLaw

__all__ = ["law_from_spec"]

_FAMILY_KEYS = {
    "binary": ("family", "scores", "eta", "labels", "concentration", "atom_eta"),
    "linear_shift": ("family", "c0", "eta"),
    "top_label": ("family", "class_probs", "classes"),
    "dirichlet_affine": ("family", "concentration", "shrink", "prototypes", "prototype_probs"),
    "binned_model": ("family", "values", "masses", "label_means"),
    "recalibration": (
        "family",
        "a",
        "b",
        "kind",
        "amplitude",
        "lo",
        "hi",
        "cells",
        "cycles",
        "seed",
    ),
}
_SCORE_KEYS = {
    "uniform": ("kind",),
    "beta": ("kind", "a", "b"),
    "atoms": ("kind", "atoms", "atom_probs"),
    "mixture": ("kind", "a", "b", "atoms", "atom_probs"),
}


def _strict(table, allowed, where):
    if not isinstance(table, dict):
        raise ValueError(f"{where} must be a table, got {table!r}")
    unknown = sorted(set(table) - set(allowed))
    if unknown:
        raise ValueError(f"unknown key(s) {unknown} in {where}; allowed: {list(allowed)}")


def _number(value, name):
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return float(value)


def _numbers(values, name):
    if not isinstance(values, list | tuple):
        raise ValueError(f"{name} must be a list of numbers, got {values!r}")
    return tuple(_number(v, name) for v in values)


def _scores(table, where):
    if isinstance(table, ScoreLaw):  # from Python: a score law as it is
        return table
    table = dict(table) if isinstance(table, dict) else table
    _strict(table, ("kind", "a", "b", "atoms", "atom_probs"), where)
    kind = table.get("kind", "uniform")
    if kind not in _SCORE_KEYS:
        raise ValueError(f"{where} kind must be one of {list(_SCORE_KEYS)}, got {kind!r}")
    _strict(table, _SCORE_KEYS[kind], f"{where} (kind {kind!r})")
    atoms = _numbers(table.get("atoms", []), "atoms")
    if kind == "uniform":
        return ScoreLaw()
    if kind == "beta":
        if "a" not in table or "b" not in table:
            raise ValueError(f"{where} kind 'beta' needs a and b")
        return ScoreLaw(_number(table["a"], "a"), _number(table["b"], "b"))
    probs = _numbers(table.get("atom_probs", []), "atom_probs")
    if not atoms:
        raise ValueError(f"{where} kind {kind!r} needs atoms = [...]")
    if kind == "atoms":
        if not probs:
            probs = (1.0 / len(atoms),) * len(atoms)
        if abs(sum(probs) - 1.0) > 1e-9:
            raise ValueError(
                f"{where}: atom_probs of kind 'atoms' must sum to 1, got "
                f"{sum(probs):.6g}; for atoms plus a continuous part use "
                "kind = 'mixture'"
            )
        return ScoreLaw(atoms=atoms, atom_probs=probs)
    if not probs or sum(probs) >= 1.0:
        raise ValueError(
            f"{where}: kind 'mixture' needs atom_probs summing to less than 1 "
            f"(the rest is the Beta part), got {list(probs)}"
        )
    return ScoreLaw(
        _number(table.get("a", 1.0), "a"), _number(table.get("b", 1.0), "b"), atoms, probs
    )


def _eta(table, where, *, allow_callable=False):
    if allow_callable and callable(table):  # from Python: any vectorised function
        return CallableMean(table)
    if isinstance(table, ConditionalMean):
        return table
    if not isinstance(table, dict):
        if callable(table):  # a function where only a table is allowed
            name = getattr(table, "__qualname__", type(table).__name__)
            raise ValueError(
                f"{where} must be a table, got the function {name}; a callable eta is for "
                "binary laws (family 'binary', or a top_label law's classes)"
            )
        what = "a table or a callable eta(s)" if allow_callable else "a table"
        raise ValueError(f"{where} must be {what}, got {type(table).__name__} {table!r:.80}")
    table = dict(table)
    if not isinstance(table.get("kind", "constant"), str):
        raise ValueError(f"{where} kind must be a string, got {table['kind']!r}")
    return ConditionalMean(table.pop("kind", "constant"), table)


def _binary(table, name, where):
    labels = table.get("labels", "binary")
    return BinaryLaw(
        _scores(table.get("scores", {"kind": "uniform"}), f"{where} scores"),
        _eta(table.get("eta", {"kind": "constant"}), f"{where} eta", allow_callable=True),
        labels,
        _number(table.get("concentration", 4.0), "concentration"),
        name,
        _numbers(table.get("atom_eta", []), "atom_eta"),
    )


def _linear_shift(table, name, where):
    """``family = "linear_shift"``: a shift strength ``c0`` and a smooth eta."""
    return LinearShiftLaw(
        _number(table.get("c0", 0.5), "c0"),
        _eta(table.get("eta", {"kind": "power"}), f"{where} eta"),
        name,
    )


def _top_label(table, name, where):
    """``family = "top_label"``: class probabilities and one binary table per class."""
    classes = table.get("classes")
    if not isinstance(classes, list) or not classes:
        raise ValueError(
            f"{where}: family 'top_label' needs classes = [table, ...], one "
            "binary law per predicted class"
        )
    laws = []
    for i, sub in enumerate(classes):
        _strict(sub, _FAMILY_KEYS["binary"], f"{where} classes[{i}]")
        laws.append(_binary(sub, f"{name}[{i}]", f"{where} classes[{i}]"))
    return TopLabelLaw(_numbers(table.get("class_probs"), "class_probs"), tuple(laws), name)


def _binned_model(table, name, where):
    """``family = "binned_model"``: a model's outputs, their masses and label means."""
    missing = [k for k in _FAMILY_KEYS["binned_model"][1:] if k not in table]
    if missing:
        raise ValueError(f"{where}: family 'binned_model' needs {missing}")
    return BinnedModelLaw(
        *(_numbers(table[k], k) for k in ("values", "masses", "label_means")), name
    )


def _recalibration(table, name, where):
    """``family = "recalibration"``: Platt's family ``sigma(a logit z + b)`` plus ``xi(z)``."""
    numbers = {k: _number(table[k], k) for k in ("a", "b", "amplitude", "lo", "hi") if k in table}
    ints = {k: table[k] for k in ("cells", "cycles", "seed") if k in table}
    for k, v in ints.items():
        if isinstance(v, bool) or not isinstance(v, int) or v < (k != "seed"):
            raise ValueError(
                f"{k} must be a {'non-negative' if k == 'seed' else 'positive'} integer, got {v!r}"
            )
    kind = table.get("kind", "sigmoid")
    return RecalibrationLaw(kind=kind, name=name, **numbers, **ints)


def _dirichlet_affine(table, name, where):
    """``family = "dirichlet_affine"``: a Dirichlet or prototypes, shrunk by ``shrink``."""
    prototypes = table.get("prototypes", [])
    if not isinstance(prototypes, list):
        raise ValueError(f"prototypes must be a list of rows, got {prototypes!r}")
    return DirichletAffineLaw(
        _numbers(table.get("concentration", [1.0, 1.0, 1.0]), "concentration"),
        _number(table.get("shrink", 0.7), "shrink"),
        tuple(_numbers(row, "prototypes") for row in prototypes),
        _numbers(table.get("prototype_probs", []), "prototype_probs"),
        name,
    )


#: family -> ``build(table, name, where) -> Law``, for a table whose keys are checked.
_FAMILY_BUILDERS = {
    "binary": _binary,
    "linear_shift": _linear_shift,
    "top_label": _top_label,
    "dirichlet_affine": _dirichlet_affine,
    "binned_model": _binned_model,
    "recalibration": _recalibration,
}


def law_from_spec(table, name: str = "custom") -> Law:
    """Build a law from a table (see the module docstring) or the name of a shipped law.

    Parameters
    ----------
    table : dict or str
        The law's table (its ``name`` key, if any, must be removed and passed as ``name``),
        or the name of a law in :data:`calcheck.simulations.laws.LAWS`.
    name : str
        Display name of the law.

    Returns
    -------
    Law

    Raises
    ------
    ValueError
        Naming the unknown key, family or value.

    Examples
    --------
    The table of a study file, as a dict:

    >>> from calcheck import law_from_spec
    >>> law = law_from_spec(
    ...     {"scores": {"kind": "beta", "a": 2.0, "b": 5.0},
    ...      "eta": {"kind": "logistic", "slope": 2.0, "intercept": -0.5}},
    ...     name="beta25_platt")
    >>> law.name, law.family, law.has_atoms
    ('beta25_platt', 'binary', False)
    >>> law_from_spec({"scores": {"kind": "uniform"}, "eta": {"kind": "nope"}})
    Traceback (most recent call last):
    ...
    ValueError: ...
    """
    if isinstance(table, str):
        if table not in LAWS:
            raise ValueError(f"unknown law name {table!r}; known: {sorted(LAWS)}")
        return LAWS[table]
    if not isinstance(table, dict):
        raise ValueError(f"a law must be a table or a law name, got {table!r}")
    family = table.get("family", "binary")
    if family not in _FAMILY_KEYS:
        raise ValueError(f"law family must be one of {list(_FAMILY_KEYS)}, got {family!r}")
    where = f"law {name!r}"
    _strict(table, _FAMILY_KEYS[family], f"{where} (family {family!r})")
    return _FAMILY_BUILDERS[family](table, name, where)
