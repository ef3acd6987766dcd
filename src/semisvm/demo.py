"""The README's main job: LapSVM with a few labels against a supervised SVM.

Run with ``python -m semisvm.demo``.  Uses only data that ships with the
dependencies (scikit-learn's handwritten digits) or is generated (two moons), so
it works on a fresh machine with no download.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from sklearn.svm import SVC

from .datasets import hide_labels, make_two_moons
from .models import LapSVM


def _row(name: str, clf_name: str, err_u: float, err_t: float, secs: float) -> str:
    return f"| {name:<22} | {clf_name:<28} | {100 * err_u:8.2f} | {100 * err_t:8.2f} | {secs:8.3f} |"


def run(n_labeled_per_class: int = 5, random_state: int = 0) -> list[str]:
    """Train LapSVM and SVC on the same few labels; return the table lines."""
    lines = [
        "| data set               | classifier                   | err U(%) | err T(%) | time (s) |",
        "|------------------------|------------------------------|----------|----------|----------|",
    ]
    # --- digits: 10 classes, a few labels per class
    X, y_true = load_digits(return_X_y=True)
    X = X / 16.0
    Xtr, Xte, ytr, yte = train_test_split(
        X, y_true, test_size=0.25, stratify=y_true, random_state=random_state
    )
    y = hide_labels(ytr, n_labeled_per_class, random_state)
    u = y == -1
    name = f"digits ({n_labeled_per_class}/class)"
    for label, clf in [
        ("LapSVM (PCG, early stop)", LapSVM()),
        ("LapSVM (Newton)", LapSVM(solver="newton")),
    ]:
        t0 = time.perf_counter()
        clf.fit(Xtr, y)
        dt = time.perf_counter() - t0
        err_u = np.mean(clf.transduction_[u] != ytr[u])
        err_t = np.mean(clf.predict(Xte) != yte)
        lines.append(_row(name, label, err_u, err_t, dt))
    t0 = time.perf_counter()
    svc = SVC().fit(Xtr[~u], y[~u])
    dt = time.perf_counter() - t0
    lines.append(
        _row(
            name,
            "SVC (labeled only)",
            np.mean(svc.predict(Xtr[u]) != ytr[u]),
            np.mean(svc.predict(Xte) != yte),
            dt,
        )
    )
    # --- two moons: 1 label per class
    X, y, y_true = make_two_moons(200, n_labeled_per_class=1, random_state=random_state)
    Xte, _, yte = make_two_moons(
        400, n_labeled_per_class=None, sampling="uniform", random_state=random_state + 1
    )
    u = y == -1
    t0 = time.perf_counter()
    lap = LapSVM(graph_weight="heat").fit(X, y)
    dt = time.perf_counter() - t0
    lines.append(
        _row(
            "two moons (1/class)",
            "LapSVM (PCG, early stop)",
            np.mean(lap.transduction_[u] != y_true[u]),
            np.mean(lap.predict(Xte) != yte),
            dt,
        )
    )
    t0 = time.perf_counter()
    svc = SVC(gamma=lap.gamma_).fit(X[~u], y[~u])
    dt = time.perf_counter() - t0
    lines.append(
        _row(
            "two moons (1/class)",
            "SVC (labeled only)",
            np.mean(svc.predict(X[u]) != y_true[u]),
            np.mean(svc.predict(Xte) != yte),
            dt,
        )
    )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--labels", type=int, default=5, help="labels per class (digits)"
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    print("semisvm demo: transductive error on the unlabeled training points (U) and")
    print(
        "error on held-out test points (T), LapSVM against an SVM on the labels alone.\n"
    )
    for line in run(args.labels, args.seed):
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
