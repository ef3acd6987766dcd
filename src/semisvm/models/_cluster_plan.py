r"""The plan of a fit on a ``dask.array`` X: where the in-process code runs.

A manifold estimator given a dask array decides, before anything is computed,
between two plans that fit the **same model** as the in-process code on the same
data (the same kernel operator, landmarks, graph, regularization and stopping):

* ``'gather'`` -- when the whole in-process fit (its
  :class:`~semisvm._memory.MemoryPlan`: kernel or Nyström factor, graph, solver
  workspace) fits in the memory of one worker, the row blocks of X are stacked on
  one worker and the in-process ``fit`` runs there, unchanged.  Only X
  (:math:`n d` numbers) moves, once, worker to worker; the fitted estimator
  (coefficients on the training points, :math:`O(n C)`) comes back to the client.
  The model is the in-process model bit for bit (same code, same arithmetic), and
  the time is the in-process time plus the transfer.
* ``'distributed'`` -- otherwise: the kernel rows (or the Nyström factor's
  :math:`C = k(X, Z)`) as row blocks on the workers
  (:mod:`semisvm.kernels._distributed`), the kNN graph searched on the workers
  (:mod:`semisvm.graph._distributed`), the solver's (n, C) vectors on the client.
  The operator is the one an in-process fit with enough memory would use:
  ``'dense'`` when the kernel rows fit in half of each worker's memory, else
  ``'nystroem'``.

``verbose`` prints the plan and why.  :func:`cluster_plan` forces one of them (for
tests and benchmarks): ``with cluster_plan("distributed"): est.fit(Xd, y)``.
"""

from __future__ import annotations

import contextlib
import io
import os
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from .._dask import _row_block_futures, _stack, get_dask_client

__all__ = ["ClusterPlan", "choose_cluster_plan", "cluster_plan", "fit_on_cluster"]

#: ``'auto'`` (gather when the in-process fit fits one worker), ``'gather'`` or
#: ``'distributed'``; set through :func:`cluster_plan`.
_MODE = "auto"


@contextlib.contextmanager
def cluster_plan(mode: str) -> Iterator[None]:
    """Force the plan of the fits on dask arrays inside the block.

    Parameters
    ----------
    mode : {'auto', 'gather', 'distributed'}
        ``'gather'`` still refuses a fit that does not fit in one worker.
    """
    global _MODE
    if mode not in ("auto", "gather", "distributed"):
        raise ValueError(
            f"mode must be 'auto', 'gather' or 'distributed', got {mode!r}."
        )
    old, _MODE = _MODE, mode
    try:
        yield
    finally:
        _MODE = old


@dataclass
class ClusterPlan:
    """The chosen plan (``est.cluster_plan_`` holds it as a dict).

    Attributes
    ----------
    plan : {'gather', 'distributed'}
    operator : str
        Kernel operator of the fit (``'dense'``, ``'streamed'``, ``'nystroem'``);
        for ``'gather'`` the one the in-process code plans with the worker's memory.
    reason : str
        Why, with the sizes compared.
    worker_memory : int
        Memory of the smallest worker (its Dask limit, else its available memory).
    n_workers : int
    """

    plan: str
    operator: str
    reason: str
    worker_memory: int
    n_workers: int

    def describe(self) -> str:
        where = (
            "the in-process fit on one worker (X gathered there)"
            if self.plan == "gather"
            else f"distributed pieces on {self.n_workers} workers"
        )
        return f"plan: {self.plan} -- {self.operator} operator, {where}; {self.reason}"


def _worker_memory(client: Any) -> tuple[int, int]:
    """(number of workers, memory of the smallest worker in bytes)."""
    from .._memory import available_memory

    workers = client.scheduler_info().get("workers", {})
    limits = [w.get("memory_limit") or 0 for w in workers.values()]
    if workers and all(v > 0 for v in limits):
        return len(workers), int(min(limits))
    # no Dask limit: what the workers' machines have available
    avail = client.run(available_memory)
    return max(1, len(workers)), int(min(avail.values())) if avail else 0


def _in_process_plan(
    est: Any,
    n: int,
    d: int,
    n_columns: int,
    itemsize: int,
    *,
    need_graph: bool,
    solver: str,
    available: int,
) -> tuple[str, Any]:
    """The kernel operator and memory plan the in-process fit would choose."""
    from ._options import resolved_options
    from ._scale import operator_plan

    opts = resolved_options(est)
    requested = opts.kernel_approximation

    def plan(kind: str) -> Any:
        return operator_plan(
            kind,
            n=n,
            d=d,
            n_columns=n_columns,
            itemsize=itemsize,
            n_neighbors=est.n_neighbors,
            n_components=opts.n_components,
            graph=opts.graph_method,
            need_graph=need_graph,
        )

    if requested == "auto":
        dense_ok = solver == "dual" or plan("dense").fits(available=available)
        kind = "dense" if dense_ok else "nystroem"
    else:
        kind = requested
    return kind, plan(kind)


def choose_cluster_plan(
    est: Any,
    X: Any,
    *,
    n_columns: int,
    need_graph: bool,
    solver: str,
    client: Any = None,
) -> ClusterPlan:
    """The plan of ``est.fit`` on the dask array X (module docstring)."""
    from .._memory import SAFETY_FRACTION, format_bytes
    from ..kernels._distributed import choose_store

    client = get_dask_client(client)
    n_workers, mem = _worker_memory(client)
    n, d = X.shape
    itemsize = np.dtype(X.dtype).itemsize
    kind, p = _in_process_plan(
        est,
        n,
        d,
        n_columns,
        itemsize,
        need_graph=need_graph,
        solver=solver,
        available=mem,
    )
    fits = p.fits(available=mem)
    from ._options import resolved_options

    requested = resolved_options(est).kernel_approximation
    size = (
        f"the in-process fit needs {format_bytes(p.total)} "
        f"({'<=' if fits else '>'} {SAFETY_FRACTION:.0%} of one worker's "
        f"{format_bytes(mem)})"
    )
    dense_rows = choose_store(n, client, np.float32 if itemsize == 4 else np.float64)
    if _MODE == "gather" and not fits:
        raise MemoryError(f"cluster_plan('gather'): {size}.")
    if _MODE != "distributed" and fits:
        if not (
            _MODE == "auto"
            and requested == "auto"
            and kind == "nystroem"
            and dense_rows == "dense"
        ):
            return ClusterPlan(
                "gather",
                kind,
                f"{size}; X is {format_bytes(n * d * itemsize)} and moves once",
                mem,
                n_workers,
            )
        reason = (
            f"{size} only with the Nystroem factor, but the exact kernel rows fit "
            f"in half of each worker's memory ({format_bytes(n * n * itemsize / n_workers)}"
            " per worker)"
        )
        return ClusterPlan("distributed", "dense", reason, mem, n_workers)
    if _MODE == "distributed":
        reason = "forced by cluster_plan('distributed')"
    else:
        reason = size
    if requested == "auto":
        op = "dense" if dense_rows == "dense" else "nystroem"
        reason += (
            f"; kernel rows {format_bytes(n * n * itemsize / n_workers)} per worker "
            + ("fit" if op == "dense" else "do not fit")
            + " in half of its memory"
        )
    else:
        op = requested
    return ClusterPlan("distributed", op, reason, mem, n_workers)


def fit_manifold(X: Any, y: np.ndarray, params: Any, **problem_kw: Any) -> Any:
    """The whole fit on validated in-process data (the steps of ``LapSVM.fit``
    and ``LapRLS.fit`` after validation): prepare the problem, choose the
    regularization, solve, choose the graph's width."""
    from ._graphwidth import choose_graph_width
    from ._model import choose_regularization, fit_model
    from ._problem import prepare_problem

    problem = prepare_problem(X, y, params, **problem_kw)
    model = fit_model(problem, params, choose_regularization(problem, params))
    return choose_graph_width(problem, model, params)


def _fit_task(
    params: Any, X: np.ndarray, y: np.ndarray, kwargs: dict, memory: int
) -> tuple[Any, str, float]:
    """The in-process fit on a worker; returns its model, printed output and seconds."""
    buf = io.StringIO()
    old = os.environ.get("SEMISVM_MEMORY_LIMIT")
    os.environ["SEMISVM_MEMORY_LIMIT"] = str(
        int(memory)
    )  # plan with this worker's share
    t0 = time.perf_counter()
    try:
        with contextlib.redirect_stdout(buf):
            model = fit_manifold(X, y, params, **kwargs)
    finally:
        if old is None:
            os.environ.pop("SEMISVM_MEMORY_LIMIT", None)
        else:
            os.environ["SEMISVM_MEMORY_LIMIT"] = old
    return model, buf.getvalue(), time.perf_counter() - t0


def fit_on_cluster(
    params: Any,
    X: Any,
    y: Any,
    *,
    n_columns: int,
    need_graph: bool,
    solver: str,
    fit_kwargs: dict,
) -> tuple[Any, dict]:
    """Choose the plan of a fit on the dask array X; run it when it is ``'gather'``.

    Returns the model fitted on one worker (the gather plan; None otherwise,
    the caller goes on with the distributed pieces) and the plan's record
    (``cluster_plan_``); ``verbose`` prints the plan.
    """
    from dataclasses import replace

    t0 = time.perf_counter()
    client = get_dask_client()
    plan = choose_cluster_plan(
        params,
        X,
        n_columns=n_columns,
        need_graph=need_graph,
        solver=solver,
        client=client,
    )
    if params.verbose:
        print(
            f"[{params.name}] X is a dask array {X.shape}: {plan.describe()}",
            flush=True,
        )
    info = asdict(plan)
    if plan.plan != "gather":
        return None, info
    futures, _ = _row_block_futures(X, client, None)
    Xf = client.submit(_stack, *futures, pure=False)
    kwargs = {
        k: (v.compute() if hasattr(v, "compute") else v)
        for k, v in fit_kwargs.items()
        if v is not None
    }
    fut = client.submit(
        _fit_task, params, Xf, np.asarray(y), kwargs, plan.worker_memory, pure=False
    )
    model, out, seconds = fut.result()
    fut.release()
    Xf.release()
    if out:
        print(out, end="", flush=True)
    times = dict(model.attributes.get("fit_times_", {}))
    # gathering X and returning the model: outside the worker's fit
    times["other"] = times.get("other", 0.0) + max(
        time.perf_counter() - t0 - seconds, 0.0
    )
    attrs = dict(model.attributes, fit_times_=times)
    return replace(model, attributes=attrs), info
