"""hsdp.train on numpy arrays equals `hsdp train` on the same records (same seed): the same
model and the same privacy report; strided and C-contiguous inputs give the same result; the
GIL is released while training."""

import json
import pathlib
import threading
import time

import numpy as np
import pytest

import hsdp
from conftest import cli_json

BREAST_CANCER = pathlib.Path("/usr/lib/python3/dist-packages/sklearn/datasets/data/breast_cancer.csv")
# Raw breast_cancer rows are dominated by two features: hsdp.train warns the data owner
# (python/tests/test_train_request.py tests the warning); these tests are about other things.
pytestmark = pytest.mark.filterwarnings("ignore:for the data owner")


@pytest.fixture(scope="module")
def data():
    if not BREAST_CANCER.exists():
        pytest.skip("python3-sklearn's breast_cancer.csv is not installed")
    X, y, mapping = hsdp.read_csv(str(BREAST_CANCER))
    assert X.shape == (569, 30) and set(np.unique(y)) == {-1.0, 1.0}
    assert X.dtype == np.float64 and X.flags.c_contiguous
    return X, y


def write_csv(path, X, y):
    with open(path, "w") as f:
        for row, label in zip(X, y):
            f.write(",".join(repr(float(v)) for v in row) + f",{int(label)}\n")


CONFIGS = [
    dict(model="logistic", sigma=1.0, batch_size=32, epochs=2, l2=0.01),
    dict(model="logistic", algorithm="pnsgd", sigma=2.0),
    dict(model="huber", algorithm="noisy-gd", noise_std=0.05, epochs=20),
    dict(model="logistic", algorithm="pnsgd", epsilon=2.0, delta=1e-5),
    dict(model="logistic", epsilon=2.0, delta=1e-5, batch_size=40, sampling="shuffle", epochs=1, l2=0.1),
    dict(model="logistic", sigma=1.0, batch_size=32, steps=30, clip=0.5, record_norm=2.0),
    dict(model="logistic", sigma=0.5, batch_size=50, epochs=3, feature_scale=[0.01] * 30),
]


@pytest.mark.parametrize("cfg", CONFIGS)
def test_train_equals_cli(cli, tmp_path, data, cfg):
    X, y = data
    Xtr, ytr, Xte, yte = X[:400], y[:400], X[400:], y[400:]
    write_csv(tmp_path / "train.csv", Xtr, ytr)
    write_csv(tmp_path / "test.csv", Xte, yte)
    flags = ["train", "--data", tmp_path / "train.csv", "--test-data", tmp_path / "test.csv", "--seed", "7"]
    for k, v in cfg.items():
        flags += ["--" + k.replace("_", "-"), ",".join(map(repr, v)) if isinstance(v, list) else str(v)]
    _, doc = cli_json(*flags)
    r = hsdp.train(Xtr, ytr, seed=7, **cfg)
    assert json.loads(r.model_json()) == doc["model"]
    assert r.report.to_dict() == doc["report"]
    assert r.account_command == doc["account_command"]
    assert r.notes == doc["configuration"]["notes"]
    assert r.released_step == doc["configuration"]["released_step"]
    assert r.evaluate(Xtr, ytr)["accuracy"] == doc["train_accuracy"]
    assert r.evaluate(Xte, yte)["accuracy"] == doc["test_accuracy"]
    assert r.evaluate(Xte, yte)["loss"] == doc["test_loss"]
    assert r.seeded
    assert r.epsilon == r.report.best.epsilon
    pred = r.predict(Xte)
    assert pred.shape == (len(yte),) and set(np.unique(pred)) <= {-1.0, 1.0}
    assert np.mean(pred == yte) == doc["test_accuracy"]


def test_strided_and_contiguous_inputs_agree(data):
    X, y = data
    cfg = dict(sigma=1.0, batch_size=32, epochs=1, seed=3)
    ref = hsdp.train(X, y, **cfg)
    wide = np.zeros((X.shape[0], 2 * X.shape[1]))
    wide[:, ::2] = X
    strided = wide[:, ::2]
    assert not strided.flags.c_contiguous
    fortran = np.asfortranarray(X)
    y_strided = np.repeat(y, 2)[::2]
    for Xv, yv in [(strided, y), (fortran, y), (X, y_strided), (X.tolist(), y.tolist())]:
        r = hsdp.train(Xv, yv, **cfg)
        np.testing.assert_array_equal(r.theta, ref.theta)
        assert r.report.to_json() == ref.report.to_json()
    # the inputs are not modified (rows are scaled in a copy)
    np.testing.assert_array_equal(strided, X)


def test_result_fields(data):
    X, y = data
    r = hsdp.train(X, y, sigma=1.0, batch_size=50, epochs=1, seed=1)
    assert r.theta.shape == (1, 31) and r.weights.shape == (1, 30) and len(r.intercept) == 1
    assert r.theta[0, -1] == r.intercept[0]
    assert r.uses.shape == (569,) and r.uses.dtype == np.int64
    assert r.run.n == 569 and r.report.run.n == 569
    assert r.constants["smoothness"] > 0
    assert hsdp.Accountant(r.run).get_epsilon(1e-5) == r.report.best.epsilon
    baseline = hsdp.train(X, y, no_noise=True, seed=1, epochs=1)
    assert baseline.report is None and baseline.epsilon == float("inf")


def test_softmax_and_squared():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 4)) * 0.3
    y3 = rng.integers(0, 3, size=120).astype(float)
    r = hsdp.train(X, y3, model="softmax", sigma=1.0, batch_size=20, seed=2)
    assert r.theta.shape == (3, 5)
    assert set(np.unique(r.predict(X))) <= {0.0, 1.0, 2.0}
    yr = np.clip(X @ np.array([0.5, -0.2, 0.1, 0.0]), -1, 1)
    r = hsdp.train(X, yr, model="squared", sigma=1.0, batch_size=20, seed=2, radius=2.0)
    assert r.evaluate(X, yr)["accuracy"] is None


def test_gil_is_released_during_training(data):
    X, y = data
    X = np.tile(X, (20, 1))
    y = np.tile(y, 20)
    done = threading.Event()
    elapsed = {}

    def work():
        t0 = time.perf_counter()
        hsdp.train(X, y, algorithm="noisy-gd", noise_std=0.01, epochs=1000, seed=1)
        elapsed["train"] = time.perf_counter() - t0
        done.set()

    t = threading.Thread(target=work)
    t.start()
    ticks = 0
    while not done.is_set():
        ticks += 1
        time.sleep(0.001)
    t.join()
    # With the GIL held for the whole run, this thread could not tick while it lasted.
    assert elapsed["train"] > 0.1, elapsed
    assert ticks > 20, (ticks, elapsed)


def test_plan_of_a_target(data):
    """A target epsilon plans the keywords left unset (docs/training.md "The plan"); stated
    keywords are kept, and without a target there is no plan."""
    X, y = data
    r = hsdp.train(X, y, epsilon=1.0, delta=1e-5, seed=1)
    assert r.plan is not None
    assert set(r.plan["chosen"]) == {"record_norm", "radius", "eta", "batch_size", "epochs", "sampling"}
    # n = 569, logistic on records scaled to R = 2 (X = sqrt(5) with the bias):
    # T = round(sqrt(2) 569 mu / (2 sqrt(5) 1.584 sqrt(5))) = 14 full batches.
    assert r.run.batch_size == 569 and r.run.steps == 14 and r.run.sampling == "full"
    assert "T = round(sqrt(2) n mu / (2 L eta X)) = 14" in r.plan["summary"]
    assert json.loads(r.model_json())["record_norm"] == 2.0
    assert r.epsilon <= 1.0
    kept = hsdp.train(X, y, epsilon=1.0, delta=1e-5, seed=1, batch_size=64, sampling="cyclic")
    assert kept.run.batch_size == 64 and kept.run.sampling == "cyclic"
    assert "batch_size" not in kept.plan["chosen"] and "sampling" not in kept.plan["chosen"]
    assert hsdp.train(X, y, sigma=1.0, seed=1).plan is None


def test_feature_storage():
    # Pixel-like integer features 0..255: uint8 and float32 hold them exactly, so the run is
    # the float64 run up to rounding: the same report, the weights within 1e-9 (relative).
    rng = np.random.default_rng(3)
    X = rng.integers(0, 256, size=(300, 20)).astype(np.float64)
    y = np.where(X[:, :10].sum(axis=1) > X[:, 10:].sum(axis=1), 1.0, -1.0)
    runs = {
        s: hsdp.train(X, y, sigma=0.5, batch_size=50, steps=40, clip=0.5, seed=4,
                      feature_scale=[1 / 255], feature_storage=s)
        for s in ("auto", "float64", "float32", "uint8")
    }
    assert runs["auto"].feature_storage == "float64"  # an array is float64
    assert runs["uint8"].feature_storage == "uint8"
    ref = runs["float64"]
    for s in ("float32", "uint8"):
        r = runs[s]
        assert r.report.best.epsilon == ref.report.best.epsilon
        assert json.loads(r.model_json())["labels"] == json.loads(ref.model_json())["labels"]
        np.testing.assert_allclose(r.theta, ref.theta, rtol=0, atol=1e-9 * np.abs(ref.theta).max())
        np.testing.assert_array_equal(r.predict(X), ref.predict(X))
    with pytest.raises(ValueError, match="feature_storage"):
        hsdp.train(X, y, sigma=1.0, steps=2, batch_size=10, feature_storage="int4")
    with pytest.raises(ValueError, match=r"X\[0, 1\].*integer 0\.\.255"):
        X2 = X.copy()
        X2[0, 1] = 0.5
        hsdp.train(X2, y, sigma=1.0, steps=2, batch_size=10, feature_storage="uint8")
    with pytest.raises(ValueError, match=r"X\[1, 0\].*float32"):
        X3 = X.copy()
        X3[1, 0] = 1e39
        hsdp.train(X3, y, sigma=1.0, steps=2, batch_size=10, feature_storage="float32")
