"""Property-based tests of the exact TSVM against independent references.

* branch and bound = brute force over every balanced labeling (u <= 10);
* randomized method: its labeling always meets the balance window, its
  objective is that of its labeling, its lower bound never exceeds the optimum
  (branch and bound), and a certificate implies the optimum.

The problems are tiny (u <= 20) so that 500+ random cases run in about a minute;
they include unbalanced unlabeled parts and ``balance_tol`` anywhere in
[0, 0.99], the settings where the earlier certificate was wrong.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from semisvm.kernels import kernel_matrix  # noqa: E402
from semisvm.solvers._l2svm import l2svm_primal  # noqa: E402
from semisvm.solvers._tsvm import (  # noqa: E402
    balance_bounds,
    tsvm_branch_and_bound,
    tsvm_randomized,
)

SETTINGS = dict(
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@st.composite
def problems(draw, max_u=9):
    """A tiny TSVM problem: two moons or two blobs, unbalanced U allowed."""
    seed = draw(st.integers(0, 2**31 - 1))
    u = draw(st.integers(2, max_u))
    n_lab = draw(st.integers(2, 3))
    p_pos = draw(st.floats(0.1, 0.9))  # fraction of class +1 in U
    shape = draw(st.sampled_from(["moons", "blobs"]))
    rng = np.random.default_rng(seed)
    n = u + n_lab
    cls = np.where(rng.random(n) < p_pos, 1.0, -1.0)
    cls[0], cls[1] = 1.0, -1.0
    if shape == "moons":
        a = rng.uniform(0, np.pi, n)
        X = np.c_[np.cos(a), np.sin(a)]
        X[cls < 0] = np.c_[1 - np.cos(a[cls < 0]), 0.5 - np.sin(a[cls < 0])]
        X += 0.1 * rng.normal(size=X.shape)
    else:
        X = rng.normal(size=(n, 2)) + 1.5 * cls[:, None] * np.array([1.0, 0.0])
    t = np.zeros(n)
    t[:n_lab] = cls[:n_lab]
    K = kernel_matrix(X, kernel="rbf", gamma=draw(st.floats(0.2, 5.0)))
    C = draw(st.floats(0.5, 10.0))
    C_star = draw(st.sampled_from([0.1, 1.0, 10.0, 100.0]))
    tol = draw(st.one_of(st.just(0.0), st.floats(0.0, 0.99)))
    frac = draw(st.one_of(st.none(), st.floats(0.1, 0.9)))
    return K, t, C, C_star, tol, frac


def _objective_of(K, t, labels, C, C_star):
    tt = t.copy()
    tt[t == 0] = labels
    return l2svm_primal(K, tt, np.where(t != 0, C, C_star)).objective


def _window(t, tol, frac):
    u = int(np.count_nonzero(t == 0))
    if frac is None:
        frac = float(np.mean(t[t != 0] > 0))
    return balance_bounds(u, frac, tol)


@pytest.mark.slow
@settings(max_examples=150, **SETTINGS)
@given(problems(max_u=8))
def test_branch_and_bound_equals_brute_force(problem):
    K, t, C, C_star, tol, frac = problem
    lo, hi = _window(t, tol, frac)
    u = int(np.count_nonzero(t == 0))
    best = np.inf
    for bits in itertools.product((-1.0, 1.0), repeat=u):
        lab = np.array(bits)
        if lo <= np.count_nonzero(lab > 0) <= hi:
            best = min(best, _objective_of(K, t, lab, C, C_star))
    res = tsvm_branch_and_bound(
        K, t, C=C, C_star=C_star, balance_tol=tol, positive_fraction=frac
    )
    assert res.is_global_optimum
    assert abs(res.objective - best) <= 1e-8 * max(1.0, best)
    assert lo <= np.count_nonzero(res.labels > 0) <= hi
    assert abs(_objective_of(K, t, res.labels, C, C_star) - best) <= 1e-8 * max(
        1.0, best
    )


@pytest.mark.slow
@settings(max_examples=550, **SETTINGS)
@given(
    problems(max_u=20),
    st.integers(0, 2**31 - 1),
    st.floats(0.1, 0.8),
    st.booleans(),
    st.booleans(),
)
def test_randomized_certificate_implies_optimum(problem, seed, r_frac, whole_set, keep):
    K, t, C, C_star, tol, frac = problem
    u = int(np.count_nonzero(t == 0))
    lo, hi = _window(t, tol, frac)
    bb = tsvm_branch_and_bound(
        K, t, C=C, C_star=C_star, balance_tol=tol, positive_fraction=frac
    )
    assert bb.is_global_optimum
    rnd = tsvm_randomized(
        K,
        t,
        C=C,
        C_star=C_star,
        balance_tol=tol,
        positive_fraction=frac,
        sample_size=max(1, min(u, int(round(r_frac * u)))),
        max_iter=6,
        random_state=seed,
        keep_incumbent_margin=keep,
        # without the whole-set search only the sample relaxations can prove
        full_search_after=3 if whole_set else None,
    )
    scale = 1e-8 * max(1.0, bb.objective)
    # always: a balanced labeling, its own objective, a valid lower bound
    assert lo <= np.count_nonzero(rnd.labels > 0) <= hi
    np.testing.assert_allclose(
        _objective_of(K, t, rnd.labels, C, C_star), rnd.objective, rtol=1e-8, atol=1e-10
    )
    assert rnd.objective >= bb.objective - scale
    assert rnd.lower_bound <= bb.objective + scale
    assert rnd.lower_bound <= rnd.objective
    if rnd.is_global_optimum:
        assert rnd.termination == "certificate"
        assert abs(rnd.objective - bb.objective) <= scale
        assert rnd.gap <= 1e-8
    else:
        assert rnd.termination != "certificate"
