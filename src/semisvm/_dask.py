"""Dask plumbing shared by the distributed kernels and the distributed graph.

The bottom layer of the cluster code: detecting a dask array, finding the
client, cutting X into row blocks on the workers.  Dask is imported lazily (the
package works without it).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["get_dask_client", "is_distributed_array"]


def is_distributed_array(X: Any) -> bool:
    """True for a ``dask.array.Array`` (checked without importing Dask)."""
    mod = type(X).__module__ or ""
    return mod.startswith("dask.") and hasattr(X, "chunks") and hasattr(X, "dask")


def get_dask_client(client: Any = None) -> Any:
    """The given client, else the current ``dask.distributed`` client.

    Raises
    ------
    ImportError
        When ``dask.distributed`` is not installed (with the extra to install).
    ValueError
        When no client is running: the estimators use the cluster of the
        client the user created (``Client("scheduler-address")`` or
        ``Client(LocalCluster())``).
    """
    if client is not None:
        return client
    try:
        from distributed import get_client
    except ImportError as exc:  # pragma: no cover - exercised without dask
        raise ImportError(
            "A dask.array input needs dask.distributed: pip install 'semisvm[dask]'."
        ) from exc
    try:
        return get_client()
    except ValueError:
        raise ValueError(
            "X is a dask array but no dask.distributed Client is running. Create one "
            "first, e.g. `from dask.distributed import Client; client = Client()` "
            "(a local cluster) or `Client('tcp://scheduler-address:8786')`."
        ) from None


#: Payloads up to this size travel inside the task messages; larger ones are
#: scattered once to every worker (one extra round trip, no repeated copies).
_INLINE_BYTES = 4 * 2**20


def _n_workers(client: Any) -> int:
    """Number of workers (asks the scheduler: call once per operator, not per product)."""
    return max(1, len(client.scheduler_info().get("workers", {})))


def _row_block_futures(
    X: Any, client: Any, block_rows: int | None
) -> tuple[list, np.ndarray]:
    """Futures of the row blocks of X (a dask array or an ndarray) and their offsets.

    A dask array keeps its own row chunks unless ``block_rows`` is given (then it is
    rechunked); an ndarray is cut into ``block_rows`` rows (default: two blocks per
    worker) and scattered.
    """
    n = X.shape[0]
    if is_distributed_array(X):
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D, got a dask array of shape {X.shape}.")
        if block_rows is not None:
            X = X.rechunk((block_rows, X.shape[1]))
        elif len(X.chunks[1]) > 1:
            X = X.rechunk((X.chunks[0], X.shape[1]))
        blocks = X.to_delayed().ravel().tolist()
        futures = client.compute(blocks)
        sizes = np.asarray(X.chunks[0], dtype=np.int64)
    else:
        if block_rows is None:
            block_rows = -(-n // (2 * _n_workers(client)))
        block_rows = max(1, int(block_rows))
        starts = list(range(0, n, block_rows))
        futures = [
            client.scatter(np.ascontiguousarray(X[s : s + block_rows])) for s in starts
        ]
        sizes = np.asarray([min(block_rows, n - s) for s in starts], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    return futures, offsets


def worker_groups(client: Any, futures: list) -> list[tuple[str | None, list[int]]]:
    """The row blocks grouped by the worker that holds them: [(address, blocks)].

    A partition per worker that forms without moving data (the blocks already
    live there); a block whose location is unknown joins the group with the
    fewest blocks.  Groups in the order of their first block, blocks ascending.
    """
    from distributed import wait

    wait(futures)
    who = client.who_has(futures)
    groups: dict[str | None, list[int]] = {}
    loose = []
    for b, f in enumerate(futures):
        w = sorted(who.get(f.key, ()))
        if w:
            groups.setdefault(w[0], []).append(b)
        else:
            loose.append(b)
    for b in loose:
        if not groups:
            groups[None] = []
        key = min(groups, key=lambda k: len(groups[k]))
        groups[key].append(b)
    return sorted(((w, sorted(bs)) for w, bs in groups.items()), key=lambda g: g[1][0])


def pin(address: str | None) -> dict:
    """Submit options that run a task on ``address`` (none when unknown)."""
    return {"workers": [address], "allow_other_workers": False} if address else {}


def _stack(*blocks: np.ndarray) -> np.ndarray:
    return np.vstack(blocks)


def _all_rows_future(block_futures: list, client: Any) -> Any:
    """A future of the whole of X on every worker, assembled among the workers.

    The blocks are stacked on one worker and replicated worker to worker: X never
    passes through the client.
    """
    fut = client.submit(_stack, *block_futures, pure=False)
    client.replicate([fut])
    return fut
