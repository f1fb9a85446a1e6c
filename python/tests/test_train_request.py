"""hsdp.train(data=...) is the request of `hsdp train --data ...`: the same records (read,
classes, labels, split, public feature ranges, preparation), the same model file and the same
text, byte for byte; arrays are the same request with the records handed over in memory."""

import json
import pathlib
import warnings

import numpy as np
import pytest

import hsdp
from conftest import REPO, run_cli

HEART = pathlib.Path("/usr/share/doc/liblinear-tools/examples/heart_scale")
SKLEARN = pathlib.Path("/usr/lib/python3/dist-packages/sklearn/datasets/data")
BREAST_CANCER = SKLEARN / "breast_cancer.csv"
RANGES = REPO / "data" / "feature-ranges" / "breast_cancer.txt"


def need(*paths):
    for p in paths:
        if not p.exists():
            pytest.skip(f"{p} is not installed (scripts/install-deps.sh)")


# (flags of `hsdp train`, keywords of hsdp.train) for the same request.
REQUESTS = [
    (["--data", HEART, "--format", "libsvm", "--model", "logistic", "--epsilon", "1", "--seed", "1"],
     dict(data=str(HEART), format="libsvm", model="logistic", epsilon=1, seed=1)),
    (["--data", BREAST_CANCER, "--feature-ranges", RANGES, "--model", "logistic", "--epsilon", "1", "--seed", "2",
      "--test-fraction", "0.3", "--split-seed", "4"],
     dict(data=str(BREAST_CANCER), feature_ranges=str(RANGES), model="logistic", epsilon=1, seed=2,
          test_fraction=0.3, split_seed=4)),
    (["--data", HEART, "--format", "libsvm", "--model", "huber", "--sigma", "1", "--batch-size", "20", "--seed", "3",
      "--sampling", "cyclic"],
     dict(data=str(HEART), format="libsvm", model="huber", sigma=1, batch_size=20, seed=3, sampling="cyclic")),
]


@pytest.mark.parametrize("flags,keywords", REQUESTS)
def test_file_request_prints_and_writes_what_the_command_does(tmp_path, flags, keywords):
    need(HEART, BREAST_CANCER)
    cli_model, py_model = tmp_path / "cli.json", tmp_path / "py.json"
    text = run_cli("train", *flags, "--output", cli_model).stdout
    document = run_cli("train", *flags, "--json").stdout
    r = hsdp.train(**keywords, output=str(py_model))
    assert r.text() == text.replace(str(cli_model), str(py_model))
    assert r.to_json() + "\n" == document
    assert py_model.read_text() == cli_model.read_text()
    assert r.to_dict() == json.loads(document)
    assert r.split == r.to_dict()["configuration"]["split"]
    assert r.test_evaluation["accuracy"] == r.to_dict()["test_accuracy"]


def test_feature_ranges_in_a_file_or_in_memory():
    need(BREAST_CANCER)
    pairs = []
    for line in RANGES.read_text().splitlines():
        words = line.split("#")[0].split()
        if words:
            pairs.append((float(words[0]), float(words[1])))
    a = hsdp.train(data=str(BREAST_CANCER), feature_ranges=str(RANGES), epsilon=1, seed=1)
    b = hsdp.train(data=str(BREAST_CANCER), feature_ranges=pairs, epsilon=1, seed=1)
    np.testing.assert_array_equal(a.theta, b.theta)
    model = json.loads(a.model_json())
    assert model["feature_center"][3] == (143.5 + 2501.0) / 2  # area (mean): [143.5, 2501]
    assert "onto [-1, 1]" in a.preprocessing
    with pytest.raises(ValueError, match="feature_ranges"):
        hsdp.train(data=str(BREAST_CANCER), feature_ranges=pairs[:2], sigma=1)


def test_arrays_are_not_split_unless_asked():
    need(BREAST_CANCER)
    X, y, _ = hsdp.read_csv(str(BREAST_CANCER))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # raw breast_cancer: two features dominate (tested below)
        whole = hsdp.train(X, y, sigma=1, batch_size=50, epochs=1, seed=1)
        split = hsdp.train(X, y, sigma=1, batch_size=50, epochs=1, seed=1, test_fraction=0.2)
        from_file = hsdp.train(data=str(BREAST_CANCER), sigma=1, batch_size=50, epochs=1, seed=1)
    assert whole.split == "569 train records (no test records)" and whole.test_evaluation is None
    assert "test_accuracy" not in whole.to_dict()
    assert split.split == from_file.split == "455 train / 114 test records (split fraction 0.2, split seed 1)"
    np.testing.assert_array_equal(split.theta, from_file.theta)
    assert split.test_evaluation == from_file.test_evaluation
    assert split.to_dict()["configuration"]["data"] == "X"


def test_the_owners_warning_is_a_python_warning():
    need(BREAST_CANCER)
    with pytest.warns(UserWarning, match="2 largest features.*feature_scale"):
        r = hsdp.train(data=str(BREAST_CANCER), sigma=1, steps=2, batch_size=10, seed=1)
    assert "largest features" in r.warning
    assert "largest features" not in r.to_json()


def test_data_or_arrays(tmp_path):
    need(BREAST_CANCER)
    X, y, _ = hsdp.read_csv(str(BREAST_CANCER))
    with pytest.raises(ValueError, match="^data = "):
        hsdp.train(X, y, data=str(BREAST_CANCER), sigma=1)
    with pytest.raises(ValueError, match="^data = \\(missing\\)"):
        hsdp.train(sigma=1)
    with pytest.raises(ValueError, match="^y = \\(missing\\)"):
        hsdp.train(X, sigma=1)
    with pytest.raises(ValueError, match="^test_fraction = 1"):
        hsdp.train(data=str(BREAST_CANCER), sigma=1, test_fraction=1.0)
    with pytest.raises(ValueError, match="^test_data = "):
        wide = tmp_path / "wide.csv"
        wide.write_text("1,2,0\n3,4,1\n")
        hsdp.train(data=str(BREAST_CANCER), test_data=str(wide), sigma=1, steps=1, batch_size=10)
    # The run's errors come before the data's, as on the command line.
    with pytest.raises(ValueError, match="^record_norm = 0"):
        hsdp.train(data="/nonexistent.csv", sigma=1, record_norm=0)
