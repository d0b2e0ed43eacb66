"""Your own bound and your own calibrator: guarantees defined at run time.

:func:`define_guarantee` turns a function ``bound(n, n_bins, alpha, ...)`` into a guarantee
that :func:`calcheck.verify`, :func:`calcheck.search`, :mod:`calcheck.testing`,
:func:`exact_coverage_of`, study files and the run reports accept in place of a registered
id. The guarantee names a *method* (a calibrator the suite simulates: ``"umd"``, ``"ums"``,
``"tl_hb"``, ... or an object of your own with ``fit`` and ``predict``) and an *event*
(``"conditional"``, ``"marginal"``, ``"ece"``, ...) that the suite evaluates against the
law's exact truth; ``calcheck list --methods`` prints every pair with the keywords it
supplies to the bound. A bound may also read each replicate's calibration data per bin
(:data:`~calcheck.theory_checks.checks.methods.DATA_KEYWORDS`) and return a radius per bin.

A calibrator of your own runs through
:class:`~calcheck.simulations.experiments.calibrator.CalibratorExperiment`: it is fitted on each
replicate's data, and the event is evaluated on the level sets of its outputs (the sets
``{s : h(s) = r}``), resolved on a grid of equal-probability cells of the score law; the
truth of each cell is exact, and the probability of the cells in which the fitted map
changes value is reported (``unresolved_mass``).
"""

from __future__ import annotations

import functools
import inspect
import re
from dataclasses import dataclass

import numpy as np

from calcheck.bounds import registry
from calcheck.bounds.guarantee import QUANTIFIERS, Guarantee
from calcheck.simulations.experiments.calibrator_protocol import calibrator_values, unwrapped
from calcheck.simulations.provenance import code_inputs, content_key, values_fingerprint

from ..checks.check import StudyAdapter
from ..checks.methods import DATA_KEYWORDS, PER_BIN_EVENTS, MethodSpec
from .calibrators import _n_classes, calibrator_method, is_multiclass_calibrator

__all__ = [
    "DefinedGuarantee",
    "bound_values",
    "calibrator_method",
    "define_guarantee",
    "definition_of",
    "guarantee_id",
    "probe_arguments",
]

_ID = re.compile(r"^[A-Za-z][A-Za-z0-9_\-]*(\.[A-Za-z0-9_\-]+)+$")
_RESERVED = re.compile(r"(\.control\.|\.times_[0-9.]+$|^study:)")
_DEFINED: dict[str, DefinedGuarantee] = {}


def _methods() -> dict:
    from ..catalog import methods

    return methods()


def _bound_name(function) -> str:
    """``module:qualname`` of the user's bound (as a study file names it)."""
    function = inspect.unwrap(function)
    return f"{getattr(function, '__module__', '?')}:{getattr(function, '__qualname__', '?')}"


def _shown(kwargs: dict) -> str:
    """The bound's keywords for a message: numbers echoed, arrays by their shape."""
    parts = []
    for key, value in kwargs.items():
        shape = np.shape(value)
        if shape == ():
            value = value.item() if isinstance(value, np.generic) else value
            parts.append(f"{key}={value!r}")
        else:
            parts.append(f"{key}: array of shape {shape}")
    return ", ".join(parts)


def _output_shapes(kwargs: dict, per_bin: bool) -> tuple:
    """The shapes a bound may return: a number, one per replicate, one per bin (``per_bin``)."""
    shapes = {np.shape(v) for v in kwargs.values()}
    rows = {s[0] for s in shapes if len(s) in (1, 2)}
    bins = {s for s in shapes if len(s) == 2}
    out = [()]
    if len(rows) == 1:
        out.append((rows.pop(),))
    if per_bin and len(bins) == 1:
        out.append(bins.pop())
    return tuple(out)


def _checked_bound(gid: str, function, per_bin: bool = False):
    """The user's bound, refusing exceptions, None, NaN, negative values and wrong shapes.

    ``per_bin``: the event takes a radius per bin (shape of the ``(R, B)`` data keywords).
    """

    @functools.wraps(function)
    def bound(**kwargs):
        data = any(k in DATA_KEYWORDS for k in kwargs)

        def refused(what: str, hint: str = "a bound must return a number >= 0"):
            where = f"at {_shown(kwargs)} ({_bound_name(function)})"
            return ValueError(f"the bound of {gid} {what} {where}; {hint}")

        try:
            raw = function(**kwargs)
        except Exception as exc:  # the user's code: one line naming it (interruptions pass)
            raise refused(f"raised {type(exc).__name__}: {exc}", "fix the bound") from None
        if raw is None:
            raise refused("returned None")
        if np.iscomplexobj(raw):  # a cast to float would drop the imaginary part with a warning
            raise refused("returned complex values", "a bound must return real numbers >= 0")
        try:
            value = np.asarray(raw, dtype=float)
        except (TypeError, ValueError):
            raise refused(f"returned {type(raw).__name__} {raw!r:.80}") from None
        shapes = _output_shapes(kwargs, per_bin)
        if value.size != 1 and value.shape not in shapes:
            per_bin_hint = (
                "; a radius per bin is for the conditional and marginal events"
                if not per_bin and value.ndim == 2
                else ""
            )
            raise refused(
                f"returned an array of shape {value.shape}",
                "expected a number"
                + "".join(f" or shape {s}" for s in shapes[1:])
                + " (the shape of its inputs)"
                + per_bin_hint,
            )
        if np.any(np.isnan(value)) or np.any(value < 0):
            shown = repr(value.tolist()) if value.size <= 6 else f"an array of shape {value.shape}"
            hint = "a bound must be >= 0"
            if data:
                hint += " (inf where it says nothing, e.g. for a bin with counts 0)"
            raise refused(f"returned {shown} (NaN or negative)", hint)
        return value

    return bound


#: The fixed points at which a bound outside calcheck is probed (:func:`probe_arguments`):
#: sizes a bound accepts as a rule, one small, one usual, one large (a bound may refuse one:
#: that it raised is recorded).
_PROBE_POINTS = (
    {"n": 1000, "n_bins": 10, "alpha": 0.1, "delta": 0.0, "n_classes": 3, "points_per_bin": 50},
    {"n": 200, "n_bins": 4, "alpha": 0.05, "delta": 0.01, "n_classes": 4, "points_per_bin": 20},
    {"n": 5000, "n_bins": 25, "alpha": 0.01, "delta": 0.001, "n_classes": 5, "points_per_bin": 100},
)
#: The keywords the probe points give a meaning: the symbols and the data keywords.
_PROBE_KNOWN = frozenset({*_PROBE_POINTS[0], "class_counts", "bins_per_class", *DATA_KEYWORDS})
#: The value at each point of a keyword of no known meaning (a plugin paper's own symbol).
_PROBE_OTHER = (0.5, 0.25, 0.05)


def _probe_data(n: int, n_bins: int) -> dict:
    """Data keywords of two replicates of uniform-mass binning on ``n`` points.

    ``n - (B - 1)`` points in the bins (the UMD split), equal in the first row and growing
    with the bin in the second; label sums as binary labels give them.
    """
    used = n - (n_bins - 1)
    equal = np.full(n_bins, used // n_bins, dtype=np.int64)
    equal[: used % n_bins] += 1
    weights = np.arange(1, n_bins + 1)
    growing = (used * weights) // weights.sum()
    growing[-1] += used - growing.sum()
    counts = np.stack([equal, growing]).astype(np.int64)
    sums = (counts * (np.arange(n_bins) + 0.5)) // n_bins  # means rising across the bins
    means = sums / counts
    return {
        "counts": counts,
        "means": means,
        "variances": means - means * means,
        "n_used": counts.sum(axis=1),
    }


def probe_arguments(names) -> tuple[dict, ...]:
    """The fixed keyword arguments at which a bound outside calcheck is probed.

    Parameters
    ----------
    names : iterable of str
        The keywords to give the bound (those it takes).

    Returns
    -------
    tuple of dict
        One dict per probe point (three): the symbols (``n``, ``n_bins``, ``alpha``,
        ``delta``, ``n_classes``, ``points_per_bin``, ``class_counts``,
        ``bins_per_class``), the data keywords of two replicates
        (:data:`~calcheck.theory_checks.checks.methods.DATA_KEYWORDS`, shapes ``(2, n_bins)``
        and ``(2,)``), and a fixed number for any other keyword. Fresh arrays on each call.
    """
    names = sorted(set(names))
    points = []
    for point, other in zip(_PROBE_POINTS, _PROBE_OTHER, strict=True):
        weights = np.arange(point["n_classes"], 0, -1)
        class_counts = (point["n"] * weights) // weights.sum()
        class_counts[0] += point["n"] - class_counts.sum()
        known = {
            **point,
            "class_counts": class_counts,
            "bins_per_class": class_counts // point["points_per_bin"],
            **_probe_data(point["n"], point["n_bins"]),
        }
        points.append({name: known.get(name, other) for name in names})
    return tuple(points)


def bound_values(function, supplied=None) -> str | None:
    """Hash of a bound's values at the probe points (:func:`probe_arguments`).

    Parameters
    ----------
    function : callable
        The bound, called with keywords.
    supplied : iterable of str, optional
        The keywords its caller supplies: each of its parameters among them is given. None
        (a plugin paper's bound): each parameter without a default, and the known symbols
        among those with one.

    Returns
    -------
    str or None
        :func:`~calcheck.simulations.provenance.values_fingerprint` at the probe points; None
        where the signature cannot be read.
    """
    try:
        params = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return None
    named = [p for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    if supplied is not None:
        names = [p.name for p in named if p.name in set(supplied)]
    else:
        names = [p.name for p in named if p.default is p.empty or p.name in _PROBE_KNOWN]
    return values_fingerprint(function, probe_arguments(names))


def _calibrator_values(calibrator) -> str:
    """The calibrator's values at fixed probe data, its classes as the score columns.

    :func:`~calcheck.simulations.experiments.calibrator_protocol.calibrator_values`; a
    multiclass calibrator's classes are its ``n_classes`` or ``classes_``.
    """
    count = _n_classes(calibrator) if is_multiclass_calibrator(calibrator) else None
    return calibrator_values(calibrator, count)


@dataclass(frozen=True, eq=False)
class DefinedGuarantee:
    """A guarantee defined at run time; every entry point accepts it in place of an id.

    Attributes
    ----------
    id : str
    guarantee : Guarantee
        The registered record (its ``function`` is the user's bound).
    method : MethodSpec
    event : str
    calibrator : object or None
        The user's calibrator when the method is one.

    The :attr:`fingerprint` (and :meth:`inputs`) cover the bound's code and its values at
    fixed probe arguments as they are now: records and stored results of another definition
    under the same id, or of a bound that now returns other values, are never reused.
    """

    id: str
    guarantee: Guarantee
    method: MethodSpec
    event: str
    calibrator: object = None

    def inputs(self) -> dict:
        """What the guarantee's results depend on beyond calcheck's code, hashed by part.

        ``bound`` and ``calibrator``: :func:`~calcheck.simulations.provenance.code_inputs`
        of the user's bound and calibrator (source files of their modules and of the user
        modules those use, module-level values); ``bound_values``: ``bound_values`` of
        the bound at the keywords the method supplies; ``calibrator_values``: the hash of
        the calibrator's predictions on a fixed sample after fitting on another (None
        without a calibrator of the user's); ``method`` and ``event``. The values cover what
        the code cannot show (a file the bound reads on each call).
        """
        spec = self.method
        own = None if self.calibrator is None else unwrapped(self.calibrator)
        # the user's function inside the refusing wrapper (its own decorators kept)
        function = getattr(self.guarantee.function, "__wrapped__", self.guarantee.function)
        return {
            "bound": code_inputs(self.guarantee.function) or {},
            "bound_values": bound_values(function, self.supplied),
            "calibrator": None if own is None else code_inputs(own),
            "calibrator_values": None if own is None else _calibrator_values(own),
            "method": [spec.name, spec.description],
            "event": self.event,
        }

    @property
    def fingerprint(self) -> str:
        """Hash of :meth:`inputs` (computed now: an edit since the definition counts)."""
        return content_key(self.inputs())[:16]

    def __str__(self) -> str:
        return self.id

    def __repr__(self) -> str:
        return (
            f"<DefinedGuarantee {self.id}: {self.guarantee.function.__name__}"
            f"({', '.join(self.guarantee.parameters)}) on method {self.method.name!r}, "
            f"event {self.event!r} ({self.guarantee.quantifier})>"
        )

    @property
    def supplied(self) -> tuple[str, ...]:
        """The keywords the method x event pair supplies to the bound."""
        return self.method.supplied(self.event)

    def adapter(self) -> StudyAdapter:
        """How the guarantee is checked on a law (grid, event, claim)."""
        spec = self.method.events[self.event]
        return StudyAdapter(
            self.id,
            self.method.families,
            self.method.grid_keys,
            self.method.build,
            spec.event,
            spec.claim,
            description=f"{self.method.description}; {spec.description}",
        )

    def ensure_registered(self) -> DefinedGuarantee:
        """Register (again) in this process: worker processes of a search start empty."""
        from ..catalog import add_study

        current = _DEFINED.get(self.id)
        if current is not self:
            registry.register_user(self.guarantee)
            add_study(self.id, self.adapter())
            _DEFINED[self.id] = self
        return self


def define_guarantee(
    id: str,
    bound,
    *,
    method,
    event: str,
    quantifier: str | None = None,
    statement: str = "",
    hypotheses=(),
    label: str = "",
) -> DefinedGuarantee:
    """Define a guarantee of your own and register it for this session.

    Parameters
    ----------
    id : str
        ``"<paper>.<label>"`` (e.g. ``"mine.thm1"``); not a paper's registered id. Defining
        the same id again replaces the earlier definition.
    bound : callable
        The bound, called with keywords only, each one that the method x event pair
        supplies (``calcheck list --methods``), e.g. ``bound(n, n_bins, alpha)``.
        It returns a number >= 0 (``inf`` allowed; NaN or a negative value is an error).
        A bound may also ask for the data of each replicate
        (:data:`~calcheck.theory_checks.checks.methods.DATA_KEYWORDS`: ``counts``, ``means``,
        ``variances`` of shape ``(R, B)``, ``n_used`` of shape ``(R,)``, one row per
        replicate): it is called with the arrays of a cell's R replicates, and may return one radius
        per replicate ``(R,)`` or, for the conditional and marginal events, one per bin
        ``(R, B)`` (``inf`` for a bin it says nothing about, e.g. one with counts 0). Its
        experiments record the data and are stored apart from those of bounds that do not.
    method : str or object
        A method name (``"umd"``, ``"zadrozny_elkan"``, ``"randomized_umd"``, ``"ums"``,
        ``"fixed_width"``, ``"tl_hb"``, ``"cw_hb"``, ...), or a calibrator of your own with
        ``fit(scores, labels)`` and ``predict(scores)`` (binary laws), or a multiclass one
        with ``predict_proba`` and ``n_classes >= 3`` (top-label laws; events
        ``conditional``, ``marginal``, ``ece``, ``ece_mean`` and their class-wise ``cw_*``
        forms; see ``calcheck list --methods``).
    event : str
        An event of the method (``"conditional"``, ``"marginal"``, ``"ece"``, ...).
    quantifier : str, optional
        Defaults to the event's; given, it must be the event's.
    statement, label : str
        What the guarantee says, and where (shown in reports).
    hypotheses : sequence of str

    Returns
    -------
    DefinedGuarantee

    Raises
    ------
    ValueError
        For a bad id, an unknown method or event (the message lists them), or a bound
        that asks for a keyword the pair does not supply (the message lists what is).

    Examples
    --------
    gr21 Theorem 3's radius written by hand, claimed for uniform-mass binning's conditional
    event, and the same radius times 0.5 (a wrong bound the check must catch):

    >>> import numpy as np
    >>> from calcheck import define_guarantee, verify
    >>> def radius(n, n_bins, alpha):
    ...     return np.sqrt(np.log(2 * n_bins / alpha) / (2 * (np.floor(n / n_bins) - 1)))
    >>> mine = define_guarantee("mine.thm3", radius, method="umd", event="conditional")
    >>> verify(mine, "uniform_half", n=1000, n_bins=10, reps=500, rng=0).verdict
    'consistent'
    >>> half = define_guarantee(
    ...     "mine.half", lambda n, n_bins, alpha: 0.5 * radius(n, n_bins, alpha),
    ...     method="umd", event="conditional")
    >>> verify(half, "uniform_half", n=1000, n_bins=10, reps=500, rng=0).verdict
    'violated'
    """
    spec, quantifier, hyp = _checked_arguments(id, bound, method, event, quantifier, hypotheses)
    statement = statement or spec.events[event].description
    guarantee = _guarantee_record(id, bound, event, quantifier, hyp, statement, label)
    calibrator = None if isinstance(method, str) else method
    return DefinedGuarantee(id, guarantee, spec, event, calibrator).ensure_registered()


def _checked_arguments(gid, bound, method, event, quantifier, hypotheses) -> tuple:
    """:func:`define_guarantee`'s arguments checked: ``(method spec, quantifier, hypotheses)``.

    The spec records each replicate's data where the bound asks for it; the quantifier is
    the event's; the hypotheses a tuple of strings. Raises ValueError naming the argument.
    """
    _check_id(gid)
    if not callable(bound):
        raise ValueError(f"bound must be callable, got {type(bound).__name__}")
    spec = _method_spec(method)
    quantifier = _event_quantifier(spec, event, quantifier)
    asks = _check_signature(gid, bound, spec, event)
    if asks & set(DATA_KEYWORDS):
        spec = spec.with_data()  # experiments that record the data (results of their own)
    hyp = (hypotheses,) if isinstance(hypotheses, str) else tuple(hypotheses)
    if not all(isinstance(h, str) for h in hyp):
        raise ValueError(f"hypotheses must be strings, got {hypotheses!r}")
    return spec, quantifier, hyp


def _check_id(gid) -> None:
    """Refuse an id not of the form ``<paper>.<label>``, reserved, or with a paper's prefix."""
    if not isinstance(gid, str) or not _ID.match(gid) or _RESERVED.search(gid):
        raise ValueError(
            f"id must look like '<paper>.<label>' (letters, digits, _ and -; not "
            f"'.control.' or '.times_<f>'), got {gid!r}"
        )
    paper = gid.split(".")[0]
    # the papers loaded so far, without looking for plugins: a plugin module that defines its
    # guarantees while it is being imported must not load the plugins (itself half imported)
    if paper in registry.PAPERS or paper in registry.loaded_plugin_papers():
        raise ValueError(
            f"id {gid!r} starts with {paper!r}, a paper's key; a guarantee of your own has a "
            "prefix of its own (e.g. 'mine.thm1')"
        )


def _method_spec(method) -> MethodSpec:
    """The spec of a method name (refusing an unknown one) or of a calibrator of your own."""
    if not isinstance(method, str):
        return calibrator_method(method)
    known = _methods()
    if method not in known:
        raise ValueError(f"method must be one of {sorted(known)} or a calibrator, got {method!r}")
    return known[method]


def _event_quantifier(spec: MethodSpec, event: str, quantifier: str | None) -> str:
    """The quantifier of the method's ``event``, refusing an unknown event or another one."""
    if event not in spec.events:
        raise ValueError(
            f"event must be one of {sorted(spec.events)} for method {spec.name!r}, got {event!r}"
        )
    ev = spec.events[event]
    if quantifier is None:
        return ev.quantifier
    if quantifier not in QUANTIFIERS or quantifier != ev.quantifier:
        raise ValueError(
            f"quantifier must be {ev.quantifier!r} for event {event!r} (the event fixes it), "
            f"got {quantifier!r}"
        )
    return quantifier


def _guarantee_record(gid, bound, event, quantifier, hypotheses, statement, label) -> Guarantee:
    """The registered record of a checked definition (the paper: the id's prefix).

    The user's bound is wrapped to refuse what is not a bound (:func:`_checked_bound`).
    """
    return Guarantee(
        gid,
        _checked_bound(gid, bound, per_bin=event in PER_BIN_EVENTS),
        gid.split(".")[0],
        label or f"user-defined ({bound.__module__}.{bound.__qualname__})",
        statement,
        hypotheses,
        quantifier,
    )


def _check_signature(gid, bound, spec: MethodSpec, event: str) -> set:
    """The keywords the bound asks for (refusing any the pair does not supply)."""
    method, supplied = spec.name, spec.supplied(event)
    try:
        params = inspect.signature(bound).parameters
    except (TypeError, ValueError):
        raise ValueError(f"the signature of the bound of {gid} cannot be read") from None
    bad = [
        p.name
        for p in params.values()
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.POSITIONAL_ONLY)
    ]
    if bad:
        raise ValueError(
            f"the bound of {gid} must take named keywords only (it is called with keywords); "
            f"{bad} are not; available for method {method!r}, event {event!r}: {list(supplied)}"
        )
    missing = [p.name for p in params.values() if p.name not in supplied and p.default is p.empty]
    if missing:
        data = (
            f" and the data keywords {sorted(spec.data)} (arrays per replicate)"
            if spec.data
            else f"; it records no data keywords ({sorted(DATA_KEYWORDS)}: see "
            "calcheck list --methods for the methods that do)"
        )
        raise ValueError(
            f"the bound of {gid} asks for {missing}, which method {method!r} with event "
            f"{event!r} does not supply; available: {list(spec.supplied(event, data=False))}"
            f"{data}"
        )
    return {name for name in params if name in supplied}


def _forget_all() -> None:
    """Unregister every guarantee defined at run time (test isolation)."""
    from ..catalog import forget_study

    for gid in list(_DEFINED):
        registry.forget_user(gid)
        forget_study(gid)
    _DEFINED.clear()


def guarantee_id(guarantee) -> str:
    """The id of a guarantee given as an id or a :class:`DefinedGuarantee` (re-registered)."""
    if isinstance(guarantee, DefinedGuarantee):
        return guarantee.ensure_registered().id
    if isinstance(guarantee, str):
        return guarantee
    raise ValueError(
        f"guarantee must be an id or a calcheck.define_guarantee(...) result, got "
        f"{type(guarantee).__name__}: {guarantee!r}"
    )


def definition_of(guarantee_id: str) -> DefinedGuarantee | None:
    """The run-time definition behind an id (None for a paper's guarantee)."""
    return _DEFINED.get(guarantee_id) if registry.is_user_defined(guarantee_id) else None
