"""Issue 37, items 3 and 5: numbers read and printed the same under any C locale, the call
wrapper naming the keyword actually wrong, numpy scalars of every width and 0-d arrays taken as
Python numbers, Ctrl-C within a long call, a Generator that never repeats its draws across fork,
and every result's repr naming its adjacency."""

import locale
import os
import signal
import threading
import time

import numpy as np
import pytest

import hsdp

RNG = np.random.default_rng(3)
X = RNG.normal(size=(40, 3)) / 4
Y = (X[:, 0] > 0).astype(float)

# Decimal-comma locales to try (scripts/install-deps.sh generates de_DE.UTF-8 on CI).
COMMA_LOCALES = ("de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8", "nl_NL.UTF-8", "it_IT.UTF-8")


@pytest.fixture
def decimal_comma():
    saved = locale.setlocale(locale.LC_ALL)
    for name in COMMA_LOCALES:
        try:
            locale.setlocale(locale.LC_ALL, name)
        except locale.Error:
            continue
        if locale.localeconv()["decimal_point"] == ",":
            break
    else:
        locale.setlocale(locale.LC_ALL, saved)
        pytest.skip("no decimal-comma locale on this system (scripts/install-deps.sh generates de_DE.UTF-8)")
    try:
        yield
    finally:
        locale.setlocale(locale.LC_ALL, saved)


def test_compare_sweep_points_under_a_decimal_comma(decimal_comma):
    # strtod under LC_NUMERIC=de_DE read "1.5" as 1: the middle point was written as 1.
    c = hsdp.compare(hsdp.Run(example=True), x="epsilon", from_=0.5, to=2.5, points=3)
    assert c.xs == [0.5, 1.5, 2.5]
    assert c.to_csv().splitlines()[-2].startswith("1.5,")


def test_huber_default_under_a_decimal_comma(decimal_comma):
    # The table's default "0.5" was read by std::stod as 0: "huber_smoothing = 0", never typed.
    r = hsdp.train(X, Y, model="huber", sigma=1.0, seed=1)
    assert r.epsilon > 0
    assert hsdp.train(X, Y, model="huber", huber_smoothing=0.5, sigma=1.0, seed=1).to_json() == r.to_json()


def test_real_labels_of_a_model_file_under_a_decimal_comma(decimal_comma, tmp_path):
    labels = np.round(X[:, 0] * 2, 1).clip(-1, 1)  # real labels such as 0.5, -0.3
    model = tmp_path / "m.json"
    hsdp.train(X, labels, model="squared", sigma=1.0, seed=1, output=str(model))
    data = tmp_path / "d.csv"
    data.write_text("".join(f"{a!r},{b!r},{c!r},{v!r}\n" for (a, b, c), v in zip(X, labels)))
    m = hsdp.load_model(str(model))
    e = m.evaluate_file(str(data))
    locale.setlocale(locale.LC_ALL, "C")
    assert e == hsdp.load_model(str(model)).evaluate_file(str(data))
    assert e["loss"] > 0


def test_messages_print_a_decimal_point(decimal_comma):
    with pytest.raises(ValueError, match=r"delta = 1\.5: "):
        hsdp.account(hsdp.Run(example=True), delta=1.5)


BASE = dict(n=100, eta=0.05, noise_std=1.0, lipschitz=1.0, smoothness=1.0, diameter=1.0)

# --- the call wrapper --------------------------------------------------------------------------

def test_a_wrong_type_is_blamed_on_its_keyword():
    # A list where a word is expected used to be blamed on the first int keyword (seed).
    with pytest.raises(TypeError) as info:
        hsdp.train(X, Y, sigma=1.0, seed=1, classes=[0, 1])
    assert "keyword 'classes' expects" in str(info.value) and "seed" not in str(info.value)
    with pytest.raises(TypeError) as info:
        hsdp.train(X, Y, sigma=1.0, seed=1, model=[0, 1])
    assert "keyword 'model' expects str" in str(info.value)


@pytest.mark.parametrize("width", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
                                   np.uint64])
def test_every_numpy_integer_width_is_an_int(width):
    assert hsdp.Run(**dict(BASE, n=width(100))).cli_args() == hsdp.Run(**BASE).cli_args()


@pytest.mark.parametrize("width", [np.float16, np.float32, np.float64, np.longdouble, np.int16, np.uint64])
def test_every_numpy_real_width_is_a_float(width):
    assert hsdp.Run(**dict(BASE, noise_std=width(2))).cli_args() == hsdp.Run(**dict(BASE, noise_std=2.0)).cli_args()


def test_an_integer_beyond_64_bits_names_its_keyword_and_the_range():
    with pytest.raises(ValueError, match=r"^n = 18446744073709551615: must be an integer in \[-2\*\*63, 2\*\*63 - 1\]"):
        hsdp.Run(**dict(BASE, n=np.uint64(2**64 - 1)))
    with pytest.raises(ValueError, match=r"^n = 36893488147419103232: must be an integer in the 64-bit range"):
        hsdp.Run(**dict(BASE, n=2**65))
    with pytest.raises(ValueError, match=r"^noise_std = 1000000000000000\d*\.\.\.: must be a number in the float64 range"):
        hsdp.Run(**dict(BASE, noise_std=10**400))
    # the wrapper's reading (a keyword of a function, not of Run): the same ranges
    with pytest.raises(ValueError, match=r"^points = 18446744073709551615: must be an integer in \[-2\*\*63, 2\*\*63 - 1\]"):
        hsdp.compare(hsdp.Run(example=True), x="epsilon", from_=0.5, to=2.5, points=np.uint64(2**64 - 1))
    with pytest.raises(ValueError, match=r"^to = 1000000000000000\d*\.\.\.: must be a number in the float64 range"):
        hsdp.compare(hsdp.Run(example=True), x="epsilon", from_=0.5, to=10**400, points=3)
    with pytest.raises(ValueError, match=r"^points = 36893488147419103232: must be an integer in the 64-bit range"):
        hsdp.compare(hsdp.Run(example=True), x="epsilon", from_=0.5, to=2.5, points=2**65)
    # the seed keeps its own range (0 .. 2**64 - 1)
    assert hsdp.Generator(seed=np.uint64(2**64 - 1)).seeded
    with pytest.raises(ValueError, match=r"^seed = 18446744073709551616: must be an integer in \[0, 18446744073709551615\]"):
        hsdp.Generator(seed=2**64)


def test_zero_dimensional_arrays_are_scalars():
    base = BASE
    ref = hsdp.Run(**base).cli_args()
    assert hsdp.Run(**dict(base, n=np.array(100), noise_std=np.array(1.0))).cli_args() == ref
    assert hsdp.account(hsdp.Run(**base), delta=np.array(1e-5)).epsilon == hsdp.account(hsdp.Run(**base), delta=1e-5).epsilon
    with pytest.raises(TypeError, match="'n' expects int, got float"):
        hsdp.Run(**dict(base, n=np.array(100.0)))
    with pytest.raises(TypeError, match="'noise_std' expects float, got bool"):
        hsdp.Run(**dict(base, noise_std=np.array(True)))
    c = hsdp.compare(hsdp.Run(example=True), x="epsilon", from_=np.array(0.5), to=np.float32(2.5), points=np.array(3))
    assert c.xs == [0.5, 1.5, 2.5]


# --- Ctrl-C ------------------------------------------------------------------------------------

def _interrupt_after(seconds):
    timer = threading.Timer(seconds, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    return timer


@pytest.mark.parametrize("call", [
    # each runs for many seconds when not interrupted
    lambda: hsdp.train(RNG.normal(size=(2000, 20)) / 8, np.arange(2000) % 2, sigma=1.0, seed=1, epochs=100000),
    lambda: hsdp.audit_mia(X, Y, sigma=1.0, trials=100000, seed=1),
    lambda: hsdp.compare(hsdp.Run(example=True), x="steps", from_=1, to=10**6, points=2000),
])
def test_ctrl_c_lands_within_a_second(call):
    timer = _interrupt_after(0.2)
    start = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            call()
    finally:
        timer.cancel()
    assert time.monotonic() - start < 1.2
    # the next call runs normally
    assert hsdp.train(X, Y, sigma=1.0, seed=1).epsilon > 0


def test_a_signal_handler_exception_is_raised_as_is():
    class Stop(Exception):
        pass

    def handler(signum, frame):
        raise Stop()

    previous = signal.signal(signal.SIGINT, handler)
    timer = _interrupt_after(0.2)
    try:
        with pytest.raises(Stop):
            hsdp.train(RNG.normal(size=(2000, 20)) / 8, np.arange(2000) % 2, sigma=1.0, seed=1, epochs=100000)
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)


# --- fork --------------------------------------------------------------------------------------

def _draws_in_child_and_parent(generator):
    """Draws 8 noise values in a forked child (sent through a pipe) and 8 in the parent."""
    values = np.zeros(8)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: no pytest machinery, just the draws
        try:
            os.close(read_end)
            noisy, _ = generator.add_grid_noise(values, std=1.0)
            os.write(write_end, noisy.tobytes())
        finally:
            os._exit(0)
    os.close(write_end)
    parent, _ = generator.add_grid_noise(values, std=1.0)
    data = b""
    while chunk := os.read(read_end, 4096):
        data += chunk
    os.close(read_end)
    os.waitpid(pid, 0)
    return parent, np.frombuffer(data, dtype=np.float64)


def test_an_unseeded_generator_never_repeats_draws_across_fork():
    g = hsdp.Generator()
    g.add_grid_noise(np.zeros(3), std=1.0)  # keystream buffered before the fork
    parent, child = _draws_in_child_and_parent(g)
    assert child.shape == (8,)
    assert not np.isin(child, parent).any()


def test_a_seeded_generator_is_reproducible_across_fork():
    # Documented choice (docs/python.md): a seeded generator is a function of its seed only, so
    # parent and child continue the same stream; give each worker its own seed.
    g = hsdp.Generator(seed=5)
    parent, child = _draws_in_child_and_parent(g)
    assert np.array_equal(parent, child)
    h = hsdp.Generator(seed=5)
    assert np.array_equal(h.add_grid_noise(np.zeros(8), std=1.0)[0], parent)


# --- repr --------------------------------------------------------------------------------------

def test_every_result_repr_names_its_adjacency():
    run = hsdp.Run(example=True)
    report = hsdp.account(run, delta=1e-5)
    assert report.best is not None
    opacus = hsdp.Run(n=60000, batch_size=256, sampling="poisson", noise_multiplier=1.1, clip=1, steps=100)
    remove = hsdp.account(opacus, delta=1e-5)
    results = [report, report.best, report.analyses[0], hsdp.calibrate(run, "noise", epsilon=1.0, delta=1e-5),
               hsdp.plan("federated", epsilon=1, delta=1e-5, n=1000, lipschitz=1, smoothness=1,
                         strong_convexity=0.5, diameter=2, dimension=5),
               hsdp.compare(run, x="steps", from_=1, to=10, points=2),
               hsdp.compare(run, x="steps", from_=1, to=10, points=2).curves[0],
               hsdp.train(X, Y, sigma=1.0, seed=1),
               hsdp.calibrate_parameter(lambda s: hsdp.Run(**dict(BASE, noise_std=s)), epsilon=1, delta=1e-5,
                                        lower=0.01, upper=100)]
    for r in results:
        assert "replace-one adjacency" in repr(r), repr(r)
    assert remove.add_remove_best is not None
    assert "add/remove-one adjacency" in repr(remove.add_remove_best), repr(remove.add_remove_best)
    assert "add/remove-one adjacency" in repr(hsdp.account(opacus.replace(adjacency="remove"), delta=1e-5))
