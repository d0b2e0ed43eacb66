"""nch14 Figure 2: a scatter plot of the simulated data (our stand-in, :mod:`._circles`).

The paper's Fig. 2 shows its "non-linear separable simulated data" and gives no
parameters; this is a sample of the stand-in that feeds Tables 1-2 (concentric classes,
inner radius 0.35, noise 0.125, chosen by :mod:`._standin`): **ours, not the paper's**. The
findings are the two population properties the paper's tables imply for its data: an
ideal (radial) learner classifies about 99% correctly, and no linear score separates the
classes, while a calibrator of one can reach an AUC of about 0.85.
"""

from __future__ import annotations

import numpy as np

from calcheck.simulations.provenance import generator

from ..cache import cached
from ..plotting import new_figure
from ._circles import FACTOR, NOISE, base_scores, circles, population

#: Optional packages, import name -> pip name (checked before any work).
REQUIRES = {"sklearn": "scikit-learn"}
ID = "nch14.fig2"
CAPTION = (
    "Fig. 2 on our stand-in: 1,000 points of two concentric classes (inner disc z = 1, "
    "radius 0.35; outer ring z = 0, radius 1; Gaussian noise 0.125; the paper gives no "
    "parameters), with the decision boundary of the quadratic SVM trained on them (LIBSVM "
    "defaults) and the radial Bayes boundary."
)


def compute(cache_dir, *, reps=100, seed=2021, data_root=None, **_):
    """A 1,000-point sample, a quadratic SVM's decision values on a grid, the population."""

    def run():
        rng = generator(seed, "nch14.fig2")
        x, z = circles(1000, rng)
        score = base_scores("quadratic", x, z, rng)
        g = np.linspace(-1.6, 1.6, 161)
        gx, gy = np.meshgrid(g, g)
        grid = score(np.column_stack([gx.ravel(), gy.ravel()])).reshape(gx.shape)
        acc, auc = population(rng=generator(seed, "nch14.fig2", "population"))
        return {"x": x, "z": z, "grid": g, "score": grid, "population": np.array([acc, auc])}

    return cached("nch14-fig2", {"seed": seed}, run, cache_dir)


def _radial_boundary(factor=FACTOR, noise=NOISE):
    """The radius where the two classes' radial densities cross (the Bayes boundary)."""
    from scipy.stats import rice

    r = np.linspace(factor, 1.0, 2001)
    diff = rice.pdf(r, factor / noise, scale=noise) - rice.pdf(r, 1.0 / noise, scale=noise)
    return float(r[np.argmax(diff < 0)])


def findings(data):
    """The two population properties of the stand-in, against the paper's tables."""
    acc, auc = (float(v) for v in data["population"])
    return [
        {
            "claim": "an ideal (radial) learner is right about 99% of the time (paper: the "
            "quadratic SVM's ACC 0.99)",
            "value": round(acc, 4),
            "holds": bool(abs(acc - 0.99) <= 0.01),
        },
        {
            "claim": "no linear score separates the classes; the best calibration of one "
            "reaches AUC about 0.85 (paper: Hist/KDE/DPM on the linear SVM, 0.84-0.85)",
            "value": round(auc, 4),
            "holds": bool(abs(auc - 0.85) <= 0.02),
            "explanation": "the projection Bayes AUC, the limit of Hist on a linear score "
            "as N grows (Table 2 at N = 10^6)",
        },
    ]


def draw(data):
    """The scatter, the quadratic SVM's boundary and the radial Bayes boundary."""
    fig, axes = new_figure(1, width=4.6, height=4.4)
    ax = axes[0, 0]
    x, z = data["x"], data["z"]
    ax.scatter(*x[z == 0].T, s=6, marker="o", color="tab:blue", label="z = 0 (outer ring)")
    ax.scatter(*x[z == 1].T, s=6, marker="^", color="tab:red", label="z = 1 (inner disc)")
    g = data["grid"]
    ax.contour(g, g, data["score"], levels=[0.5], colors="k", linewidths=1.0)
    t = np.linspace(0, 2 * np.pi, 200)
    r = _radial_boundary()
    ax.plot(r * np.cos(t), r * np.sin(t), "k:", lw=1.0)
    ax.plot([], [], "k-", lw=1.0, label="quadratic SVM boundary")
    ax.plot([], [], "k:", lw=1.0, label=f"Bayes boundary (r = {r:.2f})")
    ax.set_aspect("equal")
    ax.set_xlabel("x1")
    ax.set_ylabel("x2")
    ax.legend(fontsize=7, loc="upper right")
    return fig
