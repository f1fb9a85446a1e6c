#!/usr/bin/python3
"""The defaults of hsdp.sklearn against `hsdp train`'s (docs/python.md, "scikit-learn
estimators"): test accuracy at epsilon = 1 of LogisticRegression(feature_ranges=...) with
nothing else stated, on breast_cancer (2 classes: the logistic loss) and wine (3 classes: the
softmax loss), against `hsdp train --data F --feature-ranges R --model M --epsilon 1` on the
same split (the command's default: fraction 0.2, split seed 1), seed by seed.

    PYTHONPATH=build/python scripts/sklearn_defaults.py [--hsdp build/hsdp] [--seeds 1-20]

Both are seeded per run (random_state=S, --seed S) and certified as their unseeded twins
(order_known=False, --order-known false), as scripts/defaults_table.py measures the command.
The split is the command's (SplitMix64 Fisher-Yates of src/data/preprocess.cpp), rebuilt here
so that the estimator sees exactly the command's training records; equal accuracies seed by
seed show that both the split and the fit are the same. Exits 1 on any difference.
"""
import argparse
import json
import math
import pathlib
import subprocess
import sys
import warnings

import numpy as np

from hsdp.sklearn import LogisticRegression, PrivacySpendWarning

# A measurement fits the same records once per seed on purpose: each fit is measured, none is
# released.
warnings.filterwarnings("ignore", category=PrivacySpendWarning)

ROOT = pathlib.Path(__file__).resolve().parents[1]
SK = pathlib.Path("/usr/lib/python3/dist-packages/sklearn/datasets/data")
SETS = {  # name -> (data file, feature ranges, the command's --model)
    "breast_cancer": (SK / "breast_cancer.csv", ROOT / "data/feature-ranges/breast_cancer.txt", "logistic"),
    "wine": (SK / "wine_data.csv", ROOT / "data/feature-ranges/wine.txt", "softmax"),
}
MASK = (1 << 64) - 1


def splitmix64(state):
    """SplitMix64 as src/data/preprocess.cpp: yields 64-bit outputs."""
    while True:
        state = (state + 0x9E3779B97F4A7C15) & MASK
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        yield z ^ (z >> 31)


def test_records(n, fraction=0.2, seed=1):
    """data::test_records: a Fisher-Yates shuffle by SplitMix64 (rejection sampling), the first
    round(fraction * n) positions are the test records."""
    n_test = math.floor(fraction * n + 0.5)
    order = list(range(n))
    rng = splitmix64(seed)
    for i in range(n - 1, 0, -1):
        bound = i + 1
        limit = ((1 << 64) - bound) % bound  # 2^64 mod bound
        while True:
            r = next(rng)
            if r >= limit:
                break
        j = r % bound
        order[i], order[j] = order[j], order[i]
    is_test = np.zeros(n, dtype=bool)
    is_test[order[:n_test]] = True
    return is_test


def seeds(text):
    lo, _, hi = text.partition("-")
    return list(range(int(lo), int(hi or lo) + 1))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hsdp", default=str(ROOT / "build" / "hsdp"))
    parser.add_argument("--seeds", type=seeds, default=seeds("1-20"))
    args = parser.parse_args()
    differences = 0
    print("| data set | estimator | train / test | mean test accuracy (estimator) | mean (`hsdp train`) | "
          "std. error | min - max | seeds equal |")
    print("|---|---|---|---|---|---|---|---|")
    for name, (data, ranges, model) in SETS.items():
        rows = np.loadtxt(data, delimiter=",", skiprows=1)
        X, y = rows[:, :-1], rows[:, -1].astype(int)
        test = test_records(len(y))
        ours, theirs = [], []
        for s in args.seeds:
            clf = LogisticRegression(feature_ranges=str(ranges), random_state=s, order_known=False)
            clf.fit(X[~test], y[~test])
            ours.append(clf.score(X[test], y[test]))
            assert clf.privacy_report_.epsilon <= 1.0, (name, s, clf.privacy_report_.epsilon)
            out = subprocess.run([args.hsdp, "train", "--data", str(data), "--feature-ranges", str(ranges),
                                  "--model", model, "--epsilon", "1", "--seed", str(s), "--order-known", "false",
                                  "--json"], capture_output=True, text=True, check=True).stdout
            doc = json.loads(out)
            theirs.append(doc["test_accuracy"])
            if ours[-1] != theirs[-1] or json.loads(clf.privacy_report_.report.to_json()) != doc["report"]:
                differences += 1
                print(f"{name} seed {s}: estimator {ours[-1]} vs hsdp train {theirs[-1]}", file=sys.stderr)
        a = np.array(ours)
        equal = sum(o == t for o, t in zip(ours, theirs))
        print(f"| {name} ({model} loss), ranges | LogisticRegression | {(~test).sum()} / {test.sum()} | "
              f"**{a.mean():.4f}** | {np.mean(theirs):.4f} | {a.std(ddof=1) / math.sqrt(len(a)):.4f} | "
              f"{a.min():.4f} - {a.max():.4f} | {equal} of {len(a)} |")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
