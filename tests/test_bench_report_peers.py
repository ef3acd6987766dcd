"""The peers the benchmark scripts run next to semisvm's estimators, in the same
run (``benchmarks/tsvm/bench_exact_small.py``: ``SVC`` and ``LapSVM``;
``benchmarks/scale/bench_scale.py``: ``svc`` and ``poisson``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks" / "tsvm"))
sys.path.insert(0, str(ROOT / "benchmarks"))
import bench_exact_small as T  # noqa: E402


@pytest.mark.parametrize("method", T.PEERS)
def test_exact_small_peer_rows(method):
    name, X, y, yt, params = T.problems("moons-100")[0]
    wall, cpu, clf, err = T.run_one(X, y, yt, params, method, time_limit=10)
    assert name == "moons-100" and clf is None
    assert wall >= 0 and cpu >= 0 and 0.0 <= err <= 1.0
    assert T.certificate(clf) == dict(
        certified="", gap="", objective="", lower_bound="", nodes=""
    )


@pytest.mark.parametrize("method", ["svc", "poisson"])
def test_scale_peer_configuration(method):
    if method == "poisson":
        pytest.importorskip("graphlearning")
    out = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "scale" / "bench_scale.py"),
            "--data",
            "moons",
            "--n",
            "600",
            "--labels",
            "10",
            "--methods",
            method,
            "--no-save",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    row = json.loads(out.stdout.splitlines()[0])
    assert row["name"] == method and "error" not in row
    assert 0.5 <= row["accuracy"] <= 1.0 and np.isfinite(row["t_total"])
