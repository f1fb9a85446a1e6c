"""scikit-learn estimators trained by hsdp's private trainer (docs/python.md, "scikit-learn
estimators").

    from hsdp.sklearn import LogisticRegression
    clf = LogisticRegression(epsilon=1, feature_ranges="data/feature-ranges/breast_cancer.txt")
    clf.fit(X_train, y_train).score(X_test, y_test)
    clf.privacy_report_.epsilon          # the certificate of this fit (a FitReport)

Three estimators, each one `hsdp.train` request per `fit` (the same request as `hsdp train`
on the records handed over in memory), so each fit is the run hsdp plans, calibrates to the
target (epsilon, delta), runs and certifies:

  LogisticRegression   binary: the logistic loss; more than 2 classes (or
                       multi_class="multinomial"): the softmax loss, as scikit-learn's
  SoftmaxRegression    the softmax (multinomial logistic) loss for any number of classes
  LinearRegression     the squared loss

and PublicRangeScaler, a pipeline step that scales by public ranges (never by statistics of
the records).

Every fit spends privacy: a hyperparameter search or a cross-validation on private data is
the composition of all its fits (a PrivacySpendWarning says so when records are fitted
again in a process).
"""

from __future__ import annotations

import hashlib
import json
import numbers
import os
import warnings
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt
from scipy.special import expit, log_expit, log_softmax, softmax
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, TransformerMixin, clone
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

import hsdp

__all__ = ["LogisticRegression", "SoftmaxRegression", "LinearRegression", "PublicRangeScaler",
           "FitReport", "PrivacySpendWarning", "reset_privacy_spend", "check_pipeline",
           "PrivateHyperparameterSearch", "SearchReport", "RunsLaw", "selection_rdp", "selection_epsilon"]

FloatArray = npt.NDArray[np.float64]
Ranges = Union[str, "os.PathLike[str]", Sequence[Tuple[float, float]], None]

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

# The randomness of a fit, in the words of `hsdp train` (src/train/request.cpp, randomness()).
_ENTROPY = "operating-system entropy (ChaCha20 keyed with 256 bits from getrandom)"
_SEEDED = "seeded: for experiments, not for release"

# scikit-learn parameters these estimators do not take, and the hsdp parameter that plays the
# role (a TypeError naming both instead of Python's "unexpected keyword argument").
_SKLEARN_ONLY = {
    "C": "hsdp's l2 plays its role: scikit-learn minimises C * (sum of the n losses) + ||w||^2 / 2, "
         "hsdp the mean loss + l2 ||w||^2 / 2 (bias included), so C corresponds to l2 = 1 / (C n); the "
         "privacy target epsilon and the constraint ball (radius) also limit the weights",
    "alpha": "hsdp's l2 plays its role (the penalty l2 ||w||^2 / 2 added to the mean loss)",
    "penalty": "hsdp's penalty is l2 (ridge: l2 ||w||^2 / 2); the constraint ball (constraint, radius) "
               "bounds the weights",
    "l1_ratio": "hsdp's penalty is l2 only",
    "max_iter": "steps or epochs set the number of noisy steps (planned by hsdp when None)",
    "tol": "the number of steps is fixed in advance (steps or epochs): a stop that reads the data is not "
           "certified",
    "solver": "algorithm names hsdp's noisy gradient method ('noisy-sgd')",
    "class_weight": "not offered: a weight changes the sensitivity of a record",
    "warm_start": "not offered: each call would be another private fit",
    "n_jobs": "not used: one fit is one hsdp.train request",
    "verbose": "not used: the fit's report is privacy_report_",
    "dual": "not used: hsdp solves the primal problem by noisy gradient steps",
    "intercept_scaling": "fit_intercept adds hsdp's constant feature 1, counted in the record norm",
    "positive": "not offered",
    "copy_X": "not used: the records are always copied",
}


def _refuse_sklearn_only(estimator: str, given: Mapping[str, object]) -> None:
    for name, value in given.items():
        role = _SKLEARN_ONLY.get(name)
        if role is not None:
            raise TypeError(f"{estimator}: {name} = {value!r} is scikit-learn's parameter, not hsdp's: {role}")
    if given:
        raise TypeError(f"{estimator}: unexpected parameter {next(iter(given))!r} (docs/python.md lists the "
                        "parameters)")


def _is_int(value: object) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def _is_number(value: object) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def _seed(random_state: object) -> Tuple[Optional[int], str]:
    """hsdp's seed for random_state and the fit's randomness in words: None (operating-system
    entropy), an int, or a numpy RandomState / Generator (a seed drawn from it). A seeded fit
    is reproducible and marked "seeded: for experiments, not for release" in its report; its
    batch order counts as known."""
    if random_state is None:
        return None, _ENTROPY
    if isinstance(random_state, np.random.RandomState):
        seed = int(random_state.randint(np.iinfo(np.int32).max))
        return seed, f"{_SEEDED} (ChaCha20 keyed from seed {seed}, drawn from random_state, a numpy RandomState)"
    if isinstance(random_state, np.random.Generator):
        seed = int(random_state.integers(np.iinfo(np.int64).max))
        return seed, f"{_SEEDED} (ChaCha20 keyed from seed {seed}, drawn from random_state, a numpy Generator)"
    if not _is_int(random_state):
        raise TypeError(
            f"random_state = {random_state!r}: must be None (unseeded: operating-system entropy), an int "
            f"in [0, {_SEED_MAX}] (a seed, for experiments) or a numpy RandomState or Generator")
    seed = int(random_state)  # type: ignore[call-overload]
    if not 0 <= seed <= _SEED_MAX:
        raise ValueError(
            f"random_state = {random_state}: must be in [0, {_SEED_MAX}] (a seed, for experiments), or "
            "None for an unseeded fit")
    return seed, f"{_SEEDED} (ChaCha20 keyed from seed {seed}: anyone who knows the seed can regenerate every draw)"


def _require_bool(name: str, value: object) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} = {value!r}: must be True or False")
    return bool(value)


def _report_from_json(text: str) -> hsdp.Report:
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


def _digest_update(h: "hashlib._Hash", name: str, value: object) -> None:
    """One named part of a model into its digest: arrays by dtype, shape and bytes (labels of
    object dtype by their repr), numbers by repr, None as such."""
    h.update(name.encode() + b"\0")
    if value is None:
        h.update(b"None\0")
        return
    array = np.asarray(value)
    if array.dtype == object or array.dtype.kind in "US":
        h.update(f"{array.dtype.kind}{array.shape}{array.tolist()!r}\0".encode())
    else:
        array = np.ascontiguousarray(array)
        h.update(f"{array.dtype.str}{array.shape}\0".encode())
        h.update(array.tobytes())


class FitReport:
    """The certificate of one fit, bound to the model it certifies.

    report        the hsdp.Report of the run that ran (`hsdp train`'s report of the same
                  request): epsilon, delta, best, adjacency, add_remove_epsilon, run, ...
    seeded        True when the fit was given a seed (random_state): reproducible, for
                  experiments; certificate() then refuses unless experiment=True
    randomness    where the noise and the batch order came from, in words
    model_sha256  the digest of the model's parameters (the estimator's fitted arrays), the
                  randomness and the report's JSON: reading privacy_report_ and unpickling
                  recompute it and refuse a report that is not this model's

    The digest binds a report to its model against mix-ups (a report of another run attached
    to these weights, parameters edited after the fit); it is not a signature: whoever edits a
    pickle can recompute it.
    """

    __slots__ = ("report", "seeded", "randomness", "model_sha256")

    def __init__(self, report: hsdp.Report, *, seeded: bool, randomness: str, model_sha256: str) -> None:
        self.report = report
        self.seeded = seeded
        self.randomness = randomness
        self.model_sha256 = model_sha256

    # The report's own values, read through (the fields a user of hsdp.Report reads).
    @property
    def epsilon(self) -> float:
        return self.report.epsilon

    @property
    def delta(self) -> float:
        return self.report.delta

    @property
    def adjacency(self) -> str:
        return self.report.adjacency

    @property
    def best(self) -> Optional[hsdp.AnalysisResult]:
        return self.report.best

    @property
    def run(self) -> hsdp.Run:
        return self.report.run

    @property
    def analyses(self) -> List[hsdp.AnalysisResult]:
        return list(self.report.analyses)

    @property
    def add_remove_epsilon(self) -> Optional[float]:
        return self.report.add_remove_epsilon

    @property
    def release(self) -> bool:
        """True when this is a release certificate (an unseeded fit)."""
        return not self.seeded

    def certificate(self, *, experiment: bool = False) -> hsdp.Report:
        """The hsdp.Report that certifies the model, for a release; a seeded fit is refused
        (anyone who knows the seed can regenerate its noise) unless experiment=True."""
        if self.seeded and not _require_bool("experiment", experiment):
            raise ValueError(
                f"certificate: the fit's noise and batch order were drawn from a seed ({self.randomness}): "
                "against whoever knows the seed the model has no privacy; refit with random_state=None for a "
                "release, or pass experiment=True to read the report of this experiment")
        return self.report

    def table(self) -> str:
        """The table `hsdp account` prints for the run, after the fit's randomness and the model's
        digest."""
        mark = ("" if self.release else
                "NOT A RELEASE CERTIFICATE: the fit was seeded (for experiments, not for release)\n")
        return (f"{mark}randomness: {self.randomness}\nmodel sha256: {self.model_sha256}\n"
                + self.report.table())

    def to_dict(self) -> Dict[str, Any]:
        return {"randomness": self.randomness, "seeded": self.seeded, "release_certificate": self.release,
                "model_sha256": self.model_sha256, "report": json.loads(self.report.to_json())}

    def to_json(self, indent: int = 2) -> str:
        """The fit's randomness, whether it is a release certificate, the model's digest and the
        report (`hsdp account --json` of the run) as JSON."""
        return json.dumps(self.to_dict(), indent=indent)

    def __str__(self) -> str:
        return self.table()

    def __repr__(self) -> str:
        best = self.report.best
        value = ("no analysis applies" if best is None else
                 f"best={best.name} epsilon={best.epsilon} delta={best.delta}")
        kind = f"{_SEEDED}" if self.seeded else "release certificate"
        return (f"<hsdp.sklearn.FitReport {kind}; {value} adjacency={self.report.adjacency}; "
                f"model sha256 {self.model_sha256[:16]}...>")


# --- privacy spent by repeated fits ------------------------------------------------------------

class PrivacySpendWarning(UserWarning):
    """A fit on records that an earlier fit in this process already used (a cross-validation, a
    grid search, a refit), or a second fit of the same estimator: each fit spends privacy, and
    what is released of them together (scores, chosen hyperparameters, models) is bounded only
    by the composition of all of them. privacy_report_ certifies its own fit alone."""


# Digest of each record (features and label) fitted in this process -> the number of fits that
# used it. The digests are of the records handed over, kept in memory only.
_SPENT: Dict[bytes, int] = {}
_SEARCH_DEPTH = [0]  # > 0 inside a search that accounts its own fits


def reset_privacy_spend() -> None:
    """Forget the records fitted so far in this process (PrivacySpendWarning counts from here)."""
    _SPENT.clear()


def _record_digests(X: FloatArray, y: npt.ArrayLike) -> List[bytes]:
    labels = np.asarray(y)
    if labels.dtype.kind in "biuf":
        label_bytes = [v.tobytes() for v in np.asarray(labels, dtype=np.float64)]
    else:
        label_bytes = [repr(v).encode() for v in labels.tolist()]
    rows = np.ascontiguousarray(X, dtype=np.float64)
    return [hashlib.blake2b(row.tobytes() + b"\0" + lab, digest_size=16).digest()
            for row, lab in zip(rows, label_bytes)]


def _spend(X: FloatArray, y: npt.ArrayLike, refit: bool, what: str, stacklevel: int = 3) -> None:
    """Counts this fit's records and warns (PrivacySpendWarning) when some were fitted before in
    this process or the estimator is fitted again. Inside a search that accounts its fits,
    nothing is counted (the search counts its records once)."""
    if _SEARCH_DEPTH[0] > 0:
        return
    digests = _record_digests(X, y)
    seen = [_SPENT.get(d, 0) for d in digests]
    again = sum(1 for c in seen if c > 0)
    for d in set(digests):
        _SPENT[d] = _SPENT.get(d, 0) + 1
    if again or refit:
        parts = []
        if again:
            parts.append(f"{again} of its {len(digests)} training records were used by earlier fits in this "
                         f"process (up to {max(seen)} fits each)")
        if refit:
            parts.append("this estimator was fitted before")
        warnings.warn(
            f"{what}: {' and '.join(parts)}: every fit spends privacy on its records, and what is released "
            "of these fits together (scores, chosen hyperparameters, models: GridSearchCV, cross_val_score, a "
            "refit) is bounded only by the composition of all of them; privacy_report_ certifies this fit "
            "alone (PrivateHyperparameterSearch certifies a selection; docs/python.md \"Every fit spends "
            "privacy\")", PrivacySpendWarning, stacklevel=stacklevel)


# --- public feature ranges -------------------------------------------------------------------

def _read_ranges(ranges: object, name: str) -> Tuple[FloatArray, FloatArray]:
    """(lows, highs) of public ranges: a file as --feature-ranges reads it (one line `min max`
    per feature in column order, whitespace or a comma between them, `#` starts a comment, or
    a single line for every feature; docs/data.md "Public feature ranges"), or a list of
    (min, max) pairs."""
    pairs: List[Tuple[float, float]] = []
    if isinstance(ranges, (str, os.PathLike)):
        path = os.fspath(ranges)
        try:
            with open(path, encoding="utf-8") as f:
                lines = f.read().splitlines()
        except OSError as e:
            raise ValueError(f"{name} = {path!r}: cannot read the file ({e.strerror})") from None
        for number, line in enumerate(lines, 1):
            text = line.split("#", 1)[0].replace(",", " ").split()
            if not text:
                continue
            try:
                if len(text) != 2:
                    raise ValueError
                pairs.append((float(text[0]), float(text[1])))
            except ValueError:
                raise ValueError(f"{name}: {path}:{number}: {line.strip()!r}: must be 'min max'") from None
        where = [f"{path}:{i}" for i in range(1, len(pairs) + 1)]
    else:
        try:
            pairs = [(float(lo), float(hi)) for lo, hi in ranges]  # type: ignore[attr-defined]
        except (TypeError, ValueError):
            raise ValueError(f"{name} = {ranges!r}: must be a ranges file or a list of (min, max) pairs") from None
        where = [f"{name}[{i}]" for i in range(len(pairs))]
    if not pairs:
        raise ValueError(f"{name} = {ranges!r}: no range given")
    lows = np.array([p[0] for p in pairs], dtype=np.float64)
    highs = np.array([p[1] for p in pairs], dtype=np.float64)
    for at, lo, hi in zip(where, lows, highs):
        if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi and np.isfinite(hi - lo)):
            raise ValueError(f"{name}: {at}: ({lo}, {hi}): must be finite with min < max")
    return lows, highs


_FITTED_SCALER = (
    "a scaler fitted on the training records (StandardScaler, MinMaxScaler, RobustScaler) reads their "
    "means, deviations or extremes, statistics that no certificate counts, and makes the training depend "
    "on them: scale by public ranges instead (PublicRangeScaler, or feature_ranges)")


def _warn_outside(X: FloatArray, lows: FloatArray, highs: FloatArray, name: str, stacklevel: int = 3) -> None:
    """For the data owner (a count of the records, never stored): values outside the declared
    public ranges. They still train privately (each record is scaled to the record norm), but
    ranges that do not hold often mean the features were transformed before."""
    outside = int(np.count_nonzero((X < lows) | (X > highs)))
    if outside:
        warnings.warn(
            f"for the data owner, not released: {outside} of the {X.size} feature values lie outside the "
            f"declared public ranges ({name}); each record is still scaled to the record norm, so the "
            f"certificate holds, but check the ranges: {_FITTED_SCALER}", UserWarning, stacklevel=stacklevel)


class PublicRangeScaler(TransformerMixin, BaseEstimator):  # type: ignore[misc]
    """Scales each feature from its public range onto [-1, 1], as `--feature-ranges` does:

        x_j <- (x_j - (min_j + max_j) / 2) * 2 / (max_j - min_j)

    ranges: a ranges file (data/feature-ranges/*.txt, docs/data.md) or a list of (min, max),
    one for every feature or one per feature. Public constants, from the data set's
    documentation: fit reads only the number of features, never a statistic of the records
    (a StandardScaler fitted on private records leaks their means and scales and makes the
    training depend on them). transform warns the data owner how many values lie outside the
    ranges (they are not clipped)."""

    center_: FloatArray
    scale_: FloatArray
    n_features_in_: int

    def __init__(self, *, ranges: Ranges = None) -> None:
        self.ranges = ranges

    def fit(self, X: npt.ArrayLike, y: object = None) -> "PublicRangeScaler":
        """Reads the ranges (and the number of features of X); nothing of the records."""
        if self.ranges is None:
            raise TypeError("ranges = None: must be a ranges file (data/feature-ranges/, docs/data.md) or a "
                            "list of (min, max) pairs: public constants, never computed from the records")
        Xv: FloatArray = self._validate_data(X, dtype=np.float64)
        lows, highs = _read_ranges(self.ranges, "ranges")
        d = Xv.shape[1]
        if len(lows) not in (1, d):
            raise ValueError(f"ranges = {len(lows)} ranges: must be one range, or one per feature (d = {d})")
        self._lows = np.broadcast_to(lows, (d,)).copy()
        self._highs = np.broadcast_to(highs, (d,)).copy()
        self.center_ = self._lows / 2 + self._highs / 2
        self.scale_ = 2.0 / (self._highs - self._lows)
        return self

    def transform(self, X: npt.ArrayLike) -> FloatArray:
        check_is_fitted(self, "scale_")
        Z: FloatArray = self._validate_data(X, dtype=np.float64, reset=False)
        _warn_outside(Z, self._lows, self._highs, f"PublicRangeScaler(ranges={self.ranges!r})")
        out: FloatArray = (Z - self.center_) * self.scale_
        return out

    def inverse_transform(self, X: npt.ArrayLike) -> FloatArray:
        check_is_fitted(self, "scale_")
        Z = np.asarray(X, dtype=np.float64)
        out: FloatArray = Z / self.scale_ + self.center_
        return out

    def _more_tags(self) -> Dict[str, object]:
        return {"stateless": True, "requires_fit": True, "preserves_dtype": [np.float64]}


def check_pipeline(pipeline: object) -> None:
    """Refuses (ValueError) a scikit-learn Pipeline with a step fitted on the training records
    before an hsdp estimator: any transformer other than PublicRangeScaler, 'passthrough' or a
    FunctionTransformer (a fixed function) reads the records when fitted."""
    steps = getattr(pipeline, "steps", None)
    if steps is None:
        return
    for name, step in steps[:-1]:
        if step is None or step == "passthrough" or isinstance(step, PublicRangeScaler):
            continue
        if type(step).__name__ == "FunctionTransformer" and getattr(step, "inverse_func", None) is None:
            continue
        raise ValueError(
            f"pipeline step {name!r} ({type(step).__name__}) is fitted on the training records before the "
            f"private estimator: {_FITTED_SCALER}")


class _HsdpLinearModel(BaseEstimator):  # type: ignore[misc]
    """What the three estimators share: the parameters of the training request, one
    `hsdp.train` per fit, the preparation of records as the trainer prepared them, the report
    bound to the model, pickling."""

    # Fitted attributes (set by fit; annotations only, so that type checkers know them).
    coef_: FloatArray
    n_features_in_: int
    _center: Optional[FloatArray]
    _scale: Optional[FloatArray]
    _record_norm: float
    _weights: FloatArray
    _bias: FloatArray

    # hsdp.train keywords that are parameters of the estimators under the same name.
    _TRAIN_KEYWORDS = ("algorithm", "sampling", "batch_size", "epochs", "steps", "eta", "l2",
                       "constraint", "radius", "record_norm", "clip", "release", "drop_last",
                       "order_known", "adjacency", "noise")

    def __init__(self, *, epsilon: float, delta: Optional[float], feature_ranges: Ranges,
                 feature_scale: Union[float, Sequence[float], None], fit_intercept: bool, algorithm: str,
                 sampling: Optional[str], batch_size: Optional[int], epochs: Optional[float],
                 steps: Optional[int], eta: Optional[float], l2: float, constraint: str, radius: Optional[float],
                 record_norm: Optional[float], clip: Optional[float], release: Optional[str],
                 drop_last: Optional[bool], order_known: Optional[bool], adjacency: Optional[str], noise: str,
                 random_state: object) -> None:
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

    def set_params(self, **params: Any) -> "_HsdpLinearModel":
        """scikit-learn's set_params; a scikit-learn parameter these estimators do not take
        (C, alpha, max_iter, ...) is refused naming the hsdp parameter that plays its role."""
        unknown = {k: v for k, v in params.items() if k in _SKLEARN_ONLY and k not in self.get_params()}
        if unknown:
            _refuse_sklearn_only(type(self).__name__, unknown)
        out: _HsdpLinearModel = super().set_params(**params)
        return out

    # --- fitting -------------------------------------------------------------------------

    def _train(self, X: FloatArray, y: npt.NDArray[Any], model: str, **extra: Any) -> hsdp.Model:
        """One hsdp.train request on the validated records X (float64) and labels y (already
        in the form the loss reads); keeps the parameters, the preparation constants and the
        report, nothing else of the result (the model file also holds the training accuracy
        and loss, statistics of the data that the certificate does not cover)."""
        if self.epsilon is None or not _is_number(self.epsilon):
            raise TypeError(f"epsilon = {self.epsilon!r}: must be a number > 0 (the privacy target of the fit)")
        options: Dict[str, Any] = {name: getattr(self, name) for name in self._TRAIN_KEYWORDS}
        scale: Any = self.feature_scale
        if scale is None:
            scale = []
        elif _is_number(scale):
            scale = [scale]
        seed, randomness = _seed(self.random_state)
        if self.feature_ranges is not None:
            lows, highs = _read_ranges(self.feature_ranges, "feature_ranges")
            if len(lows) in (1, X.shape[1]):  # otherwise hsdp.train names the mismatch
                _warn_outside(X, lows, highs, f"feature_ranges = {self.feature_ranges!r}", stacklevel=4)
        result = hsdp.train(
            X, y, model=model, epsilon=self.epsilon, delta=self.delta,
            feature_ranges=self.feature_ranges, feature_scale=scale,
            bias=_require_bool("fit_intercept", self.fit_intercept), seed=seed,
            **options, **extra)
        m = result.model
        self._center = None if m.feature_center is None else np.asarray(m.feature_center, dtype=np.float64)
        self._scale = None if m.feature_scale is None else np.asarray(m.feature_scale, dtype=np.float64)
        self._record_norm = float(m.record_norm)
        self._weights = np.array(m.weights, dtype=np.float64)
        self._bias = (np.zeros(self._weights.shape[0]) if m.intercept is None
                      else np.asarray(m.intercept, dtype=np.float64))
        self._pending = (result.report, seed is not None, randomness)
        return m

    def _model_parts(self) -> List[Tuple[str, object]]:
        """Everything the model's predictions read, and its public arrays."""
        names = ["_weights", "_bias", "_center", "_scale", "_record_norm", "coef_", "intercept_", "classes_",
                 "_target_centre", "_target_half", "n_features_in_", "feature_names_in_"]
        return [(name, self.__dict__.get(name)) for name in names]

    def _digest(self, report_json: str, seeded: bool, randomness: str) -> str:
        h = hashlib.sha256(b"hsdp.sklearn model v1\0")
        for name, value in self._model_parts():
            _digest_update(h, name, value)
        h.update(f"seeded={seeded}\0randomness={randomness}\0".encode())
        h.update(report_json.encode())
        return h.hexdigest()

    def _bind(self, X: FloatArray, y: npt.ArrayLike) -> None:
        """The end of a fit: the report bound to the parameters, and the records counted."""
        report, seeded, randomness = self.__dict__.pop("_pending")
        refit = "_fit_report" in self.__dict__
        self._fit_report = FitReport(report, seeded=seeded, randomness=randomness,
                                     model_sha256=self._digest(report.to_json(), seeded, randomness))
        _spend(X, y, refit, type(self).__name__ + ".fit", stacklevel=4)  # the caller of fit

    @property
    def privacy_report_(self) -> FitReport:
        """The certificate of the fit (FitReport), after checking that it is this model's: the
        digest of the parameters and the report recorded at the fit must still match."""
        report: Optional[FitReport] = self.__dict__.get("_fit_report")
        if report is None:
            raise AttributeError(f"{type(self).__name__} is not fitted: privacy_report_ is set by fit")
        digest = self._digest(report.report.to_json(), report.seeded, report.randomness)
        if digest != report.model_sha256:
            raise ValueError(
                f"privacy_report_: the report certifies the model with sha256 {report.model_sha256}, and this "
                f"estimator's parameters and report hash to {digest}: the parameters were changed after the fit "
                "or the report belongs to another run; refused")
        return report

    # --- prediction ----------------------------------------------------------------------

    def prepare(self, X: npt.ArrayLike) -> FloatArray:
        """The records as the model sees them, prepared as the trainer prepared the training
        records: centred and scaled by the public feature constants (feature_ranges or
        feature_scale), then each record scaled to L2 norm <= record_norm (record-local).
        decision_function(X) (classifiers) and predict(X) (LinearRegression) equal
        prepare(X) @ coef_.T + intercept_."""
        check_is_fitted(self, "_fit_report")
        Z = self._validate_data(X, reset=False, dtype=np.float64, order="C")
        P: FloatArray = np.array(Z, dtype=np.float64, copy=True)
        if self._center is not None:
            P -= self._center
        if self._scale is not None:
            P *= self._scale
        norms = np.linalg.norm(P, axis=1)
        over = norms > self._record_norm
        P[over] *= (self._record_norm / norms[over])[:, None]
        return P

    def _scores(self, X: npt.ArrayLike) -> FloatArray:
        """prepare(X) @ W.T + b in the trainer's own parameters: n x outputs."""
        s: FloatArray = self.prepare(X) @ self._weights.T + self._bias
        return s

    # --- pickling: everything is numpy or text except the report, recomputed by hsdp ---------

    def __getstate__(self) -> Dict[str, Any]:
        state = dict(super().__getstate__())  # a copy: Python 3.11 hands over __dict__ itself
        report: Optional[FitReport] = state.pop("_fit_report", None)
        if report is not None:
            state["_privacy_report_json"] = report.report.to_json()
            state["_privacy_report_binding"] = (report.seeded, report.randomness, report.model_sha256)
        return state

    def __setstate__(self, state: Dict[str, Any]) -> None:
        state = dict(state)
        text = state.pop("_privacy_report_json", None)
        binding = state.pop("_privacy_report_binding", None)
        super().__setstate__(state)
        if text is None:
            return
        if binding is None:
            raise ValueError("privacy_report_: the pickle carries a report without the digest of its model "
                             "(an hsdp.sklearn pickle binds them); refused")
        seeded, randomness, digest = binding
        report = _report_from_json(text)
        found = self._digest(report.to_json(), bool(seeded), str(randomness))
        if found != digest:
            raise ValueError(
                f"privacy_report_: the pickled report certifies the model with sha256 {digest}, and the pickled "
                f"parameters with this report hash to {found}: the report belongs to another run or the "
                "parameters were changed; refused")
        self._fit_report = FitReport(report, seeded=bool(seeded), randomness=str(randomness), model_sha256=digest)


class _Classifier(ClassifierMixin, _HsdpLinearModel):  # type: ignore[misc]
    """Labels of any type: classes_ are the sorted distinct labels of y, the trainer sees their
    indices, and predictions map back to them."""

    classes_: npt.NDArray[Any]
    intercept_: FloatArray

    def _use_softmax(self, n_classes: int) -> bool:
        raise NotImplementedError

    def fit(self, X: npt.ArrayLike, y: npt.ArrayLike) -> "_Classifier":
        """Trains the model with hsdp (one private fit: it spends the privacy budget
        (epsilon, delta) of the training data) and returns self. privacy_report_ is the
        certificate of this fit."""
        Xv, yv = self._validate_data(X, y, dtype=np.float64, order="C")
        check_classification_targets(yv)
        classes, indices = np.unique(yv, return_inverse=True)
        if len(classes) < 2:
            raise ValueError(
                f"y has 1 class ({classes[0]!r}): a classifier needs at least 2 classes")
        softmax_loss = self._use_softmax(len(classes))
        model = self._train(Xv, indices.astype(np.int64), "softmax" if softmax_loss else "logistic")
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
        self._bind(Xv, yv)
        return self

    def decision_function(self, X: npt.ArrayLike) -> FloatArray:
        """Scores prepare(X) @ coef_.T + intercept_: shape (n,) for two classes (the
        log-odds of classes_[1]), (n, n_classes) otherwise."""
        s = self._scores(X)
        return s[:, 0] if s.shape[1] == 1 else s

    def predict_proba(self, X: npt.ArrayLike) -> FloatArray:
        """Class probabilities (n, n_classes), columns in the order of classes_."""
        s = self._scores(X)
        if s.shape[1] == 1:
            p = expit(s[:, 0])
            out: FloatArray = np.column_stack([1.0 - p, p])
            return out
        soft: FloatArray = softmax(s, axis=1)
        return soft

    def predict_log_proba(self, X: npt.ArrayLike) -> FloatArray:
        """Logarithms of predict_proba, computed without underflow."""
        s = self._scores(X)
        if s.shape[1] == 1:
            out: FloatArray = np.column_stack([log_expit(-s[:, 0]), log_expit(s[:, 0])])
            return out
        soft: FloatArray = log_softmax(s, axis=1)
        return soft

    def predict(self, X: npt.ArrayLike) -> npt.NDArray[Any]:
        """The label of each record, in the values of y (classes_)."""
        s = self._scores(X)
        if s.shape[1] == 1:
            return self.classes_[(s[:, 0] > 0).astype(np.intp)]
        labels: npt.NDArray[Any] = self.classes_[np.argmax(s, axis=1)]
        return labels

    def _more_tags(self) -> Dict[str, object]:
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
        "seeded: for experiments, not for release" in its report (not a release certificate), and its batch order counts as known (the
        certificate does not assume it hidden). A RandomState or Generator gives a seed
        drawn from it.
"""

_ATTRIBUTES_DOC = """
    Attributes:
    coef_, intercept_ : the model's parameters on the prepared records (prepare(X)):
        decision_function / predict is prepare(X) @ coef_.T + intercept_.
    n_features_in_, feature_names_in_ (when X is a DataFrame with string column names)
    privacy_report_ : FitReport, the certificate of the fit: hsdp's report of the run that
        ran (epsilon, delta, best, adjacency, add_remove_epsilon, table(), to_json()), the
        fit's randomness (a seeded fit is marked "seeded: for experiments, not for release"
        and certificate() refuses it) and the digest binding the report to these parameters.
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

    def __init__(self, *, epsilon: float = 1.0, delta: Optional[float] = None, feature_ranges: Ranges = None,
                 feature_scale: Union[float, Sequence[float], None] = None, multi_class: str = "auto",
                 fit_intercept: bool = True, algorithm: str = "noisy-sgd", sampling: Optional[str] = None,
                 batch_size: Optional[int] = None, epochs: Optional[float] = None, steps: Optional[int] = None,
                 eta: Optional[float] = None, l2: float = 0.0, constraint: str = "ball",
                 radius: Optional[float] = None, record_norm: Optional[float] = None, clip: Optional[float] = None,
                 release: Optional[str] = None, drop_last: Optional[bool] = None,
                 order_known: Optional[bool] = None, adjacency: Optional[str] = None, noise: str = "gaussian",
                 random_state: object = None, **sklearn_only: object) -> None:
        _refuse_sklearn_only(type(self).__name__, sklearn_only)
        super().__init__(epsilon=epsilon, delta=delta, feature_ranges=feature_ranges,
                         feature_scale=feature_scale, fit_intercept=fit_intercept, algorithm=algorithm,
                         sampling=sampling, batch_size=batch_size, epochs=epochs, steps=steps, eta=eta,
                         l2=l2, constraint=constraint, radius=radius, record_norm=record_norm, clip=clip,
                         release=release, drop_last=drop_last, order_known=order_known,
                         adjacency=adjacency, noise=noise, random_state=random_state)
        self.multi_class = multi_class

    def _use_softmax(self, n_classes: int) -> bool:
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

    def __init__(self, *, epsilon: float = 1.0, delta: Optional[float] = None, feature_ranges: Ranges = None,
                 feature_scale: Union[float, Sequence[float], None] = None,
                 fit_intercept: bool = True, algorithm: str = "noisy-sgd", sampling: Optional[str] = None,
                 batch_size: Optional[int] = None, epochs: Optional[float] = None, steps: Optional[int] = None,
                 eta: Optional[float] = None, l2: float = 0.0, constraint: str = "ball",
                 radius: Optional[float] = None, record_norm: Optional[float] = None, clip: Optional[float] = None,
                 release: Optional[str] = None, drop_last: Optional[bool] = None,
                 order_known: Optional[bool] = None, adjacency: Optional[str] = None, noise: str = "gaussian",
                 random_state: object = None, **sklearn_only: object) -> None:
        _refuse_sklearn_only(type(self).__name__, sklearn_only)
        super().__init__(epsilon=epsilon, delta=delta, feature_ranges=feature_ranges,
                         feature_scale=feature_scale, fit_intercept=fit_intercept, algorithm=algorithm,
                         sampling=sampling, batch_size=batch_size, epochs=epochs, steps=steps, eta=eta,
                         l2=l2, constraint=constraint, radius=radius, record_norm=record_norm, clip=clip,
                         release=release, drop_last=drop_last, order_known=order_known,
                         adjacency=adjacency, noise=noise, random_state=random_state)

    def _use_softmax(self, n_classes: int) -> bool:
        return True


class LinearRegression(RegressorMixin, _HsdpLinearModel):  # type: ignore[misc]
    intercept_: float
    _target_centre: float
    _target_half: float

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

    def __init__(self, *, epsilon: float = 1.0, delta: Optional[float] = None, feature_ranges: Ranges = None,
                 feature_scale: Union[float, Sequence[float], None] = None,
                 target_range: Optional[Tuple[float, float]] = None, label_bound: Optional[float] = None,
                 fit_intercept: bool = True, algorithm: str = "noisy-sgd", sampling: Optional[str] = None,
                 batch_size: Optional[int] = None, epochs: Optional[float] = None, steps: Optional[int] = None,
                 eta: Optional[float] = None, l2: float = 0.0, constraint: str = "ball",
                 radius: Optional[float] = None, record_norm: Optional[float] = None, clip: Optional[float] = None,
                 release: Optional[str] = None, drop_last: Optional[bool] = None,
                 order_known: Optional[bool] = None, adjacency: Optional[str] = None, noise: str = "gaussian",
                 random_state: object = None, **sklearn_only: object) -> None:
        _refuse_sklearn_only(type(self).__name__, sklearn_only)
        super().__init__(epsilon=epsilon, delta=delta, feature_ranges=feature_ranges,
                         feature_scale=feature_scale, fit_intercept=fit_intercept, algorithm=algorithm,
                         sampling=sampling, batch_size=batch_size, epochs=epochs, steps=steps, eta=eta,
                         l2=l2, constraint=constraint, radius=radius, record_norm=record_norm, clip=clip,
                         release=release, drop_last=drop_last, order_known=order_known,
                         adjacency=adjacency, noise=noise, random_state=random_state)
        self.target_range = target_range
        self.label_bound = label_bound

    def _target_map(self) -> Tuple[float, float, float]:
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
            return float(low / 2 + high / 2), float(high / 2 - low / 2), 1.0
        bound = 1.0 if self.label_bound is None else self.label_bound
        if not _is_number(bound) or not (np.isfinite(bound) and bound > 0):
            raise ValueError(f"label_bound = {self.label_bound!r}: must be a finite number > 0")
        return 0.0, 1.0, float(bound)

    def fit(self, X: npt.ArrayLike, y: npt.ArrayLike) -> "LinearRegression":
        """Trains the model with hsdp (one private fit: it spends the privacy budget
        (epsilon, delta) of the training data) and returns self. privacy_report_ is the
        certificate of this fit."""
        Xv, yv = self._validate_data(X, y, dtype=np.float64, order="C", y_numeric=True)
        centre, half, bound = self._target_map()
        t = (np.asarray(yv, dtype=np.float64) - centre) / half
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
        self._train(Xv, t, "squared", label_bound=bound)
        self._target_centre, self._target_half = centre, half
        self.coef_ = half * self._weights[0]
        self.intercept_ = centre + half * float(self._bias[0])
        self._bind(Xv, yv)
        return self

    def predict(self, X: npt.ArrayLike) -> FloatArray:
        """prepare(X) @ coef_ + intercept_: the prediction in the units of y."""
        s = self._scores(X)[:, 0]
        out: FloatArray = self._target_centre + self._target_half * s
        return out

    def _more_tags(self) -> Dict[str, object]:
        return {"poor_score": True}


# --- private hyperparameter search (Papernot & Steinke 2022) -----------------------------------
#
# Papernot & Steinke, "Hyperparameter tuning with Renyi differential privacy", ICLR 2022
# (arXiv:2110.03620). The base algorithm Q draws a candidate uniformly (public randomness) and
# fits it: one private run whose RDP curve is the largest of the candidates' (the candidate is
# drawn independently of the data, and a Renyi divergence of a mixture with data-independent
# weights is at most the largest of its parts' -- joint quasi-convexity). A runs Q K times, K
# drawn from a distribution D independent of the data, and outputs only the best run, in a
# total order of Q's outputs: the score on PUBLIC validation records (a post-processing of the
# run's model), ties broken by the model's bytes. K, the other runs and their scores are not
# released (a known K would cost up to K times a run).
#
# Theorem 2 (D = the truncated negative binomial D_{eta,gamma}, eta > -1, 0 < gamma < 1):
# if Q is (lambda, eps)-RDP and (lambda_hat, eps_hat)-RDP (lambda > 1, lambda_hat >= 1), A is
# (lambda, eps')-RDP with
#     eps' = eps + (1 + eta)(1 - 1/lambda_hat) eps_hat + (1 + eta) log(1/gamma) / lambda_hat
#            + log(E[K]) / (lambda - 1),
# E[K] = eta (1 - gamma) / (gamma (1 - gamma^eta)) (eta != 0), (1/gamma - 1) / log(1/gamma)
# (eta = 0: the logarithmic distribution); P[K = k] = (1 - gamma)^k / (gamma^-eta - 1)
# prod_{l<k} (l + eta) / (l + 1) (eta != 0), (1 - gamma)^k / (k log(1/gamma)) (eta = 0), k >= 1.
# Theorem 6 (D = Poisson(mu)): if Q is (lambda, eps)-RDP and (eps_hat, delta_hat)-DP with
# e^eps_hat <= 1 + 1/(lambda - 1), A is (lambda, eps + mu delta_hat + log(mu) / (lambda - 1))-RDP
# (K = 0 outputs a fixed value: no model).
#
# The trainer's noise is drawn on a grid (docs/security.md): each run is within (E, beta) of
# its continuous comparison run R (P_G(S) <= e^(E/2) P_R(S) + beta, both ways), whose RDP
# curve hsdp.rdp_curve states. With K' <= k_max the law actually drawn (within total variation
# tau' of D: the tail beyond k_max and the inversion's lattice), h = k_max E / 2 and
# c = e^h tau' + k_max e^h beta, a hybrid over the K' runs gives A'(D)(S) <= e^h A_R(D)(S) + c
# and A_R(D')(S) <= e^h A'(D')(S) + c, so an (eps_R, delta_R) of the ideal selection A_R over
# comparison runs gives the search (eps_R + k_max E, e^h delta_R + c (1 + e^(eps_R + h)))
# (docs/python.md "Private hyperparameter search", the derivation).

# RDP orders at which the base runs' curves are read (lambda and lambda_hat range over them).
_ORDERS = (1.0625, 1.125, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 5.0, 6.0, 7.0, 8.0, 10.0, 12.0, 14.0,
           16.0, 20.0, 24.0, 28.0, 32.0, 40.0, 48.0, 56.0, 64.0, 80.0, 96.0, 128.0, 192.0, 256.0, 384.0,
           512.0, 768.0, 1024.0, 2048.0, 4096.0)
_LATTICE_BITS = 60  # K is drawn by inversion of a uniform on a 2^-60 lattice (three 2^20 draws)
_CDF_ERROR = 1e-15  # per term: the float sums of the CDF are within k * 1e-15 of the truth


def _up(value: float) -> float:
    """value rounded up by a margin far above the float error of the sums here (never down)."""
    if value != value:
        raise ValueError("internal: NaN in the selection bound")
    if value in (float("inf"), float("-inf")) or value == 0.0:
        return value
    return float(np.nextafter(value + abs(value) * 1e-12, np.inf))


class RunsLaw:
    """The law D of the number of runs K: "negative-binomial" (Papernot & Steinke's truncated
    negative binomial D_{eta,gamma}, k >= 1; eta = 0 is the logarithmic distribution, eta = 1
    the geometric) or "poisson" (mu, k >= 0)."""

    def __init__(self, distribution: str, *, eta: Optional[float] = None, gamma: Optional[float] = None,
                 mu: Optional[float] = None) -> None:
        if distribution == "negative-binomial":
            if mu is not None:
                raise ValueError(f"mu = {mu!r}: only distribution='poisson' reads it (not 'negative-binomial')")
            eta = 0.0 if eta is None else eta
            if not _is_number(eta) or not (np.isfinite(eta) and eta > -1):
                raise ValueError(f"eta = {eta!r}: must be a finite number > -1")
            if gamma is None or not _is_number(gamma) or not 0 < gamma < 1:
                raise ValueError(f"gamma = {gamma!r}: must be a number in (0, 1) (E[K] grows as gamma falls)")
            self.eta, self.gamma, self.mu = float(eta), float(gamma), 0.0
        elif distribution == "poisson":
            for name, value in (("eta", eta), ("gamma", gamma)):
                if value is not None:
                    raise ValueError(f"{name} = {value!r}: only distribution='negative-binomial' reads it "
                                     "(not 'poisson')")
            if mu is None or not _is_number(mu) or not (np.isfinite(mu) and 0 < mu <= 1e4):
                raise ValueError(f"mu = {mu!r}: must be a number in (0, 1e4] (the mean number of runs)")
            self.eta, self.gamma, self.mu = 0.0, 0.0, float(mu)
        else:
            raise ValueError(f"distribution = {distribution!r}: must be 'negative-binomial' or 'poisson'")
        self.distribution = distribution

    @property
    def first(self) -> int:
        return 0 if self.distribution == "poisson" else 1

    def mean(self) -> float:
        """E[K]."""
        if self.distribution == "poisson":
            return self.mu
        g, e = self.gamma, self.eta
        if e == 0.0:
            return float((1.0 / g - 1.0) / np.log(1.0 / g))
        return float(e * (1.0 - g) / (g * -np.expm1(e * np.log(g))))

    def log_pmf(self, k: int) -> float:
        if k < self.first:
            return float("-inf")
        if self.distribution == "poisson":
            return float(-self.mu + k * np.log(self.mu) - np.sum(np.log(np.arange(1, k + 1, dtype=np.float64))))
        g, e = self.gamma, self.eta
        if e == 0.0:
            return float(k * np.log1p(-g) - np.log(k) - np.log(np.log(1.0 / g)))
        # (1-g)^k / (g^-e - 1) prod_{l<k} (l+e)/(l+1); for -1 < e < 0 the l = 0 factor and the
        # denominator are both negative.
        ls = np.arange(1, k, dtype=np.float64)
        log_prod = np.log(abs(e)) + float(np.sum(np.log((ls + e) / (ls + 1.0))))
        return float(k * np.log1p(-g) + log_prod - np.log(abs(np.expm1(-e * np.log(g)))))

    def _ratio_bound(self, k: int) -> float:
        """An upper bound on p_{j+1} / p_j for every j >= k."""
        if self.distribution == "poisson":
            return self.mu / (k + 1)
        return (1.0 - self.gamma) * max(1.0, (k + self.eta) / (k + 1))

    def tail(self, k: int) -> float:
        """An upper bound on P[K > k] (the terms beyond k bounded by a geometric series)."""
        r = self._ratio_bound(k + 1)
        if not r < 1:
            return 1.0
        return min(1.0, _up(float(np.exp(self.log_pmf(k + 1))) / (1.0 - r)))

    def cutoff(self, delta: float) -> int:
        """The smallest k_max with P[K > k_max] <= delta 2^-30."""
        k = max(self.first, 1)
        while self.tail(k) > delta * 2.0**-30:
            k = k + 1 if k < 64 else int(k * 1.25)
            if k > 10**7:
                raise ValueError("the law of K has too heavy a tail for this delta (k_max > 1e7)")
        return k

    def cdf_table(self, k_max: int) -> FloatArray:
        """F(k) for k = 0 .. k_max (float sums; _CDF_ERROR bounds their error per term)."""
        p = np.array([np.exp(self.log_pmf(k)) for k in range(k_max + 1)], dtype=np.float64)
        cdf: FloatArray = np.cumsum(p)
        return cdf

    def __repr__(self) -> str:
        if self.distribution == "poisson":
            return f"RunsLaw('poisson', mu={self.mu})"
        return f"RunsLaw('negative-binomial', eta={self.eta}, gamma={self.gamma})"


def _rdp_to_dp_epsilon(alphas: Sequence[float], eps: Sequence[float], delta: float) -> Tuple[float, float]:
    """(eps, alpha): an RDP curve at the orders -> (eps, delta)-DP, minimised over the orders:
    eps = eps_alpha + log((alpha - 1)/alpha) - (log alpha + log delta)/(alpha - 1) (Canonne,
    Kamath & Steinke 2020, Prop. 12; Balle et al. 2020, Thm. 21; hsdp's div::best_epsilon uses
    the same conversion, minimised continuously)."""
    best, at = float("inf"), float("nan")
    for a, e in zip(alphas, eps):
        if not np.isfinite(e):
            continue
        value = e + np.log1p(-1.0 / a) - (np.log(a) + np.log(delta)) / (a - 1.0)
        if value < best:
            best, at = float(value), a
    return max(0.0, _up(best)), at


def _rdp_to_dp_delta(alphas: Sequence[float], eps: Sequence[float], epsilon: float) -> float:
    """delta at epsilon of an RDP curve, the same conversion solved for delta:
    delta = exp((alpha - 1)(eps_alpha - epsilon)) / alpha * (1 - 1/alpha)^(alpha - 1), minimised
    over the orders (capped at 1)."""
    best = 0.0  # log delta <= 0
    for a, e in zip(alphas, eps):
        if not np.isfinite(e):
            continue
        log_d = (a - 1.0) * (e - epsilon) - np.log(a) + (a - 1.0) * np.log1p(-1.0 / a)
        best = min(best, float(log_d))
    return min(1.0, _up(float(np.exp(best))))


def selection_rdp(alphas: Sequence[float], eps: Sequence[float], law: RunsLaw) -> List[float]:
    """Papernot & Steinke's bound on the selection's RDP curve at the orders, from the base
    algorithm Q's curve eps (inf where unknown): Theorem 2 (negative-binomial; lambda_hat over
    the orders) or Theorem 6 (poisson; delta_hat at eps_hat = log(1 + 1/(lambda - 1)) from the
    curve)."""
    out: List[float] = []
    log_mean = float(np.log(law.mean()))
    if law.distribution == "negative-binomial":
        c = 1.0 + law.eta
        middle = min((c * (1.0 - 1.0 / ah) * eh + c * np.log(1.0 / law.gamma) / ah
                      for ah, eh in zip(alphas, eps) if np.isfinite(eh)), default=float("inf"))
        for a, e in zip(alphas, eps):
            out.append(_up(float(e + middle + log_mean / (a - 1.0))))
    else:
        for a, e in zip(alphas, eps):
            delta_hat = _rdp_to_dp_delta(alphas, eps, float(np.log1p(1.0 / (a - 1.0))))
            out.append(_up(float(e + law.mu * delta_hat + log_mean / (a - 1.0))))
    return out


def selection_epsilon(alphas: Sequence[float], eps: Sequence[float], law: RunsLaw, delta: float, *,
                      grid_epsilon: float = 0.0, grid_log_beta: float = float("-inf")) -> Dict[str, float]:
    """(eps, delta)-DP of the search: the selection's RDP curve (selection_rdp) of the comparison
    runs converted at delta_R, then the grid's charge (E = grid_epsilon per run, beta =
    e^grid_log_beta per run) and the law actually drawn (K' <= k_max) as derived above.
    Returns epsilon and the terms."""
    k_max = law.cutoff(delta)
    h = k_max * grid_epsilon / 2.0
    tau = law.tail(k_max) + 2.0 * (k_max + 1) * (2.0**-_LATTICE_BITS + (k_max + 1) * _CDF_ERROR)
    log_c = np.logaddexp(h + np.log(tau), np.log(k_max) + h + grid_log_beta)
    curve = selection_rdp(alphas, eps, law)
    # delta = e^h delta_R + c (1 + e^(eps_R + h)): give c's share a bound b on eps_R first.
    base, _ = _rdp_to_dp_epsilon(alphas, curve, delta * (1.0 - 2.0**-20) * np.exp(-h))
    eps_r = float("inf")
    for _ in range(4):
        if not np.isfinite(base):
            break
        xi = max(delta * 2.0**-20, _up(float(np.exp(log_c + np.logaddexp(0.0, base + 1.0 + h)))))
        if not xi < delta:
            break
        e, _ = _rdp_to_dp_epsilon(alphas, curve, (delta - xi) * np.exp(-h))
        if e <= base + 1.0:
            eps_r = e
            break
        base = e
    return {"epsilon": _up(eps_r + k_max * grid_epsilon) if np.isfinite(eps_r) else float("inf"),
            "comparison_epsilon": eps_r, "k_max": float(k_max), "mean_runs": law.mean(), "tau": tau}


class _Draws:
    """Uniform draws from hsdp's CSPRNG (hsdp.Generator): an index among m by a 'fixed' batch
    order of one record over m (each step a uniform record), a uniform on the 2^-60 lattice from
    three draws over 2^20."""

    def __init__(self, seed: Optional[int]) -> None:
        self.generator = hsdp.Generator(seed=seed)
        self._orders: Dict[int, hsdp.BatchOrder] = {}

    def index(self, m: int) -> int:
        order = self._orders.get(m)
        if order is None:
            order = self._orders[m] = hsdp.BatchOrder("fixed", n=m, batch_size=1, generator=self.generator)
        return int(order.next()[0])

    def lattice(self) -> int:
        """A uniform integer in [0, 2^60)."""
        return (self.index(1 << 20) << 40) | (self.index(1 << 20) << 20) | self.index(1 << 20)


def _draw_runs(law: RunsLaw, k_max: int, draws: _Draws) -> int:
    """K' by inversion: the smallest k with u < F(k), u uniform on the 2^-60 lattice, capped at
    k_max (the cap and the lattice are charged as tau' in selection_epsilon)."""
    cdf = law.cdf_table(k_max)
    u = draws.lattice() * 2.0**-_LATTICE_BITS
    for k in range(law.first, k_max + 1):
        if u < cdf[k]:
            return k
    return k_max


class SearchReport:
    """The certificate of a private hyperparameter search: (epsilon, delta) of the released
    selection (the best run's model and parameters, its public validation score), the run
    target each candidate was calibrated to, the law of the number of runs, and the randomness.
    A seeded search is marked "seeded: for experiments, not for release" (release False)."""

    def __init__(self, *, epsilon: float, delta: float, adjacency: str, run_epsilon: float, law: RunsLaw,
                 candidates: int, terms: Dict[str, float], analyses: List[str], seeded: bool,
                 randomness: str) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.adjacency = adjacency
        self.run_epsilon = run_epsilon
        self.law = law
        self.candidates = candidates
        self.terms = terms
        self.analyses = analyses
        self.seeded = seeded
        self.randomness = randomness

    @property
    def release(self) -> bool:
        return not self.seeded

    def to_dict(self) -> Dict[str, Any]:
        return {"epsilon": self.epsilon, "delta": self.delta, "adjacency": self.adjacency,
                "theorem": ("Papernot & Steinke 2022, Theorem 2 (truncated negative binomial)"
                            if self.law.distribution == "negative-binomial"
                            else "Papernot & Steinke 2022, Theorem 6 (Poisson)"),
                "runs": repr(self.law), "mean_runs": self.terms["mean_runs"], "k_max": int(self.terms["k_max"]),
                "run_epsilon": self.run_epsilon, "candidates": self.candidates,
                "base_rdp_analyses": self.analyses, "comparison_epsilon": self.terms["comparison_epsilon"],
                "randomness": self.randomness, "seeded": self.seeded, "release_certificate": self.release}

    def to_json(self, indent: int = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    def __str__(self) -> str:
        d = self.to_dict()
        mark = "" if self.release else "NOT A RELEASE CERTIFICATE: the search was seeded (for experiments)\n"
        return (f"{mark}private hyperparameter search: epsilon = {d['epsilon']} at delta = {d['delta']} "
                f"({self.adjacency}-one adjacency), {d['theorem']}\n"
                f"runs K ~ {d['runs']} (E[K] = {d['mean_runs']:.4g}), {self.candidates} candidates, each run "
                f"calibrated to epsilon = {self.run_epsilon:.6g}; base RDP from {', '.join(self.analyses)}\n"
                f"randomness: {self.randomness}")

    def __repr__(self) -> str:
        kind = _SEEDED if self.seeded else "release certificate"
        return (f"<hsdp.sklearn.SearchReport {kind}; epsilon={self.epsilon} delta={self.delta} "
                f"adjacency={self.adjacency}>")


class PrivateHyperparameterSearch(BaseEstimator):  # type: ignore[misc]
    """A private hyperparameter search over hsdp estimators that certifies the selected model
    (Papernot & Steinke 2022; docs/python.md "Private hyperparameter search").

        search = PrivateHyperparameterSearch(LogisticRegression(feature_ranges=...),
                                             {"l2": [0.0, 0.01], "epochs": [1, 4]},
                                             epsilon=1.0, gamma=0.2)
        search.fit(X, y, public_validation=(X_val, y_val))
        search.best_params_, search.privacy_report_.epsilon

    K runs, K from `distribution` ("negative-binomial": eta, gamma; "poisson": mu), each fits a
    candidate drawn uniformly from param_distributions (a dict of lists, or a list of them: every
    combination is a candidate) at the run target run_epsilon (None: the largest one, found by
    bisection, whose search meets epsilon at delta). The best run by its score on
    public_validation -- records the caller declares PUBLIC (not the training records: a score
    on private records would be a release the theorem does not cover) -- is kept: best_estimator_,
    best_params_, best_score_. Nothing else of the runs is kept (their number K and scores would
    void the bound). privacy_report_ (SearchReport) certifies the selection.
    """

    best_estimator_: Optional[_HsdpLinearModel]
    best_params_: Optional[Dict[str, Any]]
    best_score_: float
    privacy_report_: SearchReport

    def __init__(self, estimator: _HsdpLinearModel, param_distributions: Union[Mapping[str, Sequence[Any]],
                                                                                Sequence[Mapping[str, Sequence[Any]]]],
                 *, epsilon: float = 1.0, delta: float = 1e-5, distribution: str = "negative-binomial",
                 eta: Optional[float] = None, gamma: Optional[float] = None, mu: Optional[float] = None,
                 run_epsilon: Optional[float] = None, random_state: object = None) -> None:
        self.estimator = estimator
        self.param_distributions = param_distributions
        self.epsilon = epsilon
        self.delta = delta
        self.distribution = distribution
        self.eta = eta
        self.gamma = gamma
        self.mu = mu
        self.run_epsilon = run_epsilon
        self.random_state = random_state

    def _candidates(self) -> List[Dict[str, Any]]:
        from sklearn.model_selection import ParameterGrid
        try:
            grid = list(ParameterGrid(self.param_distributions))
        except (TypeError, ValueError) as e:
            raise ValueError(f"param_distributions = {self.param_distributions!r}: {e}") from None
        if not grid:
            raise ValueError("param_distributions: no candidate")
        forbidden = {"epsilon", "delta", "random_state"} & {k for c in grid for k in c}
        if forbidden:
            raise ValueError(f"param_distributions: {sorted(forbidden)} are set by the search (each run's target "
                             "is run_epsilon, its randomness the search's)")
        params = set(self.estimator.get_params())
        for c in grid:
            for k in c:
                if k not in params:
                    raise ValueError(f"param_distributions: {k!r} is not a parameter of {type(self.estimator).__name__}")
        return grid

    def _runs_at(self, candidates: List[Dict[str, Any]], run_epsilon: float, X: FloatArray, y: npt.NDArray[Any],
                 seeded: bool) -> List[hsdp.Run]:
        """The run each candidate's fit performs at run_epsilon. A run is a function of public
        quantities only (n, d, the label set, the parameters, the target; the plan never reads a
        record): it is read from a fit on placeholder records of the same shape and labels, and
        fit() checks that each real run equals it."""
        Xp = np.zeros_like(X)
        if self.estimator.feature_ranges is not None:
            lows, highs = _read_ranges(self.estimator.feature_ranges, "feature_ranges")
            Xp = Xp + (lows / 2 + highs / 2)
        runs = []
        for c in candidates:
            est = clone(self.estimator).set_params(**c, epsilon=run_epsilon, random_state=0 if seeded else None)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est.fit(Xp, y)
            runs.append(est.privacy_report_.run)
        return runs

    def _bound(self, runs: List[hsdp.Run], law: RunsLaw) -> Tuple[Dict[str, float], List[str]]:
        curves = [hsdp.rdp_curve(run, list(_ORDERS)) for run in runs]
        eps = [max(c[0][i] for c in curves) for i in range(len(_ORDERS))]
        names = sorted({c[1][i] for c in curves for i in range(len(_ORDERS)) if c[1][i]})
        grids = [run.to_dict().get("noise_grid") for run in runs]
        E = max([float(g["epsilon"]) for g in grids if g] or [0.0])
        log_beta = max([float(g["log_beta"]) for g in grids if g] or [float("-inf")])
        terms = selection_epsilon(_ORDERS, eps, law, self.delta, grid_epsilon=E, grid_log_beta=log_beta)
        return terms, names

    def fit(self, X: npt.ArrayLike, y: npt.ArrayLike, *,
            public_validation: Optional[Tuple[npt.ArrayLike, npt.ArrayLike]] = None) -> "PrivateHyperparameterSearch":
        if not isinstance(self.estimator, _HsdpLinearModel):
            raise TypeError(f"estimator = {self.estimator!r}: must be an hsdp.sklearn estimator (a Pipeline's "
                            "fitted steps would read the records; use feature_ranges or PublicRangeScaler)")
        if public_validation is None:
            raise TypeError("public_validation = None: give (X_val, y_val), records you declare public (not the "
                            "training records): the search ranks its runs by their score there")
        if not _is_number(self.epsilon) or not (np.isfinite(self.epsilon) and self.epsilon > 0):
            raise ValueError(f"epsilon = {self.epsilon!r}: must be a finite number > 0 (the search's target)")
        if not _is_number(self.delta) or not 0 < self.delta < 1:
            raise ValueError(f"delta = {self.delta!r}: must be in (0, 1)")
        law = RunsLaw(self.distribution, eta=self.eta, gamma=self.gamma, mu=self.mu)
        candidates = self._candidates()
        seed, randomness = _seed(self.random_state)
        seeded = seed is not None
        from sklearn.utils.validation import check_X_y
        Xv, yv = check_X_y(X, y, dtype=np.float64, order="C")
        Xval, yval = check_X_y(*public_validation, dtype=np.float64, order="C")
        shared = set(_record_digests(Xval, yval)) & set(_record_digests(Xv, yv))
        if shared:
            raise ValueError(
                f"public_validation: {len(shared)} of its records are also training records: a score on them "
                "reads private records, which the selection's bound does not cover; give validation records "
                "that are public")
        _SEARCH_DEPTH[0] += 1
        try:
            if self.run_epsilon is None:
                run_epsilon, runs, terms, names = self._calibrate(candidates, Xv, yv, law, seeded)
            else:
                run_epsilon = float(self.run_epsilon)
                runs = self._runs_at(candidates, run_epsilon, Xv, yv, seeded)
                terms, names = self._bound(runs, law)
            if not np.isfinite(terms["epsilon"]):
                raise ValueError("not applicable: no analysis states the RDP curve of the candidates' runs "
                                 f"(analyses: {names or 'none'}), which the selection's bound needs")
            draws = _Draws(seed)
            k = _draw_runs(law, int(terms["k_max"]), draws)
            best: Optional[Tuple[float, bytes, _HsdpLinearModel, Dict[str, Any]]] = None
            for _ in range(k):
                i = draws.index(len(candidates))
                run_seed = draws.lattice() if seeded else None
                est = clone(self.estimator).set_params(**candidates[i], epsilon=run_epsilon, random_state=run_seed)
                est.fit(Xv, yv)
                if est.privacy_report_.run.to_json() != runs[i].to_json():
                    raise RuntimeError("the run of a candidate differs from its planned run: the certificate "
                                       "would not describe it; refused")  # pragma: no cover - a library contract
                score = float(est.score(Xval, yval))
                key = (score if score == score else float("-inf"),
                       b"".join(np.ascontiguousarray(np.asarray(v, dtype=np.float64)).tobytes()
                                for v in (est._weights, est._bias)) + repr(sorted(candidates[i].items())).encode())
                if best is None or key > best[:2]:
                    best = (key[0], key[1], est, candidates[i])
        finally:
            _SEARCH_DEPTH[0] -= 1
        adjacency = runs[0].adjacency
        self.privacy_report_ = SearchReport(epsilon=terms["epsilon"], delta=self.delta, adjacency=adjacency,
                                            run_epsilon=run_epsilon, law=law, candidates=len(candidates),
                                            terms=terms, analyses=names, seeded=seeded, randomness=randomness)
        self.best_estimator_ = None if best is None else best[2]
        self.best_params_ = None if best is None else dict(best[3])
        self.best_score_ = float("nan") if best is None else best[0]
        _spend(Xv, yv, False, "PrivateHyperparameterSearch.fit")
        return self

    def _calibrate(self, candidates: List[Dict[str, Any]], X: FloatArray, y: npt.NDArray[Any], law: RunsLaw,
                   seeded: bool) -> Tuple[float, List[hsdp.Run], Dict[str, float], List[str]]:
        """The largest run target (to 3 significant digits, bisection on a log scale) whose
        search meets epsilon: the conservative end, never above."""
        cache: Dict[float, Tuple[List[hsdp.Run], Dict[str, float], List[str]]] = {}

        def total(run_eps: float) -> float:
            if run_eps not in cache:
                runs = self._runs_at(candidates, run_eps, X, y, seeded)
                terms, names = self._bound(runs, law)
                cache[run_eps] = (runs, terms, names)
            return cache[run_eps][1]["epsilon"]

        lo, hi = self.epsilon * 1e-3, self.epsilon
        if total(lo) > self.epsilon:
            raise ValueError(f"epsilon = {self.epsilon}: the search cannot meet it (runs at epsilon {lo:.3g} "
                             f"already cost {total(lo):.4g}); raise epsilon or gamma / lower mu")
        for _ in range(12):
            mid = float(np.sqrt(lo * hi))
            if total(mid) <= self.epsilon:
                lo = mid
            else:
                hi = mid
            if hi / lo < 1.002:
                break
        runs, terms, names = cache[lo]
        return lo, runs, terms, names

    def predict(self, X: npt.ArrayLike) -> npt.NDArray[Any]:
        return self._best().predict(X)  # type: ignore[no-any-return]

    def score(self, X: npt.ArrayLike, y: npt.ArrayLike) -> float:
        return float(self._best().score(X, y))

    def _best(self) -> _HsdpLinearModel:
        check_is_fitted(self, "privacy_report_")
        if self.best_estimator_ is None:
            raise ValueError("the search drew K = 0 runs (Poisson): it released no model")
        return self.best_estimator_
