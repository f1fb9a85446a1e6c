"""hsdp.Generator, hsdp.BatchOrder and hsdp.grid_charges: the trainer's randomness for loops
written in Python (the torch engine's), checked against their definitions."""

import math

import numpy as np
import pytest

import hsdp


def test_seeded_generators_repeat_and_entropy_ones_do_not():
    a = hsdp.BatchOrder("shuffle", n=50, batch_size=7, generator=hsdp.Generator(seed=3))
    b = hsdp.BatchOrder("shuffle", n=50, batch_size=7, generator=hsdp.Generator(seed=3))
    assert all(np.array_equal(a.next(), b.next()) for _ in range(20))
    c = hsdp.BatchOrder("shuffle", n=50, batch_size=7, generator=hsdp.Generator())
    d = hsdp.BatchOrder("shuffle", n=50, batch_size=7, generator=hsdp.Generator())
    assert not all(np.array_equal(c.next(), d.next()) for _ in range(7))
    assert hsdp.Generator(seed=3).seeded and not hsdp.Generator().seeded
    assert hsdp.Generator(seed=3).randomness.startswith("seeded: for experiments, not for release")


@pytest.mark.parametrize("drop_last", [True, False])
def test_shuffle_reads_every_record_once_per_epoch(drop_last):
    o = hsdp.BatchOrder("shuffle", n=50, batch_size=7, generator=hsdp.Generator(), drop_last=drop_last)
    per_epoch = 7 if drop_last else 8
    assert o.batches_per_epoch == per_epoch
    for _ in range(3):
        batches = [o.next() for _ in range(per_epoch)]
        sizes = [len(x) for x in batches]
        assert sizes == [7] * 7 + ([] if drop_last else [1])
        seen = np.concatenate(batches)
        assert len(set(seen.tolist())) == len(seen) == (49 if drop_last else 50)
    assert o.steps == 3 * per_epoch


def test_cyclic_poisson_and_fixed():
    o = hsdp.BatchOrder("cyclic", n=10, batch_size=4, generator=hsdp.Generator())
    assert [o.next().tolist() for _ in range(3)] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 0, 1]]
    p = hsdp.BatchOrder("poisson", n=1000, batch_size=100, generator=hsdp.Generator(seed=1))
    sizes = [len(p.next()) for _ in range(400)]
    assert abs(np.mean(sizes) - 100) < 3 * math.sqrt(90 / 400) * 3  # mean b, std sqrt(b (1 - q))
    f = hsdp.BatchOrder("fixed", n=20, batch_size=5, generator=hsdp.Generator())
    assert all(len(set(f.next().tolist())) == 5 for _ in range(10))


def test_grid_noise_lies_on_the_grid_with_the_stated_std():
    g = hsdp.Generator(seed=2)
    std = 0.37
    values, out = g.add_grid_noise(np.full(20000, 1.25), std=std)
    assert out == 0
    # lambda = 2^(floor(log2 std) - 32): every output is a multiple of it
    lam = 2.0 ** (math.floor(math.log2(std)) - 32)
    assert np.all(np.round(values / lam) * lam == values)
    assert abs(values.mean() - 1.25) < 4 * std / math.sqrt(20000)
    assert abs(values.std() / std - 1) < 0.03


def test_grid_charges_are_the_trainers():
    slack, eps, log_beta = hsdp.grid_charges(parameters=785, steps=288)
    assert slack == 2 * 2.0 ** -32 * math.sqrt(785)
    assert eps == 2 * 785 * 288 * 2.0 ** -52
    assert log_beta == math.log(785 * 288) - 11000.0


def test_bad_values_name_their_keyword():
    with pytest.raises(ValueError, match=r"seed = -1: must be an integer in \[0, "):
        hsdp.Generator(seed=-1)
    with pytest.raises(ValueError, match="sampling = full: must be one of poisson, fixed, shuffle, cyclic"):
        hsdp.BatchOrder("full", n=3, batch_size=1, generator=hsdp.Generator())
    with pytest.raises(ValueError, match=r"batch_size = 5: must be an integer in \[1, n = 3\]"):
        hsdp.BatchOrder("shuffle", n=3, batch_size=5, generator=hsdp.Generator())
    with pytest.raises(ValueError, match="drop_last = False: must be True unless sampling = shuffle"):
        hsdp.BatchOrder("cyclic", n=3, batch_size=1, generator=hsdp.Generator(), drop_last=False)
    with pytest.raises(ValueError, match="std = 0: must be a positive finite noise std"):
        hsdp.Generator().add_grid_noise(np.zeros(2), std=0.0)
    with pytest.raises(ValueError, match="steps = 0: must be an integer >= 1"):
        hsdp.grid_charges(parameters=3, steps=0)
