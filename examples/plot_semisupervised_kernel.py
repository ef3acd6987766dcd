"""
A semi-supervised kernel for any kernel machine
===============================================

The deformed kernel of Sindhwani, Niyogi & Belkin (2005),

.. math::

   \\hat k(x, z) = k(x, z) - k_x^T (c I + L K)^{-1} L k_z ,

bends the RKHS along the graph of all points, so that *supervised* kernel
machines trained on the labeled points only become manifold-regularized.  Here
:class:`~semisvm.SemiSupervisedKernel` feeds :class:`sklearn.svm.SVC` and
kernel ridge regression on ±1 targets
(:class:`sklearn.kernel_ridge.KernelRidge`) with :math:`\\hat k` on two circles
with two labels per circle, against the same machines on the plain Gaussian
kernel.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_circles
from sklearn.kernel_ridge import KernelRidge
from sklearn.svm import SVC

from semisvm import SemiSupervisedKernel
from semisvm.datasets import hide_labels
from semisvm.kernels import kernel_matrix

X, y_true = make_circles(300, noise=0.05, factor=0.5, random_state=0)
y = hide_labels(y_true, n_labeled_per_class=2, random_state=1)
lab = y != -1
gamma = 5.0

ssk = SemiSupervisedKernel(gamma=gamma, n_neighbors=8, gamma_a=1e-3, gamma_i=1.0)
ssk.fit(X)
xx, yy = np.meshgrid(np.linspace(-1.3, 1.3, 120), np.linspace(-1.3, 1.3, 120))
grid = np.c_[xx.ravel(), yy.ravel()]

fig, axes = plt.subplots(2, 2, figsize=(9, 8), layout="constrained")
for row, (kname, gram) in enumerate([
    ("Gaussian kernel", lambda A, B: kernel_matrix(A, B, gamma=gamma)),
    ("semi-supervised kernel", lambda A, B: ssk.gram(A, B)),
]):
    K_lab = gram(X[lab], X[lab])
    for col, (mname, model) in enumerate([
        ("SVC", SVC(kernel="precomputed", C=100.0)),
        ("kernel ridge", KernelRidge(kernel="precomputed", alpha=1e-3)),
    ]):
        target = np.where(y[lab] == 1, 1.0, -1.0) if col else y[lab]
        model.fit(K_lab, target)
        score = np.asarray(model.decision_function(gram(X, X[lab])) if col == 0
                           else model.predict(gram(X, X[lab])))
        acc = np.mean((score > 0) == (y_true == 1))
        g = np.asarray(model.decision_function(gram(grid, X[lab])) if col == 0
                       else model.predict(gram(grid, X[lab]))).reshape(xx.shape)
        ax = axes[row, col]
        ax.contourf(xx, yy, np.clip(g, -1, 1), levels=21, cmap="coolwarm", alpha=0.6)
        ax.contour(xx, yy, g, levels=[0.0], colors="k")
        ax.scatter(X[~lab, 0], X[~lab, 1], s=4, c="k")
        ax.scatter(X[lab, 0], X[lab, 1], s=90, c=y[lab], cmap="coolwarm",
                   edgecolor="w", marker="D")
        ax.set_title(f"{mname}, {kname}: {acc:.0%}")
        ax.set_aspect("equal")
plt.show()
