"""
PCG convergence and early stopping
==================================

The LapSVM primal is solved by preconditioned conjugate gradient (Melacci &
Belkin 2011, Algorithm 1).  The labels of the unlabeled points settle long
before the objective has converged, so the paper stops on the data: the
*stability* rule stops when fewer than 1.5% of the unlabeled points changed
label since the last check.

Top: the stopping quantities of a run to tolerance (``early_stopping=None``),
normalised by their value at the start, with the error on held-out points.
Bottom: iterations and test error of each stopping rule.
"""

import warnings

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split

from semisvm import LapSVM, SolverOptions
from semisvm.datasets import hide_labels
from semisvm.plotting import plot_convergence

X, y_full = load_digits(return_X_y=True)
X = X / 16.0
X, X_test, y_full, y_test = train_test_split(X, y_full, test_size=0.3,
                                             random_state=0, stratify=y_full)
y = hide_labels(y_full, n_labeled_per_class=5, random_state=0)

# a run to a tight tolerance, capped at 300 iterations (the cap, not the
# tolerance, ends it: that is the point of the example)
warnings.simplefilter("ignore", ConvergenceWarning)
full = LapSVM(early_stopping=None, tol=1e-8, max_iter=300,
              options=SolverOptions(record_history=True))
full.fit(X, y, X_val=X_test, y_val=y_test)
fig = plot_convergence(full)
fig.axes[0].set_title("PCG to tolerance, digits, 5 labels per class (class 0)")

rows = []
for rule in [None, "stability", "validation", "mixed"]:
    clf = LapSVM(early_stopping=rule, random_state=0, max_iter=300, tol=1e-8,
                 options=SolverOptions(validation_fraction=0.3)).fit(X, y)
    err = np.mean(clf.predict(X_test) != y_test)
    rows.append((str(rule), float(np.max(clf.n_iter_)), err))
    print(f"early_stopping={rule!s:10}: {int(np.max(clf.n_iter_)):4d} iterations, "
          f"test error {err:.1%}")

fig, (a1, a2) = plt.subplots(1, 2, figsize=(9, 3.5), layout="constrained")
names = [r[0] for r in rows]
a1.bar(names, [r[1] for r in rows], color="tab:blue")
a1.set_ylabel("PCG iterations (largest class)")
a2.bar(names, [100 * r[2] for r in rows], color="tab:orange")
a2.set_ylabel("test error (%)")
for a in (a1, a2):
    a.set_xlabel("early_stopping")
plt.show()
