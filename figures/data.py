"""Real-data loaders and the CREDIT base model of Gupta & Ramdas (2021, §2.2).

Loaders take a path and default to the project's ``../shared/data`` folder (or
``$CALCHECK_DATA``). A missing file raises a ``FileNotFoundError`` naming the file and where
to get it; a damaged one a ``ValueError`` naming the file, what is wrong and what to do.

Every file a loader reads is noted with its content digest (:func:`data_digest`, size and
SHA-256, computed once per run and file) in each open :func:`recording_reads`: the figure
cache keeps them with an entry and recomputes the entry when one has changed.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import re
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from calcheck.simulations.provenance import file_digest

__all__ = [
    "CIFAR_MODELS",
    "CifarLogits",
    "CreditSplit",
    "credit_base_model",
    "data_digest",
    "data_file",
    "default_data_dir",
    "load_cifar10_vgg16",
    "load_cifar_logits",
    "load_credit",
    "note_reads",
    "recording_reads",
]

_CREDIT_SOURCE = (
    "the UCI 'default of credit card clients' data set (Yeh & Lien 2009), as distributed with "
    "the public code of Gupta & Ramdas (AIgen/df-posthoc-calibration, data/credit.csv)"
)


_RECORDERS: list[dict] = []


def data_digest(path) -> str:
    """``"<size>:<sha256 prefix>"`` of a data file's content (``"missing"`` if it is not a file).

    Computed once per process for each (path, size, modification time)
    (:func:`calcheck.simulations.provenance.file_digest`).
    """
    digest = file_digest(path)
    return "missing" if digest is None else digest


@contextlib.contextmanager
def recording_reads():
    """Collect ``{path: data_digest}`` of every data file read inside the block (nests)."""
    reads: dict = {}
    _RECORDERS.append(reads)
    try:
        yield reads
    finally:
        # by identity: two nested recorders may hold equal contents (list.remove compares)
        del _RECORDERS[next(i for i, r in enumerate(_RECORDERS) if r is reads)]


def note_reads(files: dict) -> None:
    """Note data files read (path -> digest) in every open :func:`recording_reads`."""
    for reads in _RECORDERS:
        reads.update(files)


def _read(path: Path, what: str, load, source: str):
    """``load(path)``, noted in the open recorders; a damaged file gives one line naming it."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # loadtxt's "no data": said below
            value = load(path)
    except (ValueError, EOFError, pickle.UnpicklingError) as exc:
        reason = re.sub(r";? *use `usecols`.*$", "", str(exc)) or type(exc).__name__
        raise ValueError(
            f"data file {str(path)!r} is damaged or not {what}: {reason}; replace it with a "
            f"fresh copy of {source}"
        ) from None
    note_reads({str(path): data_digest(path)})
    return value


def _npy(path):
    return np.load(path, allow_pickle=False)


def default_data_dir() -> Path:
    """The data folder.

    ``$CALCHECK_DATA``, else ``../shared/data`` next to the source tree, else
    ``./shared/data`` below the working directory's parent.
    """
    env = os.environ.get("CALCHECK_DATA")
    if env:
        return Path(env)
    here = Path(__file__).resolve().parents[1]
    for candidate in (
        here.parent / "shared" / "data",
        Path.cwd().parent / "shared" / "data",
        Path.cwd() / "shared" / "data",
    ):
        if candidate.is_dir():
            return candidate
    return here.parent / "shared" / "data"


def data_file(root, name: str) -> Path:
    """``root / name``: a data set under a data root (default: :func:`default_data_dir`).

    ``calcheck figures --data ROOT`` means the same folder for every figure: each one finds
    its own file or folder below it (``credit.csv``, ``cifar_logits``,
    ``cifar10_vgg16_probs``).
    """
    return (Path(root) if root is not None else default_data_dir()) / name


def load_credit(path=None):
    """Load CREDIT: features (30000, 23) float64 and labels (30000,) in {0, 1}.

    Parameters
    ----------
    path : str or Path, optional
        The CSV (two header rows, first column an id, last column the label). Default:
        ``<data dir>/credit.csv``.

    Returns
    -------
    X : ndarray of shape (n, 23)
    y : ndarray of shape (n,)
    """
    p = Path(path) if path is not None else default_data_dir() / "credit.csv"
    if not p.is_file():
        raise FileNotFoundError(
            f"CREDIT data not found at {str(p)!r}: pass its path, or put credit.csv in "
            f"../shared/data (or set CALCHECK_DATA). It is {_CREDIT_SOURCE}."
        )
    raw = _read(
        p,
        "credit.csv (numbers after two header rows)",
        lambda f: np.loadtxt(f, delimiter=",", skiprows=2, dtype=np.float64, ndmin=2),
        _CREDIT_SOURCE,
    )
    fresh = f"replace it with a fresh copy of {_CREDIT_SOURCE}"
    if raw.shape[0] == 0:
        raise ValueError(f"data file {str(p)!r} holds no data rows (it is empty); {fresh}")
    if raw.shape[1] != 25:
        raise ValueError(
            f"{str(p)!r} does not look like credit.csv: got {raw.shape[1]} columns, expected "
            f"25 (an id, 23 features, the label); {fresh}"
        )
    y = raw[:, -1]
    if not np.all((y == 0) | (y == 1)):
        raise ValueError(f"{str(p)!r}: the last column must be 0/1 labels; {fresh}")
    return raw[:, 1:-1], y


@dataclass(frozen=True)
class CreditSplit:
    """Platt-scaled CREDIT scores of the pool used for calibration and test draws.

    Attributes
    ----------
    pool_scores, pool_labels : ndarray
        Split C: scores g(X) in [0, 1] of the base model and labels.
    sizes : tuple of int
        Sizes of splits (A, B, C).
    """

    pool_scores: np.ndarray
    pool_labels: np.ndarray
    sizes: tuple[int, int, int]


def _logit_fit(design, y):
    import statsmodels.api as sm

    model = sm.Logit(y, design)
    return model.fit(disp=0, method="newton", maxiter=100)


def credit_base_model(x, y, *, sizes=(10_000, 5_000, 15_000), rng) -> CreditSplit:
    """The §2.2 pipeline: standardise, split A/B/C, logistic regression on A, Platt on B.

    Standardisation uses the whole matrix (``sklearn.preprocessing.scale``, as in the paper),
    once, before splitting. The logistic regression and Platt scaling are statsmodels
    maximum-likelihood fits with an intercept.

    Parameters
    ----------
    x, y : ndarray
        Features and labels.
    sizes : tuple of int
        Sizes of A, B and C (the reviewer setting of Fig. 6 is 14K / 1K / rest).
    rng : numpy Generator
        Randomness of the split.
    """
    n = len(y)
    if sum(sizes) > n:
        raise ValueError(f"sizes must add up to at most {n}, got {sizes!r}")
    std = x.std(axis=0)
    z = (x - x.mean(axis=0)) / np.where(std > 0, std, 1.0)
    perm = rng.permutation(n)
    a, b = perm[: sizes[0]], perm[sizes[0] : sizes[0] + sizes[1]]
    c = perm[sizes[0] + sizes[1] : sizes[0] + sizes[1] + sizes[2]]
    ones = np.ones((n, 1))
    design = np.hstack([ones, z])
    lr = _logit_fit(design[a], y[a])
    margin = design @ lr.params  # the logistic regression's log-odds
    platt = _logit_fit(np.column_stack([np.ones(b.size), margin[b]]), y[b])
    scores = 1.0 / (1.0 + np.exp(-(platt.params[0] + platt.params[1] * margin)))
    return CreditSplit(scores[c], y[c], tuple(int(s) for s in sizes))


# ------------------------------------------------------------------- CIFAR logits (gr22)
#: Directory names of the CIFAR logits (shared/data/README.md): (data set, architecture).
CIFAR_MODELS = ("resnet50", "resnet110", "wide_resnet", "densenet121")
_CIFAR_SETS = ("cifar10", "cifar100", "focal_cifar10")
_CIFAR_SOURCE = (
    "the logits of the pretrained models of Mukhoti et al. (2020) distributed with "
    "the public code of Gupta & Ramdas (AIgen/df-posthoc-calibration, data/)"
)


@dataclass(frozen=True)
class CifarLogits:
    """Validation (calibration, n = 5000) and test (n = 10000) logits of one network.

    Attributes
    ----------
    name : str
        ``<data set>_<architecture>``, e.g. ``"cifar10_resnet50"``.
    val_logits, test_logits : ndarray of shape (n, L), float64
    val_labels, test_labels : ndarray of shape (n,), int64, 0-based
    """

    name: str
    val_logits: np.ndarray
    val_labels: np.ndarray
    test_logits: np.ndarray
    test_labels: np.ndarray

    @property
    def n_classes(self) -> int:
        """Number of classes L."""
        return self.val_logits.shape[1]


def load_cifar_logits(dataset: str, model: str, path=None) -> CifarLogits:
    """Load the CIFAR logits of one network (gr22 Tables 2-5, Figures 1, 2, 5-8).

    Parameters
    ----------
    dataset : {"cifar10", "cifar100", "focal_cifar10"}
        ``cifar10``/``cifar100``: Brier-loss models; ``focal_cifar10``: focal loss.
    model : {"resnet50", "resnet110", "wide_resnet", "densenet121"}
    path : str or Path, optional
        Folder holding ``<dataset>_<model>/``. Default: ``<data dir>/cifar_logits``.
    """
    if dataset not in _CIFAR_SETS:
        raise ValueError(f"dataset must be one of {_CIFAR_SETS}, got {dataset!r}")
    if model not in CIFAR_MODELS:
        raise ValueError(f"model must be one of {CIFAR_MODELS}, got {model!r}")
    root = Path(path) if path is not None else default_data_dir() / "cifar_logits"
    folder = root / f"{dataset}_{model}"
    arrays = {}
    for part in ("val_logits", "val_labels", "test_logits", "test_labels"):
        f = folder / f"{part}.npy"
        if not f.is_file():
            raise FileNotFoundError(
                f"CIFAR logits not found at {str(f)!r}: pass the folder holding "
                f"{dataset}_{model}/, or put cifar_logits in ../shared/data (or set "
                f"CALCHECK_DATA). They are {_CIFAR_SOURCE}."
            )
        arrays[part] = _read(f, "a .npy array", _npy, _CIFAR_SOURCE)
    n_cls = 100 if dataset == "cifar100" else 10
    for part in ("val", "test"):
        lg, lb = arrays[f"{part}_logits"], arrays[f"{part}_labels"]
        if lg.ndim != 2 or lg.shape[1] != n_cls or lb.shape != (lg.shape[0],):
            raise ValueError(
                f"{str(folder)!r}: {part} logits {lg.shape} / labels {lb.shape} "
                f"are not (n, {n_cls}) / (n,)"
            )
        if lb.min() < 0 or lb.max() >= n_cls:
            raise ValueError(f"{str(folder)!r}: {part} labels must be 0-based class indices")
    return CifarLogits(
        f"{dataset}_{model}",
        arrays["val_logits"].astype(np.float64),
        arrays["val_labels"].astype(np.int64),
        arrays["test_logits"].astype(np.float64),
        arrays["test_labels"].astype(np.int64),
    )


_VGG16_SOURCE = "data/cifar_probs.dat of GitHub p-lambda/verified_calibration, converted to .npy"


def load_cifar10_vgg16(path=None) -> tuple[np.ndarray, np.ndarray]:
    """Softmax probabilities and labels of klm19's CIFAR-10 VGG16 on the 10,000 test images.

    The input of Kumar, Liang & Ma (2019), Figs. 2(b), 3 and 4 (their ``cifar_probs.dat``,
    converted to ``.npy``).

    Parameters
    ----------
    path : str or Path, optional
        Folder holding ``test_probs.npy`` and ``test_labels.npy``. Default:
        ``<data dir>/cifar10_vgg16_probs``.

    Returns
    -------
    probs : ndarray, shape (10000, 10), float64
    labels : ndarray, shape (10000,), int64 (0-based)
    """
    folder = Path(path) if path is not None else default_data_dir() / "cifar10_vgg16_probs"
    arrays = []
    for name in ("test_probs.npy", "test_labels.npy"):
        f = folder / name
        if not f.is_file():
            raise FileNotFoundError(
                f"CIFAR-10 VGG16 probabilities not found at {str(f)!r}: pass the folder "
                f"holding test_probs.npy and test_labels.npy ({_VGG16_SOURCE})"
            )
        arrays.append(_read(f, "a .npy array", _npy, _VGG16_SOURCE))
    probs, labels = arrays[0].astype(np.float64), arrays[1].astype(np.int64)
    if probs.ndim != 2 or labels.shape != (probs.shape[0],):
        raise ValueError(f"{str(folder)!r}: probs {probs.shape} / labels {labels.shape}")
    if labels.min() < 0 or labels.max() >= probs.shape[1]:
        raise ValueError(f"{str(folder)!r}: labels must be 0-based class indices")
    return probs, labels
