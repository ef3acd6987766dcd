"""What a newcomer hits on the command line (issue 24): each test failed before its fix.

These run the installed ``semisvm`` command (or ``python -m semisvm.cli`` when the
console script is not on PATH) on files in a temporary directory.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from semisvm import LapSVM
from semisvm.cli import build_parser
from semisvm.datasets import make_two_moons

pd = pytest.importorskip("pandas")


def _cmd() -> list[str]:
    exe = shutil.which("semisvm")
    return [exe] if exe else [sys.executable, "-m", "semisvm.cli"]


def run(*args, cwd: Path) -> subprocess.CompletedProcess:
    """Run ``semisvm *args`` in this process (``main`` with its streams captured).

    The command's behaviour is all in ``semisvm.cli.main``; a new interpreter per
    call only re-imports scikit-learn (about 2 s each). The installed command
    itself is run once, in ``test_the_installed_command_is_the_same_program``.
    """
    from semisvm.cli import main

    argv = [str(a) for a in args]
    out, err = io.StringIO(), io.StringIO()
    old = Path.cwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = main(argv)
    finally:
        os.chdir(old)
    return subprocess.CompletedProcess(argv, rc, out.getvalue(), err.getvalue())


def run_installed(*args, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*_cmd(), *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )


def _animals(d: Path, unlabeled: str = "?", n: int = 120) -> Path:
    X, y, _ = make_two_moons(n, n_labeled_per_class=4, random_state=0)
    names = np.array(["cat", "dog"], dtype=object)
    lab = np.where(y == -1, unlabeled, names[np.maximum(y, 0)])
    path = d / "animals.csv"
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "animal": lab}).to_csv(path, index=False)
    return path


@pytest.mark.parametrize("marker", ["?", "unknown", "NA"])
def test_common_unlabeled_markers_are_not_classes(tmp_path, marker):
    data = _animals(tmp_path, marker)
    p = run(
        "fit",
        data,
        "--label-column",
        "animal",
        "-o",
        tmp_path / "m",
        "--json",
        cwd=tmp_path,
    )
    assert p.returncode == 0, p.stderr
    res = json.loads(p.stdout)
    assert res["classes"] == ["cat", "dog"]
    assert res["n_labeled"] == 8
    # score without --unlabeled uses the markers stored in the model
    p = run(
        "score",
        tmp_path / "m.skops" if (tmp_path / "m.skops").exists() else tmp_path / "m",
        data,
        "--label-column",
        "animal",
        "--json",
        cwd=tmp_path,
    )
    assert p.returncode == 0, p.stderr
    res = json.loads(p.stdout)
    assert res["n_labeled"] == 8 and res["accuracy"] == 1.0


def _model_file(d: Path) -> Path:
    hits = sorted(d.glob("m*"))
    assert hits, list(d.iterdir())
    return hits[0]


def test_a_dominant_unknown_marker_is_refused(tmp_path):
    X, y, _ = make_two_moons(100, n_labeled_per_class=3, random_state=0)
    names = np.array(["cat", "dog", "emu"], dtype=object)
    lab = np.where(y == -1, "missing", names[np.arange(y.size) % 3])
    data = tmp_path / "d.csv"
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "label": lab}).to_csv(data, index=False)
    p = run("fit", data, "-o", tmp_path / "m", cwd=tmp_path)
    assert p.returncode == 1
    assert "'missing'" in p.stderr and "--unlabeled" in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1
    p = run("fit", data, "-o", tmp_path / "m", "--unlabeled", "missing", cwd=tmp_path)
    assert p.returncode == 0, p.stderr


def test_failed_predict_keeps_the_existing_output_file(tmp_path):
    data = _animals(tmp_path)
    assert run("fit", data, "-o", tmp_path / "m", cwd=tmp_path).returncode == 0
    model = _model_file(tmp_path)
    out = tmp_path / "preds.csv"
    out.write_text("precious,results\n1,2\n")
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n3,oops\n")
    p = run("predict", model, bad, "-o", out, cwd=tmp_path)
    assert p.returncode == 1 and "oops" in p.stderr
    assert out.read_text() == "precious,results\n1,2\n"
    assert not list(tmp_path.glob(".semisvm-*"))  # no temporary file left behind
    good = tmp_path / "good.csv"
    pd.DataFrame({"a": [0.0, 1.0], "b": [0.5, -0.5]}).to_csv(good, index=False)
    p = run("predict", model, good, "-o", out, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert pd.read_csv(out)["prediction"].tolist()[0] in ("cat", "dog")


def test_parquet_predict_and_score_find_the_label_and_write_parquet(tmp_path):
    pytest.importorskip("pyarrow")
    X, y, yt = make_two_moons(120, n_labeled_per_class=4, random_state=0)
    names = np.array(["cat", "dog"], dtype=object)
    df = pd.DataFrame(
        {
            "a": X[:, 0],
            "b": X[:, 1],
            "animal": np.where(y == -1, None, names[np.maximum(y, 0)]),
        }
    )
    df.to_parquet(tmp_path / "train.parquet")
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "animal": names[yt]}).to_parquet(
        tmp_path / "test.parquet"
    )
    p = run(
        "fit",
        tmp_path / "train.parquet",
        "--label-column",
        "animal",
        "-o",
        tmp_path / "m",
        cwd=tmp_path,
    )
    assert p.returncode == 0, p.stderr
    model = _model_file(tmp_path)
    p = run("score", model, tmp_path / "test.parquet", "--json", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["n_labeled"] == 120
    p = run(
        "predict",
        model,
        tmp_path / "test.parquet",
        "-o",
        tmp_path / "p.parquet",
        cwd=tmp_path,
    )
    assert p.returncode == 0, p.stderr
    out = pd.read_parquet(tmp_path / "p.parquet")  # a real Parquet file, not CSV text
    assert len(out) == 120 and set(out["prediction"]) <= {"cat", "dog"}


def test_fit_finds_a_label_column_by_name(tmp_path):
    # 'auto' in fit as in predict: a column named label/y/class/target, else the last
    X, y, _ = make_two_moons(80, n_labeled_per_class=3, random_state=0)
    data = tmp_path / "first.csv"
    pd.DataFrame(
        {"label": np.where(y == -1, "", y.astype(str)), "a": X[:, 0], "b": X[:, 1]}
    ).to_csv(data, index=False)
    p = run("fit", data, "-o", tmp_path / "m", "--json", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["n_features"] == 2


def test_memory_refusal_reaches_the_user_intact(tmp_path, monkeypatch, capsys):
    from semisvm.cli import main

    data = _animals(tmp_path)

    def refuse(self, X, y, **kw):
        raise MemoryError("the dense kernel needs 298 GiB; streamed needs 682 MiB")

    monkeypatch.setattr(LapSVM, "fit", refuse)
    rc = main(["fit", str(data), "-o", str(tmp_path / "m")])
    err = capsys.readouterr().err
    assert rc == 1 and "298 GiB" in err and "682 MiB" in err


def test_help_has_no_broken_math_and_self_contained_options():
    text = build_parser()._subparsers._group_actions[0].choices["fit"].format_help()
    flat = " ".join(text.split())
    for broken in ("Lmathbf", "Kalpha", "approxPhi", "sqrt nln", "bmathbf", "ldots"):
        assert broken not in flat, broken
    loss = flat.split("--loss LOSS")[1].split("--kernel-approximation")[0]
    assert "hold out validation" not in loss
    reg = flat.split("--regularization REGULARIZATION")[1].split("--class-weight")[0]
    assert "see above" not in reg


def test_fit_summary_and_verbose_progress(tmp_path):
    from sklearn.datasets import load_iris

    X, yt = load_iris(return_X_y=True)
    y = np.full(yt.size, -1)
    y[::10] = yt[::10]
    data = tmp_path / "iris.csv"
    pd.DataFrame(
        {"a": X[:, 0], "b": X[:, 1], "c": X[:, 2], "d": X[:, 3], "y": y}
    ).to_csv(data, index=False)
    p = run(
        "fit",
        data,
        "-o",
        tmp_path / "m",
        "-v",
        "--gamma-a",
        "1e-6",
        "--gamma-i",
        "1",
        cwd=tmp_path,
    )
    assert p.returncode == 0, p.stderr
    summary = [ln for ln in p.stdout.splitlines() if ln.startswith("Trained")][0]
    assert "[" not in summary and "stopped by" in summary  # no raw Python lists
    assert "kernel" in p.stderr and "graph" in p.stderr  # the estimator's stages


def test_api_messages_name_the_problem():
    X, y, _ = make_two_moons(60, n_labeled_per_class=3, random_state=0)
    df = pd.DataFrame({"a": X[:, 0], "colour": ["red"] * 60})
    with pytest.raises(ValueError, match="non-numeric column.*'colour'"):
        LapSVM().fit(df, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = LapSVM().fit(X, y)
    Xn = X.copy()
    Xn[5, 1] = np.nan
    with pytest.raises(ValueError, match="row 5, column 1") as info:
        est.predict(Xn)
    assert "before fitting" not in str(info.value)
    # strings with the integer -1 for unlabeled points, as SelfTrainingClassifier
    ys = np.array(
        ["cat" if v == 0 else "dog" if v == 1 else -1 for v in y], dtype=object
    )
    est = LapSVM().fit(X, ys)
    assert set(est.classes_) == {"cat", "dog"}


# --------------------------------------------------------------- issue 33
def _iris_file(d: Path, name: str = "iris.csv") -> Path:
    """Iris with class names 3, 4, 5 and every 10th row labeled (blank = unlabeled)."""
    from sklearn.datasets import load_iris

    X, yt = load_iris(return_X_y=True)
    y = np.full(yt.size, "", dtype=object)
    y[::10] = (yt[::10] + 3).astype(str)
    path = d / name
    pd.DataFrame(
        {"a": X[:, 0], "b": X[:, 1], "c": X[:, 2], "d": X[:, 3], "y": y}
    ).to_csv(path, index=False)
    return path


def test_memory_refusal_keeps_its_advice_lines(tmp_path, monkeypatch, capsys):
    """Issue 33.6: the whole refusal reaches the user, not its first line."""
    import semisvm._memory as mem
    from semisvm._memory import MemoryPlan
    from semisvm.cli import main

    data = _animals(tmp_path)
    monkeypatch.setattr(mem, "available_memory", lambda: 2**20)

    def refuse(self, X, y, **kw):
        MemoryPlan("LapSVM fit, dense kernel").add(
            "kernel matrix K (200000 x 200000 float64)", 3.2e11
        ).check(
            "Use kernel_approximation='streamed' (exact, K never stored) or "
            "'nystroem' (low rank)."
        )

    monkeypatch.setattr(LapSVM, "fit", refuse)
    rc = main(["fit", str(data), "-o", str(tmp_path / "m")])
    err = capsys.readouterr().err
    assert rc == 1
    assert "kernel matrix K (200000 x 200000 float64)" in err  # the second line
    assert "streamed" in err and "nystroem" in err  # the advice, last line


def test_fit_warnings_print_class_names_and_true_advice(tmp_path):
    """Issue 33.6: classes printed plainly (no np.int64(...)), and no advice to raise
    max_iter while early stopping is on."""
    data = _iris_file(tmp_path)
    p = run("fit", data, "-o", tmp_path / "m", "--max-iter", "3", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "max_iter=3" in p.stderr  # the convergence warning is shown
    assert "np.int" not in p.stderr and "(classes 3, 4, 5)" in p.stderr
    assert "Increase max_iter" not in p.stderr and "'auto'" not in p.stderr
    assert "--stability-tol" in p.stderr
    # without early stopping, raising max_iter is the right advice and stays
    p = run(
        "fit",
        data,
        "-o",
        tmp_path / "m",
        "--max-iter",
        "3",
        "--early-stopping",
        "none",
        cwd=tmp_path,
    )
    assert p.returncode == 0, p.stderr
    assert "Increase max_iter" in p.stderr and "np.int" not in p.stderr


def _blank_and_question(d: Path) -> tuple[Path, Path, int]:
    """Training file whose unlabeled rows are blank or '?'; a test file with blanks."""
    X, y, yt = make_two_moons(120, n_labeled_per_class=4, random_state=0)
    names = np.array(["cat", "dog"], dtype=object)
    lab = np.where(
        y == -1, np.where(np.arange(y.size) % 2 == 0, "", "?"), names[np.maximum(y, 0)]
    )
    train = d / "train.csv"
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "animal": lab}).to_csv(train, index=False)
    truth = names[yt].astype(object)
    truth[::3] = ""  # empty cells: unlabeled rows, never a class to score against
    test = d / "test.csv"
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "animal": truth}).to_csv(
        test, index=False
    )
    return train, test, int((truth != "").sum())


@pytest.mark.parametrize("command", ["fit", "predict", "score"])
def test_unlabeled_markers_add_to_the_defaults(tmp_path, command):
    """Issue 33.2: --unlabeled '?' adds to the defaults: an empty cell stays unlabeled,
    and with --no-default-unlabeled an empty label is an error naming the rows."""
    train, test, n_filled = _blank_and_question(tmp_path)
    model = tmp_path / "m.joblib"
    p = run(
        "fit",
        train,
        "--label-column",
        "animal",
        "--unlabeled",
        "?",
        "-o",
        model,
        "--model-format",
        "joblib",
        "--json",
        cwd=tmp_path,
    )
    assert p.returncode == 0, p.stderr
    res = json.loads(p.stdout)
    assert res["classes"] == ["cat", "dog"] and res["n_labeled"] == 8
    if command == "fit":
        p = run(
            "fit",
            train,
            "--label-column",
            "animal",
            "--no-default-unlabeled",
            "--unlabeled",
            "?",
            "-o",
            tmp_path / "m2",
            cwd=tmp_path,
        )
        # data line 1 is row 0 (even: blank unless labeled), after the header line
        first_blank = 2 + next(
            i
            for i, v in enumerate(pd.read_csv(train, keep_default_na=False)["animal"])
            if v == ""
        )
    else:
        extra = ["--label-column", "animal"] if command == "predict" else []
        p = run(
            command, model, test, "--unlabeled", "?", "--json", *extra, cwd=tmp_path
        )
        assert p.returncode == 0, p.stderr
        res = json.loads(p.stdout)
        assert res["n_labeled"] == n_filled and res["accuracy"] > 0.9
        p = run(
            command,
            model,
            test,
            "--no-default-unlabeled",
            "--unlabeled",
            "?",
            *extra,
            cwd=tmp_path,
        )
        first_blank = 2
    assert p.returncode == 1
    err = p.stderr.strip()
    assert "empty label" in err and "never a class" in err
    assert f"lines {first_blank}," in err, err


def test_help_says_markers_add_and_how_to_drop_them():
    sub = build_parser()._subparsers._group_actions[0].choices
    for command in ("fit", "predict", "score"):
        flat = " ".join(sub[command].format_help().split())
        assert "--no-default-unlabeled" in flat, command
        assert "added to the default markers" in flat and "never a class" in flat


@pytest.mark.slow
def test_the_installed_command_is_the_same_program(tmp_path):
    """The console script (or ``python -m semisvm.cli``) runs ``main``: the same fit
    summary on stdout as in process, and a data error on stderr with status 1."""
    data = _animals(tmp_path, "?")
    args = ("fit", data, "--label-column", "animal", "--json")
    p = run_installed(*args, "-o", tmp_path / "m", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    res = json.loads(p.stdout)
    here = json.loads(run(*args, "-o", tmp_path / "m2", cwd=tmp_path).stdout)
    assert res["classes"] == here["classes"] == ["cat", "dog"]
    assert res["n_labeled"] == here["n_labeled"] == 8
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n3,oops\n")
    p = run_installed("predict", _model_file(tmp_path), bad, cwd=tmp_path)
    assert p.returncode == 1 and "oops" in p.stderr and p.stdout == ""
