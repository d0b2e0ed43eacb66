"""How far rounding moves gr22's scaling cells, and the findings judged with that noise.

Dirichlet scaling (DS) on CIFAR-100 has no optimum (``_cifar``'s docstring): its cells are
L-BFGS's 2000th iterate, which moves with any rounding difference (the BLAS kernels of
another CPU, another thread count), so a cell near a finding's threshold can flip between
machines of the same kind. This module measures that noise the honest way -- refitting under
perturbations that rounding could cause and nothing else -- and records it in
``ds_noise.json`` next to this module:

``input-1e-12``
    the validation probabilities multiplied by ``1 + 1e-12 z`` (``z`` standard normal,
    seeded): a relative change the size of a few rounding errors;
``equivalent-start``
    the intercept started at ``0.5`` instead of 0 for every class: the same model
    (softmax is invariant to adding a constant to every logit) and the same gradient, so
    only rounding differs along the path;
``blas-2-threads``
    the fit with two BLAS threads instead of one (another summation order in the matrix
    products);
``observed-*``
    the same fit's cells as seen on other machines (a cold run recorded at 5c75fe1, the
    issue filer's run; B = 15 only): the refits above under-estimate the spread between
    machines (ResNet-110 TL-ECE 0.287-0.305 here, 0.336 there), so these count too.

The noise of a cell is the range of the metric over the baseline fit, its perturbed refits and
the observed values (:func:`noise_of`). A finding whose verdict could change within
``NOISE_FACTOR`` times that range is reported as ``unstable`` (``figures/findings.py``),
which never fails ``calcheck figures``. Fits that converge (all but DS on CIFAR-100: Newton
steps take them to gradient norm 1e-10) have no such noise and are judged as before.

Regenerate the refits (minutes per network; ``--archs``, ``--kinds`` to choose; the
``observed-*`` entries are kept)::

    python -m calcheck.figures.gr22._stability --data ../shared/data
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import logging
import platform
import sys
import time
from pathlib import Path

import numpy as np
import scipy
from threadpoolctl import threadpool_info, threadpool_limits

from calcheck.simulations.calibrators import DirichletScaling, softmax
from calcheck.simulations.calibrators import multiclass_scaling as _ms
from calcheck.simulations.provenance import generator, package_version

from ..data import CIFAR_MODELS, data_file, load_cifar_logits

logger = logging.getLogger(__name__)

__all__ = [
    "NOISE_FACTOR",
    "NOISE_RECORD",
    "PERTURBATIONS",
    "cell_noise",
    "load_noise",
    "measure_ds_noise",
    "noise_of",
    "unstable_explanation",
    "verdict",
]

#: The recorded noise (see the module docstring).
NOISE_RECORD = Path(__file__).with_name("ds_noise.json")
PERTURBATIONS = ("baseline", "input-1e-12", "equivalent-start", "blas-2-threads")
#: A verdict is unstable if moving the cell by this many times its measured range flips it
#: (a range of 3-4 fits underestimates the spread of the next machine's value).
NOISE_FACTOR = 2.0


class _ShiftedStart(DirichletScaling):
    """DS started at an equivalent point: intercept 0.5 for every class (same model)."""

    def _init(self, n_cls):
        theta = super()._init(n_cls)
        theta[n_cls * n_cls :] = 0.5
        return theta


def _fit(kind, pv, yv, seed):
    if kind == "input-1e-12":
        z = generator(seed, "gr22.noise", kind).standard_normal(pv.shape)
        pv = pv * (1.0 + 1e-12 * z)
        pv /= pv.sum(axis=1, keepdims=True)
    if kind == "equivalent-start":
        return _ShiftedStart().fit(pv, yv)
    if kind == "blas-2-threads":
        original = _ms.single_threaded_blas
        _ms.single_threaded_blas = lambda: threadpool_limits(limits=2, user_api="blas")
        try:
            return DirichletScaling().fit(pv, yv)
        finally:
            _ms.single_threaded_blas = original
    return DirichletScaling().fit(pv, yv)


def measure_ds_noise(dataset, arch, *, kinds=PERTURBATIONS, bins=None, data_root=None, seed=2022):
    """The gr22 metrics of DS on one network under each perturbation, for each B.

    Returns ``{kind: {metric: [value per B], "n_iter": int, "loss": float}}``.
    """
    from ._cifar import BINS, _continuous_metrics

    bins = BINS if bins is None else bins
    d = load_cifar_logits(dataset, arch, data_file(data_root, "cifar_logits"))
    pv, pt = softmax(d.val_logits), softmax(d.test_logits)
    out = {}
    for kind in kinds:
        t0 = time.time()
        cal = _fit(kind, pv, d.val_labels, seed)
        q = cal.predict_proba(pt).astype(np.float32).astype(np.float64)
        per = [_continuous_metrics(q, d.test_labels, b) for b in bins]
        out[kind] = {m: [float(p[m]) for p in per] for m in per[0]}
        out[kind] |= {"n_iter": cal.n_iter_, "loss": cal.loss_, "seconds": time.time() - t0}
        logger.info("%s %s %s: %.0f s", dataset, arch, kind, time.time() - t0)
    return out


def load_noise(path=None) -> dict:
    """The recorded noise: ``{"<dataset>/<arch>/ds": {kind: {metric: [per B]}}}``."""
    path = NOISE_RECORD if path is None else Path(path)
    return json.loads(path.read_text())["fits"] if path.is_file() else {}


def noise_of(record, dataset, arch, method, metric, b_index) -> float | None:
    """Measured range of one cell over the perturbed refits (None: not measured)."""
    fits = record.get(f"{dataset}/{arch}/{method}")
    if not fits:
        return None
    values = [f[metric][b_index] for f in fits.values() if metric in f]
    values = [v for v in values if v is not None]  # observed elsewhere: B = 15 only
    return float(max(values) - min(values)) if len(values) > 1 else None


def _data_hashes(dataset, arch, data_root) -> dict:
    folder = data_file(data_root, "cifar_logits") / f"{dataset}_{arch}"
    return {
        f"{folder.name}/{f.name}": hashlib.sha256(f.read_bytes()).hexdigest()
        for f in sorted(folder.glob("*.npy"))
    }


def main(argv=None):
    """Measure and write ``ds_noise.json`` (the CIFAR-100 DS fits)."""
    ap = argparse.ArgumentParser(prog="python -m calcheck.figures.gr22._stability")
    ap.add_argument("--data", default=None)
    ap.add_argument("--archs", nargs="*", default=list(CIFAR_MODELS))
    ap.add_argument("--kinds", nargs="*", default=list(PERTURBATIONS))
    ap.add_argument("--out", default=str(NOISE_RECORD))
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    out = Path(args.out)
    record = json.loads(out.read_text()) if out.is_file() else {"fits": {}}
    for arch in args.archs:
        fits = measure_ds_noise("cifar100", arch, kinds=args.kinds, data_root=args.data)
        record["fits"].setdefault(f"cifar100/{arch}/ds", {}).update(fits)
        commands = record.get("provenance", {}).get("commands", [])
        command = "python -m calcheck.figures.gr22._stability " + " ".join(sys.argv[1:])
        record["provenance"] = {
            "commands": [*commands, command] if command not in commands else commands,
            "calcheck": package_version(),
            "numpy": np.__version__,
            "scipy": scipy.__version__,
            "python": platform.python_version(),
            "machine": platform.machine(),
            "blas": [
                {k: i.get(k) for k in ("internal_api", "version", "architecture")}
                for i in threadpool_info()
                if i.get("user_api") == "blas"
            ],
            "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            "data_sha256": {
                **record.get("provenance", {}).get("data_sha256", {}),
                **_data_hashes("cifar100", arch, args.data),
            },
        }
        tmp = out.with_suffix(".tmp")
        tmp.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
        tmp.replace(out)


def cell_noise(data, record, dataset, arch, method, metric, b_index, *, scale=1.0):
    """Noise of one table cell: 0 for a converged fit, else its measured range (inf: none)."""
    converged = data.get(f"{dataset}/{arch}/{method}/converged")
    if converged is None or bool(np.asarray(converged)[b_index]):
        return 0.0
    noise = noise_of(record, dataset, arch, method, metric, b_index)
    return np.inf if noise is None else noise * scale


def verdict(diff, tol, noise) -> str:
    """``"in"`` / ``"out"`` of the tolerance, or ``"unstable"`` within the noise of its edge."""
    margin = abs(diff) - tol
    if abs(margin) <= NOISE_FACTOR * noise:
        return "unstable"
    return "in" if margin <= 0 else "out"


def unstable_explanation(diff, tol, noise, record_path=None) -> str:
    """Why a cell's verdict is ``unstable`` (its margin to the tolerance and the noise)."""
    where = NOISE_RECORD.name if record_path is None else Path(record_path).name
    if not np.isfinite(noise):
        return (
            f"the fit did not converge and its rounding noise was not measured ({where}): "
            f"|diff| = {abs(diff):.4f} against the tolerance {tol:g} cannot be judged"
        )
    return (
        f"the fit has no optimum (L-BFGS's last iterate); refits under rounding-size "
        f"perturbations ({', '.join(PERTURBATIONS[1:])}; {where}) moved this cell by up to "
        f"{noise:.4f}; |diff| = {abs(diff):.4f} is {abs(abs(diff) - tol):.4f} from the "
        f"tolerance {tol:g}, within {NOISE_FACTOR:g} x that: another machine's rounding can "
        "give either verdict"
    )


if __name__ == "__main__":
    main()
