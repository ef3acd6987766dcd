"""Write tests/data/problem_reference.npz: decision values of every estimator that
prepares its problem through ``semisvm.models._problem`` (issue 29 point 3).

Computed once on the code *before* the estimators moved onto the shared
preparation and prediction-kernel path; ``tests/test_problem.py`` checks that the
numbers did not move.  Run from the repository root::

    PYTHONPATH=src python tests/data/make_problem_reference.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from _problem_cases import CASES  # noqa: E402

if __name__ == "__main__":
    out = {}
    for name, fn in CASES.items():
        for key, value in fn().items():
            out[f"{name}__{key}"] = np.asarray(value)
    np.savez_compressed(HERE / "problem_reference.npz", **out)
    print(f"{len(out)} arrays -> {HERE / 'problem_reference.npz'}")
