"""Catalog helpers that belong to no one paper: binning experiments, a wrong-n control, checks.

Paper modules import only generic modules and their own paper's (``tests/test_layering.py``),
so what two papers' catalogs share lives here.
"""

from __future__ import annotations

from calcheck.simulations.experiments.binning import BinningExperiment

from ..checks.check import Check
from ..checks.events import BoundRule, substitute

__all__ = ["binning_experiments", "make_check", "n_times_bins"]

# A module-level lambda, not a named function: a check's repr and its record's description
# name a callable by its qualified name, and this one stays ``<lambda>`` as it was when each
# paper module defined its own.
_N_TIMES_BINS = {"n": lambda s: s["n"] * s["n_bins"]}


def binning_experiments(calibrator, laws, grid) -> tuple:
    """One :class:`BinningExperiment` of ``calibrator`` per law and ``(n, n_bins)`` of ``grid``.

    Parameters
    ----------
    calibrator : dict
        The binning's specification (``{"name": ..., ...}``).
    laws : sequence of Law
        Laws in order; each is crossed with every grid point.
    grid : sequence of (int, int)
        ``(n, n_bins)`` pairs.

    Returns
    -------
    tuple of BinningExperiment
        Law-major: every grid point of the first law, then of the second, ...
    """
    return tuple(
        BinningExperiment(calibrator, law, int(n), int(b)) for law in laws for n, b in grid
    )


def n_times_bins(name: str, description: str) -> BoundRule:
    """A negative control: the stated bound with ``n B`` in place of ``n``.

    As if every one of the B bins held all n points: the radius shrinks by sqrt(B) or more.
    """
    return substitute(name, description, **_N_TIMES_BINS)


def make_check(alphas, check_id, guarantee, experiments, event, claim="1-alpha", **fields) -> Check:
    """A :class:`~calcheck.theory_checks.checks.check.Check` at a budget's ``alphas``.

    Parameters
    ----------
    alphas : tuple of float
        The budget's miscoverages.
    check_id, guarantee : str
        The check's id and its registered guarantee.
    experiments : iterable of Experiment
        Stored as a tuple.
    event : Event
    claim : str
        Key of :data:`~calcheck.theory_checks.checks.events.CLAIMS`.
    **fields
        The check's other fields by name (``expect``, ``bound``, ``description``, ``role``).
    """
    return Check(check_id, guarantee, tuple(experiments), event, alphas, claim, **fields)
