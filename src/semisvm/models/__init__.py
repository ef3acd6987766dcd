"""scikit-learn estimators."""

from ._lapsvm import LapRLS, LapSVM
from ._path import LapSVMPath, path_error_pieces, plot_path
from ._ssk import LapSVC

__all__ = ["LapRLS", "LapSVC", "LapSVM", "LapSVMPath", "path_error_pieces", "plot_path"]
