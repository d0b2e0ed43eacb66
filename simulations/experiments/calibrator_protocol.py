"""What calcheck asks of a calibrator of your own, shared by the binary and multiclass experiments.

Any object with ``fit(scores, labels)`` and ``predict(scores)`` or ``predict_proba(scores)``
(scikit-learn convention) is a calibrator; :func:`describe_calibrator` keys its results
(with :func:`calibrator_values`, its behaviour, for a calibrator that is not calcheck's own),
:func:`fit_copy` fits a fresh copy per replicate, and :func:`allow_unresolved` lets a map
that varies continuously (Platt scaling) be evaluated on its discretisation.
"""

from __future__ import annotations

import copy
import inspect
import json
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..parallel import UserCodeError, user_code_error
from ..provenance import generator, values_fingerprint
from .base import _jsonable, foreign_source_hash

__all__ = [
    "ALLOW_UNRESOLVED",
    "DEFAULT_MAX_UNRESOLVED",
    "AllowUnresolved",
    "allow_unresolved",
    "calibrator_call",
    "calibrator_values",
    "check_calibrator",
    "check_max_unresolved",
    "describe_calibrator",
    "fit_copy",
    "unresolved_advice",
    "unwrap_calibrator",
    "unwrapped",
]

#: Where the advice of the "varies continuously" error points (the public spelling).
ALLOW_UNRESOLVED = "calcheck.allow_unresolved"
#: ``max_unresolved`` of a calibrator that does not say otherwise.
DEFAULT_MAX_UNRESOLVED = 0.1


def _without_addresses(text: str) -> str:
    return re.sub(r" at 0x[0-9a-fA-F]+", "", text)


def describe_calibrator(calibrator, n_classes: int | None = None) -> dict:
    """A JSON-able, address-free description of a calibrator: class, parameters, source.

    Parameters are ``get_params()`` where the object has it (scikit-learn), else its public
    attributes; the source is the SHA-256 of the class's file (editing it changes keys).
    A calibrator that is not calcheck's own also gets ``values``, its
    :func:`calibrator_values`: what its source cannot show (a constant it reads from a file
    in ``fit``) still changes the key of its results. calcheck's own are covered by the
    code stamps, and their keys stay as they were.

    Parameters
    ----------
    calibrator : object
        ``fit`` and ``predict`` (or ``predict_proba``).
    n_classes : int, optional
        The columns of the score matrices it takes (a multiclass experiment's law); None
        for 1-D binary scores.

    Returns
    -------
    dict
        ``class``, ``params`` and ``source``, and ``values`` for a calibrator of the user's.
    """
    cls = type(calibrator)
    if callable(getattr(calibrator, "get_params", None)):
        params = calibrator.get_params()
    else:
        params = (
            {
                k: v
                for k, v in sorted(vars(calibrator).items())
                if not k.startswith("_") and not k.endswith("_")
            }
            if hasattr(calibrator, "__dict__")
            else {}
        )
    clean = {}
    for key, value in sorted(params.items()):
        value = _jsonable(value)
        try:
            json.dumps(value)
        except (TypeError, ValueError):
            value = _without_addresses(repr(value))
        clean[str(key)] = value
    out = {
        "class": f"{cls.__module__}.{cls.__qualname__}",
        "params": clean,
        "source": foreign_source_hash(cls),
    }
    if cls.__module__.partition(".")[0] != "calcheck":
        out["values"] = calibrator_values(calibrator, n_classes)
    return out


def _fitted_output(calibrator, scores, labels, test) -> np.ndarray:
    """A fresh copy of ``calibrator`` fitted on ``(scores, labels)``, predicting ``test``."""
    fitted = fit_copy(calibrator, scores, labels, generator(0, "calibrator probe", 1), 10)
    if callable(getattr(fitted, "predict_proba", None)):
        return fitted.predict_proba(test)
    return fitted.predict(test)


def calibrator_values(calibrator, n_classes: int | None = None) -> str:
    """Hash of a calibrator's predictions on a fixed sample after fitting on another.

    200 points of a fixed law (scores uniform, labels Bernoulli of the score; with
    ``n_classes``: Dirichlet score vectors of that many classes, labels drawn from them),
    fitted with a fixed ``rng`` and ``n_bins=10`` where ``fit`` takes them, twice.

    Parameters
    ----------
    calibrator : object
        ``fit`` and ``predict`` (or ``predict_proba``); fitted on copies, never itself.
    n_classes : int, optional
        The columns of the score matrices it takes; None (or 0) for 1-D binary scores.

    Returns
    -------
    str
        :func:`~calcheck.simulations.provenance.values_fingerprint` of the predictions (a
        ``fit`` or ``predict`` that raises is recorded by its exception's type), or
        ``"nondeterministic"`` where the two fits disagree (its values would change every
        run, and so would every key holding them).
    """
    rng = generator(0, "calibrator probe")
    count = int(n_classes or 0)
    if count:  # multiclass: probability vectors and labels drawn from them
        scores, test = rng.dirichlet(np.ones(count), 200), rng.dirichlet(np.ones(count), 100)
        labels = (rng.random((200, 1)) > np.cumsum(scores, axis=1)).sum(axis=1)
        labels = np.minimum(labels, count - 1)
    else:
        scores, test = rng.random(200), np.linspace(0.0025, 0.9975, 200)
        labels = (rng.random(200) < scores).astype(np.int64)
    probes = ({"calibrator": calibrator, "scores": scores, "labels": labels, "test": test},)
    first = values_fingerprint(_fitted_output, probes)
    if values_fingerprint(_fitted_output, probes) != first:
        return "nondeterministic"
    return first


def check_calibrator(calibrator) -> None:
    """Raise ValueError unless ``calibrator`` has ``fit`` and ``predict`` (or ``predict_proba``)."""
    name = type(calibrator).__name__
    if not callable(getattr(calibrator, "fit", None)):
        raise ValueError(f"calibrator must have fit(scores, labels), got {name}")
    if not any(callable(getattr(calibrator, m, None)) for m in ("predict", "predict_proba")):
        raise ValueError(
            f"calibrator must have predict(scores) or predict_proba(scores), got {name}"
        )


@dataclass(frozen=True)
class AllowUnresolved:
    """A calibrator whose fitted map may vary continuously: see :func:`allow_unresolved`."""

    calibrator: Any
    max_unresolved: float = 1.0

    def __post_init__(self):
        check_calibrator(self.calibrator)
        check_max_unresolved(self.max_unresolved)

    def fit(self, scores, labels, **kwargs):  # pragma: no cover - experiments unwrap it
        """The wrapped calibrator's ``fit``."""
        return self.calibrator.fit(scores, labels, **kwargs)

    def predict(self, scores):  # pragma: no cover - experiments unwrap it
        """The wrapped calibrator's ``predict`` (or ``predict_proba``)."""
        own = getattr(self.calibrator, "predict", None) or self.calibrator.predict_proba
        return own(scores)


def allow_unresolved(calibrator, max_unresolved: float = 1.0) -> AllowUnresolved:
    """Evaluate a calibrator whose fitted map varies continuously (Platt scaling, say).

    calcheck's events concern maps with finitely many outputs; a continuous map is
    evaluated on its discretisation: each of the experiment's equal-probability cells on
    which it still varies is one level set, valued at its midpoint (the module doc, step 3).
    As the grid grows its per-cell error tends to the pointwise ``|eta(s) - h(s)|``, which
    is the calibration error of an injective map. Pass the result where the calibrator
    goes: ``define_guarantee(..., method=allow_unresolved(calibrator))``.

    Parameters
    ----------
    calibrator : object
        ``fit`` and ``predict`` (or ``predict_proba``), as the experiments take.
    max_unresolved : float, default 1.0
        The most probability on which a fitted map may still vary, in [0, 1].

    Returns
    -------
    AllowUnresolved
        Unwrapped by the experiments; results are keyed as with ``max_unresolved`` given
        to the experiment directly.

    Raises
    ------
    ValueError
        For an object without ``fit`` / ``predict`` or a ``max_unresolved`` outside [0, 1].

    Examples
    --------
    >>> import numpy as np
    >>> class Platt:
    ...     def fit(self, s, y):
    ...         return self
    ...     def predict(self, s):
    ...         return 1 / (1 + np.exp(-4 * (np.asarray(s) - 0.5)))
    >>> from calcheck.simulations.laws import LAWS
    >>> from calcheck.simulations.experiments.calibrator import CalibratorExperiment
    >>> exp = CalibratorExperiment(allow_unresolved(Platt()), LAWS["uniform_half"], 50, 5)
    >>> exp.max_unresolved, type(exp.calibrator).__name__
    (1.0, 'Platt')
    """
    return AllowUnresolved(calibrator, max_unresolved)


def check_max_unresolved(value) -> float:
    """``max_unresolved`` is a number in [0, 1] (bool refused)."""
    if isinstance(value, bool) or not (isinstance(value, int | float) and 0 <= value <= 1):
        raise ValueError(f"max_unresolved must be in [0, 1], got {value!r}")
    return float(value)


def _accepts(method, name: str) -> bool:
    try:
        params = inspect.signature(method).parameters
    except (TypeError, ValueError):
        return False
    return name in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def unwrap_calibrator(experiment) -> None:
    """Resolve an experiment's ``calibrator`` and ``max_unresolved`` (in place, validated)."""
    own, given = experiment.calibrator, experiment.max_unresolved
    if isinstance(own, AllowUnresolved):
        if given is not None and check_max_unresolved(given) != own.max_unresolved:
            raise ValueError(
                f"max_unresolved={given!r} contradicts allow_unresolved(..., "
                f"max_unresolved={own.max_unresolved!r}); give it once"
            )
        object.__setattr__(experiment, "calibrator", own.calibrator)
        given = own.max_unresolved
    value = DEFAULT_MAX_UNRESOLVED if given is None else check_max_unresolved(given)
    object.__setattr__(experiment, "max_unresolved", value)


def unresolved_advice(experiment, unresolved: float) -> str:
    """The one-line refusal of a map that varies continuously, with advice one can follow."""
    return (
        f"the fitted {type(experiment.calibrator).__name__} varies continuously on "
        f"probability {unresolved:.3g} of the scores (> max_unresolved="
        f"{experiment.max_unresolved}): calcheck's events concern maps with finitely many "
        "outputs (binning, isotonic, scaling-binning); discretise its outputs, or evaluate "
        f"the map's discretisation on {experiment.grid} cells with "
        f"define_guarantee(..., method={ALLOW_UNRESOLVED}(calibrator)) "
        "(or max_unresolved=1.0 in the experiment)"
    )


def calibrator_call(calibrator, method: str, *args, **kwargs):
    """``calibrator.<method>(*args, **kwargs)``; what the user's calibrator raises, in one line.

    The line names the calibrator's method and the user's ``file:line``
    (:class:`~calcheck.simulations.parallel.UserCodeError`, a ValueError), in whichever
    worker the replicate runs. calcheck's own calibrators raise as they are.
    """
    try:
        return getattr(calibrator, method)(*args, **kwargs)
    except Exception as exc:
        cls = type(calibrator)
        if isinstance(exc, UserCodeError) or cls.__module__.partition(".")[0] == "calcheck":
            raise
        what = f"the calibrator {cls.__module__}.{cls.__qualname__}.{method}"
        raise user_code_error(what, exc) from exc


def fit_copy(calibrator, scores, labels, rng, n_bins=None):
    """Fit a deep copy of ``calibrator``, passing ``rng=`` and ``n_bins=`` where ``fit`` takes them.

    Returns the fitted object: ``fit``'s result where it returns a calibrator (scikit-learn
    returns self), else the copy (fitted in place). An exception of the user's ``fit`` is one
    line naming it (:func:`calibrator_call`).
    """
    fitted = copy.deepcopy(calibrator)
    kwargs = {}
    if _accepts(fitted.fit, "rng"):
        kwargs["rng"] = rng
    if n_bins is not None and _accepts(fitted.fit, "n_bins"):
        kwargs["n_bins"] = int(n_bins)
    result = calibrator_call(fitted, "fit", scores, labels, **kwargs)
    return result if result is not None and hasattr(result, "fit") else fitted


def unwrapped(calibrator):
    """The user's own calibrator inside an :class:`AllowUnresolved` (itself otherwise).

    What names a method and what :func:`~calcheck.simulations.provenance.code_inputs` hashes.
    """
    return calibrator.calibrator if isinstance(calibrator, AllowUnresolved) else calibrator
