"""Coverage of uniform-mass binning given the scores: labels integrated out exactly.

gr21 Lemma 2's argument, used as a Monte Carlo variance reduction (Rao-Blackwellisation).
Given all n scores (and the tie-breaking uniforms), uniform-mass binning averages fixed rank
sets, the labels are independent Bernoulli(eta(s_i)), and the exact bin biases ``Pi_b`` are
functions of the scores alone. So bin b's label sum ``K_b`` is Poisson-binomial with the
``eta(s_i)`` of its points, the bins are independent given the scores, and

* the **conditional** event "every bin within eps" has conditional probability
  ``prod_b P(|K_b / m_b - Pi_b| <= eps | scores)``;
* the **marginal** event "a fresh test point within eps" has conditional probability
  ``sum_b w_b P(|K_b / m_b - Pi_b| <= eps | scores)`` (``w_b`` the exact bin masses).

Averaging these over replicates of the scores estimates the coverage without the labels'
Monte Carlo error, and, with common random numbers for the scores, the estimate is a
continuous function of eta: the adversarial search (:mod:`calcheck.simulations.search`)
refines its incumbent law on it, where a count of sampled failures is a step function whose
steps (a few failures in a few hundred replicates) hide the lattice structure of the worst
case (at n = 1000, B = 20 the exact failure at constant eta is 0.027 at eta = 0.50 and 0.016
at eta = 0.49).

What it covers: :class:`~calcheck.simulations.experiments.binning.BinningExperiment` with a
binary-label law and the calibrators ``umd``, ``zadrozny_elkan`` and ``randomized_umd`` with
``delta = 0``, and top-label binning class by class (:func:`parts`). It is exact for bins
that are distinct outputs (``randomized_umd``, the
theorem's ``delta -> 0`` limit). For ``umd`` and ``zadrozny_elkan``, bins whose outputs are
equal are one output of h and their truth is pooled; here every bin is judged against its
own ``Pi_b`` (no pooling), which is what the maps do whenever eta is constant across the
pooled bins (for instance eta = 1/2 everywhere). The search uses it to
rank candidate laws only; every verdict comes from the engine's Monte Carlo.

References
----------
.. [1] C. Gupta and A. Ramdas, "Distribution-free calibration guarantees for histogram
       binning without sample splitting", ICML 2021: Algorithms 1-2, Lemma 2.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import binom

from .calibrators.binning import calibrator_from_spec
from .calibrators.edges import sort_scores, uniform_mass_edge_ranks
from .exact_coverage import COUNT_TOLERANCE
from .experiments.binning import BinningExperiment
from .laws.binary import BinaryLaw
from .metrics.exact import exact_bin_errors

__all__ = [
    "ETA_GRID",
    "EVENTS",
    "LATTICE_OFFSET",
    "bin_sizes",
    "combine_parts",
    "conditional_coverage",
    "coverage_given_scores",
    "lattice_etas",
    "parts",
    "poisson_binomial_within",
    "sorted_scores",
    "supports",
    "worst_constant_eta",
]

#: Events: every bin within eps (``"conditional"``), a fresh test point (``"marginal"``).
EVENTS = ("conditional", "marginal")
_SCHEMES = {"umd": False, "zadrozny_elkan": True, "randomized_umd": False}


def parts(experiment) -> list:
    """``[(weight, BinningExperiment), ...]``: the independent binary parts of an experiment.

    A :class:`~calcheck.simulations.experiments.binning.BinningExperiment` is one part of
    weight 1. An experiment with a ``binary_parts()`` method gives its own: top-label binning
    (gr22 Algorithm 8,
    :meth:`calcheck.simulations.experiments.gr22.TopLabelBinningExperiment.binary_parts`) is
    randomized UMD on each predicted class's ``n_l`` points, independently across classes.
    The conditional event is the product of the parts', the marginal one their weighted
    sum. ``[]`` where the module does not apply.
    """
    split = getattr(experiment, "binary_parts", None)  # top-label binning (gr22)
    if split is not None:
        out = split()
        return out if out and all(_binary_part(p) for _, p in out) else []
    return [(1.0, experiment)] if _binary_part(experiment) else []


def supports(experiment) -> bool:
    """Whether :func:`conditional_coverage` applies to ``experiment`` (see the module doc)."""
    return bool(parts(experiment))


def _binary_part(experiment) -> bool:
    if type(experiment) is not BinningExperiment:
        return False
    law, spec = experiment.law, experiment.calibrator
    if not isinstance(law, BinaryLaw) or law.labels != "binary":
        return False
    if spec.get("name") not in _SCHEMES:
        return False
    if spec.get("name") == "randomized_umd" and float(spec.get("delta", 0.0)) != 0.0:
        return False
    return spec.get("tie_breaking", "lexicographic") == "lexicographic"


def poisson_binomial_within(p: np.ndarray, counts: np.ndarray, low, high) -> np.ndarray:
    """``P(low <= K <= high)`` for ``K = sum_j Bernoulli(p[i, j])`` over ``j < counts[i]``.

    Parameters
    ----------
    p : ndarray (N, M)
        Success probabilities, row i using its first ``counts[i]`` entries.
    counts : ndarray (N,)
    low, high : ndarray (N,)
        Cut-offs. Integers: the exact probability (an empty range gives 0). Real values:
        the distribution function interpolated linearly between integers,
        ``F(x) = F(floor x) + (x - floor x) P(K = floor x + 1)`` at both ends (the smoothed
        probability of :func:`conditional_coverage` with ``smooth=True``).

    Notes
    -----
    Rows whose probabilities are all equal use the binomial distribution; the others the
    exact recursion over points, ``O(M^2)`` per row.
    """
    p = np.asarray(p, dtype=float)
    counts = np.asarray(counts, dtype=np.int64)
    low = np.asarray(low, dtype=float)
    high = np.asarray(high, dtype=float)
    out = np.zeros(p.shape[0])
    cols = np.arange(p.shape[1])
    used = cols[None, :] < counts[:, None]
    first = p[:, 0]
    equal = np.all(np.where(used, p == first[:, None], True), axis=1)
    hi_int, lo_int = np.floor(high), np.floor(low - 1)  # P(K <= hi_int) - P(K <= lo_int)
    hi_frac, lo_frac = high - hi_int, (low - 1) - lo_int  # 0 at integer cut-offs
    if equal.any():
        m, q = counts[equal], first[equal]
        out[equal] = (
            binom.cdf(hi_int[equal], m, q)
            + hi_frac[equal] * binom.pmf(hi_int[equal] + 1, m, q)
            - binom.cdf(lo_int[equal], m, q)
            - lo_frac[equal] * binom.pmf(lo_int[equal] + 1, m, q)
        )
    mixed = np.flatnonzero(~equal)
    if mixed.size:
        pm = np.where(used[mixed], p[mixed], 0.0)  # padding: Bernoulli(0) adds nothing
        width = int(counts[mixed].max())
        # One point at a time, all rows at once: count k (axis 0) by row (axis 1), so that
        # each step reads and writes contiguous rows (2.5x the speed of rows by counts) with
        # the same products and sums in the same order, so the same bits.
        move = np.ascontiguousarray(pm.T)
        stay = 1.0 - move
        pmf = np.zeros((width + 1, mixed.size))
        pmf[0] = 1.0
        moved = np.empty((width, mixed.size))
        for j in range(width):
            np.multiply(pmf[: j + 1], move[j], out=moved[: j + 1])  # from k to k + 1
            pmf[1 : j + 2] *= stay[j]
            pmf[1 : j + 2] += moved[: j + 1]
            pmf[0] *= stay[j]
        pmf = np.ascontiguousarray(pmf.T)  # rows by counts: the sum below adds in one order
        k = np.arange(width + 1)[None, :]
        h, lw = hi_int[mixed, None], lo_int[mixed, None]
        weight = (k <= h) + hi_frac[mixed, None] * (k == h + 1)
        weight = weight - (k <= lw) - lo_frac[mixed, None] * (k == lw + 1)
        out[mixed] = np.sum(pmf * weight, axis=1)
    return np.clip(out, 0.0, 1.0)


def conditional_coverage(
    experiment,
    rng: np.random.Generator,
    reps: int,
    eps: float,
    *,
    event: str = "conditional",
    smooth: bool = False,
) -> np.ndarray:
    """Per replicate, the probability of the event given that replicate's scores.

    Parameters
    ----------
    experiment : BinningExperiment
        One the module covers (:func:`supports`).
    rng : numpy.random.Generator
        Draws the scores and tie-breaking uniforms (the labels are integrated out).
    reps : int
    eps : float
        The radius (the same for every bin).
    event : {"conditional", "marginal"}
    smooth : bool, default False
        Interpolate each bin's distribution function linearly between integer counts at
        the real cut-offs ``m_b (Pi_b +- eps)``: a continuous function of eta that follows
        the envelope of the exact one (whose cut-offs jump when they cross integers). The
        search climbs it first, then the exact one (:mod:`calcheck.theory_checks.search.refine`).

    Returns
    -------
    ndarray (reps,)
        Conditional probabilities; their mean estimates the coverage.
    """
    eps = _checked(experiment, event, eps)
    out = []
    for weight, part in parts(experiment):
        s_sorted, u_sorted = sorted_scores(part.law.scores, part.n, reps, rng)
        out.append(
            (
                weight,
                coverage_given_scores(part, s_sorted, u_sorted, eps, event=event, smooth=smooth),
            )
        )
    return combine_parts(out, event)


def _checked(experiment, event, eps) -> float:
    """``eps`` as a float, after the checks both public functions share (ValueError)."""
    if not supports(experiment):
        raise ValueError(f"conditional coverage does not apply to {experiment.label()!r}")
    if event not in EVENTS:
        raise ValueError(f"event must be one of {EVENTS}, got {event!r}")
    eps = float(eps)
    if not eps >= 0:
        raise ValueError(f"eps must be a number >= 0, got {eps!r}")
    return eps


def combine_parts(weighted, event: str) -> np.ndarray:
    """The event's conditional probability from its parts' ``[(weight, coverage), ...]``."""
    if event == "conditional":
        return np.prod([c for _, c in weighted], axis=0)
    return np.sum([w * c for w, c in weighted], axis=0)


def sorted_scores(score_law, n: int, reps: int, rng: np.random.Generator):
    """``(s_sorted, u_sorted)``: ``reps`` rows of n scores, sorted with tie-breaking uniforms."""
    scores = score_law.sample((int(reps), int(n)), rng)
    return sort_scores(scores, rng, tie_breaking="lexicographic")


def _bin_ranks(experiment):
    """``(first rank, size)`` of each bin's label-averaging points (scheme-dependent)."""
    return _ranks(
        int(experiment.n), int(experiment.n_bins), _SCHEMES[experiment.calibrator["name"]]
    )


def _ranks(n: int, b: int, last_inclusive: bool):
    ranks = uniform_mass_edge_ranks(n, b)
    lo = ranks[:-1]
    hi = np.minimum(ranks[1:], n) if last_inclusive else ranks[1:] - 1
    return lo, (hi - lo).astype(np.int64)


#: How far past a lattice point the exact stage puts eta: far beyond the count slack of the
#: exact event (1e-9 counts) and the float64 rounding of the Monte Carlo's comparison, far
#: below the width of a peak (about 0.2 / m).
LATTICE_OFFSET = 1e-6


def lattice_etas(sizes, eps: float, offset: float = LATTICE_OFFSET) -> np.ndarray:
    """The etas in [0, 1] where a bin of m points (m in ``sizes``) fails most locally.

    The exact probability that a bin's mean of m Bernoulli(eta) labels is within eps of eta
    is a product of binomial windows ``ceil(m (eta - eps)) <= K <= floor(m (eta + eps))``:
    between the etas where a cut-off crosses an integer it is smooth (and largest inside),
    at a crossing it jumps. The failure is largest just past ``eta = k / m + eps`` (the
    count k leaves the window from below) and just before ``eta = k / m - eps`` (the count
    k leaves from above): those etas, ``offset`` past the crossing, for every m and k.
    gr21 Lemma 2 (the bins are binomial at constant eta); :func:`worst_constant_eta` scans
    them, and the search's exact stage tries them
    (:class:`calcheck.theory_checks.search.refine.LatticeLines`).

    Examples
    --------
    >>> lattice_etas([4], 0.3, offset=0.0)
    array([0.2 , 0.3 , 0.45, 0.55, 0.7 , 0.8 ])
    """
    eps = float(eps)
    out = []
    for m in sorted({int(x) for x in sizes}):
        k = np.arange(m + 1) / m
        out += [k + eps + offset, k - eps - offset]
    etas = np.unique(np.concatenate(out)) if out else np.zeros(0)
    return etas[(etas >= 0.0) & (etas <= 1.0)]


def bin_sizes(experiment) -> tuple:
    """Per part (:func:`parts`), the distinct numbers of points ``m`` a bin averages.

    The exact failure rate of a bin whose points share one eta jumps where a cut-off
    ``m (eta +- eps)`` crosses an integer: the lattice the search's exact stage tries
    (:mod:`calcheck.theory_checks.search.refine`). ``()`` where the module does not apply.

    Examples
    --------
    Uniform-mass binning of n = 1000 points into B = 20 bins averages 49 labels in every
    bin but the first (50); the sizes of one part:

    >>> from calcheck.simulations.experiments.binning import BinningExperiment
    >>> from calcheck.simulations.laws.binary import BinaryLaw
    >>> bin_sizes(BinningExperiment({"name": "umd"}, BinaryLaw(), 1000, 20))
    ((49, 50),)
    """
    return tuple(
        tuple(sorted({int(x) for x in _bin_ranks(part)[1]})) for _, part in parts(experiment)
    )


def coverage_given_scores(
    experiment, s_sorted, u_sorted, eps: float, *, event="conditional", smooth=False
) -> np.ndarray:
    """:func:`conditional_coverage` on given sorted scores (e.g. drawn once for many laws)."""
    eps = _checked(experiment, event, eps)
    law, n, b = experiment.law, int(experiment.n), int(experiment.n_bins)
    if np.shape(s_sorted)[1] != n:
        raise ValueError(f"s_sorted must have n = {n} columns, got shape {np.shape(s_sorted)}")
    cal = calibrator_from_spec(experiment.calibrator, b)
    p = np.clip(law.conditional_mean(s_sorted), 0.0, 1.0)
    # the fitted map on the etas gives the edges (labels do not move them)
    batch = cal.fit_sorted_batch(s_sorted, u_sorted, p, b, None)  # delta = 0: no draws
    truth = exact_bin_errors(batch, law)
    lo, m = _bin_ranks(experiment)
    width = int(m.max())
    idx = lo[:, None] + np.minimum(np.arange(width)[None, :], (m - 1)[:, None])
    pts = p[:, idx]  # (R, B, width), each bin's points (the last one repeated as padding)
    pi = np.nan_to_num(truth.bin_mean, nan=0.5)
    mm = np.broadcast_to(m, pi.shape).astype(float)
    low, high = mm * (pi - eps), mm * (pi + eps)
    if not smooth:
        low, high = np.ceil(low - COUNT_TOLERANCE), np.floor(high + COUNT_TOLERANCE)
    within = poisson_binomial_within(
        pts.reshape(-1, width), np.broadcast_to(m, pi.shape).ravel(), low.ravel(), high.ravel()
    ).reshape(pi.shape)
    within = np.where(truth.mass > 0, within, 1.0)
    if event == "conditional":
        return np.prod(within, axis=1)
    return np.sum(truth.mass * within, axis=1)


#: Constant etas scanned by :func:`worst_constant_eta`, with the lattice of the cell
#: (:func:`lattice_etas`) in the same range: [0.3, 0.7] in steps of 5e-4 (the peaks of the
#: exact failure rate are about 0.2 / m wide in eta, m points a bin).
ETA_GRID = np.round(np.linspace(0.3, 0.7, 801), 4)


def worst_constant_eta(
    n, n_bins, eps, *, event="conditional", scheme="umd", eta_range=None
) -> tuple:
    """``(eta, failure)``: the constant eta whose exact failure rate is largest, and that rate.

    The failure rate at constant eta is exact
    (:func:`calcheck.simulations.exact_coverage.exact_coverage`) but not monotone towards
    eta = 1/2: the cut-offs ``m (eta +- eps)`` cross integers, so it has narrow peaks, and
    the highest one need not be at 1/2 (at n = 1000, B = 20, alpha = 0.01 the radius of gr21
    Theorem 4's marginal statement times 0.7 fails with probability 0.021 at eta = 1/2 and
    0.031 at eta = 0.49). Scanned on :data:`ETA_GRID` and on the lattice of the cell's bin
    sizes (:func:`lattice_etas`, where the peaks' tops are: at n = 1000, B = 20, gr21
    Theorem 3's radius x 0.8 fails 0.027338 at eta = 0.498041, 0.027293 on the grid's best):
    a lower bound on the supremum over constant eta, attained by a law.

    ``eta_range=(lo, hi)``, ``0 < lo < hi < 1``, scans that range instead (a grid of step
    5e-4 and the lattice inside it): ``(1e-3, 1 - 1e-3)`` checks a radius at every constant
    eta, as the gallery's test does for each example's claims (an exact radius, unlike a
    Hoeffding one, need not be worst at eta = 1/2). Raises ValueError naming ``eta_range``
    otherwise.
    """
    from .exact_coverage import exact_coverage

    grid = ETA_GRID
    if eta_range is not None:
        try:
            lo, hi = (float(x) for x in eta_range)
        except (TypeError, ValueError):
            lo = hi = float("nan")
        if not 0.0 < lo < hi < 1.0:
            raise ValueError(f"eta_range must be (lo, hi) with 0 < lo < hi < 1, got {eta_range!r}")
        grid = np.linspace(lo, hi, max(2, int(np.ceil((hi - lo) / 5e-4)) + 1))
    sizes = _ranks(int(n), int(n_bins), scheme == "zadrozny_elkan")[1]
    lattice = lattice_etas(sizes, eps)
    etas = np.union1d(grid, lattice[(lattice >= grid[0]) & (lattice <= grid[-1])])
    fail = np.array(
        [1.0 - exact_coverage(n, n_bins, e, eps, event=event, scheme=scheme) for e in etas]
    )
    i = int(np.argmax(fail))
    return float(etas[i]), float(fail[i])
