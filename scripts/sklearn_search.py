#!/usr/bin/python3
"""The private hyperparameter search against the planner's defaults at equal total epsilon
(docs/python.md "Private hyperparameter search"): on `hsdp train`'s own split (fraction 0.2,
split seed 1), the test records are halved (even positions: a validation set declared PUBLIC
for the search's ranking; odd positions: where both are evaluated), and per seed S

  defaults  LogisticRegression(feature_ranges=R, random_state=S, order_known=False) at epsilon 1
            (the request of `hsdp train --epsilon 1`, scripts/sklearn_defaults.py)
  search    PrivateHyperparameterSearch(LogisticRegression(feature_ranges=R, order_known=False),
            GRID, epsilon=1, gamma=GAMMA, random_state=S): K ~ truncated negative binomial
            (eta = 0, gamma), the best run by its public validation accuracy

Both are certified as unseeded runs (order_known=False); both certificates are checked <= 1.
The runs' target is calibrated once per data set (the runs are public functions of n, d, the
labels and the parameters, so every seed's search has the same certificate).

    PYTHONPATH=build/python scripts/sklearn_search.py [--sets heart breast_cancer wine digits fashion_5v7
                                                       fashion_10] [--seeds 1-10]
"""
import argparse
import gzip
import math
import pathlib
import sys
import time
import warnings

import numpy as np
from sklearn.datasets import load_svmlight_file

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from sklearn_defaults import seeds, test_records  # noqa: E402  (the command's split)

from hsdp.sklearn import LogisticRegression, PrivateHyperparameterSearch  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
SK = pathlib.Path("/usr/lib/python3/dist-packages/sklearn/datasets/data")
RANGES = ROOT / "data" / "feature-ranges"
FM = "/usr/share/datasets/fashion-mnist"
GRID = {"l2": [0.0, 0.01, 0.05], "radius": [None, 3.0]}
GAMMA = 0.1


def idx(path):
    """An IDX file (Fashion-MNIST's format): images as rows of float64, or labels."""
    with gzip.open(path, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i: 8 + 4 * i], "big") for i in range(dims)]
    values = np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims)
    return values.reshape(shape[0], -1).astype(np.float64) if dims > 1 else values.astype(int)


def fashion(classes):
    """(train X, y, test X, y) of Fashion-MNIST (the t10k file is the test set, as in the
    defaults table), restricted to the classes."""
    parts = [idx(f"{FM}/{p}-ubyte.gz") for p in ("train-images-idx3", "train-labels-idx1", "t10k-images-idx3",
                                                 "t10k-labels-idx1")]
    keep = [np.isin(parts[1], classes), np.isin(parts[3], classes)]
    return parts[0][keep[0]], parts[1][keep[0]], parts[2][keep[1]], parts[3][keep[1]]


def load(name):
    if name == "heart":
        X, y = load_svmlight_file("/usr/share/doc/liblinear-tools/examples/heart_scale")
        return X.toarray(), y.astype(int), None
    if name == "digits":
        rows = np.loadtxt(SK / "digits.csv.gz", delimiter=",")
        return rows[:, :-1], rows[:, -1].astype(int), None
    file, ranges = {"breast_cancer": ("breast_cancer.csv", "breast_cancer.txt"),
                    "wine": ("wine_data.csv", "wine.txt")}[name]
    rows = np.loadtxt(SK / file, delimiter=",", skiprows=1)
    return rows[:, :-1], rows[:, -1].astype(int), str(RANGES / ranges)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", nargs="+", default=["heart", "breast_cancer", "wine", "digits"])
    parser.add_argument("--seeds", type=seeds, default=seeds("1-10"))
    args = parser.parse_args()
    warnings.simplefilter("ignore")  # the data owner's notes and the spend warnings of a measurement
    print("| data set | train / validation / evaluation | defaults at eps 1, mean | search at eps 1, mean | "
          "difference (std. error) | run target | chosen (count) |")
    print("|---|---|---|---|---|---|---|")
    for name in args.sets:
        start = time.time()
        if name.startswith("fashion"):
            Xtr, ytr, Xte, yte = fashion([5, 7] if name == "fashion_5v7" else list(range(10)))
            ranges = None
        else:
            X, y, ranges = load(name)
            test = test_records(len(y))
            Xtr, ytr = X[~test], y[~test]
            Xte, yte = X[test], y[test]
        Xval, yval, Xev, yev = Xte[::2], yte[::2], Xte[1::2], yte[1::2]
        base = dict(feature_ranges=ranges, order_known=False)
        ours, theirs, chosen, run_eps = [], [], {}, None
        for s in args.seeds:
            clf = LogisticRegression(**base, random_state=s).fit(Xtr, ytr)
            assert clf.privacy_report_.epsilon <= 1.0
            theirs.append(clf.score(Xev, yev))
            search = PrivateHyperparameterSearch(LogisticRegression(**base), GRID, epsilon=1.0, gamma=GAMMA,
                                                 run_epsilon=run_eps, random_state=s)
            search.fit(Xtr, ytr, public_validation=(Xval, yval))
            assert search.privacy_report_.epsilon <= 1.0, search.privacy_report_
            run_eps = search.privacy_report_.run_epsilon
            ours.append(search.score(Xev, yev))
            key = ", ".join(f"{k}={v}" for k, v in sorted(search.best_params_.items()))
            chosen[key] = chosen.get(key, 0) + 1
        d = np.array(ours) - np.array(theirs)
        top = "; ".join(f"{k} ({c})" for k, c in sorted(chosen.items(), key=lambda kv: -kv[1])[:2])
        print(f"| {name} | {len(ytr)} / {len(yval)} / {len(yev)} | {np.mean(theirs):.4f} | **{np.mean(ours):.4f}** | "
              f"{d.mean():+.4f} ({d.std(ddof=1) / math.sqrt(len(d)):.4f}) | {run_eps:.4f} | {top} |", flush=True)
        print(f"{name}: {time.time() - start:.0f} s, seeds {args.seeds[0]}-{args.seeds[-1]}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
