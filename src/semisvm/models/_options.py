r"""The expert options of the manifold-regularized estimators (:class:`SolverOptions`).

:class:`~semisvm.LapSVM` and :class:`~semisvm.LapRLS` take their everyday
parameters (solver, weights, kernel, graph size, stopping) in the constructor
and the expert knobs -- the early-stopping rules' details, the PCG
preconditioner, the graph search, the Nyström approximation, the data-adaptive
mappings of the weights and of the bias -- grouped in one ``options`` object,
as Falkon does with ``FalkonOptions``::

    LapSVM(options=SolverOptions(preconditioner="paper"))

``options=None`` means every default.  The object follows scikit-learn's
parameter protocol (``get_params`` / ``set_params``), so ``clone``,
``set_params(options__preconditioner="paper")`` and a ``GridSearchCV`` grid
``{"options__preconditioner": ["paper", "nystroem"]}`` work.

Every piece of code that needs an option reads it through
:func:`resolved_options`: an estimator's own parameter of that name when it has
one (``heat_t`` of :class:`~semisvm.SemiSupervisedKernel`, which has no
``options``), else its ``options``' value, else the default.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from .._validation import Interval, Options, validate_params
from ..kernels._nystroem import LANDMARK_METHODS

__all__ = [
    "MIN_LABELS_PER_CLASS",
    "SolverOptions",
    "OPTION_CONSTRAINTS",
    "resolved_options",
]

#: labeled points per class from which the ``"auto"`` rules let the labels judge
#: the graph (``gamma_a`` / ``gamma_i``, ``labels_only_check``'s supervised
#: model) and loosen the early stop's value guard (``stability_value_tol``)
MIN_LABELS_PER_CLASS = 5

#: the kernel operators (:mod:`semisvm.models._scale`) and kNN searches
KERNEL_APPROXIMATIONS = ("auto", "dense", "streamed", "nystroem", "fitc", "blocks")
GRAPH_METHODS = ("auto", "exact", "approx")

#: every option and its default (the order of the constructor)
OPTION_DEFAULTS: dict[str, Any] = {
    # graph and intrinsic term
    "heat_t": None,
    "intrinsic_bias": True,
    # data-adaptive mappings (models/_adaptive.py)
    "regularization": "normalized",
    "class_balance": "mass",
    "class_prior": "auto",
    "prior_reading": "auto",
    "extension_width": "auto",
    "graph_width": "auto",
    "labels_only_check": "auto",
    # PCG and its early-stopping rules
    "preconditioner": "nystroem",
    "tol_criterion": "mixed",
    "validation_fraction": None,
    "check_every": None,
    "stability_tol": 0.015,
    "stability_value_tol": "auto",
    "stability_window": "half",
    "record_history": False,
    "coarse_start": True,
    # scale: kernel operator, Nyström, neighbour search
    "kernel_approximation": "auto",
    "n_components": None,
    "block_size": 300,
    "landmarks": "uniform",
    "graph_method": "auto",
    "graph_pca": "auto",
}

#: the allowed values of each option (checked at ``fit``, like the parameters)
OPTION_CONSTRAINTS: dict[str, list] = {
    "heat_t": [None, Interval(numbers.Real, 0, None, closed="neither")],
    "intrinsic_bias": ["boolean"],
    "regularization": [Options(("normalized", "paper"))],
    "class_balance": [None, Options(("mass", "mean"))],
    "class_prior": [None, "array-like", Options(("auto",))],
    "prior_reading": [Options(("auto", "mass"))],
    "extension_width": [None, Options(("auto", "always"))],
    "graph_width": [None, Options(("auto",))],
    "labels_only_check": [None, Options(("auto", "always"))],
    "coarse_start": ["boolean"],
    "preconditioner": [Options(("paper", "nystroem"))],
    "tol_criterion": [
        Options(("mixed", "gradient", "preconditioned_gradient", "objective"))
    ],
    "validation_fraction": [None, Interval(numbers.Real, 0, 1, closed="neither")],
    "check_every": [None, Interval(numbers.Integral, 1, None)],
    "stability_tol": [Interval(numbers.Real, 0, 1, closed="neither")],
    "stability_value_tol": [
        None,
        Options(("auto",)),
        Interval(numbers.Real, 0, None, closed="neither"),
    ],
    "stability_window": [Options(("last", "half"))],
    "record_history": ["boolean"],
    "kernel_approximation": [Options(KERNEL_APPROXIMATIONS)],
    "n_components": [None, Interval(numbers.Integral, 1, None)],
    "block_size": [Interval(numbers.Integral, 1, None)],
    "landmarks": [Options(LANDMARK_METHODS)],
    "graph_method": [Options(GRAPH_METHODS)],
    "graph_pca": [None, Options(("auto",)), Interval(numbers.Integral, 1, None)],
}


def _same(a: Any, b: Any) -> bool:
    """Equality of two option values (arrays compared by value)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        try:
            return bool(np.array_equal(np.asarray(a), np.asarray(b)))
        except (TypeError, ValueError):  # pragma: no cover - ragged input
            return False
    try:
        return bool(a == b)
    except (TypeError, ValueError):  # pragma: no cover - exotic values
        return a is b


def _unknown(names: Any) -> ValueError:
    bad = ", ".join(repr(n) for n in names)
    return ValueError(
        f"Unknown option {bad} for SolverOptions. Valid options: "
        f"{', '.join(OPTION_DEFAULTS)}. (The estimators' own parameters -- solver, "
        "gamma_a, kernel, n_neighbors, tol, ... -- go to the estimator, not to "
        "SolverOptions.)"
    )


class SolverOptions:
    r"""Expert options of :class:`~semisvm.LapSVM` and :class:`~semisvm.LapRLS`.

    Pass one as ``options=SolverOptions(...)``; ``options=None`` means every
    default below.  An option means the same in every estimator that reads it
    (the graph options also steer :class:`~semisvm.model_selection.LapSVMCV` and
    :class:`~semisvm.model_selection.LapRLSCV` through
    ``estimator_params={'options': ...}``).  The object is never modified by
    ``fit``; ``set_params(options__name=value)`` on an estimator changes it in
    place, as for scikit-learn's nested estimators.

    Parameters
    ----------
    heat_t : float, default=None
        Width of the heat weights (``graph_weight='heat'``; default: mean edge
        length).
    intrinsic_bias : bool, default=True
        Apply the intrinsic term to :math:`f_I = K\alpha + b\mathbf 1` (the
        function actually used) instead of the paper's :math:`K\alpha`; the two
        are equal for :math:`D - W`.  ``solver='dual'`` penalises :math:`K\alpha`
        only: with the normalized Laplacian it needs ``intrinsic_bias=False``
        (else a ``ValueError`` says so).
    regularization : {'normalized', 'paper'}, default='normalized'
        How numbers given as ``gamma_a`` and ``gamma_i`` are read:
        ``'normalized'``: as :math:`\lambda_A, \lambda_I` of the objective with
        the loss averaged over the labeled points and the graph term averaged over
        the n points and divided by the mean degree (the same values mean the
        same trade-off at every n and l); ``'paper'``: as the paper's raw
        :math:`\gamma_A, \gamma_I` of Eq. 7.
    class_balance : {'mass', 'mean', None}, default='mass'
        After the fit, shift the bias of every (one-vs-rest) output so that,
        over the unlabeled training points, the positive output mass is the
        fraction :math:`\pi_k` of the total output mass (``'mass'``: class mass
        normalization of Zhu et al. 2003 on the signed outputs, scale-invariant),
        or the mean output is :math:`2\pi_k - 1` (``'mean'``: Chapelle & Zien's
        2005 balancing constraint).  The classes keep their labeled proportions
        (or ``class_prior``) in mass, and one class cannot swallow the unlabeled
        points.  Applies to ``transduction_``, ``decision_function`` and
        ``predict`` (through ``intercept_``).  No effect without unlabeled
        points.  ``None``: the solver's bias.
    class_prior : array-like of shape (n_classes,), 'auto' or None, default='auto'
        :math:`\pi` for ``class_balance`` (order of ``classes_``); ``None``: the
        labeled proportions; ``'auto'``: the labeled proportions, except that for
        two classes with at least 2 labels each the boundary moves into a clear
        gap of the unlabeled outputs when the labels' balance would cut through
        a cluster (:func:`semisvm.models._adaptive.auto_offsets`) -- balanced
        labels on imbalanced data.  Measured (6 draws, 2 labels per class):
        two moons 1:4 93.9 -> 98.6%, 1:9 72.5 -> 93.6%; balanced moons,
        circles, G50C-like, breast cancer, digits 0/1 unchanged (within 0.1
        point).  With a single label in one of two classes, below three
        intrinsic dimensions, the proportions are read by output mass or by
        count (that fraction of the unlabeled points on each side), whichever
        partition cuts the model's graph less
        (:func:`semisvm.models._adaptive.prior_reading`; two circles with noise
        0.1, 2,000 points, one label per class: 11.5 -> 5.3% error over 30
        draws).  The proportions used are in ``class_prior_``.
    prior_reading : {'auto', 'mass'}, default='auto'
        With one label in a class (two classes, on planar data or curves):
        ``'auto'`` reads the proportions by count or by class mass, whichever
        partition cuts the training graph less
        (:func:`~semisvm.models._adaptive.prior_reading`); ``'mass'``: always the
        class-mass reading.
    extension_width : {'auto', None}, default='auto'
        ``'auto'``: when the fit trusts the graph (``gamma_i_ > 0``) with the RBF
        kernel of a width rule (``gamma`` a string) and a dense K, check that its
        training outputs extend to points it has not seen (leave-one-out
        interpolation on a sample of the training points) and refit with
        ``gamma`` times 2, 4 or 8 when a narrower kernel reproduces the
        transduction there clearly better (:mod:`semisvm.models._extension`):
        ``predict`` on new points then errs about as the transduction does
        instead of far more where the graph does not carry the classes.  The
        check is in ``extension_check_``.  ``None``: the width of the rule.
        It runs on a dense K (in process, or a cluster's distributed rows: the
        same model on every plan), not on the Nystroem or streamed operators.
    graph_width : {'auto', None}, default='auto'
        ``'auto'``: with up to ten labels per class on planar data or curves
        (intrinsic dimension below 3), also fit on a narrower heat graph and
        keep that model when its transduction cuts the reference graph at
        less than half the default's ratio cut (:mod:`semisvm.models._graphwidth`);
        the decision is in ``graph_selection_``.  ``None``: the default graph.
    labels_only_check : {'auto', 'always', None}, default='auto'
        Never worse than the labels alone (:mod:`semisvm.models._baseline`):
        with at least five labels per class, compare the model to be fitted with
        the majority class and a kernel machine on the labeled points by
        leave-one-out on the labels, and fit the labels-only model where the
        labels prefer it by a margin they can see; the comparison is in
        ``regularization_selection_["baseline"]``.  ``'auto'``: when
        ``gamma_a`` or ``gamma_i`` is ``"auto"`` (numbers given are kept);
        ``'always'``: also with numbers given (the refit of
        :class:`~semisvm.LapSVMCV` and :class:`~semisvm.LapRLSCV`); ``None``:
        never.
    preconditioner : {'nystroem', 'paper'}, default='nystroem'
        PCG only.  ``'paper'``: :math:`P = \mathrm{diag}(1, K)` (Algorithm 1).
        ``'nystroem'``: the paper's P plus a deflation of the top of the spectrum
        on landmark columns of K; the same optimum, reached to ``tol`` in far fewer
        iterations on two moons (8-20x, ``benchmarks/bench_pcg_iterations.py``);
        landmarks drawn with ``random_state``.  With it, the stability rule stops
        where the labels have spread: full USPS, one label per class, 14.1% error
        (the converged optimum's) against 19.8% with ``'paper'`` (3 draws; more
        in the documentation's page on the automatic rules).
    tol_criterion : {'mixed', 'gradient', 'preconditioned_gradient', 'objective'}, default='mixed'
        PCG only: the quantity compared with ``tol`` (relative to its value at
        t = 0) by the classical stopping rule.
    validation_fraction : float, default=None
        Fraction of the labeled points held out for the validation rules
        (``early_stopping='validation'`` or ``'mixed'``) when no ``X_val`` is
        passed to ``fit``.
    check_every : int, default=None
        :math:`\theta`, the early-stopping rules' check interval, default
        :math:`\lceil\sqrt n/2\rceil`.
    stability_tol : float, default=0.015
        :math:`\eta` of the stability check (1.5% of the unlabeled points).
    stability_value_tol : 'auto', float or None, default='auto'
        Robustness guard of the stability check: the outputs on the unlabeled
        points must also have moved by less than this fraction of their norm
        since the last check.  With one or two labels per class the predicted
        signs can stay put for a while as the labels diffuse along the graph,
        and the paper's rule alone stops too early.  ``'auto'``: 5% where a
        class has fewer than five labels, 10% from five on (the labels are
        then close to every point; docs/rules.rst); ``None`` gives the paper's
        rule exactly.
    stability_window : {'last', 'half'}, default='half'
        What the stability check compares with: ``'last'``, the previous check (the
        paper); ``'half'``, the outputs at half the iterations so far (sees
        slow drifts that a fixed window misses), checked every
        ``check_every / 2`` iterations from ``2 * check_every`` on.
    record_history : bool, default=False
        Store per-iteration objective and gradient norms in ``history_`` (PCG;
        with validation data also its error, ``history_['eval_error']``).
    coarse_start : bool, default=True
        Start PCG above 2,000 points from the exact optimum over coefficients
        on landmarks (:func:`semisvm.solvers._coarse.coarse_start`) when the
        graph term is on and the loss unweighted; ``False``: from zero.
    kernel_approximation : {'auto', 'dense', 'streamed', 'nystroem', 'fitc', 'blocks'}, default='auto'
        How K is held (:mod:`semisvm.models._scale`).  ``'dense'``: the n x n
        matrix (every solver); ``'streamed'``: exact products tile by tile, K never
        stored (``solver='pcg'`` only); ``'nystroem'``: :math:`K\approx\Phi\Phi^T`
        with ``n_components`` landmarks, the problem solved exactly in the feature
        space by Newton (LapSVM) or one linear system (LapRLS), whatever
        ``solver`` says (except ``'dual'``, which needs the dense K), early
        stopping unused; ``'fitc'``: the Nyström kernel plus its exact diagonal,
        :math:`K\approx\Phi\Phi^T + \operatorname{diag}(k(x_i,x_i) - \|\Phi_i\|^2)`
        (:mod:`semisvm.kernels._fitc`: full rank, products in O(n m), the dense
        model's accuracy on many classes; ``solver='pcg'``); ``'blocks'``: the
        Nyström kernel plus the exact kernel within k-means blocks of about
        ``block_size`` points (:mod:`semisvm.kernels._blocks`, PIC: products in
        O(n m + n b), no n x n matrix; ``solver='pcg'``); ``'auto'``: with PCG,
        dense or blocks by their predicted time on this machine when the dense
        fit fits in 70% of available memory (:mod:`semisvm.models._cost`: the
        exact dense K unless the blocks save half the time and a second); past
        memory, blocks for more than two classes with PCG, Nyström otherwise;
        the other solvers dense when it fits, else Nyström.  The choice and its
        reason are in ``kernel_operator_`` and ``operator_selection_``
        (printed with ``verbose``); a configuration that does not fit is refused
        before allocating, naming the sizes of the others.
    n_components : int, default=None
        Nyström landmarks m; ``None``: :math:`\lceil\sqrt n\ln n\rceil` capped at
        2,000 and by memory.
    block_size : int, default=300
        Mean points per block of ``kernel_approximation='blocks'``: the
        training points are cut into ``n // block_size`` k-means clusters.
    landmarks : {'uniform', 'kmeans'}, default='uniform'
        Nyström landmark choice: random rows, or mini-batch k-means centres.
    graph_method : {'auto', 'exact', 'approx'}, default='auto'
        kNN search for the graph.  With a dense RBF kernel, ``'auto'`` and
        ``'exact'`` read the neighbours off K; otherwise ``'exact'`` is a blocked
        brute-force search (O(n k) memory, O(n^2 d) time) and ``'approx'`` uses
        hnswlib or pynndescent (``pip install semisvm[approx]``); ``'auto'`` is
        exact up to 20,000 points, approximate above when a library is installed.
    graph_pca : 'auto', int or None, default='auto'
        Search the neighbours on a PCA projection with this many components:
        3 k candidates per point there, the k nearest kept by their exact
        distance (the graph's distances are exact).  ``'auto'``: 64 components
        for the approximate search on more than 128 features (the 1M x 784
        fit), none otherwise; ``None``: never.

    Raises
    ------
    ValueError
        For an unknown option name (the message names it).  Values are checked
        by the estimator's ``fit``.

    See Also
    --------
    semisvm.LapSVM, semisvm.LapRLS

    Examples
    --------
    >>> from semisvm import LapSVM, SolverOptions
    >>> clf = LapSVM(options=SolverOptions(preconditioner="paper"))
    >>> clf
    LapSVM(options=SolverOptions(preconditioner='paper'))
    >>> clf.set_params(options__stability_tol=0.01).options
    SolverOptions(preconditioner='paper', stability_tol=0.01)
    """

    def __init__(
        self,
        *,
        heat_t: float | None = None,
        intrinsic_bias: bool = True,
        regularization: str = "normalized",
        class_balance: str | None = "mass",
        class_prior: Any = "auto",
        prior_reading: str = "auto",
        extension_width: str | None = "auto",
        graph_width: str | None = "auto",
        labels_only_check: str | None = "auto",
        preconditioner: str = "nystroem",
        tol_criterion: str = "mixed",
        validation_fraction: float | None = None,
        check_every: int | None = None,
        stability_tol: float = 0.015,
        stability_value_tol: float | str | None = "auto",
        stability_window: str = "half",
        record_history: bool = False,
        coarse_start: bool = True,
        kernel_approximation: str = "auto",
        n_components: int | None = None,
        block_size: int = 300,
        landmarks: str = "uniform",
        graph_method: str = "auto",
        graph_pca: int | str | None = "auto",
        **unknown: Any,
    ) -> None:
        if unknown:
            raise _unknown(unknown)
        self.heat_t = heat_t
        self.intrinsic_bias = intrinsic_bias
        self.regularization = regularization
        self.class_balance = class_balance
        self.class_prior = class_prior
        self.prior_reading = prior_reading
        self.extension_width = extension_width
        self.graph_width = graph_width
        self.labels_only_check = labels_only_check
        self.preconditioner = preconditioner
        self.tol_criterion = tol_criterion
        self.validation_fraction = validation_fraction
        self.check_every = check_every
        self.stability_tol = stability_tol
        self.stability_value_tol = stability_value_tol
        self.stability_window = stability_window
        self.record_history = record_history
        self.coarse_start = coarse_start
        self.kernel_approximation = kernel_approximation
        self.n_components = n_components
        self.block_size = block_size
        self.landmarks = landmarks
        self.graph_method = graph_method
        self.graph_pca = graph_pca

    @classmethod
    def _get_param_names(cls) -> list[str]:
        return list(OPTION_DEFAULTS)

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The options as a dict (scikit-learn's protocol).

        Parameters
        ----------
        deep : bool, default=True
            Unused (no option is an estimator); kept for scikit-learn.

        Returns
        -------
        dict
            ``option name -> value`` for every option.
        """
        return {name: getattr(self, name) for name in OPTION_DEFAULTS}

    def set_params(self, **params: Any) -> SolverOptions:
        """Set options in place (scikit-learn's protocol).

        Parameters
        ----------
        **params
            ``option name=value``.

        Returns
        -------
        SolverOptions
            This object.

        Raises
        ------
        ValueError
            For an unknown option name.
        """
        bad = [name for name in params if name not in OPTION_DEFAULTS]
        if bad:
            raise _unknown(bad)
        for name, value in params.items():
            setattr(self, name, value)
        return self

    def replace(self, **changes: Any) -> SolverOptions:
        """A copy with some options changed (this object is left as it is).

        Parameters
        ----------
        **changes
            ``option name=value``.

        Returns
        -------
        SolverOptions
        """
        return type(self)(**{**self.get_params(), **changes})

    def changed(self) -> dict[str, Any]:
        """The options that differ from their defaults.

        Returns
        -------
        dict
        """
        return {
            name: value
            for name, value in self.get_params().items()
            if not (
                type(value) is type(OPTION_DEFAULTS[name])
                and _same(value, OPTION_DEFAULTS[name])
            )
        }

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.changed().items())
        return f"{type(self).__name__}({args})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SolverOptions):
            return NotImplemented
        a, b = self.get_params(), other.get_params()
        return all(_same(a[k], b[k]) for k in a)

    __hash__ = None  # type: ignore[assignment]  # mutable, like an estimator


_OWN_OPTIONS: dict[type, tuple[str, ...]] = {}


def _own_options(cls: type) -> tuple[str, ...]:
    """The options a class takes as its own constructor parameters (the
    signature read once per class: ``resolved_options`` runs in every fit)."""
    if cls not in _OWN_OPTIONS:
        names = getattr(cls, "_get_param_names", None)
        own = set(names()) if callable(names) else set()
        _OWN_OPTIONS[cls] = tuple(sorted(own & set(OPTION_DEFAULTS)))
    return _OWN_OPTIONS[cls]


def resolved_options(est: Any) -> SolverOptions:
    """The options an estimator fits with: one accessor for every reader.

    For each option: the estimator's own parameter of that name when it has one
    (``heat_t`` of :class:`~semisvm.SemiSupervisedKernel` and
    :class:`~semisvm.LapSVC`, which take no ``options``), else the value in its
    ``options`` (a :class:`SolverOptions` or None), else the default.

    Parameters
    ----------
    est : estimator

    Returns
    -------
    SolverOptions
        A new object: changing it does not change ``est``.

    Raises
    ------
    TypeError
        If ``est.options`` is neither None nor a :class:`SolverOptions`.
    """
    opts = getattr(est, "options", None)
    if opts is None:
        values = dict(OPTION_DEFAULTS)
    elif isinstance(opts, SolverOptions):
        values = opts.get_params()
    else:
        raise TypeError(
            f"{type(est).__name__}: options must be None or a "
            f"semisvm.SolverOptions, got {type(opts).__name__} ({opts!r})."
        )
    for name in _own_options(type(est)):
        values[name] = getattr(est, name)
    return SolverOptions(**values)


def check_options(est: Any) -> SolverOptions:
    """Validate ``est.options`` (type and values); return the resolved options.

    Raises
    ------
    ValueError
        ``options`` not a :class:`SolverOptions`, or an option value not
        allowed (the message names the option).
    """
    opts = getattr(est, "options", None)
    if opts is not None and not isinstance(opts, SolverOptions):
        raise ValueError(
            f"The 'options' parameter of {type(est).__name__} must be None or a "
            f"semisvm.SolverOptions. Got {opts!r} instead."
        )
    resolved = resolved_options(est)
    validate_params(resolved.get_params(), OPTION_CONSTRAINTS, owner="SolverOptions")
    return resolved
