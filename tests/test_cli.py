"""The ``semisvm`` command line: real files in, class names out, one-line errors."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from semisvm import __version__
from semisvm._cli_io import load_model
from semisvm.cli import build_parser, estimator_options, main
from semisvm.datasets import make_two_moons

pd = pytest.importorskip("pandas")

NAMES = np.array(["left moon", "right moon"], dtype=object)


def _moons(n=120, labeled=3, seed=0):
    X, y, y_true = make_two_moons(n, n_labeled_per_class=labeled, random_state=seed)
    return X, y, y_true


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A pandas-written training CSV (string labels, blank = unlabeled), queries."""
    d = tmp_path_factory.mktemp("cli")
    X, y, y_true = _moons()
    lab = np.where(y == -1, None, NAMES[np.maximum(y, 0)])
    pd.DataFrame({"x1": X[:, 0], "x2": X[:, 1], "y": lab}).to_csv(
        d / "data.csv", index=False
    )
    Xq, _, yq = _moons(80, None, seed=1)
    pd.DataFrame({"x1": Xq[:, 0], "x2": Xq[:, 1]}).to_csv(d / "query.csv", index=False)
    pd.DataFrame({"x2": Xq[:, 1], "y": NAMES[yq], "x1": Xq[:, 0]}).to_csv(
        d / "test.csv", index=False
    )
    return d, X, y, y_true, Xq, yq


def _run(argv, capsys):
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.fixture(scope="module")
def model(files):
    d = files[0]
    path = d / "model"
    assert (
        main(
            [
                "fit",
                str(d / "data.csv"),
                "--label-column",
                "y",
                "-o",
                str(path),
                "--graph-weight",
                "heat",
                "--gamma-a",
                "1e-4",
            ]
        )
        == 0
    )
    return path


def test_fit_matches_python_api_and_keeps_class_names(files, model):
    from semisvm import LapSVM

    d, X, y, y_true, Xq, yq = files
    bundle = load_model(model)
    assert list(bundle["classes"]) == list(NAMES)
    assert bundle["feature_names"] == ["x1", "x2"] and bundle["label_name"] == "y"
    ref = LapSVM(graph_weight="heat", gamma_a=1e-4).fit(X, y)
    est = bundle["estimator"]
    np.testing.assert_allclose(
        est.decision_function(Xq), ref.decision_function(Xq), rtol=1e-10, atol=1e-12
    )


def test_predict_writes_class_names_back(files, model, capsys, tmp_path):
    d, X, y, y_true, Xq, yq = files
    out = tmp_path / "pred.csv"
    rc, _, err = _run(
        ["predict", model, d / "query.csv", "-o", out, "--batch-size", "7"], capsys
    )
    assert rc == 0, err
    df = pd.read_csv(out)
    assert list(df.columns) == ["prediction", "score"]
    assert set(df["prediction"]) <= set(NAMES) and len(df) == len(yq)
    est = load_model(model)["estimator"]
    np.testing.assert_array_equal(df["prediction"].to_numpy(), NAMES[est.predict(Xq)])
    np.testing.assert_allclose(
        df["score"], est.decision_function(Xq), rtol=1e-5, atol=1e-6
    )


def test_predict_proba_columns(files, model, capsys, tmp_path):
    d, X, y, y_true, Xq, yq = files
    out = tmp_path / "proba.csv"
    rc, _, err = _run(["predict", model, d / "query.csv", "-o", out, "--proba"], capsys)
    assert rc == 0, err
    df = pd.read_csv(out)
    cols = [f"proba_{c}" for c in NAMES]
    assert set(cols) <= set(df.columns)
    est = load_model(model)["estimator"]
    np.testing.assert_allclose(
        df[cols].to_numpy(), est.predict_proba(Xq), rtol=1e-5, atol=1e-6
    )
    np.testing.assert_allclose(df[cols].sum(axis=1), 1.0, atol=1e-6)


def test_predict_reorders_named_columns_and_reports_accuracy(files, model, capsys):
    d, X, y, y_true, Xq, yq = files
    rc, out, err = _run(["predict", model, d / "test.csv"], capsys)
    assert rc == 0, err
    rows = list(csv.DictReader(out.splitlines()))
    est = load_model(model)["estimator"]
    pred = NAMES[est.predict(Xq)]
    assert [r["prediction"] for r in rows] == list(pred)
    acc = np.mean(pred == NAMES[yq])
    assert f"{100 * acc:.2f}%" in err


def test_predict_headerless_label_first(tmp_path, capsys):
    """A model trained with the label in column 0 drops column 0 of a query too."""
    X, y, y_true = _moons()
    np.savetxt(tmp_path / "train.csv", np.c_[y, X], delimiter=",", fmt="%.17g")
    np.savetxt(tmp_path / "test.csv", np.c_[y_true, X], delimiter=",", fmt="%.17g")
    m = tmp_path / "m"
    assert (
        _run(["fit", tmp_path / "train.csv", "--label-column", "0", "-o", m], capsys)[0]
        == 0
    )
    rc, out, err = _run(["score", m, tmp_path / "test.csv", "--json"], capsys)
    est = load_model(m)["estimator"]
    assert rc == 0 and json.loads(out)["accuracy"] == pytest.approx(
        np.mean(est.predict(X) == y_true)
    )


def test_score_and_json(files, model, capsys):
    d, X, y, y_true, Xq, yq = files
    rc, out, err = _run(["score", model, d / "test.csv", "--json"], capsys)
    assert rc == 0, err
    res = json.loads(out)
    est = load_model(model)["estimator"]
    assert res["accuracy"] == pytest.approx(np.mean(est.predict(Xq) == yq))
    assert res["n_labeled"] == len(yq)
    rc, out, err = _run(
        [
            "fit",
            d / "data.csv",
            "--label-column",
            "y",
            "-o",
            d / "m2",
            "--json",
            "--max-iter",
            "5",
        ],
        capsys,
    )
    res = json.loads(out)
    assert rc == 0 and res["classes"] == list(NAMES) and res["n_labeled"] == 6
    assert res["n_unlabeled"] == 114 and res["params"]["max_iter"] == 5


def test_predict_json_without_output(files, model, capsys):
    d = files[0]
    rc, out, _ = _run(["predict", model, d / "query.csv", "--json"], capsys)
    assert rc == 0 and len(json.loads(out)["predictions"]) == 80


@pytest.mark.parametrize(
    "kind",
    [
        "tsv-no-header",
        "semicolon",
        "parquet",
        "npz",
        "pandas-index",
        "svmlight",
        "label-first-index",
        "question-mark",
        "joblib",
    ],
)
def test_formats_and_markers(files, tmp_path, capsys, kind):
    """The same data in other layouts gives the same model as the Python API."""
    from semisvm import LapSVM

    _, X, y, y_true, Xq, _ = files
    yl = np.where(y == -1, -1, y + 3)  # classes 3 and 4
    extra: list[str] = []
    if kind == "tsv-no-header":
        f = tmp_path / "d.tsv"
        np.savetxt(f, np.c_[X, yl], delimiter="\t", fmt="%.17g")
    elif kind == "semicolon":
        f = tmp_path / "d.csv"
        pd.DataFrame(
            {"a": X[:, 0], "b": X[:, 1], "lab": np.where(yl == -1, "", yl.astype(str))}
        ).to_csv(f, sep=";", index=False)
        extra = ["--label-column", "lab"]
    elif kind == "parquet":
        pytest.importorskip("pyarrow")
        f = tmp_path / "d.parquet"
        pd.DataFrame(
            {"a": X[:, 0], "b": X[:, 1], "y": np.where(yl == -1, None, yl.astype(str))}
        ).to_parquet(f)
        extra = ["--label-column", "y"]
    elif kind == "npz":
        f = tmp_path / "d.npz"
        np.savez(f, X=X, y=yl)
    elif kind == "pandas-index":  # to_csv() with its index: not a feature
        f = tmp_path / "d.csv"
        pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "y": yl}).to_csv(f)
    elif kind == "svmlight":
        from sklearn.datasets import dump_svmlight_file

        f = tmp_path / "d.svm"
        dump_svmlight_file(X, yl, str(f))
    elif kind == "label-first-index":
        f = tmp_path / "d.csv"
        np.savetxt(f, np.c_[yl, X], delimiter=",", fmt="%.17g")
        extra = ["--label-column", "0"]
    elif kind == "question-mark":
        f = tmp_path / "d.csv"
        pd.DataFrame(
            {"a": X[:, 0], "b": X[:, 1], "y": np.where(yl == -1, "?", yl.astype(str))}
        ).to_csv(f, index=False)
        extra = ["--unlabeled", "?"]
    else:
        f = tmp_path / "d.npz"
        np.savez(f, X=X, y=yl)
        extra = ["--model-format", "joblib"]
    m = tmp_path / "m"
    rc, out, err = _run(["fit", f, "-o", m, *extra], capsys)
    assert rc == 0, err
    assert "6 labeled, 114 unlabeled, 2 classes: 3, 4" in out
    assert (kind == "joblib") != zipfile.is_zipfile(m)
    est = load_model(m)["estimator"]
    if kind == "svmlight":  # the same sparse matrix the command line read
        from sklearn.datasets import load_svmlight_file

        X = load_svmlight_file(str(f))[0]
    ref = LapSVM().fit(X, y)
    np.testing.assert_allclose(
        est.decision_function(Xq), ref.decision_function(Xq), rtol=1e-8, atol=1e-10
    )


def _bad_files(d: Path, model: Path) -> list[tuple[list[str], str]]:
    """(arguments, text the one-line error must contain) for malformed inputs."""
    X, y, _ = _moons(40, 2)
    ok = d / "ok.csv"
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "y": np.where(y == -1, "", y)}).to_csv(
        ok, index=False
    )
    (d / "ragged.csv").write_text("a,b,y\n1,2,0\n3,4,1,9\n5,6,\n")
    (d / "short.csv").write_text("a,b,y\n1,2,0\n3,4\n5,6,1\n")
    (d / "nan.csv").write_text("a,b,y\n1,2,0\n3,nan,1\n5,6,\n")
    (d / "text.csv").write_text("a,b,y\n1,2,0\n3,abc,1\n5,6,\n")
    (d / "nanq.csv").write_text("x1,x2,y\n1,2,0\n3,nan,1\n5,6,\n")
    (d / "one.csv").write_text("a,b,y\n1,2,0\n3,4,0\n5,6,\n")
    (d / "none.csv").write_text("a,b,y\n1,2,\n3,4,-1\n5,6,\n")
    (d / "unl.csv").write_text("x1,x2,y\n1,2,\n3,4,-1\n")
    (d / "blank.csv").write_text("")
    (d / "semi.csv").write_text("a;b;y\n1;2;0\n3;4;1\n")
    (d / "notmodel").write_bytes(b"\x00\x01garbage not a pickle")
    (d / "empty.npz").write_bytes(b"")
    import joblib

    joblib.dump(
        {
            "format": "semisvm-cli-model",
            "format_version": 2,
            "semisvm_version": "0.0.1",
            "estimator": None,
        },
        d / "old_model",
    )
    joblib.dump({"something": "else"}, d / "foreign_pickle")
    joblib.dump({"format": "semisvm-cli-model-1", "estimator": None}, d / "v1_model")
    return [
        (["fit", d / "ragged.csv"], "ragged.csv: ragged rows"),
        (["fit", d / "short.csv"], "short.csv: ragged rows: line 3"),
        (["fit", d / "nan.csv"], "nan.csv: feature column 'b', line 3"),
        (["fit", d / "text.csv"], "text.csv: feature column 'b', line 3: 'abc'"),
        (
            ["fit", ok, "--label-column", "label"],
            "no label column 'label' (columns: a, b, y)",
        ),
        (["fit", ok, "--label-column", "7"], "--label-column 7 is out of range"),
        (["fit", d / "one.csv"], "one.csv: the labeled rows hold only one class ('0')"),
        (["fit", d / "none.csv"], "none.csv: no labeled rows"),
        (["fit", ok, "--no-default-unlabeled"], "ok.csv: empty label cell(s) at lines"),
        (["fit", d / "blank.csv"], "blank.csv: the file is empty"),
        (
            ["fit", d / "semi.csv", "--delimiter", ","],
            "no feature column left (wrong delimiter",
        ),
        (["fit", d / "missing.csv"], "'" + str(d / "missing.csv") + "' not found"),
        (["fit", d / "empty.npz"], "empty.npz: not a readable npz file"),
        (["fit", ok, "--max-iter", "0"], "option --max-iter must be an int"),
        (["fit", ok, "--solver", "magic"], "option --solver must be one of"),
        (
            ["fit", ok, "--sigma", "-1"],
            "option --sigma must be None or a float in the range (0, inf)",
        ),
        (["fit", ok, "--sigma", "1", "--gamma", "2"], "either --sigma or --gamma"),
        (["fit", ok, "--header", "maybe"], "argument --header: invalid choice"),
        (
            ["predict", d / "notmodel", ok],
            "notmodel: not a model written by 'semisvm fit'",
        ),
        (
            ["predict", d / "foreign_pickle", ok],
            "foreign_pickle: not a model written by",
        ),
        (["predict", d / "old_model", ok], "written by semisvm 0.0.1, this is semisvm"),
        (
            ["predict", d / "v1_model", ok],
            "v1_model: model file layout 1 is from another",
        ),
        (["predict", ok, ok], "ok.csv: not a model written by 'semisvm fit'"),
        (["predict", model, d / "nanq.csv"], "nanq.csv: feature column 'x2', line 3"),
        (
            ["predict", model, d / "semi.csv", "--delimiter", ","],
            "semi.csv: found 1 column(s), expected 2 feature column(s) (or 3 with a label",
        ),
        (
            ["predict", model, ok, "--batch-size", "0"],
            "option --batch-size must be an int",
        ),
        (["score", model, d / "unl.csv"], "unl.csv: no labeled rows to score"),
        (
            ["predict", model, d / "none.csv"],
            "none.csv: missing feature column(s) the model was trained on: x1, x2",
        ),
    ]


def test_bad_inputs_give_one_line_naming_the_culprit(tmp_path, model, capsys):
    for argv, expected in _bad_files(tmp_path, model):
        rc, out, err = _run(argv, capsys)
        assert rc in (1, 2), (argv, rc, out, err)
        lines = err.strip().splitlines()
        assert len(lines) == 1, (argv, err)
        assert "Traceback" not in err and expected in lines[0], (
            argv,
            lines[0],
            expected,
        )


def test_version_help_and_info(capsys):
    rc, out, _ = _run(["--version"], capsys)
    assert rc == 0 and out.strip() == f"semisvm {__version__}"
    rc, out, _ = _run(["info", "--json"], capsys)
    assert rc == 0 and json.loads(out)["version"] == __version__
    opts = estimator_options()
    assert {"gamma_a", "gamma_i", "n_neighbors", "solver"} <= set(opts)
    help_text = (
        build_parser()._subparsers._group_actions[0].choices["fit"].format_help()
    )
    for opt in opts.values():  # every estimator parameter has a documented option
        assert opt["flag"] in help_text
    assert "Intrinsic (graph) regularisation weight" in " ".join(help_text.split())


def test_info_describes_a_model(model, capsys):
    rc, out, _ = _run(["info", model, "--json"], capsys)
    res = json.loads(out)
    assert rc == 0 and res["classes"] == list(NAMES) and res["estimator"] == "LapSVM"


@pytest.mark.slow
def test_console_script_entry_point():
    """``python -m semisvm.cli`` behaves as the installed command."""
    proc = subprocess.run(
        [sys.executable, "-m", "semisvm.cli", "--version"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0 and proc.stdout.strip() == f"semisvm {__version__}"


def _bad_inputs_table(tmp_path, model, capsys) -> str:
    """The docs' table of bad inputs and their messages, from ``_bad_files``."""
    rows = []
    for argv, _ in _bad_files(tmp_path, model):
        rc, out, err = _run(argv, capsys)
        msg = err.strip().splitlines()[0]
        args = [Path(a).name if isinstance(a, Path) else str(a) for a in argv]
        for p in (str(tmp_path) + "/", str(model.parent) + "/"):
            msg = msg.replace(p, "")
        msg = msg.replace(str(tmp_path), "DIR").replace(str(model.parent), "DIR")
        cmd = " ".join(f"'{a}'" if (" " in a or not a) else a for a in args)
        rows.append(f"   * - ``semisvm {cmd}``\n     - ``{msg}``")
    head = (
        ".. This table is generated by tests/test_cli.py::test_docs_table_of_bad_inputs\n"
        ".. (SEMISVM_UPDATE_DOCS=1 python -m pytest tests/test_cli.py -k docs_table).\n\n"
        "Bad input and the message it gets\n"
        "---------------------------------\n\n"
        "Every malformed input tried by the test suite, and the one line the command\n"
        "prints (exit status 1, or 2 for a bad option):\n\n"
        ".. list-table::\n   :header-rows: 1\n   :widths: 40 60\n\n"
        "   * - command\n     - message\n"
    )
    return head + "\n".join(rows) + "\n"


def test_docs_table_of_bad_inputs(tmp_path, model, capsys):
    import os

    doc = Path(__file__).resolve().parents[1] / "docs" / "cli_errors.rst"
    text = _bad_inputs_table(tmp_path, model, capsys)
    if os.environ.get("SEMISVM_UPDATE_DOCS"):
        doc.write_text(text)
    assert doc.exists() and doc.read_text() == text, (
        "docs/cli_errors.rst is out of date: regenerate it with "
        "SEMISVM_UPDATE_DOCS=1 python -m pytest tests/test_cli.py -k docs_table"
    )


@pytest.mark.parametrize("command", ["predict", "score"])
def test_query_columns_by_name_extra_columns_ignored(
    files, model, capsys, tmp_path, command
):
    """Issue 33.3: a model trained on x1,x2 takes them by name from id,x2,x1(,y) and
    reports the columns it ignores; a headerless file goes by position and a wrong
    count names the expected and found counts."""
    d, X, y, y_true, Xq, yq = files
    est = load_model(model)["estimator"]
    q = tmp_path / "q.csv"
    pd.DataFrame(
        {
            "id": [f"row-{i}" for i in range(len(yq))],
            "x2": Xq[:, 1],
            "note": "text",
            "x1": Xq[:, 0],
            "y": NAMES[yq],
        }
    ).to_csv(q, index=False)
    rc, out, err = _run([command, model, q, "--json"], capsys)
    assert rc == 0, err
    assert "ignoring column(s) the model does not use: id, note" in err
    res = json.loads(out)
    if command == "predict":
        assert res["predictions"] == list(NAMES[est.predict(Xq)])
    assert res["accuracy"] == pytest.approx(np.mean(est.predict(Xq) == yq))
    assert res["n_labeled"] == len(yq)
    # no header: by position, with the counts in the error when they differ
    bare = tmp_path / "bare.csv"
    np.savetxt(bare, np.c_[np.arange(len(yq)), Xq, yq, yq], delimiter=",", fmt="%.17g")
    rc, out, err = _run([command, model, bare], capsys)
    assert rc == 1
    assert "found 5 column(s), expected 2 feature column(s)" in err, err
    assert "by position" in err and "x1, x2" in err
    pd.DataFrame({"a": Xq[:, 0], "b": Xq[:, 1], "c": NAMES[yq]}).to_csv(
        bare, header=False, index=False
    )
    rc, out, err = _run(
        [command, model, bare, "--label-column", "last", "--json"], capsys
    )
    assert rc == 0, err
    assert json.loads(out)["accuracy"] == pytest.approx(np.mean(est.predict(Xq) == yq))
