"""Coverage checks' evidence: their cells, the same-path mutant, JSON rows and the picture.

The cell type of :class:`~calcheck.theory_checks.checks.check.CheckResult` and what the check
protocol (:mod:`~calcheck.theory_checks.results.protocol`) asks of a coverage check beyond its
verdict: the mutant computed on the same outcomes (the stated bound tightened by each of
:data:`~calcheck.theory_checks.checks.events.MUTANT_FACTORS`), each cell as JSON, and the coverage
plot.
"""

from __future__ import annotations

import base64
import dataclasses
import functools
from dataclasses import dataclass

import numpy as np
from scipy import stats

from ..results.export import Exportable
from ..results.power import detectable_factor, mean_detectable_factor, no_power, quantile_interval
from ..results.protocol import Mutant, json_number
from ..results.verdicts import CoverageVerdict, coverage_verdict, critical_count
from .events import MUTANT_FACTORS, MeanAtMost
from .exact_evidence import CROSS_CHECK_LEVEL

__all__ = [
    "CellResult",
    "cell_dict",
    "cell_label",
    "cell_result",
    "coverage_mutant",
    "mutant_counts",
    "plot_cells",
]


@dataclass(frozen=True)
class CellResult(Exportable):
    """Verdict of one (experiment, alpha) cell of a check.

    ``ratio_quantile`` is the claimed-level quantile of the per-replicate ratio (error /
    bound, or bound / statistic for lower-bound events; the mean for expectations) and
    ``tightness`` its inverse: how many times larger the bound is than needed here.
    ``detectable_factor`` k: this cell would flag the bound multiplied by any factor below
    k, at this budget (None where the event is not "error <= bound").
    ``vacuous_replicates``: replicates in which the event holds by construction (an infinite
    bound, or one that reaches the statistic's range, e.g. a radius >= 1 on an error in
    [0, 1]); ``no_power`` says why the cell cannot flag anything whatever the data ("" when
    it can: see :attr:`has_power`). ``exact_coverage`` (with ``exact_route``) is the cell's
    exact probability where calcheck can compute one: it decides (:attr:`violated`).
    ``certified_coverage`` (with ``certified_route``) is a lower bound on the event's
    probability over every law at the cell's sizes
    (:mod:`calcheck.simulations.certified_coverage`); at or above the claim it proves the cell.
    The critical factor f* (the smallest multiple of the bound that still reaches the claim,
    :mod:`~calcheck.theory_checks.running.tightness`) is ``ratio_quantile`` on the replicates, with
    ``critical_factor_ci`` its 95% order-statistic interval; ``exact_factor`` on this law
    and ``certified_factor`` over every law at these sizes where those routes exist.
    ``success_bits`` holds the per-replicate successes, packed (:meth:`successes`).
    """

    law: str
    n: int
    n_bins: int
    alpha: float | None
    bound: float
    verdict: CoverageVerdict
    estimate: float
    ratio_quantile: float
    tightness: float
    empty_bins: int
    experiment: str = ""
    detectable_factor: float | None = None
    vacuous_replicates: int = 0
    no_power: str = ""
    exact_coverage: float | None = None
    exact_route: str = ""
    success_bits: str = ""
    certified_coverage: float | None = None
    certified_route: str = ""
    critical_factor_ci: tuple | None = None
    exact_factor: float | None = None
    certified_factor: float | None = None

    @property
    def violated(self) -> bool:
        """Whether the cell is flagged: by its exact coverage where known, else by its test.

        A certificate at or above the claim decides first (it holds for every law), then
        exact evidence (:mod:`~calcheck.theory_checks.checks.exact_evidence`): the Monte Carlo test
        stays beside them as a cross-check.
        """
        if self.certified_coverage is not None and self.certified_coverage >= self.verdict.claimed:
            return False  # proved for every law at these sizes
        if self.exact_coverage is not None:
            return self.exact_coverage < self.verdict.claimed
        return self.verdict.violated

    @property
    def has_power(self) -> bool:
        """Whether some outcome of the replicates would flag this cell."""
        return not self.no_power

    def decided_text(self) -> str:
        """What decided the cell beyond its test, in words ("" for the test alone)."""
        cert = self.certified_coverage
        if cert is not None and cert >= self.verdict.claimed:
            return f"certified over every law {cert:.4f} decides ({self.certified_route})"
        if self.exact_coverage is not None:
            return f"exact coverage {self.exact_coverage:.4f} decides ({self.exact_route})"
        return ""

    def successes(self) -> np.ndarray:
        """The per-replicate successes (kept packed: implied checks compare them)."""
        bits = np.frombuffer(base64.b64decode(self.success_bits), dtype=np.uint8)
        return np.unpackbits(bits, count=self.verdict.trials).astype(bool)

    def check_invariants(self) -> None:
        """Raise ValueError unless the cell's numbers agree with each other and its verdict.

        Called on a cell read from data (:func:`~calcheck.theory_checks.results.export.decode`,
        its verdict already checked), never on one computed: the sizes and counts lie in
        their ranges, the packed successes count the verdict's successes, exact and
        certified coverages are probabilities that agree with the replicates as
        :func:`~calcheck.theory_checks.checks.exact_evidence.cross_check` demanded (a
        certificate cannot pass a cell its replicates fail), and a cell said to have power
        has it (a forged ``no_power=""`` would turn a vacuous check into a passed one).
        """
        v = self.verdict
        if self.n < 0 or self.n_bins < 0 or self.empty_bins < 0:
            raise ValueError(
                f"need n, n_bins and empty_bins >= 0, got {self.n!r}, "
                f"{self.n_bins!r}, {self.empty_bins!r}"
            )
        if self.alpha is not None and not 0 < self.alpha < 1:
            raise ValueError(f"alpha must lie in (0, 1) or be None, got {self.alpha!r}")
        if not 0 <= self.vacuous_replicates <= v.trials:
            raise ValueError(
                f"vacuous_replicates must lie in [0, trials={v.trials}], got "
                f"{self.vacuous_replicates!r}"
            )
        if self.success_bits:
            _check_packed_successes(self.success_bits, v.successes, v.trials)
        for name, lower_bound in (("exact_coverage", False), ("certified_coverage", True)):
            value = getattr(self, name)
            if value is None:
                continue
            if not 0 <= value <= 1:  # NaN fails too
                raise ValueError(f"{name} must lie in [0, 1] or be None, got {value!r}")
            if _beyond_replicates(value, v.successes, v.trials, lower_bound):
                raise ValueError(
                    f"{name} {value!r} disagrees with {v.successes} of {v.trials} replicates "
                    f"(beyond their {1 - CROSS_CHECK_LEVEL:.6g} Clopper-Pearson interval)"
                )
            if value >= 1 and not self.no_power:
                raise ValueError(f"{name} is 1, yet no_power is empty (the claim cannot fail)")
        ci = self.critical_factor_ci
        if ci is not None and (len(ci) != 2 or not all(isinstance(x, float | int) for x in ci)):
            raise ValueError(f"critical_factor_ci must be a pair of numbers or None, got {ci!r}")
        if not self.no_power and not _test_has_power(v, self.vacuous_replicates):
            raise ValueError(
                f"no_power is empty, but {v.trials} replicates at claimed {v.claimed!r} and "
                f"level {v.level!r} with {self.vacuous_replicates} vacuous ones flag nothing"
            )


def _check_packed_successes(bits: str, successes: int, trials: int) -> None:
    """Raise ValueError unless ``bits`` packs ``trials`` bits of which ``successes`` are set."""
    try:
        packed = base64.b64decode(bits, validate=True)
    except ValueError as exc:  # binascii.Error
        raise ValueError(f"success_bits is not base64 ({exc})") from None
    if len(packed) != (trials + 7) // 8:
        raise ValueError(
            f"success_bits holds {len(packed)} bytes, {trials} replicates take {(trials + 7) // 8}"
        )
    ones = int(np.unpackbits(np.frombuffer(packed, dtype=np.uint8), count=trials).sum())
    if ones != successes:
        raise ValueError(f"success_bits holds {ones} successes, the verdict {successes}")


def _test_has_power(verdict, vacuous_replicates: int) -> bool:
    """Whether some outcome is flagged with ``vacuous_replicates`` sure successes.

    The condition :func:`~calcheck.theory_checks.results.power.no_power` tests (the flag
    count at least the sure successes), by one binomial cdf instead of a root search.
    """
    if verdict.claimed >= 1:
        return vacuous_replicates <= verdict.trials - 1
    return _flags_at(int(vacuous_replicates), int(verdict.trials), verdict.claimed, verdict.level)


@functools.lru_cache(maxsize=4096)
def _flags_at(successes: int, trials: int, claimed: float, level: float) -> bool:
    # a check's cells share their trials, claim and level: once each
    return bool(stats.binom.cdf(successes, trials, claimed) < level)


def _beyond_replicates(value: float, successes: int, trials: int, lower_bound: bool) -> bool:
    """Whether a probability lies beyond what the replicates allow, as ``cross_check`` says.

    Outside the two-sided Clopper-Pearson interval at confidence ``1 -``
    :data:`~calcheck.theory_checks.checks.exact_evidence.CROSS_CHECK_LEVEL` (with its
    1e-12 slack); a lower bound (``lower_bound``) only above it. The interval's ends are
    where a binomial tail is half the level: one cdf decides, not two root searches.
    """
    tail = CROSS_CHECK_LEVEL / 2
    if successes < trials and stats.binom.cdf(successes, trials, value - 1e-12) < tail:
        return True  # above the interval's upper end
    return (
        not lower_bound
        and successes > 0
        and stats.binom.sf(successes - 1, trials, value + 1e-12) < tail  # below its lower end
    )


def cell_result(check, exp, outcome, alpha, values, claim, level) -> CellResult:
    """One cell's verdict, tightness, power and packed successes from the event's values."""
    claimed = claim(alpha if alpha is not None else 0.0, values.bound)
    # A bound >= 1 on an expectation of a [0, 1] quantity cannot fail: claim > 0 anyway.
    claimed = min(max(claimed, np.nextafter(0.0, 1.0)), 1.0)
    success = np.asarray(values.success, dtype=bool)
    verdict = coverage_verdict(int(success.sum()), success.size, claimed, level=level)
    r = np.asarray(values.ratio, dtype=float)
    if isinstance(check.event, MeanAtMost):
        q, q_ci = float(np.mean(r)), None
    else:
        q = float(np.quantile(r, claimed, method="inverted_cdf"))
        q_ci = quantile_interval(r, claimed)
    tightness = 1.0 / q if q > 0 else float("inf")
    if isinstance(check.event, MeanAtMost):
        detectable = mean_detectable_factor(verdict, float(values.bound))
    else:
        detectable = detectable_factor(success, r, verdict)
    n_empty = getattr(outcome, "n_empty", None)
    vacuous = 0 if values.vacuous is None else int(np.sum(values.vacuous))
    bits = base64.b64encode(np.packbits(success).tobytes()).decode("ascii")
    return CellResult(
        exp.law_name,
        exp.n_total,
        exp.bins,
        alpha,
        values.bound,
        verdict,
        values.estimate,
        q,
        tightness,
        0 if n_empty is None else int(np.sum(n_empty)),
        exp.label(),
        detectable,
        vacuous,
        no_power(verdict, values.vacuous, n_empty),
        success_bits=bits,
        critical_factor_ci=q_ci,
    )


def mutant_counts(check, exp, outcome, radius, alpha, values, claim) -> list:
    """``(successes, trials, claimed)`` of the claim tightened by each mutant factor."""
    out = []
    for f in MUTANT_FACTORS:
        success, bound = check.event.evaluate_mutant(exp, outcome, radius, alpha, f, values)
        claimed = claim(alpha if alpha is not None else 0.0, bound)
        claimed = min(max(claimed, np.nextafter(0.0, 1.0)), 1.0)
        success = np.asarray(success, dtype=bool)
        out.append((int(success.sum()), success.size, float(claimed)))
    return out


def coverage_mutant(mutant_cells, cells, level, text=None) -> Mutant:
    """The largest tightening the check catches on its own cells (same draws, same tests).

    Only cells with power count (:attr:`CellResult.has_power`): a mutant caught where the
    stated claim cannot fail is caught by construction, not by the design's power.

    ``text(f)`` says what the claim tightened by ``f`` is (the event's ``tightened_text``).
    """
    if text is None:

        def text(f):
            return f"the stated bound times {f:g}"

    counts_cache: dict = {}

    def flagged(successes, trials, claimed):
        key = (trials, claimed)
        if key not in counts_cache:
            counts_cache[key] = (
                trials - 1 if claimed >= 1 else critical_count(trials, claimed, level)
            )
        return successes <= counts_cache[key]

    tried = ", ".join(f"{f:g}" for f in MUTANT_FACTORS)
    for j, f in enumerate(MUTANT_FACTORS):
        # only where the stated claim can fail: a cell without power (a radius no error
        # reaches, an exact or certified probability of 1) catches nothing
        hits = [
            i
            for i, per_factor in enumerate(mutant_cells)
            if cells[i].has_power and flagged(*per_factor[j])
        ]
        if hits:
            c = cells[hits[0]]
            k, r, claimed = mutant_cells[hits[0]][j]
            return Mutant(
                text(f),
                True,
                f,
                f"bound times {tried}",
                f"{len(hits)} of {len(cells)} cells flag it, first {cell_label(c)}: "
                f"coverage {k / r:.4f} vs claimed {claimed:.4f}",
            )
    # last rung: the event claimed in every replicate (probability one). A radius that does
    # not scale (0: "Loss_1 <= 0") is tightened in probability; any failure flags it
    tried += ", then the event claimed surely"
    failing = [c for c in cells if c.has_power and c.verdict.successes < c.verdict.trials]
    if failing:
        c = failing[0]
        return Mutant(
            "the event claimed surely (probability one)",
            True,
            None,
            f"bound times {tried}",
            f"{len(failing)} of {len(cells)} cells have failures, first {cell_label(c)}: "
            f"{c.verdict.trials - c.verdict.successes} of {c.verdict.trials} replicates",
        )
    f = MUTANT_FACTORS[-1]
    return Mutant(
        f"{text(f)}, or the event claimed surely",
        False,
        f,
        f"bound times {tried}",
        f"no cell flags even the bound times {f:g}, and the event holds in every replicate",
    )


def cell_dict(c: CellResult) -> dict:
    """One cell as JSON-able numbers (``results.json``)."""
    v = dataclasses.asdict(c.verdict)
    return {
        "experiment": c.experiment,
        "law": c.law,
        "n": c.n,
        "n_bins": c.n_bins,
        "alpha": c.alpha,
        "bound": json_number(c.bound),
        "verdict": "violated" if c.violated else "consistent" if c.has_power else "vacuous",
        **{k: json_number(val) for k, val in v.items()},
        "estimate": c.estimate,
        "ratio_quantile": json_number(c.ratio_quantile),
        "tightness": json_number(c.tightness),
        "detectable_factor": json_number(c.detectable_factor),
        "empty_bins": c.empty_bins,
        "vacuous_replicates": c.vacuous_replicates,
        "no_power": c.no_power or None,
        "exact_coverage": c.exact_coverage,
        "exact_route": c.exact_route or None,
        "certified_coverage": c.certified_coverage,
        "certified_route": c.certified_route or None,
        "critical_factor_ci": (
            None if c.critical_factor_ci is None else [json_number(x) for x in c.critical_factor_ci]
        ),
        "exact_factor": json_number(c.exact_factor),
        "certified_factor": json_number(c.certified_factor),
    }


def cell_label(c: CellResult) -> str:
    """``"<law> n=<n> B=<B> a=<alpha>"``."""
    alpha = "" if c.alpha is None else f" a={c.alpha:g}"
    return f"{c.law} n={c.n} B={c.n_bins}{alpha}"


def plot_cells(result, ax=None):
    """Coverage of every cell of ``result`` with its CP interval (:meth:`CheckResult.plot`)."""
    own = ax is None
    if own:
        from matplotlib.figure import Figure

        ax = Figure(figsize=(6.4, 0.35 * len(result.cells) + 1.8), layout="constrained").subplots()
    y = np.arange(len(result.cells))
    cov = np.array([c.verdict.coverage for c in result.cells])
    lo = np.array([c.verdict.ci_low for c in result.cells])
    hi = np.array([c.verdict.ci_high for c in result.cells])
    claimed = np.array([c.verdict.claimed for c in result.cells])
    bad = np.array([c.violated for c in result.cells])
    ax.errorbar(
        cov,
        y,
        xerr=[cov - lo, hi - cov],
        fmt="o",
        color="tab:blue",
        ms=4,
        label="coverage (95% CP)",
    )
    ax.scatter(claimed, y, marker="|", s=200, color="black", label="claimed")
    if bad.any():
        ax.scatter(cov[bad], y[bad], color="tab:red", zorder=3, label="violated")
    ax.set_yticks(y, [cell_label(c) for c in result.cells], fontsize=7)
    ax.set_xlabel("probability of the guaranteed event")
    ax.set_title(
        f"{result.check.id}: {result.verdict} "
        f"({'as expected' if result.passed else 'NOT as expected'})",
        fontsize=9,
    )
    if own:  # a figure of our own: the legend goes below the axes, outside the data
        ax.figure.legend(fontsize=7, loc="outside lower center", ncol=3, frameon=False)
    else:
        ax.legend(fontsize=7, loc="best")
    return ax
