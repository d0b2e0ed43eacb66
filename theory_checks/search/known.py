"""Known hard laws of a search: the worst constant eta, the certificate, eta = 1/2.

Where a guarantee's event has an exact route (uniform-mass binning,
:data:`~calcheck.theory_checks.catalog.exact_routes.EXACT_WORST_CASE`), the exact failure
rate of its worst constant eta is known, and the certified coverage bounds every law's from
above (:func:`analytic_reference`). Whatever the guarantee, a law whose eta
is 1/2 (the largest label variance) is where Hoeffding-type bounds are tightest, so the
search compares the law it found with the family's known hard points (:func:`known_points`:
every eta coordinate at 1/2, and at the exact worst constant eta) and keeps the worst
(:func:`keep_the_worst`).

Why: the search maximises a Monte Carlo criterion on a few hundred common-random-number
replicates. Where the criterion is nearly flat in theta (a loose bound's tightness, or the
failure rate near eta = 1/2), the maximum over hundreds of candidates is decided by the
noise of those replicates: at n = 1000, B = 10 the quick search of gr21 Theorem 3's
tightness on ``beta_piecewise`` (k = 1, seed 0, ``known=False``; measured 2026-11-27)
returned eta = 0.36, whose claimed-level ratio quantile was 0.77 on the
search's replicates (eta = 1/2: 0.71) and 0.74 on a fresh seed, below eta near 1/2 (0.79
on 4000 replicates: the larger label variance). So the comparison is made on fresh random
numbers (a selection stream of its own, neither the search's nor the re-check's), with
``fresh_reps`` replicates and the refinement's objective (the failure rate with the labels
integrated out where that applies; otherwise the search criterion).
"""

from __future__ import annotations

import dataclasses
import logging

import numpy as np

from calcheck.simulations.certified_coverage import certified_coverage
from calcheck.simulations.conditional_coverage import worst_constant_eta
from calcheck.simulations.exact_coverage import exact_coverage
from calcheck.simulations.provenance import generator
from calcheck.simulations.search import evaluate_batch

from ..running.exact import exact_worst_case, merged_outputs
from .refine import eta_groups, objective_name, refinement_objective

__all__ = [
    "analytic_reference",
    "keep_the_worst",
    "known_points",
    "selection_seed",
]

logger = logging.getLogger(__name__)


def analytic_reference(guarantee: str, bound, grid: dict, alpha: float):
    """Exact failure rate of the worst constant eta and the certificate, or None.

    The failure rate at constant eta is exact (product binomials, gr21 Lemma 2); its largest
    value over eta is near 1/2 but not always at it (the binomial cut-offs cross integers:
    :func:`calcheck.simulations.conditional_coverage.worst_constant_eta`). Both are returned:
    ``failure`` (the worst constant eta, ``eta``) and ``failure_at_half``, with the claim
    (``claimed = 1 - alpha``) and whether the exact coverage reaches it (``holds``). The
    worst constant eta is a law (any score law with that eta), so ``holds = False`` is a
    violation found exactly: ``SearchResult.found`` says so
    (:mod:`calcheck.theory_checks.checks.exact_evidence`: exact evidence first). No constant eta is
    known to be the worst law; ``certified_coverage`` bounds the coverage of **every** law
    from below (:mod:`calcheck.simulations.certified_coverage`): where it reaches the claim
    (``certified_holds``) no search can find a violation at these sizes.
    """
    worst = exact_worst_case(guarantee)
    if worst is None or set(grid) != {"n", "n_bins"}:
        return None
    scheme, event = worst
    n, b = int(grid["n"]), int(grid["n_bins"])
    eps = float(bound.radius(guarantee, {"n": n, "n_bins": b, "delta": 0.0}, alpha))
    half = 1.0 - float(exact_coverage(n, b, 0.5, eps, event=event, scheme=scheme))
    eta, failure = worst_constant_eta(n, b, eps, event=event, scheme=scheme)
    claimed = 1.0 - float(alpha)
    pooled = merged_outputs(guarantee)
    cert = certified_coverage(
        n, b, eps, event=event, scheme=scheme, pooled=pooled, threshold=claimed
    ).value
    return {
        "law": f"constant eta = {eta:g} (any score law; eta = 1/2: {half:.4f})",
        "eps": eps,
        "eta": eta,
        "coverage": 1.0 - failure,
        "failure": failure,
        "failure_at_half": half,
        "scheme": scheme,
        "event": event,
        "claimed": claimed,
        "holds": bool(1.0 - failure >= claimed),
        "certified_coverage": cert,
        "certified_holds": bool(cert >= claimed),
    }


def known_points(family, reference=None) -> list:
    """The family's known hard points: ``(label, {coordinate: value})`` to set in a law.

    Every eta coordinate of the family (:func:`~calcheck.theory_checks.search.refine.eta_groups`:
    ``eta_<j>``, and both ends ``lo_<j>``, ``hi_<j>`` of a linear eta) at 1/2, and, where
    ``reference`` (:func:`analytic_reference`) names a worst constant eta other than 1/2,
    at that eta. The other coordinates (positions, weights) keep the values of the law
    found. A family without eta coordinates has none.
    """
    coords = sorted({c for group, _ in eta_groups(family.names).values() for c in group})
    if not coords:
        return []
    values = [0.5]
    if reference is not None and float(reference["eta"]) != 0.5:
        values.append(float(reference["eta"]))
    lo, hi = np.asarray(family.lower), np.asarray(family.upper)
    out = []
    for value in values:
        if all(lo[c] <= value <= hi[c] for c in coords):
            out.append((f"eta = {value:g}", dict.fromkeys(coords, value)))
    return out


def selection_seed(seed: int) -> int:
    """The root of the selection stream (derived from the search seed; not the re-check's)."""
    return int(generator(seed, "calcheck.search.select").integers(2**62))


def keep_the_worst(criterion, theta, known, budget, *, seed, n_jobs=1, backend="loky"):
    """The worst of the law found (``theta``) and the known points, on a selection stream.

    Parameters
    ----------
    criterion : CheckCriterion
        The search's criterion.
    theta : tuple of float
        The law found (differential evolution and refinement).
    known : list
        :func:`known_points` of the family.
    budget : SearchBudget
        ``fresh_reps`` replicates per law compared.
    seed : int
        The search seed (:func:`selection_seed` derives the stream).

    Returns
    -------
    theta : tuple of float
        The law found, or the known point that is worse on the selection stream.
    stage : dict or None
        ``objective``, ``evaluations`` (1 + the known points), ``start_value`` (the law
        found), ``value`` (the worst) and ``kept`` (the label of the known point kept, or
        None), in the form of a refinement stage; None where the family has no known points.
    """
    if not known:
        return tuple(float(x) for x in theta), None
    lo, hi = criterion.family.lower, criterion.family.upper
    rows = [np.asarray(theta, dtype=float)]
    for _, values in known:
        row = rows[0].copy()
        for c, v in values.items():
            row[c] = min(max(v, lo[c]), hi[c])
        rows.append(row)
    on_stream = dataclasses.replace(
        criterion, crn_seed=selection_seed(seed), reps=int(budget.fresh_reps)
    )
    objective = refinement_objective(on_stream, budget.fresh_reps)
    values = evaluate_batch(objective, rows, n_jobs=n_jobs, backend=backend)
    clean = np.where(np.isnan(values), -np.inf, values)
    best = int(np.argmax(clean))  # the law found wins ties
    labels = ", ".join(label for label, _ in known)
    logger.info(
        "%s: the law found %.4g, known laws (%s) %s on %d replicates of a selection stream",
        objective_name(objective),
        values[0],
        labels,
        ", ".join(f"{v:.4g}" for v in values[1:]),
        budget.fresh_reps,
    )
    stage = {
        "objective": f"{objective_name(objective)} vs known laws ({labels}) on "
        f"{budget.fresh_reps} fresh replicates",
        "evaluations": len(rows),
        "start_value": float(values[0]),
        "value": float(values[best]),
        "kept": known[best - 1][0] if best else None,
    }
    return tuple(float(x) for x in rows[best]), stage
