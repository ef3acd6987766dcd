"""One problem preparation and one prediction kernel for every estimator
(issue 29 point 3)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from _problem_cases import CASES

REFERENCE = Path(__file__).parent / "data" / "problem_reference.npz"


@pytest.fixture(scope="module")
def reference():
    with np.load(REFERENCE) as data:
        return {k: data[k] for k in data.files}


@pytest.mark.parametrize("name", sorted(CASES))
def test_numbers_did_not_move(name, reference):
    """Decision values (and K, L, targets of the reproduction) as stored from the
    code before the estimators moved onto models/_problem.py."""
    got = CASES[name]()
    for key, value in got.items():
        ref = reference[f"{name}__{key}"]
        value = np.asarray(value)
        assert value.shape == ref.shape, key
        scale = max(float(np.abs(ref).max()), 1e-300) if ref.size else 1.0
        np.testing.assert_allclose(
            value, ref, rtol=1e-6, atol=1e-9 * scale, err_msg=f"{name}: {key}"
        )
