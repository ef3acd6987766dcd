"""semisvm's defaults against the graph peers: error and fit time in one run.

Every cell fits, on the same labels, ``LapSVM()``, ``LapRLS()``, graphlearning's
Poisson and Laplace learning (10-NN graph, graph build included),
``LabelSpreading(kernel="knn")``, ``SVC()`` on the labeled points, and the
majority class; error on the unlabeled training points, fit seconds and the
ratio of each default's time to Poisson learning's (and, on digits, to
LabelSpreading's), median over the draws.  A second table splits the defaults'
fits into their phases (``fit_times_``) beside each phase's floor on this
machine: the flops it must do over the measured GEMM rate, the bytes it must
read over the measured memory bandwidth.

Families (fixed before their first run):

* ``usps1`` / ``usps5`` / ``usps10``: full USPS (9,298 x 256, 10 classes), 1 / 5 /
  10 labels per class;
* ``digits5``: scikit-learn's digits (1,797 x 64), 5 labels per class;
* ``usps_deformed``: a ten-class digit set of 74,384 images built from full USPS:
  each image and seven copies under a random affine map of the 16 x 16 grid
  (rotation within +-12 degrees, scale 0.9-1.1, shift within +-1.5 pixels, shear
  within +-0.15; fixed seed, bilinear), 5 labels per class;
* ``moons100k`` / ``circles100k``: two moons / two circles (noise 0.1) at 100,000
  points, 1 label per class;
* ``manifold784``: the 100,000 x 784 set of ``benchmarks/scale`` with 50 labels.

    python benchmarks/bench_peers.py                       # every family, 3 draws
    python benchmarks/bench_peers.py --only usps5 digits5  # some families
    python benchmarks/bench_peers.py --quick               # CI smoke (small sizes)

Appends the tables to ``benchmarks/results/peers.md`` and the per-fit rows to
``benchmarks/results/peers.csv``.
"""

from __future__ import annotations

import csv
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "accuracy"))
import _common as cm  # noqa: E402

FAMILIES = (
    "usps1",
    "usps5",
    "usps10",
    "digits5",
    "usps_deformed",
    "moons100k",
    "circles100k",
    "manifold784",
)
METHODS = ("LapSVM", "LapRLS", "Poisson", "Laplace", "LabelSpreading", "SVC")
#: the defaults on a named operator (``--methods LapSVM-fitc ...``; not run unless
#: named): ``-dense``, ``-fitc``, ``-nystroem``
OPERATOR_METHODS = tuple(
    f"{m}-{op}" for m in ("LapSVM", "LapRLS") for op in ("dense", "fitc", "nystroem")
)
PHASES = ("kernel", "graph", "selection", "solver", "extension", "graph_width")


def deformed_usps(X: np.ndarray, y: np.ndarray, copies: int = 7, seed: int = 0):
    """USPS and ``copies`` random affine deformations of every image."""
    from scipy.ndimage import affine_transform

    rng = np.random.default_rng(seed)
    imgs = X.reshape(-1, 16, 16)
    out = [X]
    c = np.array([7.5, 7.5])
    for _ in range(copies):
        D = np.empty_like(imgs)
        for i, im in enumerate(imgs):
            a = np.deg2rad(rng.uniform(-12, 12))
            s = rng.uniform(0.9, 1.1)
            sh = rng.uniform(-0.15, 0.15)
            A = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
            A = A @ np.array([[1.0, sh], [0.0, 1.0]]) / s
            t = rng.uniform(-1.5, 1.5, 2)
            D[i] = affine_transform(
                im, A, offset=c - A @ c + t, order=1, mode="constant"
            )
        out.append(D.reshape(len(X), -1))
    return np.vstack(out).astype(np.float32), np.tile(y, copies + 1)


def load_family(
    name: str, ddir: Path, quick: bool
) -> tuple[np.ndarray, np.ndarray, int]:
    """(X, y, labels per class; 0 = ``manifold784``'s 50 labels in all)."""
    from sklearn.datasets import load_digits, make_circles

    if name.startswith("usps") and name != "usps_deformed":
        X, y, _ = cm.load_usps(ddir)
        if quick:
            X, y = X[:1500], y[:1500]
        return X, y, int(name[4:])
    if name == "usps_deformed":
        X, y, _ = cm.load_usps(ddir)
        if quick:
            X, y = X[:500], y[:500]
        X, y = deformed_usps(X, y, copies=1 if quick else 7)
        return X, y, 5
    if name == "digits5":
        X, y = load_digits(return_X_y=True)
        return X / 16.0, y, 5
    n = 3000 if quick else 100_000
    if name == "moons100k":
        sys.path.insert(0, str(HERE / "scale"))
        from data import make_moons

        X, y = make_moons(n, seed=0)
        return X, y, 1
    if name == "circles100k":
        X, y = make_circles(n, noise=0.1, factor=0.5, random_state=0)
        return X, y, 1
    if name == "manifold784":
        sys.path.insert(0, str(HERE / "scale"))
        from data import make_manifold

        X, y = make_manifold(3000 if quick else 100_000, 784, seed=0)
        return X, y, 0
    raise ValueError(name)


def draw_labels(y: np.ndarray, per_class: int, seed: int) -> np.ndarray:
    if per_class == 0:
        return cm.pick_labeled(y, 50, random_state=seed)
    rng = np.random.default_rng(seed)
    return np.sort(
        np.concatenate(
            [
                rng.choice(np.flatnonzero(y == c), per_class, replace=False)
                for c in np.unique(y)
            ]
        )
    )


def usps_draw(
    data: str | None, copies: int, per_class: int, draw: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Full USPS (with ``copies`` deformed copies of every image) as float64, its
    labels, the estimator's targets (-1 off the ``per_class`` labels of label
    draw ``draw``) and the unlabeled rows: the studies' common setup."""
    X, y, _ = cm.load_usps(cm.data_dir(data))
    if copies:
        X, y = deformed_usps(X, y, copies=copies)
    X = np.asarray(X, dtype=np.float64)
    lab = draw_labels(y, per_class, draw)
    yy = np.full(y.size, -1)
    yy[lab] = y[lab]
    return X, y, yy, np.setdiff1d(np.arange(y.size), lab)


def make(method: str) -> Any:
    from bench_accuracy import GraphLearning
    from sklearn.semi_supervised import LabelSpreading
    from sklearn.svm import SVC

    from semisvm import LapRLS, LapSVM, SolverOptions

    if method in OPERATOR_METHODS:
        name, op = method.split("-")
        cls = LapSVM if name == "LapSVM" else LapRLS
        return cls(options=SolverOptions(kernel_approximation=op))
    return {
        "LapSVM": LapSVM,
        "LapRLS": LapRLS,
        "Poisson": lambda: GraphLearning("poisson"),
        "Laplace": lambda: GraphLearning("laplace"),
        "LabelSpreading": lambda: LabelSpreading(kernel="knn", n_neighbors=7),
        "SVC": SVC,
    }[method]()


def fit_one(method: str, X, y, lab) -> tuple[float, float, dict]:
    """(error on the unlabeled points, fit seconds, phases) of one fit."""
    unl = np.setdiff1d(np.arange(y.size), lab)
    est = make(method)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        if method == "SVC":
            est.fit(X[lab], y[lab])
        else:
            est.fit(X, np.where(np.isin(np.arange(y.size), lab), y, -1))
        t = time.perf_counter() - t0
    if method == "SVC":
        pred = est.predict(X[unl])
    else:
        pred = np.asarray(est.transduction_)[unl]
    phases = dict(getattr(est, "fit_times_", {}) or {})
    phases["n_iter"] = getattr(est, "n_iter_", None)
    phases["operator"] = getattr(est, "kernel_operator_", None)
    return float(np.mean(pred != y[unl])), t, phases


def machine_rates() -> dict[str, float]:
    """The measured GEMM rate (flop/s, float32 and float64) and memory bandwidth
    (bytes/s, a large array read) on the BLAS threads the fits use."""
    rng = np.random.default_rng(0)
    rates = {}
    for dt in (np.float32, np.float64):
        A = rng.standard_normal((2048, 2048)).astype(dt)
        A @ A
        t = min(_time(lambda A=A: A @ A) for _ in range(3))
        rates[f"gemm_{np.dtype(dt).name}"] = 2 * 2048**3 / t
    big = np.ones(200_000_000 // 8)
    t = min(_time(lambda: big.sum()) for _ in range(3))
    rates["bandwidth"] = big.nbytes / t
    return rates


def _time(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def floors(n: int, d: int, n_cols: int, n_iter: Any, operator: str, rates) -> dict:
    """Each phase's floor: flops over the GEMM rate, bytes over the bandwidth
    (the dense float32 K, or the block operator: float32 factor of m landmarks
    read twice per product, residual blocks of ~1.5 x 300 points; none where no
    simple model holds)."""
    from semisvm.models._cost import UNEVEN_BLOCKS
    from semisvm.models._scale import default_n_components

    g = rates["gemm_float32"]
    bw = rates["bandwidth"]
    it = int(np.max(n_iter)) if n_iter is not None else 0
    if operator == "blocks":
        m, b = default_n_components(n), UNEVEN_BLOCKS * 300
        return {
            # C = k(X, Z), the features C T, the residual blocks
            "kernel": (2 * n * m * d + 2 * n * m * m + 2 * n * b * d) / g,
            # the exact search's float32 distances
            "graph": 2 * n * n * d / g,
            "solver": it * (8 * n * m + 4 * n * b) / bw,
        }
    if operator != "dense":
        return {}
    return {
        "kernel": 2 * n * n * d / g + 4 * n * n / bw,  # the Gram product, K written
        "graph": 4 * n * n / bw,  # the kNN lists read off K: K read once
        "solver": it * 4 * n * n / bw,  # one read of K per PCG iteration
    }


def main(argv: list[str] | None = None) -> int:
    ap = cm.bench_parser(__doc__)
    ap.add_argument("--only", nargs="+", choices=FAMILIES, default=list(FAMILIES))
    ap.add_argument("--draws", type=int, default=3)
    ap.add_argument(
        "--methods",
        nargs="+",
        choices=METHODS + OPERATOR_METHODS,
        default=list(METHODS),
    )
    ap.add_argument(
        "--warm-gib",
        type=float,
        default=4.0,
        help="GiB written before each family's timings (cm.touch_memory; 0: none)",
    )
    args = ap.parse_args(argv)
    ddir = cm.data_dir(args.data)
    machine = cm.machine_description()
    rates = machine_rates()
    draws = 1 if args.quick else args.draws
    # imports and first-call costs outside the timings (graphlearning's import
    # alone takes seconds)
    Xw, yw, _ = load_family("moons100k", ddir, True)
    for m in args.methods:
        fit_one(m, Xw[:300], yw[:300], draw_labels(yw[:300], 2, 0))
    rows: list[dict] = []
    for fam in args.only:
        needs_data = fam.startswith("usps")
        if needs_data and not (ddir / "usps_full.npz").exists():
            print(f"{fam}: no usps_full.npz in {ddir}; skipped", flush=True)
            continue
        X, y, per_class = load_family(fam, ddir, args.quick)
        # the VM's first touch of memory outside the timings, just before them
        if not args.quick:
            secs = cm.touch_memory(args.warm_gib)
            print(f"{fam}: {args.warm_gib:g} GiB written in {secs:.1f} s", flush=True)
        for s in range(draws):
            lab = draw_labels(y, per_class, s)
            majority = np.bincount(y[lab]).argmax()
            unl = np.setdiff1d(np.arange(y.size), lab)
            rows.append(
                dict(
                    family=fam,
                    draw=s,
                    method="majority",
                    error=float(np.mean(y[unl] != majority)),
                    seconds=0.0,
                    phases={},
                )
            )
            for m in args.methods:
                err, t, ph = fit_one(m, X, y, lab)
                rows.append(
                    dict(
                        family=fam,
                        draw=s,
                        method=m,
                        error=err,
                        seconds=t,
                        phases=ph,
                        n=X.shape[0],
                        d=X.shape[1],
                        classes=np.unique(y).size,
                    )
                )
                print(f"{fam} draw {s} {m}: {100 * err:.2f}% in {t:.2f} s", flush=True)
    body = tables(rows, rates)
    print(body)
    if not args.no_save:
        path = cm.append_results(
            "peers",
            "semisvm against the graph peers",
            " ".join(sys.argv),
            body,
            machine,
        )
        with open(path.with_suffix(".csv"), "a", newline="") as fh:
            w = csv.writer(fh)
            for r in rows:
                w.writerow(
                    [
                        machine["date"],
                        machine["commit"],
                        r["family"],
                        r["draw"],
                        r["method"],
                        r["error"],
                        r["seconds"],
                    ]
                )
    return 0


def tables(rows: list[dict], rates: dict) -> str:
    fams = list(dict.fromkeys(r["family"] for r in rows))
    methods = list(dict.fromkeys(r["method"] for r in rows))
    lines = [
        "Error on the unlabeled points (%) and fit time (s), median over the draws; "
        "x Poisson: the default's time over Poisson learning's (graph included).",
        "",
        "| family | "
        + " | ".join(f"{m} err | {m} s" for m in methods)
        + " | LapSVM x Poisson | LapRLS x Poisson | LapSVM x LabelSpreading |",
        "|---" * (1 + 2 * len(methods) + 3) + "|",
    ]

    def med(f, m, key):
        v = [r[key] for r in rows if r["family"] == f and r["method"] == m]
        return float(np.median(v)) if v else float("nan")

    for f in fams:
        cells = []
        for m in methods:
            cells += [f"{100 * med(f, m, 'error'):.2f}", f"{med(f, m, 'seconds'):.2f}"]
        p = med(f, "Poisson", "seconds")
        ls = med(f, "LabelSpreading", "seconds")
        cells += [
            f"{med(f, 'LapSVM', 'seconds') / p:.1f}",
            f"{med(f, 'LapRLS', 'seconds') / p:.1f}",
            f"{med(f, 'LapSVM', 'seconds') / ls:.1f}",
        ]
        lines.append(f"| {f} | " + " | ".join(cells) + " |")
    lines += [
        "",
        f"Machine rates: GEMM float32 {rates['gemm_float32'] / 1e9:.1f} "
        f"Gflop/s, float64 {rates['gemm_float64'] / 1e9:.1f} Gflop/s, memory "
        f"read {rates['bandwidth'] / 1e9:.1f} GB/s.",
        "",
        "Phases of the defaults' fits (s, median over the draws; floor in "
        "brackets where a simple model holds: dense float32 K, block operator).",
        "",
        "| family | model | operator | iterations | "
        + " | ".join(PHASES)
        + " | total |",
        "|---" * (5 + len(PHASES)) + "|",
    ]
    for f in fams:
        for m in ("LapSVM", "LapRLS") + OPERATOR_METHODS:
            rs = [r for r in rows if r["family"] == f and r["method"] == m]
            if not rs:
                continue
            r0 = rs[0]
            fl = floors(
                r0["n"],
                r0["d"],
                r0["classes"],
                r0["phases"].get("n_iter"),
                r0["phases"].get("operator"),
                rates,
            )
            cells = []
            for ph in PHASES:
                v = float(np.median([r["phases"].get(ph, 0.0) for r in rs]))
                cells.append(f"{v:.2f}" + (f" [{fl[ph]:.2f}]" if ph in fl else ""))
            it = r0["phases"].get("n_iter")
            it = int(np.max(it)) if it is not None else "-"
            lines.append(
                f"| {f} | {m} | {r0['phases'].get('operator')} | {it} | "
                + " | ".join(cells)
                + f" | {float(np.median([r['seconds'] for r in rs])):.2f} |"
            )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
