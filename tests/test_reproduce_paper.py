"""The reproduction stays within the paper's spread (Melacci & Belkin 2011, Tables 4 and 7).

Runs the paper's protocol (``semisvm.experiments.run_reproduction``, the code behind
``semisvm reproduce``) on G50C and USPST(B) and fails when a reproduced error cell
(mean over the splits, on U, V or T) leaves the paper's mean +- std.

All 12 splits are used: the paper's std is the spread of single splits, so the mean
of two splits leaves that band by chance (with the code of this commit the first two
USPST(B) splits put 18 of 27 cells outside while the 12-split means put none there).
G50C's RLSC on V is the one documented exception (15.2% against 10.2 +- 4.9 over a
50-point V set; see reproduce/melacci2011/notes_g50c.md).

Skipped only when the benchmark data directory is absent.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from semisvm.experiments._paper_tables import TABLE4, TABLE7
from semisvm.experiments._reproduce import run_reproduction

REPO = Path(__file__).resolve().parents[1]


def _data_dir() -> Path | None:
    for cand in (os.environ.get("SEMISVM_DATA"), REPO / ".." / "shared" / "data"):
        if (
            cand
            and (Path(cand) / "g50c.npz").is_file()
            and (Path(cand) / "uspst.npz").is_file()
        ):
            return Path(cand)
    return None


DATA = _data_dir()

#: (data set, classifier, set) cells known to lie outside, with the reason in the notes.
KNOWN_OUTSIDE = {("g50c", "rlsc", "V")}


@pytest.mark.slow
@pytest.mark.data
@pytest.mark.skipif(DATA is None, reason="benchmark data directory missing")
@pytest.mark.parametrize("dataset", ["g50c", "uspst_b"])
def test_reproduced_errors_within_paper_std(dataset):
    res = run_reproduction(
        dataset, data_dir=DATA, n_splits=12, figures=False, progress=False, out_dir=None
    )
    summary = {(r["dataset"], r["classifier"]): r for r in res.summary}
    checked, outside = 0, []
    for table in (TABLE4, TABLE7):
        for clf, cells in table[dataset].items():
            row = summary[(dataset, clf)]
            assert row["n_splits"] == 12
            for s in ("U", "V", "T"):
                ours = row[f"err_{s}"][0]
                mean, std = cells[s]
                assert np.isfinite(ours), (clf, s)
                checked += 1
                inside = abs(ours - mean) <= std
                if (dataset, clf, s) in KNOWN_OUTSIDE:
                    continue
                if not inside:
                    outside.append(f"{clf} {s}: {ours:.2f} vs {mean} +- {std}")
    assert checked == 3 * (len(TABLE4[dataset]) + len(TABLE7[dataset]))
    assert not outside, outside


def _coil_data() -> Path | None:
    return DATA if DATA is not None and (DATA / "coil20.npz").is_file() else None


@pytest.mark.slow
@pytest.mark.data
@pytest.mark.skipif(_coil_data() is None, reason="COIL20 data file missing")
def test_coil20_dual_and_newton_agree_and_per_class_times():
    # issue 22: the dual used to err 34% on U where Newton erred 19% (LIBSVM's
    # equality constraint of the bias, then b dropped: a different model from
    # Newton's b = 0); the bias-free dual solves Newton's model with the hinge
    # loss, so the two stay within 2 points on the 20-class set.  The same run
    # times the Table 3 solvers one class at a time (the authors' protocol).
    res = run_reproduction(
        "coil20",
        data_dir=DATA,
        n_splits=2,  # dual 17.5 / Newton 18.4% (the bug: 34 vs 19%)
        figures=False,
        progress=False,
        classifiers=["dual", "newton", "pcg_mixed"],
    )
    summary = {r["classifier"]: r for r in res.summary}
    dual, newton = summary["dual"]["err_U"][0], summary["newton"]["err_U"][0]
    assert abs(dual - newton) <= 2.0, (dual, newton)
    # both far below the supervised error on this set (~30%): the graph is used
    assert max(dual, newton) < 25.0
    for clf in ("dual", "newton", "pcg_mixed"):
        t = summary[clf]["time_per_class"][0]
        assert np.isfinite(t) and t > 0, clf
    from semisvm.experiments._reproduce import build_tables

    md = "\n".join(build_tables(res.summary)["table3"]["md"])
    assert "COIL20, one class at a time" in md
