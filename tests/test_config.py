"""semisvm.get_config / set_config / config_context: the BLAS-thread policy switch."""

from contextlib import nullcontext

import numpy as np
import pytest
from threadpoolctl import ThreadpoolController, threadpool_limits

import semisvm
from semisvm import _config
from semisvm.kernels._operators import (
    DenseKernelOperator,
    blas_threads_for,
    single_blas_thread,
)


def _blas_threads() -> list[int]:
    info = ThreadpoolController().select(user_api="blas").info()
    assert info, "no BLAS library found by threadpoolctl"
    return [d["num_threads"] for d in info]


def test_default_and_context_restore_even_on_error():
    # the BLAS's own setting by default; the one-thread policy is an option
    assert semisvm.get_config() == {"blas_threads": None}
    with semisvm.config_context(blas_threads="auto"):
        assert semisvm.get_config()["blas_threads"] == "auto"
        with semisvm.config_context(blas_threads=None):
            assert semisvm.get_config()["blas_threads"] is None
        assert semisvm.get_config()["blas_threads"] == "auto"
    assert semisvm.get_config()["blas_threads"] is None
    with pytest.raises(RuntimeError):
        with semisvm.config_context(blas_threads="auto"):
            raise RuntimeError("inside")
    assert semisvm.get_config()["blas_threads"] is None
    cfg = semisvm.get_config()
    cfg["blas_threads"] = "auto"  # a copy: the settings do not change
    assert semisvm.get_config()["blas_threads"] is None


def test_set_config_persists_and_rejects_bad_values():
    try:
        semisvm.set_config(blas_threads="auto")
        assert semisvm.get_config()["blas_threads"] == "auto"
        semisvm.set_config()  # nothing given: nothing changes
        assert semisvm.get_config()["blas_threads"] == "auto"
    finally:
        semisvm.set_config(blas_threads=None)
    for bad in (4, "none", True, "user"):
        with pytest.raises(ValueError, match="blas_threads"):
            semisvm.set_config(blas_threads=bad)
        with pytest.raises(ValueError, match="blas_threads"):
            with semisvm.config_context(blas_threads=bad):
                pass  # pragma: no cover - never entered
    assert semisvm.get_config()["blas_threads"] is None


def test_environment_variable(monkeypatch):
    monkeypatch.setenv("SEMISVM_BLAS_THREADS", "none")
    assert _config._from_env() is None
    monkeypatch.setenv("SEMISVM_BLAS_THREADS", " AUTO ")
    assert _config._from_env() == "auto"
    monkeypatch.delenv("SEMISVM_BLAS_THREADS")
    assert _config._from_env() is None
    monkeypatch.setenv("SEMISVM_BLAS_THREADS", "4")
    with pytest.raises(ValueError, match="SEMISVM_BLAS_THREADS"):
        _config._from_env()


def test_the_library_limits_only_under_auto():
    # under 'auto' the one-thread steps set a limit; under None they are no-ops,
    # so the caller's limit (2 threads, or the BLAS's maximum if smaller: the
    # test session's conftest starts the BLAS on one thread) stays in force
    assert isinstance(single_blas_thread(), nullcontext)  # the default: None
    with threadpool_limits(limits=2, user_api="blas"):
        outer = _blas_threads()
        with single_blas_thread():
            assert _blas_threads() == outer
        assert blas_threads_for(64 * 2**20) is None
        with semisvm.config_context(blas_threads="auto"):
            assert not isinstance(single_blas_thread(), nullcontext)
            with single_blas_thread():
                assert all(t == 1 for t in _blas_threads())
            assert blas_threads_for(64 * 2**20) == 1


def test_operator_reads_the_policy_at_each_product():
    rng = np.random.default_rng(0)
    n = 1100  # 9.7 MB in float64: limited to one thread under 'auto'
    A = rng.standard_normal((n, n))
    K = A @ A.T / n
    op = DenseKernelOperator(K)  # built before the context: still follows it
    V = rng.standard_normal((n, 5))
    ref = op @ V
    assert op._threads() is None
    with semisvm.config_context(blas_threads="auto"):
        assert op._threads() == 1
        np.testing.assert_allclose(op @ V, ref, rtol=1e-12, atol=1e-12)
    assert DenseKernelOperator(K, blas_threads=3)._threads() == 3
    assert DenseKernelOperator(K, blas_threads=np.int64(2))._threads() == 2
    for bad in ("four", 0, 1.5, True):
        with pytest.raises(ValueError, match="blas_threads"):
            DenseKernelOperator(K, blas_threads=bad)


def test_fit_under_either_policy_gives_the_same_model():
    from sklearn.datasets import make_moons

    X, y = make_moons(300, noise=0.1, random_state=0)
    yl = np.full(300, -1)
    yl[np.r_[np.flatnonzero(y == 0)[:3], np.flatnonzero(y == 1)[:3]]] = y[
        np.r_[np.flatnonzero(y == 0)[:3], np.flatnonzero(y == 1)[:3]]
    ]
    a = semisvm.LapSVM(random_state=0).fit(X, yl)
    with semisvm.config_context(blas_threads="auto"):
        b = semisvm.LapSVM(random_state=0).fit(X, yl)
    np.testing.assert_array_equal(a.transduction_, b.transduction_)
    fa, fb = a.decision_function(X), b.decision_function(X)
    np.testing.assert_allclose(fa, fb, rtol=0, atol=1e-8 * np.abs(fa).max())
