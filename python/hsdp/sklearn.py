"""scikit-learn estimators trained by hsdp's private trainer (docs/python.md, "scikit-learn
estimators").

    from hsdp.sklearn import LogisticRegression
    clf = LogisticRegression(epsilon=1, feature_ranges="data/feature-ranges/breast_cancer.txt")
    clf.fit(X_train, y_train).score(X_test, y_test)
    clf.privacy_report_.epsilon          # the certificate of this fit (hsdp.Report)

Three estimators, each one `hsdp.train` request per `fit` (the same request as `hsdp train`
on the records handed over in memory), so each fit is the run hsdp plans, calibrates to the
target (epsilon, delta), runs and certifies:

  LogisticRegression   binary: the logistic loss; more than 2 classes (or
                       multi_class="multinomial"): the softmax loss, as scikit-learn's
  SoftmaxRegression    the softmax (multinomial logistic) loss for any number of classes
  LinearRegression     the squared loss

Every fit spends privacy: a hyperparameter search or a cross-validation on private data is
the composition of all its fits.
"""

import json
import numbers
import warnings

import numpy as np
from scipy.special import expit, log_expit, log_softmax, softmax
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

import hsdp

__all__ = ["LogisticRegression", "SoftmaxRegression", "LinearRegression"]

_SEED_MAX = 2**64 - 1

# Checks of scikit-learn's check_estimator that a private estimator cannot pass, with the
# reason (the `_xfail_checks` tag; docs/python.md lists them).
_CLASSES_REASON = (
    "a private fit may predict fewer classes than it was trained on: check_classifiers_classes "
    "asks a model trained on 20-30 records to predict every training label back, and at "
    "epsilon = 1 the noise needed for 20 records can outweigh their signal")

# The `poor_score` tag (scikit-learn's own tag for estimators whose score on its toy data is
# not guaranteed): check_classifiers_train wants training accuracy > 0.83 on 200-300 records
# and check_regressors_train R^2 > 0.5 on 200; a private model at epsilon = 1 on so few
# records is not guaranteed to reach either (the noise is calibrated to the privacy target,
# not to the score). The checks still run every other assertion.


def _is_int(value):
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def _is_number(value):
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def _seed(random_state):
    """hsdp's seed for random_state: None (operating-system entropy), an int, or a numpy
    RandomState / Generator (a seed drawn from it). A seeded fit is reproducible and marked
    "seeded: for experiments" in its report; its batch order counts as known."""
    if random_state is None:
        return None
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(np.iinfo(np.int32).max))
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(np.iinfo(np.int64).max))
    if not _is_int(random_state):
        raise TypeError(
            f"random_state = {random_state!r}: must be None (unseeded: operating-system entropy), an int "
            f"in [0, {_SEED_MAX}] (a seed, for experiments) or a numpy RandomState or Generator")
    if not 0 <= int(random_state) <= _SEED_MAX:
        raise ValueError(
            f"random_state = {random_state}: must be in [0, {_SEED_MAX}] (a seed, for experiments), or "
            "None for an unseeded fit")
    return int(random_state)


def _require_bool(name, value):
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} = {value!r}: must be True or False")
    return bool(value)


def _report_from_json(text):
    """The report of a fit, recomputed by hsdp from the run it records, and checked to be the
    same report byte for byte (an unpickled estimator carries the certificate of its own fit,
    never a new one)."""
    document = json.loads(text)
    run = dict(document["run"])
    grid = run.pop("noise_grid", None)  # the report's JSON nests the noise grid's charges
    if grid is not None:
        run.update(grid_slack=float(grid["slack"]), grid_epsilon=float(grid["epsilon"]),
                   grid_log_beta=float(grid["log_beta"]))
    report = hsdp.account(hsdp.Run(**run), **document["query"])
    if report.to_json() != text:
        raise ValueError(
            "privacy_report_: this hsdp (" + hsdp.__version__ + ") does not reproduce the report "
            "the estimator was pickled with; unpickle it with the hsdp version that fitted it")
    return report


class _HsdpLinearModel(BaseEstimator):
    """What the three estimators share: the parameters of the training request, one
    `hsdp.train` per fit, the preparation of records as the trainer prepared them, pickling."""

    # Fitted attributes (set by fit; annotations only, so that type checkers know them).
    privacy_report_: "hsdp.Report"
    coef_: np.ndarray
    n_features_in_: int

    # hsdp.train keywords that are parameters of the estimators under the same name.
    _TRAIN_KEYWORDS = ("algorithm", "sampling", "batch_size", "epochs", "steps", "eta", "l2",
                       "constraint", "radius", "record_norm", "clip", "release", "drop_last",
                       "order_known", "adjacency", "noise")

    def __init__(self, *, epsilon, delta, feature_ranges, feature_scale, fit_intercept, algorithm,
                 sampling, batch_size, epochs, steps, eta, l2, constraint, radius, record_norm, clip,
                 release, drop_last, order_known, adjacency, noise, random_state):
        self.epsilon = epsilon
        self.delta = delta
        self.feature_ranges = feature_ranges
        self.feature_scale = feature_scale
        self.fit_intercept = fit_intercept
        self.algorithm = algorithm
        self.sampling = sampling
        self.batch_size = batch_size
        self.epochs = epochs
        self.steps = steps
        self.eta = eta
        self.l2 = l2
        self.constraint = constraint
        self.radius = radius
        self.record_norm = record_norm
        self.clip = clip
        self.release = release
        self.drop_last = drop_last
        self.order_known = order_known
        self.adjacency = adjacency
        self.noise = noise
        self.random_state = random_state

    # --- fitting -------------------------------------------------------------------------

    def _train(self, X, y, model, **extra):
        """One hsdp.train request on the validated records X (float64) and labels y (already
        in the form the loss reads); keeps the parameters, the preparation constants and the
        report, nothing else of the result (the model file also holds the training accuracy
        and loss, statistics of the data that the certificate does not cover)."""
        if self.epsilon is None or not _is_number(self.epsilon):
            raise TypeError(f"epsilon = {self.epsilon!r}: must be a number > 0 (the privacy target of the fit)")
        options = {name: getattr(self, name) for name in self._TRAIN_KEYWORDS}
        scale = self.feature_scale
        if scale is None:
            scale = []
        elif _is_number(scale):
            scale = [scale]
        result = hsdp.train(
            X, y, model=model, epsilon=self.epsilon, delta=self.delta,
            feature_ranges=self.feature_ranges, feature_scale=scale,
            bias=_require_bool("fit_intercept", self.fit_intercept), seed=_seed(self.random_state),
            **options, **extra)
        m = result.model
        self._center = None if m.feature_center is None else np.asarray(m.feature_center, dtype=np.float64)
        self._scale = None if m.feature_scale is None else np.asarray(m.feature_scale, dtype=np.float64)
        self._record_norm = float(m.record_norm)
        self._weights = np.array(m.weights, dtype=np.float64)
        self._bias = (np.zeros(self._weights.shape[0]) if m.intercept is None
                      else np.asarray(m.intercept, dtype=np.float64))
        self.privacy_report_ = result.report
        return m

    # --- prediction ----------------------------------------------------------------------

    def prepare(self, X):
        """The records as the model sees them, prepared as the trainer prepared the training
        records: centred and scaled by the public feature constants (feature_ranges or
        feature_scale), then each record scaled to L2 norm <= record_norm (record-local).
        decision_function(X) (classifiers) and predict(X) (LinearRegression) equal
        prepare(X) @ coef_.T + intercept_."""
        check_is_fitted(self, "privacy_report_")
        X = self._validate_data(X, reset=False, dtype=np.float64, order="C")
        X = np.array(X, dtype=np.float64, copy=True)
        if self._center is not None:
            X -= self._center
        if self._scale is not None:
            X *= self._scale
        norms = np.linalg.norm(X, axis=1)
        over = norms > self._record_norm
        X[over] *= (self._record_norm / norms[over])[:, None]
        return X

    def _scores(self, X):
        """prepare(X) @ W.T + b in the trainer's own parameters: n x outputs."""
        return self.prepare(X) @ self._weights.T + self._bias

    # --- pickling: everything is numpy or text except the report, recomputed by hsdp ---------

    def __getstate__(self):
        state = dict(super().__getstate__())  # a copy: Python 3.11 hands over __dict__ itself
        report = state.pop("privacy_report_", None)
        if report is not None:
            state["_privacy_report_json"] = report.to_json()
        return state

    def __setstate__(self, state):
        state = dict(state)
        text = state.pop("_privacy_report_json", None)
        super().__setstate__(state)
        if text is not None:
            self.privacy_report_ = _report_from_json(text)


class _Classifier(ClassifierMixin, _HsdpLinearModel):
    """Labels of any type: classes_ are the sorted distinct labels of y, the trainer sees their
    indices, and predictions map back to them."""

    def _use_softmax(self, n_classes):
        raise NotImplementedError

    def fit(self, X, y):
        """Trains the model with hsdp (one private fit: it spends the privacy budget
        (epsilon, delta) of the training data) and returns self. privacy_report_ is the
        certificate of this fit."""
        X, y = self._validate_data(X, y, dtype=np.float64, order="C")
        check_classification_targets(y)
        classes, indices = np.unique(y, return_inverse=True)
        if len(classes) < 2:
            raise ValueError(
                f"y has 1 class ({classes[0]!r}): a classifier needs at least 2 classes")
        softmax_loss = self._use_softmax(len(classes))
        model = self._train(X, indices.astype(np.int64), "softmax" if softmax_loss else "logistic")
        # The trainer maps class indices in numeric order: index i is output i (softmax), and
        # index 1 is the +1 label (logistic). Checked, so a change there cannot swap classes.
        expected = ({i: float(i) for i in range(len(classes))} if softmax_loss else {0: -1.0, 1: 1.0})
        if model.label_mapping != expected:  # pragma: no cover - a library contract
            raise RuntimeError(f"hsdp mapped the classes as {model.label_mapping}, not {expected}")
        self.classes_ = classes
        if softmax_loss and len(classes) == 2:
            # One column, as scikit-learn's binary classifiers: the log-odds of classes_[1].
            self._weights = self._weights[1:] - self._weights[:1]
            self._bias = self._bias[1:] - self._bias[:1]
        self.coef_ = self._weights.copy()
        self.intercept_ = self._bias.copy()
        return self

    def decision_function(self, X):
        """Scores prepare(X) @ coef_.T + intercept_: shape (n,) for two classes (the
        log-odds of classes_[1]), (n, n_classes) otherwise."""
        s = self._scores(X)
        return s[:, 0] if s.shape[1] == 1 else s

    def predict_proba(self, X):
        """Class probabilities (n, n_classes), columns in the order of classes_."""
        s = self._scores(X)
        if s.shape[1] == 1:
            p = expit(s[:, 0])
            return np.column_stack([1.0 - p, p])
        return softmax(s, axis=1)

    def predict_log_proba(self, X):
        """Logarithms of predict_proba, computed without underflow."""
        s = self._scores(X)
        if s.shape[1] == 1:
            return np.column_stack([log_expit(-s[:, 0]), log_expit(s[:, 0])])
        return log_softmax(s, axis=1)

    def predict(self, X):
        """The label of each record, in the values of y (classes_)."""
        s = self._scores(X)
        if s.shape[1] == 1:
            return self.classes_[(s[:, 0] > 0).astype(np.intp)]
        return self.classes_[np.argmax(s, axis=1)]

    def _more_tags(self):
        return {"poor_score": True,
                "_xfail_checks": {"check_classifiers_classes": _CLASSES_REASON}}


_PARAMS_DOC = """
    Parameters (keyword only; None = hsdp's default or its plan):
    epsilon : float, default 1.0
        The privacy target: the fit is calibrated so that its certificate (privacy_report_)
        is at most epsilon at delta. Every fit spends it (a search over hyperparameters or a
        cross-validation spends it once per fit).
    delta : float or None, default None (hsdp's 1e-5)
    feature_ranges : str, list of (min, max) or None
        Public range of each feature (a file such as data/feature-ranges/wine.txt, or one
        pair or one per feature), from the data set's documentation: each feature is mapped
        onto [-1, 1]. Public constants, never computed from the training data (that would
        spend privacy the certificate does not count).
    feature_scale : float, list of float or None
        Public multipliers, one or one per feature (instead of ranges). Never computed from
        the training data either.
    fit_intercept : bool, default True
        A bias (hsdp's constant feature 1, counted in the record norm).
    algorithm, sampling, batch_size, epochs, steps, eta, l2, constraint, radius,
    record_norm, clip, release, drop_last, order_known, adjacency, noise
        The options of hsdp.train (docs/training.md), under the same names and with its
        defaults; those left None are planned by hsdp from public quantities (n, the loss
        constants, epsilon, delta) and the plan never reads a record.
    random_state : None, int, numpy RandomState or Generator, default None
        None: the noise and the batch order come from operating-system entropy (for a
        model you release). An int is hsdp's seed: the fit is reproducible, marked
        "seeded: for experiments" in its report, and its batch order counts as known (the
        certificate does not assume it hidden). A RandomState or Generator gives a seed
        drawn from it.
"""

_ATTRIBUTES_DOC = """
    Attributes:
    coef_, intercept_ : the model's parameters on the prepared records (prepare(X)):
        decision_function / predict is prepare(X) @ coef_.T + intercept_.
    n_features_in_, feature_names_in_ (when X is a DataFrame with string column names)
    privacy_report_ : hsdp.Report, the certificate of the fit: hsdp's report of the run that
        ran (epsilon, delta, best, adjacency, add_remove_epsilon, table(), to_json()).
"""


class LogisticRegression(_Classifier):
    __doc__ = """Private logistic regression (hsdp's noisy gradient descent, certified).

    Two classes: the logistic loss (coef_ has one row, decision_function gives the log-odds
    of classes_[1]). More than two: the softmax (multinomial) loss, as scikit-learn's
    LogisticRegression does by default; multi_class="multinomial" uses it for two classes
    too. One-vs-rest is not offered: it would be k private fits, each spending the budget.
    """ + _PARAMS_DOC + """    multi_class : "auto" (default) or "multinomial"
""" + _ATTRIBUTES_DOC + """    classes_ : the labels of y, sorted (any type: str, int, ...)
"""

    def __init__(self, *, epsilon=1.0, delta=None, feature_ranges=None, feature_scale=None,
                 fit_intercept=True, multi_class="auto", algorithm="noisy-sgd", sampling=None,
                 batch_size=None, epochs=None, steps=None, eta=None, l2=0.0, constraint="ball",
                 radius=None, record_norm=None, clip=None, release=None, drop_last=None,
                 order_known=None, adjacency=None, noise="gaussian", random_state=None):
        super().__init__(epsilon=epsilon, delta=delta, feature_ranges=feature_ranges,
                         feature_scale=feature_scale, fit_intercept=fit_intercept, algorithm=algorithm,
                         sampling=sampling, batch_size=batch_size, epochs=epochs, steps=steps, eta=eta,
                         l2=l2, constraint=constraint, radius=radius, record_norm=record_norm, clip=clip,
                         release=release, drop_last=drop_last, order_known=order_known,
                         adjacency=adjacency, noise=noise, random_state=random_state)
        self.multi_class = multi_class

    def _use_softmax(self, n_classes):
        if self.multi_class not in ("auto", "multinomial"):
            raise ValueError(
                f"multi_class = {self.multi_class!r}: must be 'auto' (logistic loss for 2 classes, "
                "softmax for more) or 'multinomial' (softmax); one-vs-rest would be one private fit "
                "per class")
        return self.multi_class == "multinomial" or n_classes > 2


class SoftmaxRegression(_Classifier):
    __doc__ = """Private softmax (multinomial logistic) regression for any number of classes
    (hsdp's softmax loss; LogisticRegression(multi_class="multinomial") is the same model).
    For two classes coef_ has one row, the difference of the two classes' rows.
    """ + _PARAMS_DOC + _ATTRIBUTES_DOC + """    classes_ : the labels of y, sorted (any type)
"""

    def __init__(self, *, epsilon=1.0, delta=None, feature_ranges=None, feature_scale=None,
                 fit_intercept=True, algorithm="noisy-sgd", sampling=None, batch_size=None,
                 epochs=None, steps=None, eta=None, l2=0.0, constraint="ball", radius=None,
                 record_norm=None, clip=None, release=None, drop_last=None, order_known=None,
                 adjacency=None, noise="gaussian", random_state=None):
        super().__init__(epsilon=epsilon, delta=delta, feature_ranges=feature_ranges,
                         feature_scale=feature_scale, fit_intercept=fit_intercept, algorithm=algorithm,
                         sampling=sampling, batch_size=batch_size, epochs=epochs, steps=steps, eta=eta,
                         l2=l2, constraint=constraint, radius=radius, record_norm=record_norm, clip=clip,
                         release=release, drop_last=drop_last, order_known=order_known,
                         adjacency=adjacency, noise=noise, random_state=random_state)

    def _use_softmax(self, n_classes):
        return True


class LinearRegression(RegressorMixin, _HsdpLinearModel):
    __doc__ = """Private least-squares regression (hsdp's squared loss (s - y)^2 / 2, with an l2
    penalty when l2 > 0: ridge).

    The squared loss's Lipschitz constant grows with the largest |y|, so the target needs a
    public bound too: target_range = (min, max) maps y onto [-1, 1] (and predictions back),
    or label_bound = Y keeps y as it is with |y| <= Y (hsdp's label_bound, default 1).
    Targets outside are clipped to the bound (record-local: it costs no privacy), with a
    warning to the data owner saying how many. Public constants, never computed from the
    training data.
    """ + _PARAMS_DOC + """    target_range : (min, max) or None
    label_bound : float or None (hsdp's default 1.0; not with target_range)
""" + _ATTRIBUTES_DOC

    def __init__(self, *, epsilon=1.0, delta=None, feature_ranges=None, feature_scale=None,
                 target_range=None, label_bound=None, fit_intercept=True, algorithm="noisy-sgd",
                 sampling=None, batch_size=None, epochs=None, steps=None, eta=None, l2=0.0,
                 constraint="ball", radius=None, record_norm=None, clip=None, release=None,
                 drop_last=None, order_known=None, adjacency=None, noise="gaussian",
                 random_state=None):
        super().__init__(epsilon=epsilon, delta=delta, feature_ranges=feature_ranges,
                         feature_scale=feature_scale, fit_intercept=fit_intercept, algorithm=algorithm,
                         sampling=sampling, batch_size=batch_size, epochs=epochs, steps=steps, eta=eta,
                         l2=l2, constraint=constraint, radius=radius, record_norm=record_norm, clip=clip,
                         release=release, drop_last=drop_last, order_known=order_known,
                         adjacency=adjacency, noise=noise, random_state=random_state)
        self.target_range = target_range
        self.label_bound = label_bound

    def _target_map(self):
        """(centre, half width, bound): y is trained as (y - centre) / half clipped to
        [-bound, bound], and a score s predicts centre + half * s."""
        if self.target_range is not None:
            if self.label_bound is not None:
                raise ValueError(
                    f"label_bound = {self.label_bound!r} with target_range = {self.target_range!r}: "
                    "give one of them (target_range maps y onto [-1, 1])")
            try:
                low, high = (float(v) for v in self.target_range)
            except (TypeError, ValueError):
                raise ValueError(
                    f"target_range = {self.target_range!r}: must be a pair (min, max) of finite "
                    "numbers with min < max") from None
            if not (np.isfinite(low) and np.isfinite(high) and low < high and np.isfinite(high - low)):
                raise ValueError(
                    f"target_range = {self.target_range!r}: must be a pair (min, max) of finite "
                    "numbers with min < max")
            return low / 2 + high / 2, high / 2 - low / 2, 1.0
        bound = 1.0 if self.label_bound is None else self.label_bound
        if not _is_number(bound) or not (np.isfinite(bound) and bound > 0):
            raise ValueError(f"label_bound = {self.label_bound!r}: must be a finite number > 0")
        return 0.0, 1.0, float(bound)

    def fit(self, X, y):
        """Trains the model with hsdp (one private fit: it spends the privacy budget
        (epsilon, delta) of the training data) and returns self. privacy_report_ is the
        certificate of this fit."""
        X, y = self._validate_data(X, y, dtype=np.float64, order="C", y_numeric=True)
        centre, half, bound = self._target_map()
        t = (np.asarray(y, dtype=np.float64) - centre) / half
        outside = int(np.count_nonzero(np.abs(t) > bound))
        if outside:
            stated = (f"target_range = {tuple(self.target_range)}" if self.target_range is not None
                      else f"[-label_bound, label_bound] = [{-bound}, {bound}]")
            warnings.warn(
                f"for the data owner, not released: {outside} of the {len(t)} training targets lie "
                f"outside {stated} and were clipped to it (the squared loss's privacy constants "
                "need a public bound on |y|); state the target's public range with target_range "
                "to keep them", UserWarning, stacklevel=2)
            t = np.clip(t, -bound, bound)
        self._train(X, t, "squared", label_bound=bound)
        self._target_centre, self._target_half = centre, half
        self.coef_ = half * self._weights[0]
        self.intercept_ = centre + half * float(self._bias[0])
        return self

    def predict(self, X):
        """prepare(X) @ coef_ + intercept_: the prediction in the units of y."""
        s = self._scores(X)[:, 0]
        return self._target_centre + self._target_half * s

    def _more_tags(self):
        return {"poor_score": True}
