"""gr22 Tables 2-5: ours next to the paper's value, the difference, and explanations."""

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
    table_rows,
)

B15 = BINS.index(15)

#: Why a cell can differ from the paper by more than the issue's tolerance.
REASONS = {
    "vs": "VS refitted here by L-BFGS on the NLL; dirichletcal's optimiser and stopping rule "
    "differ and the unregularised optimum is flat",
    "ds": "DS unregularised (dirichletcal default): 110 (C10) or 10,100 (C100) parameters "
    "fitted to 5000 points; the overfitted optimum depends on the optimiser and its "
    "stopping rule (here at most 2000 L-BFGS iterations)",
    "nhb": "N-HB: one jittered HB per class then normalisation; the paper's nudge noise and "
    "empty-bin value (0.5) change argmax and values of a few test points",
    "tlhb": "TL-HB (authors' code variant) on 5000 points; the paper's delta-nudge jitter and "
    "its exact bin-edge code are not reproduced bit for bit",
    "cwhb": "CW-HB (authors' code variant); the paper's delta-nudge jitter is not reproduced",
    "ts": "TS by the focal_calibration grid rule",
    "base": "no calibration: must match",
}
MCE_REASON = (
    "the paper does not define its TL-MCE estimator; max_b Delta^_b of the "
    "top-label reliability diagram reproduces every Base cell, but for HB outputs "
    "the grouping it used is unknown (here: one group per output); a max over "
    "groups is driven by a few test points"
)


def make(table: str, metrics: tuple[str, ...]):
    """Compute / draw / findings of one table."""
    datasets = tuple(sorted({ds for (t, _), rows in PAPER.items() if t == table for ds, _ in rows}))

    def compute(cache_dir=None, *, seed=2022, data_root=None, **_):
        return compute_models(
            datasets, bins=BINS, seed=seed, cache_dir=cache_dir, data_root=data_root
        )

    def rows(data):
        return {m: table_rows(data, table, m, b_index=B15) for m in metrics}

    def findings(data):
        out = []
        for metric, rs in rows(data).items():
            tol = TOLERANCE[metric] * (100 if metric == "cw_ece" else 1)
            base = [r for r in rs if r[2] == "base"]
            worst_base = max(abs(r[5]) for r in base)
            out.append(
                {
                    "claim": f"{table} {metric}: Base column matches the paper to 3 "
                    f"decimals ({len(base)} cells)",
                    "value": worst_base,
                    "holds": bool(
                        worst_base < 0.5 * 10 ** (-2 if metric == "cw_ece" else -3) + 1e-12
                    ),
                }
            )
            within = sum(abs(r[5]) <= tol for r in rs)
            unit = " (x100)" if metric == "cw_ece" else ""
            out.append(
                {
                    "claim": f"{table} {metric}{unit}: cells within {tol:g} of the paper",
                    "value": within,
                    "holds": within == len(rs),
                    "total": len(rs),
                }
            )
            for ds, arch, method, ours, pv, diff in rs:
                if abs(diff) > tol:
                    reason = REASONS.get(method, "")
                    if metric == "tl_mce":
                        reason = (
                            MCE_REASON
                            if method in ("tlhb", "cwhb")
                            else reason + "; a max over 15 bins moves with single test points "
                            "in sparse bins"
                        )
                        if ds == "cifar100" and method == "tlhb":
                            reason += (
                                "; on CIFAR-100 a predicted class has about 50 "
                                "calibration points, so its 15 bins hold 2-3 points "
                                "and an output of 0 or 1 can meet a test group of the "
                                "opposite outcome (gap 1)"
                            )
                    out.append(
                        {
                            "claim": f"{table} {metric} {ds} {ARCH_LABELS[arch]} "
                            f"{METHOD_LABELS[method]}: ours {ours:.3f} vs paper "
                            f"{pv:.3f}",
                            "value": diff,
                            "holds": False,
                            "explanation": reason,
                        }
                    )
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
        out.append(
            {
                "claim": f"{table} {metric}: {METHOD_LABELS[hb]} as analysed (gr21 "
                f"Algorithm 2) vs the authors' code variant, largest difference",
                "value": max(gaps),
                "holds": None,
            }
        )
        return out

    def draw(data):
        rs_by = rows(data)
        n_panels = len(rs_by)
        fig, axes = new_figure(n_panels, width=7.2, height=4.2)
        for ax, (metric, rs) in zip(axes[0], rs_by.items(), strict=True):
            models = list(dict.fromkeys((r[0], r[1]) for r in rs))
            methods = list(dict.fromkeys(r[2] for r in rs))
            diff = np.full((len(models), len(methods)), np.nan)
            tol = TOLERANCE[metric] * (100 if metric == "cw_ece" else 1)
            for ds, arch, method, ours, pv, d in rs:
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
                [
                    f"{ds.replace('_cifar', ' C').replace('cifar', 'C')} {ARCH_LABELS[a]}"
                    for ds, a in models
                ],
                fontsize=7,
            )
            unit = " x100" if metric == "cw_ece" else ""
            ax.set_title(
                f"{table}: {metric}{unit}, ours (paper); red = |diff| / tol (tol {tol:g})",
                fontsize=8,
            )
        return fig

    return compute, draw, findings


__all__ = ["REASONS", "make"]
