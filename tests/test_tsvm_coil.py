"""COIL one-vs-rest TSVM experiment (issue 31, item 3) on a fake COIL-20 file.

The real data is never needed: a small ``coil20.npz`` with the same keys is
written to a temporary directory.
"""

from __future__ import annotations

import numpy as np
import pytest

from semisvm.experiments._tsvm_coil import (
    COIL3_OBJECTS,
    load_coil_objects,
    pick_labeled,
    run_coil_tsvm,
    tsvm_one_vs_rest,
)


def _fake_coil(tmp_path, per_object=6, d=16, seed=0):
    rng = np.random.default_rng(seed)
    centres = rng.uniform(0, 255, size=(20, d))
    y = np.repeat(np.arange(1, 21), per_object)
    X = np.clip(centres[y - 1] + rng.normal(0, 8, size=(y.size, d)), 0, 255)
    np.savez_compressed(
        tmp_path / "coil20.npz",
        X=X.astype(np.uint8),
        y=y,
        y_binary_first10_vs_last10=(y > 10).astype(np.uint8),
    )
    return X, y


def test_load_coil_objects_order_and_env_var(tmp_path, monkeypatch):
    _fake_coil(tmp_path)
    X, y, ids = load_coil_objects((19, 3), tmp_path)
    assert X.shape == (12, 16) and ids.tolist() == [19, 3]
    # class index follows the order of ``objects``: object 19 -> 0
    assert y.tolist() == [1] * 6 + [0] * 6  # file order: object 3 first
    monkeypatch.setenv("SEMISVM_DATA", str(tmp_path))
    X3, y3, ids3 = load_coil_objects()
    assert ids3.tolist() == list(COIL3_OBJECTS) and X3.shape[0] == 18
    assert np.bincount(y3).tolist() == [6, 6, 6]
    Xa, ya, idsa = load_coil_objects(None)
    assert Xa.shape[0] == 120 and idsa.size == 20 and ya.max() == 19
    with pytest.raises(ValueError, match="not in the COIL-20 file"):
        load_coil_objects((3, 21), tmp_path)


def test_pick_labeled_per_class_and_reproducible():
    y = np.repeat([0, 1, 2], 10)
    a = pick_labeled(y, 2, 5)
    assert np.bincount(y[a]).tolist() == [2, 2, 2]
    np.testing.assert_array_equal(a, pick_labeled(y, 2, 5))


def test_one_vs_rest_separated_objects_is_certified_and_exact():
    rng = np.random.default_rng(1)
    X = np.r_[
        rng.normal(size=(8, 2)) + [8, 0],
        rng.normal(size=(8, 2)) - [8, 0],
        rng.normal(size=(8, 2)) + [0, 8],
    ]
    y = np.repeat([0, 1, 2], 8)
    lab = pick_labeled(y, 1, 0)
    r = tsvm_one_vs_rest(X, y, lab, gamma=0.1, C=10.0, C_star=1.0, time_limit=30)
    assert r.certified == [True, True, True]
    assert max(r.gap) <= 1e-9
    assert r.error == 0.0
    np.testing.assert_array_equal(r.transduction[lab], y[lab])
    for lb, ob in zip(r.lower_bound, r.objective, strict=True):
        assert lb <= ob * (1 + 1e-9)


def test_run_coil_tsvm_records(tmp_path):
    _fake_coil(tmp_path)
    rows = run_coil_tsvm(
        data_dir=tmp_path,
        draws=(0, 1),
        time_limit=5.0,
        method="branch_and_bound",
    )
    assert len(rows) == 2
    for row in rows:
        assert row["objects"] == "3,6,19" and row["n"] == 18 and row["labeled"] == 6
        assert row["certified"].endswith("/3")
        for key in ("error_tsvm", "error_svc", "error_l2svm"):
            assert 0.0 <= row[key] <= 1.0


def _blobs4(seed=0, per=8):
    rng = np.random.default_rng(seed)
    centres = np.array([[8, 0], [-8, 0], [0, 8], [0, -8]])
    X = np.concatenate([rng.normal(size=(per, 2)) + c for c in centres])
    return X, np.repeat(np.arange(4), per)


def test_peeling_certified_columns_assign_their_points():
    from semisvm.experiments._tsvm_coil import tsvm_peeling

    X, y = _blobs4()
    lab = pick_labeled(y, 1, 0)
    out = tsvm_peeling(X, y, lab, gamma=0.1, C=10.0, C_star=1.0, time_limit=30)
    assert out["error"] == 0.0
    assert out["certified_per_pass"][0] >= 1
    assert out["assigned_by_proof"] >= 1
    np.testing.assert_array_equal(out["transduction"][lab], y[lab])
    assert np.all(out["transduction"] >= 0)


def test_peeling_without_certificate_falls_back_to_argmax():
    from semisvm.experiments._tsvm_coil import tsvm_peeling

    X, y = _blobs4(1)
    lab = pick_labeled(y, 1, 0)
    kw = dict(gamma=0.1, C=10.0, C_star=1.0, time_limit=1e-6)
    out = tsvm_peeling(X, y, lab, **kw)
    ovr = tsvm_one_vs_rest(X, y, lab, **kw)
    assert out["assigned_by_proof"] == 0 and out["certified_per_pass"] == [0]
    np.testing.assert_array_equal(out["transduction"], ovr.transduction)
    # the first pass may be given (run_coil_tsvm reuses its one-vs-rest)
    again = tsvm_peeling(X, y, lab, first=ovr, **kw)
    np.testing.assert_array_equal(again["transduction"], ovr.transduction)


def test_bench_csv_append_widens_the_header(tmp_path):
    import importlib.util
    import sys
    from pathlib import Path

    path = (
        Path(__file__).resolve().parents[1] / "benchmarks" / "tsvm" / "bench_coil3.py"
    )
    sys.path.insert(0, str(path.parents[1]))
    spec = importlib.util.spec_from_file_location("bench_coil3", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    csv_path = tmp_path / "r.csv"
    mod.append_rows(csv_path, [{"a": 1, "b": 2}])
    mod.append_rows(csv_path, [{"a": 3, "c": 4}])
    lines = csv_path.read_text().splitlines()
    assert lines == ["a,b,c", "1,2,", "3,,4"]


def test_one_vs_rest_two_classes_uses_both_columns_of_the_decoder():
    """Two classes: the decoder's single +-1 column becomes two one-vs-rest
    problems (class 0: its negative); a sign slip would swap every label."""
    rng = np.random.default_rng(2)
    X = np.r_[rng.normal(size=(8, 2)) + [6, 0], rng.normal(size=(8, 2)) - [6, 0]]
    y = np.repeat([3, 7], 8)
    lab = pick_labeled(y, 1, 0)
    r = tsvm_one_vs_rest(X, y, lab, gamma=0.1, C=10.0, C_star=1.0, time_limit=30)
    assert r.certified == [True, True]
    assert r.error == 0.0
    np.testing.assert_array_equal(r.transduction, y)
