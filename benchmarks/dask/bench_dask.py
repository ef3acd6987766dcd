"""Benchmark: LapSVM on a dask.distributed LocalCluster against the same run in process.

For each n the same problem is solved three or more ways, in one run:

* **in process**: Nyström factor ``C = k(X, Z)`` (m uniform landmarks) held in memory,
  kNN graph (exact, scikit-learn), normalized Laplacian, PCG on the low-rank
  operator ``C W+ C^T`` for a fixed number of iterations;
* **LocalCluster with w workers** (w = 1, 2): the same landmarks, ``C`` as row blocks
  on the workers (:class:`semisvm.kernels.DistributedNystroemOperator`), the graph
  built by row blocks on the workers (:func:`semisvm.graph.knn_graph_distributed`),
  the same PCG loop on the client.

It reports, per configuration, the time of each phase (data to the cluster,
kernel factor, graph, solve, transduction), the time per PCG iteration, the bytes
moved per iteration (the operator's payload count and the loopback interface's
counters, which include Dask's own messages), the largest difference of the decision
values against the in-process run, and the overhead ratio (cluster / in process)
measured in the same run.  From the per-row costs it writes an estimate of time
and memory for n = 10M on 16 workers.

Data: synthetic manifold, ``X = tanh(Z A)`` with ``Z ~ N(0, I_10)``, d = 50,
labels ``sign(sin(2 Z_1) + Z_2)``, 50 labeled points.

Usage::

    python benchmarks/dask/bench_dask.py [--n 50000 200000] [--workers 1 2]
        [--m 1000] [--iters 50] [--quick]

Appends its tables to ``benchmarks/results/dask.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _common import append_results, machine_description, markdown_table  # noqa: E402


def manifold_data(n: int, d: int = 50, n_labeled: int = 50, seed: int = 0):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, 10))
    A = rng.normal(size=(10, d)) / np.sqrt(10)
    X = np.tanh(Z @ A).astype(np.float32)
    yt = (np.sin(2 * Z[:, 0]) + Z[:, 1] > 0).astype(int)
    y = -np.ones(n, dtype=int)
    for c in (0, 1):
        idx = rng.choice(np.flatnonzero(yt == c), n_labeled // 2, replace=False)
        y[idx] = c
    return X, y, yt


class InMemoryNystroem:
    """The in-process twin of DistributedNystroemOperator (same formula)."""

    def __init__(self, C: np.ndarray, U: np.ndarray, winv: np.ndarray) -> None:
        self.C, self._U, self._winv = C, U, winv
        self.shape = (C.shape[0], C.shape[0])
        self.dtype = np.dtype(np.float64)

    def __matmul__(self, V):
        S = np.asarray(self.C.T @ V.astype(self.C.dtype), dtype=np.float64)
        S = self._U @ (self._winv[:, None] * (self._U.T @ S))
        return np.asarray(self.C @ S.astype(self.C.dtype), dtype=np.float64)

    def diagonal(self):
        M = self._U * np.sqrt(self._winv)[None, :]
        return ((self.C @ M.astype(self.C.dtype)) ** 2).sum(axis=1).astype(np.float64)


def targets(y):
    Y = np.zeros((y.size, 1))
    Y[y == 1, 0] = 1.0
    Y[y == 0, 0] = -1.0
    return Y


def loopback_bytes() -> int:
    import psutil

    io = psutil.net_io_counters(pernic=True).get("lo")
    return int(io.bytes_sent) if io is not None else 0


def run_in_process(X, y, yt, Z, gamma, args):
    from semisvm.graph import graph_laplacian, knn_graph
    from semisvm.kernels import kernel_matrix
    from semisvm.solvers import lapsvm_pcg

    t = {}
    t0 = time.perf_counter()
    C = kernel_matrix(X, Z, gamma=gamma)
    W = kernel_matrix(Z.astype(np.float64), gamma=gamma)
    w, U = np.linalg.eigh(W)
    keep = w > 1e-6 * w.max()
    op = InMemoryNystroem(C, U[:, keep], 1.0 / w[keep])
    t["kernel"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    L = graph_laplacian(knn_graph(X, args.k), normalized=True)
    t["graph"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    res = lapsvm_pcg(
        op,
        targets(y),
        L=L,
        gamma_a=1e-4,
        gamma_i=1e-2,
        max_iter=args.iters,
        tol=0.0,
        early_stopping=None,
    )
    t["solve"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    F = op @ res.alpha + res.b
    t["transduction"] = time.perf_counter() - t0
    t["data"] = 0.0
    acc = float(((F[:, 0] > 0).astype(int) == yt)[y == -1].mean())
    return t, F[:, 0], acc, int(res.n_iter[0]), None


def run_cluster(X, y, yt, Z, gamma, args, n_workers):
    import dask.array as da
    from distributed import Client, LocalCluster

    from semisvm.graph import graph_laplacian
    from semisvm.graph._distributed import knn_graph_distributed
    from semisvm.kernels._distributed import DistributedNystroemOperator
    from semisvm.solvers import lapsvm_pcg

    mem = f"{args.worker_memory_gib}GiB"
    with (
        LocalCluster(
            n_workers=n_workers,
            threads_per_worker=1,
            processes=True,
            memory_limit=mem,
            dashboard_address=None,
            silence_logs=50,
        ) as cluster,
        Client(cluster) as client,
    ):
        t = {}
        # a long-lived cluster has imported the library already: warm the workers up
        # (their first task imports numpy/scipy/scikit-learn) outside the timings
        t0 = time.perf_counter()
        client.run(lambda: __import__("semisvm.kernels._distributed"))
        warmup = time.perf_counter() - t0
        t0 = time.perf_counter()
        rows = -(-X.shape[0] // (2 * n_workers))
        Xd = client.persist(da.from_array(X, chunks=(rows, X.shape[1])))
        from distributed import wait

        wait(Xd)
        t["data"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        op = DistributedNystroemOperator(Xd, landmarks=Z, gamma=gamma, client=client)
        wait(op.C.futures)
        t["kernel"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        L = graph_laplacian(
            knn_graph_distributed(Xd, args.k, client=client), normalized=True
        )
        t["graph"] = time.perf_counter() - t0
        s0, r0 = op.bytes_sent_, op.bytes_received_
        lo0 = loopback_bytes()
        t0 = time.perf_counter()
        res = lapsvm_pcg(
            op,
            targets(y),
            L=L,
            gamma_a=1e-4,
            gamma_i=1e-2,
            max_iter=args.iters,
            tol=0.0,
            early_stopping=None,
        )
        t["solve"] = time.perf_counter() - t0
        lo1 = loopback_bytes()
        n_it = int(res.n_iter[0])
        comm = {
            "payload_bytes_per_iter": (op.bytes_sent_ - s0 + op.bytes_received_ - r0)
            / max(1, n_it),
            "loopback_bytes_per_iter": (lo1 - lo0) / max(1, n_it),
            "worker_warmup_s": warmup,
        }
        t0 = time.perf_counter()
        F = op @ res.alpha + res.b
        t["transduction"] = time.perf_counter() - t0
    acc = float(((F[:, 0] > 0).astype(int) == yt)[y == -1].mean())
    return t, F[:, 0], acc, n_it, comm


def run_estimator(X, y, yt, args, n_workers):
    """LapSVM(options=SolverOptions(kernel_approximation='nystroem', ...)) end to end.

    ``n_workers=0``: in process on the ndarray; else on a LocalCluster with the
    data as a dask array (one chunk per worker).
    """
    from semisvm import LapSVM, SolverOptions

    est = LapSVM(
        random_state=0,
        options=SolverOptions(
            kernel_approximation="nystroem",
            n_components=args.m,
            graph_method=args.graph,
        ),
    )
    if n_workers == 0:
        t0 = time.perf_counter()
        est.fit(X, y)
        total = time.perf_counter() - t0
        return est, total, 0.0
    import dask.array as da
    from distributed import Client, LocalCluster, wait

    mem = f"{args.worker_memory_gib}GiB"
    with (
        LocalCluster(
            n_workers=n_workers,
            threads_per_worker=1,
            processes=True,
            memory_limit=mem,
            dashboard_address=None,
            silence_logs=50,
        ) as cluster,
        Client(cluster) as client,
    ):
        client.run(lambda: __import__("semisvm.kernels._distributed"))
        t0 = time.perf_counter()
        rows = -(-X.shape[0] // n_workers)
        Xd = client.persist(da.from_array(X, chunks=(rows, X.shape[1])))
        wait(Xd)
        t_data = time.perf_counter() - t0
        t0 = time.perf_counter()
        est.fit(Xd, y)
        total = time.perf_counter() - t0
    return est, total, t_data


def run_defaults(X, y, args, n_workers, plan="auto"):
    """``LapSVM(random_state=0)`` with every default, end to end.

    ``n_workers=0``: in process on the ndarray; else on a LocalCluster (processes,
    one thread each) with X as a dask array of row chunks of ``args.chunk`` rows
    (not persisted: the fit reads it from the client's graph, as a user's would).
    ``plan`` forces the cluster plan (:func:`semisvm.models._cluster_plan.cluster_plan`).
    """
    from semisvm import LapSVM

    est = LapSVM(random_state=0)
    if n_workers == 0:
        t0 = time.perf_counter()
        est.fit(X, y)
        return est, time.perf_counter() - t0
    import dask.array as da
    from distributed import Client, LocalCluster

    from semisvm.models._cluster_plan import cluster_plan

    with (
        LocalCluster(
            n_workers=n_workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=50,
        ) as cluster,
        Client(cluster),
        cluster_plan(plan),
    ):
        Xd = da.from_array(X, chunks=(args.chunk, X.shape[1]))
        t0 = time.perf_counter()
        est.fit(Xd, y)
        total = time.perf_counter() - t0
        F = est.decision_function(X[:2000])
    return est, total, F


def defaults_table(args) -> str:
    """The issue-30 comparison: defaults in process vs on a 2-worker LocalCluster."""
    rows = []
    for n in args.n:
        X, y, yt = manifold_data(n)
        U = y == -1
        ref, t_ref = run_defaults(X, y, args, 0)[:2]
        F_ref = ref.decision_function(X[:2000])
        nrm = float(np.abs(F_ref).max())

        def row(label, est, t, diff, n=n, t_ref=t_ref, yt=yt, U=U):
            ft = est.fit_times_
            plan = getattr(est, "cluster_plan_", None)
            return [
                n,
                label,
                "-" if plan is None else f"{plan['plan']}/{plan['operator']}",
                est.kernel_operator_,
                f"{ft.get('kernel', 0):.1f}",
                f"{ft.get('graph', 0):.1f}",
                f"{ft.get('selection', 0):.1f}",
                f"{ft.get('solver', 0):.1f}",
                f"{ft.get('other', 0) + ft.get('transduction', 0):.1f}",
                f"{t:.1f}",
                f"{t / t_ref:.2f}",
                f"{getattr(est, 'n_iter_', '-')} ({est.termination_condition_})",
                f"{float((est.transduction_ == yt)[U].mean()):.4f}",
                diff,
            ]

        rows.append(row("in process", ref, t_ref, "-"))
        print(rows[-1], flush=True)
        for plan in args.plans:
            est, t_c, F_c = run_defaults(X, y, args, args.workers[-1], plan)
            diff = float(np.abs(F_c - F_ref).max()) / nrm
            label = f"LocalCluster {args.workers[-1]}w, plan={plan}"
            rows.append(row(label, est, t_c, f"{diff:.1e}"))
            print(rows[-1], flush=True)
    header = [
        "n",
        "run",
        "cluster plan",
        "operator",
        "kernel s",
        "graph s",
        "selection s",
        "solve s",
        "other s",
        "total s",
        "ratio",
        "iterations (stop)",
        "accuracy U",
        "max |F - F_in| / max |F_in|",
    ]
    return (
        "### Defaults end to end: LapSVM(random_state=0), numpy X in process vs "
        "dask X on a LocalCluster\n\n"
        f"Synthetic manifold (d = 50, 50 labels, float32); dask chunks of {args.chunk} "
        f"rows, not persisted; LocalCluster({args.workers[-1]} workers, processes, 1 "
        "thread each, default memory limit); decision values on the first 2,000 "
        "points.  'other' includes the transduction and, for the cluster, moving X "
        "and the model.  Load average (1, 5, 15 min) before the runs: "
        f"{', '.join(f'{v:.2f}' for v in os.getloadavg())}.\n\n"
        + markdown_table(header, rows)
        + "\n"
    )


def per_row_costs(X, Z, gamma):
    """Seconds per row of C for building it and for one product (C^T v, C s)."""
    from semisvm.kernels import kernel_matrix

    nb = min(20000, X.shape[0])
    t0 = time.perf_counter()
    C = kernel_matrix(X[:nb], Z, gamma=gamma)
    build = (time.perf_counter() - t0) / nb
    v = np.ones((nb, 1), dtype=C.dtype)
    s = np.ones((C.shape[1], 1), dtype=C.dtype)
    reps = 5
    t0 = time.perf_counter()
    for _ in range(reps):
        C.T @ v
        C @ s
    prod = (time.perf_counter() - t0) / reps / nb
    return build, prod


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--n", type=int, nargs="+", default=[50000, 200000])
    p.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    p.add_argument("--m", type=int, default=1000, help="Nyström landmarks")
    p.add_argument("--k", type=int, default=10, help="graph neighbours")
    p.add_argument(
        "--graph",
        default="approx",
        choices=["exact", "approx"],
        help="graph search of the estimator runs",
    )
    p.add_argument("--iters", type=int, default=50, help="PCG iterations (fixed)")
    p.add_argument("--worker-memory-gib", type=float, default=4.0)
    p.add_argument("--quick", action="store_true", help="CI smoke: n=4000, m=200")
    p.add_argument("--no-append", action="store_true")
    p.add_argument(
        "--skip-operator",
        action="store_true",
        help="only the estimator end-to-end part",
    )
    p.add_argument(
        "--estimator",
        action="store_true",
        help="only LapSVM(random_state=0) with its defaults, in process vs cluster",
    )
    p.add_argument("--chunk", type=int, default=5000, help="dask row chunk")
    p.add_argument(
        "--plans",
        nargs="+",
        default=["auto"],
        choices=["auto", "gather", "distributed"],
        help="cluster plans of --estimator",
    )
    args = p.parse_args()
    if args.estimator:
        body = defaults_table(args)
        print(body)
        if not args.no_append:
            cmd = "python benchmarks/dask/bench_dask.py " + " ".join(sys.argv[1:])
            path = append_results(
                "dask",
                "Dask LocalCluster vs in process",
                cmd,
                body,
                machine_description(),
            )
            print(f"appended to {path}")
        return
    if args.quick:
        args.n, args.m, args.iters, args.workers = [4000], 200, 10, [2]
    machine = machine_description()
    rows, est_rows, records = [], [], []
    for n in args.n if not args.skip_operator else []:
        X, y, yt = manifold_data(n)
        rng = np.random.default_rng(1)
        Z = X[np.sort(rng.choice(n, size=min(args.m, n), replace=False))]
        from semisvm.kernels import median_gamma

        gamma = median_gamma(X)
        t_in, F_in, acc_in, it_in, _ = run_in_process(X, y, yt, Z, gamma, args)
        total_in = sum(t_in.values())
        rows.append(
            [
                n,
                "in process",
                f"{t_in['kernel']:.2f}",
                f"{t_in['graph']:.2f}",
                f"{t_in['solve']:.2f}",
                f"{t_in['solve'] / it_in * 1e3:.1f}",
                f"{t_in['transduction']:.2f}",
                f"{total_in:.1f}",
                "1.00",
                "-",
                "-",
                f"{acc_in:.4f}",
                "-",
            ]
        )
        for w in args.workers:
            t_c, F_c, acc_c, it_c, comm = run_cluster(X, y, yt, Z, gamma, args, w)
            total_c = sum(t_c.values())
            diff = float(np.abs(F_c - F_in).max())
            rows.append(
                [
                    n,
                    f"LocalCluster {w}w",
                    f"{t_c['kernel']:.2f}",
                    f"{t_c['graph']:.2f}",
                    f"{t_c['solve']:.2f}",
                    f"{t_c['solve'] / it_c * 1e3:.1f}",
                    f"{t_c['transduction']:.2f}",
                    f"{total_c:.1f} (+{t_c['data']:.1f} data)",
                    f"{total_c / total_in:.2f}",
                    f"{comm['payload_bytes_per_iter'] / 2**20:.2f}",
                    f"{comm['loopback_bytes_per_iter'] / 2**20:.2f}",
                    f"{acc_c:.4f}",
                    f"{diff:.1e}",
                ]
            )
            records.append(
                {
                    "n": n,
                    "workers": w,
                    **{f"t_{k}": v for k, v in t_c.items()},
                    **comm,
                    "in_process": t_in,
                    "max_abs_diff": diff,
                }
            )
            print(json.dumps(records[-1]), flush=True)
        b_row, p_row = per_row_costs(X, Z, gamma)
        est_rows.append((n, b_row, p_row))
    # ---- part A: the estimator end to end
    est_table = []
    for n in args.n:
        X, y, yt = manifold_data(n)
        ref, t_ref, _ = run_estimator(X, y, yt, args, 0)
        U = y == -1
        acc_ref = float((ref.transduction_ == yt)[U].mean())
        ft = ref.fit_times_
        est_table.append(
            [
                n,
                "in process",
                f"{ft['kernel']:.1f}",
                f"{ft['graph']:.1f}",
                f"{ft['solver']:.1f}",
                f"{t_ref:.1f}",
                "1.00",
                f"{acc_ref:.4f}",
                "-",
            ]
        )
        for w in args.workers:
            est, t_c, t_data = run_estimator(X, y, yt, args, w)
            ft = est.fit_times_
            F_ref = ref.decision_function(X[:2000])
            diff = float(np.abs(est.decision_function(X[:2000]) - F_ref).max())
            est_table.append(
                [
                    n,
                    f"LocalCluster {w}w",
                    f"{ft['kernel']:.1f}",
                    f"{ft['graph']:.1f}",
                    f"{ft['solver']:.1f}",
                    f"{t_c:.1f} (+{t_data:.1f} data)",
                    f"{t_c / t_ref:.2f}",
                    f"{float((est.transduction_ == yt)[U].mean()):.4f}",
                    f"{diff:.1e}",
                ]
            )
            print(est_table[-1], flush=True)
    header = [
        "n",
        "run",
        "kernel s",
        "graph s",
        "solve s",
        "ms / iter",
        "transduction s",
        "total s",
        "ratio to in-process",
        "payload MiB / iter",
        "loopback MiB / iter",
        "accuracy U",
        "max |F - F_in|",
    ]
    body = (
        f"m = {args.m} uniform landmarks, k = {args.k}, {args.iters} PCG iterations "
        "(fixed, so the runs do the same work), synthetic manifold d = 50, 50 labels; "
        "workers: 1 thread each, processes, on this machine's 2 cores. 'total' "
        "excludes moving X to the cluster (shown as 'data').\n\n"
    )
    body += markdown_table(header, rows) + "\n"
    body = (
        f"### Estimator end to end: LapSVM(options=SolverOptions("
        f"kernel_approximation='nystroem', n_components={args.m}, "
        f"graph_method={args.graph!r}))\n\n"
        "In process on the ndarray against the same estimator given a dask array on a "
        "LocalCluster (m-space solve on the client, C and the graph search on the "
        "workers); 'data' is the time to move X into the cluster, outside the ratio.\n\n"
        + markdown_table(
            [
                "n",
                "run",
                "kernel s",
                "graph s",
                "solve s",
                "total s",
                "ratio to in-process",
                "accuracy U",
                "max |F - F_in|",
            ],
            est_table,
        )
        + "\n\n### PCG on the distributed Nyström operator (n-space, one distributed "
        "product per iteration)\n\n" + body
    )
    if est_rows:
        # estimate for n = 10M on 16 workers from the measured per-row costs
        n_big, P, m, d, k, C_cls = 10_000_000, 16, args.m, 50, args.k, 1
        b_row, p_row = est_rows[-1][1], est_rows[-1][2]
        comm_per_iter = 2 * n_big * C_cls * 8 + 2 * P * m * C_cls * 8
        mem_worker = (n_big / P) * (m * 4 + d * 4) + n_big * d * 4
        body += (
            f"\nEstimate for n = 10M, 16 workers, m = {m}, from the last row's per-row costs "
            f"(kernel build {b_row * 1e6:.2f} µs/row, one product C^T v + C s "
            f"{p_row * 1e6:.3f} µs/row on one core): kernel factor "
            f"{n_big / P * b_row:.0f} s; per PCG iteration {n_big / P * p_row:.2f} s of "
            f"worker compute plus {comm_per_iter / 2**20:.0f} MiB through the client "
            f"(at ~1 GB/s: {comm_per_iter / 1e9:.2f} s); worker memory "
            f"{mem_worker / 2**30:.1f} GiB (C block {n_big / P * m * 4 / 2**30:.1f} GiB, X "
            f"block, and all of X for the exact kNN search {n_big * d * 4 / 2**30:.1f} GiB), "
            f"client memory for the graph and the solver's vectors about "
            f"{n_big * (k * 2 * 12 + 20 * 8) / 2**30:.1f} GiB.\n"
        )
    print(body)
    if not args.no_append and not args.quick:
        cmd = "python benchmarks/dask/bench_dask.py " + " ".join(sys.argv[1:])
        path = append_results(
            "dask", "Dask LocalCluster vs in process", cmd, body, machine
        )
        print(f"appended to {path}")


if __name__ == "__main__":
    main()
