"""Bad input raises ValueError with the CLI's message, naming keywords where the CLI names flags
(never a crash); wrong types TypeError."""

import math

import numpy as np
import pytest

import hsdp
from conftest import cli_error, keyword_message

BASE = dict(n=100, eta=0.05, sigma=3, convention="journal", lipschitz=1, smoothness=1, diameter=1)
BASE_FLAGS = ["--n", "100", "--eta", "0.05", "--sigma", "3", "--convention", "journal", "--lipschitz", "1",
              "--smoothness", "1", "--diameter", "1"]


def raises_cli_message(call, *cli_args):
    expected = keyword_message(cli_error(*cli_args))
    with pytest.raises(ValueError) as info:
        call()
    assert str(info.value) == expected
    assert "--" not in str(info.value).partition(": not applicable: ")[0]
    return expected


@pytest.mark.parametrize("kw,flags", [
    (dict(eta=0.05, noise_std=1), ["--eta", "0.05", "--noise-std", "1"]),              # n missing
    (dict(n=0, eta=0.05, noise_std=1), ["--n", "0", "--eta", "0.05", "--noise-std", "1"]),
    (dict(n=10, eta=-1.0, noise_std=1), ["--n", "10", "--eta", "-1", "--noise-std", "1"]),
    (dict(n=10, eta=math.nan, noise_std=1), ["--n", "10", "--eta", "nan", "--noise-std", "1"]),
    (dict(n=10, eta=0.1, noise_std=1, sampling="random"), ["--n", "10", "--eta", "0.1", "--noise-std", "1",
                                                           "--sampling", "random"]),
    (dict(n=10, eta=0.1, sigma=1), ["--n", "10", "--eta", "0.1", "--sigma", "1"]),  # no convention
    (dict(n=10, eta=0.1, noise_multiplier=1), ["--n", "10", "--eta", "0.1", "--noise-multiplier", "1"]),
    (dict(n=10, eta=0.1, noise_std=1, batch_size=11), ["--n", "10", "--eta", "0.1", "--noise-std", "1",
                                                       "--batch-size", "11"]),
    (dict(n=10, eta=0.1, noise_std=1, release="first"), ["--n", "10", "--eta", "0.1", "--noise-std", "1",
                                                         "--release", "first"]),
    (dict(n=10, eta=0.1, noise_std=1, diameter=-1.0), ["--n", "10", "--eta", "0.1", "--noise-std", "1",
                                                       "--diameter", "-1"]),
    (dict(n=10, eta=0.1, noise_std=1, pld_interval=0.0), ["--n", "10", "--eta", "0.1", "--noise-std", "1",
                                                          "--pld-interval", "0"]),
    (dict(n=10, eta=0.1, noise_std=1, pld_interval=0.75), ["--n", "10", "--eta", "0.1", "--noise-std", "1",
                                                           "--pld-interval", "0.75"]),
    (dict(n=10, eta=0.1, noise_std=1, pld_cells=5000.0), ["--n", "10", "--eta", "0.1", "--noise-std", "1",
                                                          "--pld-cells", "5000"]),
])
def test_run_validation_messages_are_the_cli_messages(cli, kw, flags):
    raises_cli_message(lambda: hsdp.Run(**kw), "account", *flags)


@pytest.mark.parametrize("q,flags", [
    (dict(delta=1.5), ["--delta", "1.5"]),
    (dict(delta=0.0), ["--delta", "0"]),
    (dict(epsilon=-1.0), ["--epsilon", "-1"]),
    (dict(alphas=[0.5]), ["--alpha", "0.5"]),
    (dict(analyses=["no-such-analysis"]), ["--analysis", "no-such-analysis"]),
])
def test_query_messages_are_the_cli_messages(cli, q, flags):
    run = hsdp.Run(**BASE)
    raises_cli_message(lambda: hsdp.account(run, **q), "account", *BASE_FLAGS, *flags)


def test_named_analysis_that_does_not_apply(cli):
    run = hsdp.Run(**BASE, release="every")
    name = next(r.name for r in hsdp.account(run).analyses if not r.applicable)
    msg = raises_cli_message(lambda: hsdp.Accountant(run, analyses=[name]).get_epsilon(1e-5),
                             "account", *BASE_FLAGS, "--release", "every", "--analysis", name)
    assert "not applicable" in msg
    with pytest.raises(ValueError, match="not applicable"):
        hsdp.analysis(name).get_epsilon(run, 1e-5)
    assert hsdp.analysis(name).evaluate(run, delta=1e-5).reason  # a result, not an error
    with pytest.raises(ValueError):
        hsdp.analysis("no-such-analysis")


def test_messages_name_keywords_not_flags():
    with pytest.raises(ValueError) as info:
        hsdp.Run(n=-1, eta=0.1, noise_std=1)
    assert str(info.value) == "n = -1: must be an integer in [1, 9007199254740992]"
    with pytest.raises(ValueError) as info:
        hsdp.Run(n=10, eta=0.1, noise_std=1, sigma=2)
    assert str(info.value) == "sigma = 2: must be absent when noise_std is given (give one of the two)"
    with pytest.raises(ValueError) as info:
        hsdp.Run(n=10, eta=0.1, noise_multiplier=1)
    assert str(info.value) == "clip = (missing): must be given with noise_multiplier: the clipping norm C > 0"
    with pytest.raises(ValueError, match="^epsilon excludes delta$"):
        hsdp.account(hsdp.Run(**BASE), delta=1e-5, epsilon=1.0)


def test_accountant_query_errors():
    acc = hsdp.Accountant(hsdp.Run(**BASE))
    for bad in (0.0, 1.0, -1e-5, math.nan, math.inf):
        with pytest.raises(ValueError, match="^delta = "):
            acc.get_epsilon(bad)
    with pytest.raises(ValueError, match="^epsilon = "):
        acc.get_delta(-1.0)
    with pytest.raises(ValueError, match="excludes"):
        hsdp.account(hsdp.Run(**BASE), delta=1e-5, epsilon=1.0)


def test_calibrate_and_plan_messages(cli):
    run = hsdp.Run(**BASE)
    raises_cli_message(lambda: hsdp.calibrate(run, "nois", epsilon=1, delta=1e-5),
                       "calibrate", "--for", "nois", "--epsilon", "1", "--delta", "1e-5", *BASE_FLAGS)
    raises_cli_message(lambda: hsdp.calibrate(run, "noise", epsilon=1, delta=2),
                       "calibrate", "--for", "noise", "--epsilon", "1", "--delta", "2", *BASE_FLAGS)
    raises_cli_message(lambda: hsdp.calibrate(run, "sampling-rate", epsilon=1, delta=1e-5),
                       "calibrate", "--for", "sampling-rate", "--epsilon", "1", "--delta", "1e-5", *BASE_FLAGS)
    raises_cli_message(
        lambda: hsdp.plan("langevin", epsilon=1, delta=1e-5, n=1000, lipschitz=1, smoothness=2, diameter=1,
                          dimension=10),
        "plan", "--setting", "langevin", "--epsilon", "1", "--delta", "1e-5", "--n", "1000", "--lipschitz", "1",
        "--smoothness", "2", "--diameter", "1", "--dimension", "10")
    raises_cli_message(lambda: hsdp.plan("annealing", epsilon=1, delta=1e-5, n=10),
                       "plan", "--setting", "annealing", "--epsilon", "1", "--delta", "1e-5", "--n", "10")


def test_wrong_types_are_type_errors():
    with pytest.raises(TypeError, match="unexpected keyword argument 'nn'"):
        hsdp.Run(nn=10)
    with pytest.raises(TypeError, match="'n' expects int"):
        hsdp.Run(n=10.5, eta=0.1, noise_std=1)
    with pytest.raises(TypeError, match="'eta' expects float"):
        hsdp.Run(n=10, eta="fast", noise_std=1)
    with pytest.raises(TypeError):
        hsdp.Accountant("not a run")
    with pytest.raises(TypeError):
        hsdp.Run(10)  # keywords only


def test_train_data_errors():
    X = np.ones((10, 3)) * 0.1
    y = np.array([0, 1] * 5, dtype=float)
    with pytest.raises(ValueError, match="^y = "):
        hsdp.train(X, y[:9], sigma=1, seed=1)
    with pytest.raises(ValueError, match=r"^X = an array with 1 dimensions"):
        hsdp.train(X[:, 0], y, sigma=1, seed=1)
    Xn = X.copy()
    Xn[3, 1] = np.nan
    with pytest.raises(ValueError, match=r"X\[3, 1\]"):
        hsdp.train(Xn, y, sigma=1, seed=1)
    with pytest.raises(ValueError, match="labels"):
        hsdp.train(X, np.arange(10.0), sigma=1, seed=1)  # ten labels for a binary loss
    with pytest.raises(ValueError, match="^epsilon = "):
        hsdp.train(X, y, seed=1)  # no noise parameter
    with pytest.raises(ValueError, match="^algorithm = "):
        hsdp.train(X, y, algorithm="adam", sigma=1)
    with pytest.raises(ValueError, match="^sampling = .*algorithm='noisy-gd'"):
        hsdp.train(X, y, algorithm="noisy-gd", sampling="poisson", sigma=1)
    with pytest.raises(ValueError, match="^delta = "):
        hsdp.train(X, y, epsilon=1.0, delta=2.0)  # delta defaults to 1e-5; outside (0, 1) fails
    with pytest.raises(ValueError, match="^X = "):
        hsdp.train(np.ones((0, 3)), np.ones(0), sigma=1)
    with pytest.raises(ValueError):
        hsdp.read_csv("/nonexistent/file.csv")


def test_audit_errors(cli):
    run = hsdp.Run(**BASE, noise="laplace", dimension=1)
    with pytest.raises(ValueError):
        hsdp.audit_exact(run)
    raises_cli_message(lambda: hsdp.audit_exact(hsdp.Run(**BASE), grid=10),
                       "audit", "exact", *BASE_FLAGS, "--grid", "10")
    raises_cli_message(lambda: hsdp.audit_exact(hsdp.Run(**BASE), pair="same"),
                       "audit", "exact", *BASE_FLAGS, "--pair", "same")


def test_pld_grid_errors_name_the_keyword_and_range():
    with pytest.raises(ValueError, match=r"^pld_interval = 0\.75: must be in \[1e-06, 0\.5\]$"):
        hsdp.Run(n=10, eta=0.1, noise_std=1, pld_interval=0.75)
    with pytest.raises(ValueError, match=r"^pld_cells = 0\.5: must be in \[1, 1000\]$"):
        hsdp.Run(n=10, eta=0.1, noise_std=1, pld_cells=0.5)
    with pytest.raises(TypeError):
        hsdp.Run(n=10, eta=0.1, noise_std=1, pld_interval="fine")
