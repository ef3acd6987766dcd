"""scikit-learn estimators."""

from ._lapsvm import LapRLS, LapSVM
from ._path import LapSVMPath, path_error_pieces, plot_path
from ._ssk import LapSVC
from ._tsvm import ExactTSVM

__all__ = ["ExactTSVM", "LapRLS", "LapSVC", "LapSVM", "LapSVMPath", "path_error_pieces", "plot_path"]
