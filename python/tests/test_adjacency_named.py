"""Every number names its adjacency (docs/analyses/neighbours.md): calibrate answers under
replace-one and, beside it, under add/remove-one (the adjacency of Opacus and dp_accounting);
plan and train take the adjacency as a parameter; the command and the module agree."""

import pytest

import hsdp
from conftest import cli_json, run_cli

DPSGD = dict(n=60000, batch_size=256, sampling="poisson", steps=14062, noise_multiplier=1.0, clip=1.0,
             release="every")


def test_calibrate_shows_the_add_remove_answer_beside_replace_one():
    c = hsdp.calibrate(hsdp.Run(**DPSGD), "noise", epsilon=1.0, delta=1e-5)
    assert c.adjacency == "replace"
    # What a DP-SGD user following Opacus expects: the add/remove answer (about half the noise).
    assert c.add_remove is not None and c.add_remove.adjacency == "remove"
    assert c.value == pytest.approx(3.7774, abs=1e-3)
    assert c.add_remove.value == pytest.approx(2.0255, abs=1e-3)
    direct = hsdp.calibrate(hsdp.Run(**DPSGD, adjacency="remove"), "noise", epsilon=1.0, delta=1e-5)
    assert direct.value == c.add_remove.value and direct.add_remove is None and direct.add_remove_reason == ""
    d = c.to_dict()
    assert d["adjacency"] == "replace" and d["add_remove"]["value"] == c.add_remove.value
    # The command prints both, each named.
    text = run_cli("calibrate", "--for", "noise", "--epsilon", 1, "--delta", 1e-5, "--n", 60000, "--batch-size", 256,
                   "--sampling", "poisson", "--steps", 14062, "--noise-multiplier", 1, "--clip", 1,
                   "--release", "every").stdout
    assert "(replace-one, DP-SGD noise multiplier" in text
    assert "under add/remove-one (one record added or removed; Opacus, dp_accounting): noise_multiplier = 2.02547" in text
    _, j = cli_json("calibrate", "--for", "noise", "--epsilon", 1, "--delta", 1e-5, "--n", 60000, "--batch-size", 256,
                    "--sampling", "poisson", "--steps", 14062, "--noise-multiplier", 1, "--clip", 1,
                    "--release", "every")
    assert j["adjacency"] == "replace" and j["add_remove"]["value"] == c.add_remove.value


def test_calibrate_says_why_there_is_no_add_remove_answer():
    c = hsdp.calibrate(hsdp.Run(n=1000, batch_size=10, sampling="cyclic", steps=500, eta=0.5, noise_multiplier=1.0,
                                clip=1.0, lipschitz=1.0, smoothness=1.0, diameter=1.0),
                       "noise", epsilon=1.0, delta=1e-5)
    assert c.feasible and c.add_remove is None
    assert "cyclic" in c.add_remove_reason


def test_plan_takes_the_adjacency():
    kw = dict(epsilon=1.0, delta=1e-5, n=60000, lipschitz=1.0, smoothness=1.0)
    replace = hsdp.plan("noisy-sgd", **kw)
    remove = hsdp.plan("noisy-sgd", **kw, adjacency="remove")
    assert replace.to_dict()["target"]["adjacency"] == "replace"
    assert remove.to_dict()["target"]["adjacency"] == "remove"
    assert remove.run.adjacency == "remove" and remove.feasible
    # add/remove needs less noise here (Poisson: C/b per step instead of 2C/b).
    assert remove.run.noise_std < replace.run.noise_std
    assert str(remove).startswith("plan: setting=noisy-sgd target epsilon=1 delta=1e-05 (add/remove-one)")
    with pytest.raises(ValueError, match="adjacency"):
        hsdp.plan("langevin", **kw, adjacency="remove")


def test_train_takes_the_adjacency():
    import numpy as np
    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 3))
    y = (X[:, 0] > 0).astype(float)
    r = hsdp.train(X, y, model="logistic", epsilon=1.0, sampling="poisson", adjacency="remove", seed=1,
                   order_known=False)
    assert r.run.adjacency == "remove"
    assert r.report.adjacency == "remove" and r.report.best.epsilon <= 1.0


def test_one_session_asks_both_adjacencies_in_both_orders():
    # Issue 38: shifted-interpolation's fixed-size bound was cached without the adjacency, so in
    # one session the adjacency asked first set the number for both. Each order on its own run
    # (dimension: read by no analysis here) so that each starts from an empty cache entry.
    def delta(adjacency, dimension):
        run = hsdp.Run(n=4, steps=3, batch_size=2, sampling="fixed", eta=1.0, noise_std=1.0, lipschitz=1.0,
                       smoothness=1.0, diameter=1e6, release="last", adjacency=adjacency, dimension=dimension)
        return next(a for a in hsdp.account(run, epsilon=1.0).analyses if a.name == "shifted-interpolation").delta
    remove_first = (delta("remove", 11), delta("replace", 11))
    replace_first = (delta("replace", 12), delta("remove", 12))
    assert remove_first == (0.1167504957, 0.1304553239)
    assert replace_first == (0.1304553239, 0.1167504957)
