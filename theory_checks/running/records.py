"""Result records: a check's result kept in the store instead of its replicates.

A full-budget run simulates millions of replicates; the verdicts read a handful of numbers
from each cell (success counts, a quantile and an order statistic of the ratios, means).
``calcheck run`` therefore keeps, for every check it evaluated, its whole result as a
*record* -- exact JSON of the result's numbers, keyed by everything the result depends on
-- and then deletes the replicate blocks no check of the run still needs. A rerun reads
the records and simulates nothing; a check that has no record (new, changed code, another
seed or budget) is simulated again from its seeds, with the same numbers.

Record keys
    :func:`result_key` hashes the check's description (type, id, guarantee, alphas, event,
    bound rule, experiments' content keys; callables by qualified name), the replicate
    count, the root seed, the false-alarm rate, the code stamp of the whole package
    (bounds, simulations, theory_checks) and, for a bound from outside calcheck, its code
    (its module, the user modules it uses or imports, their module-level values) and its
    values at fixed probe arguments (what the code cannot show: a file the bound reads on
    each call), and the same of a user's calibrator: a record written by other code, or
    by a bound that now returns other values, is never read. :func:`changed_inputs` says
    which of these differ from a check's earlier record (the run names why it recomputes).
Exactness
    A record is written in the one codec of calcheck's results
    (:mod:`~calcheck.theory_checks.results.export`: every float64 exactly, infinities and
    NaN tagged, numpy scalars with their dtype); the fields a result computes itself
    (``verdict``, ``passed``) are recomputed on reading. :func:`decode_result` rebuilds an
    object equal to the one encoded, so reports from a record are identical to reports
    from the replicates.
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np

from calcheck.bounds import registry
from calcheck.simulations.provenance import code_inputs, code_stamp, content_key

from ..checks.check import CheckResult
from ..results.export import decode, encode, parse_json
from ..series.exponents import ExponentCheckResult
from ..series.means import MeanZeroCheckResult
from ..series.rates import RateCheckResult
from ..series.tradeoff import TradeoffCheckResult
from ..user.guarantees import bound_values, definition_of

__all__ = ["changed_inputs", "decode_result", "encode_result", "result_inputs", "result_key"]

#: The code a record depends on: every package of calcheck.
_CODE = ("bounds", "simulations", "theory_checks")


def _stable(value):
    """A JSON-able description of a check's field that does not depend on memory layout."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        if hasattr(value, "key") and hasattr(value, "seed_key"):  # an experiment
            return {"experiment": value.key}
        return {
            "type": type(value).__qualname__,
            **{f.name: _stable(getattr(value, f.name)) for f in dataclasses.fields(value)},
        }
    if isinstance(value, dict):
        return {str(k): _stable(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, list | tuple):
        return [_stable(v) for v in value]
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if callable(value):
        return f"{getattr(value, '__module__', '')}.{getattr(value, '__qualname__', '?')}"
    return type(value).__qualname__


def result_inputs(check, reps: int, root_seed, false_alarm: float) -> dict:
    """What a check's result depends on, hashed by part (:func:`result_key` hashes it).

    ``check`` (the hash of its description), ``reps``, ``root_seed``, ``false_alarm``,
    ``code`` (calcheck's code stamp) and, for a plugin paper's bound, ``bound`` (the parts
    of :func:`~calcheck.simulations.provenance.code_inputs`: its module's source, the user
    modules it uses or imports and their module-level values) and ``bound_values`` (its
    values at fixed probe arguments,
    :func:`~calcheck.theory_checks.user.guarantees.bound_values`: what it reads on each
    call counts too); for a guarantee defined at run time, ``user_guarantee``
    (:meth:`~calcheck.theory_checks.user.guarantees.DefinedGuarantee.inputs`: the same for
    its bound and calibrator, its ``method`` and ``event``). :func:`changed_inputs` names
    the parts that differ between two of these. The catalog's own bounds add nothing:
    calcheck's code stamp covers them.
    """
    inputs = {
        "check": content_key(_stable(check)),
        "reps": int(reps),
        "root_seed": str(root_seed),
        "false_alarm": float(false_alarm),
        "code": code_stamp(*_CODE),
    }
    if registry.is_user_defined(check.guarantee):
        definition = definition_of(check.guarantee)
        inputs["user_guarantee"] = None if definition is None else definition.inputs()
    else:  # a plugin paper's bound: its source is not in calcheck's code stamp
        function = registry.get(check.guarantee).function
        outside = code_inputs(function)
        if outside is not None:  # the catalog's own bounds: their code stamp covers them
            inputs["bound"] = outside
            inputs["bound_values"] = bound_values(function)
    return inputs


def result_key(check, reps: int, root_seed, false_alarm: float) -> str:
    """Content key of a check's result: the hash of :func:`result_inputs`.

    A bound outside calcheck (defined at run time or a plugin paper's) adds its code as it
    is now: a record computed by an earlier version of it is never read.
    """
    return content_key(result_inputs(check, reps, root_seed, false_alarm))


def _code_change(what: str, old, new) -> list[str]:
    old, new = old or {}, new or {}
    labels = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
    files = [k for k in labels if not k.endswith(" (values)")]
    if files:
        return [f"{what} code changed ({', '.join(files)})"]
    if labels:
        names = ", ".join(k.removesuffix(" (values)") for k in labels)
        return [f"{what} module-level values changed ({names})"]
    return []


def _values_change(what: str, code_reasons: list, old, new) -> list[str]:
    """The values at the probe points changed, said where no change of code explains it."""
    if code_reasons or old == new:
        return []
    if old is None:  # a record from before values were fingerprinted
        return [f"the stored record has no fingerprint of {what} values"]
    return [f"{what} values changed at fixed probe arguments (its code did not)"]


def _outside_change(what: str, old: dict, new: dict, code: str, values: str) -> list[str]:
    """What changed of a bound or calibrator outside calcheck: code, else its values."""
    reasons = _code_change(what, old.get(code), new.get(code))
    return reasons + _values_change(what, reasons, old.get(values), new.get(values))


def changed_inputs(old: dict, new: dict) -> list[str]:
    """What differs between two :func:`result_inputs`, in words (empty if nothing does)."""
    if not isinstance(old, dict):
        return ["the stored record has no description of its inputs"]
    old_user = old.get("user_guarantee") or {}
    new_user = new.get("user_guarantee") or {}
    if not isinstance(old_user, dict):
        old_user = {}
    reasons = _outside_change("the bound's", old, new, "bound", "bound_values")
    reasons += _outside_change("the bound's", old_user, new_user, "bound", "bound_values")
    reasons += _outside_change(
        "the calibrator's", old_user, new_user, "calibrator", "calibrator_values"
    )
    for part in ("method", "event"):
        if old_user.get(part) != new_user.get(part):
            reasons.append(f"the guarantee's {part} changed")
    if old.get("code") != new.get("code"):
        reasons.append(f"calcheck's code changed ({old.get('code')} -> {new.get('code')})")
    for part in ("reps", "root_seed", "false_alarm"):
        if old.get(part) != new.get(part):
            reasons.append(f"{part} changed ({old.get(part)} -> {new.get(part)})")
    if old.get("check") != new.get("check"):
        reasons.append("the check's laws, grid, alphas or simulations changed")
    return reasons


#: The results a record may hold at its top: the check results (their modules import, and
#: so register with the codec, every result class they hold).
_RECORDED = {
    cls.__name__: cls
    for cls in (
        CheckResult,
        ExponentCheckResult,
        MeanZeroCheckResult,
        RateCheckResult,
        TradeoffCheckResult,
    )
}


def encode_result(result) -> str:
    """Exact JSON text of a check's result, in the one codec of calcheck's results.

    :func:`calcheck.theory_checks.results.export.encode`: floats exact, infinities and NaN
    tagged, numpy scalars with their dtype; the check is written as its record and put back
    by :func:`decode_result`.
    """
    if type(result).__name__ not in _RECORDED:
        raise ValueError(f"a record holds a check's result, got a {type(result).__name__}")
    return json.dumps(encode(result), allow_nan=False, separators=(",", ":"))


def decode_result(text: str, check):
    """The result encoded in ``text``, with ``check`` as its check.

    Raises
    ------
    ValueError
        For text that is not a recorded result of ``check`` (another type, another check's
        id, data that does not fit its class).
    """
    data = parse_json(text, "a result record")
    if not isinstance(data, dict) or data.get("__type__") not in _RECORDED:
        name = data.get("__type__") if isinstance(data, dict) else type(data).__name__
        raise ValueError(f"a record names an unknown result type {name!r}")
    result = decode(data, {check.id: check})
    if getattr(result, "check", None) is not check:
        raise ValueError(f"the record is not a result of {check.id!r}")
    return result
