"""Loaders for user data files and for the benchmark sets of the LapSVM papers.

Data files are never shipped with the package.  They are read from a directory
given by the user: the ``data_dir`` argument (``--data-dir`` on the command
line), else the environment variable ``SEMISVM_DATA``, else ``../shared/data``
relative to the current directory when that directory exists (see
:func:`resolve_data_dir`).

The named loaders (:func:`load_g50c`, :func:`load_uspst`, ...) return a
:class:`sklearn.utils.Bunch` with ``X``, ``y`` (class labels recoded to
non-negative integers so that ``-1`` stays free for "unlabeled"), ``y_original``
(the labels as stored), ``classes`` and, when the file carries them, the
authors' own splits ``idx_labeled`` / ``idx_unlabeled`` (0-based, one row per
split).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.utils import Bunch

__all__ = [
    "DataFileNotFoundError",
    "BENCHMARK_DATASETS",
    "resolve_data_dir",
    "load_data_file",
    "load_npz",
    "load_svmlight",
    "load_mat",
    "load_csv",
    "load_benchmark",
    "load_g50c",
    "load_uspst",
    "load_uspst_b",
    "load_pcmac",
    "load_coil20",
    "load_coil20_b",
    "load_usps_full",
]

ENV_VAR = "SEMISVM_DATA"
_DEFAULT_RELATIVE = Path("..") / "shared" / "data"


class DataFileNotFoundError(FileNotFoundError):
    """A data file or data directory is missing; the message says where we looked."""


# ---------------------------------------------------------------- directories
def _candidate_default_dirs() -> list[Path]:
    """``../shared/data`` relative to the current dir and to the repository root."""
    cands = [Path.cwd() / _DEFAULT_RELATIVE]
    # the repository root is three levels above this file (src/semisvm/datasets)
    repo_root = Path(__file__).resolve().parents[3]
    cands.append(repo_root / _DEFAULT_RELATIVE)
    out: list[Path] = []
    for c in cands:
        c = c.resolve()
        if c not in out:
            out.append(c)
    return out


def resolve_data_dir(data_dir: str | os.PathLike | None = None) -> Path:
    """Directory holding the benchmark data files.

    Precedence: ``data_dir`` (the ``--data-dir`` flag) > the environment variable
    ``SEMISVM_DATA`` > ``../shared/data`` relative to the current directory or to
    the repository root, when it exists.

    Parameters
    ----------
    data_dir : str or path-like, default=None
        Directory given by the user.

    Returns
    -------
    pathlib.Path
        The resolved directory (it exists).

    Raises
    ------
    DataFileNotFoundError
        If the chosen directory does not exist, or no directory was given and no
        default exists; the message lists the places searched.
    """
    if data_dir is not None:
        p = Path(data_dir).expanduser()
        if not p.is_dir():
            raise DataFileNotFoundError(
                f"Data directory {str(p)!r} (given as data_dir / --data-dir) does not "
                f"exist (resolved to {str(p.resolve())!r})."
            )
        return p
    env = os.environ.get(ENV_VAR)
    if env:
        p = Path(env).expanduser()
        if not p.is_dir():
            raise DataFileNotFoundError(
                f"Data directory {str(p)!r} (from the environment variable {ENV_VAR}) "
                "does not exist."
            )
        return p
    cands = _candidate_default_dirs()
    for c in cands:
        if c.is_dir():
            return c
    raise DataFileNotFoundError(
        "No data directory: pass --data-dir DIR (or data_dir=...), or set the "
        f"environment variable {ENV_VAR}. Default locations searched: "
        + ", ".join(repr(str(c)) for c in cands)
        + "."
    )


def _find_file(name: str, data_dir: str | os.PathLike | None) -> Path:
    d = resolve_data_dir(data_dir)
    path = d / name
    if not path.is_file():
        present = sorted(p.name for p in d.iterdir() if p.is_file())
        raise DataFileNotFoundError(
            f"Data file {name!r} not found in directory {str(d.resolve())!r}. "
            f"Files present there: {present if present else 'none'}."
        )
    return path


# ---------------------------------------------------------------- generic files
def _check_exists(path: str | os.PathLike) -> Path:
    p = Path(path).expanduser()
    if not p.is_file():
        raise DataFileNotFoundError(
            f"Data file {p.name!r} not found in directory {str(p.parent.resolve())!r}."
        )
    return p


def load_npz(
    path: str | os.PathLike, *, x_key: str = "X", y_key: str = "y"
) -> tuple[Any, np.ndarray | None]:
    """Load ``X`` and ``y`` from a NumPy ``.npz`` archive.

    A ``scipy.sparse.save_npz`` file (no ``X`` key) is read as a sparse ``X`` with
    ``y = None``.

    Parameters
    ----------
    path : str or path-like
    x_key, y_key : str
        Names of the arrays in the archive.

    Returns
    -------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,) or None
    """
    p = _check_exists(path)
    with np.load(p, allow_pickle=False) as d:
        if x_key not in d.files and "format" in d.files and "indptr" in d.files:
            return sp.load_npz(p).tocsr(), None
        if x_key not in d.files:
            raise ValueError(f"{p.name}: no array {x_key!r} (arrays: {d.files}).")
        X = d[x_key]
        y = d[y_key] if y_key in d.files else None
    return X, y


def load_svmlight(
    path: str | os.PathLike, *, n_features: int | None = None
) -> tuple[sp.csr_matrix, np.ndarray]:
    """Load an svmlight / libsvm text file (sparse ``X``).

    Parameters
    ----------
    path : str or path-like
    n_features : int, default=None
        Number of features (inferred when None).

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
    """
    from sklearn.datasets import load_svmlight_file

    p = _check_exists(path)
    X, y = load_svmlight_file(str(p), n_features=n_features)
    return X.tocsr(), y


def load_mat(
    path: str | os.PathLike, *, x_key: str | None = None, y_key: str | None = None
) -> tuple[Any, np.ndarray | None]:
    """Load ``X`` and ``y`` from a MATLAB ``.mat`` file (``scipy.io.loadmat``).

    Without keys, ``X`` is the first of ``X``, ``x``, ``fea``, ``data`` present and
    ``y`` the first of ``y``, ``Y``, ``gnd``, ``labels``, ``label``.

    Parameters
    ----------
    path : str or path-like
    x_key, y_key : str, default=None

    Returns
    -------
    X : ndarray or sparse matrix
    y : ndarray of shape (n_samples,) or None
    """
    from scipy.io import loadmat

    p = _check_exists(path)
    d = loadmat(str(p))
    keys = [k for k in d if not k.startswith("__")]

    def pick(given: str | None, options: tuple[str, ...]) -> str | None:
        if given is not None:
            if given not in d:
                raise ValueError(
                    f"{p.name}: no variable {given!r} (variables: {keys})."
                )
            return given
        return next((k for k in options if k in d), None)

    xk = pick(x_key, ("X", "x", "fea", "data"))
    if xk is None:
        raise ValueError(
            f"{p.name}: cannot tell which variable is X (variables: {keys})."
        )
    yk = pick(y_key, ("y", "Y", "gnd", "labels", "label"))
    X = d[xk]
    X = X.tocsr() if sp.issparse(X) else np.asarray(X)
    y = None if yk is None else np.asarray(d[yk]).ravel()
    return X, y


def load_csv(
    path: str | os.PathLike,
    *,
    label_column: int = -1,
    delimiter: str | None = None,
    skip_header: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Load a numeric CSV file whose label column is ``label_column`` (default last).

    A first line that is not numeric is taken as a header and skipped.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
    """
    p = _check_exists(path)
    if delimiter is None:
        with open(p) as fh:
            first = fh.readline()
        delimiter = ";" if first.count(";") > first.count(",") else ","
        if skip_header is None:
            try:
                [float(v) for v in first.strip().split(delimiter)]
                skip_header = 0
            except ValueError:
                skip_header = 1
    data = np.genfromtxt(p, delimiter=delimiter, skip_header=skip_header or 0)
    data = np.atleast_2d(data)
    if data.shape[1] < 2:
        raise ValueError(
            f"{p.name}: needs at least one feature column and a label column."
        )
    y = data[:, label_column]
    X = np.delete(data, label_column % data.shape[1], axis=1)
    if np.all(np.isfinite(y)) and np.all(y == np.round(y)):
        y = y.astype(np.int64)
    return X, y


def load_data_file(path: str | os.PathLike) -> tuple[Any, np.ndarray | None]:
    """Load a user file by its extension.

    ``.npz`` (arrays ``X``, ``y``), ``.mat``, ``.csv`` / ``.txt`` with a header-less
    or headed numeric table whose last column is the label, and anything else
    (``.svm``, ``.libsvm``, ``.svmlight``, ``.dat``) as svmlight.

    Returns
    -------
    X : ndarray or sparse matrix
    y : ndarray or None
    """
    p = _check_exists(path)
    ext = p.suffix.lower()
    if ext == ".npz":
        return load_npz(p)
    if ext == ".mat":
        return load_mat(p)
    if ext in (".csv", ".tsv", ".txt") and not _looks_svmlight(p):
        return load_csv(p, delimiter="\t" if ext == ".tsv" else None)
    return load_svmlight(p)


def _looks_svmlight(p: Path) -> bool:
    with open(p) as fh:
        first = fh.readline()
    return ":" in first


# ---------------------------------------------------------------- benchmarks
def _nonneg_labels(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Recode labels to 0..k-1 when the source uses -1 (kept otherwise)."""
    y = np.asarray(y).astype(np.int64).ravel()
    classes = np.unique(y)
    if classes.min() < 0:
        return np.searchsorted(classes, y), classes
    return y, classes


def _bunch(
    name: str, X: Any, y_src: np.ndarray, path: Path, d: Any, note: str
) -> Bunch:
    y, _ = _nonneg_labels(y_src)
    b = Bunch(
        name=name,
        X=X,
        y=y,
        y_original=np.asarray(y_src).ravel(),
        classes=np.unique(y),
        path=str(path),
        description=note,
        idx_labeled=None,
        idx_unlabeled=None,
    )
    for key in ("idx_labeled", "idx_unlabeled"):
        if d is not None and key in d.files:
            b[key] = np.asarray(d[key], dtype=np.intp)
    return b


def load_g50c(data_dir: str | os.PathLike | None = None) -> Bunch:
    """G50C (550 x 50, two Gaussians, Bayes error 5%); y: -1 -> 0, +1 -> 1."""
    p = _find_file("g50c.npz", data_dir)
    with np.load(p) as d:
        return _bunch(
            "g50c",
            d["X"].astype(np.float64),
            d["y"],
            p,
            d,
            "G50C, Sindhwani's file; labels -1/+1 recoded to 0/1.",
        )


def load_uspst(data_dir: str | os.PathLike | None = None) -> Bunch:
    """USPST (2007 x 256, digits 0-9), the Sindhwani/Melacci file."""
    p = _find_file("uspst.npz", data_dir)
    with np.load(p) as d:
        return _bunch(
            "uspst",
            d["X"].astype(np.float64),
            d["y"],
            p,
            d,
            "USPST, 10 classes (digits 0-9).",
        )


def load_uspst_b(data_dir: str | os.PathLike | None = None) -> Bunch:
    """USPST(B): digits 0-4 (label 0) against digits 5-9 (label 1)."""
    b = load_uspst(data_dir)
    digits = b.y
    b.y = (digits >= 5).astype(np.int64)
    b.y_original = digits
    b.classes = np.array([0, 1])
    b.name = "uspst_b"
    b.description = "USPST(B): first 5 digits (0-4 -> 0) vs the rest (5-9 -> 1)."
    return b


def load_pcmac(data_dir: str | os.PathLike | None = None) -> Bunch:
    """PCMAC (1946 x 7511 sparse tf-idf, 20-Newsgroups pc vs mac); y: -1/+1 -> 0/1."""
    px = _find_file("pcmac_X.npz", data_dir)
    py = _find_file("pcmac_y.npz", data_dir)
    X = sp.load_npz(px).tocsr().astype(np.float64)
    with np.load(py) as d:
        b = _bunch(
            "pcmac",
            X,
            d["y"],
            py,
            d,
            "PCMAC (Sindhwani's text1.mat); sparse X; labels -1/+1 -> 0/1.",
        )
    b.path = f"{px}, {py}"
    return b


def load_coil20(
    data_dir: str | os.PathLike | None = None, *, scaling: str = "unit_norm"
) -> Bunch:
    """COIL20 (1440 x 1024 grey images, 20 objects, labels 1-20).

    Parameters
    ----------
    data_dir : path-like, default=None
    scaling : {'unit_norm', 'max_norm', 'unit_interval', 'none'}, default='unit_norm'
        The file holds uint8 pixels, on which the kernel width sigma = 0.6 of
        Melacci & Belkin (2011, Table 8) gives an (almost) identity Gram matrix
        (median distance between images 3000; 11.7 for pixels / 255).

        - ``'unit_norm'``: each image scaled to unit Euclidean norm (median
          distance 0.80); changes the nearest neighbours (cosine distance).
        - ``'max_norm'``: one factor for the whole set, pixels divided by the
          largest image norm (median distance 0.60); nearest neighbours as for
          the raw pixels.  The scaling
          :func:`semisvm.experiments.run_reproduction` uses: it puts the paper's
          SVM and RLSC cells within the paper's spread
          (``reproduce/melacci2011/notes_coil20.md``).
        - ``'unit_interval'``: pixels / 255.
        - ``'none'``: raw pixel values.
    """
    if scaling not in ("unit_norm", "max_norm", "unit_interval", "none"):
        raise ValueError(
            f"scaling must be 'unit_norm', 'max_norm', 'unit_interval' or 'none', "
            f"got {scaling!r}."
        )
    p = _find_file("coil20.npz", data_dir)
    with np.load(p) as d:
        X = d["X"].astype(np.float64)
        if scaling == "unit_norm":
            X /= np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-12)
        elif scaling == "max_norm":
            X /= max(float(np.linalg.norm(X, axis=1).max()), 1e-12)
        elif scaling == "unit_interval":
            X /= 255.0
        b = _bunch(
            "coil20",
            X,
            d["y"],
            p,
            d,
            f"COIL20 (AdaGAE copy, not Sindhwani's), scaling={scaling}.",
        )
        b.y_binary_first10_vs_last10 = np.asarray(d["y_binary_first10_vs_last10"])
    return b


def load_coil20_b(
    data_dir: str | os.PathLike | None = None, *, scaling: str = "unit_norm"
) -> Bunch:
    """COIL20(B): objects 1-10 (label 0) against objects 11-20 (label 1)."""
    b = load_coil20(data_dir, scaling=scaling)
    b.y_original = b.y
    b.y = b.pop("y_binary_first10_vs_last10").astype(np.int64)
    b.classes = np.array([0, 1])
    b.name = "coil20_b"
    b.description = "COIL20(B): first 10 objects (0) vs last 10 (1); " + b.description
    return b


def load_usps_full(data_dir: str | os.PathLike | None = None) -> Bunch:
    """Full USPS (9298 x 256 in [0, 1]; ``is_test`` marks the 2007 test images)."""
    p = _find_file("usps_full.npz", data_dir)
    with np.load(p) as d:
        b = _bunch(
            "usps_full",
            d["X"].astype(np.float64),
            d["y"],
            p,
            d,
            "USPS 7291 train + 2007 test, values in [0, 1].",
        )
        b.is_test = np.asarray(d["is_test"], dtype=bool)
    return b


BENCHMARK_DATASETS: dict[str, Callable[..., Bunch]] = {
    "g50c": load_g50c,
    "uspst": load_uspst,
    "uspst_b": load_uspst_b,
    "pcmac": load_pcmac,
    "coil20": load_coil20,
    "coil20_b": load_coil20_b,
    "usps_full": load_usps_full,
}

_ALIASES = {
    "uspstb": "uspst_b",
    "uspst(b)": "uspst_b",
    "coil20b": "coil20_b",
    "coil20(b)": "coil20_b",
    "usps": "usps_full",
    "text": "pcmac",
}
_UNAVAILABLE = {
    "mnist3vs8": "MNIST3VS8 is not available in the data directory (not shipped).",
    "facemit": "FACEMIT is not available in the data directory (not shipped).",
}


def canonical_name(name: str) -> str:
    """Canonical benchmark name (``coil20b`` -> ``coil20_b``)."""
    key = name.strip().lower().replace("-", "_")
    key = _ALIASES.get(key, key)
    if key in _UNAVAILABLE:
        raise DataFileNotFoundError(_UNAVAILABLE[key])
    if key not in BENCHMARK_DATASETS:
        raise ValueError(
            f"Unknown data set {name!r}; known: {sorted(BENCHMARK_DATASETS)}."
        )
    return key


def load_benchmark(
    name: str, data_dir: str | os.PathLike | None = None, **options: Any
) -> Bunch:
    """Load a benchmark set by name (``g50c``, ``uspst``, ``uspst_b``, ``pcmac``,
    ``coil20``, ``coil20_b``, ``usps_full``; ``coil20b`` / ``uspstb`` also work).

    ``options`` go to the set's loader (``scaling`` for the COIL20 sets).

    Raises
    ------
    DataFileNotFoundError
        For MNIST3VS8 and FACEMIT (not available) and for missing files.
    """
    return BENCHMARK_DATASETS[canonical_name(name)](data_dir, **options)
