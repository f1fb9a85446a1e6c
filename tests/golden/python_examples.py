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
from hsdp.sklearn import LogisticRegression  # noqa: E402

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
Xw, yw = load_wine(return_X_y=True, as_frame=True)
wine_names = np.array(["barolo", "grignolino", "barbera"])[yw]
wine = LogisticRegression(feature_ranges=str(ranges / "wine.txt"), random_state=1).fit(Xw, wine_names)
print(wine.classes_, wine.coef_.shape, wine.feature_names_in_[:3], wine.predict(Xw.iloc[:3]))
print(wine.predict_proba(Xw.iloc[:2]).round(3))
scores = cross_val_score(LogisticRegression(feature_ranges=str(ranges / "breast_cancer.txt"), random_state=1),
                         X, y, cv=5)
print(scores.round(4), scores.mean())

# examples/python_tour.py (two training targets: HSDP_TOUR_QUICK)
os.environ["HSDP_TOUR_QUICK"] = "1"
tour = pathlib.Path(__file__).resolve().parents[2] / "examples" / "python_tour.py"
sys.argv = [str(tour), "tour"]
runpy.run_path(str(tour), run_name="__main__")
