"""Data loaders, the paper's split protocol and the ``semisvm`` command line."""

from __future__ import annotations

import csv
import os
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from semisvm.cli import main
from semisvm.datasets import make_two_moons
from semisvm.datasets._loaders import (
    DataFileNotFoundError,
    load_benchmark,
    load_data_file,
    load_g50c,
    load_mat,
    load_npz,
    load_svmlight,
    resolve_data_dir,
)
from semisvm.datasets._splits import TABLE2_SIZES, paper_splits, split_labeled_unlabeled

REPO = Path(__file__).resolve().parents[1]


def _data_dir() -> Path | None:
    for cand in (os.environ.get("SEMISVM_DATA"), REPO / ".." / "shared" / "data"):
        if cand and (Path(cand) / "g50c.npz").is_file():
            return Path(cand)
    return None


DATA = _data_dir()
needs_data = pytest.mark.skipif(DATA is None, reason="benchmark data directory missing")


# ---------------------------------------------------------------- loaders
def test_resolve_data_dir_precedence(tmp_path, monkeypatch):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    monkeypatch.setenv("SEMISVM_DATA", str(b))
    assert resolve_data_dir(a) == a  # flag wins over the environment
    assert resolve_data_dir() == b
    monkeypatch.setenv("SEMISVM_DATA", str(tmp_path / "gone"))
    with pytest.raises(DataFileNotFoundError, match="SEMISVM_DATA"):
        resolve_data_dir()


def test_missing_directory_and_file_are_named(tmp_path):
    missing = tmp_path / "nowhere"
    with pytest.raises(DataFileNotFoundError, match="nowhere"):
        resolve_data_dir(missing)
    with pytest.raises(DataFileNotFoundError) as exc:
        load_g50c(tmp_path)
    assert "g50c.npz" in str(exc.value) and str(tmp_path) in str(exc.value)
    with pytest.raises(DataFileNotFoundError, match="not available"):
        load_benchmark("mnist3vs8", tmp_path)


def test_generic_file_loaders(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 3))
    y = rng.integers(0, 2, 20)
    np.savez(tmp_path / "d.npz", X=X, y=y)
    Xn, yn = load_npz(tmp_path / "d.npz")
    np.testing.assert_allclose(Xn, X)
    np.testing.assert_array_equal(yn, y)
    from sklearn.datasets import dump_svmlight_file

    dump_svmlight_file(X, y, str(tmp_path / "d.svm"))
    Xs, ys = load_svmlight(tmp_path / "d.svm")
    assert sp.issparse(Xs)
    np.testing.assert_allclose(Xs.toarray(), X, rtol=1e-6)
    from scipy.io import savemat

    savemat(tmp_path / "d.mat", {"X": X, "y": y[:, None]})
    Xm, ym = load_mat(tmp_path / "d.mat")
    np.testing.assert_allclose(Xm, X)
    np.testing.assert_array_equal(ym, y)
    np.savetxt(tmp_path / "d.csv", np.c_[X, y], delimiter=",", header="a,b,c,label")
    Xc, yc = load_data_file(tmp_path / "d.csv")
    np.testing.assert_allclose(Xc, X)
    np.testing.assert_array_equal(yc, y)
    with pytest.raises(DataFileNotFoundError, match="e.npz"):
        load_data_file(tmp_path / "e.npz")


@needs_data
def test_benchmark_loaders():
    g = load_benchmark("g50c", DATA)
    assert g.X.shape == (550, 50) and set(g.y) == {0, 1}
    assert g.idx_labeled.shape == (10, 50) and g.idx_unlabeled.shape == (10, 500)
    ub = load_benchmark("uspstb", DATA)
    assert ub.X.shape == (2007, 256)
    np.testing.assert_array_equal(ub.y, (ub.y_original >= 5).astype(int))
    pc = load_benchmark("pcmac", DATA)
    assert sp.issparse(pc.X) and pc.X.shape == (1946, 7511)
    cb = load_benchmark("coil20b", DATA)
    assert cb.X.shape == (1440, 1024) and np.bincount(cb.y).tolist() == [720, 720]
    np.testing.assert_allclose(np.linalg.norm(cb.X, axis=1), 1.0)
    c = load_benchmark("coil20", DATA)
    assert np.unique(c.y).size == 20


# ---------------------------------------------------------------- splits
def _labels_like(name: str) -> np.ndarray:
    counts = {
        "g50c": [275, 275],
        "coil20_b": [720, 720],
        "pcmac": [961, 985],
        "uspst_b": [1080, 927],
        "coil20": [72] * 20,
        "uspst": [327, 273, 206, 178, 196, 140, 174, 173, 160, 180],
    }[name]
    return np.repeat(np.arange(len(counts)), counts)


@pytest.mark.parametrize(
    "name", ["g50c", "coil20_b", "pcmac", "uspst_b", "coil20", "uspst"]
)
def test_paper_splits_table2(name):
    y = _labels_like(name)
    n_l, n_u, n_v, n_t = TABLE2_SIZES[name]
    splits = paper_splits(y, n_l, n_v, random_state=0)
    assert len(splits) == 12
    classes = np.unique(y)
    for s in splits:
        L, U, V, T = s.labeled, s.unlabeled, s.validation, s.test
        assert L.size == n_l and V.size == n_v
        # |T| is a stratified quarter: within a few points of Table 2
        assert abs(T.size - n_t) <= 5 and abs(U.size - n_u) <= 5
        allidx = np.concatenate([L, U, V, T])
        assert allidx.size == y.size and np.unique(allidx).size == y.size
        assert set(y[L]) == set(classes) and set(y[V]) == set(classes)
        # stratified test fold
        np.testing.assert_allclose(
            np.bincount(y[T], minlength=classes.size), np.bincount(y) / 4, atol=1
        )
    for r in range(3):  # every point is tested exactly once per repeat
        tests = np.concatenate([s.test for s in splits if s.repeat == r])
        assert np.unique(tests).size == tests.size == y.size
    again = paper_splits(y, n_l, n_v, random_state=0)
    np.testing.assert_array_equal(again[5].labeled, splits[5].labeled)


def test_split_labeled_unlabeled():
    y = np.r_[np.zeros(30), np.ones(5), 2 * np.ones(3)]
    lab, unl = split_labeled_unlabeled(y, 4, random_state=1)
    assert lab.size == 4 and unl.size == 34 and set(y[lab]) == {0, 1, 2}
    with pytest.raises(ValueError):
        split_labeled_unlabeled(y, 2)


# ---------------------------------------------------------------- reproduce
@pytest.mark.slow
@needs_data
def test_reproduce_smoke_g50c(tmp_path, capsys):
    out = tmp_path / "res"
    rc = main(
        [
            "reproduce",
            "--data-dir",
            str(DATA),
            "--datasets",
            "g50c",
            "--splits",
            "2",
            "--out",
            str(out),
            "--quiet",
        ]
    )
    assert rc == 0
    assert "not available" in capsys.readouterr().out  # MNIST3VS8 / FACEMIT
    for name in (
        "tables.md",
        "table3.md",
        "table4.csv",
        "table6.csv",
        "table7.csv",
        "per_split.csv",
        "time_ratios.csv",
        "figure3_two_moons_pcg.png",
        "figure4_two_moons_criteria.png",
        "figure_error_vs_iter_g50c.png",
    ):
        assert (out / name).is_file(), name
    with open(out / "table4.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert set(rows[0]) >= {
        "table",
        "dataset",
        "classifier",
        "metric",
        "ours_mean",
        "ours_std",
        "paper_mean",
        "paper_std",
        "outside_paper_std",
    }
    g = [r for r in rows if r["dataset"] == "G50C"]
    assert {r["classifier"] for r in g} == {"svm", "rlsc", "laprlsc", "dual", "newton"}
    assert {r["metric"] for r in g} == {"err_U_pct", "err_V_pct", "err_T_pct"}
    with open(out / "per_split.csv") as fh:
        per = list(csv.DictReader(fh))
    assert len(per) == 2 * 8
    for clf in ("newton", "pcg_stability", "pcg_validation", "pcg_mixed", "laprlsc"):
        errs = [float(r["err_T"]) for r in per if r["classifier"] == clf]
        assert np.mean(errs) <= 15.0, (clf, errs)
    pcg = [r for r in per if r["classifier"].startswith("pcg")]
    assert all(float(r["n_iter"]) > 0 and float(r["time"]) > 0 for r in pcg)
    md = (out / "table3.md").read_text()
    assert "G50C" in md and "MNIST3VS8" in md and "not available" in md


def test_reproduce_bad_data_dir(tmp_path, capsys):
    rc = main(
        [
            "reproduce",
            "--data-dir",
            str(tmp_path / "missing"),
            "--datasets",
            "g50c",
            "--splits",
            "1",
            "--out",
            str(tmp_path / "o"),
            "--quiet",
        ]
    )
    assert rc == 1
    assert "missing" in capsys.readouterr().err
    rc = main(
        [
            "reproduce",
            "--data-dir",
            str(tmp_path),
            "--datasets",
            "g50c",
            "--splits",
            "1",
            "--out",
            str(tmp_path / "o"),
            "--quiet",
        ]
    )
    err = capsys.readouterr().err
    assert rc == 1 and "g50c.npz" in err and str(tmp_path) in err


# ---------------------------------------------------------------- fit / predict
def _moons_files(tmp_path: Path):
    X, y, y_true = make_two_moons(200, n_labeled_per_class=2, random_state=3)
    Xt, _, yt = make_two_moons(100, n_labeled_per_class=None, random_state=4)
    return X, y, Xt, yt


@pytest.mark.parametrize("fmt", ["csv", "npz"])
def test_fit_predict_round_trip(tmp_path, fmt, capsys):
    X, y, Xt, yt = _moons_files(tmp_path)
    yt_coded = np.where(yt == 1, 5, 7)  # arbitrary class labels
    y_coded = np.where(y == -1, -1, np.where(y == 1, 5, 7))
    if fmt == "csv":
        train, test = tmp_path / "train.csv", tmp_path / "test.csv"
        np.savetxt(train, np.c_[X, y_coded], delimiter=",")
        np.savetxt(test, Xt, delimiter=",")
    else:
        train, test = tmp_path / "train.npz", tmp_path / "test.npz"
        np.savez(train, X=X, y=y_coded)
        np.savez(test, X=Xt, y=yt_coded)
    model = tmp_path / "m.pkl"
    preds = tmp_path / "p.csv"
    assert (
        main(
            [
                "fit",
                "--train",
                str(train),
                "--model-out",
                str(model),
                "--gamma-a",
                "1e-2",
                "--gamma-i",
                "1",
                "--sigma",
                "0.3",
                "--n-neighbors",
                "6",
            ]
        )
        == 0
    )
    assert "labeled" in capsys.readouterr().out
    assert (
        main(
            ["predict", "--model", str(model), "--data", str(test), "--out", str(preds)]
        )
        == 0
    )
    with open(preds) as fh:
        pred = np.array([float(r["prediction"]) for r in csv.DictReader(fh)])
    assert pred.shape == (100,) and set(np.unique(pred)) <= {5.0, 7.0}
    assert np.mean(pred == yt_coded) >= 0.9


def test_fit_missing_file_named(tmp_path, capsys):
    rc = main(["fit", "--train", str(tmp_path / "nope.csv")])
    err = capsys.readouterr().err
    assert rc == 1 and "nope.csv" in err and str(tmp_path) in err
    rc = main(
        [
            "predict",
            "--model",
            str(tmp_path / "m.pkl"),
            "--data",
            str(tmp_path / "x.csv"),
        ]
    )
    err = capsys.readouterr().err
    assert rc == 1 and "m.pkl" in err


@needs_data
def test_reproduce_classifier_subset_and_unavailable(tmp_path, capsys):
    out = tmp_path / "sub"
    rc = main(
        [
            "reproduce",
            "--data-dir",
            str(DATA),
            "--datasets",
            "mnist3vs8,g50c",
            "--splits",
            "1",
            "--out",
            str(out),
            "--classifiers",
            "svm,newton",
            "--no-figures",
            "--quiet",
        ]
    )
    assert rc == 0
    assert "MNIST3VS8 is not available" in capsys.readouterr().out
    assert "G50C" in (out / "table6.md").read_text()
    rc = main(
        [
            "reproduce",
            "--data-dir",
            str(DATA),
            "--datasets",
            "nope",
            "--out",
            str(out),
            "--quiet",
        ]
    )
    assert rc == 1 and "nope" in capsys.readouterr().err


def test_update_benchmarks_section(tmp_path):
    from semisvm.experiments._reproduce import (
        BENCH_BEGIN,
        BENCH_END,
        update_benchmarks_section,
    )

    out = tmp_path / "out"
    out.mkdir()
    (out / "tables.md").write_text(
        "# Title\n\n- command: x\n\n## Table 3 - t\n\n| a |\n"
    )
    bench = tmp_path / "BENCHMARKS.md"
    bench.write_text(
        f"# B\n\nprose\n\n{BENCH_BEGIN}\nold table\n{BENCH_END}\n\n## Perf\n"
    )
    update_benchmarks_section(bench, out)
    text = bench.read_text()
    assert "old table" not in text and "# Title" not in text
    assert "### Table 3 - t" in text and "- command: x" in text
    assert text.startswith("# B\n\nprose\n") and text.endswith("## Perf\n")
    # idempotent: a second run gives the same file
    update_benchmarks_section(bench, out)
    assert bench.read_text() == text
    bench.write_text("no markers\n")
    with pytest.raises(ValueError, match="marker"):
        update_benchmarks_section(bench, out)


def test_reproduce_rejects_bad_dual_bias_and_missing_markers(tmp_path, capsys):
    from semisvm.experiments._reproduce import run_reproduction

    with pytest.raises(ValueError, match="dual_bias"):
        run_reproduction("g50c", data_dir=tmp_path, dual_bias="sometimes")
    bench = tmp_path / "B.md"
    bench.write_text("no markers\n")
    rc = main(
        [
            "reproduce",
            "--data-dir",
            str(tmp_path),
            "--datasets",
            "g50c",
            "--splits",
            "1",
            "--out",
            str(tmp_path / "o"),
            "--quiet",
            "--update-benchmarks",
            str(bench),
        ]
    )
    assert rc == 1 and "marker" in capsys.readouterr().err
