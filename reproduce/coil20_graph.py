"""Connectivity of the paper's 2-NN graph on our COIL20 copy (notes_coil20.md).

For each of the 12 splits of ``semisvm reproduce`` (``random_state=0``) this builds the
kNN graph of the training points (L and U, sigma = 0.6, nn = 2, unit-norm images) and
prints the number of connected components and the share of U lying in components that
contain no labeled point.

Usage::

    python reproduce/coil20_graph.py [--data-dir DIR]
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy.sparse.csgraph import connected_components

from semisvm.datasets._loaders import load_benchmark
from semisvm.datasets._splits import TABLE2_SIZES, paper_splits
from semisvm.experiments._paper_tables import GRAPH_PARAMS
from semisvm.graph import knn_graph_from_kernel
from semisvm.kernels import kernel_matrix


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=None)
    args = ap.parse_args()
    print("| data set | components (mean) | % of U in components without a label |")
    print("|---|---|---|")
    for name in ("coil20", "coil20_b"):
        d = load_benchmark(name, args.data_dir)
        sigma, nn, _ = GRAPH_PARAMS[name]
        gamma = 1.0 / (2.0 * sigma**2)
        n_l, _, n_v, _ = TABLE2_SIZES[name]
        comps, share = [], []
        for s in paper_splits(d.y, n_l, n_v, n_splits=12, random_state=0):
            K = kernel_matrix(d.X[s.train], kernel="rbf", gamma=gamma)
            nc, lab = connected_components(knn_graph_from_kernel(K, gamma, nn),
                                           directed=False)
            l = s.labeled.size
            has = np.zeros(nc, dtype=bool)
            has[lab[:l]] = True
            comps.append(nc)
            share.append(100.0 * np.mean(~has[lab[l:]]))
        print(f"| {name} | {np.mean(comps):.1f} | {np.mean(share):.1f} "
              f"({np.std(share, ddof=1):.1f}) |")


if __name__ == "__main__":
    main()
