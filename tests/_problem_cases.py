"""Small fits of every estimator on the shared problem path (issue 29 point 3).

Each case returns a dict of arrays: the decision values (and a few fitted
numbers) that ``tests/data/problem_reference.npz`` stores.  Parameters that
keep the raw (paper) weights are passed explicitly, so the stored numbers are
the ones of the code before the change.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.datasets import load_iris

from semisvm import LapRLS, LapSVM, SolverOptions
from semisvm.datasets import hide_labels, make_two_moons
from semisvm.datasets._splits import Split
from semisvm.models._deformed import SemiSupervisedKernel
from semisvm.models._path import LapSVMPath
from semisvm.models._ssk import LapSVC
from semisvm.models._tsvm import ExactTSVM


def _paper(cls) -> dict:
    """``regularization='paper'`` where the estimator has the parameter."""
    return {"regularization": "paper"} if "regularization" in cls().get_params() else {}


def _moons():
    X, y, _ = make_two_moons(60, n_labeled_per_class=3, random_state=0)
    X_test = np.r_[X[:12], X[:8] + 0.15]
    return X, y, X_test


def _iris():
    X, y_true = load_iris(return_X_y=True)
    X = (X - X.mean(0)) / X.std(0)
    y = hide_labels(y_true, 3, random_state=0)
    return X, y, X[::10]


def case_lapsvm():
    X, y, Xt = _moons()
    clf = LapSVM(gamma=2.0, n_neighbors=6, solver="newton").fit(X, y)
    Xi, yi, Xit = _iris()
    # the width of the kNN rule, as stored (the extension check moves it here)
    clf3 = LapSVM(
        n_neighbors=6,
        solver="newton",
        options=SolverOptions(extension_width=None),
    ).fit(Xi, yi)
    return {"f": clf.decision_function(Xt), "f3": clf3.decision_function(Xit)}


def case_laprls():
    X, y, Xt = _moons()
    clf = LapRLS(gamma=2.0, n_neighbors=6, solver="direct").fit(X, y)
    return {"f": clf.decision_function(Xt)}


def case_ssk():
    X, _, Xt = _moons()
    ssk = SemiSupervisedKernel(
        gamma=2.0,
        n_neighbors=6,
        gamma_a=0.01,
        gamma_i=10.0,
        **_paper(SemiSupervisedKernel),
    ).fit(X)
    return {"gram": ssk.gram(Xt, X[:10]), "diag": ssk.diag(Xt), "c": ssk.c_}


def case_lapsvc():
    X, y, Xt = _moons()
    clf = LapSVC(
        gamma=2.0, n_neighbors=6, gamma_a=0.01, gamma_i=10.0, tol=1e-8, **_paper(LapSVC)
    ).fit(X, y)
    Xi, yi, Xit = _iris()
    clf3 = LapSVC(n_neighbors=6, gamma_a=0.05, gamma_i=1.0, tol=1e-8, **_paper(LapSVC))
    clf3.fit(Xi, yi)
    return {"f": clf.decision_function(Xt), "f3": clf3.decision_function(Xit)}


def case_path():
    X, y, Xt = _moons()
    clf = LapSVMPath(gamma=2.0, n_neighbors=6, cv=None).fit(X, y)
    Xi, yi, Xit = _iris()
    clf3 = LapSVMPath(n_neighbors=6, cv=None).fit(Xi, yi)
    return {
        "f": clf.decision_function(Xt),
        "lambda": clf.lambda_,
        "f3": clf3.decision_function(Xit),
    }


def case_tsvm():
    rng = np.random.RandomState(0)
    X = np.r_[rng.randn(8, 2) + 2, rng.randn(8, 2) - 2]
    y = np.full(16, -1)
    y[0], y[8] = 1, 0
    Xt = np.r_[X[::3], X[:4] * 0.5]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = ExactTSVM(
            method="branch_and_bound", gamma=0.2, C=10, C_star=10, random_state=0
        ).fit(X, y)
        y3 = np.full(24, -1)
        X3 = np.r_[X, rng.randn(8, 2) + [4, -4]]
        y3[0], y3[8], y3[16] = 1, 0, 2
        clf3 = ExactTSVM(
            method="branch_and_bound", gamma=0.2, C=10, C_star=10, random_state=0
        ).fit(X3, y3)
    return {
        "f": clf.decision_function(Xt),
        "objective": clf.objective_,
        "f3": clf3.decision_function(Xt),
    }


def case_reproduction():
    from semisvm.experiments._reproduce import prepare_split, run_classifier

    rng = np.random.RandomState(1)
    X = np.r_[rng.randn(30, 3) + 1.5, rng.randn(30, 3) - 1.5, rng.randn(30, 3) * 0.7]
    y = np.repeat([0, 1, 2], 30)
    perm = rng.permutation(90)
    split = Split(
        labeled=np.sort(perm[:9]),
        unlabeled=np.sort(perm[9:60]),
        validation=np.sort(perm[60:72]),
        test=np.sort(perm[72:]),
    )
    prep = prepare_split(X, y, split, sigma=1.2, n_neighbors=5, power=2)
    out = {
        "K": prep.K,
        "K_T": prep.K_out["T"],
        "K_V": prep.K_out["V"],
        "L": prep.L.tocsr().toarray(),
        "Y": prep.Y,
        "Y_val": prep.Y_val,
    }
    for clf in ("svm", "rlsc", "laprlsc", "newton"):
        rec = run_classifier(prep, clf, 1e-2, 0.1)
        out[clf] = [rec[f"err_{s}"] for s in "LUVT"]
    return out


CASES = {
    "lapsvm": case_lapsvm,
    "laprls": case_laprls,
    "ssk": case_ssk,
    "lapsvc": case_lapsvc,
    "path": case_path,
    "tsvm": case_tsvm,
    "reproduction": case_reproduction,
}
