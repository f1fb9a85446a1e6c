"""Model files and labels as the command has them: a model file written by `hsdp train --output`
round-trips through hsdp.load_model / Model.save byte for byte and `hsdp predict` reads the
copy alike; predictions come back in the training labels' own values (0/1, -1/+1, class
labels, str) as `hsdp predict --output` writes them; hsdp.train accepts text labels as the
command accepts M/B; records without labels are scored from arrays and files."""

import csv
import filecmp
import json
import pathlib

import numpy as np
import pytest

import hsdp
from conftest import REPO, run_cli

BREAST_CANCER = pathlib.Path("/usr/lib/python3/dist-packages/sklearn/datasets/data/breast_cancer.csv")
RANGES = REPO / "data" / "feature-ranges" / "breast_cancer.txt"
HEART = pathlib.Path("/usr/share/doc/liblinear-tools/examples/heart_scale")
pytestmark = pytest.mark.filterwarnings("ignore:for the data owner")


@pytest.fixture(scope="module")
def cancer():
    if not BREAST_CANCER.exists():
        pytest.skip("python3-sklearn's breast_cancer.csv is not installed")
    rows = np.loadtxt(BREAST_CANCER, delimiter=",", skiprows=1)
    return rows[:, :-1], rows[:, -1].astype(np.int64)


@pytest.fixture(scope="module")
def cli_model(tmp_path_factory, cancer):
    """`hsdp train --output a.json` on breast_cancer (labels 0/1, public feature ranges)."""
    tmp = tmp_path_factory.mktemp("model")
    path = tmp / "a.json"
    run_cli("train", "--data", BREAST_CANCER, "--model", "logistic", "--feature-ranges", RANGES, "--epsilon", 1,
            "--seed", 1, "--output", path)
    return path


def predictions_file(path):
    """The prediction column of `hsdp predict --output` (text)."""
    with open(path) as f:
        return [row["prediction"] for row in csv.DictReader(f)]


def test_cli_model_file_round_trips_byte_for_byte(tmp_path, cli_model, cancer):
    X, y = cancer
    m = hsdp.load_model(str(cli_model))
    b = tmp_path / "b.json"
    m.save(str(b))
    assert filecmp.cmp(cli_model, b, shallow=False)  # the whole document, byte for byte
    assert m.to_json() + "\n" == cli_model.read_text()
    assert json.loads(m.model_json()) == json.loads(cli_model.read_text())["model"]
    # What the model holds is the file's
    doc = json.loads(cli_model.read_text())["model"]
    assert m.loss == "logistic" and m.features == 30 and m.bias and m.outputs == 1
    np.testing.assert_array_equal(m.weights[0], doc["weights"][0])
    assert m.intercept == doc["intercept"]
    np.testing.assert_array_equal(m.feature_center, doc["feature_center"])
    np.testing.assert_array_equal(m.feature_scale, doc["feature_scale"])
    assert m.record_norm == doc["record_norm"]
    assert m.label_kind == "plus-minus-one"
    assert m.label_mapping == {0: -1.0, 1: 1.0}
    assert m.labels == "0 -> -1, 1 -> +1"
    # `hsdp predict` reads the copy as the original: the same predictions file and numbers.
    outputs = []
    for model in (cli_model, b):
        out = tmp_path / f"{model.stem}.pred.csv"
        proc = run_cli("predict", "--model-file", model, "--data", BREAST_CANCER, "--output", out, "--json")
        outputs.append((out.read_text(), json.loads(proc.stdout)))
    assert outputs[0][0] == outputs[1][0]
    assert outputs[0][1]["accuracy"] == outputs[1][1]["accuracy"]
    # ... and the loaded model predicts what `hsdp predict` wrote, in the labels' own values.
    pred = m.predict(X)
    assert pred.dtype == np.int64 and set(np.unique(pred)) == {0, 1}
    assert [str(v) for v in pred] == predictions_file(tmp_path / "a.pred.csv")
    e = m.evaluate(X, y)
    assert e["accuracy"] == outputs[0][1]["accuracy"] == np.mean(pred == y)
    assert e["loss"] == outputs[0][1]["loss"]
    assert m.evaluate_file(str(BREAST_CANCER)) == e


def test_train_result_saves_the_cli_document(tmp_path, cancer):
    X, y = cancer
    r = hsdp.train(data=str(BREAST_CANCER), feature_ranges=str(RANGES), epsilon=1, seed=1)
    r.save(str(tmp_path / "py.json"))
    run_cli("train", "--data", BREAST_CANCER, "--model", "logistic", "--feature-ranges", RANGES, "--epsilon", 1,
            "--seed", 1, "--output",
            tmp_path / "cli.json")
    assert filecmp.cmp(tmp_path / "py.json", tmp_path / "cli.json", shallow=False)
    # The model file is the release form (no statistic of the records); to_json() the owner's.
    assert json.loads((tmp_path / "py.json").read_text()) == r.model_document()
    m = r.model
    assert isinstance(m, hsdp.Model) and m.to_json() + "\n" == (tmp_path / "py.json").read_text()
    owner = r.to_dict()
    assert set(owner["not_private"]["fields"]) == {"train_accuracy", "test_accuracy", "train_loss", "test_loss",
                                                   "configuration.split"}
    assert owner["test_accuracy"] == r.test_evaluation["accuracy"]
    for field in ("train_accuracy", "test_accuracy", "train_loss", "test_loss", "not_private"):
        assert field not in m.to_dict()
    assert "split" not in m.to_dict()["configuration"]
    # A model file of an earlier hsdp, with the statistics: read, and saved without them.
    old = dict(m.to_dict(), train_loss=0.25, train_accuracy=0.5)
    (tmp_path / "old.json").write_text(json.dumps(old))
    reread = hsdp.load_model(str(tmp_path / "old.json"))
    assert "train_loss" not in reread.to_dict() and "train_accuracy" not in reread.to_dict()
    np.testing.assert_array_equal(reread.predict(X), r.predict(X))
    np.testing.assert_array_equal(m.theta, r.theta)
    np.testing.assert_array_equal(m.predict(X), r.predict(X))
    loaded = hsdp.load_model(str(tmp_path / "py.json"))
    np.testing.assert_array_equal(loaded.predict(X), r.predict(X))


def test_predict_returns_zero_one_labels_as_given(cancer):
    X, y = cancer
    r = hsdp.train(X, y, feature_ranges=str(RANGES), epsilon=1, seed=1)
    pred = r.predict(X)
    assert pred.dtype == np.int64 and set(np.unique(pred)) == {0, 1}
    assert r.evaluate(X, y)["accuracy"] == np.mean(pred == y)
    # floats 0.0/1.0 are the same labels; -1/+1 come back as -1/+1
    assert np.array_equal(hsdp.train(X, y.astype(float), epsilon=1, seed=1).predict(X),
                          hsdp.train(X, y, epsilon=1, seed=1).predict(X))
    pm = hsdp.train(X, 2 * y - 1, epsilon=1, seed=1).predict(X)
    assert set(np.unique(pm)) <= {-1, 1}
    np.testing.assert_array_equal(pm, 2 * hsdp.train(X, y, epsilon=1, seed=1).predict(X) - 1)


def test_string_labels_train_and_come_back_as_strings(tmp_path, cancer):
    X, y = cancer
    text = np.where(y == 1, "M", "B")
    r = hsdp.train(X, text, epsilon=1, seed=1)
    pred = r.predict(X)
    assert pred.dtype.kind == "U" and set(pred) <= {"M", "B"}
    # the same model as numbers 1/0 (M > B as 1 > 0: the larger label is positive)
    by_number = hsdp.train(X, y, epsilon=1, seed=1)
    np.testing.assert_array_equal(r.theta, by_number.theta)
    np.testing.assert_array_equal(pred, np.where(by_number.predict(X) == 1, "M", "B"))
    assert r.labels == "B -> -1, M -> +1"
    assert r.evaluate(X, text) == by_number.evaluate(X, y)
    # lists of str and object arrays of str are the same labels
    for labels in (list(text), text.astype(object)):
        np.testing.assert_array_equal(hsdp.train(X, labels, epsilon=1, seed=1).theta, r.theta)
    # `hsdp train` on the same records with M/B in the file: the same model file's model
    path = tmp_path / "mb.csv"
    with open(path, "w") as f:
        for row, label in zip(X, text):
            f.write(",".join(repr(float(v)) for v in row) + f",{label}\n")
    run_cli("train", "--data", path, "--model", "logistic", "--epsilon", 1, "--seed", 1, "--output", tmp_path / "mb.json")
    cli = hsdp.load_model(str(tmp_path / "mb.json"))
    assert cli.label_mapping == {"B": -1.0, "M": 1.0}
    out = tmp_path / "mb.pred.csv"
    run_cli("predict", "--model-file", tmp_path / "mb.json", "--data", path, "--output", out)
    assert list(cli.predict(X)) == predictions_file(out)
    assert list(cli.predict_file(str(path))) == predictions_file(out)


def test_softmax_class_labels_and_squared_scores():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(150, 4)) * 0.3
    names = np.array(["setosa", "versicolor", "virginica"])
    ids = rng.integers(0, 3, size=150)
    r = hsdp.train(X, names[ids], model="softmax", sigma=1.0, batch_size=25, seed=2)
    pred = r.predict(X)
    assert pred.dtype.kind == "U" and set(pred) <= set(names)
    by_id = hsdp.train(X, ids + 5, model="softmax", sigma=1.0, batch_size=25, seed=2)  # classes 5, 6, 7
    np.testing.assert_array_equal(r.theta, by_id.theta)
    np.testing.assert_array_equal(pred, names[by_id.predict(X) - 5])
    assert by_id.model.label_mapping == {5: 0.0, 6: 1.0, 7: 2.0}
    # squared loss: real scores, not labels
    yr = np.clip(X @ np.array([0.5, -0.2, 0.1, 0.0]), -1, 1)
    s = hsdp.train(X, yr, model="squared", sigma=1.0, batch_size=20, seed=2, radius=2.0)
    scores = s.predict(X)
    assert scores.dtype == np.float64
    # the score of each record as training saw it (rows scaled to the record norm), computed here
    R = s.model.record_norm
    Xs = X * np.minimum(1.0, R / np.linalg.norm(X, axis=1))[:, None]
    np.testing.assert_allclose(scores, Xs @ s.weights[0] + s.intercept[0], rtol=1e-12, atol=1e-15)
    assert len(set(scores.tolist())) > 100  # scores, not a few labels
    assert s.model.label_kind == "real" and s.model.label_mapping == {}


def test_unlabeled_files_and_arrays(tmp_path, cli_model, cancer):
    X, y = cancer
    m = hsdp.load_model(str(cli_model))
    features = tmp_path / "features.csv"
    np.savetxt(features, X, delimiter=",", fmt="%r")
    pred = m.predict_file(str(features), no_labels=True)
    np.testing.assert_array_equal(pred, m.predict(X))
    # the command gives the same predictions
    out = tmp_path / "nolabels.csv"
    run_cli("predict", "--model-file", cli_model, "--data", features, "--no-labels", "--output", out)
    assert [str(v) for v in pred] == predictions_file(out)
    assert out.read_text().splitlines()[0] == "record,prediction"
    # without no_labels: the file seems to have no label column
    with pytest.raises(ValueError, match="seems to have no label column; no_labels scores a file without labels"):
        m.predict_file(str(features))
    with pytest.raises(ValueError, match="no_labels"):
        m.evaluate_file(str(features))


def test_unlabeled_libsvm(tmp_path):
    if not HEART.exists():
        pytest.skip("liblinear-tools' heart_scale is not installed")
    r = hsdp.train(data=str(HEART), format="libsvm", epsilon=1, seed=1)
    path = tmp_path / "heart.json"
    r.save(str(path))
    m = hsdp.load_model(str(path))
    assert m.label_mapping == {-1: -1.0, 1: 1.0}
    lines = HEART.read_text().splitlines()
    bare = tmp_path / "heart_nolabels"
    bare.write_text("".join(line.split(" ", 1)[1] + "\n" for line in lines))
    with_labels = m.predict_file(str(HEART), format="libsvm")
    assert with_labels.dtype == np.int64 and set(np.unique(with_labels)) == {-1, 1}
    np.testing.assert_array_equal(m.predict_file(str(bare), format="libsvm", no_labels=True), with_labels)
    # a label file's labels are "+1"/"-1": predictions read as the numbers they are
    assert np.mean(with_labels == np.array([int(line.split()[0]) for line in lines])) == \
        m.evaluate_file(str(HEART), format="libsvm")["accuracy"]
    with pytest.raises(ValueError, match="seems to have no labels: no_labels"):
        m.predict_file(str(bare), format="libsvm")
