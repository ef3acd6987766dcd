"""scikit-learn estimators."""

from ._base import OperatorCache
from ._deformed import DeformedGPKernel, SemiSupervisedKernel
from ._lapsvm import LapRLS, LapSVM
from ._options import SolverOptions
from ._path import LapSVMPath, path_error_pieces, plot_path
from ._ssk import LapSVC
from ._tsvm import ExactTSVM

__all__ = [
    "DeformedGPKernel",
    "ExactTSVM",
    "LapRLS",
    "LapSVC",
    "LapSVM",
    "LapSVMPath",
    "OperatorCache",
    "SemiSupervisedKernel",
    "SolverOptions",
    "path_error_pieces",
    "plot_path",
]
