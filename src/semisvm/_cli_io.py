"""Reading data files and model files for the ``semisvm`` command line.

Tabular text (CSV/TSV, delimiter sniffed, header detected) and Parquet are read
with pandas; svmlight/libsvm with scikit-learn's loader; ``.npz`` with numpy.
Model files are written with skops (a zip file that is inspected before it is
loaded: only semisvm, scikit-learn and numpy types are trusted) when skops is
installed, else with joblib (a pickle: load only files you trust).

Every malformed input raises :class:`CLIError` with a one-line message that
names the file, the column or the option at fault.
"""

from __future__ import annotations

import csv
import datetime as _dt
import io
import math
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "CLIError",
    "Table",
    "read_table",
    "peek_columns",
    "iter_table",
    "split_labels",
    "check_empty_labels",
    "save_model",
    "load_model",
    "MODEL_FORMAT",
]

#: Name written in every model file; changes when the bundle layout changes.
MODEL_FORMAT = "semisvm-cli-model"
#: Layout version of the bundle.
MODEL_FORMAT_VERSION = 2

TEXT_EXT = {".csv", ".tsv", ".tab", ".txt", ".dat"}
PARQUET_EXT = {".parquet", ".pq"}
SVMLIGHT_EXT = {".svm", ".svmlight", ".libsvm"}
NPZ_EXT = {".npz"}
FORMATS = ("auto", "csv", "parquet", "svmlight", "npz")


class CLIError(Exception):
    """An input problem, reported to the user as one line (no traceback)."""


@dataclass
class Table:
    """Features, raw labels and column names of one data file (or chunk)."""

    X: Any
    labels: np.ndarray | None
    feature_names: list[str] | None
    label_name: str | None
    n_rows_before: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


def _pd():
    try:
        import pandas as pd
    except ImportError:
        raise CLIError(
            "reading CSV/TSV/Parquet files needs pandas: pip install 'semisvm[cli]' "
            "(npz and svmlight files work without it)"
        ) from None
    return pd


def detect_format(path: Path, fmt: str = "auto") -> str:
    """File format from ``--format`` or the extension (svmlight sniffed in text)."""
    if fmt != "auto":
        return fmt
    ext = path.suffix.lower()
    if ext in NPZ_EXT:
        return "npz"
    if ext in PARQUET_EXT:
        return "parquet"
    if ext in SVMLIGHT_EXT:
        return "svmlight"
    if ext in TEXT_EXT or ext == "":
        first = _first_line(path)
        # "label idx:val idx:val" with no delimiter-separated numeric layout
        tokens = first.split()
        if len(tokens) >= 2 and all(":" in t for t in tokens[1:]):
            return "svmlight"
        return "csv"
    raise CLIError(
        f"{path}: unknown file type {ext!r}; use .csv/.tsv/.txt, .parquet, .npz, "
        ".svm/.libsvm, or say --format"
    )


def _first_line(path: Path) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.strip():
                    return line
    except OSError as exc:
        raise CLIError(f"{path}: cannot read ({exc.strerror})") from None
    return ""


def _check_file(path: str | Path, what: str = "data file") -> Path:
    p = Path(path)
    if not p.exists():
        raise CLIError(f"{what} {str(p)!r} not found (in {str(p.resolve().parent)!r})")
    if p.is_dir():
        raise CLIError(f"{what} {str(p)!r} is a directory, not a file")
    return p


# ----------------------------------------------------------------- text tables
def sniff_delimiter(path: Path, delimiter: str | None) -> str:
    """The delimiter given (``\\t`` accepted), else sniffed from the first lines."""
    if delimiter is not None:
        return "\t" if delimiter in ("\\t", "tab", "TAB") else delimiter
    with open(path, encoding="utf-8", errors="replace") as fh:
        sample = "".join(line for _, line in zip(range(50), fh, strict=False))
    if not sample.strip():
        raise CLIError(f"{path}: the file is empty")
    try:
        return csv.Sniffer().sniff(sample, delimiters=",\t;| ").delimiter
    except csv.Error:
        if "\t" in sample:
            return "\t"
        return ","


def _is_number(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


def _has_header(first: list[str], rest: list[list[str]]) -> bool:
    """A header row is one with a non-numeric cell over a column of numbers."""
    for j, cell in enumerate(first):
        if _is_number(cell) or cell == "":
            continue
        col = [r[j] for r in rest if j < len(r) and r[j] != ""]
        if col and all(_is_number(c) for c in col):
            return True
    # every cell a distinct non-numeric word and the next rows are numbers
    if (
        rest
        and all(c and not _is_number(c) for c in first)
        and len(set(first)) == len(first)
    ):
        return any(_is_number(c) for r in rest for c in r)
    return False


def _read_text_raw(
    path: Path, delimiter: str | None, header: str, chunksize: int | None
) -> tuple[Iterator[Any], str, list[str] | None]:
    """Chunks of the file as string DataFrames, the delimiter and the header."""
    pd = _pd()
    sep = sniff_delimiter(path, delimiter)
    with open(path, encoding="utf-8", errors="replace") as fh:
        head_lines = [line for _, line in zip(range(20), fh, strict=False)]
    rows = list(csv.reader(io.StringIO("".join(head_lines)), delimiter=sep))
    rows = [r for r in rows if r]
    if not rows:
        raise CLIError(f"{path}: the file is empty")
    if header == "auto":
        has_header = _has_header(
            [c.strip() for c in rows[0]], [[c.strip() for c in r] for r in rows[1:]]
        )
    else:
        has_header = header == "yes"
    names = [c.strip() for c in rows[0]] if has_header else None
    if names is not None and len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        raise CLIError(
            f"{path}: duplicate column name(s) in the header: {', '.join(dup)}"
        )
    ncol = len(rows[0])
    _check_rectangular(path, sep, ncol)
    # pandas' to_csv() writes the index as a first column with an empty name:
    # it is a row number, not a feature (pandas' read_csv(index_col=0) convention)
    index_col = names is not None and ncol > 1 and names[0] in ("", "Unnamed: 0")
    if names is not None and index_col:
        names = names[1:]
    try:
        reader = pd.read_csv(
            path,
            sep=sep,
            header=None,
            skiprows=1 if has_header else 0,
            dtype=str,
            keep_default_na=False,
            skipinitialspace=True,
            chunksize=chunksize,
            engine="c",
            skip_blank_lines=True,
        )
    except pd.errors.EmptyDataError:
        raise CLIError(f"{path}: no data rows") from None
    except pd.errors.ParserError as exc:
        raise CLIError(f"{path}: {_parser_message(exc, sep)}") from None
    chunks = [reader] if chunksize is None else reader

    def gen() -> Iterator[Any]:
        offset = 0
        try:
            for df in chunks:
                if df.shape[1] != ncol or df.isna().to_numpy().any():
                    bad = _ragged_row(df, ncol)
                    line = offset + bad + 1 + (1 if has_header else 0)
                    raise CLIError(
                        f"{path}: ragged rows: line {line} has a different number of "
                        f"fields than the first line ({ncol}, delimiter {sep!r})"
                    )
                offset += df.shape[0]
                yield df.iloc[:, 1:] if index_col else df
        except pd.errors.ParserError as exc:
            raise CLIError(f"{path}: {_parser_message(exc, sep)}") from None

    return gen(), sep, names


def _check_rectangular(path: Path, sep: str, ncol: int) -> None:
    """Every non-blank line has ``ncol`` fields (pandas pads short rows silently)."""
    with open(path, encoding="utf-8", errors="replace", newline="") as fh:
        for line_no, row in enumerate(csv.reader(fh, delimiter=sep), start=1):
            if row and len(row) != ncol and any(c.strip() for c in row):
                raise CLIError(
                    f"{path}: ragged rows: line {line_no} has {len(row)} fields, the "
                    f"first line {ncol} (delimiter {sep!r})"
                )


def _ragged_row(df: Any, ncol: int) -> int:
    if df.shape[1] > ncol:
        extra = df.iloc[:, ncol:].notna().to_numpy().any(axis=1)
        if extra.any():
            return int(np.flatnonzero(extra)[0])
    missing = df.isna().to_numpy().any(axis=1)
    return int(np.flatnonzero(missing)[0]) if missing.any() else 0


def _parser_message(exc: Exception, sep: str) -> str:
    msg = str(exc).strip().splitlines()[-1]
    if "Expected" in msg and "fields" in msg:
        return (
            f"ragged rows: {msg.replace('Error tokenizing data. C error: ', '')} "
            f"(delimiter {sep!r})"
        )
    return f"cannot parse as a table with delimiter {sep!r}: {msg}"


def _resolve_label_column(
    path: Path, spec: str | None, names: list[str] | None, ncol: int
) -> int | None:
    """Index of the label column; ``spec`` is a name, an index, ``last`` or ``none``."""
    if spec is None or spec.lower() == "last":
        return ncol - 1
    if spec.lower() == "none":
        return None
    if names is not None and spec in names:
        return names.index(spec)
    try:
        k = int(spec)
    except ValueError:
        shown = (
            ", ".join(names[:12]) + (" ..." if len(names) > 12 else "")
            if names
            else "the file has no header row: give a column index"
        )
        raise CLIError(
            f"{path}: no label column {spec!r} (columns: {shown}) "
            "(option --label-column)"
        ) from None
    if not -ncol <= k < ncol:
        raise CLIError(
            f"{path}: --label-column {k} is out of range: the file has {ncol} columns"
        )
    return k % ncol


def _numeric_features(
    path: Path, df: Any, names: list[str], row0: int, header_lines: int
) -> np.ndarray:
    pd = _pd()
    out = np.empty(df.shape, dtype=np.float64)
    for j in range(df.shape[1]):
        col = df.iloc[:, j]
        vals = pd.to_numeric(col.str.strip(), errors="coerce").to_numpy(
            dtype=np.float64
        )
        bad = ~np.isfinite(vals)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            cell = col.iloc[i]
            what = "empty" if cell.strip() == "" else f"{cell!r}"
            raise CLIError(
                f"{path}: feature column {names[j]!r}, line {row0 + i + 1 + header_lines}: "
                f"{what} is not a finite number ({int(bad.sum())} such cell(s) in this "
                "column; impute or drop them, or choose the label with --label-column)"
            )
        out[:, j] = vals
    return out


def iter_table(
    path: str | Path,
    *,
    label_column: str | None = "last",
    fmt: str = "auto",
    delimiter: str | None = None,
    header: str = "auto",
    chunksize: int | None = None,
    feature_columns: Sequence[str] | None = None,
) -> Iterator[Table]:
    """Read a data file as :class:`Table` chunks of at most ``chunksize`` rows.

    Parameters
    ----------
    path : str or Path
    label_column : str or None, default='last'
        Column name, integer index (negative counts from the end), ``'last'`` or
        ``'none'`` (no label column).  For npz and svmlight files the labels are
        the ``y`` array / the first field whatever this says, unless ``'none'``.
    fmt : {'auto', 'csv', 'parquet', 'svmlight', 'npz'}, default='auto'
    delimiter : str, default=None
        Sniffed when None.
    header : {'auto', 'yes', 'no'}, default='auto'
    chunksize : int, default=None
        Rows per chunk (text files are then read chunk by chunk); None reads all.
    feature_columns : list of str, default=None
        Names of the feature columns, in this order (a model's feature names): a
        file with a header then has only these parsed as features, the other
        columns are ignored and listed in ``Table.extra['ignored_columns']``; a
        name missing from the header is an error.  Files without column names
        (no header row, npz, svmlight) ignore it: their features are by position.
    """
    p = _check_file(path)
    kind = detect_format(p, fmt)
    if kind == "csv":
        yield from _iter_text(
            p, label_column, delimiter, header, chunksize, feature_columns
        )
        return
    if kind == "parquet":
        table = _read_parquet(p, label_column, feature_columns)
    elif kind == "npz":
        table = _read_npz(p, label_column)
    else:
        table = _read_svmlight(p, label_column)
    n = table.X.shape[0]
    step = n if not chunksize else chunksize
    for s in range(0, max(n, 1), max(step, 1)):
        yield Table(
            table.X[s : s + step],
            None if table.labels is None else table.labels[s : s + step],
            table.feature_names,
            table.label_name,
            s,
            table.extra,
        )


def _select_features(
    p: Path, names: list[str], label_idx: int | None, wanted: Sequence[str] | None
) -> tuple[list[int], list[str]]:
    """Indices of the feature columns and the names of the ignored columns."""
    others = [j for j in range(len(names)) if j != label_idx]
    if wanted is None:
        return others, []
    missing = [c for c in wanted if c not in names]
    if missing:
        raise CLIError(
            f"{p}: missing feature column(s) the model was trained on: "
            f"{', '.join(missing[:8])}{' ...' if len(missing) > 8 else ''} (the file "
            f"has: {', '.join(names[:12])}{' ...' if len(names) > 12 else ''})"
        )
    cols = [names.index(c) for c in wanted]
    return cols, [names[j] for j in others if j not in cols]


def _iter_text(
    p: Path,
    label_column: str | None,
    delimiter: str | None,
    header: str,
    chunksize: int | None,
    feature_columns: Sequence[str] | None = None,
) -> Iterator[Table]:
    chunks, sep, names = _read_text_raw(p, delimiter, header, chunksize)
    label_idx: int | None = None
    feature_names: list[str] | None = None
    feat_cols: list[int] = []
    ignored: list[str] = []
    row0 = 0
    for df in chunks:
        ncol = df.shape[1]
        if row0 == 0:
            label_idx = _resolve_label_column(p, label_column, names, ncol)
            if ncol - (label_idx is not None) < 1:
                raise CLIError(
                    f"{p}: found {ncol} column(s) with delimiter {sep!r}: no feature "
                    "column left (wrong delimiter? say --delimiter)"
                )
            all_names = names or [f"column {j}" for j in range(ncol)]
            feat_cols, ignored = _select_features(
                p, all_names, label_idx, feature_columns if names else None
            )
            feature_names = [all_names[j] for j in feat_cols]
        X = _numeric_features(
            p, df.iloc[:, feat_cols], feature_names or [], row0, 1 if names else 0
        )
        labels = None
        if label_idx is not None:
            labels = df.iloc[:, label_idx].str.strip().to_numpy(dtype=object)
        yield Table(
            X,
            labels,
            feature_names if names else None,
            None
            if label_idx is None
            else (names[label_idx] if names else str(label_idx)),
            row0,
            {
                "delimiter": sep,
                "header_lines": 1 if names else 0,
                "ignored_columns": ignored,
            },
        )
        row0 += df.shape[0]
    if row0 == 0:
        raise CLIError(f"{p}: no data rows")


def _read_parquet(
    p: Path, label_column: str | None, feature_columns: Sequence[str] | None = None
) -> Table:
    pd = _pd()
    try:
        df = pd.read_parquet(p)
    except ImportError:
        raise CLIError(
            f"{p}: reading Parquet needs pyarrow: pip install 'semisvm[cli]'"
        ) from None
    except Exception as exc:  # noqa: BLE001 - any reader failure is a bad file
        raise CLIError(
            f"{p}: not a readable Parquet file ({type(exc).__name__})"
        ) from None
    names = [str(c) for c in df.columns]
    if not names or df.shape[0] == 0:
        raise CLIError(f"{p}: no data rows")
    label_idx = _resolve_label_column(p, label_column, names, len(names))
    feat, ignored = _select_features(p, names, label_idx, feature_columns)
    X = np.empty((df.shape[0], len(feat)))
    for k, j in enumerate(feat):
        col = df.iloc[:, j]
        vals = pd.to_numeric(col, errors="coerce").to_numpy(dtype=np.float64)
        bad = ~np.isfinite(vals)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise CLIError(
                f"{p}: feature column {names[j]!r}, row {i}: {col.iloc[i]!r} is not a "
                f"finite number ({int(bad.sum())} such cell(s) in this column)"
            )
        X[:, k] = vals
    labels = None
    if label_idx is not None:
        labels = df.iloc[:, label_idx].to_numpy(dtype=object)
    return Table(
        X,
        labels,
        [names[j] for j in feat],
        None if label_idx is None else names[label_idx],
        0,
        {"ignored_columns": ignored},
    )


def _read_npz(p: Path, label_column: str | None) -> Table:
    try:
        with np.load(p, allow_pickle=False) as f:
            keys = set(f.files)
            if "X" not in keys:
                raise CLIError(
                    f"{p}: an npz data file needs an array 'X' (found: "
                    f"{', '.join(sorted(keys)) or 'none'})"
                )
            X = np.asarray(f["X"])
            y = np.asarray(f["y"]) if "y" in keys and label_column != "none" else None
    except CLIError:
        raise
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        raise CLIError(
            f"{p}: not a readable npz file ({type(exc).__name__}: "
            f"{str(exc).splitlines()[0] if str(exc) else ''})"
        ) from None
    if X.ndim != 2:
        raise CLIError(f"{p}: array 'X' must be 2-D, got shape {X.shape}")
    if X.dtype.kind not in "iufb":
        raise CLIError(f"{p}: array 'X' is not numeric (dtype {X.dtype})")
    X = X.astype(np.float64, copy=False)
    if not np.isfinite(X).all():
        r, c = np.argwhere(~np.isfinite(X))[0]
        raise CLIError(f"{p}: array 'X' has a non-finite value at row {r}, column {c}")
    if y is not None and y.shape[0] != X.shape[0]:
        raise CLIError(f"{p}: 'y' has {y.shape[0]} entries, 'X' {X.shape[0]} rows")
    return Table(X, None if y is None else y.astype(object), None, "y")


def _read_svmlight(p: Path, label_column: str | None) -> Table:
    from sklearn.datasets import load_svmlight_file

    try:
        X, y = load_svmlight_file(str(p))
    except (ValueError, OSError, UnicodeDecodeError) as exc:
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise CLIError(f"{p}: not a readable svmlight/libsvm file ({msg})") from None
    if not np.isfinite(X.data).all():
        raise CLIError(f"{p}: non-finite feature values")
    labels = None if label_column == "none" else y.astype(object)
    return Table(X.tocsr(), labels, None, "label")


def peek_columns(
    path: str | Path,
    *,
    fmt: str = "auto",
    delimiter: str | None = None,
    header: str = "auto",
) -> tuple[str, int | None, list[str] | None]:
    """Format, number of columns and header names of a file (no parsing of values).

    ``(kind, None, None)`` for npz and svmlight files, whose labels are separate.
    """
    p = _check_file(path)
    kind = detect_format(p, fmt)
    if kind == "csv":
        chunks, _, names = _read_text_raw(p, delimiter, header, 2)
        first = next(chunks, None)
        if first is None:
            raise CLIError(f"{p}: no data rows")
        return kind, int(first.shape[1]), names
    if kind == "parquet":
        try:
            import pyarrow.parquet as pq

            names = [
                str(c)
                for c in pq.read_schema(p).names
                if not str(c).startswith("__index_level_")
            ]
        except ImportError:
            raise CLIError(
                f"{p}: reading Parquet needs pyarrow: pip install 'semisvm[cli]'"
            ) from None
        except Exception as exc:  # noqa: BLE001 - any reader failure is a bad file
            raise CLIError(
                f"{p}: not a readable Parquet file ({type(exc).__name__})"
            ) from None
        return kind, len(names), names
    return kind, None, None


def read_table(path: str | Path, **kwargs: Any) -> Table:
    """The whole file as one :class:`Table` (see :func:`iter_table`)."""
    import scipy.sparse as sp

    parts = list(iter_table(path, **kwargs))
    first = parts[0]
    if len(parts) == 1:
        return first
    stack = sp.vstack if sp.issparse(first.X) else np.vstack
    X = stack([t.X for t in parts])
    labels = None if first.labels is None else np.concatenate([t.labels for t in parts])
    return Table(X, labels, first.feature_names, first.label_name, 0, first.extra)


# ----------------------------------------------------------------- labels
def _is_missing(v: Any) -> bool:
    """An empty label: None, NaN, or a cell with no text."""
    return (
        v is None
        or (isinstance(v, float) and math.isnan(v))
        or (isinstance(v, str) and v.strip() == "")
    )


def row_names(
    rows: Sequence[int], row0: int = 0, extra: dict[str, Any] | None = None
) -> str:
    """``'lines 3, 7'`` (text files: line numbers) or ``'rows 0, 4'`` (0-based)."""
    extra = extra or {}
    if "header_lines" in extra:
        first, what = row0 + 1 + int(extra["header_lines"]), "line"
    else:
        first, what = row0, "row"
    shown = ", ".join(str(first + int(i)) for i in rows[:10])
    more = f", ... ({len(rows)} in all)" if len(rows) > 10 else ""
    return f"{what}{'s' if len(rows) > 1 else ''} {shown}{more}"


def check_empty_labels(
    path: str | Path,
    labels: np.ndarray,
    markers: Sequence[str],
    row0: int = 0,
    extra: dict[str, Any] | None = None,
) -> np.ndarray:
    """Mask of the empty label cells; an error naming them if ``''`` is no marker.

    An empty label is never a class: it marks an unlabeled row when ``''`` is a
    marker (it is one of the defaults) and is an error otherwise.
    """
    empty = np.fromiter(
        (_is_missing(v) for v in labels), dtype=bool, count=labels.shape[0]
    )
    if empty.any() and "" not in list(markers):
        raise CLIError(
            f"{path}: empty label cell(s) at {row_names(np.flatnonzero(empty).tolist(), row0, extra)}"
            ": an empty label is never a class, and '' is not an unlabeled marker here "
            "(the default markers are off: --no-default-unlabeled); fill them in, or "
            "add --unlabeled '' to make them unlabeled rows"
        )
    return empty


def split_labels(
    path: str | Path,
    labels: np.ndarray,
    markers: Sequence[str],
    extra: dict[str, Any] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Unlabeled mask, sorted class names and codes (-1 unlabeled) of a label column.

    A label is unlabeled when it is empty (empty cell, NaN, None) and ``''`` is
    a marker (an empty label with no ``''`` marker is an error, never a class),
    or when its text equals a marker, or when it is a number equal to a numeric
    marker (``-1`` matches ``-1.0``).
    """
    markers = list(markers)
    num_markers = {float(m) for m in markers if _is_number(m)}
    text_markers = {m.strip().lower() for m in markers}
    empty = check_empty_labels(path, labels, markers, 0, extra)
    unl = np.zeros(labels.shape[0], dtype=bool)
    for i, v in enumerate(labels):
        if empty[i]:
            unl[i] = True
        elif isinstance(v, str):
            unl[i] = v.strip().lower() in text_markers or (
                _is_number(v) and float(v) in num_markers
            )
        else:
            try:
                unl[i] = float(v) in num_markers or str(v) in markers
            except (TypeError, ValueError):
                unl[i] = str(v) in markers
    lab = labels[~unl]
    if lab.size == 0:
        raise CLIError(
            f"{path}: no labeled rows: every label is an unlabeled marker "
            f"({', '.join(repr(m) for m in markers)}; option --unlabeled)"
        )
    kinds = {type(v) for v in lab}
    if len(kinds) > 1 and str in kinds:
        lab = np.array([str(v) for v in lab], dtype=object)
    try:
        classes = np.unique(lab)
    except TypeError:
        classes = np.unique(lab.astype(str)).astype(object)
    if classes.size < 2:
        hint = ""
        if any(_is_number(m) and float(m) == -1 for m in markers):
            hint = (
                " (-1 is an unlabeled marker by default: for -1/+1 labels say "
                "--no-default-unlabeled, with --unlabeled '' if empty cells mark "
                "the unlabeled rows)"
            )
        raise CLIError(
            f"{path}: the labeled rows hold only one class ({format_label(classes[0])!r}); "
            f"at least two are needed{hint}"
        )
    codes = np.full(labels.shape[0], -1, dtype=np.int64)
    codes[~unl] = np.searchsorted(classes, lab)
    return unl, classes, codes


def format_label(v: Any) -> str:
    """A class name as written back to files (integers without '.0')."""
    if isinstance(v, float | np.floating) and float(v).is_integer():
        return str(int(v))
    if isinstance(v, np.generic):
        return str(v.item())
    return str(v)


# ----------------------------------------------------------------- models
_TRUSTED_PREFIXES = ("semisvm.", "sklearn.", "numpy.", "scipy.sparse.", "builtins.")


def save_model(bundle: dict[str, Any], path: str | Path, fmt: str = "auto") -> str:
    """Write ``bundle`` with skops (``fmt='skops'``) or joblib; returns the format."""
    from . import __version__

    bundle = {
        **bundle,
        "format": MODEL_FORMAT,
        "format_version": MODEL_FORMAT_VERSION,
        "semisvm_version": __version__,
        "created": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
    }
    if fmt == "auto":
        try:
            import skops.io  # noqa: F401

            fmt = "skops"
        except ImportError:
            fmt = "joblib"
    try:
        if fmt == "skops":
            try:
                import skops.io as sio
            except ImportError:
                raise CLIError(
                    "--model-format skops needs skops: pip install 'semisvm[cli]'"
                ) from None
            sio.dump(bundle, str(path))
        else:
            import joblib

            joblib.dump(bundle, str(path))
    except OSError as exc:
        raise CLIError(
            f"cannot write model file {str(path)!r} ({exc.strerror})"
        ) from None
    return fmt


def load_model(
    path: str | Path, *, allow_version_mismatch: bool = False
) -> dict[str, Any]:
    """Read and check a model file written by :func:`save_model`."""
    from . import __version__

    p = _check_file(path, "model file")
    bundle: Any
    if zipfile.is_zipfile(p):
        try:
            import skops.io as sio
        except ImportError:
            raise CLIError(
                f"{p}: a skops model file: reading it needs skops "
                "(pip install 'semisvm[cli]')"
            ) from None
        try:
            untrusted = sio.get_untrusted_types(file=str(p))
        except Exception:  # noqa: BLE001 - any failure means "not a skops file"
            raise CLIError(f"{p}: not a model written by 'semisvm fit'") from None
        bad = [t for t in untrusted if not t.startswith(_TRUSTED_PREFIXES)]
        if bad:
            raise CLIError(
                f"{p}: refusing to load a model file with foreign types: {', '.join(bad)}"
            )
        try:
            bundle = sio.load(str(p), trusted=untrusted)
        except Exception as exc:  # noqa: BLE001
            raise CLIError(
                f"{p}: cannot load the model ({type(exc).__name__}: "
                f"{str(exc).splitlines()[0] if str(exc) else ''})"
            ) from None
    else:
        import joblib

        try:
            bundle = joblib.load(p)
        except Exception:  # noqa: BLE001 - garbage gives anything from EOF to KeyError
            raise CLIError(
                f"{p}: not a model written by 'semisvm fit' (unreadable)"
            ) from None
    if not isinstance(bundle, dict) or bundle.get("format") not in (
        MODEL_FORMAT,
        "semisvm-cli-model-1",
    ):
        raise CLIError(f"{p}: not a model written by 'semisvm fit'")
    if (
        bundle.get("format") == "semisvm-cli-model-1"
        or bundle.get("format_version") != MODEL_FORMAT_VERSION
    ):
        raise CLIError(
            f"{p}: model file layout {bundle.get('format_version', 1)} is from another "
            f"semisvm version (this one reads layout {MODEL_FORMAT_VERSION}): refit it"
        )
    written = bundle.get("semisvm_version")
    if written != __version__ and not allow_version_mismatch:
        raise CLIError(
            f"{p}: written by semisvm {written}, this is semisvm {__version__}: refit "
            "the model, or pass --allow-version-mismatch to use it anyway"
        )
    return bundle
