"""gr22 Figures 2 and 5-8: estimated ECE / MCE against the number of bins B = 5..25."""

from __future__ import annotations

import numpy as np

from ..data import CIFAR_MODELS
from ..plotting import new_figure
from ._cifar import ARCH_LABELS, BINS, METHOD_LABELS, compute_models, model_tasks

COLORS = {
    "base": "tab:grey",
    "ts": "tab:orange",
    "vs": "tab:green",
    "ds": "tab:purple",
    "nhb": "tab:brown",
    "tlhb": "tab:blue",
    "cwhb": "tab:red",
}
METRIC_LABELS = {"tl_ece": "TL-ECE", "tl_mce": "TL-MCE", "cw_ece": "CW-ECE", "conf_ece": "conf-ECE"}


def compute_for(datasets):
    def compute(cache_dir=None, *, seed=2022, data_root=None, **_):
        return compute_models(
            datasets, bins=BINS, seed=seed, cache_dir=cache_dir, data_root=data_root
        )

    return compute


def cache_tasks_for(datasets):
    """The figure's cache entries as independent tasks (``calcheck figures --jobs``)."""

    def cache_tasks(cache_dir=None, *, seed=2022, data_root=None, **_):
        return model_tasks(datasets, bins=BINS, seed=seed, cache_dir=cache_dir, data_root=data_root)

    return cache_tasks


def draw_grid(data, panels, methods, *, styles=None):
    """One row per (dataset, metric), one column per architecture, one line per method."""
    fig, axes = new_figure(len(CIFAR_MODELS), len(panels), width=3.3, height=2.6)
    for i, (ds, metric) in enumerate(panels):
        for j, arch in enumerate(CIFAR_MODELS):
            ax = axes[i, j]
            bins = data[f"{ds}/{arch}/bins"]
            for method in methods:
                for m, ls in (styles or {metric: "-"}).items():
                    ax.plot(
                        bins,
                        data[f"{ds}/{arch}/{method}/{m}"],
                        ls,
                        color=COLORS[method],
                        linewidth=1.2,
                        label=f"{METHOD_LABELS[method]} {METRIC_LABELS[m]}",
                    )
            ax.set_title(f"{ds} {ARCH_LABELS[arch]}", fontsize=8)
            ax.set_xlabel("number of bins B")
            ax.set_ylabel(METRIC_LABELS[metric] if styles is None else "estimated ECE")
    axes[0, 0].legend(fontsize=6)
    return fig


def best_fraction(data, ds, metric, method, rivals, *, slack=0.0):
    """Fraction of (architecture, B) where ``method`` is within ``slack`` of the best."""
    hits = total = 0
    for arch in CIFAR_MODELS:
        ours = data[f"{ds}/{arch}/{method}/{metric}"]
        best = np.min([data[f"{ds}/{arch}/{m}/{metric}"] for m in rivals], axis=0)
        hits += int(np.sum(ours <= best + slack))
        total += ours.size
    return hits / total


def _per_case(data, ds, metric, methods, test):
    """Fraction of (architecture, B) where ``test(values)`` holds (values: method -> array)."""
    hits = total = 0
    for arch in CIFAR_MODELS:
        vals = {m: np.asarray(data[f"{ds}/{arch}/{m}/{metric}"]) for m in methods}
        ok = np.asarray(test(vals))
        hits += int(ok.sum())
        total += ok.size
    return hits / total


def _variation(data, ds, metric, methods) -> dict:
    """Per architecture: the method whose value varies most over B (coefficient of variation)."""
    out = {}
    for arch in CIFAR_MODELS:
        cv = {}
        for m in methods:
            v = np.asarray(data[f"{ds}/{arch}/{m}/{metric}"])
            cv[m] = float(np.std(v) / np.mean(v))
        top = max(cv, key=cv.get)
        out[arch] = (top, cv[top])
    return out


def _least_consistent(data, ds, metric, methods, method):
    """Fraction of architectures where ``method`` varies most over B (coefficient of variation)."""
    top = _variation(data, ds, metric, methods)
    return sum(m == method for m, _ in top.values()) / len(CIFAR_MODELS)


def _tag(fn, kind, *args):
    fn.kind, fn.args = kind, args
    return fn


def _best(m, slack=0.0):
    return _tag(lambda v: v[m] <= np.min(list(v.values()), axis=0) + slack, "best", m)


def _worst(*ms):
    """Each of ``ms`` among the len(ms) largest values."""
    return _tag(
        lambda v: np.all([np.sort(list(v.values()), axis=0)[-len(ms)] <= v[m] for m in ms], axis=0),
        "worst",
        *ms,
    )


def _worse_than(m, rivals):
    return _tag(lambda v: np.all([v[m] > v[r] for r in rivals], axis=0), "worse_than", m, *rivals)


def _where_not(data, ds, metric, methods, test) -> str:
    """What happens in the cases where a per-case statement fails (numbers, not a verdict)."""
    excess, who = [], {}
    for arch in CIFAR_MODELS:
        vals = {m: np.asarray(data[f"{ds}/{arch}/{m}/{metric}"]) for m in methods}
        for j in np.flatnonzero(~np.asarray(test(vals))):
            col = {m: v[j] for m, v in vals.items()}
            if test.kind == "best":
                best = min(col, key=col.get)
                excess.append(col[test.args[0]] - col[best])
                who[best] = who.get(best, 0) + 1
            elif test.kind == "worst":
                for m in sorted(col, key=col.get)[-len(test.args) :]:
                    if m not in test.args:
                        who[m] = who.get(m, 0) + 1
            else:
                for r in test.args[1:]:
                    if col[test.args[0]] <= col[r]:
                        who[r] = who.get(r, 0) + 1
    names = ", ".join(
        f"{METHOD_LABELS[m]} {k}" for m, k in sorted(who.items(), key=lambda x: -x[1])
    )
    if test.kind == "best":
        e = np.asarray(excess)
        return (
            f"where it is not, {METHOD_LABELS[test.args[0]]} is above the best by "
            f"{np.median(e):.4f} (median) to {e.max():.4f}; best there: {names}"
        )
    if test.kind == "worst":
        return f"where it is not, among the worst instead: {names}"
    return f"where it is not, {METHOD_LABELS[test.args[0]]} is not worse than: {names}"


#: The paper's statements about Figs. 5-8 (App. E.5), by (C10 or C100, metric): (text,
#: per-case test or ("least consistent", method), fraction of cases needed). "In each case"
#: and "across bins" need every case; "is the best / the worst" at least 90% of them.
MOST = 0.9
STATEMENTS = {
    ("cifar10", "tl_ece"): [
        ("TL-HB is close to the best (within 0.002) in each case", _best("tlhb", 0.002), 1.0),
        ("N-HB is quite inconsistent across B (largest variation)", ("inconsistent", "nhb"), MOST),
    ],
    ("cifar100", "tl_ece"): [
        ("N-HB is the best", _best("nhb"), MOST),
        ("DS is the worst", _worst("ds"), MOST),
        ("TL-HB performs worse than TS and VS", _worse_than("tlhb", ("ts", "vs")), MOST),
    ],
    ("cifar10", "tl_mce"): [
        ("TL-HB is the only reliably well-performing method (the best)", _best("tlhb"), MOST),
    ],
    ("cifar100", "tl_mce"): [("DS is the worst", _worst("ds"), MOST)],
    ("cifar10", "cw_ece"): [
        ("CW-HB is the best across bins", _best("cwhb"), 1.0),
        ("N-HB is quite unreliable (largest variation over B)", ("inconsistent", "nhb"), MOST),
    ],
    ("cifar100", "cw_ece"): [
        ("CW-HB is the best", _best("cwhb"), MOST),
        ("DS and N-HB are the worst", _worst("ds", "nhb"), MOST),
    ],
}


def judged_statements(data, ds, metric, methods):
    """The paper's statements for one panel, each judged on every (architecture, B)."""
    out = []
    base = ds.removeprefix("focal_")
    for text, test, need in STATEMENTS.get((base, metric), []):
        if isinstance(test, tuple):
            frac = _least_consistent(data, ds, metric, methods, test[1])
            unit = "architectures"
            top = _variation(data, ds, metric, methods)
            detail = "largest variation over B: " + ", ".join(
                f"{ARCH_LABELS[a]} {METHOD_LABELS[m]} ({cv:.2f})" for a, (m, cv) in top.items()
            )
        else:
            frac = _per_case(data, ds, metric, methods, test)
            unit = "(architecture, B)"
            detail = "" if frac >= need - 1e-12 else _where_not(data, ds, metric, methods, test)
        out.append(
            {
                "claim": f"{ds} {metric}: {text} (needs {need:.0%} of {unit})",
                "value": frac,
                "holds": bool(frac >= need - 1e-12),
                **(
                    {}
                    if frac >= need - 1e-12
                    else {
                        "explanation": f"true in {frac:.0%} of {unit}; {detail}. The paper "
                        "shows one run per configuration and states no tolerance"
                    }
                ),
            }
        )
    return out


def make(datasets, metrics, hb):
    """Compute / draw / findings / cache_tasks of one ablation figure (Figs. 5-8)."""
    methods = ("base", "ts", "vs", "ds", "nhb", hb)

    def draw(data):
        return draw_grid(data, [(ds, m) for ds in datasets for m in metrics], methods)

    def findings(data):
        out = []
        for ds in datasets:
            for m in metrics:
                out.append(
                    {
                        "claim": f"{ds} {m}: fraction of (architecture, B) where {hb} is best "
                        f"/ within 0.002 of the best",
                        "value": [
                            best_fraction(data, ds, m, hb, methods),
                            best_fraction(data, ds, m, hb, methods, slack=0.002),
                        ],
                        "holds": None,
                    }
                )
                out.extend(judged_statements(data, ds, m, methods))
        if any(ds.startswith("focal_") for ds in datasets):
            for (base, m), items in STATEMENTS.items():
                if base == "cifar100" and m in metrics:
                    out.extend(
                        {
                            "claim": f"focal_cifar100 {m}: {text}",
                            "value": None,
                            "status": "not judgeable",
                            "explanation": "no focal-loss CIFAR-100 logits in the data "
                            "(shared/data/cifar_logits has focal CIFAR-10 only)",
                        }
                        for text, _, _ in items
                    )
        return out

    return compute_for(tuple(datasets)), draw, findings, cache_tasks_for(tuple(datasets))
