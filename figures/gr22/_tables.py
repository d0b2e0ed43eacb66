"""gr22 Tables 2-5: ours next to the paper's value, the difference, and explanations.

**Which DS baseline.** The DS and VS columns are calcheck's own fits
(:class:`~calcheck.simulations.calibrators.DirichletScaling`, ``VectorScaling``), not the
paper's software. The paper ran ``dirichletcal`` (``FullDirichletCalibrator()``,
``VectorScaling()``, default settings); its fits are kept as an oracle in
``tests/fixtures/dirichletcal/`` (fitted parameters, summary statistics of the calibrated test
probabilities, provenance), and ``tests/simulations/test_dirichletcal_oracle.py`` checks that
calcheck's estimators on them give the script's independent numbers, and dirichletcal's cells
the paper's. What the oracle shows: DS on CIFAR-10 (an optimum) -- calcheck's fit is
dirichletcal's (probabilities within 1e-4, same cells); DS on CIFAR-100 (no optimum) --
dirichletcal's own iterate is not reproducible either (ResNet-110 CW-ECE x100 0.732 and
TL-ECE 0.358 on one machine, 0.720 and 0.352 on another; the paper 0.72, .353),
ours is further off (0.617, 0.290; ``REASONS["ds"]``); VS -- dirichletcal scales log-ratios
to the last class, ``w (log p - log p_L) + b``, calcheck ``w log p + b``: another model
(CIFAR-10 ResNet-110 CW-ECE x100 0.390 vs dirichletcal's 0.418 = the paper's 0.42; every
VS cell is still within the tolerance). calcheck's DS stays the baseline: the cached oracle
numbers would replay the paper's software rather than check it, and its CIFAR-100 iterate is
as arbitrary as ours.

**Verdicts rounding can move.** A cell of a fit that did not converge is judged with the
noise measured in :mod:`._stability` (refits under rounding-size perturbations): a cell
within ``NOISE_FACTOR`` times that noise of the tolerance is ``unstable`` (never a failure of
``calcheck figures``), and so is a count of cells within the tolerance that only such cells
decide.
"""

from __future__ import annotations

import numpy as np

from ..plotting import new_figure
from ._cifar import (
    ARCH_LABELS,
    BINS,
    METHOD_LABELS,
    PAPER,
    TOLERANCE,
    compute_models,
    model_tasks,
    table_rows,
)
from ._stability import cell_noise, load_noise, unstable_explanation, verdict

B15 = BINS.index(15)

#: Why a TL-ECE or CW-ECE cell can differ from the paper by more than the tolerance (only DS
#: on CIFAR-100 does), measured on the four CIFAR-100 networks.
REASONS = {
    "ds": "DS unregularised (dirichletcal default) has no optimum on CIFAR-100: its 10,100 "
    "parameters fitted to 5000 points reach 98-100% training accuracy (the NLL tends to 0 "
    "along c * theta), so the fit is L-BFGS's 2000th iterate and moves with rounding "
    "(ds_noise.json: refits under 1e-12 input noise, an equivalent start or 2 BLAS threads "
    "move CW-ECE x100 by 0.031-0.109 and TL-ECE by 0.019-0.067 over the four networks). The "
    "paper's cells are dirichletcal's own iterate (it stops later: at most 15,000 "
    "iterations, projected gradient 1e-5): its FullDirichletCalibrator() refitted here "
    "reproduces them (tests/fixtures/dirichletcal, test_dirichletcal_oracle.py), so the "
    "difference is which iterate, not the model or the estimators",
}
#: Why the TL-HB TL-MCE on CIFAR-100 differs is not known; the groupings listed do not
#: reproduce it.
TLHB_C100_MCE = (
    "not explained: TL-HB's TL-ECE matches the paper within 0.001 on every network, so the "
    "outputs agree; the estimator that reproduces the CIFAR-10 TL-HB cells (the diagram's "
    "bins are the HB bins by rank) gives lower values here, and pooling by rank from the "
    "top, by occupied rank, or the authors' adaptive-bin rule for non-discrete classes give "
    "the same; one group per output (eq. 17) gives 1.0. The paper's grouping on CIFAR-100 "
    "is not stated"
)


def mce_explanation(ours, paper, support, method, *, noise=2.0):
    """Why a TL-MCE cell differs: within the test noise of the bin that sets it, or not.

    A TL-MCE estimate is the gap of one bin; that bin's accuracy, a mean of ``support``
    test labels, has standard error at most ``1 / (2 sqrt(support))``.
    """
    se = 0.5 / np.sqrt(support)
    diff = abs(ours - paper)
    where = f"our max is set by a bin of {support:.0f} test points (standard error <= {se:.3f})"
    if diff <= noise * se:
        return (
            f"{where}; |diff| = {diff:.3f} is within {noise:g} standard errors: a few test "
            "points moving between bins (any change in the fitted map) explain it"
        )
    return (
        f"{where}; |diff| = {diff:.3f} exceeds {noise:g} standard errors: not test noise "
        f"alone; {REASONS.get(method, 'the fitted map differs, cause not found')}"
    )


def tlhb_lowest_mce(rows, table):
    """The paper's "TL-HB is the best on CIFAR-10 TL-MCE" (App. E.5): row minima of the table."""
    by_model: dict = {}
    for ds, arch, method, ours, _pv, _d in rows:
        if ds.endswith("cifar10"):
            by_model.setdefault((ds, arch), {})[method] = ours
    lowest = [k for k, v in by_model.items() if min(v, key=v.get) == "tlhb"]
    others = {
        ARCH_LABELS[a]: f"{min(v, key=v.get)} {min(v.values()):.3f} vs TL-HB {v['tlhb']:.3f}"
        for (_, a), v in by_model.items()
        if (_, a) not in lowest
    }
    return {
        "claim": f"{table} tl_mce: TL-HB has the lowest TL-MCE on every CIFAR-10 network",
        "value": f"{len(lowest)} of {len(by_model)}",
        "holds": len(lowest) == len(by_model),
        **({"explanation": f"lowest elsewhere: {others}"} if others else {}),
    }


def count_finding(table, metric, tol, within, verdicts):
    """``cells within tol of the paper``: unstable if only cells within their noise decide it."""
    unit = " (x100)" if metric == "cw_ece" else ""
    total, out, unstable = len(verdicts), verdicts.count("out"), verdicts.count("unstable")
    finding = {
        "claim": f"{table} {metric}{unit}: cells within {tol:g} of the paper",
        "value": within,
        "holds": within == total,
        "total": total,
    }
    if out:
        finding["explanation"] = (
            f"{total - within} cells differ, each listed below with its explanation"
        )
    elif unstable:
        finding["status"] = "unstable"
        finding["explanation"] = (
            f"{within} of {total} cells within {tol:g} here; no cell is judged outside, but "
            f"{unstable} lie within their fit's rounding noise of the tolerance (listed "
            "below): another machine can give either verdict"
        )
    else:
        finding["holds"] = True
    return finding


def _scaled_tolerance(metric) -> float:
    """The tolerance of a metric in the table's units (CW-ECE is printed x100)."""
    return TOLERANCE[metric] * (100 if metric == "cw_ece" else 1)


def _table_rows(data, table, metrics) -> dict:
    """Metric -> the table's rows ``(dataset, arch, method, ours, paper, diff)`` at B = 15."""
    return {m: table_rows(data, table, m, b_index=B15) for m in metrics}


def _base_finding(table, metric, rows) -> dict:
    """The Base column (no recalibration) is the paper's to the printed 3 decimals."""
    base = [r for r in rows if r[2] == "base"]
    worst_base = max(abs(r[5]) for r in base)
    return {
        "claim": f"{table} {metric}: Base column matches the paper to 3 "
        f"decimals ({len(base)} cells)",
        "value": worst_base,
        "holds": bool(worst_base < 0.5 * 10 ** (-2 if metric == "cw_ece" else -3) + 1e-12),
    }


def _cell_reason(data, row, metric, tol, cell_verdict, noise) -> str:
    """Why one cell is outside the tolerance, or why its verdict is unstable."""
    ds, arch, method, ours, pv, diff = row
    if cell_verdict == "unstable":
        return unstable_explanation(diff, tol, noise)
    if metric != "tl_mce":
        return REASONS.get(method, "not explained")
    if method == "tlhb" and ds == "cifar100":
        return TLHB_C100_MCE
    support = float(data[f"{ds}/{arch}/{method}/tl_mce_support"][B15])
    return mce_explanation(ours, pv, support, method)


def _metric_findings(data, table, metric, rows, record) -> list[dict]:
    """One metric's findings: the Base column, the count within tolerance, each cell outside."""
    tol = _scaled_tolerance(metric)
    out = [_base_finding(table, metric, rows)]
    scale = 100.0 if metric == "cw_ece" else 1.0
    noise = [cell_noise(data, record, r[0], r[1], r[2], metric, B15, scale=scale) for r in rows]
    verdicts = [verdict(r[5], tol, n) for r, n in zip(rows, noise, strict=True)]
    within = sum(abs(r[5]) <= tol for r in rows)
    out.append(count_finding(table, metric, tol, within, verdicts))
    if metric == "tl_mce":
        out.append(tlhb_lowest_mce(rows, table))
    for row, v, n in zip(rows, verdicts, noise, strict=True):
        if v == "in":
            continue
        ds, arch, method, ours, pv, diff = row
        out.append(
            {
                "claim": f"{table} {metric} {ds} {ARCH_LABELS[arch]} "
                f"{METHOD_LABELS[method]}: ours {ours:.3f} vs paper {pv:.3f}",
                "value": diff,
                "holds": False,
                "explanation": _cell_reason(data, row, metric, tol, v, n),
                **({"status": "unstable"} if v == "unstable" else {}),
            }
        )
    return out


def _analysed_variant_finding(data, table, metrics, datasets) -> dict:
    """How far the HB variant gr21 analyses is from the authors' code variant (reported)."""
    hb = "cwhb" if "cw_ece" in metrics else "tlhb"
    metric = metrics[0]
    gaps = [
        abs(
            float(data[f"{ds}/{arch}/{hb}/{metric}"][B15])
            - float(data[f"{ds}/{arch}/{hb}_analysed/{metric}"][B15])
        )
        for ds in datasets
        for arch in ARCH_LABELS
    ]
    return {
        "claim": f"{table} {metric}: {METHOD_LABELS[hb]} as analysed (gr21 "
        f"Algorithm 2) vs the authors' code variant, largest difference",
        "value": max(gaps),
        "holds": None,
    }


def table_findings(data, table, metrics, datasets) -> list[dict]:
    """The findings of one table: per metric, then the analysed-variant gap."""
    record = load_noise()
    out = []
    for metric, rows in _table_rows(data, table, metrics).items():
        out += _metric_findings(data, table, metric, rows, record)
    out.append(_analysed_variant_finding(data, table, metrics, datasets))
    return out


def _model_label(dataset, arch) -> str:
    """A table row's label: the data set (shortened) and the network."""
    return f"{dataset.replace('_cifar', ' C').replace('cifar', 'C')} {ARCH_LABELS[arch]}"


def _draw_table_panel(ax, table, metric, rows):
    """One metric: each cell ours (paper), shaded by |diff| / tolerance."""
    models = list(dict.fromkeys((r[0], r[1]) for r in rows))
    methods = list(dict.fromkeys(r[2] for r in rows))
    diff = np.full((len(models), len(methods)), np.nan)
    tol = _scaled_tolerance(metric)
    for ds, arch, method, ours, pv, d in rows:
        i, j = models.index((ds, arch)), methods.index(method)
        diff[i, j] = d
        ax.text(
            j,
            i,
            f"{ours:.3f}\n({pv:.3f})",
            ha="center",
            va="center",
            fontsize=6,
            color="white" if abs(d) > 2 * tol else "black",
        )
    ax.imshow(np.clip(np.abs(diff) / tol, 0, 3), cmap="Reds", vmin=0, vmax=3, aspect="auto")
    ax.set_xticks(range(len(methods)), [METHOD_LABELS[m] for m in methods], fontsize=7)
    ax.set_yticks(
        range(len(models)),
        [_model_label(ds, arch) for ds, arch in models],
        fontsize=7,
    )
    unit = " x100" if metric == "cw_ece" else ""
    ax.set_title(
        f"{table}: {metric}{unit}, ours (paper); red = |diff| / tol (tol {tol:g})",
        fontsize=8,
    )


def draw_table(data, table, metrics):
    """One panel per metric of the table."""
    rows_by_metric = _table_rows(data, table, metrics)
    fig, axes = new_figure(len(rows_by_metric), width=7.2, height=4.2)
    for ax, (metric, rows) in zip(axes[0], rows_by_metric.items(), strict=True):
        _draw_table_panel(ax, table, metric, rows)
    return fig


def make(table: str, metrics: tuple[str, ...]):
    """Compute / draw / findings / cache_tasks of one table."""
    datasets = tuple(sorted({ds for (t, _), rows in PAPER.items() if t == table for ds, _ in rows}))

    def compute(cache_dir=None, *, seed=2022, data_root=None, **_):
        return compute_models(
            datasets, bins=BINS, seed=seed, cache_dir=cache_dir, data_root=data_root
        )

    def cache_tasks(cache_dir=None, *, seed=2022, data_root=None, **_):
        return model_tasks(datasets, bins=BINS, seed=seed, cache_dir=cache_dir, data_root=data_root)

    def findings(data):
        return table_findings(data, table, metrics, datasets)

    def draw(data):
        return draw_table(data, table, metrics)

    return compute, draw, findings, cache_tasks


__all__ = ["REASONS", "make"]
