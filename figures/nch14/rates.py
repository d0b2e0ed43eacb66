"""nch14's remarks on rates, as a study: the KDE error and equal-frequency vs equal-width bins.

Reported, not judged: the paper gives no numbers for either.

Sec. 3.2 cites the minimax L2 rate of kernel regression (Wasserman; catalog G17) for its
KDE calibration, and Sec. 3.1 conjectures that equal-frequency binning is near-minimax
(G18). Neither is a theorem of the paper, so nothing here is judged against a paper number:

- Left: the L2 error ``sqrt(E_S[(h(S) - eta(S))^2])`` of the Nadaraya-Watson calibrator
  (boxcar kernel, Silverman's bandwidth;
  :class:`~calcheck.simulations.calibrators.density.KernelCalibrator`) on a smooth calibration
  map, against n, with the fitted slope of log error on log n and its bootstrap interval
  over repetitions. The error is integrated
  over the score law's quantiles (2000 points). For reference only: a twice-differentiable
  eta with h ~ n^(-1/5) gives ``n^(-2/5)`` away from the boundary; the boxcar's bias at the
  ends of [0, 1] is first order, which slows the global rate.
- Right: the exact ECE (and MCE) of Hist with B = round(n^(1/3)) bins, equal-frequency
  (Zadrozny-Elkan) against equal-width, on uniform and skewed scores.

Naeini, M. P., Cooper, G. F. and Hauskrecht, M. (2014). Binary classifier calibration:
non-parametric approach. arXiv:1401.3390. Secs. 3.1-3.2.
"""

from __future__ import annotations

import numpy as np

from calcheck.simulations.calibrators import FixedWidthBinning, ZadroznyElkanBinning
from calcheck.simulations.calibrators.density import KernelCalibrator
from calcheck.simulations.laws import BINARY_LAWS
from calcheck.simulations.metrics.exact import conditional_max_error, exact_bin_errors, lp_ece
from calcheck.simulations.provenance import generator

from ..plotting import new_figure

ID = "nch14.rates"
CAPTION = (
    "Not judged (the paper gives no numbers). Left: the L2 error of the KDE "
    "(Nadaraya-Watson, boxcar, Silverman) calibrator against n on a smooth calibration map "
    "(uniform scores, logistic eta), mean over repetitions with its fitted slope; dashed, "
    "the n^(-2/5) reference. Right: exact ECE of Hist with B = round(n^(1/3)), "
    "equal-frequency (solid) against equal-width (dashed), on uniform and skewed scores."
)
N_VALUES = (500, 1000, 2000, 4000, 8000, 16_000)
KDE_LAW = "uniform_logistic"
HIST_LAWS = ("uniform_logistic", "skewed_beta")
GRID = 2000


def _kde_error(law, n, rng, grid):
    s = law.sample_scores(n, rng)
    y = law.sample_labels(s, rng)
    h = KernelCalibrator("nw").fit(s, y).predict(grid)
    return float(np.sqrt(np.mean((h - law.conditional_mean(grid)) ** 2)))


def _hist_errors(law, n, reps, rng):
    b = max(2, round(n ** (1 / 3)))
    s = law.sample_scores((reps, n), rng)
    y = law.sample_labels(s, rng)
    out = {}
    for name, cls in (("ef", ZadroznyElkanBinning), ("ew", FixedWidthBinning)):
        batch = cls(b).fit_batch(s, y, b, rng)
        err = exact_bin_errors(batch, law)
        out[name] = (lp_ece(err.error, err.mass, 1.0), conditional_max_error(err.error))
    return out


def compute(cache_dir=None, *, reps=100, seed=2021, **_):
    """KDE errors per (n, repetition) and Hist exact ECE/MCE per (law, n, repetition)."""
    r = max(5, min(int(reps), 40))  # the KDE fits cost O(n log n) each
    law = BINARY_LAWS[KDE_LAW]
    grid = law.scores.ppf((np.arange(GRID) + 0.5) / GRID)
    kde = np.array(
        [
            [_kde_error(law, n, generator(seed, ID, "kde", n, k), grid) for k in range(r)]
            for n in N_VALUES
        ]
    )
    out = {"n_values": np.array(N_VALUES), "kde": kde}
    for name in HIST_LAWS:
        for i, n in enumerate(N_VALUES):
            errs = _hist_errors(BINARY_LAWS[name], n, r, generator(seed, ID, name, n))
            for kind, (ece, mce) in errs.items():
                out.setdefault(f"{name}/{kind}/ece", np.zeros((len(N_VALUES), r)))[i] = ece
                out.setdefault(f"{name}/{kind}/mce", np.zeros((len(N_VALUES), r)))[i] = mce
    return out


def _slope(n, errors, seed=0):
    """Slope of log mean error on log n, with a 95% bootstrap interval over repetitions."""
    x = np.log(n)
    fit = np.polyfit(x, np.log(errors.mean(axis=1)), 1)[0]
    rng = np.random.default_rng(seed)
    boot = []
    for _ in range(2000):
        idx = rng.integers(0, errors.shape[1], errors.shape[1])
        boot.append(np.polyfit(x, np.log(errors[:, idx].mean(axis=1)), 1)[0])
    lo, hi = np.percentile(boot, [2.5, 97.5])
    return float(fit), float(lo), float(hi)


def findings(data):
    """Reported: the KDE slope, and equal-width over equal-frequency ECE/MCE per law."""
    n = data["n_values"]
    slope, lo, hi = _slope(n, data["kde"])
    found = [
        {
            "claim": "KDE (Nadaraya-Watson) calibration: slope of the L2 error against n "
            "(reference n^(-2/5) for smooth eta away from the boundary; cited, not the paper's)",
            "value": {"slope": round(slope, 3), "ci95": [round(lo, 3), round(hi, 3)]},
            "status": "reported",
        }
    ]
    for name in HIST_LAWS:
        for metric in ("ece", "mce"):
            ef = data[f"{name}/ef/{metric}"].mean(axis=1)
            ew = data[f"{name}/ew/{metric}"].mean(axis=1)
            found.append(
                {
                    "claim": f"{name}: mean {metric.upper()} of equal-width over "
                    f"equal-frequency Hist, B = round(n^(1/3)), n = {int(n[0])}..{int(n[-1])}",
                    "value": [round(float(v), 3) for v in ew / ef],
                    "status": "reported",
                }
            )
    return found


def draw(data):
    """Left: KDE L2 error against n; right: exact ECE of Hist, EF against EW."""
    fig, axes = new_figure(ncols=2, nrows=1, width=4.6, height=3.4)
    n = data["n_values"]
    left, right = axes[0, 0], axes[0, 1]
    mean = data["kde"].mean(axis=1)
    se = data["kde"].std(axis=1, ddof=1) / np.sqrt(data["kde"].shape[1])
    slope, lo, hi = _slope(n, data["kde"])
    left.errorbar(n, mean, yerr=2 * se, fmt="-o", color="tab:blue", label="KDE, mean +- 2 s.e.")
    left.plot(n, mean[0] * (n / n[0]) ** -0.4, "--", color="grey", label="n^(-2/5) reference")
    left.set_title(f"KDE L2 error: slope {slope:.2f} [{lo:.2f}, {hi:.2f}]", fontsize=9)
    left.set_ylabel(r"$\sqrt{E[(h(S) - \eta(S))^2]}$")
    colors = {"uniform_logistic": "tab:blue", "skewed_beta": "tab:red"}
    for name in HIST_LAWS:
        for kind, ls in (("ef", "-o"), ("ew", "--s")):
            label = f"{name}, {'equal-frequency' if kind == 'ef' else 'equal-width'}"
            right.plot(
                n, data[f"{name}/{kind}/ece"].mean(axis=1), ls, color=colors[name], label=label
            )
    right.set_title("Hist, B = round(n^(1/3)): exact ECE", fontsize=9)
    right.set_ylabel("ECE (exact, mean over repetitions)")
    for ax in (left, right):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("calibration points n")
        ax.legend(fontsize=7)
    return fig
