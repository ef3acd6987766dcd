"""Poisson learning's potentials (semisvm.graph._poisson), the screen of the
graph-width rule, against a dense solve."""

import numpy as np
import pytest
import scipy.sparse as sp

from semisvm.graph import knn_graph
from semisvm.graph._poisson import poisson_potentials, poisson_transduction


def _dense_reference(W, y, classes, mass):
    W = np.asarray(W.toarray() if sp.issparse(W) else W)
    d = W.sum(axis=1)
    A = np.diag(d * (1 + mass)) - W
    lab = np.flatnonzero(y != -1)
    onehot = (y[lab][:, None] == classes[None, :]).astype(float)
    B = np.zeros((len(y), len(classes)))
    B[lab] = onehot - onehot.mean(axis=0)
    U = np.linalg.solve(A, B)
    return U - (d @ U) / d.sum()


@pytest.mark.parametrize("mass", [1e-8, 1e-2])
def test_potentials_solve_the_poisson_equation(mass):
    rng = np.random.default_rng(0)
    X = np.r_[rng.normal(0, 1, (40, 2)), rng.normal(4, 1, (40, 2))]
    W = knn_graph(X, 6, weight="heat")
    y = np.full(80, -1)
    y[[0, 1, 2]] = 0
    y[[40, 41]] = 2  # unequal counts: the sources are balanced by their mean
    classes = np.array([0, 2])
    U = poisson_potentials(W, y, classes, mass=mass, rtol=1e-12, maxiter=10_000)
    ref = _dense_reference(W, y, classes, mass)
    # a 1e-8 mass leaves a nearly singular system: compare at its conditioning
    tol = 1e-6 * np.abs(ref).max() if mass < 1e-4 else 1e-9
    np.testing.assert_allclose(U, ref, atol=tol)
    # the degree-weighted mean of each column is zero
    d = np.asarray(W.sum(axis=1)).ravel()
    np.testing.assert_allclose(d @ U, 0.0, atol=1e-9)
    # the partition: the class of the largest potential
    lab = poisson_transduction(W, y, classes, mass=mass, rtol=1e-12, maxiter=10_000)
    np.testing.assert_array_equal(lab, classes[np.argmax(ref, axis=1)])
    assert np.mean(lab[:40] == 0) > 0.9 and np.mean(lab[40:] == 2) > 0.9


def test_a_component_without_labels_gets_zero_potential():
    # two disconnected blocks, labels only in the first: the mass term keeps
    # the system definite and the unlabeled block's potentials at the mean
    W = sp.block_diag([np.ones((4, 4)) - np.eye(4)] * 2).tocsr()
    y = np.array([0, 1, -1, -1, -1, -1, -1, -1])
    U = poisson_potentials(W, y, np.array([0, 1]), rtol=1e-12, maxiter=1000)
    assert np.all(np.isfinite(U))
    assert np.ptp(U[4:], axis=0).max() < 1e-9
    assert U[0, 0] > U[0, 1] and U[1, 1] > U[1, 0]
