"""Command line interface: ``semisvm fit | predict | score | info | reproduce``.

Examples
--------
Train a LapSVM on a CSV file whose column ``y`` holds class names, with blank
cells for the unlabeled rows, then label another file::

    semisvm fit data.csv --label-column y -o model
    semisvm predict model query.csv -o predictions.csv
    semisvm score model test.csv --label-column y --json

Reproduce the experiments of Melacci & Belkin (2011) on G50C with 2 splits
(needs the benchmark data, see ``semisvm reproduce --help``)::

    semisvm reproduce --datasets g50c --splits 2 --out res

Every estimator option (``semisvm fit --help``) is generated from the
estimator's signature and numpydoc docstring, so the command line follows the
Python API.  Input errors are reported as one line naming the file, column or
option (exit status 1; usage errors 2); other errors are printed whole (a
memory refusal with its advice lines); ``--traceback`` shows the Python
traceback instead.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import importlib
import inspect
import json
import numbers
import os
import platform
import re
import shlex
import sys
import tempfile
import time
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, NoReturn

import numpy as np

from . import __version__
from ._cli_io import (
    FORMATS,
    CLIError,
    Table,
    check_empty_labels,
    format_label,
    iter_table,
    load_model,
    peek_columns,
    read_table,
    save_model,
    split_labels,
)
from ._validation import Interval, Options, validate_params

__all__ = ["main", "build_parser", "estimator_options"]

#: Estimators the command line can train: name -> (module, class).
MODELS: dict[str, tuple[str, str]] = {
    "lapsvm": ("semisvm.models", "LapSVM"),
    "laprls": ("semisvm.models", "LapRLS"),
}
#: Estimator parameters with no command-line option (and why).
SKIPPED_PARAMS = {
    "verbose": "set by --verbose",
    "record_history": "no use outside Python",
    "kernel_params": "only for callable kernels",
    "options": "each option of SolverOptions is an option of its own",
}
#: Constraints of the command-line level options (checked like estimator parameters).
_CLI_CONSTRAINTS: dict[str, list] = {
    "batch_size": [Interval(numbers.Integral, 1, None)],
    "header": [Options(("auto", "yes", "no"))],
    "format": [Options(FORMATS)],
    "model_format": [Options(("auto", "skops", "joblib"))],
    "sigma": [None, Interval(numbers.Real, 0, None, closed="neither")],
}
#: labels that mark an unlabeled row; --unlabeled adds to them and
#: --no-default-unlabeled drops them (text compared case-insensitively; -1 also
#: as a number)
_DEFAULT_UNLABELED = ("", "-1", "?", "NA", "N/A", "nan", "unknown", "unlabeled")
#: header names taken as the label column by --label-column auto
_LABEL_NAMES = ("label", "labels", "y", "class", "target")


# ----------------------------------------------------------------- parser
class _Parser(argparse.ArgumentParser):
    """argparse with a one-line error message (no usage dump)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def _estimator_class(name: str) -> type[Any]:
    module, cls = MODELS[name]
    return getattr(importlib.import_module(module), cls)


def _docstring_params(cls: type) -> dict[str, tuple[str, str]]:
    """``name -> (type line, description)`` from a numpydoc class docstring."""
    try:
        from sklearn.externals._numpydoc.docscrape import NumpyDocString
    except ImportError:  # pragma: no cover - scikit-learn moved its vendored copy
        from numpydoc.docscrape import NumpyDocString
    doc = NumpyDocString(inspect.getdoc(cls) or "")
    out: dict[str, tuple[str, str]] = {}
    for p in doc["Parameters"]:
        desc = " ".join(line.strip() for line in p.desc)
        for name in p.name.split(","):
            out[name.strip()] = (p.type, desc)
    return out


#: LaTeX commands of the docstrings' math, as plain text for --help
_TEX_WORDS = {
    "lceil": "ceil(",
    "rceil": ")",
    "lfloor": "floor(",
    "rfloor": ")",
    "ge": ">=",
    "geq": ">=",
    "le": "<=",
    "leq": "<=",
    "approx": "~",
    "cdot": "*",
    "times": "x",
    "ldots": "...",
    "cdots": "...",
    "dots": "...",
    "in": "in",
    "infty": "inf",
    "to": "->",
    "ne": "!=",
    "neq": "!=",
    "sum": "sum",
    "min": "min",
    "max": "max",
    "ln": "ln",
    "log": "log",
    "exp": "exp",
    "sqrt": "sqrt",
    "mathbf": "",
    "mathrm": "",
    "operatorname": "",
    "mathcal": "",
    "tfrac": "",
    "frac": "",
    "left": "",
    "right": "",
    "big": "",
    "Big": "",
    "quad": " ",
    "qquad": " ",
    "top": "T",
}


def _plain_math(expr: str) -> str:
    """One :math: expression as readable text: ``K\\alpha`` -> ``K alpha``."""
    expr = expr.replace("\\|", "||").replace("\\{", "{").replace("\\}", "}")
    expr = re.sub(
        r"\\([A-Za-z]+)", lambda m: f" {_TEX_WORDS.get(m.group(1), m.group(1))} ", expr
    )
    expr = re.sub(r"[{}]", "", expr)
    expr = re.sub(r"\s+", " ", expr).strip()
    expr = re.sub(r"\s*([_^])\s*", r"\1", expr)
    expr = re.sub(r"\(\s+", "(", expr)
    return re.sub(r"\s+\)", ")", expr)


def _plain(text: str) -> str:
    """reST to plain text for --help (and argparse's %-formatting)."""
    text = re.sub(r":math:`([^`]*)`", lambda m: _plain_math(m.group(1)), text)
    text = re.sub(r":\w+:`~?([^`]*)`", r"\1", text)
    if "\\" in text:  # math outside :math: roles
        text = _plain_math(text)
    text = text.replace("``", "")
    return text.replace("%", "%%")


def estimator_options() -> dict[str, dict[str, Any]]:
    """Command-line options of the trainable estimators, from their docstrings.

    Returns
    -------
    dict
        ``parameter name -> {'flag', 'help', 'models', 'constraints'}`` for every
        ``__init__`` parameter of the estimators in ``MODELS`` except those in
        ``SKIPPED_PARAMS``, and for every field of their ``options``
        (:class:`~semisvm.SolverOptions`; ``'option': True``).  The help is the
        parameter's numpydoc type and description, with each estimator's default.
    """
    from .models._options import OPTION_CONSTRAINTS, SolverOptions

    opts: dict[str, dict[str, Any]] = {}
    for model in MODELS:
        cls = _estimator_class(model)
        sources = [
            (
                _docstring_params(cls),
                inspect.signature(cls.__init__),
                getattr(cls, "_parameter_constraints", {}),
                False,
            )
        ]
        if "options" in inspect.signature(cls.__init__).parameters:
            sources.append(
                (
                    _docstring_params(SolverOptions),
                    inspect.signature(SolverOptions.__init__),
                    OPTION_CONSTRAINTS,
                    True,
                )
            )
        for docs, sig, constraints, is_option in sources:
            _add_estimator_options(opts, model, docs, sig, constraints, is_option)
    for entry in opts.values():
        defaults = "; ".join(f"{m}: {v!r}" for m, v in entry["models"].items())
        text = entry["help"]
        only = (
            ""
            if len(entry["models"]) == len(MODELS)
            else f" [only {', '.join(entry['models'])}]"
        )
        kind = f"{entry['type']}. " if entry["type"] else ""
        text = f"{text} " if text else ""
        entry["help"] = _plain(f"{kind}{text}Default {defaults}.{only}")
    return opts


def _add_estimator_options(
    opts: dict[str, dict[str, Any]],
    model: str,
    docs: dict[str, tuple[str, str]],
    sig: inspect.Signature,
    constraints: dict[str, list],
    is_option: bool,
) -> None:
    """The entries of one signature (an estimator's or SolverOptions')."""
    for name, prm in sig.parameters.items():
        if (
            name == "self"
            or name in SKIPPED_PARAMS
            or prm.kind in (prm.VAR_KEYWORD, prm.VAR_POSITIONAL)
        ):
            continue
        entry = opts.setdefault(
            name,
            {
                "flag": "--" + name.replace("_", "-"),
                "models": {},
                "help": "",
                "type": "",
                "constraints": constraints.get(name, []),
                "option": is_option,
            },
        )
        entry["models"][model] = prm.default
        if not entry["help"] and name in docs:
            entry["type"] = docs[name][0].split(", default")[0]
            entry["help"] = docs[name][1]


def _parse_value(text: str, constraints: list) -> Any:
    """A command-line string as the Python value an estimator parameter expects."""
    low = text.strip().lower()
    if low == "none" and (None in constraints or not constraints):
        return None
    if "boolean" in constraints and low in ("true", "false", "yes", "no", "1", "0"):
        return low in ("true", "yes", "1")
    if text.strip()[:1] in "{[":
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            pass
    kinds = {c.type for c in constraints if isinstance(c, Interval)}
    if numbers.Integral in kinds or "random_state" in constraints:
        try:
            return int(text)
        except ValueError:
            pass
    if numbers.Real in kinds or numbers.Integral in kinds:
        try:
            return float(text)
        except ValueError:
            pass
    if not constraints:
        for conv in (int, float):
            try:
                return conv(text)
            except ValueError:
                pass
    return text


def _add_common(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("output and diagnostics")
    g.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=0,
        help="progress on stderr (-vv: also solver iterations)",
    )
    g.add_argument(
        "--json",
        action="store_true",
        help="print a JSON summary on stdout (for scripts)",
    )
    g.add_argument(
        "--traceback",
        action="store_true",
        help="show the Python traceback of an error instead of one line",
    )


def _add_input(p: argparse.ArgumentParser, *, label_default: str) -> None:
    g = p.add_argument_group(
        "input file",
        "CSV/TSV/TXT (delimiter sniffed, header detected), Parquet, svmlight/libsvm "
        "or npz (arrays X, y).",
    )
    g.add_argument(
        "--label-column",
        default=label_default,
        metavar="COL",
        help="label column: a header name, an index (0 = first, -1 = last), "
        "'last', 'none' or 'auto' (fit: a column named label, y, class or "
        "target, else the last; predict/score: the training label column "
        f"when present) (default: {label_default})",
    )
    g.add_argument(
        "--unlabeled",
        action="append",
        metavar="MARK",
        default=None,
        help="label text that marks an unlabeled row, added to the default "
        "markers; repeat for several; '' is an empty cell. Defaults: an "
        "empty cell, -1, ?, NA, N/A, nan, unknown, unlabeled (text in any "
        "case; predict and score use the markers stored in the model). An "
        "empty label cell is never a class",
    )
    g.add_argument(
        "--no-default-unlabeled",
        dest="no_default_unlabeled",
        action="store_true",
        help="drop the default markers (predict, score: the model's): only "
        "the --unlabeled markers mark unlabeled rows, so -1 can be a class; "
        "an empty label cell is then an error naming its rows, unless "
        "--unlabeled '' is given",
    )
    g.add_argument(
        "--format",
        choices=FORMATS,
        default="auto",
        help="file format (default: from the extension)",
    )
    g.add_argument(
        "--delimiter",
        default=None,
        help="field delimiter of a text table (default: sniffed; '\\t' = tab)",
    )
    g.add_argument(
        "--header",
        choices=("auto", "yes", "no"),
        default="auto",
        help="whether the first row of a text table names the columns",
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``semisvm`` command."""
    parser = _Parser(
        prog="semisvm",
        description="Semi-supervised kernel classification (LapSVM, LapRLS): train on "
        "a data file whose unlabeled rows have an empty (or -1) label, predict, score.",
        epilog="Run 'semisvm COMMAND --help' for the options of a command.",
    )
    parser.add_argument("--version", action="version", version=f"semisvm {__version__}")
    sub = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", parser_class=_Parser
    )

    _add_reproduce_command(sub)
    _add_fit_command(sub)
    _add_predict_command(sub)
    _add_score_command(sub)
    _add_info_command(sub)
    return parser


def _add_reproduce_command(sub: argparse._SubParsersAction) -> None:
    """``semisvm reproduce``: the paper's protocol, tables and figures."""
    from .experiments._reproduce import ALL_CLASSIFIERS, DEFAULT_DATASETS

    r = sub.add_parser(
        "reproduce",
        help="reproduce the experiments of Melacci & Belkin (2011), Section 6",
        description=(
            "Run the protocol of Melacci & Belkin (2011) (12 splits = stratified 4 "
            "folds x 3 repeats; parameters of Tables 8-9) and write Tables 3, 4, 6, 7 "
            "(ours next to the paper's), a per-split CSV and Figures 3-12. MNIST3VS8 "
            "and FACEMIT are not available."
        ),
    )
    r.add_argument(
        "--data-dir",
        default=None,
        help="directory with the benchmark files (default: $SEMISVM_DATA, "
        "else ../shared/data)",
    )
    r.add_argument(
        "--datasets",
        default=",".join(DEFAULT_DATASETS),
        help="comma-separated: g50c,coil20b,pcmac,uspstb,coil20,uspst "
        "(default: all six)",
    )
    r.add_argument("--splits", type=int, default=12, help="number of splits (1-12)")
    r.add_argument("--out", default="reproduce_out", help="output directory")
    r.add_argument(
        "--classifiers",
        default=",".join(ALL_CLASSIFIERS),
        help="comma-separated subset of " + ",".join(ALL_CLASSIFIERS),
    )
    r.add_argument("--random-state", type=int, default=0)
    r.add_argument(
        "--graph-weight",
        choices=("heat", "binary"),
        default="heat",
        help="kNN graph weights (default heat, t = mean edge length: the "
        "authors' code default)",
    )
    r.add_argument(
        "--no-intrinsic-bias",
        dest="intrinsic_bias",
        action="store_false",
        help="intrinsic term on K alpha only (Eq. 7 as printed) instead of "
        "K alpha + b (footnote 1, normalized Laplacian)",
    )
    r.add_argument(
        "--fit-intercept",
        action="store_true",
        help="fit a bias b in LapRLSC, dual, Newton and PCG (default: b = 0, "
        "as the authors' code lapsvmp does with the normalized Laplacian)",
    )
    r.add_argument(
        "--dual-bias",
        choices=("paper", "fitted", "dropped"),
        default="paper",
        help="bias of the dual LapSVM: LIBSVM's b kept (fitted), dropped, or "
        "paper (dropped on G50C only, see notes_g50c.md)",
    )
    r.add_argument(
        "--update-benchmarks",
        metavar="FILE",
        default=None,
        help="also replace the generated tables of FILE between its two "
        "'semisvm reproduce' marker lines (the benchmark report BENCHMARKS.md "
        "holds them in its section on the paper reproduction)",
    )
    r.add_argument("--no-figures", dest="figures", action="store_false")
    r.add_argument(
        "--blas-threads",
        type=int,
        default=1,
        help="BLAS threads during the run (0 = library default)",
    )
    r.add_argument(
        "--n-jobs",
        type=int,
        default=None,
        help="splits run in parallel through joblib (default: one after the "
        "other; parallel runs share the cores, so keep the default for the "
        "timing tables)",
    )
    r.add_argument("--quiet", action="store_true", help="no progress bar")


def _add_fit_command(sub: argparse._SubParsersAction) -> None:
    """``semisvm fit``: the data, the estimator and its expert options."""
    f = sub.add_parser(
        "fit",
        help="train a model on a data file (unlabeled rows included)",
        description="Train a semi-supervised classifier on every row of DATA: rows "
        "whose label is an unlabeled marker are the unlabeled points; an empty label "
        "cell is never a class.  Class names (strings or numbers) are kept and "
        "written back by 'predict'.",
    )
    f.add_argument("data", nargs="?", metavar="DATA", help="training data file")
    f.add_argument("--train", dest="train", help=argparse.SUPPRESS)
    f.add_argument(
        "-o",
        "--output",
        default=None,
        metavar="MODEL",
        help="model file to write (default: semisvm_model.skops, or "
        ".joblib without skops)",
    )
    f.add_argument("--model-out", dest="model_out", help=argparse.SUPPRESS)
    f.add_argument(
        "--model-format",
        choices=("auto", "skops", "joblib"),
        default="auto",
        help="skops (safe to load, default when installed) or joblib (pickle)",
    )
    _add_input(f, label_default="auto")
    e = f.add_argument_group(
        "estimator",
        "Parameters of the estimator (from its docstring; values 'none', "
        "'true'/'false', numbers, words or JSON).",
    )
    e.add_argument(
        "--model",
        choices=tuple(MODELS),
        default="lapsvm",
        help="lapsvm: Laplacian SVM; laprls: Laplacian RLS (default: lapsvm)",
    )
    e.add_argument(
        "--sigma",
        type=float,
        default=None,
        help="Gaussian width: sets gamma = 1 / (2 sigma^2)",
    )
    x = f.add_argument_group(
        "expert options",
        "Fields of the estimator's options=SolverOptions(...) (same values).",
    )
    for name, opt in estimator_options().items():
        (x if opt["option"] else e).add_argument(
            opt["flag"],
            dest=f"est__{name}",
            default=argparse.SUPPRESS,
            metavar=name.upper(),
            help=opt["help"],
        )
    _add_common(f)


def _add_predict_command(sub: argparse._SubParsersAction) -> None:
    """``semisvm predict``: label the rows of a data file."""
    p = sub.add_parser(
        "predict",
        help="label the rows of a data file with a fitted model",
        description="Write one row per input row: the predicted class name and the "
        "decision scores (CSV).  The file is read and predicted in batches.  A label "
        "column, if present, is dropped (and the accuracy on its labeled rows printed "
        "on stderr).  A model that knows its feature names (trained on a file with a "
        "header) takes those columns by name and ignores the others (named on "
        "stderr); a file without column names is matched by position.",
    )
    p.add_argument("model", nargs="?", metavar="MODEL", help="model file from 'fit'")
    p.add_argument("data", nargs="?", metavar="DATA", help="data file to label")
    p.add_argument("--model", dest="model_opt", help=argparse.SUPPRESS)
    p.add_argument("--data", dest="data_opt", help=argparse.SUPPRESS)
    p.add_argument("--has-label", action="store_true", help=argparse.SUPPRESS)
    p.add_argument(
        "-o",
        "--output",
        default=None,
        metavar="FILE",
        help="CSV file of predictions (default: standard output)",
    )
    p.add_argument("--out", dest="out", help=argparse.SUPPRESS)
    p.add_argument(
        "--batch-size",
        type=int,
        default=10000,
        help="rows read and predicted at a time (default 10000)",
    )
    p.add_argument(
        "--no-scores",
        dest="scores",
        action="store_false",
        help="write the predicted class only",
    )
    p.add_argument(
        "--proba",
        action="store_true",
        help="add class probabilities (estimators with predict_proba)",
    )
    p.add_argument(
        "--allow-version-mismatch",
        action="store_true",
        help="use a model written by another semisvm version",
    )
    _add_input(p, label_default="auto")
    _add_common(p)


def _add_score_command(sub: argparse._SubParsersAction) -> None:
    """``semisvm score``: accuracy on the labeled rows of a data file."""
    s = sub.add_parser(
        "score",
        help="accuracy of a fitted model on the labeled rows of a data file",
        description="Accuracy on the labeled rows of DATA (unlabeled rows ignored). "
        "Feature columns are taken by name when the model knows them (other columns "
        "ignored), else by position.",
    )
    s.add_argument("model", metavar="MODEL", help="model file from 'fit'")
    s.add_argument("data", metavar="DATA", help="labeled data file")
    s.add_argument(
        "--batch-size",
        type=int,
        default=10000,
        help="rows read and predicted at a time (default 10000)",
    )
    s.add_argument(
        "--allow-version-mismatch",
        action="store_true",
        help="use a model written by another semisvm version",
    )
    _add_input(s, label_default="auto")
    _add_common(s)


def _add_info_command(sub: argparse._SubParsersAction) -> None:
    """``semisvm info``: versions, optional dependencies, or a model file."""
    i = sub.add_parser(
        "info",
        help="versions, optional dependencies, or a model file",
        description="Print semisvm's version and its dependencies, or "
        "describe a model file.",
    )
    i.add_argument("model", nargs="?", metavar="MODEL", help="model file to describe")
    i.add_argument(
        "--allow-version-mismatch",
        action="store_true",
        help="describe a model written by another semisvm version",
    )
    _add_common(i)


# ----------------------------------------------------------------- helpers
class _Out:
    """Messages for people (stderr when --json) and the JSON summary."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.json = getattr(args, "json", False)
        self.verbose = getattr(args, "verbose", 0)
        self.summary: dict[str, Any] = {"command": args.command}
        self.t0 = time.perf_counter()

    def say(self, msg: str) -> None:
        print(msg, file=sys.stderr if self.json else sys.stdout)

    def log(self, msg: str) -> None:
        if self.verbose:
            print(f"[{time.perf_counter() - self.t0:7.2f} s] {msg}", file=sys.stderr)

    def done(self) -> int:
        if self.json:
            print(json.dumps(self.summary, indent=2, default=_jsonable))
        return 0


def _jsonable(v: Any) -> Any:
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, np.ndarray):
        return v.tolist()
    return str(v)


def _progress(it: Iterable[Table], enabled: bool, desc: str) -> Iterable[Table]:
    if not enabled:
        return it
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return it
    return tqdm(it, desc=desc, unit=" batches", file=sys.stderr)


def _markers(
    args: argparse.Namespace, bundle: dict[str, Any] | None = None
) -> list[str]:
    """The defaults (predict, score: the model's markers) plus the --unlabeled ones.

    ``--no-default-unlabeled`` drops the defaults: the --unlabeled markers only.
    """
    if getattr(args, "no_default_unlabeled", False):
        base: list[str] = []
    elif bundle is not None and bundle.get("unlabeled_markers") is not None:
        base = list(bundle["unlabeled_markers"])
    else:
        base = list(_DEFAULT_UNLABELED)
    given = [m for m in (args.unlabeled or []) if m not in base]
    return base + list(dict.fromkeys(given))


def _fit_label_spec(path: str, args: argparse.Namespace) -> str:
    """--label-column auto for fit: a column named like a label, else the last."""
    if args.label_column != "auto":
        return args.label_column
    _check_cli_params({"header": args.header, "format": args.format})
    _, _, names = peek_columns(
        path, fmt=args.format, delimiter=args.delimiter, header=args.header
    )
    for name in names or []:
        if name.strip().lower() in _LABEL_NAMES:
            return name
    return "last"


def _check_dominant_class(
    path: str,
    unl: np.ndarray,
    classes: np.ndarray,
    codes: np.ndarray,
    args: argparse.Namespace,
) -> None:
    """Refuse a label column whose one value looks like an unlabeled marker.

    Every row labeled and one text value holding at least half of them is what a
    file with an unknown unlabeled marker looks like ("missing", "tbd", ...).
    """
    if args.unlabeled is not None or args.no_default_unlabeled or unl.any():
        return
    counts = np.bincount(codes, minlength=classes.size)
    k = int(np.argmax(counts))
    if counts[k] * 2 >= codes.size and classes.size > 2 and isinstance(classes[k], str):
        raise CLIError(
            f"{path}: no row is unlabeled and {format_label(classes[k])!r} labels "
            f"{counts[k]} of {codes.size} rows: if it marks the unlabeled rows say "
            f"--unlabeled {format_label(classes[k])!r}; to train on it as a class, "
            "say --no-default-unlabeled"
        )


def _summary_stop(term: Any, n_iter: Any) -> str:
    """'stopped by stability after 120 iterations' (per class when they differ)."""
    if term is None:
        return ""
    if isinstance(term, str | bytes) or np.ndim(term) == 0:
        return f"; stopped by {term} after {n_iter} iteration(s)"
    terms = [str(t) for t in np.ravel(term)]
    iters = np.ravel(n_iter) if n_iter is not None else np.zeros(len(terms))
    kinds = {t: terms.count(t) for t in dict.fromkeys(terms)}
    how = ", ".join(f"{t} ({c} of {len(terms)} classes)" for t, c in kinds.items())
    return (
        f"; stopped by {how} after {int(np.min(iters))}-{int(np.max(iters))} iterations"
    )


_NP_SCALAR = re.compile(r"np\.(?:u?int|float|complex|longdouble)\d*\(([^()]*)\)")
_NP_TEXT = re.compile(r"np\.(?:str_|bytes_)\(((?:'[^']*')|(?:\"[^\"]*\"))\)")


def _plain_text(msg: str) -> str:
    """numpy scalar reprs as plain values: ``np.int64(3)`` -> ``3``."""
    msg = _NP_SCALAR.sub(r"\1", msg)
    msg = _NP_TEXT.sub(r"\1", msg)
    return re.sub(r"np\.(True|False)_", r"\1", msg)


def _flat_params(est: Any) -> dict[str, Any]:
    """The estimator's parameters and options in one flat dict (as the flags)."""
    params = est.get_params(deep=False)
    if "options" not in params:
        return params
    from .models._options import resolved_options

    params.pop("options")
    return {**params, **resolved_options(est).get_params()}


def _early_stopping_rule(est: Any) -> str | None:
    """The early-stopping rule the fitted estimator used (``'auto'`` resolved)."""
    rule = est.get_params().get("early_stopping")
    if rule == "auto":
        solver = getattr(est, "solver_", None) or est.get_params().get("solver")
        rule = "stability" if solver == "pcg" else None
    return rule


_RAISE_MAX_ITER = re.compile(r"\s*\b(?:[Ii]ncrease|[Rr]aise)\b[^.]*\bmax_iter\b[^.]*\.")


def _fit_warning(msg: str, est: Any, classes: np.ndarray) -> str:
    """A warning of the estimator as the user of the command line should read it.

    The command line trains on class codes 0..k-1: a list of classes in the
    message is written back with the class names.  While an early-stopping rule
    is on, advice to raise ``max_iter`` is replaced: the rule, not the cap, is
    the stopping criterion the user chose.
    """

    def names(m: re.Match[str]) -> str:
        out = []
        for item in _plain_text(m.group(1)).split(","):
            item = item.strip()
            try:
                out.append(format_label(classes[int(item)]))
            except (ValueError, IndexError):
                out.append(item.strip("'\""))
        return f"(classes {', '.join(out)})"

    msg = re.sub(r"\(classes \[?([^()\[\]]*)\]?\)", names, msg)
    msg = _plain_text(msg)
    # the estimator's advice names parameters: give the options instead
    msg = re.sub(
        r"\b(stability_value_tol|stability_tol|check_every)\b",
        lambda m: "--" + m.group(1).replace("_", "-"),
        msg,
    )
    msg = re.sub(r"\bloosen tol\b", "loosen --tol", msg)
    rule = _early_stopping_rule(est)
    if rule is not None and "max_iter" in msg:
        msg = msg.replace(
            "the 'auto' early-stopping rule", f"the {rule!r} early-stopping rule"
        )
        if _RAISE_MAX_ITER.search(msg):
            flags = (
                "--stability-tol or --stability-value-tol"
                if rule == "stability"
                else "--check-every"
            )
            msg = _RAISE_MAX_ITER.sub("", msg).rstrip() + (
                f" Early stopping ({rule!r}) is on and did not stop the solver: "
                f"loosen the rule ({flags}) or --tol."
            )
    return msg


def _check_cli_params(params: dict[str, Any]) -> None:
    try:
        validate_params(params, _CLI_CONSTRAINTS)
    except ValueError as exc:
        raise CLIError(_option_message(str(exc))) from None


def _option_message(msg: str) -> str:
    """'The 'max_iter' parameter must be ...' -> 'option --max-iter must be ...'."""
    m = re.match(r"The '(\w+)' parameter(?: of \w+)? (must be .*)", msg, flags=re.S)
    if not m:
        return msg
    return f"option --{m.group(1).replace('_', '-')} {m.group(2)}"


def _input_kwargs(args: argparse.Namespace, label_column: str | None) -> dict[str, Any]:
    _check_cli_params({"header": args.header, "format": args.format})
    return {
        "label_column": label_column,
        "fmt": args.format,
        "delimiter": args.delimiter,
        "header": args.header,
    }


# ----------------------------------------------------------------- reproduce
def _cmd_reproduce(args: argparse.Namespace, argv: Sequence[str]) -> int:
    from .experiments._reproduce import (
        BENCH_BEGIN,
        BENCH_END,
        run_reproduction,
        update_benchmarks_section,
    )

    if args.update_benchmarks is not None:  # fail before the run, not after it
        bench = Path(args.update_benchmarks)
        text = bench.read_text() if bench.is_file() else ""
        if BENCH_BEGIN not in text or BENCH_END not in text:
            raise ValueError(
                f"--update-benchmarks {bench}: file missing or without the marker lines "
                f"{BENCH_BEGIN!r} and {BENCH_END!r}."
            )
    clfs = [c.strip() for c in args.classifiers.split(",") if c.strip()]
    command = "semisvm " + " ".join(shlex.quote(a) for a in argv)
    t0 = time.perf_counter()
    res = run_reproduction(
        args.datasets,
        data_dir=args.data_dir,
        n_splits=args.splits,
        classifiers=clfs,
        out_dir=args.out,
        random_state=args.random_state,
        graph_weight=args.graph_weight,
        intrinsic_bias=args.intrinsic_bias,
        fit_intercept=args.fit_intercept,
        dual_bias=args.dual_bias,
        figures=args.figures,
        progress=not args.quiet,
        command=command,
        blas_threads=args.blas_threads or None,
        n_jobs=args.n_jobs,
    )
    for m in res.messages:
        print(m)
    if not res.messages:
        print(
            "MNIST3VS8 and FACEMIT are not available here (no data files): their "
            "rows show the paper's numbers only."
        )
    out = Path(args.out)
    print(f"Done in {time.perf_counter() - t0:.1f} s. Tables: {out / 'tables.md'}")
    print(
        f"Per-split results: {out / 'per_split.csv'}; {len(res.files)} files written."
    )
    if args.update_benchmarks is not None:
        update_benchmarks_section(args.update_benchmarks, out)
        print(f"Generated tables replaced in {args.update_benchmarks}.")
    return 0


# ----------------------------------------------------------------- fit
def _make_estimator(args: argparse.Namespace, out: _Out) -> Any:
    from .models._options import check_options

    cls = _estimator_class(args.model)
    opts = estimator_options()
    params: dict[str, Any] = {}
    options: dict[str, Any] = {}
    for key, raw in vars(args).items():
        if not key.startswith("est__"):
            continue
        name = key[5:]
        if args.model not in opts[name]["models"]:
            raise CLIError(
                f"option {opts[name]['flag']} does not apply to --model {args.model}"
            )
        value = _parse_value(raw, opts[name]["constraints"])
        if opts[name]["option"]:
            options[name] = value
        else:
            params[name] = value
    if options:
        from .models._options import SolverOptions

        params["options"] = SolverOptions(**options)
    _check_cli_params({"sigma": args.sigma, "model_format": args.model_format})
    if args.sigma is not None:
        if "gamma" in params:
            raise CLIError("give either --sigma or --gamma, not both")
        params["gamma"] = 1.0 / (2.0 * args.sigma**2)
    if args.verbose and "verbose" in inspect.signature(cls.__init__).parameters:
        # -v: the estimator's stages (kernel, graph, choice of weights, solver);
        # -vv: also every 10th solver iteration
        params["verbose"] = 1 if args.verbose == 1 else 10
    est = cls(**params)
    try:
        validate_params(
            est.get_params(deep=False), getattr(est, "_parameter_constraints", {})
        )
        resolved = check_options(est)
    except ValueError as exc:
        raise CLIError(_option_message(str(exc))) from None
    prm = est.get_params()
    if (
        prm.get("early_stopping") in ("validation", "mixed")
        and prm.get("solver") == "pcg"
        and resolved.validation_fraction is None
    ):
        est.set_params(options__validation_fraction=0.2)
        out.log(
            "early stopping on validation data: holding out 20% of the labeled rows"
        )
    return est


def _cmd_fit(args: argparse.Namespace) -> int:
    out = _Out(args)
    data = args.data or args.train
    if data is None:
        raise CLIError("missing the DATA file to train on (semisvm fit DATA ...)")
    if args.data and args.train:
        raise CLIError("give the training file once (DATA or --train)")
    est = _make_estimator(args, out)
    out.log(f"reading {data}")
    spec = _fit_label_spec(data, args)
    table = read_table(data, **_input_kwargs(args, spec))
    if table.labels is None:
        raise CLIError(f"{data}: no label column (option --label-column)")
    unl, classes, y = split_labels(data, table.labels, _markers(args), table.extra)
    _check_dominant_class(data, unl, classes, y, args)
    X = table.X
    n, d = X.shape
    out.log(
        f"{n} rows, {d} features, {int((~unl).sum())} labeled, {classes.size} "
        f"classes; fitting {type(est).__name__}"
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            # the estimator's progress (verbose) goes to stderr: stdout keeps the
            # summary (and --json stays parseable)
            with contextlib.redirect_stdout(sys.stderr):
                est.fit(X, y)
        except ValueError as exc:
            raise CLIError(f"{data}: {_option_message(str(exc).strip())}") from None
    notes = list(
        dict.fromkeys(
            _fit_warning(str(w.message).strip(), est, classes) for w in caught
        )
    )
    for note in notes:
        print(f"semisvm fit: warning: {note}", file=sys.stderr)
    out.log("fitted")
    target = args.output or args.model_out
    bundle = {
        "estimator": est,
        "model": args.model,
        "classes": np.asarray(list(classes), dtype=object),
        "n_features": int(d),
        "feature_names": table.feature_names,
        "label_name": table.label_name,
        "unlabeled_markers": _markers(args),
        "training_file": Path(data).name,
    }
    fmt = args.model_format
    if target is None:
        try:
            import skops.io  # noqa: F401

            has_skops = True
        except ImportError:
            has_skops = False
        target = (
            "semisvm_model.skops"
            if (fmt == "skops" or (fmt == "auto" and has_skops))
            else "semisvm_model.joblib"
        )
    used = save_model(bundle, target, fmt)
    n_lab = int((~unl).sum())
    fit_s = float(sum(getattr(est, "fit_times_", {}).values()))
    n_iter = getattr(est, "n_iter_", None)
    term = getattr(est, "termination_condition_", None)
    out.say(
        f"Trained {type(est).__name__} on {n} rows ({n_lab} labeled, {n - n_lab} "
        f"unlabeled, {classes.size} classes: "
        f"{', '.join(format_label(c) for c in classes)}) in {fit_s:.3f} s"
        f"{_summary_stop(term, n_iter)}."
    )
    counts: dict[str, int] = {}
    if unl.any() and hasattr(est, "transduction_"):
        tr = classes[np.asarray(est.transduction_)[unl]]
        for v in tr:
            counts[format_label(v)] = counts.get(format_label(v), 0) + 1
        out.say(
            "Labels given to the unlabeled rows: "
            + ", ".join(f"{k}: {c}" for k, c in sorted(counts.items()))
        )
    out.say(f"Model written to {target} ({used})")
    out.summary.update(
        {
            "model_file": str(target),
            "model_format": used,
            "estimator": type(est).__name__,
            "params": _flat_params(est),
            "n_rows": n,
            "n_features": d,
            "n_labeled": n_lab,
            "n_unlabeled": n - n_lab,
            "classes": [format_label(c) for c in classes],
            "n_iter": np.ravel(n_iter).tolist() if n_iter is not None else None,
            "termination_condition": term,
            "fit_seconds": fit_s,
            "unlabeled_predicted_counts": counts,
            "warnings": notes,
        }
    )
    return out.done()


# ----------------------------------------------------------------- predict / score
def _query_label_spec(
    path: str, bundle: dict[str, Any], args: argparse.Namespace
) -> str | None:
    """Which column of the query file holds labels (``None``: no label column)."""
    if args.label_column != "auto":
        return args.label_column
    _check_cli_params({"header": args.header, "format": args.format})
    kind, ncol, names = peek_columns(
        path, fmt=args.format, delimiter=args.delimiter, header=args.header
    )
    if ncol is None:
        return "last"  # npz / svmlight: labels come from y / the first field
    label_name = bundle.get("label_name")
    if names and label_name in names:
        return label_name
    trained = bundle.get("feature_names")
    if names and trained:
        return "none"  # features picked by name, other columns ignored
    nf = bundle["n_features"]
    if ncol == nf + 1:
        if not names and label_name and label_name.lstrip("-").isdigit():
            return label_name  # headerless: the label sat at this index in training
        return "last"
    if ncol == nf:
        return "none"
    raise CLIError(
        f"{path}: found {ncol} column(s), expected {nf} feature column(s) (or "
        f"{nf + 1} with a label column): {_by_position(bundle)}; say --label-column "
        "if one of them holds labels"
    )


def _by_position(bundle: dict[str, Any]) -> str:
    """Why the columns of a query file are matched by position."""
    trained = bundle.get("feature_names")
    if trained:
        shown = ", ".join(trained[:8]) + (" ..." if len(trained) > 8 else "")
        return (
            f"the file has no header row naming the model's features ({shown}), "
            "so columns are matched by position"
        )
    return (
        "the model was trained on a file without column names, so columns are "
        "matched by position"
    )


def _align(table: Table, bundle: dict[str, Any], path: str) -> Any:
    """Features of a query chunk in the model's column order."""
    import scipy.sparse as sp

    X = table.X
    nf = bundle["n_features"]
    names, trained = table.feature_names, bundle.get("feature_names")
    if names and trained and names != trained:
        missing = [c for c in trained if c not in names]
        if missing:
            raise CLIError(
                f"{path}: missing feature column(s) the model was trained "
                f"on: {', '.join(missing[:8])}"
            )
        X = X[:, [names.index(c) for c in trained]]
    if sp.issparse(X) and X.shape[1] < nf:  # svmlight: trailing all-zero features
        X = sp.hstack([X, sp.csr_matrix((X.shape[0], nf - X.shape[1]))]).tocsr()
    if X.shape[1] != nf:
        raise CLIError(
            f"{path}: found {X.shape[1]} feature column(s), expected {nf}: "
            f"{_by_position(bundle)}"
        )
    return X


def _predict_chunks(
    args: argparse.Namespace, out: _Out, data: str, bundle: dict[str, Any]
) -> Iterable[tuple[Table, Any]]:
    _check_cli_params({"batch_size": args.batch_size})
    spec = _query_label_spec(data, bundle, args)
    # a model that knows its feature names takes them by name from a file with a
    # header (other columns, e.g. an id, are ignored); other files go by position
    chunks = iter_table(
        data,
        chunksize=args.batch_size,
        feature_columns=bundle.get("feature_names"),
        **_input_kwargs(args, spec),
    )
    for t in _progress(chunks, out.verbose > 0, args.command):
        ignored = t.extra.get("ignored_columns") if t.n_rows_before == 0 else None
        if ignored:
            print(
                f"semisvm {args.command}: ignoring column(s) the model does not use: "
                f"{', '.join(ignored)}",
                file=sys.stderr,
            )
        yield t, _align(t, bundle, data)


def _score_columns(
    est: Any, classes: np.ndarray, X: Any, proba: bool
) -> tuple[list[str], np.ndarray]:
    cols: list[str] = []
    parts: list[np.ndarray] = []
    F = np.asarray(est.decision_function(X))
    if F.ndim == 1:
        cols.append("score")
        parts.append(F[:, None])
    else:
        cols += [f"score_{format_label(c)}" for c in classes]
        parts.append(F)
    if proba:
        cols += [f"proba_{format_label(c)}" for c in classes]
        parts.append(np.asarray(est.predict_proba(X)))
    return cols, np.hstack(parts)


def _accuracy_counts(
    table: Table, pred: np.ndarray, markers: list[str], path: str
) -> tuple[int, int]:
    """Right and scored predictions on the labeled rows (empty labels never count)."""
    labels = table.labels
    if labels is None:
        return 0, 0
    empty = check_empty_labels(path, labels, markers, table.n_rows_before, table.extra)
    mark = {m.strip().lower() for m in markers}
    num = {float(m) for m in markers if _is_num(m)}
    right = total = 0
    for v, p, e in zip(labels, pred, empty, strict=True):
        if e:
            continue
        s = format_label(v)
        if s.strip().lower() in mark or (_is_num(s) and float(s) in num):
            continue
        total += 1
        right += s == format_label(p)
    return right, total


def _is_num(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


def _open_model(path: str, args: argparse.Namespace, out: _Out) -> dict[str, Any]:
    out.log(f"loading model {path}")
    return load_model(path, allow_version_mismatch=args.allow_version_mismatch)


def _cmd_predict(args: argparse.Namespace) -> int:
    out = _Out(args)
    model = args.model or args.model_opt
    data = args.data or args.data_opt
    if model is None or data is None:
        raise CLIError("need a MODEL file and a DATA file (semisvm predict MODEL DATA)")
    if args.has_label and args.label_column == "auto":
        args.label_column = "last"
    bundle = _open_model(model, args, out)
    est, classes = bundle["estimator"], np.asarray(bundle["classes"], dtype=object)
    if args.proba and not hasattr(est, "predict_proba"):
        raise CLIError(f"option --proba: {type(est).__name__} has no predict_proba")
    target = args.output or args.out
    # never touch an existing output file until every prediction is made: write
    # a temporary file beside it and rename it over the target on success
    parquet = bool(target) and str(target).lower().endswith((".parquet", ".pq"))
    tmp: str | None = None
    if target:
        tdir = Path(target).resolve().parent
        if not tdir.is_dir():
            raise CLIError(f"option -o: the folder {tdir} does not exist")
        fd, tmp = tempfile.mkstemp(prefix=".semisvm-", suffix=".tmp", dir=tdir)
        os.close(fd)
    fh: Any = None
    if tmp is not None and not parquet:
        fh = open(tmp, "w", newline="")  # noqa: SIM115
    elif not target and not args.json:
        fh = sys.stdout
    writer = csv.writer(fh) if fh is not None else None
    frames: list[Any] = []
    all_pred: list[str] = []
    right = total = n = 0
    ok = False
    try:
        for table, X in _predict_chunks(args, out, data, bundle):
            pred = classes[np.asarray(est.predict(X))]
            names = [format_label(v) for v in pred]
            r, t = _accuracy_counts(table, pred, _markers(args, bundle), data)
            right, total, n = right + r, total + t, n + len(names)
            if writer is None and not parquet:
                all_pred += names
                continue
            if args.scores or args.proba:
                cols, S = _score_columns(est, classes, X, args.proba and True)
                if not args.scores:
                    k = sum(c.startswith("score") for c in cols)
                    cols, S = cols[k:], S[:, k:]
            else:
                cols, S = [], np.empty((len(names), 0))
            if parquet:
                frames.append((names, cols, S))
                continue
            assert writer is not None
            if table.n_rows_before == 0:
                writer.writerow(["prediction", *cols])
            for name, row in zip(names, S, strict=True):
                writer.writerow([name, *(f"{v:.6g}" for v in row)])
        if parquet and tmp is not None:
            _write_parquet(tmp, frames)
        ok = True
    finally:
        if target and fh is not None:
            fh.close()
        if tmp is not None:
            if ok:
                os.replace(tmp, target)
            else:
                Path(tmp).unlink(missing_ok=True)
    if target:
        out.say(f"{n} predictions written to {target}")
    if total:
        print(
            f"Accuracy on the {total} labeled rows: {100 * right / total:.2f}%",
            file=sys.stderr,
        )
    out.summary.update(
        {
            "model_file": model,
            "data_file": data,
            "n_rows": n,
            "output": target,
            "n_labeled": total,
            "accuracy": right / total if total else None,
        }
    )
    if target is None and args.json:
        out.summary["predictions"] = all_pred
    return out.done()


def _write_parquet(
    path: str, frames: list[tuple[list[str], list[str], np.ndarray]]
) -> None:
    """The predictions (and scores) as a Parquet file."""
    from ._cli_io import _pd

    pd = _pd()
    parts = []
    for names, cols, S in frames:
        df = pd.DataFrame(S, columns=cols)
        df.insert(0, "prediction", names)
        parts.append(df)
    df = (
        pd.concat(parts, ignore_index=True)
        if parts
        else pd.DataFrame({"prediction": []})
    )
    try:
        df.to_parquet(path, index=False)
    except ImportError:
        raise CLIError(
            "writing Parquet needs pyarrow: pip install 'semisvm[cli]'"
        ) from None


def _cmd_score(args: argparse.Namespace) -> int:
    out = _Out(args)
    bundle = _open_model(args.model, args, out)
    est, classes = bundle["estimator"], np.asarray(bundle["classes"], dtype=object)
    spec = args.label_column
    if spec == "auto":
        spec = _query_label_spec(args.data, bundle, args)
        if spec is None or spec == "none":
            raise CLIError(
                f"{args.data}: no label column to score against (option --label-column)"
            )
    args.label_column = spec
    right = total = n = 0
    for table, X in _predict_chunks(args, out, args.data, bundle):
        if table.labels is None:
            raise CLIError(f"{args.data}: no label column (option --label-column)")
        pred = classes[np.asarray(est.predict(X))]
        r, t = _accuracy_counts(table, pred, _markers(args, bundle), args.data)
        right, total, n = right + r, total + t, n + X.shape[0]
    if total == 0:
        raise CLIError(f"{args.data}: no labeled rows to score (option --unlabeled)")
    acc = right / total
    out.say(
        f"Accuracy on the {total} labeled rows of {args.data}: {100 * acc:.2f}% "
        f"({n - total} unlabeled rows ignored)"
    )
    out.summary.update(
        {
            "model_file": args.model,
            "data_file": args.data,
            "accuracy": acc,
            "n_labeled": total,
            "n_rows": n,
        }
    )
    return out.done()


# ----------------------------------------------------------------- info
_OPTIONAL = (
    "pandas",
    "pyarrow",
    "skops",
    "joblib",
    "tqdm",
    "matplotlib",
    "threadpoolctl",
    "psutil",
    "dask",
    "pynndescent",
    "hnswlib",
)


def _version_of(mod: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(mod)
    except metadata.PackageNotFoundError:
        return None


def _cmd_info(args: argparse.Namespace) -> int:
    out = _Out(args)
    if args.model:
        b = load_model(args.model, allow_version_mismatch=args.allow_version_mismatch)
        est = b["estimator"]
        info = {
            "model_file": args.model,
            "estimator": type(est).__name__,
            "semisvm_version": b.get("semisvm_version"),
            "created": b.get("created"),
            "classes": [format_label(c) for c in b["classes"]],
            "n_features": b["n_features"],
            "feature_names": b.get("feature_names"),
            "label_column": b.get("label_name"),
            "training_file": b.get("training_file"),
            "params": {k: v for k, v in _flat_params(est).items() if not callable(v)},
        }
        for k, v in info.items():
            if k != "params":
                out.say(f"{k}: {v}")
        out.say("params: " + ", ".join(f"{k}={v!r}" for k, v in info["params"].items()))
        out.summary.update(info)
        return out.done()
    deps = {m: _version_of(m) for m in ("numpy", "scipy", "scikit-learn")}
    opt = {m: _version_of(m) for m in _OPTIONAL}
    out.say(
        f"semisvm {__version__} (Python {platform.python_version()}, "
        f"{platform.platform()})"
    )
    out.say("dependencies: " + ", ".join(f"{k} {v}" for k, v in deps.items()))
    out.say("optional: " + ", ".join(f"{k} {v or '-'}" for k, v in opt.items()))
    out.say("models: " + ", ".join(f"{k} ({v[1]})" for k, v in MODELS.items()))
    out.summary.update(
        {
            "version": __version__,
            "python": platform.python_version(),
            "dependencies": deps,
            "optional": opt,
            "models": {k: v[1] for k, v in MODELS.items()},
        }
    )
    return out.done()


# ----------------------------------------------------------------- main
def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``semisvm`` command.

    Parameters
    ----------
    argv : sequence of str, default=None
        Arguments (default ``sys.argv[1:]``).

    Returns
    -------
    int
        Exit status: 0 on success, 1 on a data or input error, 2 on bad usage.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, usage errors
        return int(exc.code or 0)
    from .datasets._loaders import DataFileNotFoundError

    commands = {
        "fit": _cmd_fit,
        "predict": _cmd_predict,
        "score": _cmd_score,
        "info": _cmd_info,
    }
    try:
        if args.command == "reproduce":
            return _cmd_reproduce(args, argv)
        return commands[args.command](args)
    except KeyboardInterrupt:
        print(f"semisvm {args.command}: interrupted", file=sys.stderr)
        return 130
    except (CLIError, DataFileNotFoundError, ValueError, MemoryError, OSError) as exc:
        if getattr(args, "traceback", False):
            raise
        # the whole message: a memory refusal's advice (streamed kernel, Nystroem)
        # sits on the lines after the first
        msg = _plain_text(str(exc).strip()) or type(exc).__name__
        if isinstance(exc, MemoryError) and not str(exc).strip():
            msg = (
                "out of memory (try fewer rows, --kernel-approximation nystroem, "
                "or for predict a smaller --batch-size)"
            )
        print(f"semisvm {args.command}: error: {msg}", file=sys.stderr)
        return 1
    except Exception as exc:  # noqa: BLE001 - never a traceback for the user
        if getattr(args, "traceback", False):
            raise
        print(
            f"semisvm {args.command}: error: unexpected {type(exc).__name__}: "
            f"{_plain_text(str(exc).strip())} (rerun with --traceback and report it)",
            file=sys.stderr,
        )
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
