"""Row-wise top-m selection shared by the in-process and the distributed kNN graphs.

A bottom-layer helper (plain numpy): :mod:`semisvm.graph` reads the kNN graph off
the kernel rows with it in process, :mod:`semisvm.kernels._distributed` on the
workers' kernel blocks.
"""

from __future__ import annotations

import numpy as np


def _chunk_width(n: int, m: int) -> int:
    """Chunk width for the two-stage top-m search (0: search the rows directly)."""
    width = 64
    while width >= 8 and n // width < 8 * m:
        width //= 2
    return width if width >= 8 else 0


#: rows per selection: numpy's row-wise selection returns an index array the size
#: of its input; on a few dozen rows it stays in the cache and in memory the
#: allocator reuses, where a whole block's would be fresh pages every call
SELECTION_ROWS = 64


def _top_columns(blk: np.ndarray, m: int) -> np.ndarray:
    """Column indices of the ``m`` largest entries of every row (unordered), by
    :func:`_top_in_rows` on ``SELECTION_ROWS`` rows at a time."""
    out = np.empty((blk.shape[0], m), dtype=np.intp)
    for s in range(0, blk.shape[0], SELECTION_ROWS):
        out[s : s + SELECTION_ROWS] = _top_in_rows(blk[s : s + SELECTION_ROWS], m)
    return out


def _bottom_columns(blk: np.ndarray, m: int) -> np.ndarray:
    """Column indices of the ``m`` smallest entries of every row (unordered): the
    largest of the negated rows (negation is exact)."""
    out = np.empty((blk.shape[0], m), dtype=np.intp)
    for s in range(0, blk.shape[0], SELECTION_ROWS):
        out[s : s + SELECTION_ROWS] = _top_in_rows(-blk[s : s + SELECTION_ROWS], m)
    return out


def _top_in_rows(blk: np.ndarray, m: int) -> np.ndarray:
    """Column indices of the ``m`` largest entries of every row (unordered).

    Two stages, so that the expensive selection runs on a small part of each
    row: the row's columns are dealt into chunks of ``w`` and the maximum of each
    chunk taken (one fast streaming pass); the ``m`` chunks with the largest
    maxima hold the ``m`` largest entries (an entry outside them is at most the
    ``m``-th largest chunk maximum, hence at most the ``m``-th largest entry, so it
    can only tie with it); the final selection runs on those ``m * w`` entries plus
    the ragged tail of the row.
    """
    nb, n = blk.shape
    w = _chunk_width(n, m)
    if w == 0:
        return np.argpartition(blk, -m, axis=1)[:, -m:]
    nc = n // w
    # chunk c holds the columns c, c + nc, ..., c + (w - 1) nc: its maximum is an
    # elementwise maximum of w contiguous slices (vectorised), not a short reduction
    cmax = blk[:, : nc * w].reshape(nb, w, nc).max(axis=1)
    top_chunks = np.argpartition(cmax, -m, axis=1)[:, -m:]  # (nb, m)
    # candidate columns: the chosen chunks' columns, then the tail columns
    cols = (top_chunks[:, :, None] + nc * np.arange(w)).reshape(nb, m * w)
    if nc * w < n:
        tail = np.broadcast_to(np.arange(nc * w, n), (nb, n - nc * w))
        cols = np.concatenate([cols, tail], axis=1)
    vals = np.take_along_axis(blk, cols, axis=1)
    pick = np.argpartition(vals, -m, axis=1)[:, -m:]
    return np.take_along_axis(cols, pick, axis=1)
