"""hsdp.train(..., algorithm='federated', users=[...]): several records per user, as
`hsdp train --users` (docs/distributed.md "Federated training")."""

import numpy as np
import pytest

import hsdp


def data(n=60, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    X /= np.linalg.norm(X, axis=1, keepdims=True) * 1.001
    y = np.where(X @ np.array([1.0, -0.5, 0.2]) > 0, 1.0, -1.0)
    users = [f"u{(i * 7) % 25}" for i in range(n)]  # 25 users of 2 or 3 records
    return X, y, users


def test_users_make_n_the_number_of_users():
    X, y, users = data()
    r = hsdp.train(X, y, algorithm="federated", batch_size=5, sigma=1.0, seed=3, users=users)
    assert r.run.n == 25
    assert r.run.steps == 5
    level = r.user_level
    assert level["unit"] == "user" and level["users"] == 25 and level["records"] == 60
    # 2 eta L / m: L = sqrt(2) (record norm 1 with the bias), eta = 1/beta = 2, m = 5
    assert level["sensitivity"] == pytest.approx(2 * 2 * np.sqrt(2) / 5, rel=1e-12)
    assert list(r.uses) == [1] * 25
    plain = hsdp.train(X, y, algorithm="federated", batch_size=5, sigma=1.0, seed=3)
    assert plain.run.n == 60 and plain.user_level is None


def test_seeded_no_noise_run_repeats_and_moves():
    X, y, users = data()
    a = hsdp.train(X, y, algorithm="federated", batch_size=5, no_noise=True, seed=3, users=users)
    b = hsdp.train(X, y, algorithm="federated", batch_size=5, no_noise=True, seed=3, users=users)
    np.testing.assert_array_equal(a.theta, b.theta)
    assert np.abs(a.theta).max() > 0.01


def test_bad_users_raise_naming_the_keyword():
    X, y, users = data()
    with pytest.raises(ValueError, match=r"^users = users\[60\]"):
        hsdp.train(X, y, algorithm="federated", sigma=1.0, users=users[:60] + ["extra"])
    with pytest.raises(ValueError, match=r"^users = "):
        hsdp.train(X, y, algorithm="federated", sigma=1.0, users=users[:59])
    with pytest.raises(ValueError, match=r"users\[4\]: \(blank\)"):
        hsdp.train(X, y, algorithm="federated", sigma=1.0, users=users[:4] + [""] + users[5:])
    with pytest.raises(ValueError, match=r"^users = .*algorithm='federated'|^users = .*federated"):
        hsdp.train(X, y, algorithm="noisy-gd", steps=2, sigma=1.0, users=users)
