"""The paper's "no violators => global optimum" rule is not a proof (issue 31, point 2).

Esposito & Martín solve the sample ``L u R`` under the balance constraint
*scaled to* ``|R|`` (``round(r |R|)`` positives in ``R``) and declare the
global optimum when no point of ``U \\ R`` lies inside the sample solution's
margin and the induced labeling is balanced.  The balance constraint couples
``R`` to the whole of ``U``: the optimal labeling of ``U`` may put a
different number of positives into ``R`` than the scaled count, and then the
sample optimum is *not* a lower bound of the optimum ``J*`` and the rule's
labeling can be strictly worse than ``J*``.

The problems below are the smallest such counterexamples, found by brute force
over every labeling (u = 2 unlabeled points, |R| = 1, the smallest size at
which the rule can fail: with u = 1 a non-empty sample is the whole set), plus
one with |R| = 3 of u = 4.  Each test checks, by brute force alone, that

* the rule fires (no violator, the induced labeling is balanced);
* its labeling's objective is beaten by the brute-force optimum ``J*``;
* the library's relaxed sample problem ``P_R`` (positives in ``R`` anywhere in
  ``[max(0, p_lo - (u - r)), min(r, p_hi)]``) has optimum ``<= J*`` (a true
  lower bound) and ``<`` the rule's objective, so the library's certificate
  (incumbent objective <= a proven lower bound) cannot fire on the rule's
  labeling; its branch and bound finds the same ``P_R`` optimum;
* :func:`tsvm_randomized` on the problem, for many seeds and with or without
  the whole-set search, never claims a certificate that brute force refutes.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from semisvm.kernels import kernel_matrix
from semisvm.solvers._l2svm import l2svm_primal
from semisvm.solvers._tsvm import (
    _branch_and_bound,
    balance_bounds,
    tsvm_branch_and_bound,
    tsvm_randomized,
)

# (X: two labeled points (+1, -1) then the unlabeled ones, gamma, C, C_star, R)
COUNTEREXAMPLES = {
    # u = 2, |R| = 1: the scaled window forces the sampled point positive; the
    # optimum labels it negative (J* = 2.89 against the rule's 10.8)
    "u2_far": (
        [[-1.3, 3.54], [1.33, 1.61], [2.88, -0.62], [0.98, 2.35]],
        0.1,
        10.0,
        100.0,
        [1],
    ),
    # u = 2, |R| = 1, the other way round: J* = 8.16 against 26.8
    "u2_close": (
        [[-0.05, 0.29], [0.05, -1.63], [0.23, -1.62], [-0.55, -1.64]],
        0.3,
        10.0,
        100.0,
        [0],
    ),
    # u = 4, |R| = 3: round(1.5) = 2 positives in R, the optimum has 1 there
    "u4_r3": (
        [
            [-0.75, -0.2],
            [1.91, 0.76],
            [-1.88, -0.01],
            [-0.71, 0.17],
            [-1.84, 0.28],
            [0.27, 1.81],
        ],
        0.3,
        10.0,
        10.0,
        [0, 1, 2],
    ),
}


def _problem(name):
    X, gamma, C, C_star, R = COUNTEREXAMPLES[name]
    X = np.asarray(X, float)
    t = np.zeros(len(X))
    t[0], t[1] = 1.0, -1.0
    K = kernel_matrix(X, kernel="rbf", gamma=gamma)
    return K, t, C, C_star, np.asarray(R)


def _best(K, t, C, C_star, idx, lo, hi):
    """Brute force: the best labeling of ``U[idx]`` (other U points absent)."""
    U = np.flatnonzero(t == 0)
    best = (np.inf, None, None)
    for bits in itertools.product((-1.0, 1.0), repeat=idx.size):
        lab = np.array(bits)
        if not lo <= np.count_nonzero(lab > 0) <= hi:
            continue
        tt = t.copy()
        cost = np.where(t != 0, C, 0.0)
        tt[U[idx]] = lab
        cost[U[idx]] = C_star
        sol = l2svm_primal(K, tt, cost)
        if sol.objective < best[0]:
            best = (sol.objective, lab, sol)
    return best


@pytest.mark.parametrize("name", sorted(COUNTEREXAMPLES))
def test_paper_rule_claims_a_non_optimal_labeling(name):
    K, t, C, C_star, R = _problem(name)
    U = np.flatnonzero(t == 0)
    u, r = U.size, R.size
    lo, hi = balance_bounds(u, 0.5)  # one label per class: r = 1/2
    j_star = _best(K, t, C, C_star, np.arange(u), lo, hi)[0]

    # the paper's sample problem: balance scaled to |R|
    s_lo, s_hi = balance_bounds(r, 0.5)
    obj_R, lab_R, sol = _best(K, t, C, C_star, R, s_lo, s_hi)
    out = np.setdiff1d(np.arange(u), R)
    assert np.all(np.abs(sol.f[U[out]]) >= 1.0)  # no violator
    induced = np.where(sol.f[U] >= 0, 1.0, -1.0)
    induced[R] = lab_R
    assert lo <= np.count_nonzero(induced > 0) <= hi  # balanced: the rule fires
    tt = t.copy()
    tt[U] = induced
    claimed = l2svm_primal(K, tt, np.where(t != 0, C, C_star)).objective
    np.testing.assert_allclose(claimed, obj_R, rtol=1e-9)  # zero loss outside R
    assert claimed > 1.01 * j_star  # ... yet brute force beats it

    # the library's relaxation P_R: a lower bound, below the rule's objective
    x_lo, x_hi = max(0, lo - (u - r)), min(r, hi)
    assert (x_lo, x_hi) != (s_lo, s_hi)
    opt_P = _best(K, t, C, C_star, R, x_lo, x_hi)[0]
    assert opt_P <= j_star * (1 + 1e-9)
    assert opt_P < claimed * (1 - 1e-3)
    sub = np.r_[np.flatnonzero(t != 0), U[R]]
    p = _branch_and_bound(
        K[np.ix_(sub, sub)], t[sub], C=C, C_star=C_star, lo=x_lo, hi=x_hi
    )
    assert p.termination == "complete"
    np.testing.assert_allclose(p.best_obj, opt_P, rtol=1e-8)


@pytest.mark.parametrize("name", sorted(COUNTEREXAMPLES))
@pytest.mark.parametrize("whole_set", [None, 2])
def test_library_certificate_is_never_wrong_on_counterexamples(name, whole_set):
    K, t, C, C_star, R = _problem(name)
    u = int(np.count_nonzero(t == 0))
    lo, hi = balance_bounds(u, 0.5)
    j_star = _best(K, t, C, C_star, np.arange(u), lo, hi)[0]
    bb = tsvm_branch_and_bound(K, t, C=C, C_star=C_star)
    assert bb.is_global_optimum
    np.testing.assert_allclose(bb.objective, j_star, rtol=1e-9)
    for seed in range(10):
        for keep in (True, False):
            res = tsvm_randomized(
                K,
                t,
                C=C,
                C_star=C_star,
                sample_size=R.size,
                max_iter=5,
                random_state=seed,
                keep_incumbent_margin=keep,
                full_search_after=whole_set,
            )
            assert res.lower_bound <= j_star * (1 + 1e-9)
            assert res.objective >= j_star * (1 - 1e-9)
            if res.is_global_optimum:
                np.testing.assert_allclose(res.objective, j_star, rtol=1e-8)
            else:
                assert res.gap > 0
