"""Implied checks: a check whose claim is at least as strong as another's, on the same draws.

Two guarantee checks of one paper that read the same experiments at the same alphas with
the same replicates are compared structurally, cell by cell: X implies Y when both state the
same event on the same statistic (``check.metric``), X's radius is no larger in every cell
(for a lower bound, no smaller) and X's claimed coverage is no smaller. Then X consistent
implies Y consistent and Y violated implies X violated: Y's verdict adds nothing to X's. Y
is reported *implied by X* and counted apart, not as a second verified guarantee. The
successes are then compared as a check of the inclusion (every replicate where X's event
holds is one where Y's holds): a check that never fails is not implied by another on its
successes alone, and a smaller statistic against the same radius (the ECE against the
maximum error) is not an implication here (a different statistic). Events with randomness
of their own (a fresh test point, an auxiliary uniform) are compared only with events that
share it. Where the two are equivalent, the earlier check in the catalog order implies the
later one.

Rate checks (:mod:`~calcheck.theory_checks.series.rates`) that fit the same thresholds (the same
series of experiments, event and delta) are compared by their rates: if along every series
``h_Y / h_X`` is nondecreasing in the varied parameter, then ``n* <= c h_X`` for all theta
implies ``n* <= c' h_Y`` (a looser rate, e.g. klm19's VC remark B^2 log(B/delta) against
Lemma 4.3's B log(B/delta)): Y is implied by X.
"""

from __future__ import annotations

import numpy as np

from .roles import role_of

__all__ = ["implied_by"]


def _key(result):
    event = result.check.event
    # a check read back from JSON carries an EventRecord naming its event's class
    name = getattr(event, "name", None) if type(event).__name__ == "EventRecord" else None
    randomness = (name or type(event).__name__) if event.randomised else "none"
    cells = tuple((c.experiment, c.alpha, c.verdict.trials) for c in result.cells)
    return (result.check.guarantee.split(".")[0], randomness, cells)


def _implies(x, y) -> bool:
    """``x`` claims at least ``y`` in every cell, and every success of ``x`` is one of ``y``.

    Structural first: the same event and statistic, a radius (the cell's bound) no larger
    and a claimed coverage no smaller in every cell; the successes are then compared as a
    check of that (a check that never fails is not implied by another on its successes
    alone).
    """
    if x.check.metric != y.check.metric:
        return False  # structural: the same event on the same statistic, nothing less
    for cx, cy in zip(x.cells, y.cells, strict=True):
        if not cx.success_bits or not cy.success_bits:
            return False
        if cx.verdict.claimed < cy.verdict.claimed or not _no_weaker(x, cx.bound, cy.bound):
            return False
        if np.any(cx.successes() & ~cy.successes()):
            return False
    return True


def _no_weaker(x, bound_x, bound_y) -> bool:
    """Whether ``bound_x`` claims at least ``bound_y`` (a lower bound: no smaller)."""
    lower = x.check.metric.startswith(("atleast(", "exceeds("))
    return bool(bound_x >= bound_y) if lower else bool(bound_x <= bound_y)


def _rate_key(result):
    ch = result.check
    series = tuple(tuple(e.key for e in s.experiments) for s in ch.series)
    return (ch.guarantee.split(".")[0], series, repr(ch.event), ch.delta)


def _rate_implies(x, y) -> bool:
    """``h_y / h_x`` is nondecreasing along every series (theta increasing)."""
    for sx, sy in zip(x.series, y.series, strict=True):
        order = np.argsort(sx.theta)
        ratio = np.asarray(sy.h)[order] / np.asarray(sx.h)[order]
        if np.any(np.diff(ratio) < -1e-12 * np.abs(ratio[:-1])):
            return False
    return True


def _implications(results, kind, key, implies) -> dict:
    """Within groups of equal ``key``, the first earlier-or-stronger check implying each."""
    groups: dict = {}
    for order, r in enumerate(results):
        if getattr(r, "kind", "") != kind or role_of(r.check) != "guarantee":
            continue
        if kind != "coverage" or r.cells:
            groups.setdefault(key(r), []).append((order, r))
    out = {}
    for members in groups.values():
        for oy, y in members:
            for ox, x in members:
                if x is y or x.check.id in out:
                    continue
                # equivalent checks: only the earlier one implies the later one
                if implies(x, y) and not (ox > oy and implies(y, x)):
                    out[y.check.id] = x.check.id
                    break
    return out


def implied_by(results) -> dict:
    """Check id -> the id of the check that implies it (see the module docstring).

    Coverage checks of role ``guarantee`` whose cells carry their successes, and rate
    checks of role ``guarantee``, take part; a check is never implied by one that is itself
    implied.
    """
    out = _implications(results, "coverage", _key, _implies)
    out.update(_implications(results, "rate", _rate_key, _rate_implies))
    # a chain x -> y -> z is reported from its head: z implied by x
    for y, x in list(out.items()):
        while x in out:
            x = out[x]
        out[y] = x
    return out
