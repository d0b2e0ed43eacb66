"""A multiclass calibrator of your own as a method: top-label and class-wise events.

A calibrator is *multiclass* (:func:`is_multiclass_calibrator`) when it has ``fit`` and
``predict_proba`` and says how many classes it predicts: an ``n_classes`` attribute (an
integer >= 3; the template calcheck copies is never fitted, so it must be set before
fitting, e.g. in ``__init__``) or, scikit-learn style, a ``classes_`` of >= 3 entries.
Anything else with ``fit`` and ``predict`` / ``predict_proba`` is a binary calibrator
(:func:`calibrator_method`).

:func:`multiclass_calibrator_method` returns the
:class:`~calcheck.theory_checks.checks.methods.MethodSpec` that :func:`calcheck.define_guarantee`
uses for such a calibrator: it runs
:class:`~calcheck.simulations.experiments.calibrator_multiclass.MulticlassCalibratorExperiment` on
the multiclass laws with exact truth (``top_label`` laws; ``dirichlet_affine`` laws with
prototypes), with the events of :data:`MULTICLASS_EVENTS`.
"""

from __future__ import annotations

from calcheck.simulations.experiments.calibrator_protocol import unwrapped

from ..checks.events import Marginal, MeanAtMost, Within
from ..checks.methods import BINARY_EVENTS, DATA_KEYWORDS, EventSpec, MethodSpec

__all__ = [
    "MULTICLASS_EVENTS",
    "calibrator_method",
    "is_multiclass_calibrator",
    "multiclass_calibrator_method",
]

# name -> (event, quantifier, the event in words); every claim is 1 - alpha except the
# expectation events' (``1-bound``)
_EVENTS = {
    "conditional": (
        Within("max_error"),
        "conditional",
        "w.p. >= 1 - alpha, TL-MCE <= eps: every top-label level set {c(X) = c, h(X) = r} "
        "has |P(Y = c | c(X) = c, h(X) = r) - r| <= eps",
    ),
    "marginal": (
        Marginal(),
        "marginal",
        "w.p. >= 1 - alpha over the data and a fresh test point X, "
        "|P(Y = c(X) | c(X), h(X)) - h(X)| <= eps",
    ),
    "ece": (Within("l1_ece"), "conditional", "w.p. >= 1 - alpha, the exact TL-ECE <= eps"),
    "ece_mean": (MeanAtMost("l1_ece"), "expectation", "E[TL-ECE] <= bound (no alpha)"),
    "cw_conditional": (
        Within("class_max_error"),
        "conditional",
        "w.p. >= 1 - alpha, for every class l every level set {h_l(X) = r} has "
        "|P(Y = l | h_l(X) = r) - r| <= eps (eps may be one per class)",
    ),
    "cw_marginal": (
        Within("class_test_error"),
        "marginal",
        "w.p. >= 1 - alpha over the data and one fresh test point X, every class's error "
        "|P(Y = l | h_l(X)) - h_l(X)| <= eps",
    ),
    "cw_ece": (Within("cw_ece"), "conditional", "w.p. >= 1 - alpha, the exact CW-ECE <= eps"),
    "cw_ece_mean": (MeanAtMost("cw_ece"), "expectation", "E[CW-ECE] <= bound (no alpha)"),
}

#: Events of a multiclass calibrator's fitted map: top-label (Gupta & Ramdas 2022, Sec. 2,
#: the events of Theorem 1) and class-wise (Sec. 2, eqs. 13-14 jointly over the classes).
MULTICLASS_EVENTS = {
    name: EventSpec(event, "1-bound" if q == "expectation" else "1-alpha", q, text)
    for name, (event, q, text) in _EVENTS.items()
}


def _n_classes(calibrator) -> int | None:
    declared = getattr(calibrator, "n_classes", None)
    if isinstance(declared, int) and not isinstance(declared, bool):
        return declared
    classes = getattr(calibrator, "classes_", None)
    try:
        return len(classes) if classes is not None else None
    except TypeError:
        return None


def is_multiclass_calibrator(obj) -> bool:
    """Whether ``obj`` is a multiclass calibrator (see the module doc for the rule).

    Parameters
    ----------
    obj : object
        A calibrator, possibly wrapped by
        :func:`calcheck.allow_unresolved`.

    Returns
    -------
    bool
        True iff it has ``fit`` and ``predict_proba`` and ``n_classes`` (an int >= 3) or a
        ``classes_`` of >= 3 entries.

    Examples
    --------
    >>> from sklearn.linear_model import LogisticRegression  # doctest: +SKIP
    >>> is_multiclass_calibrator(LogisticRegression())  # no n_classes, not fitted  # doctest: +SKIP
    False
    >>> is_multiclass_calibrator(object())
    False
    """
    obj = unwrapped(obj)
    has = all(callable(getattr(obj, m, None)) for m in ("fit", "predict_proba"))
    count = _n_classes(obj)
    return has and count is not None and count >= 3


def multiclass_calibrator_method(calibrator, *, grid: int = 256) -> MethodSpec:
    """A :class:`MethodSpec` for a user's multiclass calibrator (``fit`` and ``predict_proba``).

    Parameters
    ----------
    calibrator : object
        ``fit(scores, labels)`` with an ``(n, L)`` score matrix and labels in ``0..L-1``,
        and ``predict_proba(scores) -> (m, L)`` in [0, 1]; a fresh copy is fitted on every
        replicate. Wrap it with
        :func:`calcheck.allow_unresolved` where its map
        varies continuously.
    grid : int, default 256
        Equal-probability cells per predicted class that resolve the level sets.

    Returns
    -------
    MethodSpec
        On ``top_label`` and ``dirichlet_affine`` laws (the latter with prototypes), grid
        ``(n, n_bins)`` (``n_bins`` is the bound's B, passed to ``fit`` where it takes it),
        supplying ``n``, ``n_bins`` and ``n_classes`` and the data keywords of
        :data:`~calcheck.theory_checks.checks.methods.DATA_KEYWORDS` per top-label level set (one
        column per level set, as the outcome's ``error``), with the events of
        :data:`MULTICLASS_EVENTS`.

    Raises
    ------
    ValueError
        Where ``calibrator`` lacks ``fit`` or ``predict_proba`` (naming its class), or
        ``grid`` is not a positive integer.

    Examples
    --------
    >>> class Identity:  # the score matrix as it is
    ...     n_classes = 3
    ...     def fit(self, scores, labels): return self
    ...     def predict_proba(self, scores): return scores
    >>> spec = multiclass_calibrator_method(Identity())
    >>> spec.families, sorted(spec.events)[:3]
    (('top_label', 'dirichlet_affine'), ['conditional', 'cw_conditional', 'cw_ece'])
    >>> spec.supplied("conditional", data=False), spec.data
    (('alpha', 'n', 'n_bins', 'n_classes'), ('counts', 'means', 'variances', 'n_used'))
    """
    from calcheck.simulations.experiments.calibrator_multiclass import (
        MulticlassCalibratorExperiment,
    )
    from calcheck.simulations.validation import check_positive_int

    check_positive_int(grid, "grid")
    inner = unwrapped(calibrator)
    for need in ("fit", "predict_proba"):
        if not callable(getattr(inner, need, None)):
            raise ValueError(
                f"a multiclass calibrator must have fit(scores, labels) and "
                f"predict_proba(scores) -> (m, L); {type(inner).__name__} has no {need}"
            )
    name = type(inner).__qualname__
    return MethodSpec(
        name,
        f"the user's multiclass calibrator {type(inner).__module__}.{name}, fitted on each "
        f"replicate; top-label and class-wise events on the level sets of its outputs "
        f"({grid} cells per predicted class)",
        ("top_label", "dirichlet_affine"),
        ("n", "n_bins"),
        lambda law, n, n_bins: MulticlassCalibratorExperiment(calibrator, law, n, n_bins, grid),
        ("n", "n_bins", "n_classes"),
        MULTICLASS_EVENTS,
        None,
        data=tuple(DATA_KEYWORDS),  # per top-label level set (the experiment records them)
    )


def calibrator_method(calibrator, *, grid: int | None = None) -> MethodSpec:
    """A :class:`MethodSpec` for a user's calibrator (``fit`` and ``predict``).

    A multiclass calibrator (an ``n_classes`` or ``classes_`` of at least 3:
    :func:`~calcheck.theory_checks.user.calibrators.is_multiclass_calibrator`) gets the
    top-label and class-wise events of
    :func:`~calcheck.theory_checks.user.calibrators.multiclass_calibrator_method`; any
    other, the binary events below.

    Parameters
    ----------
    calibrator : object
        ``fit(scores, labels)`` and ``predict(scores)`` (or ``predict_proba``), scikit-learn
        style; a fresh copy is fitted on every replicate.
    grid : int, optional
        Equal-probability cells that resolve the fitted map's level sets (default 1024;
        256 per predicted class for a multiclass calibrator).

    Returns
    -------
    MethodSpec
        On binary laws, grid ``(n, n_bins)`` (``n_bins`` is the bound's B; the calibrator
        keeps its own), with the events of
        :data:`~calcheck.theory_checks.checks.methods.BINARY_EVENTS` and the data keywords per level
        set (one column per level set, padded).
    """
    from calcheck.simulations.experiments.calibrator import (
        CalibratorExperiment,
        check_calibrator,
    )

    if is_multiclass_calibrator(calibrator):
        return multiclass_calibrator_method(calibrator, grid=256 if grid is None else grid)
    grid = 1024 if grid is None else grid
    check_calibrator(calibrator)  # now, not at the first replicate
    inner = unwrapped(calibrator)
    name = type(inner).__qualname__
    return MethodSpec(
        name,
        f"the user's calibrator {type(inner).__module__}.{name}, fitted on each "
        f"replicate; events on the level sets of its outputs ({grid} cells)",
        ("binary",),
        ("n", "n_bins"),
        lambda law, n, n_bins: CalibratorExperiment(calibrator, law, n, n_bins, grid=grid),
        ("n", "n_bins"),
        BINARY_EVENTS,
        None,
        data=tuple(DATA_KEYWORDS),  # per level set (the experiment always records them)
    )
