"""``--only`` of the accuracy benchmark (``benchmarks/accuracy/bench_accuracy.py``):
data set name prefixes, or whole names with ``--exact``."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks" / "accuracy"))
sys.path.insert(0, str(ROOT / "benchmarks"))
import bench_accuracy as B  # noqa: E402


def _names(argv):
    p = B.argparse.ArgumentParser()
    p.add_argument("--only", nargs="*")
    p.add_argument("--exact", action="store_true")
    args = p.parse_args(argv)
    return {
        name
        for name in ("moons-200", "moons-2000", "moons-20000", "circles-200")
        if B.selected(name, args)
    }


def test_only_prefixes_by_default():
    assert _names(["--only", "moons-200"]) == {"moons-200", "moons-2000", "moons-20000"}


def test_only_exact_names():
    assert _names(["--only", "moons-200", "circles-200", "--exact"]) == {
        "moons-200",
        "circles-200",
    }
