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


def test_audit_mia_request_names_keywords(subset):
    # One library request (audit::MiaRequest) checks the options for the command and for
    # Python; Python's messages name the keyword, never the command's flag.
    X, y = subset
    for kwargs, keyword in ((dict(trials=1), "trials"), (dict(trials=2**24 + 1), "trials"),
                            (dict(confidence=1.0), "confidence"), (dict(threads=-1), "threads"),
                            (dict(delta=0.0), "delta")):
        with pytest.raises(ValueError) as info:
            hsdp.audit_mia(X, y, sigma=1.0, **kwargs)
        message = str(info.value)
        assert message.startswith(f"{keyword} = "), message
        assert "--" not in message, message
    with pytest.raises(ValueError) as info:
        hsdp.audit_mia(X, y, trials=10)
    assert str(info.value) == ("sigma = (missing): must be one of sigma, noise_std or a target "
                               "epsilon (with delta)")
