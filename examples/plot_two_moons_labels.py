"""
Decision boundaries on two moons as the labels grow
====================================================

With one labeled point per moon a supervised SVM can only draw a line between
the two labels; the Laplacian SVM lets the labels spread along the graph of the
unlabeled points and follows the moons.  As labels are added both improve, and
the supervised boundary slowly bends towards the semi-supervised one.

The boundaries are drawn with :func:`semisvm.plotting.plot_decision_boundary`
(scikit-learn's :class:`~sklearn.inspection.DecisionBoundaryDisplay` underneath):
the black line is :math:`f(x) = 0`, small dots are unlabeled points.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.svm import SVC

from semisvm import LapSVM
from semisvm.datasets import make_two_moons
from semisvm.plotting import plot_decision_boundary

fig, axes = plt.subplots(2, 3, figsize=(13, 7), layout="constrained")
for col, n_lab in enumerate([1, 3, 10]):
    X, y, y_true = make_two_moons(300, n_labeled_per_class=n_lab, noise=0.08,
                                  random_state=0)
    lap = LapSVM(graph_weight="heat").fit(X, y)
    labeled = y != -1
    svc = SVC(gamma=lap.gamma_, C=10.0).fit(X[labeled], y[labeled])
    for row, (name, clf) in enumerate([("SVC on the labels", svc), ("LapSVM", lap)]):
        acc = np.mean(clf.predict(X[~labeled]) == y_true[~labeled])
        plot_decision_boundary(clf, X, y, ax=axes[row, col], resolution=80,
                               title=f"{name}, {n_lab} label(s)/class: {acc:.0%}")
plt.show()
