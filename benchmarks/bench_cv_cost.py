"""Cost of the model-selection estimators: ``LapSVMCV()`` and
``LapRLSCV()`` against one default fit of ``LapSVM()`` / ``LapRLS()``.

Target: a CV fit costs at most 10 default fits at n = 2,000 and at most 5 min at
n = 10,000.  Problems:

* two moons, n = 2,000, 10 labels (5 per class);
* scikit-learn digits, n = 1,797, 5 labels per class (50);
* a 784-dimension digits-like mixture (``_common.digits_like``), n = 2,000 and
  n = 10,000, 5 labels per class (50).

Every fit runs in a fresh process (the data made there, only ``fit`` timed,
wall clock and the process's CPU time: on one BLAS thread the CPU time is the
work done, and it varies less than the wall clock when other jobs share the
machine);
the default fit and the CV fit -- of every code version given with ``--code``
-- are run in alternation (``--repeat`` rounds, medians; one round at n =
10,000 unless ``--repeat-large``), so a change of the machine's load hits all.  The table also gives the number of candidates of
the search (``selection_['n_candidates']``), the chosen parameters, the
transductive error of both fits and the 1-minute load average after each cell.

Usage::

    python benchmarks/bench_cv_cost.py                 # all cells, appends results/cv_cost.md
    python benchmarks/bench_cv_cost.py --quick         # moons n = 600 only
    python benchmarks/bench_cv_cost.py --only moons,digits --repeat 3
    python benchmarks/bench_cv_cost.py --code before=/tmp/old/src --code after=src
    python benchmarks/bench_cv_cost.py --blas-threads default   # as a user runs it
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (  # noqa: E402
    append_results,
    bench_parser,
    digits_like,
    machine_description,
    markdown_table,
)


def _labels(y: np.ndarray, per_class: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    out = np.full(y.shape, -1)
    for c in np.unique(y):
        idx = rng.choice(np.flatnonzero(y == c), per_class, replace=False)
        out[idx] = c
    return out


def problems(quick: bool, only: set[str] | None) -> list[tuple[str, Any, Any, Any]]:
    """``(name, X, y with -1 for unlabeled, true labels)`` of every cell."""
    from sklearn.datasets import load_digits

    from semisvm.datasets import make_two_moons

    out = []
    if quick:
        X, y, yt = make_two_moons(600, n_labeled_per_class=5, random_state=0)
        return [("moons", X, y, yt)]
    if only is None or "moons" in only:
        X, y, yt = make_two_moons(2000, n_labeled_per_class=5, random_state=0)
        out.append(("moons", X, y, yt))
    if only is None or "digits" in only:
        X, yt = load_digits(return_X_y=True)
        out.append(("digits", X, _labels(yt, 5), yt))
    for n in (2000, 10000):
        if only is None or f"d784_{n}" in only:
            X, yt = digits_like(n)
            out.append((f"d784_{n}", X, _labels(yt, 5), yt))
    return out


def _worker(args: Any) -> int:
    """One fit in this process: print its time, error, choice as JSON."""
    import json

    from semisvm import LapRLS, LapSVM
    from semisvm.model_selection import LapRLSCV, LapSVMCV

    classes = {c.__name__: c for c in (LapSVM, LapRLS, LapSVMCV, LapRLSCV)}
    name, X, y, yt = problems(args.quick, {args.problem})[0]
    t0, c0 = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = classes[args.estimator]().fit(X, y)
    out = dict(
        time=time.perf_counter() - t0,
        cpu=time.process_time() - c0,
        err=float(np.mean(m.transduction_ != yt)),
        n=int(X.shape[0]),
        labels=int((y != -1).sum()),
        candidates=getattr(m, "selection_", {}).get("n_candidates", ""),
        choice=",".join(
            f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}"
            for k, v in getattr(m, "best_params_", {}).items()
            if k != "kernel" or v != "rbf"
        ),
    )
    print(json.dumps(out))
    return 0


#: BLAS threads of the timed processes: "1" (OPENBLAS_NUM_THREADS=1, the
#: comparable setting of every earlier run) or "default" (what a user gets)
BLAS_THREADS = "1"


def _spawn(problem: str, estimator: str, src: str, quick: bool, timeout: float) -> dict:
    import json
    import subprocess

    env = dict(os.environ, PYTHONPATH=src)
    if BLAS_THREADS == "default":
        for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            env.pop(k, None)
    else:
        env["OPENBLAS_NUM_THREADS"] = BLAS_THREADS
    cmd = [sys.executable, __file__, "--worker", "--problem", problem]
    cmd += ["--estimator", estimator] + (["--quick"] if quick else [])
    try:
        proc = subprocess.run(
            cmd, capture_output=True, text=True, env=env, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        return {"time": float("nan"), "error": f"timed out after {timeout:.0f} s"}
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        return {"time": float("nan"), "error": proc.stderr.strip()[-300:]}
    return json.loads(lines[-1])


def run_cell(
    name: str, variants: dict[str, str], repeat: int, quick: bool, timeout: float
) -> list[list[Any]]:
    """Time the default fits and the CV fits of one problem in fresh processes,
    every (code version, estimator) in turn, ``repeat`` rounds."""
    rows = []
    for base, cv in (("LapSVM", "LapSVMCV"), ("LapRLS", "LapRLSCV")):
        res: dict[tuple[str, str], list[dict]] = {}
        for _ in range(repeat):
            for label, src in variants.items():
                for est in (base, cv):
                    r = _spawn(name, est, src, quick, timeout)
                    r["load"] = os.getloadavg()[0]
                    res.setdefault((label, est), []).append(r)
        for label in variants:
            d, c = res[(label, base)], res[(label, cv)]
            t_def = float(np.median([r["time"] for r in d]))
            t_cv = float(np.median([r["time"] for r in c]))
            cpu_def = float(np.median([r.get("cpu", np.nan) for r in d]))
            cpu_cv = float(np.median([r.get("cpu", np.nan) for r in c]))
            last = c[-1]
            rows.append(
                [
                    name,
                    last.get("n", ""),
                    last.get("labels", ""),
                    cv,
                    label,
                    t_def,
                    t_cv,
                    t_cv / t_def,
                    cpu_def,
                    cpu_cv,
                    cpu_cv / cpu_def,
                    last.get("candidates", ""),
                    100 * d[-1].get("err", float("nan")),
                    100 * last.get("err", float("nan")),
                    last.get("choice", last.get("error", "")),
                    float(np.median([r["load"] for r in d + c])),
                ]
            )
            print(markdown_table(HEADER, rows[-1:]), flush=True)
    return rows


HEADER = [
    "problem",
    "n",
    "labels",
    "estimator",
    "code",
    "t_default s",
    "t_cv s",
    "ratio",
    "cpu_default s",
    "cpu_cv s",
    "cpu ratio",
    "candidates",
    "err default %",
    "err cv %",
    "choice",
    "load",
]


def main(argv: list[str] | None = None) -> int:
    ap = bench_parser(__doc__, data=False, worker=True)
    ap.add_argument("--problem", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--estimator", default=None, help=argparse.SUPPRESS)
    ap.add_argument(
        "--code",
        action="append",
        default=None,
        help="LABEL=SRC: time the package under SRC (repeatable; default: this "
        "checkout's src); the versions are run in turn, interleaved",
    )
    ap.add_argument("--timeout", type=float, default=1800.0, help="per fit, seconds")
    ap.add_argument("--only", default=None, help="moons,digits,d784_2000,d784_10000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--repeat-large", type=int, default=1, help="rounds at n > 5000")
    ap.add_argument("--label", default="", help="a note for the results section")
    ap.add_argument(
        "--blas-threads",
        default="1",
        help="BLAS threads of the timed fits: a number (default 1, as in every "
        "earlier run) or 'default' (the library's default, what a user gets)",
    )
    args = ap.parse_args(argv)
    global BLAS_THREADS
    BLAS_THREADS = args.blas_threads
    if args.worker:
        return _worker(args)
    here = str(Path(__file__).resolve().parents[1] / "src")
    variants = dict(c.split("=", 1) for c in (args.code or [f"this={here}"]))
    machine = machine_description()
    only = set(args.only.split(",")) if args.only else None
    rows = []
    names = ["moons"] if args.quick else ["moons", "digits", "d784_2000", "d784_10000"]
    for name in names:
        if only is not None and name not in only:
            continue
        rep = args.repeat_large if name.endswith("10000") else args.repeat
        rows += run_cell(name, variants, rep, args.quick, args.timeout)
    table = markdown_table(HEADER, rows)
    print(table)
    if not args.no_save:
        note = f"{args.label}\n\n" if args.label else ""
        path = append_results(
            "cv_cost",
            "Cost of LapSVMCV / LapRLSCV against one default fit",
            "python benchmarks/bench_cv_cost.py " + " ".join(argv or sys.argv[1:]),
            note + table,
            machine,
        )
        print(f"appended to {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
