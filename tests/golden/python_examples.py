"""The Python examples whose output is golden (scripts/golden.py): the "Describe, then ask"
block of docs/python.md, value by value, then examples/python_tour.py (its printed output; the
PNG figures are not compared). Run with the output directory as the only argument."""

import os
import pathlib
import runpy
import sys

import hsdp

work = pathlib.Path(sys.argv[1])
work.mkdir(parents=True, exist_ok=True)
os.chdir(work)

# docs/python.md, "Describe, then ask"
run = hsdp.Run(n=1000, eta=0.05, sigma=3, convention="journal",
               lipschitz=1, smoothness=1, diameter=1)
acc = hsdp.Accountant(run)
print(repr(run))
print(acc.get_epsilon(1e-5))
print(acc.get_delta(1.0))
report = acc.report(delta=1e-5)
best = report.best
assert best is not None
print(best.name)
print([r.name for r in report.analyses if not r.applicable])
print(report.table())
print(report.to_json())
print(run.cli_args())
print(run.replace(steps=2000).cli_args())
print(hsdp.calibrate(run, "noise", epsilon=1.0, delta=1e-5).to_json())
print(hsdp.plan("federated", epsilon=1, delta=1e-5, n=1000, lipschitz=1, smoothness=1,
                strong_convexity=0.5, diameter=2, dimension=5).to_json())

# docs/python.md, "From a data file": the request of `hsdp train --data ... --json`
heart = "/usr/share/doc/liblinear-tools/examples/heart_scale"
r = hsdp.train(data=heart, format="libsvm", model="logistic", epsilon=1, seed=1)
print(r.text(), end="")
assert r.test_evaluation is not None and r.plan is not None
print(r.split, r.test_evaluation["accuracy"], r.plan["chosen"])

# docs/python.md, "scikit-learn estimators" (the feature-ranges files of the repository)
import numpy as np  # noqa: E402
from sklearn.datasets import load_breast_cancer, load_wine  # noqa: E402
from sklearn.model_selection import cross_val_score, train_test_split  # noqa: E402
import warnings  # noqa: E402
from hsdp.sklearn import LogisticRegression, PrivacySpendWarning  # noqa: E402

# The warnings these examples give the data owner (the same records fitted again; 11 of
# breast_cancer's values outside its documented ranges) go to stderr with absolute paths:
# not golden. python/tests/test_sklearn.py asserts them.
warnings.filterwarnings("ignore", category=PrivacySpendWarning)
warnings.filterwarnings("ignore", message="for the data owner")

ranges = pathlib.Path(__file__).resolve().parents[2] / "data" / "feature-ranges"
X, y = load_breast_cancer(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=0)
clf = LogisticRegression(epsilon=1, feature_ranges=str(ranges / "breast_cancer.txt"), random_state=1)
clf.fit(X_train, y_train)
print(clf.score(X_test, y_test))
print(clf.predict(X_test[:5]), clf.classes_)
print(clf.coef_.shape, clf.intercept_)
sk_report = clf.privacy_report_
assert sk_report.best is not None
print(sk_report.epsilon, sk_report.delta, sk_report.adjacency, sk_report.best.name)
print(sk_report.add_remove_epsilon)
print(sk_report.run.summary())
print(sk_report.table())
print(sk_report.seeded, repr(sk_report))
Xw, yw = load_wine(return_X_y=True, as_frame=True)
wine_names = np.array(["barolo", "grignolino", "barbera"])[yw]
wine = LogisticRegression(feature_ranges=str(ranges / "wine.txt"), random_state=1).fit(Xw, wine_names)
print(wine.classes_, wine.coef_.shape, wine.feature_names_in_[:3], wine.predict(Xw.iloc[:3]))
print(wine.predict_proba(Xw.iloc[:2]).round(3))
scores = cross_val_score(LogisticRegression(feature_ranges=str(ranges / "breast_cancer.txt"), random_state=1),
                         X, y, cv=5)
print(scores.round(4), scores.mean())
# docs/python.md, "Public ranges in a pipeline" and "Private hyperparameter search"
from sklearn.pipeline import make_pipeline  # noqa: E402
from hsdp.sklearn import PrivateHyperparameterSearch, PublicRangeScaler  # noqa: E402
pipe = make_pipeline(PublicRangeScaler(ranges=str(ranges / "breast_cancer.txt")),
                     LogisticRegression(record_norm=2, random_state=1)).fit(X_train, y_train)
print(pipe.score(X_test, y_test))
search = PrivateHyperparameterSearch(
    LogisticRegression(feature_ranges=str(ranges / "breast_cancer.txt")),
    {"l2": [0.0, 0.01, 0.05], "radius": [None, 3.0]}, epsilon=1.0, gamma=0.1, run_epsilon=0.5, random_state=1)
search.fit(X_train, y_train, public_validation=(X_test[::2], y_test[::2]))
print(search.best_params_, search.best_score_, search.score(X_test[1::2], y_test[1::2]))
print(search.privacy_report_)

# docs/python.md, "hsdp.torch: a privacy engine" and "Coming from Opacus": the certificates of
# the eleven loop changes that certify (they depend on the ledger's shape, not on the draws) and
# the noise multipliers of the Opacus mapping
import math  # noqa: E402
from typing import Any, Dict, List, Tuple  # noqa: E402
import torch  # noqa: E402
import hsdp.torch as ht  # noqa: E402


def torch_engine(scaled: bool = True, **kw: Any) -> ht.PrivacyEngine:
    g = torch.Generator().manual_seed(5)
    xt = torch.randn(600, 20, dtype=torch.float64, generator=g) * 3.0
    if scaled:
        xt = xt / torch.clamp(torch.linalg.norm(xt, dim=1, keepdim=True), min=1.0)
    yt = torch.where(xt[:, 0] + 0.3 * xt[:, 1] > 0, 1.0, -1.0).double()
    m = torch.nn.Linear(20, 1).double()
    torch.nn.init.zeros_(m.weight)
    torch.nn.init.zeros_(m.bias)
    options: Dict[str, Any] = dict(loss="logistic", batch_size=64, noise_std=0.6186117348, record_norm=math.sqrt(2),
                         radius=100.0)
    options.update(kw)
    e = ht.PrivacyEngine(m, xt, yt, **options)
    for _ in range(3):
        for batch in e.data_loader():
            e.step(batch)
    return e


changes: List[Tuple[str, Dict[str, Any]]] = [("none", {}), ("half the noise", dict(noise_std=0.6186117348 / 2)),
                   ("shuffle=False as cyclic", dict(sampling="cyclic")), ("step size x3", dict(eta=3 * 1.98 / 0.5)),
                   ("gradient sum", dict(reduction="sum")), ("no projection", dict(radius=None)),
                   ("batch size 32", dict(batch_size=32)), ("drop_last=False", dict(drop_last=False)),
                   ("clip instead of scaling", dict(scaled=False, record_norm=None, clip=math.sqrt(2), eta=3.96))]
for change, kw in changes:
    print(change, "|", torch_engine(**kw).certificate(1e-5))
print(torch_engine(seed=7).certificate(1e-5, experiment=True))
print(torch_engine(noise_std=0.0).certificate(1e-5))
gx = torch.Generator().manual_seed(0)
x60 = torch.randn(60000, 10, dtype=torch.float64, generator=gx)
y60 = torch.where(x60[:, 0] > 0, 1.0, -1.0).double()
for adjacency in ("remove", "replace"):
    dpsgd = ht.make_private_with_epsilon(torch.nn.Linear(10, 1).double(), x60, y60, loss="logistic", batch_size=256,
                                         target_epsilon=1.0, target_delta=1e-5, epochs=60, clip=1.0, eta=0.5,
                                         sampling="poisson", release="every", adjacency=adjacency)
    print(adjacency, dpsgd.steps_for(60), dpsgd.noise_std, dpsgd.noise_std * 256 / 0.5)

# examples/python_tour.py (two training targets: HSDP_TOUR_QUICK)
os.environ["HSDP_TOUR_QUICK"] = "1"
tour = pathlib.Path(__file__).resolve().parents[2] / "examples" / "python_tour.py"
sys.argv = [str(tour), "tour"]
runpy.run_path(str(tour), run_name="__main__")
