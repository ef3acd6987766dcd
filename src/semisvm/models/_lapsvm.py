r"""Laplacian SVM and Laplacian RLS estimators."""

from __future__ import annotations

import numbers
import time
from typing import Any

from .. import _defaults
from .._validation import Interval, Options
from ..kernels._distributed import is_distributed_array
from ._base import ManifoldClassifierMixin, OperatorCache
from ._cluster_plan import fit_on_cluster
from ._graphwidth import choose_graph_width
from ._model import choose_regularization, fit_model
from ._options import SolverOptions
from ._params import fit_params
from ._problem import encode_targets, needs_graph, prepare_problem
from ._solve import resolve_solver

__all__ = ["LapSVM", "LapRLS"]

_PCG_CONSTRAINTS: dict[str, list] = {
    "early_stopping": [None, Options(("auto", "stability", "validation", "mixed"))],
    "max_iter": [Interval(numbers.Integral, 1, None)],
    "tol": [Interval(numbers.Real, 0, None, closed="left")],
    "random_state": ["random_state"],
}


class _PrimalMixin(ManifoldClassifierMixin):
    """fit() shared by LapSVM and LapRLS."""

    _loss = "squared_hinge"

    def _store_params(self, params: dict[str, Any]) -> None:
        """``__init__``'s body: store every parameter as given (scikit-learn's
        rule; ``params`` is the constructor's ``locals()``)."""
        for name in self._get_param_names():
            setattr(self, name, params[name])

    def fit(
        self,
        X: Any,
        y: Any,
        *,
        adjacency: Any = None,
        X_val: Any = None,
        y_val: Any = None,
        operator_cache: OperatorCache | None = None,
    ) -> Any:
        """Fit the model on labeled and unlabeled points.

        Validate, prepare the problem (kernel, graph, targets), choose the
        regularization, solve (with the extension check), choose the graph's
        width, store the fitted attributes (``docs/developer.rst`` draws this
        path).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training points, labeled and unlabeled.  With ``kernel='precomputed'``,
            the (n_samples, n_samples) Gram matrix.
        y : array-like of shape (n_samples,)
            Class labels: ints, strings or integer-valued floats, in an array, a
            list or a pandas Series (object, string, categorical or nullable
            dtype).  ``-1`` (or ``"-1"``), ``None``, ``NaN`` and ``pd.NA`` mark an
            unlabeled point, so a column of class names with blanks needs no
            recoding; the class names are kept in ``classes_``, ``predict`` and
            ``transduction_`` (:func:`semisvm._validation.decode_labels`).
        adjacency : {array-like, sparse matrix} of shape (n_samples, n_samples), default=None
            Your own symmetric graph over the training points; the Laplacian is then
            built from it with ``normalize_laplacian`` and ``laplacian_power``.
        X_val, y_val : array-like, default=None
            Labeled validation set for ``early_stopping='validation'`` or ``'mixed'``
            (else ``validation_fraction`` of the labeled points is held out).  With
            ``record_history=True`` its error is recorded at every PCG iteration
            (``history_['eval_error']``).
        operator_cache : semisvm.models.OperatorCache, default=None
            Share the kernel, the graph and the exact solvers' factorizations
            between many fits on the same ``X`` object (a grid of weights or
            labels): each fit takes the operators an earlier fit with the same
            kernel and graph parameters built, and computes exactly what it
            would compute alone.

        Returns
        -------
        self
        """
        t_fit = time.perf_counter()
        X, y, X_val = self._validate_fit_input(X, y, X_val)
        params = fit_params(self)
        cluster = None
        if is_distributed_array(X):
            # the whole fit on one worker when it fits there (models._cluster_plan)
            model, cluster = fit_on_cluster(
                params,
                X,
                y,
                n_columns=encode_targets(y).Y.shape[1],
                need_graph=needs_graph(params) and adjacency is None,
                solver=resolve_solver(params, X.shape[0]),
                fit_kwargs=dict(adjacency=adjacency, X_val=X_val, y_val=y_val),
            )
            if model is not None:
                return self._store(model, t_fit, cluster_plan=cluster)
        problem = prepare_problem(
            X,
            y,
            params,
            adjacency=adjacency,
            X_val=X_val,
            y_val=y_val,
            cache=operator_cache,
            cluster_operator=None if cluster is None else cluster["operator"],
        )
        weights = choose_regularization(problem, params)
        model = fit_model(problem, params, weights)
        model = choose_graph_width(problem, model, params)
        return self._store(model, t_fit, cluster_plan=cluster)


class LapSVM(_PrimalMixin):
    r"""Laplacian Support Vector Machine (manifold-regularized L2-loss SVM).

    Minimises, for each one-vs-rest column, the primal objective of Melacci &
    Belkin (2011), Eq. 7:

    .. math::
        \tfrac12 \Big[\sum_{i \in \mathcal L} \max(0, 1 - y_i f(x_i))^2
        + \gamma_A \alpha^T K \alpha + \gamma_I \alpha^T K L K \alpha\Big],
        \quad f(x) = \sum_{i=1}^n \alpha_i k(x_i, x) + b,

    over labeled and unlabeled points alike (``y == -1`` marks unlabeled ones).

    **Defaults that adapt to the data.**  By default (the option
    ``regularization='normalized'`` of :class:`~semisvm.SolverOptions`)
    ``gamma_a`` and ``gamma_i`` are the weights
    :math:`\lambda_A, \lambda_I` of the averaged objective

    .. math::
        \tfrac12 \Big[\frac{1}{\sum_i c_i}\sum_{i \in \mathcal L} c_i
        \max(0, 1 - y_i f(x_i))^2 + \lambda_A \alpha^T K \alpha
        + \frac{\lambda_I}{n_G \bar d^{\,p}} f_I^T L^p f_I\Big],

    (:math:`c_i` the ``class_weight`` of point i, 1 by default;
    :math:`\bar d = \mathrm{tr}(L)/n`, the mean degree for :math:`D - W`, 1 for
    the normalized Laplacian; :math:`n_G = \min(n, 2000)`: beyond 2,000 points
    the graph term grows with the points that estimate it), i.e. Eq. 7 with
    :math:`\gamma_A = (\sum_i c_i) \lambda_A` and :math:`\gamma_I = (\sum_i
    c_i)\lambda_I/(n_G\bar d^{\,p})` (stored in ``gamma_a_``, ``gamma_i_``):
    the same values mean the same trade-off at every number of labels and with
    every graph.
    The option ``regularization='paper'`` takes ``gamma_a``, ``gamma_i`` as the paper's
    :math:`\gamma_A, \gamma_I` (the reproduction's form).  The kernel width
    (``gamma='knn'``) and the graph weights (``graph_weight='local'``) come from
    the distances to each point's nearest neighbours, so the defaults do not
    depend on the units of the features.  After the fit the outputs on the
    unlabeled points are balanced (option ``class_balance='mass'``) and probabilities
    are a fitted sigmoid/softmax of the outputs (:meth:`predict_proba`).  Every
    solver minimises the same objective with the same weights (the dual with
    ``loss='squared_hinge'``, its default), so ``solver`` changes the time,
    not the model.  See :mod:`semisvm.models._adaptive` and the README's
    "Defaults that work untuned" for the measurements behind the defaults.

    Parameters
    ----------
    solver : {'pcg', 'newton', 'dual'}, default='pcg'
        ``'pcg'``: preconditioned conjugate gradient (Algorithm 1) with the exact
        line search and optional early stopping, O(n^2) per iteration, one product
        with K; ``'newton'``: primal Newton (Eq. 11), O(n^3) per step; ``'dual'``:
        the two-step method of Belkin et al. (2006): LIBSVM on the l-variable
        dual, then a linear system; it minimises the squared hinge (the same
        model as the other solvers) or, with ``loss='hinge'``, the original L1
        hinge.
    gamma_a : float or 'auto', default='auto'
        Ambient (RKHS) regularisation weight, :math:`\lambda_A > 0` (normalized)
        or :math:`\gamma_A > 0` (option ``regularization='paper'``).  ``'auto'``: chosen
        with ``gamma_i`` by leave-one-out on the labeled points when every class
        has at least 5 labels, else 1e-6 (see
        :mod:`semisvm.models._autoreg` and ``regularization_selection_``).
    gamma_i : float or 'auto', default='auto'
        Intrinsic (graph) regularisation weight, :math:`\lambda_I \ge 0` or
        :math:`\gamma_I \ge 0`; 0 gives a supervised L2-SVM on the labeled
        points.  ``'auto'``: chosen by leave-one-out among 0 (no graph) and
        1e-2 ... 1e2 with at least 5 labels per class, else 1 (trust the
        graph).
    kernel : {'rbf', 'poly', 'linear', 'precomputed'} or callable, default='rbf'
    gamma : float or {'knn', 'median', 'scale'}, default='knn'
        RBF/poly parameter (scikit-learn's: RBF is :math:`\exp(-\gamma\|x-z\|^2)`,
        :math:`\gamma = 1/(2\sigma^2)`).  ``'knn'``: :math:`\sigma^2` is the mean
        squared distance from a point to its ``n_neighbors``-th neighbour
        (:func:`semisvm.kernels.knn_gamma`), the scale of the graph's edges;
        ``'median'`` sets :math:`\sigma` to the median distance between training
        points; ``'scale'`` is scikit-learn's rule.
    degree : int, default=3
        Polynomial degree.
    coef0 : float, default=1.0
        Polynomial offset.
    kernel_params : dict, default=None
        Keyword arguments of a callable kernel.
    n_neighbors : int, default=10
        Neighbours in the symmetric kNN graph.
    graph_weight : {'auto', 'binary', 'heat', 'local'}, default='auto'
        ``'local'``: self-tuning weights :math:`\exp(-d_{ij}^2/(\sigma_i\sigma_j))`,
        :math:`\sigma_i` half the distance from :math:`x_i` to its 10th neighbour
        (after Zelnik-Manor & Perona 2004); ``'heat'``: :math:`\exp(-d_{ij}^2/(2t^2))`;
        ``'auto'``: heat weights where the n-point graph resolves the density finer
        than a 2,000-point sample (length ratio :math:`\rho \ge 2`,
        :func:`semisvm.kernels.knn_scale_ratio`), else ``'local'``.
    normalize_laplacian : bool, default=False
        Use :math:`I - D^{-1/2} W D^{-1/2}` (the paper's experiments) instead of
        :math:`D - W`.  With :math:`D - W`, :math:`L\mathbf 1 = 0` and the bias
        never enters the intrinsic term; with the normalized Laplacian see the
        option ``intrinsic_bias`` (:class:`~semisvm.SolverOptions`).
    laplacian_power : int or 'auto', default='auto'
        Integer power p of the Laplacian, :math:`L^p`.  ``'auto'``:
        p = 3 when the data's intrinsic dimension :math:`\hat d` (Levina-Bickel
        estimate on a 2,000-point sample) is at least 16; p = 2 when
        :math:`5 \le \hat d < 16` and every class has at least 5 labeled
        points; else 1 (also for a user graph or a precomputed kernel): the
        higher-order regularization of Zhou & Belkin (2011) where the dimension
        and the labels call for it (:mod:`semisvm.graph._dimension`); the value
        used is ``laplacian_power_``.
    loss : {'squared_hinge', 'hinge'}, default='squared_hinge'
        ``'hinge'`` (``solver='dual'`` only): the L1 hinge of Belkin et al.
        (2006), with the same :math:`\gamma_A, \gamma_I` (loss weight 1 in both;
        :math:`C = 1/(2\gamma_A)` on the deformed kernel).  Its bias is not unique
        when every labeled point is a bounded support vector (strong
        regularisation): LIBSVM then returns the middle of an interval of
        optimal biases, which can put every point in one class (the G50C case
        of :func:`semisvm.solvers.lapsvm_dual`).
    class_weight : None, 'balanced' or dict, default=None
        Weights :math:`c_i` of the labeled loss terms, as in scikit-learn:
        ``'balanced'`` gives class k the weight :math:`l / (K l_k)`; a dict maps
        class labels to weights.  Exact in every solver (Newton, PCG and its
        line search, the dual through LIBSVM's per-sample C).
    early_stopping : {'auto', None, 'stability', 'validation', 'mixed'}, default='auto'
        PCG only: the paper's data-based stopping rules (Sec. 4.1), checked every
        ``check_every`` iterations (the rules' details are options:
        ``check_every``, ``stability_tol``, ``stability_value_tol``,
        ``stability_window``, ``validation_fraction``).  ``None`` runs PCG to ``tol``.  ``'auto'``
        is ``'stability'`` for PCG -- unless a connected component of the graph
        holds no labeled point: then the rule's premise fails and PCG runs to
        ``tol`` (:mod:`semisvm.models._components`, ``graph_components_``) --
        and ``None`` for the exact solvers; asking for a rule with
        ``solver='newton'`` or ``'dual'`` is an error.
    tol : float, default=1e-6
        Classical PCG stopping threshold (relative to the value at t = 0); with
        ``solver='dual'`` LIBSVM's tolerance (largest KKT violation of the QP).
    max_iter : int, default=1000
        PCG iterations, Newton steps, or LIBSVM iterations (``solver='dual'``).
    random_state : int, RandomState or None, default=None
        Used to hold out validation points, to draw the Nyström landmarks and
        the landmarks of the ``'auto'`` rule's LOO features.
    verbose : int, default=0
        Print a line every ``verbose`` iterations (``True``: every 10): the
        objective, or with several classes the sum over the one-vs-rest
        columns, its largest term and the columns still iterating; any value
        > 0 also reports the fit's stages (kernel, graph, chosen weights).
    options : SolverOptions, default=None
        The expert options (:class:`~semisvm.SolverOptions`, ``None``: every
        default): the graph's ``heat_t`` and ``intrinsic_bias``; the mappings
        ``regularization`` (how ``gamma_a``, ``gamma_i`` are read),
        ``class_balance`` and ``class_prior`` (the bias after the fit); PCG's
        ``preconditioner``, ``tol_criterion``, ``record_history`` and the
        early-stopping rules' ``validation_fraction``, ``check_every``,
        ``stability_tol``, ``stability_value_tol``, ``stability_window``; the
        scale options ``kernel_approximation``, ``n_components``,
        ``landmarks``, ``graph_method``, ``graph_pca``.  For instance
        ``LapSVM(options=SolverOptions(preconditioner='paper'))``, or
        ``set_params(options__preconditioner='paper')``.  Never modified by
        ``fit``.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    dual_coef_ : ndarray of shape (n_samples, n_columns)
        :math:`\alpha`, one column for two classes, one per class otherwise.
    intercept_ : ndarray of shape (n_columns,)
        The bias b, including ``class_balance_offset_``.
    class_balance_offset_ : ndarray of shape (n_columns,)
        Shift added to the solver's bias by ``class_balance``.
    gamma_a_, gamma_i_ : float
        The paper's :math:`\gamma_A, \gamma_I` the solver used.
    regularization_selection_ : dict
        What ``gamma_a='auto'`` / ``gamma_i='auto'`` chose and why: ``gamma_a``,
        ``gamma_i`` (normalized), ``rule`` ('loo' or 'defaults'), ``reason``, and
        for the LOO rule the grid ``pairs``, their criterion ``scores`` and
        ``loo_error``, ``default_score``, ``z`` (the best alternative against the
        defaults, in paired standard errors), ``z_errors`` (the veto's z),
        ``best_alternative`` and ``time``; when the switch was in question
        (z > 0, no veto) the unlabeled points' evidence ``cut_default``,
        ``cut_alternative`` (fractions of graph edges each candidate's labels
        cut), ``cut_ratio`` and ``z_needed`` (:mod:`semisvm.models._autoreg`).
    graph_selection_ : dict or None
        Up to ten labels per class (graph-trusting fits): the ratio cuts of
        the default graph's transduction, of the narrow heat graph's Poisson
        partition (the screen) and of the narrow graph's transduction on the
        heat kNN graph (``cut_default``, ``cut_screen``, ``cut_narrow``,
        ``ratio``; NaN for a step that did not run), the default boundary's
        edge weight and the mean degree (``boundary_default``,
        ``mean_degree``: no screen below one degree), the labels each model
        leaves isolated (``isolated_default``, ``isolated_narrow``; None unless
        the narrow cut was below the margin), the ``screen_margin``
        and ``margin``, ``mean_edge``, ``narrow_heat_t``, ``narrow_gamma`` (the
        kernel's width when it was narrowed too, else None) and the model
        ``chosen`` (``'default'`` or ``'narrow'``;
        :mod:`semisvm.models._graphwidth`; ``narrow_fit_failed`` holds the error
        when the narrow fit raised one and the default was kept); None when the
        rule did not run (among its conditions: an intrinsic dimension below
        3).
    extension_check_ : dict or None
        The extension check of a graph-trusting fit with the RBF width rule
        (option ``extension_width``, :mod:`semisvm.models._extension`): the width
        ``factors`` tried, their leave-one-out ``disagreement`` with the
        transduction, the chosen ``factor`` (1: the width of the rule kept),
        ``gain``, ``z``, ``gamma`` (the rule's) and ``gamma_used``, ``reason``,
        ``judged_on`` (an early-stopped PCG fit that kept its width with a
        disagreement of 15% or more is judged again on its iterate continued
        to ``tol``, and refitted to ``tol`` if the width moves; the fit itself
        is kept when the width stays); None when the check did not run.
    proba_slope_ : float
        Slope :math:`a` of :meth:`predict_proba`.
    transduction_ : ndarray of shape (n_samples,)
        Labels of the training points (given labels kept, predicted for the rest).
    n_iter_ : int or ndarray
        Iterations (per column for more than two classes).
    n_ls_iter_ : ndarray or None
        Line-search intervals visited (PCG).
    termination_condition_ : str or list of str
        Why the solver stopped: ``'tol'``, ``'max_iter'``, ``'stability'``,
        ``'validation'``, ``'mixed'``, ``'error_vectors'`` (Newton), ``'direct'``.
    objective_ : float or ndarray
    solver_ : str
    unreachable_ : ndarray of int or None
        Indices of the training points in graph components without a labeled
        point (empty when every component holds one; a warning gives their
        count): the graph carries no label to them, and their labels come from
        the kernel's extension of the labeled points and the bias.  None without
        a sparse graph (no graph term, a distributed graph).
    graph_components_ : dict or None
        ``{'n_components', 'n_unlabeled'}``: the graph's connected components and
        those without a labeled point, measured when ``early_stopping='auto'``
        resolves to the stability rule (PCG on a sparse graph); with
        ``n_unlabeled > 0`` PCG ran to ``tol`` instead.  None otherwise.
    gamma_ : float or None
        The kernel parameter actually used (the rule's times
        ``extension_check_['factor']``).
    fit_times_ : dict
        Seconds spent in ``'kernel'``, ``'graph'``, ``'selection'`` (the
        ``"auto"`` choice of the weights), ``'solver'``, ``'extension'`` (the
        extension check and its refit, when it ran), ``'transduction'`` and
        ``'other'`` (validation, targets, class balance): they sum to the time
        of ``fit``.
    history_ : dict
        Per-iteration records when ``record_history=True``.
    kernel_operator_ : str
        The kernel operator used: ``'dense'``, ``'streamed'``, ``'nystroem'``,
        ``'fitc'``, ``'blocks'``, or ``'labeled'`` when the fit fell back to a
        labels-only model (:mod:`semisvm.models._baseline`).
    operator_selection_ : dict
        Why that operator: ``requested``, ``chosen``, ``reason``; when
        ``'auto'`` compared the dense and the block operators, their
        ``predicted_seconds`` on this machine and the measured ``rates``
        (:mod:`semisvm.models._cost`).
    block_decision_ : BlockDecision
        With the block operator only: the predictive function
        :math:`\hat k(x, X)\alpha` (:mod:`semisvm.kernels._blocks`);
        ``dual_coef_`` then holds the n coefficients :math:`\alpha`.
    landmarks_ : ndarray of shape (m, n_features) or None
        Nyström landmarks (the labeled points for a labels-only model);
        ``dual_coef_`` then holds the m coefficients of
        :math:`f(x) = \sum_j \beta_j k(z_j, x) + b`.

    References
    ----------
    S. Melacci and M. Belkin, "Laplacian Support Vector Machines Trained in the
    Primal", JMLR 12:1149-1184, 2011.
    M. Belkin, P. Niyogi and V. Sindhwani, "Manifold Regularization", JMLR 7, 2006.

    Examples
    --------
    >>> from semisvm import LapSVM
    >>> from semisvm.datasets import make_two_moons
    >>> X, y, y_true = make_two_moons(200, n_labeled_per_class=1, random_state=0)
    >>> clf = LapSVM().fit(X, y)
    >>> float((clf.transduction_ == y_true).mean()) >= 0.99
    True
    """

    _parameter_constraints = {
        **ManifoldClassifierMixin._parameter_constraints,
        **_PCG_CONSTRAINTS,
        "solver": [Options(("pcg", "newton", "dual"))],
        "loss": [Options(("squared_hinge", "hinge"))],
    }

    def __init__(
        self,
        *,
        solver: str = "pcg",
        gamma_a: float | str = "auto",
        gamma_i: float | str = "auto",
        kernel: Any = "rbf",
        gamma: Any = _defaults.GAMMA,
        degree: int = 3,
        coef0: float = 1.0,
        kernel_params: dict | None = None,
        n_neighbors: int = _defaults.N_NEIGHBORS,
        graph_weight: str = _defaults.GRAPH_WEIGHT,
        normalize_laplacian: bool = _defaults.NORMALIZE_LAPLACIAN,
        laplacian_power: int | str = _defaults.LAPLACIAN_POWER,
        loss: str = "squared_hinge",
        class_weight: Any = None,
        early_stopping: str | None = "auto",
        tol: float = 1e-6,
        max_iter: int = 1000,
        random_state: Any = None,
        verbose: int = 0,
        options: SolverOptions | None = None,
    ) -> None:
        self._store_params(locals())


class LapRLS(_PrimalMixin):
    r"""Laplacian Regularized Least Squares classifier (LapRLSC).

    Minimises, per one-vs-rest column (Melacci & Belkin 2011, Eq. 14, with the
    factor 1/2 that does not change the minimiser):

    .. math::
        \tfrac12 \Big[\sum_{i \in \mathcal L} (y_i - f(x_i))^2
        + \gamma_A \alpha^T K \alpha + \gamma_I \alpha^T K L K \alpha\Big].

    With the default ``regularization='normalized'`` the squared loss is
    averaged over the (weighted) labeled points and ``gamma_a``, ``gamma_i`` are
    :math:`\lambda_A, \lambda_I` exactly as in :class:`LapSVM`; the class balance
    and the probabilities are also those of :class:`LapSVM`.

    Parameters
    ----------
    solver : {'pcg', 'direct', 'auto'}, default='pcg'
        ``'pcg'`` runs Algorithm 1 with the closed-form step
        :math:`s^* = -\nabla^T d / d^T H d` and the same early-stopping rules
        as :class:`LapSVM` (by default its ``"auto"`` early stop, as
        ``LapSVM()``: on planar data with one to five labels per class the
        stopped iterate errs less than the exact optimum; docs/rules.rst);
        ``'direct'`` solves the linear system of
        Eq. 15 exactly (one LU factorisation shared by all classes).
        ``'auto'``: ``'direct'`` up to :data:`LAPRLS_DIRECT_MAX_N` (10,000)
        training points, ``'pcg'`` above: the :math:`O(n^3)` factorization
        outgrows PCG's :math:`O(n^2)` products per iteration there (one label per class,
        circles at 20,000 points: 222 s against 50 s for PCG's 83 iterations,
        the same transduction; at 5,000-10,000 the factorization is still as
        fast or faster: moons 3.4 / 15.6 s against 4.4 / 16.9 s), and it needs a
        second n x n array.
    early_stopping : {'auto', None, 'stability', 'validation', 'mixed'}, default='auto'
        PCG only, as in :class:`LapSVM` (``'auto'``: the stability rule with PCG
        unless a graph component holds no label, none with ``'direct'``;
        ``None``: PCG to ``tol``).
    options : SolverOptions, default=None
        The expert options, as in :class:`LapSVM` (e.g.
        ``LapRLS(solver='pcg', options=SolverOptions(preconditioner='paper'))``).
    Other parameters
        As in :class:`LapSVM` (LapRLS has no ``loss``: it is the squared loss).

    Attributes
    ----------
    As in :class:`LapSVM`.

    References
    ----------
    M. Belkin, P. Niyogi and V. Sindhwani, "Manifold Regularization", JMLR 7, 2006.
    S. Melacci and M. Belkin, JMLR 12, 2011, Section 5.

    Examples
    --------
    >>> from semisvm import LapRLS
    >>> from semisvm.datasets import make_two_moons
    >>> X, y, y_true = make_two_moons(200, n_labeled_per_class=1, random_state=0)
    >>> float((LapRLS().fit(X, y).transduction_ == y_true).mean()) >= 0.99
    True
    """

    _loss = "squared"
    _parameter_constraints = {
        **ManifoldClassifierMixin._parameter_constraints,
        **_PCG_CONSTRAINTS,
        "solver": [Options(("auto", "direct", "pcg"))],
    }

    def __init__(
        self,
        *,
        solver: str = "pcg",
        gamma_a: float | str = "auto",
        gamma_i: float | str = "auto",
        kernel: Any = "rbf",
        gamma: Any = _defaults.GAMMA,
        degree: int = 3,
        coef0: float = 1.0,
        kernel_params: dict | None = None,
        n_neighbors: int = _defaults.N_NEIGHBORS,
        graph_weight: str = _defaults.GRAPH_WEIGHT,
        normalize_laplacian: bool = _defaults.NORMALIZE_LAPLACIAN,
        laplacian_power: int | str = _defaults.LAPLACIAN_POWER,
        class_weight: Any = None,
        early_stopping: str | None = "auto",
        tol: float = 1e-6,
        max_iter: int = 1000,
        random_state: Any = None,
        verbose: int = 0,
        options: SolverOptions | None = None,
    ) -> None:
        self._store_params(locals())
