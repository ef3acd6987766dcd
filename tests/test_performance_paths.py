"""The fast paths added for performance give the same answers as the plain ones."""

import numpy as np
import pytest
import scipy.sparse as sp

from semisvm._topk import SELECTION_ROWS, _bottom_columns, _chunk_width, _top_columns
from semisvm.graph import knn_graph, knn_graph_from_kernel
from semisvm.kernels import kernel_matrix
from semisvm.kernels._operators import (
    SINGLE_THREAD_MAX_BYTES,
    SYMV_MAX_COLUMNS,
    DenseKernelOperator,
    blas_threads_for,
)
from semisvm.solvers._pcg import lapsvm_pcg

rng = np.random.default_rng(3)


def _sym(n, dtype=np.float64):
    A = rng.standard_normal((n, n))
    return ((A + A.T) / 2).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("cols", [0, 1, SYMV_MAX_COLUMNS, SYMV_MAX_COLUMNS + 1, 10])
def test_symv_and_gemm_paths_agree(dtype, cols):
    K = _sym(300, dtype)
    V = rng.standard_normal(300) if cols == 0 else rng.standard_normal((300, cols))
    ref = K.astype(np.float64) @ V
    tol = 1e-10 if dtype == np.float64 else 2e-4
    for kw in (
        {},
        {"use_symmetry": False},
        {"blas_threads": 1},
        {"blas_threads": None},
    ):
        out = DenseKernelOperator(K, **kw) @ V
        assert out.dtype == np.float64 and out.shape == ref.shape
        np.testing.assert_allclose(out, ref, atol=tol * np.abs(ref).max())


def test_fortran_order_and_strided_blocks():
    K = _sym(200)
    V = rng.standard_normal((200, 6))[:, ::2]  # non-contiguous, 3 columns
    for Km in (K, np.asfortranarray(K)):
        np.testing.assert_allclose(DenseKernelOperator(Km) @ V, K @ V, atol=1e-11)


def test_float32_operator_matches_float64():
    X = rng.standard_normal((400, 5))
    K64 = kernel_matrix(X, gamma=0.3)
    K32 = kernel_matrix(X.astype(np.float32), gamma=0.3)
    assert K32.dtype == np.float32
    V = rng.standard_normal((400, 4))
    np.testing.assert_allclose(
        DenseKernelOperator(K32) @ V,
        DenseKernelOperator(K64) @ V,
        rtol=0,
        atol=1e-4 * np.abs(K64 @ V).max(),
    )


def test_blas_thread_choice_by_size():
    import semisvm

    # the one-thread policy (blas_threads='auto'; the default leaves the BLAS be)
    with semisvm.config_context(blas_threads="auto"):
        assert blas_threads_for(10) is None  # tiny: BLAS default
        assert blas_threads_for(64 * 2**20) == 1
        assert blas_threads_for(SINGLE_THREAD_MAX_BYTES + 1) is None
        # a matrix big enough to be limited still gives the plain product
        n = 1100  # 9.7 MB in float64
        K = _sym(n)
        op = DenseKernelOperator(K)
        assert op._threads() == 1
        v = rng.standard_normal(n)
        np.testing.assert_allclose(op @ v, K @ v, atol=1e-10)


def test_pcg_same_result_on_every_product_path():
    X = rng.standard_normal((240, 3))
    K = kernel_matrix(X, gamma=0.5)
    W = knn_graph_from_kernel(K, 0.5, 6)
    L = sp.csgraph.laplacian(W, normed=True)
    Y = np.zeros((240, 5))
    lab = np.arange(0, 240, 8)
    Y[lab] = -1.0
    Y[lab, lab % 5] = 1.0
    kw = dict(L=L, gamma_a=1e-3, gamma_i=1e-2, max_iter=40, tol=0.0)
    ref = lapsvm_pcg(DenseKernelOperator(K, use_symmetry=False), Y, **kw)
    for Y_ in (Y, Y[:, :2]):  # gemm block and symv loop
        a = lapsvm_pcg(K, Y_, **kw)
        b = lapsvm_pcg(DenseKernelOperator(K, use_symmetry=False), Y_, **kw)
        scale = np.abs(b.alpha).max()
        np.testing.assert_allclose(a.alpha, b.alpha, rtol=0, atol=1e-9 * scale)
        np.testing.assert_allclose(a.b, b.b, rtol=0, atol=1e-9 * max(1, abs(b.b).max()))
    np.testing.assert_allclose(
        lapsvm_pcg(K, Y, **kw).alpha,
        ref.alpha,
        rtol=0,
        atol=1e-9 * np.abs(ref.alpha).max(),
    )


@pytest.mark.parametrize("n", [100, 700, 1500])
def test_chunked_top_columns_equal_argpartition(n):
    m = 11
    # more rows than one selection chunk, a ragged last chunk
    blk = rng.random((SELECTION_ROWS * 2 + 37, n))
    got = np.sort(_top_columns(blk, m), axis=1)
    want = np.sort(np.argpartition(blk, -m, axis=1)[:, -m:], axis=1)
    np.testing.assert_array_equal(got, want)
    low = np.sort(_bottom_columns(blk, m), axis=1)
    np.testing.assert_array_equal(low, np.sort(np.argsort(blk, axis=1)[:, :m], axis=1))
    if n >= 1500:
        assert _chunk_width(n, m) > 0  # the two-stage path was taken


def test_graph_from_K_equals_graph_from_X_large():
    # big enough for the two-stage top-k search; well separated distances
    X = rng.standard_normal((1600, 6))
    K = kernel_matrix(X, gamma=0.05)
    assert _chunk_width(1600, 11) > 0
    for w in ("binary", "heat"):
        A = knn_graph_from_kernel(K, 0.05, 10, weight=w)
        B = knn_graph(X, 10, weight=w)
        assert abs(A - B).max() < 1e-6
    # small row blocks give the same graph
    C = knn_graph_from_kernel(K, 0.05, 10, block_rows=7)
    assert abs(C - knn_graph(X, 10)).max() == 0


def test_graph_from_K_with_duplicates():
    X = rng.standard_normal((500, 4))
    Xd = np.r_[X, X[:100]]
    K = kernel_matrix(Xd, gamma=0.2)
    W = knn_graph_from_kernel(K, 0.2, 8)
    assert W.diagonal().sum() == 0 and np.all(np.isfinite(W.data))
    assert abs(W - W.T).max() == 0


def test_pcg_batched_columns_equal_single_columns_at_large_n():
    # n large enough for the blocked products of the real code path; the batch of
    # columns (one-vs-rest problems) must reproduce each column solved alone
    n = 5100
    X = rng.standard_normal((n, 3))
    K = kernel_matrix(X, gamma=0.5)
    L = sp.csgraph.laplacian(knn_graph_from_kernel(K, 0.5, 6), normed=True)
    Y = np.zeros((n, 2))
    lab = np.arange(0, n, 97)
    Y[lab] = -1.0
    Y[lab, lab % 2] = 1.0
    kw = dict(L=L, gamma_a=1e-3, gamma_i=1e-2, max_iter=8, tol=0.0)
    a = lapsvm_pcg(K, Y, **kw)
    for c in range(2):
        b = lapsvm_pcg(K, Y[:, [c]], **kw)
        np.testing.assert_allclose(
            a.alpha[:, c], b.alpha[:, 0], rtol=0, atol=1e-10 * np.abs(b.alpha).max()
        )


def test_selection_does_not_form_features_it_will_not_use(monkeypatch):
    """The LOO selection asks whether the operator's features qualify before it
    reads them: a factor over the flop budget keeps its features unformed (a
    property read by ``hasattr`` formed them: n r^2 flops for nothing)."""
    from semisvm.kernels._nystroem import NystroemFactor
    from semisvm.models import _autoreg

    X = np.random.default_rng(0).normal(size=(400, 5))
    factor = NystroemFactor(60, gamma=0.5, include=np.arange(10)).fit(X)
    lab = np.arange(10)
    monkeypatch.setattr(_autoreg, "FEATURE_FLOPS", 400 * 60 * 60 - 1)
    monkeypatch.setattr(_autoreg, "MIN_FEATURES", 1)
    assert _autoreg.operator_features(factor, lab) is None
    assert factor._features is None
    monkeypatch.setattr(_autoreg, "FEATURE_FLOPS", 400 * 60 * 60)
    Phi = _autoreg.operator_features(factor, lab)
    assert Phi is not None and factor._features is not None
    np.testing.assert_allclose(
        Phi, factor.C_ @ factor.components_, rtol=1e-5, atol=1e-6
    )


def test_map_threads_in_order_nested_and_reused():
    """The library's pool returns results in order, runs a map nested in one of
    its own tasks serially (no deadlock on the workers it occupies) and is
    reused between calls."""
    import threading

    from semisvm import _threads

    names = set()

    def inner(i: int) -> int:
        names.add(threading.current_thread().name)
        return i * i

    def outer(i: int) -> list:
        return _threads.map_threads(inner, range(i, i + 4), threads=3)

    got = _threads.map_threads(outer, range(6), threads=3)
    assert got == [[j * j for j in range(i, i + 4)] for i in range(6)]
    pool = _threads._pool
    assert _threads.map_threads(inner, range(5), threads=2) == [i * i for i in range(5)]
    assert _threads._pool is pool
    assert all(name.startswith("semisvm") for name in names)


@pytest.mark.parametrize("symmetric", [False, True])
def test_rbf_entries_on_threads_are_the_serial_entries(monkeypatch, symmetric):
    """The RBF's elementwise pass split over threads gives every entry as the
    serial pass does (the Gram product is the same in both)."""
    import semisvm.kernels._kernels as km

    X = np.random.default_rng(5).normal(size=(700, 6)).astype(np.float32)
    Z = None if symmetric else X[:300] + 0.5
    monkeypatch.setattr(km, "_BLOCK_BYTES", 4 * 300 * 7)  # many row blocks
    monkeypatch.setattr(km, "PARALLEL_MIN_WORK", 0)
    monkeypatch.setattr(km, "blas_threads", lambda: 1)
    serial = kernel_matrix(X, Z, gamma=0.4)
    monkeypatch.setattr(km, "blas_threads", lambda: 3)
    threaded = kernel_matrix(X, Z, gamma=0.4)
    np.testing.assert_array_equal(threaded, serial)
    ref = np.exp(-0.4 * ((X[:, None, :] - (X if Z is None else Z)[None]) ** 2).sum(-1))
    np.testing.assert_allclose(threaded, ref, atol=1e-5)
