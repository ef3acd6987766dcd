"""Plots people would rather look at than read: decision boundaries, convergence.

matplotlib is an optional dependency (``pip install "semisvm[plot]"``), imported
only when a function here is called.  The solution-path plot is
:func:`semisvm.models.plot_path`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._validation import labeled_mask

__all__ = ["plot_decision_boundary", "plot_convergence"]


def _plt() -> Any:
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "Plotting needs matplotlib: pip install 'semisvm[plot]'."
        ) from exc
    return plt


def plot_decision_boundary(
    clf: Any,
    X: np.ndarray,
    y: np.ndarray,
    *,
    ax: Any = None,
    resolution: int = 200,
    title: str | None = None,
) -> Any:
    r"""Filled contour of a fitted binary classifier's f over a 2-D point cloud.

    Drawn with scikit-learn's :class:`~sklearn.inspection.DecisionBoundaryDisplay`
    (``response_method='decision_function'``): the dark line is :math:`f(x) = 0`,
    the colour ranges from :math:`f \le -1` to :math:`f \ge 1` (as in Melacci &
    Belkin 2011, Figure 3); unlabeled points (``y == -1``) are small black dots,
    labeled ones large markers.

    Parameters
    ----------
    clf : fitted estimator with ``decision_function``
        A binary classifier fitted on 2-D points.
    X : ndarray of shape (n_samples, 2)
        Points to draw (they also set the plotted region).
    y : ndarray of shape (n_samples,)
        Labels with -1 for unlabeled points.
    ax : matplotlib Axes, default=None
        Axes to draw on (a new figure when None).
    resolution : int, default=200
        Grid points per axis.
    title : str, default=None
        Axes title.

    Returns
    -------
    matplotlib.figure.Figure
        The figure holding ``ax``.
    """
    plt = _plt()
    from sklearn.inspection import DecisionBoundaryDisplay

    X = np.asarray(X)
    if X.ndim != 2 or X.shape[1] != 2:
        raise ValueError(
            f"plot_decision_boundary needs 2-D points, got shape {X.shape}."
        )
    if not hasattr(clf, "decision_function"):
        raise ValueError(
            f"plot_decision_boundary needs a fitted classifier with decision_function; "
            f"got {type(clf).__name__}."
        )
    classes = getattr(clf, "classes_", None)
    if classes is not None and len(classes) != 2:
        raise ValueError(
            "plot_decision_boundary draws binary classifiers only; "
            f"this one has {len(classes)} classes."
        )
    if ax is None:
        fig, ax = plt.subplots(figsize=(5, 4))
    else:
        fig = ax.figure
    common = dict(
        grid_resolution=resolution,
        response_method="decision_function",
        eps=0.1 * float(np.ptp(X, axis=0).max()),
        ax=ax,
    )
    disp = DecisionBoundaryDisplay.from_estimator(
        clf,
        X,
        plot_method="contourf",
        cmap="coolwarm",
        alpha=0.6,
        levels=np.linspace(-1, 1, 22),
        extend="both",
        **common,
    )
    ax.contour(
        disp.xx0, disp.xx1, disp.response, levels=[0.0], colors="k", linewidths=2
    )
    fig.colorbar(
        disp.surface_,
        ax=ax,
        label="f(x) (clipped to [-1, 1])",
        ticks=[-1.0, -0.5, 0.0, 0.5, 1.0],
    )
    y = np.asarray(y)
    u = ~labeled_mask(y)
    ax.scatter(X[u, 0], X[u, 1], s=6, c="k")
    for c, marker in zip(np.unique(y[~u]), "Do^vs", strict=False):
        sel = y == c
        ax.scatter(
            X[sel, 0],
            X[sel, 1],
            s=80,
            marker=marker,
            edgecolor="w",
            label=f"labeled {c}",
        )
    ax.legend(loc="best", fontsize=8)
    if title:
        ax.set_title(title)
    return fig


def plot_convergence(clf: Any, *, ax: Any = None, column: int = 0) -> Any:
    """Stopping values of a PCG fit against the iteration (Melacci & Belkin, Fig. 4).

    Shows the objective, the gradient norm, the preconditioned gradient norm and
    the mixed product, each normalised by its value at t = 0, on a log scale, and
    the error on the evaluation set when one was recorded.  The estimator must have
    been fitted with ``record_history=True``.

    Parameters
    ----------
    clf : fitted LapSVM or LapRLS
        Fitted with ``solver='pcg'`` and ``record_history=True``.
    ax : matplotlib Axes, default=None
        Axes to draw on (a new figure when None).
    column : int, default=0
        One-vs-rest column to show (0 for a binary problem).

    Returns
    -------
    matplotlib.figure.Figure
        The figure holding ``ax``.
    """
    plt = _plt()
    hist = getattr(clf, "history_", None)
    if not hist:
        raise ValueError("No history: fit the estimator with record_history=True.")
    if ax is None:
        fig, ax = plt.subplots(figsize=(6, 4))
    else:
        fig = ax.figure
    for key in ("objective", "gradient", "preconditioned_gradient", "mixed"):
        v = np.asarray(hist[key])[:, column]
        ax.semilogy(v / v[0] if v[0] else v, label=key)
    if "eval_error" in hist:
        ax2 = ax.twinx()
        ax2.plot(np.asarray(hist["eval_error"])[:, column], "k--", label="eval error")
        ax2.set_ylabel("error rate")
        ax2.legend(loc="upper center", fontsize=8)
    ax.set_xlabel("PCG iteration")
    ax.set_ylabel("value / value at t = 0")
    ax.legend(loc="lower left", fontsize=8)
    return fig
