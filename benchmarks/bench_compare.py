"""semisvm's LapSVM side by side with other Python semi-supervised classifiers.

Same splits, same machine, same run; each method in a fresh process (own peak
memory).  Binary tasks, because LAMDA-SSL's LapSVM is binary only:

* ``usps_b``: full USPS, digits 0-4 against 5-9, 7,291 training images (50
  labeled), tested on the 2,007 test images;
* ``synthetic``: the 784-dimensional digits-like two-class mixture, 4,000 training
  points (40 labeled), 1,000 test points.

Methods: ``semisvm`` LapSVM by PCG (stability stop) and by the dual;
scikit-learn's ``LabelSpreading`` (graph-only baseline; kNN and RBF graphs); and
LAMDA-SSL's ``LapSVM`` when a Python with LAMDA-SSL installed is found
(``$LAMDA_PYTHON``, else ``/tmp/lamda_venv/bin/python``).  LAMDA-SSL pulls in
PyTorch, so it is kept out of the project's environment: install it in a
throwaway venv (``python -m venv /tmp/lamda_venv &&
/tmp/lamda_venv/bin/pip install LAMDA-SSL "scikit-learn<1.6"``).

LAMDA-SSL's LapSVM scales its terms differently (loss / l, gamma_I / n^2, plain
Laplacian).  Its kNN-graph mode builds a wrong Laplacian (``np.diag`` of the
``np.matrix`` row of degrees), so it runs with its default dense RBF graph (same
gamma as the kernel), gamma_A / l and gamma_I n / l (our gamma_I with the dense
graph's degree, about n, folded in).  It needs scikit-learn < 1.6 (it reads
``ClassifierMixin._estimator_type``).

Usage::

    python benchmarks/bench_compare.py            # full sizes (~10 min)
    python benchmarks/bench_compare.py --quick    # 800 training points (< 2 min)

Appends the table to ``benchmarks/results/compare.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as cm  # noqa: E402

SCRIPT = Path(__file__).resolve()
METHODS = (
    "semisvm_pcg",
    "semisvm_dual",
    "labelspreading_knn",
    "labelspreading_rbf",
    "lamda_lapsvm",
)
GAMMA_I = {"usps_b": 0.1, "synthetic": 1.0}
GAMMA_A = 1e-6


def make_split(name: str, quick: bool, folder: Path, seed: int = 0):
    """(X_train, y_train with -1 for unlabeled, true y_train, X_test, y_test)."""
    if name == "usps_b":
        X, y, is_test = cm.load_usps(folder)
        y = (y >= 5).astype(int)
        Xtr, ytr, Xte, yte = X[~is_test], y[~is_test], X[is_test], y[is_test]
        n_lab = 50
        if quick:
            rng = np.random.default_rng(seed)
            tr = np.sort(rng.choice(ytr.size, 800, replace=False))
            te = np.sort(rng.choice(yte.size, 300, replace=False))
            Xtr, ytr, Xte, yte = Xtr[tr], ytr[tr], Xte[te], yte[te]
            n_lab = 20
    elif name == "synthetic":
        n_tr, n_te, n_lab = (800, 300, 20) if quick else (4000, 1000, 40)
        X, y = cm.digits_like(
            n_tr + n_te, 784, n_classes=2, n_protos=8, random_state=seed + 7
        )
        Xtr, ytr, Xte, yte = X[:n_tr], y[:n_tr], X[n_tr:], y[n_tr:]
    else:
        raise ValueError(name)
    lab = cm.pick_labeled(ytr, n_lab, random_state=seed + 1)
    ys = np.full(ytr.size, -1)
    ys[lab] = ytr[lab]
    return Xtr, ys, ytr, Xte, yte


def worker(args: argparse.Namespace) -> None:
    """Fit one method on the split stored in ``args.split``; print one JSON line."""
    with np.load(args.split) as f:
        Xtr, ys, Xte, yte = (np.asarray(f[k]) for k in ("Xtr", "ys", "Xte", "yte"))
        gamma = float(f["gamma"])
        gamma_i = float(f["gamma_i"])
    m = args.method
    lab = ys != -1
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if m.startswith("semisvm"):
            from semisvm import LapSVM, SolverOptions

            solver = m.split("_")[1]
            # the paper's raw weights; early stopping is PCG's
            clf = LapSVM(
                solver=solver,
                gamma_a=GAMMA_A,
                gamma_i=gamma_i,
                gamma=gamma,
                n_neighbors=10,
                early_stopping="stability" if solver == "pcg" else None,
                max_iter=3000,
                options=SolverOptions(
                    regularization="paper",
                    stability_tol=0.005,
                    stability_value_tol=0.01,
                ),
            )
            clf.fit(Xtr, ys)
        elif m.startswith("labelspreading"):
            from sklearn.semi_supervised import LabelSpreading

            kw = (
                {"kernel": "knn", "n_neighbors": 10}
                if m.endswith("knn")
                else {"kernel": "rbf", "gamma": gamma}
            )
            clf = LabelSpreading(alpha=0.2, max_iter=1000, **kw).fit(Xtr, ys)
        elif m == "lamda_lapsvm":
            from LAMDA_SSL.Algorithm.Classification.LapSVM import LapSVM as LLapSVM
            from sklearn.metrics.pairwise import rbf_kernel

            n, nl = ys.size, int(lab.sum())
            # its kNN graph mode builds a wrong Laplacian (np.diag of an np.matrix),
            # so it runs with its default dense RBF graph
            clf = LLapSVM(
                distance_function=rbf_kernel,
                gamma_d=gamma,
                kernel_function=rbf_kernel,
                gamma_k=gamma,
                gamma_A=GAMMA_A / nl,
                gamma_I=gamma_i * n / nl,
            )
            clf.fit(Xtr[lab].astype(np.float64), ys[lab], Xtr[~lab].astype(np.float64))
        else:
            raise ValueError(m)
    t_fit = time.perf_counter() - t0
    peak = cm.peak_rss_mib()
    pred = np.asarray(
        clf.predict(Xte.astype(np.float64) if m == "lamda_lapsvm" else Xte)
    )
    print(
        json.dumps(
            {
                "fit_s": t_fit,
                "test_error": float(np.mean(pred != yte)),
                "peak_rss_mib": peak,
            }
        )
    )


def lamda_python() -> str | None:
    """A Python interpreter that has LAMDA-SSL, or None."""
    cand = os.environ.get("LAMDA_PYTHON") or "/tmp/lamda_venv/bin/python"
    return cand if Path(cand).exists() else None


def main(argv: list[str] | None = None) -> None:
    ap = cm.bench_parser(__doc__, worker=True)
    ap.add_argument("--datasets", nargs="*", default=["usps_b", "synthetic"])
    ap.add_argument("--methods", nargs="*", default=list(METHODS))
    ap.add_argument("--timeout", type=float, default=1800.0)
    ap.add_argument("--method", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--split", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker(args)
        return
    from semisvm.kernels import median_gamma

    machine = cm.machine_description()
    lamda = lamda_python()
    rows, notes = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for ds in args.datasets:
            Xtr, ys, ytr, Xte, yte = make_split(ds, args.quick, cm.data_dir(args.data))
            gamma = median_gamma(Xtr)
            split = Path(tmp) / f"{ds}.npz"
            np.savez(
                split,
                Xtr=Xtr,
                ys=ys,
                Xte=Xte,
                yte=yte,
                gamma=gamma,
                gamma_i=GAMMA_I[ds],
            )
            desc = f"{Xtr.shape[0]}x{Xtr.shape[1]}, {int((ys != -1).sum())} labeled"
            for m in args.methods:
                py = None
                if m == "lamda_lapsvm":
                    if lamda is None:
                        rows.append(
                            [
                                ds,
                                desc,
                                m,
                                "not installed here",
                                float("nan"),
                                float("nan"),
                                float("nan"),
                            ]
                        )
                        continue
                    py = lamda
                r = cm.run_worker(
                    SCRIPT,
                    ["--method", m, "--split", str(split)],
                    python=py,
                    timeout=args.timeout,
                )
                if "error" in r:
                    print(f"{ds:9s} {m:20s} failed: {r['error']}", flush=True)
                    rows.append(
                        [
                            ds,
                            desc,
                            m,
                            f"failed: {r['error'][:80]}",
                            float("nan"),
                            float("nan"),
                            float("nan"),
                        ]
                    )
                    continue
                print(
                    f"{ds:9s} {m:20s} fit {r['fit_s']:8.2f}s  test error "
                    f"{100 * r['test_error']:5.2f}%  peak {r['peak_rss_mib']:.0f} MiB",
                    flush=True,
                )
                rows.append(
                    [
                        ds,
                        desc,
                        m,
                        "ok",
                        r["fit_s"],
                        100 * r["test_error"],
                        r["peak_rss_mib"],
                    ]
                )
    ref = {r[0]: r[4] for r in rows if r[2] == "semisvm_pcg" and r[3] == "ok"}
    table_rows = [
        r[:5] + [r[4] / ref[r[0]] if r[0] in ref else float("nan")] + r[5:]
        for r in rows
    ]
    table = cm.markdown_table(
        [
            "data",
            "training set",
            "method",
            "status",
            "fit (s)",
            "fit / semisvm_pcg fit",
            "test error (%)",
            "peak RSS (MiB)",
        ],
        table_rows,
    )
    if lamda is None:
        notes.append(
            "LAMDA-SSL: no interpreter with LAMDA-SSL found (set LAMDA_PYTHON)."
        )
    body = (
        f"Parameters: gamma_A={GAMMA_A}, gamma_I={GAMMA_I} (semisvm scale), RBF "
        "gamma = median rule on the training set, 10 neighbours. LabelSpreading "
        "alpha=0.2.\n\n" + table + "\n" + "".join(f"\n{n}\n" for n in notes)
    )
    print(body)
    if not args.no_save:
        cmd = "python benchmarks/bench_compare.py" + (" --quick" if args.quick else "")
        path = cm.append_results(
            "compare", "semisvm vs other Python implementations", cmd, body, machine
        )
        print(f"appended to {path}")


if __name__ == "__main__":
    main()
