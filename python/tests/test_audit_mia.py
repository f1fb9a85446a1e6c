"""hsdp.audit_mia on numpy arrays equals `hsdp audit mia --json` on the same records with the
same master seed: the same per-trial seeds, scores, empirical bound and certified epsilon."""

import pathlib

import numpy as np
import pytest

import hsdp
from conftest import cli_error, cli_json

BREAST_CANCER = pathlib.Path("/usr/lib/python3/dist-packages/sklearn/datasets/data/breast_cancer.csv")


@pytest.fixture(scope="module")
def subset():
    if not BREAST_CANCER.exists():
        pytest.skip("python3-sklearn's breast_cancer.csv is not installed")
    X, y, _ = hsdp.read_csv(str(BREAST_CANCER))
    # 60 records, features scaled by public constants so the rows are not all clipped alike.
    return np.ascontiguousarray(X[:60] / 100.0), np.ascontiguousarray(y[:60])


def write_csv(path, X, y):
    with open(path, "w") as f:
        for row, label in zip(X, y):
            f.write(",".join(repr(float(v)) for v in row) + f",{int(label)}\n")


def test_audit_mia_equals_cli(tmp_path, subset):
    X, y = subset
    path = tmp_path / "subset.csv"
    write_csv(path, X, y)
    _, doc = cli_json("audit", "mia", "--data", path, "--model", "logistic", "--algorithm", "pnsgd",
                      "--sigma", "1", "--trials", "40", "--seed", "7", "--threads", "1")
    got = hsdp.audit_mia(X, y, model="logistic", algorithm="pnsgd", sigma=1.0, trials=40, seed=7,
                         threads=1)
    for key in ("empirical", "certified", "seeds", "scores", "canary"):
        assert got[key] == doc[key], key
    assert got["empirical"]["epsilon_lower"] <= got["certified"]["epsilon"]


def test_audit_mia_bad_input_is_value_error(subset):
    X, y = subset
    with pytest.raises(ValueError, match="^trials = "):
        hsdp.audit_mia(X, y, sigma=1.0, trials=2)
    with pytest.raises(ValueError, match="^sigma = "):
        hsdp.audit_mia(X, y, trials=10)
