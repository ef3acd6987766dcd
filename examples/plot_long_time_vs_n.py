"""
Training time against the number of points
===========================================

Fit time of the LapSVM solvers and of LapRLS as the training set grows, on a
10-class mixture with 2% of the points labeled.
The primal PCG solver costs :math:`O(n^2)` per iteration and per class and
stops early; Newton, the direct LapRLS solve and the dual solver cost
:math:`O(n^3)`.  At small :math:`n`, one factorisation (dual, direct) can beat a
hundred PCG iterations on ten one-vs-rest columns; the slopes tell which wins as
:math:`n` grows.  Times are medians of a few runs on *your* machine: compare the
slopes, not the absolute numbers.

Newton is left out above 2,000 points.  This example takes a few minutes, so the documentation build does not execute
it (its file name starts with ``plot_long_``); run it yourself, or build the
documentation with ``SEMISVM_GALLERY_ALL=1``.
"""

import time

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_blobs

from semisvm import LapRLS, LapSVM
from semisvm.datasets import hide_labels

sizes = [500, 1000, 2000, 4000]
solvers = {
    "LapSVM pcg (stability)": lambda: LapSVM(solver="pcg"),
    "LapSVM newton": lambda: LapSVM(solver="newton"),
    "LapSVM dual": lambda: LapSVM(solver="dual"),
    "LapRLS direct": lambda: LapRLS(solver="direct"),
}
times = {k: [] for k in solvers}
for n in sizes:
    X, y_true = make_blobs(n, n_features=20, centers=10, cluster_std=4.0,
                           random_state=0)
    y = hide_labels(y_true, n_labeled_per_class=max(1, n // 500), random_state=0)
    for name, make in solvers.items():
        if name == "LapSVM newton" and n > 2000:  # several O(n^3) steps: minutes
            times[name].append(np.nan)
            continue
        runs = []
        for _ in range(3 if n <= 1000 else 1):
            t0 = time.perf_counter()
            make().fit(X, y)
            runs.append(time.perf_counter() - t0)
        times[name].append(float(np.median(runs)))
    print(f"n = {n:5d}: " + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in times.items()))

fig, ax = plt.subplots(figsize=(6.5, 4.2), layout="constrained")
for name, t in times.items():
    ax.loglog(sizes, t, "o-", label=name)
ref = np.array(sizes, dtype=float)
ax.loglog(ref, times["LapSVM pcg (stability)"][0] * (ref / ref[0]) ** 2, "k:",
          label=r"$\propto n^2$")
ax.loglog(ref, times["LapRLS direct"][0] * (ref / ref[0]) ** 3, "k--",
          label=r"$\propto n^3$")
ax.set(xlabel="training points n", ylabel="fit time (s, median of 3 up to n = 1000)",
       title="Time against n (kernel, graph and solver)")
ax.legend(fontsize=8)
plt.show()
