r"""How a manifold estimator holds K at scale: operator choice, memory plans, batches.

``kernel_approximation`` picks the kernel operator the solver sees:

* ``'dense'`` -- the n x n Gram matrix (today's models; every solver);
* ``'streamed'`` -- exact products tile by tile, K never stored
  (:class:`~semisvm.kernels.StreamedKernelOperator`; PCG only);
* ``'nystroem'`` -- :math:`K \approx \Phi\Phi^T` with m landmarks
  (:class:`~semisvm.kernels.NystroemFactor`), the problem solved in the
  r-dimensional feature space (:func:`~semisvm.solvers._lowrank.lapsvm_lowrank`);
* ``'fitc'`` -- :math:`\Phi\Phi^T` plus the exact diagonal residual
  (:class:`~semisvm.kernels.FITCOperator`): full rank, O(n m) products, PCG;
* ``'blocks'`` -- :math:`\Phi\Phi^T` plus the exact residual within k-means
  blocks of nearby points (:class:`~semisvm.kernels.BlockResidualOperator`,
  PIC): O(n m + n b) products, PCG;
* ``'auto'`` -- with PCG, dense or blocks by the predicted time on this
  machine (:mod:`semisvm.models._cost`) when the dense fit fits in
  :data:`~semisvm._memory.SAFETY_FRACTION` of available memory; past it,
  blocks for more than two classes with PCG, Nyström otherwise; the other
  solvers dense when it fits, else Nyström.

Every large allocation of each configuration is listed in a
:class:`~semisvm._memory.MemoryPlan` and checked before anything is allocated; a
configuration that does not fit is refused with the sizes of those that do.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._memory import (
    SAFETY_FRACTION,
    MemoryPlan,
    available_memory,
    block_rows,
    format_bytes,
)
from .._validation import int_seed, resolve_seed
from ._cost import cheaper
from ._options import GRAPH_METHODS, KERNEL_APPROXIMATIONS, resolved_options

__all__ = [
    "KERNEL_APPROXIMATIONS",
    "GRAPH_METHODS",
    "default_n_components",
    "plan_fit",
    "resolve_operator",
    "EXACT_GRAPH_MAX_N",
]


#: Above this n, ``graph_method='auto'`` uses approximate kNN (when a library is
#: installed): blocked exact search costs 2 n^2 d flops, about 20 s at n = 20,000,
#: d = 784 on the benchmark machine.
EXACT_GRAPH_MAX_N = 20_000

#: Cap on the default number of landmarks.
MAX_DEFAULT_COMPONENTS = 2000


def default_n_components(n: int) -> int:
    r"""Default m: :math:`\lceil\sqrt n\,\ln n\rceil`, capped by n, 2,000 and memory.

    :math:`O(\sqrt n\log n)` uniform landmarks keep the statistical rate of the
    exact kernel ridge estimator (Rudi, Camoriano & Rosasco 2015; Falkon, Rudi et
    al. 2017).  The memory cap keeps the n x m matrix C = k(X, Z) (float32) under a
    quarter of available memory.
    """
    m = math.ceil(math.sqrt(n) * math.log(max(n, 2)))
    mem_cap = int(0.25 * available_memory() // max(1, 4 * n))
    return int(max(1, min(n, m, MAX_DEFAULT_COMPONENTS, max(50, mem_cap))))


def _graph_bytes(n: int, k: int) -> int:
    # kNN lists (int64 + float64), COO triplets, symmetric CSR twice, Laplacian
    return n * k * (16 + 24 + 2 * 12 * 2 + 12 * 2)


def plan_fit(
    kind: str,
    n: int,
    d: int,
    n_columns: int,
    *,
    itemsize: int,
    n_neighbors: int,
    n_components: int | None = None,
    graph: str = "exact",
    need_graph: bool = True,
    block_size: int = 300,
) -> MemoryPlan:
    """Memory plan of one fit with the operator ``kind``."""
    C = n_columns
    avail = available_memory()

    def blk(cap: int, full: int) -> int:  # one temporary block, as block_rows sizes it
        return int(min(cap, max(2**20, avail // 20), full))

    plan = MemoryPlan(f"fit with kernel_approximation={kind!r} (n={n}, d={d})")
    if kind == "dense":
        plan.add(f"kernel matrix K ({n} x {n}, {8 * itemsize}-bit)", n * n * itemsize)
        if itemsize == 4:
            plan.add("float32 kernel temporaries", 64 * 2**20)
    elif kind == "streamed":
        plan.add("data copy (float32)", n * d * 4)
        plan.add("centred, scaled data for the tiles (float32)", n * (d + 2) * 4)
        plan.add(
            "one kernel tile (row tiles for sparse data)", blk(256 * 2**20, n * n * 4)
        )
    elif kind in ("nystroem", "fitc", "blocks"):
        m = n_components or default_n_components(n)
        plan.add(
            f"kernel to the landmarks C ({n} x {m}, {8 * itemsize}-bit)",
            n * m * itemsize,
        )
        plan.add("landmark kernel and factors (m x m float64, x4)", 4 * m * m * 8)
        plan.add("blocks of L Phi and Phi (float64)", 2 * blk(256 * 2**20, n * 512 * 8))
        plan.add(
            f"kernel rows to the landmarks (block, {m} columns)",
            2 * blk(64 * 2**20, n * m * 8),
        )
        if kind in ("fitc", "blocks"):
            plan.add(f"features Phi ({n} x {m}, float32) and diagonal", n * (m + 2) * 4)
        if kind == "blocks":
            b = min(block_size, n)
            # k-means blocks are uneven: twice the mean size's sum of squares
            plan.add(
                f"exact residual blocks (~{b} points each, float64)",
                min(2 * n * b, n * n) * 8,
            )
    else:  # pragma: no cover - validated upstream
        raise ValueError(kind)
    if need_graph:
        plan.add(
            f"kNN graph and Laplacian (k={n_neighbors})", _graph_bytes(n, n_neighbors)
        )
        if graph == "approx":
            plan.add("approximate-kNN index", n * (4 * d + 200))
        elif kind != "dense":
            plan.add("block of exact distances", 3 * blk(256 * 2**20, n * n * 4))
    plan.add(f"solver workspace ({n} x {C} float64, x14)", 14 * n * C * 8)
    return plan


def operator_plan(
    kind: str,
    *,
    n: int,
    d: int,
    n_columns: int,
    itemsize: int,
    n_neighbors: int,
    n_components: int | None,
    graph: str,
    need_graph: bool,
    block_size: int = 300,
) -> MemoryPlan:
    """The memory plan of a fit on the ``kind`` operator, with ``graph='auto'``
    resolved as the fit resolves it (exact with a dense K or up to
    ``EXACT_GRAPH_MAX_N`` points, else approximate); shared by the in-process
    choice and the cluster plan."""
    if graph == "auto":
        graph = "exact" if kind == "dense" or n <= EXACT_GRAPH_MAX_N else "approx"
    return plan_fit(
        kind,
        n,
        d,
        n_columns,
        itemsize=itemsize,
        n_neighbors=n_neighbors,
        n_components=n_components,
        graph=graph,
        need_graph=need_graph,
        block_size=block_size,
    )


def resolve_operator(
    requested: str,
    *,
    n: int,
    d: int,
    n_columns: int,
    itemsize: int,
    n_neighbors: int,
    n_components: int | None,
    graph: str,
    need_graph: bool,
    solver: str,
    dense_only_solvers: tuple[str, ...],
    verbose: Any = 0,
    name: str = "estimator",
    block_size: int = 300,
) -> tuple[str, dict]:
    """Pick the operator and check its memory plan before anything is allocated.

    Returns the kind and why (``operator_selection_``): with ``'auto'`` and PCG
    the dense K or the block operator, whichever
    :func:`~semisvm.models._cost.cheaper` predicts faster here, when both fit;
    past memory the block operator for many classes, Nyström otherwise.
    """

    def plan(kind: str) -> MemoryPlan:
        return operator_plan(
            kind,
            n=n,
            d=d,
            n_columns=n_columns,
            itemsize=itemsize,
            n_neighbors=n_neighbors,
            n_components=n_components,
            graph=graph,
            need_graph=need_graph,
            block_size=block_size,
        )

    avail = available_memory()
    info: dict[str, Any] = {"requested": requested}
    if requested == "auto":
        dense_fits = plan("dense").fits(available=avail)
        if solver in dense_only_solvers:
            kind, info["reason"] = "dense", f"solver={solver!r} needs the dense K"
        elif dense_fits and solver == "pcg":
            # both fit: the one this machine runs faster (semisvm.models._cost)
            kind, evidence = cheaper(
                n=n,
                d=d,
                itemsize=itemsize,
                n_components=n_components or default_n_components(n),
                block_size=block_size,
            )
            info.update(evidence)
        elif dense_fits:
            kind, info["reason"] = "dense", "the dense K fits in memory"
        else:
            # many classes: the block operator keeps the dense model's accuracy
            # where m landmark functions cannot carry every class along the
            # graph; one boundary they carry (and the exact Newton / direct
            # solvers need the low-rank form)
            kind = "nystroem"
            if solver == "pcg" and n_columns > 1:
                fits = [k for k in ("blocks", "fitc") if plan(k).fits(available=avail)]
                kind = fits[0] if fits else "blocks"
            info["reason"] = "the dense K does not fit in memory"
    else:
        kind = requested
        info["reason"] = "requested"
    if kind in ("nystroem", "fitc", "blocks") and solver in dense_only_solvers:
        raise ValueError(
            f"solver={solver!r} needs the dense kernel matrix (it is not defined on "
            "a low-rank kernel); use kernel_approximation='dense', or another solver."
        )
    if kind in ("streamed", "fitc", "blocks") and solver != "pcg":
        raise ValueError(
            f"solver={solver!r} needs the kernel matrix itself; with "
            f"kernel_approximation={kind!r} (products only) use solver='pcg', or "
            "kernel_approximation='nystroem' with any primal solver."
        )
    p = plan(kind)
    if not p.fits(available=avail):
        others = []
        for k in ("dense", "streamed", "nystroem", "fitc", "blocks"):
            if k != kind:
                q = plan(k)
                ok = "fits" if q.fits(available=avail) else "does not fit"
                others.append(
                    f"kernel_approximation={k!r} needs {format_bytes(q.total)} ({ok})"
                )
        raise MemoryError(
            f"{name}: {p.describe()}\nbut only {format_bytes(avail)} is available (plans "
            f"are kept under {SAFETY_FRACTION:.0%} of it). Options: "
            + "; ".join(others)
            + "; a smaller n_components (Nystroem); float32 input (halves a dense K)."
        )
    info["chosen"] = kind
    if verbose:
        print(
            f"[{name}] kernel operator: {kind} ({info['reason']}; {p.describe()}; "
            f"{format_bytes(avail)} available)"
        )
    return kind, info


def decision_in_blocks(
    X: Any,
    centers: Any,
    coef: np.ndarray,
    intercept: np.ndarray,
    kernel_fn: Any,
    *,
    precomputed: bool = False,
) -> np.ndarray:
    """:math:`k(X, centers)\\,coef + b` computed over row blocks of X.

    Block height from available memory (at most 64 MiB of kernel rows), so a
    prediction on any number of points holds one block of kernel values.
    """
    n = X.shape[0]
    out = np.empty((n, coef.shape[1]))
    if precomputed:
        for s in range(0, n, 65536):
            Kt = X[s : s + 65536]
            Kt = Kt.toarray() if sp.issparse(Kt) else np.asarray(Kt)
            out[s : s + 65536] = Kt @ coef
    else:
        rows = block_rows(centers.shape[0], 8, cap_bytes=64 * 2**20, n_rows=n)
        for s in range(0, n, rows):
            out[s : s + rows] = kernel_fn(X[s : s + rows], centers) @ coef
    out += intercept
    return out


def build_scalable_kernel(
    est: Any, X: Any, kind: str, include: Any = None
) -> tuple[Any, float | None]:
    """The streamed operator or the fitted Nyström factor of an estimator's X.

    ``include``: rows that are landmarks whatever the draw (the labeled
    points: the selection's leave-one-out then reads its features off the
    same factor, :func:`semisvm.models._autoreg.operator_features`).

    For a dask array X: the streamed kernel rows or the Nyström factor C with its
    row blocks on the cluster's workers (:mod:`semisvm.kernels._distributed`).
    """
    from ..kernels import NystroemFactor, StreamedKernelOperator, resolve_gamma
    from ..kernels._blocks import BlockResidualOperator
    from ..kernels._distributed import (
        DistributedNystroemFactor,
        distributed_gamma,
        distributed_kernel,
        is_distributed_array,
    )
    from ..kernels._fitc import FITCOperator, kernel_diagonal

    opts = resolved_options(est)
    if is_distributed_array(X):
        kernel = est.kernel
        if kind == "streamed":
            return distributed_kernel(
                X,
                kernel=kernel,
                gamma=est.gamma,
                degree=est.degree,
                coef0=est.coef0,
                kernel_params=est.kernel_params,
                store="streamed",
                n_neighbors=est.n_neighbors,
            )
        g = distributed_gamma(X, est.gamma, kernel, est.n_neighbors)
        m = opts.n_components or default_n_components(X.shape[0])
        factor_kw = dict(
            landmarks=opts.landmarks,
            kernel=kernel,
            gamma=g if g is not None else 1.0,
            degree=est.degree,
            coef0=est.coef0,
            kernel_params=est.kernel_params,
            random_state=resolve_seed(est.random_state),
            include=include,
        )
        if kind == "blocks":
            from ..kernels._distributed_blocks import DistributedBlockResidualOperator

            blocks = DistributedBlockResidualOperator(
                X,
                n_components=m,
                block_size=opts.block_size,
                block_random_state=int_seed(resolve_seed(est.random_state)),
                **factor_kw,
            )
            return blocks, g
        return DistributedNystroemFactor(m, **factor_kw).fit(X), g

    kernel = est.kernel
    g = (
        None
        if callable(kernel) or kernel == "linear"
        else resolve_gamma(X, est.gamma, kernel, est.n_neighbors)
    )
    params = dict(
        kernel=kernel,
        gamma=g if g is not None else 1.0,
        degree=est.degree,
        coef0=est.coef0,
        kernel_params=est.kernel_params,
    )
    if kind == "streamed":
        return StreamedKernelOperator(X, **params), g
    m = opts.n_components or default_n_components(X.shape[0])
    factor = NystroemFactor(
        m,
        landmarks=opts.landmarks,
        random_state=resolve_seed(est.random_state),
        include=include,
        **params,
    ).fit(X)
    if kind == "fitc":
        return FITCOperator(factor, kernel_diagonal(X, **params)), g
    if kind == "blocks":
        op = BlockResidualOperator(
            factor,
            X,
            block_size=opts.block_size,
            random_state=int_seed(resolve_seed(est.random_state)),
        )
        return op, g
    return factor, g


def graph_weight_of(est: Any, X: Any) -> str:
    """The weights of ``est``'s graph on X: ``graph_weight`` resolved from X's
    length ratio when it is ``'auto'``."""
    from ..graph import resolve_graph_weight

    if est.graph_weight != "auto":
        return est.graph_weight
    from .._dask import is_distributed_array

    if is_distributed_array(X):
        from ..kernels._distributed import distributed_scale_ratio

        return resolve_graph_weight("auto", distributed_scale_ratio(X, est.n_neighbors))
    from ..kernels import knn_scale_ratio

    return resolve_graph_weight("auto", knn_scale_ratio(X, est.n_neighbors))


def distributed_adjacency(
    est: Any,
    X: Any,
    K: Any = None,
    gamma: float | None = None,
    *,
    weight: str | None = None,
) -> tuple[sp.csr_array, str]:
    """kNN adjacency of a dask array X, searched on the cluster's workers.

    With the dense RBF kernel rows on the workers (the in-process dense plan) the
    graph is read off them, as :func:`~semisvm.graph.knn_graph_from_kernel` reads
    it off the in-process K: the same neighbours and distances, no second search.
    Returns the adjacency and the search method used (``'exact'``/``'approx'``).
    """
    from ..graph._distributed import knn_graph_distributed

    opts = resolved_options(est)
    method = opts.graph_method
    weight = graph_weight_of(est, X) if weight is None else weight
    if (
        method in ("auto", "exact")
        and opts.graph_pca in (None, "auto")
        and est.kernel == "rbf"
        and gamma is not None
        and getattr(K, "blocks", None) is not None
        and hasattr(K, "top_columns")
    ):
        from ..graph._distributed import knn_graph_from_distributed_kernel

        W = knn_graph_from_distributed_kernel(
            K, gamma, int(est.n_neighbors), weight=weight, t=opts.heat_t
        )
        return W, "exact"
    if method == "auto":
        method = "exact" if X.shape[0] <= EXACT_GRAPH_MAX_N else "approx"
        if method == "approx":
            try:
                import hnswlib  # noqa: F401
            except ImportError:
                method = "exact"
    W = knn_graph_distributed(
        X,
        int(est.n_neighbors),
        weight=weight,
        t=opts.heat_t,
        method=method,
        pca_components=opts.graph_pca if method == "approx" else None,
    )
    return W, method


def knn_method(graph_method: str, n: int) -> str:
    """The in-process kNN search ``graph_method`` resolves to for n points:
    ``'auto'`` is exact up to :data:`EXACT_GRAPH_MAX_N` points, approximate
    above when hnswlib or pynndescent is installed."""
    if graph_method != "auto":
        return graph_method
    if n > EXACT_GRAPH_MAX_N:
        for mod in ("hnswlib", "pynndescent"):
            try:
                __import__(mod)
            except ImportError:
                continue
            return "approx"
    return "exact"


def scalable_knn(est: Any, X: Any) -> tuple[np.ndarray, np.ndarray]:
    """The kNN lists of X (indices, squared distances) by blocked exact or
    approximate search (:func:`knn_method`), as the estimator's options ask."""
    from ..graph._knn import CANDIDATE_FACTOR, auto_pca_components, knn_search

    opts = resolved_options(est)
    n = X.shape[0]
    k = min(int(est.n_neighbors), n - 1)
    if k < 1:
        raise ValueError(f"A graph needs at least 2 points, got n_samples={n}.")
    method = knn_method(opts.graph_method, n)
    pca = opts.graph_pca
    if pca == "auto":
        pca = auto_pca_components(X.shape[1], method)
    if getattr(est, "verbose", 0):
        print(
            f"[{type(est).__name__}] kNN graph: {method}"
            + (
                f" on a {pca}-component PCA projection, {CANDIDATE_FACTOR * k}"
                " candidates re-ranked by exact distance"
                + (" (graph_pca='auto': d > 128)" if opts.graph_pca == "auto" else "")
                if pca
                else ""
            ),
            flush=True,
        )
    return knn_search(
        X,
        k,
        method=method,
        pca_components=pca,
        random_state=int_seed(est.random_state),
    )


def scalable_adjacency(
    est: Any,
    X: Any,
    *,
    knn: tuple[np.ndarray, np.ndarray] | None = None,
    weight: str | None = None,
) -> sp.csr_array:
    """Symmetric kNN adjacency of X by blocked exact or approximate search (the
    lists of :func:`scalable_knn`, searched here unless given; ``weight``: the
    resolved graph weights, :func:`graph_weight_of` unless given)."""
    from ..graph._graph import _local_scales, _symmetrize, _to_weights

    opts = resolved_options(est)
    n = X.shape[0]
    ind, d2 = scalable_knn(est, X) if knn is None else knn
    return _to_weights(
        _symmetrize(ind, d2, n),
        graph_weight_of(est, X) if weight is None else weight,
        opts.heat_t,
        _local_scales(d2),
    )
