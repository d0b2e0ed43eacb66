"""The experiment protocol and typed outcome records (the D, M and E of ADEMP).

An :class:`Experiment` bundles a data-generating law, a method and the exact estimand. Its
``simulate(rng, reps)`` returns an :class:`Outcome`: a frozen record of per-replicate raw
sufficient statistics (arrays with the replicate axis first), never a verdict. The check
layer (:mod:`calcheck.theory_checks.checks.events`) turns an outcome, an event, a miscoverage alpha
and a bound into per-replicate successes, so **alpha and the bound never enter a simulation
key**: adding an alpha, or a negative control with another bound, reuses the stored data.

One documented exception: path-dependent events (time-uniform coverage of a stream,
:class:`~calcheck.simulations.experiments.gpr20.StreamExperiment`) cannot be reduced to a summary
that is independent of the radius, so that experiment evaluates its registered bound at
every time step and carries its alphas and radius in its key.

Each experiment declares
``symbols(outcome)``
    the quantities a bound may take (``n``, ``n_bins``, per-bin counts and variances...),
    named as in the bound functions' signatures;
``accepts``
    the law families it runs on (:mod:`calcheck.simulations.laws.base`);
``code_paths``
    the source files whose change invalidates its stored results (its code stamp).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..laws.base import Law
from ..provenance import ContentKeyed, code_fingerprint, code_stamp

__all__ = [
    "BinOutcome",
    "BlockOutcome",
    "Experiment",
    "Outcome",
    "foreign_source_hash",
    "ratio",
]

#: Replicates per SeedSequence child. Part of the seed protocol: changing it changes results.
BLOCK_REPS = 100

# Sources every experiment depends on (its own module is added by ``code_paths``).
_GENERIC_SOURCES = (
    "simulations/laws",
    "simulations/calibrators",
    "simulations/metrics",
    "simulations/validation.py",
    "simulations/provenance.py",
    "simulations/experiments/base.py",
)


def _jsonable(value):
    if isinstance(value, Law):
        return {"name": value.name, **value.spec()}
    if isinstance(value, tuple | list):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.integer | np.floating):
        return value.item()
    return value


@dataclass(frozen=True)
class Outcome:
    """Base of the typed outcome records: arrays with one row per replicate."""

    def arrays(self) -> dict:
        """The record as named arrays (the store's payload)."""
        return {f.name: np.asarray(getattr(self, f.name)) for f in dataclasses.fields(self)}

    @classmethod
    def from_arrays(cls, arrays: dict):
        """Rebuild a record from :meth:`arrays` (refuses missing or unknown fields)."""
        names = {f.name for f in dataclasses.fields(cls)}
        if set(arrays) != names:
            raise ValueError(f"{cls.__name__} needs fields {sorted(names)}, got {sorted(arrays)}")
        return cls(**arrays)

    @classmethod
    def concatenate(cls, parts):
        """Concatenate records along the replicate axis (block order)."""
        parts = list(parts)
        return cls(
            **{
                f.name: np.concatenate([getattr(p, f.name) for p in parts])
                for f in dataclasses.fields(cls)
            }
        )

    @property
    def reps(self) -> int:
        """Number of replicates."""
        return len(getattr(self, dataclasses.fields(self)[0].name))


@dataclass(frozen=True)
class BinOutcome(Outcome):
    """Exact per-output errors of fitted binning maps (arrays of shape ``(R, B)``).

    Attributes
    ----------
    error : ndarray
        ``|E[Y | h(X) = r] - r|`` of each bin's output (bins with equal outputs merged);
        NaN for outputs of zero mass (not in Range(h)).
    mass : ndarray
        Exact probability of each bin (rows sum to 1).
    test_u : ndarray (R, 2)
        Independent uniforms: column 0 draws a fresh test point's bin, column 1 turns an
        expectation into a Bernoulli outcome (``1{U >= Z}`` has mean ``1 - E[Z]``).
    n_empty : ndarray (R,)
        Bins without calibration points (reported; they predict their midpoint).
    """

    error: np.ndarray
    mass: np.ndarray
    test_u: np.ndarray
    n_empty: np.ndarray

    @property
    def max_error(self) -> np.ndarray:
        """Conditional statistic ``max_{r in Range(h)} |E[Y | h(X) = r] - r|``."""
        return np.nanmax(np.where(self.mass > 0, self.error, np.nan), axis=1)

    @property
    def l1_ece(self) -> np.ndarray:
        """``sum_b w_b err_b`` (the l1-ECE, e.g. the top-label ECE)."""
        return np.sum(self.mass * np.nan_to_num(self.error), axis=1)

    @property
    def l2_ece(self) -> np.ndarray:
        """``sqrt(sum_b w_b err_b^2)``; it bounds every lp-ECE with p <= 2."""
        return np.sqrt(np.sum(self.mass * np.nan_to_num(self.error) ** 2, axis=1))

    @property
    def l2_ece_sq(self) -> np.ndarray:
        """``sum_b w_b err_b^2``, the squared l2-ECE (gr21 A9's statistic)."""
        return np.sum(self.mass * np.nan_to_num(self.error) ** 2, axis=1)

    @property
    def test_point_error(self) -> np.ndarray:
        """Error at a fresh test point, its bin drawn with the exact masses (``test_u[:, 0]``)."""
        cum = np.cumsum(self.mass, axis=1)
        cum /= cum[:, -1:]
        idx = np.minimum((cum < self.test_u[:, :1]).sum(axis=1), self.mass.shape[1] - 1)
        return np.nan_to_num(np.take_along_axis(self.error, idx[:, None], axis=1)[:, 0])

    def marginal_probability(self, eps) -> np.ndarray:
        """Exact ``P(test error <= eps | fitted map)`` per replicate (Rao-Blackwellised)."""
        ok = np.nan_to_num(self.error, nan=np.inf) <= np.asarray(eps)[..., None]
        return np.sum(self.mass * ok, axis=1)


@dataclass(frozen=True)
class BlockOutcome(Outcome):
    """Outcome of a path-dependent experiment (the documented exception): per alpha.

    Attributes
    ----------
    ratio : ndarray (R, A)
        Worst error / radius over the path (success iff <= 1).
    radius : ndarray (R, A)
        Radius at the end of the path (reported).
    """

    ratio: np.ndarray
    radius: np.ndarray


def foreign_source_hash(obj) -> str | None:
    """Hash (16 hex) of code outside calcheck: see ``provenance.code_fingerprint``.

    None for calcheck's own code (its code stamps cover it). Keys stored results of code a
    user or a plugin paper brings (its module's source, the user modules it uses and their
    module-level values), so that editing it never reuses stale results.
    """
    return code_fingerprint(obj)


def ratio(err, radius):
    """``err / radius`` with 0/0 = 0, x/0 = inf and x/inf = 0 (a zero radius covers only 0)."""
    err = np.asarray(err, dtype=float)
    radius = np.asarray(radius, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(
            radius > 0, err / np.where(radius > 0, radius, 1.0), np.where(err > 0, np.inf, 0.0)
        )
    return np.where(np.isinf(radius), 0.0, r)


@dataclass(frozen=True)
class Experiment(ContentKeyed):
    """Base class: description, content key, code stamp and reporting hooks."""

    #: Law families the experiment runs on (empty: the experiment draws its own law).
    accepts: ClassVar[tuple[str, ...]] = ()
    #: Outcome record type of :meth:`simulate`.
    outcome_type: ClassVar[type] = Outcome

    def description(self) -> dict:
        """JSON-able content: class, fields and the block size (the seed protocol)."""
        fields = {f.name: _jsonable(getattr(self, f.name)) for f in dataclasses.fields(self)}
        return {"experiment": type(self).__name__, **fields, "block_reps": BLOCK_REPS}

    def _check_law(self, law):
        if self.accepts and (not isinstance(law, Law) or law.family not in self.accepts):
            family = getattr(law, "family", type(law).__name__)
            raise ValueError(
                f"{type(self).__name__} runs on laws of family "
                f"{' or '.join(self.accepts)}, got {family!r} ({law!r})"
            )

    @classmethod
    def code_paths(cls) -> tuple[str, ...]:
        """Sources whose change invalidates stored outcomes of this experiment.

        Paths inside calcheck; an experiment defined outside it (a plugin paper's) adds its
        own module's source in :attr:`code_stamp`.
        """
        if cls.__module__.split(".")[0] != "calcheck":
            return _GENERIC_SOURCES
        # ``calcheck.simulations.experiments.binning`` -> ``simulations/experiments/binning.py``
        module = cls.__module__.removeprefix("calcheck.").replace(".", "/") + ".py"
        return (*_GENERIC_SOURCES, module)

    @property
    def code_stamp(self) -> str:
        """Package version + hash of :meth:`code_paths` (keys the stored blocks)."""
        stamp = code_stamp(*self.code_paths())
        outside = foreign_source_hash(type(self))
        return stamp if outside is None else f"{stamp}+{outside}"

    def symbols(self, outcome) -> dict:
        """Quantities a bound may take, named as in the bound functions."""
        return {}

    def statistic(self, outcome, name: str, alpha=None):
        """The named per-replicate statistic an event compares with a bound.

        By default an attribute of the outcome; experiments whose statistic depends on
        alpha through the method (an interval built at level alpha) override this.
        """
        try:
            return getattr(outcome, name)
        except AttributeError:
            raise ValueError(f"{type(outcome).__name__} has no statistic {name!r}") from None

    # reporting hooks (overridden where the names differ)
    @property
    def law_name(self) -> str:
        """Name of the law in reports."""
        return self.law.name

    @property
    def n_total(self) -> int:
        """Calibration points in reports."""
        return int(self.n)

    @property
    def bins(self) -> int:
        """Bins in reports."""
        return int(self.n_bins)

    @property
    def cost(self) -> int:
        """Simulated points per replicate (sizes the parallel tasks)."""
        return self.n_total

    @property
    def memory_points(self) -> int:
        """Float64 entries per replicate held at once (the memory estimate's ``n x reps``).

        ``cost`` where it counts points; an experiment whose ``cost`` is a time weight
        (several fits per point, a grid simulated one size at a time) says its own.
        """
        return self.cost

    def label(self) -> str:
        """Readable one-line identification."""
        return f"{type(self).__name__}/{self.law_name}/n={self.n_total}/B={self.bins}"
