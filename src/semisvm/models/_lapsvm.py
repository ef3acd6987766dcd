r"""Laplacian SVM and Laplacian RLS estimators."""

from __future__ import annotations

import numbers
import time
import warnings
from typing import Any

import numpy as np
from sklearn.utils.validation import validate_data

from .. import _defaults
from .._validation import Interval, Options, check_finite, resolve_seed
from ..kernels._distributed import is_distributed_array, resolve_distributed_operator
from ..kernels._operators import as_operator
from ..solvers._coarse import coarse_start
from ..solvers._lowrank import lapsvm_lowrank
from ..solvers._newton import laprls_direct, lapsvm_newton
from ..solvers._pcg import lapsvm_pcg
from ._adaptive import paper_regularization, prior_reading_applies
from ._autoreg import select_regularization
from ._base import ManifoldClassifierMixin
from ._components import auto_early_stopping
from ._graphwidth import (
    MAX_DIMENSION,
    choose_graph_width,
    data_dimension,
    graph_width_applies,
)
from ._options import SolverOptions, resolved_options
from ._problem import (
    fewest_labels,
    fitted_kernel_params,
    one_vs_rest,
    prediction_kernel,
)
from ._scale import resolve_operator

__all__ = ["LapSVM", "LapRLS"]

_PCG_CONSTRAINTS: dict[str, list] = {
    "early_stopping": [None, Options(("auto", "stability", "validation", "mixed"))],
    "max_iter": [Interval(numbers.Integral, 1, None)],
    "tol": [Interval(numbers.Real, 0, None, closed="left")],
    "random_state": ["random_state"],
}

#: PCG starts from the exact optimum on landmarks (solvers._coarse) above this many
#: points; below, it converges in few iterations from zero and the validated
#: small-data fits stay as they were.
MIN_COARSE_N = 2000
#: switch for the coarse start (benchmarks compare with and without)
COARSE_START = True
#: PCG stopping reasons of the early-stopping rules
EARLY_STOP_REASONS = {"stability", "validation", "mixed"}
#: leave-one-out disagreement at the rule's width from which an early-stopped
#: PCG fit whose check kept the width is judged again on its iterate continued
#: to ``tol`` (the graph-right study cells stay below 9%, the graph-wrong ones
#: where this matters are at 20-35%; benchmarks/results/extension_study.md)
RECHECK_DISAGREEMENT = 0.15


class _PrimalMixin(ManifoldClassifierMixin):
    """fit() shared by LapSVM and LapRLS."""

    _loss = "squared_hinge"

    def _store_params(self, params: dict[str, Any]) -> None:
        """``__init__``'s body: store every parameter as given (scikit-learn's
        rule; ``params`` is the constructor's ``locals()``)."""
        for name in self._get_param_names():
            setattr(self, name, params[name])

    def _resolve_solver(self, n_samples: int) -> str:
        return self.solver

    def fit(
        self,
        X: Any,
        y: Any,
        *,
        adjacency: Any = None,
        X_val: Any = None,
        y_val: Any = None,
    ) -> Any:
        """Fit the model on labeled and unlabeled points.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training points, labeled and unlabeled.  With ``kernel='precomputed'``,
            the (n_samples, n_samples) Gram matrix.
        y : array-like of shape (n_samples,)
            Labels; ``-1`` marks an unlabeled point.
        adjacency : {array-like, sparse matrix} of shape (n_samples, n_samples), default=None
            Your own symmetric graph over the training points; the Laplacian is then
            built from it with ``normalize_laplacian`` and ``laplacian_power``.
        X_val, y_val : array-like, default=None
            Labeled validation set for ``early_stopping='validation'`` or ``'mixed'``
            (else ``validation_fraction`` of the labeled points is held out).  With
            ``record_history=True`` its error is recorded at every PCG iteration
            (``history_['eval_error']``).

        Returns
        -------
        self
        """
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            self._fit_once(X, y, adjacency=adjacency, X_val=X_val, y_val=y_val)
        pending = self.__dict__.pop("_graph_width_data", None)
        if pending is not None:
            # up to ten labels per class: the default or the narrow heat graph,
            # by the ratio cut of the transduction (semisvm.models._graphwidth);
            # the chosen model's warnings only
            X_fit, y_fit, knn_lists = pending
            caught = choose_graph_width(
                self,
                X_fit,
                y_fit,
                caught,
                dict(X_val=X_val, y_val=y_val),
                knn_lists=knn_lists,
            )
        for w in caught:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        return self

    def _fit_once(
        self,
        X: Any,
        y: Any,
        *,
        adjacency: Any = None,
        X_val: Any = None,
        y_val: Any = None,
    ) -> None:
        """``fit`` on the estimator's own graph.  When the graph-width rule
        applies, the validated ``(X, y)`` are left in ``_graph_width_data`` for
        :func:`~semisvm.models._graphwidth.choose_graph_width`."""
        t_fit = time.perf_counter()
        self.graph_selection_ = None
        self.graph_components_ = None
        X, y = self._validate_fit_input(X, y)
        opts = resolved_options(self)
        solver = self._resolve_solver(X.shape[0])
        labeled, classes, Y = self._targets(y)
        if is_distributed_array(X):
            from ._cluster_plan import fit_on_cluster

            # the in-process fit on one worker when it fits there (semisvm.models._cluster_plan)
            if fit_on_cluster(
                self,
                X,
                y,
                n_columns=Y.shape[1],
                need_graph=self._needs_graph() and adjacency is None,
                solver=solver,
                fit_kwargs=dict(adjacency=adjacency, X_val=X_val, y_val=y_val),
            ):
                return
        kind = self._resolve_operator(X, solver, Y.shape[1], adjacency)
        es = self._resolve_early_stopping(solver)
        if kind == "nystroem":
            es = None
        val_idx = None
        K_val = Y_val = None
        if es in ("validation", "mixed"):
            if X_val is None:
                if opts.validation_fraction is None:
                    raise ValueError(
                        f"early_stopping={es!r} needs validation data: pass X_val and "
                        "y_val to fit, or set options=SolverOptions("
                        "validation_fraction=...) to hold out part of the labeled "
                        "points."
                    )
                y_tr, val_idx = self._validation_split(
                    X, y, labeled, opts.validation_fraction, self.random_state
                )
                labeled, classes, Y = self._targets(y_tr)
        K, L = self._build(
            X,
            adjacency,
            need_graph=self._needs_graph(),
            fewest=fewest_labels(Y, labeled),
        )
        sw = self._sample_weight(y, labeled, classes)
        wsum = float(labeled.sum() if sw is None else sw[labeled].sum())
        t_sel = time.perf_counter()
        gamma_a, gamma_i, info = select_regularization(
            self,
            columns=self._kernel_columns(X, K),
            L=L,
            Y=Y,
            labeled=labeled,
            sample_weight=sw,
            loss=self._loss,
        )
        self.fit_times_["selection"] = time.perf_counter() - t_sel
        self.regularization_selection_ = dict(info, gamma_a=gamma_a, gamma_i=gamma_i)
        if self.verbose:
            self._print_selection(info, gamma_a, gamma_i, Y[labeled].shape[0])
        if gamma_i == 0:
            L = None
        self.gamma_a_, self.gamma_i_ = paper_regularization(
            opts.regularization,
            gamma_a,
            gamma_i,
            n=X.shape[0],
            weight_sum=wsum,
            L=L,
            power=self.laplacian_power_,
            scale=getattr(self, "_graph_scale", 1.0),
        )
        # "auto": no early stop while a component of the graph holds no label
        es = auto_early_stopping(self, es, L, labeled)
        if es in ("validation", "mixed") or X_val is not None:
            K_val, Y_val = self._validation_data(
                X, y, K, kind, classes, val_idx, X_val, y_val
            )
        solve_kw = dict(
            solver=solver, K_val=K_val, Y_val=Y_val, es=es, sample_weight=sw
        )
        t0 = time.perf_counter()
        res = None
        if (
            self.gamma_i_ == 0
            and kind in ("dense", "streamed")
            and (getattr(self, "loss", "squared_hinge") != "hinge")
        ):
            res = self._solve_supervised(K, Y, sw)
        if res is None:  # many fits on one K and L: shared factorizations
            res = self._solve_factorized(K, L, Y, sw, solver=solver, kind=kind)
        if res is None:
            res = self._solve(K, L, Y, **solve_kw)
            self.solver_ = (
                solver
                if kind != "nystroem"
                else ("lowrank-direct" if self._loss == "squared" else "lowrank-newton")
            )
        t_solver = time.perf_counter() - t0
        # the graph for class_prior='auto''s cut tests (dense graphs only)
        self._graph_laplacian = (
            L
            if hasattr(L, "shape") and L.shape[0] == X.shape[0] and kind == "dense"
            else None
        )
        # one label of a class: the graph reads the proportions (below 3-d);
        # the dimension, measured once, serves the graph-width rule's gate too
        dim = None
        if (
            prior_reading_applies(self._graph_laplacian, y[labeled], classes)
            and self.kernel != "precomputed"
        ):
            dim = data_dimension(self, X)
        self._reading_laplacian = (
            self._graph_laplacian if dim is not None and dim < MAX_DIMENSION else None
        )
        res, K = self._check_extension(
            res, K, L, Y, y, labeled, classes, kind, solve_kw
        )
        self._finish(res, K, X, y, labeled, classes, t_solver)
        # the entries sum to the whole fit: validation, targets, weights, the
        # output adaptation are 'other'
        total = time.perf_counter() - t_fit
        self.fit_times_["other"] = max(total - sum(self.fit_times_.values()), 0.0)
        knn_lists = self.__dict__.pop("_knn_lists", None)
        if graph_width_applies(
            self, X, y, fewest_labels(Y, labeled), adjacency, dimension=dim
        ):
            self._graph_width_data = (X, y, knn_lists)

    def _check_extension(
        self,
        res: Any,
        K: Any,
        L: Any,
        Y: np.ndarray,
        y: np.ndarray,
        labeled: np.ndarray,
        classes: np.ndarray,
        kind: str,
        solve_kw: dict[str, Any],
    ) -> tuple[Any, Any]:
        """The extension check of :mod:`semisvm.models._extension`: the
        graph-trusting fit refitted with a narrower RBF width when its
        training outputs do not extend to points left out of their interpolant.

        Runs when the graph term is on, the kernel is the RBF with a width rule
        (``gamma`` a string), K is dense, there are unlabeled points, the
        option ``extension_width`` is ``'auto'`` and the fit is not one of a
        search's shared-operator fits.  Sets ``extension_check_`` (None when it
        did not run) and returns the (possibly refitted) result and its K.

        Parameters
        ----------
        res : solver result
            The fit at the width of the rule.
        K, L : the fit's kernel and Laplacian
        Y : ndarray of shape (n, C)
        y, labeled, classes : the fit's labels, labeled mask and classes
        kind : str
            The operator kind (``'dense'``, ...).
        solve_kw : dict
            ``solver``, ``K_val``, ``Y_val``, ``es``, ``sample_weight`` of the
            fit's ``_solve`` call (``K_val`` is rescaled with K).

        Returns
        -------
        res, K
        """
        from ._extension import kernel_power

        self.extension_check_ = None
        opts = resolved_options(self)
        # a search's refit (LapSVMCV / LapRLSCV) whose width comes from the rule's
        # grid is checked too; its other shared-operator fits (K-fold) are not
        search_refit = getattr(self, "_search_refit", False)
        if (
            opts.extension_width != "auto"
            or not (isinstance(self.kernel, str) and self.kernel == "rbf")
            or not (isinstance(self.gamma, str) or search_refit)
            or kind != "dense"
            # the in-process K, or the cluster's distributed one (K.power)
            or not (isinstance(K, np.ndarray) or hasattr(K, "power"))
            or L is None
            or self.gamma_i_ == 0
            or labeled.all()
            or K.shape[0] < 20
            or (getattr(self, "_operator_cache", None) is not None and not search_refit)
            or not isinstance(solve_kw["K_val"], np.ndarray | type(None))
        ):
            return res, K
        t0 = time.perf_counter()
        seed = resolve_seed(self.random_state)
        m, info = self._judge_extension(res, K, L, y, labeled, classes, seed)
        info["judged_on"] = "the fit"
        continued = (
            m == 1.0
            and info["disagreement"][0] >= RECHECK_DISAGREEMENT
            and solve_kw["solver"] == "pcg"
            and bool(set(np.atleast_1d(res.reason).tolist()) & EARLY_STOP_REASONS)
        )
        if continued:
            # an early-stopped PCG iterate has the optimum's labels but not its
            # smoothness (narrower widths then look worse than they are): judge
            # the optimum, PCG continued to tol from the iterate
            opt = self._solve(
                K,
                L,
                Y,
                **dict(solve_kw, es=None),
                start={"alpha0": res.alpha, "b0": res.b},
            )
            m, info = self._judge_extension(opt, K, L, y, labeled, classes, seed)
            info["judged_on"] = "pcg continued to tol"
        info["gamma"] = float(self.gamma_)
        if m != 1.0:
            K = K.power(m) if hasattr(K, "power") else kernel_power(K, m)
            if solve_kw["K_val"] is not None:
                solve_kw = dict(solve_kw, K_val=kernel_power(solve_kw["K_val"], m))
            self.gamma_ = float(self.gamma_) * m
            # judged on the optimum: refit to tol (an early-stopped iterate at the
            # new width does not extend either)
            res = self._solve(
                K, L, Y, **dict(solve_kw, es=None if continued else solve_kw["es"])
            )
            self.solver_ = solve_kw["solver"]
        info["gamma_used"] = float(self.gamma_)
        self.extension_check_ = info
        self.fit_times_["extension"] = time.perf_counter() - t0
        return res, K

    def _judge_extension(self, res, K, L, y, labeled, classes, seed):
        """:func:`~semisvm.models._extension.choose_width_factor` on the training
        outputs of ``res``, balanced as ``fit`` balances them."""
        from ._adaptive import adapt_outputs
        from ._extension import choose_width_factor

        opts = resolved_options(self)
        b = np.asarray(res.b, dtype=np.float64).reshape(-1)
        # through the operator: a float32 K times float64 alpha in numpy would
        # upcast a copy of K (1.3 s of a 16 s fit on full USPS)
        Kop = as_operator(K) if isinstance(K, np.ndarray) else K
        F = np.asarray(Kop @ res.alpha, dtype=np.float64).reshape(K.shape[0], -1) + b
        _, off, _, _ = adapt_outputs(
            F,
            labeled,
            np.searchsorted(classes, y[labeled]),
            classes.size,
            class_balance=opts.class_balance,
            class_prior=opts.class_prior,
            laplacian=L if hasattr(L, "shape") else None,
            reading=getattr(self, "_reading_laplacian", None),
        )
        return choose_width_factor(K, F, b, off, random_state=seed)

    def _print_selection(
        self, info: dict, gamma_a: float, gamma_i: float, n_labeled: int
    ) -> None:
        """``verbose``: the regularization pairs scored and the one chosen."""
        name = type(self).__name__
        if info["rule"] == "loo":
            print(
                f"[{name}] choosing (gamma_a, gamma_i) by {info['criterion']} "
                f"on {n_labeled} labeled points "
                f"({self.fit_times_['selection']:.2f} s):"
            )
            for p, v, e in zip(
                info["pairs"], info["scores"], info["loo_error"], strict=True
            ):
                mark = " <- chosen" if p == (gamma_a, gamma_i) else ""
                print(
                    f"[{name}]   gamma_a={p[0]:g}, gamma_i={p[1]:g}: "
                    f"criterion {v:.4g}, LOO error {e:.1%}{mark}"
                )
        print(f"[{name}] gamma_a={gamma_a:g}, gamma_i={gamma_i:g} ({info['reason']})")

    def _validation_data(
        self,
        X: Any,
        y: Any,
        K: Any,
        kind: str,
        classes: np.ndarray,
        val_idx: np.ndarray | None,
        X_val: Any,
        y_val: Any,
    ) -> tuple[Any, np.ndarray]:
        """Kernel rows and targets of the validation points: the held-out labeled
        points ``val_idx``, else ``(X_val, y_val)``."""
        if val_idx is not None:
            K_val = K.rows(val_idx) if kind == "streamed" else K[val_idx]
            yv = np.asarray(y)[val_idx]
        else:
            if y_val is None:
                raise ValueError("X_val was given without y_val.")
            self.classes_ = classes  # needed for the test kernel
            K_val, yv = self._val_kernel(X, K, X_val, y_val)
        return K_val, self._val_targets(yv, classes)

    def _solve_supervised(self, K: Any, Y: np.ndarray, sw: Any) -> Any:
        r"""gamma_I = 0: the exact solution lives on the labeled points.

        Without the intrinsic term the objective depends on :math:`\alpha` only
        through :math:`K_{\cdot\mathcal L}`-rows of the labeled points, and the
        representer theorem puts the minimiser in their span: :math:`\alpha_U = 0`
        and :math:`\alpha_{\mathcal L}` solves the same problem on
        :math:`K_{\mathcal L\mathcal L}` (l x l), by Newton or one direct solve.
        """
        import dataclasses

        lab = np.flatnonzero(np.any(Y != 0, axis=1))
        if isinstance(K, np.ndarray):
            KLL = np.asarray(K[np.ix_(lab, lab)], dtype=np.float64)
        elif hasattr(K, "rows"):
            KLL = np.asarray(K.rows(lab)[:, lab], dtype=np.float64)
        else:
            return None
        KLL = 0.5 * (KLL + KLL.T)
        w = None if sw is None else np.asarray(sw)[lab]
        if self._loss == "squared":
            res = laprls_direct(
                KLL,
                Y[lab],
                gamma_a=self.gamma_a_,
                gamma_i=0.0,
                sample_weight=w,
            )
            self.solver_ = "direct-labeled"
        else:
            res = lapsvm_newton(
                KLL,
                Y[lab],
                gamma_a=self.gamma_a_,
                gamma_i=0.0,
                sample_weight=w,
                max_iter=max(self.max_iter, 50),
            )
            self.solver_ = "newton-labeled"
        alpha = np.zeros((Y.shape[0], Y.shape[1]))
        alpha[lab] = res.alpha
        return dataclasses.replace(res, alpha=alpha)

    def _needs_graph(self) -> bool:
        return isinstance(self.gamma_i, str) or float(self.gamma_i) > 0

    def _kernel_columns(self, X: Any, K: Any) -> Any:
        """``idx -> K[:, idx]`` for the LOO features (None on a cluster)."""
        if isinstance(K, np.ndarray):
            return lambda idx: np.asarray(K[:, idx], dtype=np.float64)
        if is_distributed_array(X):
            # the same columns as in process, read or computed on the workers
            if hasattr(K, "columns"):
                return K.columns
            from ..kernels._distributed import DistributedKernelColumns

            return DistributedKernelColumns(X, **fitted_kernel_params(self))

        def columns(idx: np.ndarray) -> np.ndarray:
            return np.asarray(prediction_kernel(self, X, X[idx]), dtype=np.float64)

        return columns

    def _resolve_early_stopping(self, solver: str) -> str | None:
        es = getattr(self, "early_stopping", None)
        if es == "auto":
            return "stability" if solver == "pcg" else None
        if es is not None and solver != "pcg":
            raise ValueError(
                f"early_stopping={es!r} applies to solver='pcg' only; solver="
                f"{solver!r} is a direct method that runs to its exact solution. Use "
                "early_stopping=None (or 'auto') with this solver."
            )
        return es

    def _sample_weight(self, y, labeled, classes):
        from ._adaptive import label_weights

        y_enc = np.zeros(y.shape[0], dtype=np.intp)
        y_enc[labeled] = np.searchsorted(classes, y[labeled])
        return label_weights(y_enc, labeled, classes, self.class_weight)

    def _resolve_operator(self, X, solver, n_columns, adjacency) -> str:
        """Choose the kernel operator (``kernel_operator_``), memory checked first."""
        opts = resolved_options(self)
        if self.kernel == "precomputed" and opts.kernel_approximation in (
            "streamed",
            "nystroem",
        ):
            raise ValueError(
                f"kernel_approximation={opts.kernel_approximation!r} computes kernel "
                "values from the features; with kernel='precomputed' use 'dense' "
                "(or 'auto')."
            )
        requested = (
            "dense" if self.kernel == "precomputed" else opts.kernel_approximation
        )
        if is_distributed_array(X):
            plan = getattr(self, "cluster_plan_", None)
            if requested == "auto" and plan is not None:
                requested = plan["operator"]
            kind = resolve_distributed_operator(
                requested,
                n=X.shape[0],
                solver=solver,
                verbose=self.verbose,
                name=type(self).__name__,
            )
            self.kernel_operator_ = kind
            return kind
        kind = resolve_operator(
            requested,
            n=X.shape[0],
            d=X.shape[1],
            n_columns=n_columns,
            itemsize=X.dtype.itemsize,
            n_neighbors=self.n_neighbors,
            n_components=opts.n_components,
            graph=opts.graph_method,
            need_graph=self._needs_graph() and adjacency is None,
            solver=solver,
            dense_only_solvers=("dual",),
            verbose=self.verbose,
            name=type(self).__name__,
        )
        self.kernel_operator_ = kind
        return kind

    def _val_kernel(self, X, K, X_val, y_val):
        X_val = validate_data(
            self,
            X_val,
            accept_sparse="csr",
            dtype=[np.float64, np.float32],
            reset=False,
            ensure_all_finite=False,
        )
        check_finite(X_val, "X_val")
        y_val = np.asarray(y_val)
        if y_val.shape[0] != X_val.shape[0]:
            raise ValueError(
                f"X_val has {X_val.shape[0]} rows but y_val has {y_val.shape[0]}."
            )
        if self.kernel == "precomputed":
            return np.asarray(X_val), y_val
        return prediction_kernel(self, X_val, X), y_val

    @staticmethod
    def _val_targets(yv: np.ndarray, classes: np.ndarray) -> np.ndarray:
        try:
            return one_vs_rest(yv, classes)
        except ValueError as exc:
            raise ValueError(f"y_val: {exc}") from None

    def _solve_lowrank(self, factor, L, Y, sample_weight=None):
        if sample_weight is not None:
            raise ValueError(
                "class_weight is not available with kernel_approximation='nystroem' "
                "(the m-space solver has unit loss weights); use class_weight=None, "
                "or kernel_approximation='dense' / 'streamed'."
            )
        # a factor whose C lives elsewhere (a cluster) computes the m-space
        # intrinsic matrix where C is; the in-process one lets the solver do it
        opts = resolved_options(self)
        M = None
        if L is not None and self.gamma_i_ != 0 and hasattr(factor, "feature_gram"):
            M = factor.feature_gram(L, intrinsic_bias=opts.intrinsic_bias)
        return lapsvm_lowrank(
            factor.C_,
            Y,
            L=L,
            gamma_a=self.gamma_a_,
            gamma_i=self.gamma_i_,
            loss=self._loss,
            intrinsic_bias=opts.intrinsic_bias,
            max_iter=max(self.max_iter, 1),
            T=factor.components_,
            M=M,
        )

    def _pcg_start(self, K, L, Y, loss, sample_weight) -> dict:
        """PCG's start: the exact optimum on landmarks (solvers._coarse), or zero.

        Used whenever the graph term is on and the loss is unweighted: PCG then
        starts from outputs already spread over the graph instead of zero, so that
        early stopping cannot fire before the labels have spread (issue 28).
        """
        if (
            not COARSE_START
            or L is None
            or self.gamma_i_ == 0
            or sample_weight is not None
            or Y.shape[0] <= MIN_COARSE_N
        ):
            return {}
        alpha0, b0, info = coarse_start(
            K,
            Y,
            L=L,
            gamma_a=self.gamma_a_,
            gamma_i=self.gamma_i_,
            loss=loss,
            intrinsic_bias=resolved_options(self).intrinsic_bias,
            random_state=resolve_seed(self.random_state),
        )
        self.coarse_start_ = info
        if self.verbose:
            print(
                f"[{type(self).__name__}] coarse start: exact optimum on "
                f"{info['n_landmarks']} landmarks (rank {info['rank']})"
            )
        return {"alpha0": alpha0, "b0": b0}

    def _pcg_kwargs(self, K_val, Y_val, es):
        opts = resolved_options(self)
        return dict(
            max_iter=self.max_iter,
            tol=self.tol,
            tol_criterion=opts.tol_criterion,
            early_stopping=es,
            check_every=opts.check_every,
            stability_tol=opts.stability_tol,
            stability_value_tol=opts.stability_value_tol,
            stability_window=opts.stability_window,
            preconditioner=opts.preconditioner,
            random_state=resolve_seed(self.random_state),
            K_val=K_val,
            Y_val=Y_val,
            K_eval=K_val if opts.record_history else None,
            Y_eval=Y_val if opts.record_history else None,
            record_history=opts.record_history,
            intrinsic_bias=opts.intrinsic_bias,
            callback=self._verbose_callback() if self.verbose else None,
        )

    def _verbose_callback(self):
        every = max(1, int(self.verbose) if not isinstance(self.verbose, bool) else 10)
        name = type(self).__name__

        def cb(state):
            it = state["iteration"]
            if it % every == 0:
                obj = np.atleast_1d(np.asarray(state["objective"], dtype=np.float64))
                n_act = int(np.sum(state["active"]))
                # one line whatever the number of columns (one per class)
                text = (
                    f"{obj[0]:.6g}"
                    if obj.size == 1
                    else f"sum {obj.sum():.6g} (max {obj.max():.6g} of {obj.size} "
                    f"columns, {n_act} still active)"
                )
                print(f"[{name}] iter {it:5d}  objective {text}")
            return False

        return cb


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
        + \frac{\lambda_I}{n \bar d^{\,p}} f_I^T L^p f_I\Big],

    (:math:`c_i` the ``class_weight`` of point i, 1 by default;
    :math:`\bar d = \mathrm{tr}(L)/n`, the mean degree for :math:`D - W`, 1 for
    the normalized Laplacian), i.e. Eq. 7 with :math:`\gamma_A = (\sum_i c_i)
    \lambda_A` and :math:`\gamma_I = (\sum_i c_i)\lambda_I/(n\bar d^{\,p})`
    (stored in ``gamma_a_``, ``gamma_i_``): the same values mean the same
    trade-off at every n, every number of labels and every graph.
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
        The kernel operator used: ``'dense'``, ``'streamed'`` or ``'nystroem'``.
    landmarks_ : ndarray of shape (m, n_features) or None
        Nyström landmarks; ``dual_coef_`` then holds the m coefficients of
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

    def _solve(
        self, K, L, Y, *, solver, K_val, Y_val, es, sample_weight=None, start=None
    ):
        ga, gi = self.gamma_a_, self.gamma_i_
        if self.loss == "hinge" and solver != "dual":
            raise ValueError(
                f"loss='hinge' is solved by solver='dual' only; solver={solver!r} "
                "minimises the squared hinge (loss='squared_hinge')."
            )
        if self.kernel_operator_ == "nystroem":
            return self._solve_lowrank(K, L, Y, sample_weight)
        if solver == "newton":
            return lapsvm_newton(
                K,
                Y,
                L=L,
                gamma_a=ga,
                gamma_i=gi,
                max_iter=self.max_iter,
                intrinsic_bias=resolved_options(self).intrinsic_bias,
                sample_weight=sample_weight,
            )
        if solver == "dual":
            from ..solvers._dual import lapsvm_dual

            if resolved_options(self).intrinsic_bias and L is not None and gi != 0:
                L1 = np.asarray(L @ np.ones(K.shape[0]))
                if np.abs(L1).max() > 1e-10:
                    raise ValueError(
                        "solver='dual' penalises K alpha only, but intrinsic_bias=True "
                        "asks to penalise K alpha + b with a Laplacian whose rows do not "
                        "sum to 0 (normalize_laplacian=True). Set "
                        "options=SolverOptions(intrinsic_bias=False), or "
                        "normalize_laplacian=False (then both forms are equal), or "
                        "use solver='newton' or 'pcg'."
                    )
            return lapsvm_dual(
                K,
                L,
                Y,
                gamma_a=ga,
                gamma_i=gi,
                loss=self.loss,
                sample_weight=sample_weight,
                tol=self.tol if self.tol > 0 else 1e-12,
                max_iter=self.max_iter,
            )
        return lapsvm_pcg(
            as_operator(K),
            Y,
            L=L,
            gamma_a=ga,
            gamma_i=gi,
            loss="squared_hinge",
            sample_weight=sample_weight,
            **(
                start
                if start is not None
                else self._pcg_start(K, L, Y, "squared_hinge", sample_weight)
            ),
            **self._pcg_kwargs(K_val, Y_val, es),
        )


#: ``LapRLS(solver="auto")`` factorizes up to this many training points, PCG above
LAPRLS_DIRECT_MAX_N = 10_000


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
        ``LapSVM()``: along two spirals and two noisy circles with one to five
        labels per class the stopped iterate errs less than the exact optimum;
        over 1,380 benchmark draws in 138 cells the mean error is lower in every
        family list and one cell is worse by more than half a point;
        BENCHMARKS.md, session 19); ``'direct'`` solves the linear system of
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

    def _resolve_solver(self, n_samples: int) -> str:
        if self.solver != "auto":
            return self.solver
        return "direct" if n_samples <= LAPRLS_DIRECT_MAX_N else "pcg"

    def _solve(
        self, K, L, Y, *, solver, K_val, Y_val, es, sample_weight=None, start=None
    ):
        ga, gi = self.gamma_a_, self.gamma_i_
        if self.kernel_operator_ == "nystroem":
            return self._solve_lowrank(K, L, Y, sample_weight)
        if solver == "direct":
            return laprls_direct(
                K,
                Y,
                L=L,
                gamma_a=ga,
                gamma_i=gi,
                intrinsic_bias=resolved_options(self).intrinsic_bias,
                sample_weight=sample_weight,
            )
        return lapsvm_pcg(
            as_operator(K),
            Y,
            L=L,
            gamma_a=ga,
            gamma_i=gi,
            loss="squared",
            sample_weight=sample_weight,
            **(
                start
                if start is not None
                else self._pcg_start(K, L, Y, "squared", sample_weight)
            ),
            **self._pcg_kwargs(K_val, Y_val, es),
        )
