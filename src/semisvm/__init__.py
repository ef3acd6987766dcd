"""semisvm: semi-supervised kernel classification.

Laplacian SVM (dual, primal Newton, primal PCG with early stopping), Laplacian
RLS, semi-supervised (deformed) kernels, the LapSVM regularization path and the
exact transductive SVM, as scikit-learn estimators.
"""

__version__ = "0.1.0"

from .models import LapRLS, LapSVM

__all__ = ["LapRLS", "LapSVM", "__version__"]
