"""semisvm: semi-supervised kernel classification.

Laplacian SVM (dual, primal Newton, primal PCG with early stopping), Laplacian
RLS, semi-supervised (deformed) kernels, the LapSVM regularization path and the
exact transductive SVM, as scikit-learn estimators.
"""

__version__ = "0.1.0"

from ._config import config_context, get_config, set_config
from .model_selection import LapRLSCV, LapSVMCV
from .models import (
    ExactTSVM,
    LapRLS,
    LapSVC,
    LapSVM,
    LapSVMPath,
    SemiSupervisedKernel,
    SolverOptions,
    plot_path,
)
from .solvers import lapsvm_path

__all__ = [
    "ExactTSVM",
    "LapRLS",
    "LapRLSCV",
    "LapSVC",
    "LapSVM",
    "LapSVMCV",
    "LapSVMPath",
    "SemiSupervisedKernel",
    "SolverOptions",
    "__version__",
    "config_context",
    "get_config",
    "lapsvm_path",
    "plot_path",
    "set_config",
]
