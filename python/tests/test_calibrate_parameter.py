"""hsdp.calibrate_parameter: the library's generic calibration solver on a Python function
x -> hsdp.Run. It reproduces hsdp.calibrate on the built-in parameters and calibrates others
(the clip norm of DP-SGD at a fixed noise std) to a boundary that the accountant confirms."""

import pytest

import hsdp

EXAMPLE = dict(n=1000, eta=0.05, lipschitz=1, smoothness=1, diameter=1, convention="journal")
DPSGD = dict(n=60000, steps=2000, batch_size=256, sampling="fixed", eta=0.1, lipschitz=1, release="every")


def best_epsilon(run, delta):
    return hsdp.Accountant(run).get_epsilon(delta)


def test_noise_as_a_python_adapter_equals_calibrate():
    expected = hsdp.calibrate(hsdp.Run(**EXAMPLE, sigma=3), "noise", epsilon=1, delta=1e-5)
    got = hsdp.calibrate_parameter(lambda s: hsdp.Run(**EXAMPLE, sigma=s), epsilon=1, delta=1e-5,
                                   lower=3 * 1e-12, upper=3 * 1e12, start=3, name="sigma")
    assert got.feasible and expected.feasible
    assert got.value == expected.value
    assert got.evaluations == expected.evaluations
    assert got.achieved_epsilon == expected.achieved_epsilon <= 1


def test_clip_norm_largest_value_meets_the_target():
    # The noise std is fixed (0.1 z / b with z = 1, C = 1); a larger clip C raises the
    # sensitivity, so the largest C meeting (2, 1e-5) is wanted.
    std = 0.1 * 1.0 / 256

    def run(clip):
        return hsdp.Run(**DPSGD, clip=clip, noise_std=std)

    tol = 1e-4
    got = hsdp.calibrate_parameter(run, epsilon=2, delta=1e-5, lower=1e-3, upper=1e3, start=1,
                                   direction="larger-is-less-private", name="clip", relative_tolerance=tol)
    assert got.feasible, got.reason
    assert got.achieved_epsilon <= 2
    assert best_epsilon(run(got.value), 1e-5) <= 2
    assert best_epsilon(run(got.value * (1 + tol)), 1e-5) > 2
    assert got.run.clip == got.value


def test_integer_steps_and_bad_input():
    kw = dict(EXAMPLE, n=100, sigma=10)
    expected = hsdp.calibrate(hsdp.Run(**kw), "steps", epsilon=1, delta=1e-5, max_steps=4096)
    got = hsdp.calibrate_parameter(lambda t: hsdp.Run(**kw, steps=t), epsilon=1, delta=1e-5, lower=1, upper=4096,
                                   domain="integer", direction="larger-is-less-private",
                                   special_points=[100, 101], name="steps")
    assert got.feasible and got.value == expected.value
    with pytest.raises(ValueError, match="^domain = "):
        hsdp.calibrate_parameter(lambda t: hsdp.Run(**kw), epsilon=1, delta=1e-5, lower=1, upper=2, domain="real")
    with pytest.raises(ValueError, match="^make = "):
        hsdp.calibrate_parameter(lambda t: 3, epsilon=1, delta=1e-5, lower=1, upper=2)
    with pytest.raises(ZeroDivisionError):
        hsdp.calibrate_parameter(lambda t: 1 / 0, epsilon=1, delta=1e-5, lower=1, upper=2)
