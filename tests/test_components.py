"""The "auto" early stop on graphs with components without labels
(models/_components.py)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from semisvm import LapRLS, LapSVM
from semisvm.graph import LaplacianPower, graph_laplacian, knn_graph
from semisvm.models._components import unlabeled_components


def _union_find_components(A: sp.spmatrix) -> np.ndarray:
    """Component label of every node, by union-find over the edges (a
    reference independent of scipy's csgraph)."""
    n = A.shape[0]
    parent = np.arange(n)

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    coo = sp.coo_matrix(A)
    for i, j in zip(coo.row, coo.col, strict=True):
        ri, rj = find(int(i)), find(int(j))
        if ri != rj:
            parent[ri] = rj
    return np.array([find(i) for i in range(n)])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_unlabeled_components_equal_union_find(seed):
    rng = np.random.default_rng(seed)
    n = 60
    # a sparse random graph with several components and isolated points
    A = sp.random(n, n, density=0.02, random_state=seed, format="csr")
    A = ((A + A.T) > 0).astype(float)
    L = sp.csr_matrix(sp.diags(np.asarray(A.sum(axis=1)).ravel()) - A)
    labeled = np.zeros(n, dtype=bool)
    labeled[rng.choice(n, 8, replace=False)] = True
    comp = _union_find_components(A)
    n_comp = np.unique(comp).size
    n_unl = n_comp - np.unique(comp[labeled]).size
    assert unlabeled_components(L, labeled) == (n_comp, n_unl)


def test_unlabeled_components_of_a_power_and_of_no_graph():
    X = np.r_[np.zeros((5, 2)), np.full((5, 2), 50.0)] + np.arange(10)[:, None] * 0.01
    W = knn_graph(X, 3, weight="binary")
    L = graph_laplacian(W, normalized=False)
    labeled = np.zeros(10, dtype=bool)
    labeled[0] = True
    assert unlabeled_components(L, labeled) == (2, 1)
    # the operator of L^2: its base carries the edges (L^2 has the same components)
    assert unlabeled_components(LaplacianPower(L, 2), labeled) == (2, 1)
    labeled[7] = True
    assert unlabeled_components(graph_laplacian(W, power=3), labeled) == (2, 0)
    assert unlabeled_components(None, labeled) is None
    assert unlabeled_components(L.toarray(), labeled) is None  # not sparse


def _blobs(labeled_blobs):
    rng = np.random.default_rng(3)
    centers = np.array([[0.0, 0.0], [12.0, 0.0], [0.0, 12.0]])
    X = np.vstack([c + rng.normal(size=(70, 2)) for c in centers])
    y_true = np.repeat([0, 1, 1], 70)
    y = np.full(y_true.size, -1)
    for b in labeled_blobs:
        y[[70 * b, 70 * b + 1]] = y_true[70 * b]
    return X, y


def test_auto_runs_to_tol_when_a_component_has_no_label():
    # blob 2 (70 points) holds no label: its outputs move along a direction of
    # curvature gamma_a only, so "auto" must not stop on the stability rule
    X, y = _blobs([0, 1])
    est = LapSVM(gamma_a=1e-6, gamma_i=1.0).fit(X, y)
    assert est.graph_components_ == {"n_components": 3, "n_unlabeled": 1}
    assert est.termination_condition_ == "tol"
    ref = LapSVM(gamma_a=1e-6, gamma_i=1.0, early_stopping=None).fit(X, y)
    np.testing.assert_allclose(
        est.decision_function(X), ref.decision_function(X), rtol=1e-10, atol=1e-12
    )
    # an explicit rule is the user's choice: kept
    kept = LapSVM(gamma_a=1e-6, gamma_i=1.0, early_stopping="stability").fit(X, y)
    assert kept.graph_components_ is None
    assert kept.n_iter_ < est.n_iter_


def test_auto_keeps_the_stability_rule_when_every_component_has_labels():
    X, y = _blobs([0, 1, 2])
    est = LapSVM(gamma_a=1e-6, gamma_i=1.0).fit(X, y)
    assert est.graph_components_ == {"n_components": 3, "n_unlabeled": 0}
    ref = LapSVM(gamma_a=1e-6, gamma_i=1.0, early_stopping="stability").fit(X, y)
    np.testing.assert_array_equal(est.decision_function(X), ref.decision_function(X))
    assert est.n_iter_ == ref.n_iter_


def test_verbose_says_why_the_early_stop_is_off(capsys):
    X, y = _blobs([0, 1])
    LapSVM(gamma_a=1e-6, gamma_i=1.0, verbose=1000).fit(X, y)
    out = capsys.readouterr().out
    assert "early stop off: 1 of the graph's 3 connected components" in out


def test_verbose_iteration_lines_one_per_report_whatever_the_classes(capsys):
    # 3 classes: one PCG column each; the progress stays one line per report
    rng = np.random.default_rng(0)
    centres = np.array([[0.0, 0.0], [4.0, 0.0], [0.0, 4.0]])
    X = np.vstack([c + rng.standard_normal((60, 2)) for c in centres])
    y = np.full(180, -1)
    y[[0, 1, 60, 61, 120, 121]] = [0, 0, 1, 1, 2, 2]
    clf = LapSVM(
        solver="pcg", gamma_a=1e-6, gamma_i=1.0, early_stopping=None, verbose=2
    ).fit(X, y)
    lines = [ln for ln in capsys.readouterr().out.splitlines() if " iter " in ln]
    assert len(lines) == int(np.max(clf.n_iter_)) // 2
    assert all(ln.startswith("[LapSVM] iter ") for ln in lines)
    assert all("of 3 columns" in ln and "still active" in ln for ln in lines)
    # the last report is not below the final objective (it only decreases)
    last = float(lines[-1].split("objective sum ")[1].split(" ")[0])
    assert last >= float(np.sum(clf.objective_)) * (1 - 1e-5)  # 6 digits printed


def test_points_no_label_reaches_are_counted_and_said_once():
    # blob 2 (70 points) is a component of the graph without a label: the fit
    # warns once with the count and what decides their labels, and records them
    X, y = _blobs([0, 1])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = LapSVM().fit(X, y)
    said = [w for w in caught if "hold no labeled point" in str(w.message)]
    assert len(said) == 1
    assert "70 of the 210 training points" in str(said[0].message)
    assert "ambient term" in str(said[0].message)
    np.testing.assert_array_equal(est.unreachable_, np.arange(140, 210))
    # every component labeled: nothing to say
    X, y = _blobs([0, 1, 2])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = LapRLS().fit(X, y)
    assert not [w for w in caught if "hold no labeled point" in str(w.message)]
    assert est.unreachable_.size == 0
