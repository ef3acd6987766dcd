"""Cost model of a default fit on a Dask cluster, checked against measured runs.

A model of the time and memory of ``LapSVM(random_state=0).fit``
on a dask array too large for one worker (the ``'distributed'`` plan with the
Nyström factor, :mod:`semisvm.models._cluster_plan`), its unit costs measured on
this machine in one process, its predictions compared with measured runs on
LocalClusters of several workers with scaled-down memory limits, then used for
n = 10M.

Stages and the work each does (n points, d features, m Nyström landmarks, r LOO
features, k neighbours, P workers, d' = 64 when the search projects wide rows):

* **kernel**: C = k(X, Z) on the workers: n m d multiply-adds and n m exp.
* **graph**: partitioned HNSW search (:mod:`semisvm.graph._distributed`): P
  indexes of n/P points (build ~ n log(n/P) in all), each answering all n
  queries (P n log(n/P) in all: a worker answers n queries whatever P; from 16
  workers on, clustered partitions: at most 6 n queries in all), plus the
  exact re-ranking of 3(k+1) candidates per query and partition when projected;
  the client merges nothing (the merges run on the workers) and builds the
  sparse graph and Laplacian from n (k+1) lists.
* **selection**: the LOO features Phi = k(X, X_I) T (n r d + n r^2) and
  Phi^T L Phi (2 n r^2 + nnz(L) r) on the workers, each worker fetching the rows of
  Phi its edges reach in the other workers' blocks (P min(n, 2 k n / P) rows in all
  with random row order); r x r factorizations on the client.
* **solver**: C^T L C (2 n m^2 + nnz(L) m, and the rows of C as above) on the
  workers; the m-space Newton solve (m^3) on the client.
* **transduction**: C beta on the workers (n m).

Wall time of a stage = its worker-seconds / min(P, cores) (the workers of a
LocalCluster share this machine's cores; on a real cluster cores = P) + its
client-seconds.  Memory per worker: its share of X, C (float32), Phi and the
gram's accumulator P_b (float64), the HNSW index and the dask baseline.

Usage::

    python benchmarks/dask/cost_model.py --check 100000:2 200000:2 200000:4 \
        [--memory-gib 3] [--predict 10000000:16 10000000:64]

Appends its tables to ``benchmarks/results/dask.md``.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import threading
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_dask import manifold_data  # noqa: E402

from _common import append_results, machine_description, markdown_table  # noqa: E402
from semisvm.graph._distributed import CLUSTERED_MIN_PARTITIONS, VISIT  # noqa: E402

K_NEIGH = 10
CAND = 3  # CANDIDATE_FACTOR of the projected search


def sizes(n: int, d: int, m: int | None = None) -> dict:
    """m, r, d' as the defaults resolve them for n points."""
    from semisvm.graph._knn import auto_pca_components
    from semisvm.models._autoreg import feature_count

    if m is None:
        m = min(2000, math.ceil(math.sqrt(n) * math.log(n)))
    dp = auto_pca_components(d, "approx") or d
    return {"m": m, "r": min(n, feature_count(n)), "dp": dp}


# ------------------------------------------------------------------ unit costs
def calibrate(d: int) -> dict:
    """Seconds per unit of work, one thread, in this process."""
    import hnswlib

    from semisvm.kernels import kernel_matrix

    rng = np.random.default_rng(0)
    u = {}
    X = rng.normal(size=(20000, d)).astype(np.float32)
    Z = X[:1000]
    t = _best(lambda: kernel_matrix(X, Z, gamma=1.0 / d))
    u["kernel"] = t / (20000 * 1000 * d)  # per multiply-add (exp folded in)
    A = rng.normal(size=(20000, 600))
    B = rng.normal(size=(20000, 600))
    t = _best(lambda: A.T @ B)
    u["gemm64"] = t / (2 * 20000 * 600 * 600)  # per flop, float64
    dp = sizes(10**6, d)["dp"]
    P_ = rng.normal(size=(20000, dp)).astype(np.float32)
    t0 = time.perf_counter()
    idx = hnswlib.Index(space="l2", dim=dp)
    idx.init_index(max_elements=20000, ef_construction=100, M=16, random_seed=0)
    idx.set_num_threads(1)
    idx.add_items(P_)
    u["build"] = (time.perf_counter() - t0) / (20000 * math.log2(20000))
    kk = CAND * (K_NEIGH + 1) if dp < d else K_NEIGH + 1
    idx.set_ef(max(100, kk))
    t0 = time.perf_counter()
    idx.knn_query(P_, k=kk)
    u["query"] = (time.perf_counter() - t0) / (20000 * math.log2(20000))
    # exact re-ranking: gathered rows times the query row, per candidate x feature
    cand = rng.integers(0, 20000, size=(20000, kk))
    t0 = time.perf_counter()
    for s in range(0, 20000, 2000):
        np.matmul(X[cand[s : s + 2000]], X[s : s + 2000, :, None])
    u["rerank"] = (time.perf_counter() - t0) / (20000 * kk * d)
    # client: graph and Laplacian from (n, k+1) lists, per edge
    from semisvm.graph._graph import _symmetrize, _to_weights

    nn = 200000
    ind = rng.integers(0, nn, size=(nn, K_NEIGH))
    d2 = rng.random((nn, K_NEIGH))
    t0 = time.perf_counter()
    _to_weights(_symmetrize(ind, d2, nn), "binary", None)
    u["client_graph"] = 2 * (time.perf_counter() - t0) / (nn * K_NEIGH)
    # sparse L times a dense block: per stored entry and column
    import scipy.sparse as sp

    from semisvm.graph import graph_laplacian

    W = _to_weights(_symmetrize(ind[:20000] % 20000, d2[:20000], 20000), "binary", None)
    Lap = graph_laplacian(W, normalized=True)
    V = rng.normal(size=(20000, 256))
    u["spmm"] = _best(lambda: Lap @ V) / (sp.csr_array(Lap).nnz * 256)
    u["transfer"] = _transfer_cost()
    M = rng.normal(size=(600, 600))
    M = M @ M.T
    u["eigh"] = _best(lambda: np.linalg.eigh(M)) / 600**3
    return u


def _transfer_cost() -> float:
    """Seconds per byte moved from one worker to another (2-worker LocalCluster)."""
    from distributed import Client, LocalCluster

    with (
        LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=50,
        ) as cluster,
        Client(cluster) as client,
    ):
        a, b = sorted(client.scheduler_info()["workers"])
        out = []
        for seed in range(3):
            f = client.submit(
                lambda s: np.full((2**25 // 8,), float(s)), seed, workers=[a]
            )
            f.result()
            t0 = time.perf_counter()
            client.submit(lambda x: float(x[0]), f, workers=[b]).result()
            out.append(time.perf_counter() - t0)
        return min(out) / 2**25


def _best(fn, repeat: int = 3) -> float:
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return min(out)


def predict(
    u: dict,
    n: int,
    d: int,
    P: int,
    cores: int,
    m: int | None = None,
    graph_term: bool = True,
    overhead: dict | None = None,
    baseline: float = 0.3 * 2**30,
    selection: bool = True,
) -> dict:
    """Predicted wall seconds per stage and memory per worker / on the client.

    ``graph_term``: the chosen model has gamma_I > 0 (the solver then forms
    C^T L C; the auto rule may choose the supervised model, which does not).
    ``selection``: the auto rule ran (not with fixed weights).
    ``overhead``: seconds per stage that do not grow with n (task scheduling, the
    fixed 2,000-point samples of the width and dimension rules), read off a small
    calibration run.
    """
    s = sizes(n, d, m)
    m, r, dp = s["m"], s["r"], s["dp"]
    par = min(P, cores)
    lg = math.log2(max(n / P, 2))
    kk = CAND * (K_NEIGH + 1) if dp < d else 0
    nnz = n * (1 + 1.5 * K_NEIGH)  # symmetric kNN graph's Laplacian, with the diagonal
    # rows of Phi / C a worker fetches for (L Phi)_g: those its edges reach in the
    # other workers' blocks (random row order), summed over the workers
    moved = P * min(n - n / P, 2 * K_NEIGH * n / P) if P > 1 else 0.0
    # partitions an average row is searched in: all P for row blocks, at most
    # VISIT for the clustered partitions (from CLUSTERED_MIN_PARTITIONS workers)
    visits = P if P < CLUSTERED_MIN_PARTITIONS else min(VISIT, P)
    w = {
        "kernel": u["kernel"] * n * m * d,
        "graph": (u["build"] + visits * u["query"]) * n * lg
        + u["rerank"] * visits * n * kk * d,
        "selection": u["kernel"] * n * r * d
        + u["gemm64"] * (2 * n * r * r) * 2
        + u.get("spmm", 0.0) * nnz * r
        + u.get("transfer", 0.0) * moved * r * 8,
        "solver": u["gemm64"] * 2 * n * m * m
        + u.get("spmm", 0.0) * nnz * m
        + u.get("transfer", 0.0) * moved * m * 4
        if graph_term
        else 0.0,
    }
    c = {
        "kernel": u["eigh"] * m**3,  # the landmarks' eigendecomposition
        "graph": u["client_graph"] * n * K_NEIGH,
        "selection": u["eigh"] * r**3 * 2,
        "solver": u["eigh"] * m**3 * 2 if graph_term else 0.0,
    }
    o = overhead or {}
    if not selection:
        w["selection"] = c["selection"] = 0.0
    t = {
        k: w[k] / par + c[k] + (o.get(k, 0.0) if (k != "selection" or selection) else 0)
        for k in w
    }
    t["total"] = sum(t.values())
    nb = n / P
    kept = (
        nb * d * 4 * 2  # X share (+ its stacked partition)
        + nb * m * 4  # C share, float32
        + nb * r * 8  # Phi share
        + nb * (dp * 4 + 16 * 2 * 4 + 64)  # HNSW index
    )
    transient = max(
        nb * m * 8,  # a kernel block's float64 temporary
        nb * r * (4 + 8 + 8),  # LOO features: columns, their float64 copy, Phi
        nb * (m + 1) * 8 + nb * m * 4 if graph_term else 0.0,  # P_b and a part
    )
    mem_w = baseline + kept + transient
    mem_c = n * (K_NEIGH + 1) * 16 + n * 2 * K_NEIGH * 12 * 3 + n * 8 * 12
    t["mem_worker"] = mem_w
    t["mem_client"] = mem_c
    t.update(s)
    return t


# ------------------------------------------------------------------ measured runs
class RSSSampler(threading.Thread):
    """Peak resident memory of a set of processes, sampled every 0.2 s."""

    def __init__(self, pids: list[int]) -> None:
        super().__init__(daemon=True)
        import psutil

        self.procs = [psutil.Process(p) for p in pids]
        self.peak = dict.fromkeys(pids, 0)
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            for p in self.procs:
                try:
                    self.peak[p.pid] = max(self.peak[p.pid], p.memory_info().rss)
                except Exception:  # noqa: BLE001 - a worker restarting
                    pass
            time.sleep(0.2)


def measure(
    n: int, d: int, P: int, memory_gib: float, chunk: int, graph: bool = False
) -> dict:
    """One default fit on a P-worker LocalCluster, distributed plan, by stage.

    ``graph``: fix the graph-trusting weights (gamma_A, gamma_I) = (1e-6, 1) instead
    of the auto rule (which chooses the supervised model on this family), so that
    the solver forms C^T L C.
    """
    import dask.array as da
    import psutil
    from distributed import Client, LocalCluster, wait

    from semisvm import LapSVM, SolverOptions
    from semisvm.models._cluster_plan import cluster_plan

    X, y, _ = manifold_data(n, d=d)
    with (
        LocalCluster(
            n_workers=P,
            threads_per_worker=1,
            processes=True,
            memory_limit=f"{memory_gib}GiB",
            dashboard_address=None,
            silence_logs=50,
        ) as cluster,
        Client(cluster) as client,
        cluster_plan("distributed"),
    ):
        pids = list(client.run(os.getpid).values())
        base = {p: psutil.Process(p).memory_info().rss for p in pids}
        sampler = RSSSampler([*pids, os.getpid()])
        client_base = psutil.Process().memory_info().rss
        sampler.start()
        # the data loaded on the cluster, as a user's would be
        # at least one chunk per worker
        Xd = client.persist(da.from_array(X, chunks=(min(chunk, -(-n // P)), d)))
        wait(Xd)
        # the operator of the defaults above the dense size, at every n
        est = LapSVM(
            random_state=0,
            options=SolverOptions(kernel_approximation="nystroem"),
            **({"gamma_a": 1e-6, "gamma_i": 1.0} if graph else {}),
        )
        t0 = time.perf_counter()
        est.fit(Xd, y)
        total = time.perf_counter() - t0
        sampler.stop.set()
        sampler.join()
    ft = dict(est.fit_times_)
    out = {k: ft.get(k, 0.0) for k in ("kernel", "graph", "selection", "solver")}
    out["transduction"] = ft.get("transduction", 0.0)
    out["total"] = total
    out["mem_worker"] = max(sampler.peak[p] for p in pids)
    out["baseline"] = float(np.mean(list(base.values())))
    out["mem_client"] = sampler.peak[os.getpid()] - client_base
    out["m"] = int(est.landmarks_.shape[0])
    out["r"] = int(est.regularization_selection_.get("n_features", 0))
    out["plan"] = est.cluster_plan_["plan"] + "/" + est.cluster_plan_["operator"]
    out["graph_term"] = bool(est.gamma_i_ > 0)
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--calibrate-run", default="20000:2", help="n:P of the small run")
    p.add_argument(
        "--check",
        nargs="+",
        default=["100000:2", "200000:2", "200000:4", "100000:2:g"],
        help="n:P runs to check; n:P:g fixes the graph-trusting weights",
    )
    p.add_argument("--predict", nargs="+", default=["10000000:16", "10000000:64"])
    p.add_argument("--d", type=int, default=50)
    p.add_argument("--memory-gib", type=float, default=3.0)
    p.add_argument("--chunk", type=int, default=25000)
    p.add_argument("--cores", type=int, default=os.cpu_count() or 1)
    p.add_argument("--no-append", action="store_true")
    p.add_argument(
        "--resume",
        default=None,
        help="a previous run's printed output: reuse its unit costs and runs",
    )
    args = p.parse_args()
    machine = machine_description()
    load0 = os.getloadavg()
    done: dict = {}
    if args.resume:  # the unit costs and runs a previous log printed
        import ast

        for line in Path(args.resume).read_text().splitlines():
            if line.startswith("units "):
                u = ast.literal_eval(line[6:])
            elif line.startswith("run "):
                spec, rec = line[4:].split(" ", 1)
                done[spec] = ast.literal_eval(rec)
    else:
        u = calibrate(args.d)
    print("units", repr(u), flush=True)
    stages = ["kernel", "graph", "selection", "solver", "total"]

    def run(spec: str) -> dict:
        if spec not in done:
            n, P = (int(v) for v in spec.split(":")[:2])
            done[spec] = measure(
                n, args.d, P, args.memory_gib, args.chunk, graph=spec.endswith(":g")
            )
            print("run", spec, repr(done[spec]), flush=True)
        return done[spec]

    n0, P0 = (int(v) for v in args.calibrate_run.split(":"))
    meas0 = run(args.calibrate_run)
    pred0 = predict(
        u, n0, args.d, P0, args.cores, m=meas0["m"], graph_term=meas0["graph_term"]
    )
    overhead = {s: max(meas0[s] - pred0[s], 0.0) for s in stages[:-1]}
    print("overhead", overhead, flush=True)
    rows = []
    for spec in [args.calibrate_run, *args.check]:
        n, P = (int(v) for v in spec.split(":")[:2])
        meas = run(spec)
        pred = predict(
            u,
            n,
            args.d,
            P,
            args.cores,
            m=meas["m"],
            graph_term=meas["graph_term"],
            overhead=overhead,
            baseline=meas["baseline"],
            selection=meas["r"] > 0,
        )
        rows.append(
            [
                f"{n:,}" + (" (calibration)" if spec == args.calibrate_run else ""),
                P,
                meas["plan"],
                f"{meas['m']} / {meas['r']}",
                "yes" if meas["graph_term"] else "no",
                *(f"{meas[s]:.1f} / {pred[s]:.1f}" for s in stages),
                f"{meas['total'] / pred['total']:.2f}",
                f"{meas['mem_worker'] / 2**30:.2f} / {pred['mem_worker'] / 2**30:.2f}",
                f"{meas['mem_client'] / 2**30:.2f} / {pred['mem_client'] / 2**30:.2f}",
            ]
        )
    head = [
        "n",
        "workers",
        "plan",
        "m / r",
        "graph term",
        *(f"{s} s (meas. / model)" for s in stages),
        "total meas. / model",
        "worker GiB (meas. / model)",
        "client GiB (meas. / model)",
    ]
    body = (
        "### Cost model of the distributed plan against measured runs\n\n"
        f"`LapSVM(random_state=0)` (the Nystroem operator forced, the defaults' choice above the dense size) on a dask array (synthetic manifold, d = {args.d}, "
        f"50 labels, chunks of {args.chunk} rows) forced to the distributed plan, "
        f"LocalCluster of P single-thread worker processes with "
        f"memory_limit={args.memory_gib} GiB on this {args.cores}-core machine; the "
        "model's wall time is worker-seconds / min(P, cores) + client seconds, with "
        "unit costs measured in one process before the runs, and a constant "
        "overhead per stage (task scheduling, the fixed-size samples of the width "
        "and dimension rules) read off the calibration run "
        f"({', '.join(f'{k} {v:.1f} s' for k, v in overhead.items())}); "
        f"({', '.join(f'{k} {v:.3g}' for k, v in u.items())}).  Worker memory: the "
        "largest resident set of a worker during the fit (the model: the worker's "
        "resident set before the fit + its shares of X, C, Phi and the index + the "
        "largest transient of a task); client: the rise of this process.  Load average before: "
        f"{', '.join(f'{v:.2f}' for v in load0)}.\n\n" + markdown_table(head, rows)
    )
    prow = []
    for spec in args.predict:
        n, P = (int(v) for v in spec.split(":"))
        for d in (args.d, 784):
            ud = u if d == args.d else calibrate(d)
            pr = predict(ud, n, d, P, P, overhead=overhead, baseline=meas0["baseline"])
            prow.append(
                [
                    f"{n:,}",
                    d,
                    P,
                    f"{pr['m']} / {pr['r']} / {pr['dp']}",
                    *(f"{pr[s]:.0f}" for s in stages),
                    f"{pr['mem_worker'] / 2**30:.1f}",
                    f"{pr['mem_client'] / 2**30:.1f}",
                ]
            )
    body += (
        "\n\n### Predicted: n = 10M on a cluster of P one-core workers\n\n"
        "Same model, cores = P, this machine's unit costs (a faster core scales "
        "every worker term).\n\n"
        + markdown_table(
            [
                "n",
                "d",
                "P",
                "m / r / d'",
                *(f"{s} s" for s in stages),
                "GiB per worker",
                "client GiB",
            ],
            prow,
        )
    )
    print(body)
    if not args.no_append:
        cmd = "python benchmarks/dask/cost_model.py " + " ".join(sys.argv[1:])
        path = append_results("dask", "Dask", cmd, body, machine)
        print(f"appended to {path}")


if __name__ == "__main__":
    main()
