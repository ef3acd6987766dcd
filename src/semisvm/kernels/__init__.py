"""Kernels and the operator interface the solvers use."""

from ._deformed import deformed_gram
from ._kernels import (
    KERNELS,
    check_memory,
    kernel_matrix,
    knn_gamma,
    median_gamma,
    resolve_gamma,
    row_norms_sq,
)
from ._nystroem import LANDMARK_METHODS, LowRankOperator, NystroemFactor
from ._operators import (
    DenseKernelOperator,
    SparseOperator,
    SymmetricOperator,
    as_operator,
)
from ._streamed import StreamedKernelOperator

__all__ = [
    "deformed_gram",
    "KERNELS",
    "check_memory",
    "kernel_matrix",
    "knn_gamma",
    "median_gamma",
    "resolve_gamma",
    "row_norms_sq",
    "DenseKernelOperator",
    "SparseOperator",
    "SymmetricOperator",
    "as_operator",
    "LANDMARK_METHODS",
    "LowRankOperator",
    "NystroemFactor",
    "StreamedKernelOperator",
]


def __getattr__(name: str):  # pragma: no cover - deprecation shim
    """``semisvm.kernels.SemiSupervisedKernel`` moved to :mod:`semisvm.models`."""
    if name in ("SemiSupervisedKernel", "DeformedGPKernel"):
        import importlib
        import warnings

        warnings.warn(
            f"semisvm.kernels.{name} moved to semisvm.models (and semisvm.{name} "
            "for SemiSupervisedKernel); the old path will be removed in 0.3.",
            FutureWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module("semisvm.models._deformed"), name)
    raise AttributeError(f"module 'semisvm.kernels' has no attribute {name!r}")
