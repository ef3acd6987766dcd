"""
Accuracy against the number of labels: LapSVM, SVC and LabelSpreading
=====================================================================

On scikit-learn's handwritten digits (1,797 images, 10 classes) we hide all but
a few labels per class and measure the accuracy on the points whose label was
hidden, for

* :class:`~semisvm.LapSVM` with its defaults (semi-supervised, all points),
* :class:`sklearn.svm.SVC` on the labeled points only (supervised),
* :class:`sklearn.semi_supervised.LabelSpreading` (graph-based transduction,
  kNN kernel, all points).

The semi-supervised methods win by a wide margin when labels are scarce; the
gap closes as labels grow.  Means over a few random draws of the labeled set;
the shaded band spans the smallest and largest accuracy.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.semi_supervised import LabelSpreading
from sklearn.svm import SVC

from semisvm import LapSVM
from semisvm.datasets import hide_labels

X, y_true = load_digits(return_X_y=True)
X = X / 16.0
per_class = [1, 2, 5, 10]
seeds = [0, 1]
methods = {
    "LapSVM": lambda: LapSVM(),
    "SVC (labels only)": lambda: SVC(),
    "LabelSpreading": lambda: LabelSpreading(kernel="knn", n_neighbors=10),
}
acc = {m: np.zeros((len(per_class), len(seeds))) for m in methods}
for a, k in enumerate(per_class):
    for b, seed in enumerate(seeds):
        y = hide_labels(y_true, n_labeled_per_class=k, random_state=seed)
        unl = y == -1
        for name, make in methods.items():
            clf = make()
            if name.startswith("SVC"):
                clf.fit(X[~unl], y[~unl])
                pred = clf.predict(X[unl])
            else:
                clf.fit(X, y)
                pred = clf.transduction_[unl]
            acc[name][a, b] = np.mean(pred == y_true[unl])
    print(f"{k:2d} labels/class: " + ", ".join(
        f"{m} {acc[m][a].mean():.1%}" for m in methods))

fig, ax = plt.subplots(figsize=(6.5, 4.2), layout="constrained")
for name, c in zip(methods, ["tab:red", "tab:blue", "tab:green"], strict=True):
    mean = 100 * acc[name].mean(axis=1)
    ax.plot(per_class, mean, "o-", color=c, label=name)
    ax.fill_between(per_class, 100 * acc[name].min(axis=1),
                    100 * acc[name].max(axis=1), color=c, alpha=0.15)
ax.set(xscale="log", xticks=per_class, xticklabels=[str(k) for k in per_class],
       xlabel="labeled points per class", ylabel="accuracy on the unlabeled points (%)",
       title="Digits: semi-supervised vs supervised")
ax.legend()
plt.show()
