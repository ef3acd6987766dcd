"""
The entire regularization path of the LapSVM
============================================

:class:`~semisvm.LapSVMPath` follows the dual coefficients of the labeled points
as the regularization :math:`\\lambda` goes from :math:`+\\infty` down (Wang et al.):
between two events they move on straight lines, so the whole path costs about
as much as a few fits, and the validation error can be minimised *exactly* over
:math:`\\lambda` instead of on a grid.

Left: the coefficients :math:`\\alpha_i(\\lambda)` and the validation error along
the path (:func:`semisvm.plot_path`).  Right: the classifier at the selected
:math:`\\lambda`.
"""

import matplotlib.pyplot as plt
import numpy as np

from semisvm import LapSVMPath, plot_path
from semisvm.datasets import hide_labels, make_two_moons
from semisvm.plotting import plot_decision_boundary

X, _, y_true = make_two_moons(240, n_labeled_per_class=None, noise=0.1,
                              random_state=2)
y = hide_labels(y_true, n_labeled_per_class=6, random_state=0)
X_val, _, y_val = make_two_moons(200, n_labeled_per_class=None, noise=0.1,
                                 random_state=3)

clf = LapSVMPath(gamma=2.0, n_neighbors=6).fit(X, y, X_val=X_val, y_val=y_val)
print(f"{clf.lambdas_.size} breakpoints, {clf.n_events_} events; "
      f"lambda chosen = {clf.lambda_:.3g} ({clf.selection_}), "
      f"validation error {clf.selection_error_:.1%}")

fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 4.5), layout="constrained")
plot_path(clf, X_val, y_val, ax=a1)
plot_decision_boundary(clf, X, y, ax=a2, resolution=120,
                       title=f"at lambda = {clf.lambda_:.3g}: test accuracy "
                       f"{np.mean(clf.predict(X_val) == y_val):.0%}")
plt.show()
