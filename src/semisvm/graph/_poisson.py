r"""Poisson learning's potentials on a graph (a cheap partition of the points).

Poisson learning (Calder, Cook, Thorpe & Slepčev, "Poisson learning: graph-based
semi-supervised learning at very low label rates", ICML 2020) puts a source
:math:`e_{y_i} - \bar y` at each labeled point i (:math:`\bar y` the mean of the
labels' one-hot rows, so every column of the sources sums to zero) and solves

.. math::
    (L + \varepsilon D)\, U = B, \qquad L = D - W,

column by column (the columns of B sum to zero, so the last column of U is
minus the sum of the others: C - 1 solves); a point goes to the class of its largest potential after the
degree-weighted mean of each column is taken out.  With :math:`\varepsilon =
0` this is the paper's equation (the sources are balanced, so the system is
consistent on a connected graph); the small mass :math:`\varepsilon D` (default
:data:`MASS` = 1e-8 times the degrees) makes it positive definite on every graph,
so that components without a label get potential 0 instead of a divergent
iteration.  Unlike the harmonic (Laplace) solution, the potentials do not flatten
to a constant with spikes at the labels as the number of points grows, which is
what makes them a usable guess of a partition at one label per class.

Solved by conjugate gradients with the Jacobi (degree) preconditioner, to a
relative residual ``rtol`` in at most ``maxiter`` iterations per class: the
partition is a *screen* (:mod:`semisvm.models._graphwidth`), not a model, and a
stopped iteration still gives one.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import cg

#: the mass term's weight, relative to the degrees
MASS = 1e-8


def poisson_potentials(
    W: Any,
    y: np.ndarray,
    classes: np.ndarray,
    *,
    mass: float = MASS,
    rtol: float = 1e-4,
    maxiter: int = 1000,
) -> np.ndarray:
    r"""The potentials :math:`U` of shape (n, C) of Poisson learning on the
    graph ``W`` (module docstring), each column with its degree-weighted mean
    taken out.

    Parameters
    ----------
    W : sparse matrix of shape (n, n)
        Symmetric non-negative weights.
    y : ndarray of shape (n,)
        Labels, ``-1`` for the unlabeled points.
    classes : ndarray of shape (C,)
        The classes; column c of the result belongs to ``classes[c]``.
    mass : float
        :math:`\varepsilon`.
    rtol, maxiter : float, int
        Stopping rule of the conjugate gradients (per class).
    """
    W = sp.csr_array(W)
    y = np.asarray(y)
    classes = np.asarray(classes)
    deg = np.asarray(W.sum(axis=1)).ravel()
    deg = np.where(deg > 0, deg, 1.0)  # an isolated point: potential 0
    A = (sp.diags_array(deg * (1.0 + mass)) - W).tocsr()
    labeled = np.flatnonzero(y != -1)
    onehot = (y[labeled][:, None] == classes[None, :]).astype(np.float64)
    B = np.zeros((W.shape[0], classes.size))
    B[labeled] = onehot - onehot.mean(axis=0)
    jacobi = sp.diags_array(1.0 / (deg * (1.0 + mass)))
    U = np.zeros_like(B)
    # the sources' columns sum to zero, hence so do the potentials': the last
    # column is minus the sum of the others (one solve for two classes)
    for c in range(classes.size - 1):
        if np.any(B[:, c]):
            U[:, c] = cg(A, B[:, c], rtol=rtol, maxiter=maxiter, M=jacobi)[0]
    U[:, -1] = -U[:, :-1].sum(axis=1)
    U -= (deg @ U) / deg.sum()
    return U


def poisson_transduction(W: Any, y: np.ndarray, classes: np.ndarray, **kw: Any):
    """The class of the largest potential of :func:`poisson_potentials`, per point
    (``classes[argmax]``, ties to the first class)."""
    classes = np.asarray(classes)
    return classes[np.argmax(poisson_potentials(W, y, classes, **kw), axis=1)]
