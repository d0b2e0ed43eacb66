"""A conditional mean given by any vectorised callable, with integrals to a stated tolerance.

:class:`CallableMean` stands where a :class:`~calcheck.simulations.laws.eta.ConditionalMean`
stands in a :class:`~calcheck.simulations.laws.binary.BinaryLaw`
(:meth:`BinaryLaw.from_callable <calcheck.simulations.laws.binary.BinaryLaw.from_callable>`):
``eta(s) = E[Y | S = s]`` is the user's function, checked at construction on a probe grid.

Exact truth
-----------
An atom ``a`` of the score law contributes ``eta(a)`` exactly. On the continuous part,
``int_lo^hi eta dF`` is computed in quantile space, ``int_{F(lo)}^{F(hi)} eta(F^{-1}(q)) dq``,
by tanh-sinh (double-exponential) quadrature, adaptively:

1. On each interval of probability ``w`` the rule with step ``h = 1/16`` on [-3.2, 3.2]
   (103 nodes) and its every-other-node rule with step ``2h`` are both evaluated; their
   difference estimates the error (conservatively for an integrand analytic on the
   interval: the rule's error roughly squares when the step halves).
2. An interval whose estimate exceeds :data:`TOLERANCE` ``* w`` is halved in probability,
   up to :data:`MAX_HALVINGS` times. Every accepted piece is thus within
   ``TOLERANCE * w`` by the estimate.
3. A piece still not accepted after :data:`MAX_HALVINGS` halvings (a jump of eta inside
   it) keeps its step-``h`` value; its error is at most its probability (eta lies in
   [0, 1]), i.e. at most ``2^-MAX_HALVINGS`` of its interval's.

So ``E[Y | S in bin]`` is exact to about ``1e-10`` for smooth eta, and to ``2^-40`` per jump
of eta in the bin otherwise. The truncation of the rule at ``|t| = 3.2`` costs below 1e-16.

Content key
-----------
:meth:`CallableMean.spec` names the function (``module:qualname``), hashes its code with
:func:`~calcheck.simulations.provenance.code_fingerprint` (the source of its module and the
user modules it uses, or its code object where it has no file; closures and defaults
included) and hashes its values on the probe grid: editing the function (and making the law
again) changes the keys of every result simulated with it. The code's description is computed
when the law is made, so that worker processes use the parent's; the values are computed
each time the law is described, because an eta that reads a file on each call runs with the
file as it is now: after the file changes, the same law object has another key (its results
are recomputed, not read back). A copy sent to a worker process keys and seeds its blocks
with the values its sender described when sending it, as the parent does (a last-bit
difference of another machine's ``np.exp`` changes no key); where eta gives other values
there (beyond :data:`SENT_RTOL`: a file it reads differs, or changed since a law was pickled),
describing the copy raises a ValueError that says so.
"""

from __future__ import annotations

import functools
import hashlib
import json
import types
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ..provenance import code_fingerprint
from .quadrature import _TS_NODES, _TS_WEIGHTS

__all__ = ["MAX_HALVINGS", "PROBE", "SENT_RTOL", "TOLERANCE", "CallableMean"]

#: Accepted error of an interval's integral, relative to its probability (module doc).
TOLERANCE = 1e-10
#: Halvings of an interval before its leftover piece is accepted with error <= its mass.
MAX_HALVINGS = 40
#: Scores the function is checked on at construction (and whose values enter its key).
PROBE = np.concatenate([np.linspace(0.0, 1.0, 1025), [1e-12, 1 - 1e-12, 1 / 3, 2 / 3]])
#: Relative difference of eta's probe values between a sent copy and its sender that is
#: taken as rounding (another machine's vectorised math), not as another eta.
SENT_RTOL = 1e-9
# Live intervals per integrated interval (plus a floor) before eta is refused as too rough.
_MAX_PIECES_PER_INTERVAL = 64
_EVEN = np.arange(_TS_NODES.size) % 2 == 0  # the step-1/8 rule's nodes (t = -3.2 + j / 8)


def _name_of(function) -> str:
    target = getattr(function, "func", function)  # functools.partial
    module = getattr(target, "__module__", None) or type(target).__module__
    qualname = getattr(target, "__qualname__", None) or type(target).__qualname__
    return f"{module}:{qualname}"


def _state_of(function) -> Any:
    """JSON-able state a callable carries beyond its code (a partial's or an object's values)."""
    if isinstance(function, types.FunctionType | types.BuiltinFunctionType):
        return None
    if isinstance(function, functools.partial):
        state = {"args": list(function.args), "keywords": dict(function.keywords)}
    else:
        state = (
            {k: v for k, v in sorted(vars(function).items()) if not k.startswith("_")}
            if (hasattr(function, "__dict__"))
            else {}
        )
    return json.loads(json.dumps(state, default=lambda v: np.asarray(v).tolist()))


def _values_hash(values: np.ndarray) -> str:
    """The key's hash of eta's values on the probe grid (16 hex digits)."""
    return hashlib.sha256(values.tobytes()).hexdigest()[:16]


@dataclass(frozen=True, eq=False)
class CallableMean:
    """``eta(s) = E[Y | S = s]`` from a vectorised callable (see the module doc).

    Parameters
    ----------
    function : callable
        ``function(s)`` for a 1-d float array ``s`` of scores in [0, 1] returns an array of
        the same shape with values in [0, 1]; deterministic (no randomness of its own).

    Raises
    ------
    ValueError
        Where ``function`` is not callable, raises on the probe grid, returns another shape,
        NaN or a value outside [0, 1], or other values on a second call (naming the score and
        echoing the value).

    Examples
    --------
    >>> import numpy as np
    >>> from calcheck.simulations.laws import ScoreLaw
    >>> from calcheck.simulations.laws.callable_eta import CallableMean
    >>> eta = CallableMean(np.square)
    >>> round(float(eta.integral(0.0, 1.0, ScoreLaw())), 12)  # int_0^1 s^2 ds = 1/3
    0.333333333333
    """

    function: Any
    kind: ClassVar[str] = "callable"
    params: dict = field(default_factory=dict, init=False)

    def __post_init__(self):
        if not callable(self.function):
            raise ValueError(
                f"eta must be a callable eta(s) -> values in [0, 1], got "
                f"{type(self.function).__name__} {self.function!r:.80}"
            )
        name = _name_of(self.function)
        first = self._probe(name)
        second = self._probe(name)
        differ = first != second
        if differ.any():
            i = int(np.flatnonzero(differ)[0])
            raise ValueError(
                f"eta {name} must be deterministic: two calls give {float(first[i])!r} and "
                f"{float(second[i])!r} at score {float(PROBE[i])!r}; draw any randomness once, "
                "outside eta"
            )
        try:
            state = _state_of(self.function)
        except (TypeError, ValueError):
            raise ValueError(
                f"eta {name} carries state calcheck cannot describe (its attributes are not "
                "numbers, strings or arrays); pass a function (module level or a closure)"
            ) from None
        # Described once, here: a worker process may not find the source of a function
        # defined in a script or notebook, and the key must be the one the parent computed.
        object.__setattr__(
            self,
            "_spec",
            {
                "kind": self.kind,
                "function": name,
                "code": code_fingerprint(getattr(self.function, "func", self.function)),
                "state": state,
                "probe_values": _values_hash(first),
            },
        )
        object.__setattr__(self, "_received", False)  # True in a copy sent to a process
        object.__setattr__(self, "_sent_values", None)  # there: its sender's, until compared

    def __getstate__(self) -> dict:
        # what a worker receives: the values now, by which it keys and seeds its blocks as
        # the parent does (another machine may round np.exp's last bit otherwise); kept, to
        # be compared with its own once (spec)
        values = self._probe(_name_of(self.function))
        spec = {**self._spec, "probe_values": _values_hash(values)}
        return {**self.__dict__, "_spec": spec, "_received": True, "_sent_values": values}

    def __copy__(self) -> CallableMean:
        return self  # immutable; a copy in this process must stay live (see __getstate__)

    def __deepcopy__(self, memo) -> CallableMean:
        return self

    def _probe(self, name: str) -> np.ndarray:
        s = PROBE.copy()
        try:
            values = self._checked(s, name)
        except ValueError:
            raise
        except Exception as exc:  # the user's code: one line naming it
            raise ValueError(
                f"eta {name} raised {type(exc).__name__}: {exc} when called on an array of "
                f"{s.size} scores in [0, 1]; eta must take a numpy array (vectorised)"
            ) from None
        return values

    def _checked(self, s: np.ndarray, name: str | None = None) -> np.ndarray:
        """``function(s)`` of a 1-d array ``s``; refuses other shapes, NaN and values off [0, 1]."""
        out = self.function(s)
        try:
            values = np.asarray(out, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(
                f"eta {name or _name_of(self.function)} must return numbers, got "
                f"{type(out).__name__} {out!r:.80}"
            ) from None
        if values.shape != s.shape:
            raise ValueError(
                f"eta {name or _name_of(self.function)} must return one value per score "
                f"(shape {s.shape}), got shape {values.shape}; write it with numpy operations "
                "(e.g. np.full_like(s, 0.5) for a constant)"
            )
        bad = ~((values >= 0.0) & (values <= 1.0))  # NaN is bad too
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"eta {name or _name_of(self.function)} must return values in [0, 1] (no NaN), "
                f"got {float(values[i])!r} at score {float(s[i])!r}"
            )
        return values

    def __call__(self, s):
        """Evaluate eta at scores ``s`` (any shape; the function sees a 1-d array)."""
        s = np.asarray(s, dtype=float)
        return self._checked(s.reshape(-1)).reshape(s.shape)

    def range(self) -> tuple[float, float]:
        """Smallest and largest value on the probe grid (eta is checked to lie in [0, 1])."""
        values = self(PROBE)
        return float(values.min()), float(values.max())

    def integral(self, lo, hi, scores):
        """``int_lo^hi eta dF`` over the continuous part of ``scores`` (normalised F)."""
        lo = np.asarray(lo, dtype=float)
        hi = np.maximum(np.asarray(hi, dtype=float), lo)
        return self.quantile_integral(scores.cdf(lo), scores.cdf(hi), scores)

    def _chained_integral(self, edges, cdf, scores):
        """:meth:`integral` over ``[edges[:, b], edges[:, b + 1]]`` given ``cdf`` of the edges."""
        return self.quantile_integral(cdf[:, :-1], cdf[:, 1:], scores)

    def quantile_integral(self, q_lo, q_hi, scores):
        """``int_{q_lo}^{q_hi} eta(F^{-1}(q)) dq`` to :data:`TOLERANCE` (module doc)."""
        q_lo, q_hi = np.broadcast_arrays(np.asarray(q_lo, float), np.asarray(q_hi, float))
        shape = q_lo.shape
        lo, hi = q_lo.reshape(-1).copy(), np.maximum(q_hi.reshape(-1), q_lo.reshape(-1))
        owner = np.arange(lo.size)
        total = np.zeros(lo.size)
        limit = _MAX_PIECES_PER_INTERVAL * lo.size + 1024
        for depth in range(MAX_HALVINGS + 1):
            if lo.size == 0:
                break
            half = (hi - lo) / 2
            nodes = np.clip((lo + half)[:, None] + half[:, None] * _TS_NODES, 0.0, 1.0)
            values = self(scores.ppf(nodes))
            weighted = values * _TS_WEIGHTS
            fine = weighted.sum(axis=1) * half
            coarse = 2.0 * weighted[:, _EVEN].sum(axis=1) * half
            done = np.abs(fine - coarse) <= TOLERANCE * (hi - lo)
            if depth == MAX_HALVINGS:
                done[:] = True  # error <= the piece's probability (module doc, step 3)
            np.add.at(total, owner[done], fine[done])
            lo, hi, owner = lo[~done], hi[~done], owner[~done]
            if 2 * lo.size > limit:
                raise ValueError(
                    f"eta {_name_of(self.function)} is too rough to integrate to "
                    f"{TOLERANCE:g}: {2 * lo.size} pieces after {depth + 1} halvings; "
                    "smooth it, or give it as a piecewise function with few jumps"
                )
            mid = lo + (hi - lo) / 2
            lo, hi, owner = np.concatenate([lo, mid]), np.concatenate([mid, hi]), np.tile(owner, 2)
        return total.reshape(shape)

    def spec(self) -> dict:
        """JSON-able content: the function's name, code hash, state and values on the probe.

        The name, code and state as they were when the law was made (the function object
        then is the one the law runs); ``probe_values`` as eta gives them now (in a copy sent
        to a worker, as its sender gave them): eta may read a file on each call.

        Raises
        ------
        ValueError
            Where eta now raises on the probe grid or returns values off [0, 1], or, in a
            copy sent to another process, gives values other than its sender's (one line
            naming it).
        """
        name = _name_of(self.function)
        if not self._received:
            return {**self._spec, "probe_values": _values_hash(self._probe(name))}
        if self._sent_values is not None:  # the first description of a copy received
            here, sent = self._probe(name), self._sent_values
            differ = ~np.isclose(here, sent, rtol=SENT_RTOL, atol=SENT_RTOL)
            if differ.any():
                i = int(np.flatnonzero(differ)[0])
                raise ValueError(
                    f"eta {name} gives {float(here[i])!r} at score {float(PROBE[i])!r} in this "
                    f"process and gave {float(sent[i])!r} where the law was sent from (a file "
                    "it reads differs here, or changed since the law was pickled): make the "
                    "law again where it runs"
                )
            object.__setattr__(self, "_sent_values", None)  # its sender's values hold here
        return dict(self._spec)

    def __repr__(self) -> str:
        return f"CallableMean({_name_of(self.function)})"
