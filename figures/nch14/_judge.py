"""nch14 Tables 1-2: every cell beside the paper's, judged within a stated tolerance.

A cell is our mean over R runs against the paper's value, printed to 2 decimals. The
tolerance is two standard deviations of the difference plus the paper's rounding:
``tol = 2 sd sqrt(1/R_paper + 1/R) + 0.005``, with ``sd`` the between-run standard deviation
of our runs (the paper's run-to-run spread is not reported; ours stands in for it).
R_paper = 1 for Table 1 (a single run) and 10 for Table 2 (means of 10 runs). A cell
outside the tolerance "differs" and carries its reason: the evaluation's tie order when
the class-ordered evaluation (:func:`._circles.run_metrics`) lands within the tolerance,
else the cell's entry in the table module's ``REASONS``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["TIES", "cell_findings", "draw_cells", "judge"]

#: Why a cell differs in random order but matches with the test set listed class by class.
TIES = (
    "tie order: our headline evaluation splits tied predictions across the 10 evaluation "
    "bins at random; listing the test set class by class before the (stable) sort gives "
    "{byclass:.3f}, within the tolerance of the paper's {paper:.2f}: the paper probably "
    "evaluated an unshuffled test set (not stated)"
)


def judge(runs, runs_byclass, paper, *, paper_runs):
    """Cell dicts over a ``(R, rows, cols)`` array of runs against ``paper (rows, cols)``."""
    r = runs.shape[0]
    mean, mean_bc = runs.mean(axis=0), runs_byclass.mean(axis=0)
    sd = runs.std(axis=0, ddof=1) if r > 1 else np.zeros_like(mean)
    sd_bc = runs_byclass.std(axis=0, ddof=1) if r > 1 else np.zeros_like(mean)
    scale = 2.0 * np.sqrt(1.0 / paper_runs + 1.0 / r)
    tol, tol_bc = scale * sd + 0.005, scale * sd_bc + 0.005
    return [
        {
            "row": i,
            "col": j,
            "ours": float(mean[i, j]),
            "se": float(sd[i, j] / np.sqrt(r)),
            "paper": float(paper[i, j]),
            "tol": float(tol[i, j]),
            "within": bool(abs(mean[i, j] - paper[i, j]) <= tol[i, j]),
            "byclass": float(mean_bc[i, j]),
            "within_byclass": bool(abs(mean_bc[i, j] - paper[i, j]) <= tol_bc[i, j]),
        }
        for i in range(mean.shape[0])
        for j in range(mean.shape[1])
    ]


def cell_findings(cells, title, row_names, col_names, reasons):
    """The side-by-side table, the count within tolerance, and one finding per differing cell."""
    table = {
        row_names[i]: {
            col_names[c["col"]]: f"{c['ours']:.3f} +- {c['se']:.3f} (paper {c['paper']:.2f}, "
            f"tol {c['tol']:.3f}{'' if c['within'] else ', differs'})"
            for c in cells
            if c["row"] == i
        }
        for i in range(len(row_names))
    }
    differ = [c for c in cells if not c["within"]]
    out = [
        {"claim": f"{title}: ours +- s.e. (paper, tolerance)", "value": table, "holds": None},
        {
            "claim": f"{title}: cells within tolerance of the paper",
            "value": f"{len(cells) - len(differ)} of {len(cells)}",
            "holds": not differ,
            **(
                {"explanation": f"{len(differ)} cells differ, each listed with its reason"}
                if differ
                else {}
            ),
        },
        {
            "claim": f"{title}: cells within tolerance with ties evaluated class by class",
            "value": f"{sum(c['within_byclass'] for c in cells)} of {len(cells)}",
            "holds": None,
        },
    ]
    for c in differ:
        key = (row_names[c["row"]], col_names[c["col"]])
        if c["within_byclass"]:
            reason = TIES.format(byclass=c["byclass"], paper=c["paper"])
        else:
            reason = reasons.get(key, "not explained")
            reason += f" (class-ordered evaluation: {c['byclass']:.3f})"
        out.append(
            {
                "claim": f"{title}, {key[0]} {key[1]}: ours vs paper {c['paper']:.2f}",
                "value": f"{c['ours']:.3f} +- {c['se']:.3f} (tol {c['tol']:.3f})",
                "holds": False,
                "explanation": reason,
            }
        )
    return out


def draw_cells(ax, cells, row_names, col_names, title):
    """A heat map of ``|ours - paper| / tol``, each cell labelled "ours (paper)"."""
    ratio = np.zeros((len(row_names), len(col_names)))
    for c in cells:
        ratio[c["row"], c["col"]] = abs(c["ours"] - c["paper"]) / c["tol"]
        mark = "" if c["within"] else (" *" if c["within_byclass"] else " !")
        ax.text(
            c["col"],
            c["row"],
            f"{c['ours']:.3f}{mark}\n({c['paper']:.2f})",
            ha="center",
            va="center",
            fontsize=6.5,
            color="white" if ratio[c["row"], c["col"]] > 2 else "black",
        )
    ax.imshow(np.clip(ratio, 0, 3), cmap="Reds", vmin=0, vmax=3, aspect="auto")
    ax.set_xticks(range(len(col_names)), col_names, fontsize=7)
    ax.set_yticks(range(len(row_names)), row_names, fontsize=7)
    ax.set_title(title, fontsize=8)
    return ax
