"""The reproduction's splits run in parallel through joblib with unchanged results."""

from __future__ import annotations

import os

import pytest

from semisvm.datasets._loaders import DataFileNotFoundError, resolve_data_dir
from semisvm.experiments import run_reproduction


def _data_dir():
    try:
        d = resolve_data_dir()
    except DataFileNotFoundError:
        return None
    return d if (d / "g50c.npz").exists() else None


DATA = _data_dir()
pytestmark = [
    pytest.mark.data,
    pytest.mark.skipif(DATA is None, reason="benchmark data directory missing"),
]


def _errors(res):
    keys = ("err_L", "err_U", "err_V", "err_T")
    return [
        (r["classifier"], r["split"], tuple(r.get(k) for k in keys))
        for r in res.records
    ]


def test_parallel_splits_run_in_worker_processes_with_equal_errors():
    # n_jobs=2 must really hand the splits to joblib's worker processes (each
    # record keeps the pid of the process that ran it): with the default BLAS
    # limit, run_reproduction used to call itself again without n_jobs, so the
    # "parallel" run ran in this process and the old version of this test, which
    # only compared the errors of two runs, could not tell
    kw = dict(
        data_dir=DATA,
        n_splits=2,
        figures=False,
        progress=False,
        classifiers=["svm", "laprlsc", "newton", "pcg_stability"],
    )
    seq = run_reproduction("g50c", **kw)
    par = run_reproduction("g50c", n_jobs=2, **kw)
    assert len(seq.records) == 8
    assert {r["worker_pid"] for r in seq.records} == {os.getpid()}
    par_pids = {r["worker_pid"] for r in par.records}
    assert os.getpid() not in par_pids
    # one pid per split: the classifiers of a split share its prepared kernel
    for k in range(2):
        assert len({r["worker_pid"] for r in par.records if r["split"] == k}) == 1
    assert _errors(par) == _errors(seq)


def test_n_jobs_reaches_joblib_with_the_default_blas_limit(monkeypatch):
    # run_reproduction(n_jobs=2) must hand n_jobs=2 to joblib also when it limits
    # the BLAS threads (its default, and the CLI's): it used to call itself again
    # without n_jobs, so every "parallel" run was sequential
    import semisvm.experiments._reproduce as rep

    seen = []

    class SpyParallel(rep.Parallel):
        def __init__(self, *args, **kwargs):
            seen.append(kwargs.get("n_jobs"))
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(rep, "Parallel", SpyParallel)
    res = run_reproduction(
        "g50c",
        data_dir=DATA,
        n_splits=2,
        figures=False,
        progress=False,
        classifiers=["laprlsc"],
        n_jobs=2,
    )
    assert seen == [2]
    assert len(res.records) == 2


@pytest.mark.slow
def test_splits_on_a_dask_cluster():
    distributed = pytest.importorskip("distributed")
    import joblib

    kw = dict(
        data_dir=DATA,
        n_splits=2,
        figures=False,
        progress=False,
        classifiers=["laprlsc", "newton"],
    )
    seq = run_reproduction("g50c", **kw)
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, dashboard_address=None, silence_logs=50
        ) as cluster,
        distributed.Client(cluster),
        joblib.parallel_backend("dask"),
    ):
        par = run_reproduction("g50c", n_jobs=2, **kw)
    assert _errors(par) == _errors(seq)
