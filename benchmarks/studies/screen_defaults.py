"""Screening of candidate default rules (how the defaults of LapSVM/LapRLS were chosen).

For each data set, number of labels per class and label draw, every combination of

* kernel width: ``median`` (median pairwise distance) or ``knn`` (mean squared
  distance to the 10th neighbour),
* graph: 10-NN binary weights + normalized Laplacian, local-scaling weights +
  normalized Laplacian, local-scaling weights + plain Laplacian D - W,
* normalized weights (lambda_A, lambda_I) on a grid (the mapping of
  ``semisvm.models._adaptive``),
* with and without the class balance (mean output on the unlabeled points set
  to 2 pi - 1),

is fitted with LapRLS (one direct solve: a fast proxy for the whole family) and
its error on the unlabeled points is compared with ``SVC()`` on the labels alone.
Prints one line per (data set, labels, configuration): ``name labels config error``.

    python benchmarks/studies/screen_defaults.py moons,circles,breast,wine,iris > screen.txt
    python benchmarks/studies/screen_defaults.py --summary screen.txt   # ranking table

The run behind the shipped defaults is summarised in ``results/defaults_screen.md``.
"""

from __future__ import annotations

import collections
import itertools
import sys

import numpy as np
import scipy.sparse as sp

GRID = list(itertools.product([1e-6, 1e-4, 1e-2], [0.1, 1, 10, 100]))


def _sets(which):
    from sklearn import datasets as skd
    from sklearn.preprocessing import StandardScaler

    from semisvm.datasets import load_benchmark, make_two_moons

    if "moons" in which:
        X, _, y = make_two_moons(1000, n_labeled_per_class=None, random_state=0)
        yield "moons", X, y
    if "circles" in which:
        X, y = skd.make_circles(1000, noise=0.05, factor=0.5, random_state=0)
        yield "circles", X, y
    if "digits" in which:
        d = skd.load_digits()
        yield "digits", d.data, d.target
    if "breast" in which:
        d = skd.load_breast_cancer()
        yield "breast", StandardScaler().fit_transform(d.data), d.target
    if "wine" in which:
        d = skd.load_wine()
        yield "wine", StandardScaler().fit_transform(d.data), d.target
    if "iris" in which:
        d = skd.load_iris()
        yield "iris", d.data, d.target
    for nm in ("g50c", "uspst", "pcmac", "coil20"):
        if nm in which:
            b = load_benchmark(nm)
            yield nm, b.X, b.y


def _dist2(X):
    sq = np.asarray(X.multiply(X).sum(1)).ravel() if sp.issparse(X) else (X * X).sum(1)
    G = X @ X.T
    G = G.toarray() if sp.issparse(G) else G
    return np.maximum(sq[:, None] + sq[None] - 2 * G, 0)


def screen(which, draws=2, k=10):
    from sklearn.svm import SVC

    from semisvm.graph import graph_laplacian
    from semisvm.solvers._newton import laprls_direct

    for name, X, y in _sets(which):
        n = X.shape[0]
        D2 = _dist2(X)
        classes = np.unique(y)
        C = len(classes)
        iu = np.triu_indices(n, 1)
        med2 = np.median(D2[iu][D2[iu] > 0])
        srt = np.sort(D2, 1)
        widths = {"median": 1 / (2 * med2), "knn": 1 / (2 * np.mean(srt[:, k]))}
        Ks = {w: np.exp(-g * D2) for w, g in widths.items()}
        ind = np.argsort(D2, 1)[:, 1 : k + 1]
        rows, cols = np.repeat(np.arange(n), k), ind.ravel()
        sig = np.sqrt(srt[:, 7])  # local scale: 7th neighbour
        graphs = {}
        for gw, norms in (("binary", [True]), ("local", [True, False])):
            v = (
                np.ones(rows.size)
                if gw == "binary"
                else np.exp(-D2[rows, cols] / (sig[rows] * sig[cols] + 1e-300))
            )
            W = sp.csr_array((v, (rows, cols)), shape=(n, n))
            W = W.maximum(W.T)
            for norm in norms:
                L = graph_laplacian(W, normalized=norm)
                graphs[(gw, norm)] = (L, L.diagonal().mean())
        for nl in (1, 5):
            res = collections.defaultdict(list)
            for draw in range(draws):
                rng = np.random.default_rng(draw)
                lab = np.concatenate(
                    [
                        rng.choice(np.flatnonzero(y == c), nl, replace=False)
                        for c in classes
                    ]
                )
                unl = np.setdiff1d(np.arange(n), lab)
                svc = SVC().fit(X[lab], y[lab])
                res["SVC"].append(np.mean(svc.predict(X[unl]) != y[unl]))
                l_ = lab.size
                if C == 2:
                    Y = np.zeros((n, 1))
                    Y[lab, 0] = np.where(y[lab] == classes[1], 1, -1)
                else:
                    Y = np.zeros((n, C))
                    Y[lab] = -1
                    Y[lab, np.searchsorted(classes, y[lab])] = 1
                prior = np.bincount(np.searchsorted(classes, y[lab]), minlength=C) / l_
                target = 2 * (prior[1:2] if C == 2 else prior) - 1
                for w, (gk, (L, dbar)) in itertools.product(Ks, graphs.items()):
                    K = Ks[w]
                    for la, li in GRID:
                        r = laprls_direct(
                            K, Y, L=L, gamma_a=l_ * la, gamma_i=l_ * li / (n * dbar)
                        )
                        F = K @ r.alpha + r.b
                        for bal in (False, True):
                            G = F + (target - F[unl].mean(0)) if bal else F
                            pred = (
                                classes[(G[:, 0] > 0).astype(int)]
                                if C == 2
                                else classes[G.argmax(1)]
                            )
                            key = (w, gk, la, li) + (("B",) if bal else ())
                            res[key].append(np.mean(pred[unl] != y[unl]))
            for key, v in res.items():
                print(name, nl, key, f"{100 * np.mean(v):.1f}", flush=True)


def summary(paths, top=15):
    """Rank configurations by mean (error - SVC error) over the cells they share."""
    rows = collections.defaultdict(dict)
    for p in paths:
        for line in open(p):
            if line.count(" ") < 3 or not line[0].isalpha() or "Error" in line:
                continue
            name, nl, rest = line.split(" ", 2)
            key, val = rest.rsplit(" ", 1)
            rows[(name, nl)][key] = float(val)
    cells = sorted(rows)
    cfgs = set.intersection(*(set(rows[c]) - {"SVC"} for c in cells))
    out = []
    for c in cfgs:
        diffs = [rows[k][c] - rows[k]["SVC"] for k in cells]
        out.append((np.mean(diffs), max(diffs), c, diffs))
    out.sort()
    head = (
        "| config | mean minus SVC | worst | "
        + " | ".join(f"{a}/{b}" for a, b in cells)
        + " |"
    )
    print(head)
    print("|" + "---|" * (3 + len(cells)))
    print(
        "| SVC() error % | | | "
        + " | ".join(f"{rows[k]['SVC']:.1f}" for k in cells)
        + " |"
    )
    for m, w, c, d in out[:top]:
        print(
            f"| {c} | {m:.2f} | {w:.1f} | " + " | ".join(f"{x:+.1f}" for x in d) + " |"
        )


if __name__ == "__main__":
    if sys.argv[1] == "--summary":
        summary(sys.argv[2:])
    else:
        screen(sys.argv[1].split(","))
