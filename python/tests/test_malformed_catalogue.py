"""The malformed-input catalogue of the Python module (the command's is
tests/cli/test_malformed_catalogue.cpp): bad keywords, arrays and files, tried as an adversarial
user would. Each case asserts the exception type (ValueError for a bad value, never a crash,
a generic pybind11 TypeError or a silent wrong result), that the message names the keyword the
user gave (or file:line:column) and no command-line flag, and a time limit: a watchdog ends
the process if a case hangs, so a hang fails the suite instead of stalling it."""

import faulthandler
import math
import os
import re
import time

import numpy as np
import pytest

import hsdp

LIMIT = 20  # seconds; every case answers in well under one

RNG = np.random.default_rng(7)
X = RNG.normal(size=(40, 3))
Y = (X[:, 0] > 0).astype(float)
KW = dict(sigma=1.0, seed=1)


def train(X_=None, y=None, **kw):
    args = dict(KW)
    args.update(kw)
    return hsdp.train(X if X_ is None else X_, Y if y is None else y, **args)


def trained():
    return train()


def run(**kw):
    base = dict(n=100, eta=0.05, noise_std=1.0, lipschitz=1.0, smoothness=1.0, diameter=1.0)
    base.update(kw)
    return hsdp.Run(**base)


def laplace_only_analysis():
    """An analysis that needs Laplace noise (its reason names the noise field)."""
    r = run()
    for name in hsdp.analyses():
        reason = hsdp.analysis(name).check(r)
        if reason and "laplace" in reason.lower():
            return name
    raise AssertionError("no analysis needs Laplace noise")


def write(tmp, name, data):
    path = tmp / name
    path.write_bytes(data if isinstance(data, bytes) else data.encode())
    return str(path)


# (name, call(tmp_path), expected exception, substrings of the message)
CASES = [
    # the batch order: a partial last batch only for shuffled batches; booleans only
    ("drop_last_cyclic", lambda t: train(sampling="cyclic", drop_last=False), ValueError,
     ["drop_last", "false", "sampling='shuffle'"]),
    ("drop_last_text", lambda t: train(sampling="shuffle", drop_last="no"), TypeError, ["drop_last"]),
    ("order_known_text", lambda t: hsdp.Run(n=10, eta=0.1, noise_std=1, order_known="yes"), TypeError,
     ["order_known", "bool"]),
    # arrays
    ("X_strings", lambda t: train(np.array([["a", "b", "c"]] * 40)), ValueError, ["X", "dtype"]),
    ("X_complex", lambda t: train(X + 1j), ValueError, ["X", "complex"]),
    ("X_objects", lambda t: train(np.array([[None, 1, 2]] * 40, dtype=object)), ValueError, ["X", "object"]),
    ("X_ragged", lambda t: train([[1.0, 2.0], [3.0]] * 20), ValueError, ["X"]),
    ("X_one_dimension", lambda t: train(X[:, 0]), ValueError, ["X", "2-D"]),
    ("X_three_dimensions", lambda t: train(X.reshape(40, 3, 1)), ValueError, ["X", "2-D"]),
    ("X_no_rows", lambda t: train(X[:0], Y[:0]), ValueError, ["X"]),
    ("X_nan", lambda t: train(np.where(np.arange(120).reshape(40, 3) == 4, np.nan, X)), ValueError, ["X[1, 1]"]),
    ("X_inf", lambda t: train(np.where(np.arange(120).reshape(40, 3) == 0, np.inf, X)), ValueError, ["X[0, 0]"]),
    ("X_string_scalar", lambda t: train("data.csv"), ValueError, ["X"]),
    ("y_two_dimensions", lambda t: train(y=Y.reshape(40, 1)), ValueError, ["y", "1-D"]),
    ("y_wrong_length", lambda t: train(y=Y[:39]), ValueError, ["y", "39"]),
    # text labels are valid (as a file's M/B); y still refuses what is neither numbers nor text
    ("y_bytes", lambda t: train(y=np.array([b"a", b"b"] * 20)), ValueError, ["y", "dtype"]),
    ("y_objects", lambda t: train(y=np.array([{}] * 40, dtype=object)), ValueError, ["y[0]", "dict"]),
    ("y_none", lambda t: train(y=[None] * 40), ValueError, ["y[0]", "NoneType"]),
    ("y_numbers_and_text", lambda t: train(y=[0, "a"] * 20), ValueError, ["y[1]", "'a'", "y[0] is a number"]),
    ("y_text_and_numbers", lambda t: train(y=np.array(["a", 1] * 20, dtype=object)), ValueError, ["y[1]", "text"]),
    ("y_ragged", lambda t: train(y=[[0], [1, 2]] * 20), ValueError, ["y", "list"]),
    ("y_empty_text", lambda t: train(y=np.array(["a", ""] * 20)), ValueError, ["y[1]", "non-empty"]),
    ("y_three_texts_logistic", lambda t: train(y=np.array(["a", "b", "c", "d"] * 10)), ValueError, ["labels"]),
    ("y_complex", lambda t: train(y=Y + 0j), ValueError, ["y", "complex"]),
    ("y_nan", lambda t: train(y=np.where(np.arange(40) == 3, np.nan, Y)), ValueError, ["y[3]"]),
    ("y_one_class", lambda t: train(y=np.zeros(40)), ValueError, ["labels", "in y"]),
    ("y_three_classes", lambda t: train(y=np.arange(40) % 3), ValueError, ["labels", "found 3 in y"]),
    ("y_unbounded_squared", lambda t: train(y=Y * 5, model="squared"), ValueError, ["label_bound"]),
    # keywords of the training run
    ("seed_negative", lambda t: train(seed=-1), ValueError, ["seed = -1"]),
    ("seed_2_64", lambda t: train(seed=2**64), ValueError, ["seed = 18446744073709551616"]),
    ("sigma_1e308", lambda t: train(sigma=1e308), ValueError, ["sigma", "1e+308"]),
    # issue 37: stds the noise grid cannot draw are range errors, never an internal error
    ("sigma_1e-300", lambda t: train(sigma=1e-300), ValueError, ["sigma", "1e-300", "noise grid"]),
    ("noise_std_4e307", lambda t: train(sigma=None, noise_std=4e307), ValueError, ["noise_std", "noise grid"]),
    ("grid_noise_std_1e-300", lambda t: hsdp.Generator(seed=1).add_grid_noise(np.zeros(2), std=1e-300), ValueError,
     ["std = 1e-300", "normal double"]),
    ("sigma_negative", lambda t: train(sigma=-1.0), ValueError, ["sigma", "-1"]),
    ("noise_std_inf", lambda t: train(sigma=None, noise_std=math.inf), ValueError, ["noise_std"]),
    ("record_norm_1e200", lambda t: train(record_norm=1e200), ValueError, ["record_norm", "1e+200"]),
    ("record_norm_1e200_target", lambda t: train(record_norm=1e200, sigma=None, epsilon=1.0, delta=1e-5),
     ValueError, ["record_norm"]),
    ("record_norm_zero", lambda t: train(record_norm=0.0), ValueError, ["record_norm", "0"]),
    ("feature_scale_nan", lambda t: train(feature_scale=[math.nan]), ValueError, ["feature_scale", "nan"]),
    ("feature_scale_count", lambda t: train(feature_scale=[1.0, 2.0]), ValueError, ["feature_scale", "2 values"]),
    ("epochs_1e30", lambda t: train(epochs=1e30), ValueError, ["epochs"]),
    ("epochs_1e15", lambda t: train(epochs=1e15), ValueError, ["epochs"]),
    ("epochs_noisy_gd_4e18", lambda t: train(epochs=4e18, algorithm="noisy-gd"), ValueError, ["epochs"]),
    ("epochs_negative", lambda t: train(epochs=-1.0), ValueError, ["epochs", "-1"]),
    ("steps_zero", lambda t: train(steps=0), ValueError, ["steps", "0"]),
    ("steps_beyond_limit", lambda t: train(steps=2**41), ValueError, ["steps"]),
    ("batch_size_zero", lambda t: train(batch_size=0), ValueError, ["batch_size", "0"]),
    ("batch_size_beyond_n", lambda t: train(batch_size=41), ValueError, ["batch_size", "41"]),
    ("model_bogus", lambda t: train(model="bogus"), ValueError, ["model", "bogus"]),
    ("algorithm_bogus", lambda t: train(algorithm="bogus"), ValueError, ["algorithm", "bogus"]),
    ("noise_bogus", lambda t: train(noise="bogus"), ValueError, ["noise", "bogus"]),
    ("sampling_bogus", lambda t: train(sampling="bogus"), ValueError, ["sampling", "bogus"]),
    ("release_bogus", lambda t: train(release="bogus"), ValueError, ["release", "bogus"]),
    ("eta_schedule_bogus", lambda t: train(eta_schedule="bogus"), ValueError, ["eta_schedule", "bogus"]),
    ("constraint_bogus", lambda t: train(constraint="bogus"), ValueError, ["constraint", "bogus"]),
    ("radius_zero", lambda t: train(radius=0.0), ValueError, ["radius", "0"]),
    ("l2_negative", lambda t: train(l2=-1.0), ValueError, ["l2", "-1"]),
    ("clip_zero", lambda t: train(clip=0.0), ValueError, ["clip", "0"]),
    ("delta_two", lambda t: train(delta=2.0), ValueError, ["delta", "2"]),
    ("no_noise_stated", lambda t: train(sigma=None), ValueError, ["epsilon", "sigma"]),
    ("positive_absent", lambda t: train(positive="7"), ValueError, ["positive", "7"]),
    ("positive_softmax", lambda t: train(positive="1", model="softmax"), ValueError, ["positive"]),
    ("feature_storage_bogus", lambda t: train(feature_storage="bogus"), ValueError, ["feature_storage", "bogus"]),
    ("feature_storage_uint8_fractions", lambda t: train(feature_storage="uint8"), ValueError, ["X[0, 0]"]),
    ("users_wrong_count", lambda t: train(algorithm="federated", users=["a"] * 39), ValueError, ["users"]),
    ("softmax_too_many_classes", lambda t: train(np.ones((70000, 1)), np.arange(70000), model="softmax"),
     ValueError, ["classes", "65536"]),
    ("feature_ranges_reversed", lambda t: train(feature_ranges=[(1.0, 0.0)]), ValueError, ["feature_ranges", "min < max"]),
    ("feature_ranges_empty_list", lambda t: train(feature_ranges=[]), ValueError, ["feature_ranges"]),
    ("feature_ranges_two_of_three", lambda t: train(feature_ranges=[(0, 1), (0, 1)]), ValueError,
     ["feature_ranges", "2 ranges"]),
    ("feature_ranges_subnormal_width", lambda t: train(feature_ranges=[(0.0, 1e-320)]), ValueError,
     ["feature_ranges", "2 / (max - min)"]),
    ("feature_ranges_file_malformed", lambda t: train(feature_ranges=write(t, "r.txt", "0 1 2\n")), ValueError,
     ["feature_ranges", "r.txt:1"]),
    # a trained model's methods
    ("evaluate_unseen_label", lambda t: trained().evaluate(X, np.where(np.arange(40) == 0, 7.0, Y)), ValueError,
     ["y[0]", "7"]),
    ("evaluate_wrong_width", lambda t: trained().evaluate(X[:, :2], Y), ValueError, ["X", "2 features"]),
    ("predict_strings", lambda t: trained().predict(np.array([["a", "b", "c"]])), ValueError, ["X", "dtype"]),
    ("predict_complex", lambda t: trained().predict(X + 2j), ValueError, ["X", "complex"]),
    ("evaluate_text_unseen", lambda t: trained().evaluate(X, np.array(["a"] * 40)), ValueError, ["y[0]", "a"]),
    # model files
    ("load_model_missing", lambda t: hsdp.load_model(str(t / "none.json")), ValueError, ["model_file", "none.json"]),
    ("load_model_not_json", lambda t: hsdp.load_model(write(t, "m.json", "loss = logistic\n")), ValueError,
     ["model_file", "m.json", "JSON"]),
    ("load_model_version_2", lambda t: hsdp.load_model(
        write(t, "m.json", trained().to_json().replace('"version": 1', '"version": 2'))), ValueError, ["version", "2"]),
    ("load_model_weights_short", lambda t: hsdp.load_model(
        write(t, "m.json", trained().model.to_json().replace('"features": 3', '"features": 4'))), ValueError,
     ["model.weights[0]", "3 values"]),
    ("save_into_missing_directory", lambda t: trained().model.save(str(t / "no" / "m.json")), ValueError, ["output"]),
    ("predict_file_without_no_labels", lambda t: trained().model.predict_file(write(t, "x.csv", "1,2,3\n4,5,6\n")),
     ValueError, ["data", "no label column", "no_labels"]),
    ("predict_file_label_column_no_labels", lambda t: trained().model.predict_file(
        write(t, "x.csv", "1,2,3\n"), label_column=0, no_labels=True), ValueError, ["label_column", "no_labels"]),
    ("predict_file_idx_without_labels", lambda t: trained().model.predict_file(
        write(t, "x.idx", "x"), format="idx"), ValueError, ["labels", "no_labels"]),
    # accounting
    ("analysis_bogus", lambda t: hsdp.analysis("bogus"), ValueError, ["name = bogus"]),
    ("report_result_bogus", lambda t: hsdp.account(run()).result("bogus"), ValueError, ["name = bogus"]),
    ("get_epsilon_not_applicable", lambda t: hsdp.analysis(laplace_only_analysis()).get_epsilon(run(), 1e-5),
     ValueError, ["not applicable", "noise='laplace'"]),
    ("rdp_order_half", lambda t: hsdp.analysis("composition-rdp").rdp(run(), 0.5), ValueError, ["alpha = 0.5"]),
    ("account_analyses_bogus", lambda t: hsdp.account(run(), analyses=["bogus"]), ValueError, ["analyses", "bogus"]),
    ("accountant_delta_two", lambda t: hsdp.Accountant(run()).get_epsilon(2.0), ValueError, ["delta", "2"]),
    ("run_n_negative", lambda t: run(n=-1), ValueError, ["n = -1"]),
    ("run_n_2_64", lambda t: run(n=2**64), ValueError, ["n = 18446744073709551616"]),
    ("run_example_convention_bogus", lambda t: hsdp.Run(example=True, convention="bogus"), ValueError,
     ["convention", "bogus"]),
    ("run_sigma_1e308", lambda t: hsdp.Run(n=10, eta=10.0, sigma=1e308, convention="journal"), ValueError,
     ["sigma", "1e+308"]),
    ("run_diameter_zero", lambda t: run(diameter=0.0), ValueError, ["diameter = 0"]),
    ("run_lipschitz_nan", lambda t: run(lipschitz=math.nan), ValueError, ["lipschitz = nan"]),
    ("calibrate_parameter_bogus", lambda t: hsdp.calibrate(run(), "bogus", epsilon=1.0, delta=1e-5), ValueError,
     ["bogus"]),
    ("audit_exact_grid_small", lambda t: hsdp.audit_exact(run(n=10, steps=3), grid=10), ValueError, ["grid", "10"]),
    ("plan_setting_bogus", lambda t: hsdp.plan("bogus", epsilon=1.0, delta=1e-5, n=100), ValueError, ["bogus"]),
    # audit mia
    ("mia_seed_negative", lambda t: hsdp.audit_mia(X, Y, sigma=1.0, trials=4, seed=-1), ValueError, ["seed = -1"]),
    ("mia_trials_small", lambda t: hsdp.audit_mia(X, Y, sigma=1.0, trials=2, seed=1), ValueError, ["trials", "2"]),
    ("mia_epochs_huge", lambda t: hsdp.audit_mia(X, Y, sigma=1.0, trials=4, seed=1, epochs=1e30), ValueError,
     ["epochs"]),
    ("mia_X_complex", lambda t: hsdp.audit_mia(X + 1j, Y, sigma=1.0, trials=4, seed=1), ValueError, ["X"]),
    # read_csv: files
    ("read_csv_label_column_negative", lambda t: hsdp.read_csv(write(t, "a.csv", "1,2,0\n3,4,1\n"), label_column=-1),
     ValueError, ["label_column = -1"]),
    ("read_csv_label_column_beyond", lambda t: hsdp.read_csv(write(t, "a.csv", "1,2,0\n3,4,1\n"), label_column=5),
     ValueError, ["label_column", "5"]),
    ("read_csv_missing", lambda t: hsdp.read_csv(str(t / "missing.csv")), ValueError, ["path", "missing.csv"]),
    ("read_csv_directory", lambda t: hsdp.read_csv(str(t)), ValueError, ["path", "directory"]),
    ("read_csv_cr_only", lambda t: hsdp.read_csv(write(t, "cr.csv", "1,2,0\r3,4,1\r")), ValueError,
     ["cr.csv:1:6", "carriage return"]),
    ("read_csv_nul", lambda t: hsdp.read_csv(write(t, "nul.csv", b"1,2,0\n3,\x00,1\n")), ValueError,
     ["nul.csv:2:3", "NUL"]),
    ("read_csv_labels_bogus", lambda t: hsdp.read_csv(write(t, "a.csv", "1,2,0\n3,4,1\n"), labels="bogus"),
     ValueError, ["labels", "bogus"]),
    ("read_csv_ragged", lambda t: hsdp.read_csv(write(t, "r.csv", "1,2,0\n3,1\n")), ValueError, ["r.csv:2:4"]),
    ("read_csv_positive_absent", lambda t: hsdp.read_csv(write(t, "a.csv", "1,2,0\n3,4,1\n"), positive="5"),
     ValueError, ["positive", "5"]),
    # second round (issue 31): every keyword stated is read by the run or refused naming it and why
    ("r2_full_batch_size", lambda t: train(sampling="full", batch_size=5), ValueError,
     ["batch_size = 5", "full batches read every record", "n = 40"]),
    ("r2_noisy_gd_batch_size", lambda t: train(algorithm="noisy-gd", batch_size=5), ValueError, ["batch_size = 5"]),
    ("r2_pnsgd_epochs", lambda t: train(algorithm="pnsgd", epochs=3), ValueError, ["epochs = 3", "pnsgd"]),
    ("r2_steps_and_epochs", lambda t: train(steps=3, epochs=5), ValueError, ["epochs = 5", "steps=3"]),
    ("r2_radius_unconstrained", lambda t: train(constraint="none", radius=5), ValueError, ["radius = 5", "none"]),
    ("r2_huber_smoothing_logistic", lambda t: train(huber_smoothing=3), ValueError, ["huber_smoothing = 3", "huber"]),
    ("r2_label_bound_logistic", lambda t: train(label_bound=2), ValueError, ["label_bound = 2", "squared"]),
    ("r2_no_noise_laplace", lambda t: hsdp.train(X, Y, no_noise=True, noise="laplace", seed=1), ValueError,
     ["noise = laplace", "no_noise"]),
    ("r2_no_noise_sigma", lambda t: hsdp.train(X, Y, no_noise=True, sigma=1.0, seed=1), ValueError, ["sigma"]),
    ("r2_drop_last_poisson", lambda t: train(sampling="poisson", drop_last=True), ValueError, ["drop_last"]),
    ("r2_drop_last_pnsgd", lambda t: train(algorithm="pnsgd", drop_last=False), ValueError, ["drop_last"]),
    ("r2_mia_huber_smoothing", lambda t: hsdp.audit_mia(X, Y, sigma=1.0, trials=4, seed=1, huber_smoothing=3),
     ValueError, ["huber_smoothing = 3"]),
    ("r2_calibrate_max_steps_noise", lambda t: hsdp.calibrate(run(steps=10), "noise", epsilon=1.0, delta=1e-5,
                                                              max_steps=100), ValueError, ["max_steps = 100", "steps"]),
    ("r2_account_per_index_points", lambda t: hsdp.account(run(steps=10), per_index_points=100), ValueError,
     ["per_index_points = 100"]),
    # empty values are errors naming the keyword, never "not given"
    ("r2_model_empty", lambda t: train(model=""), ValueError, ["model = (empty)"]),
    ("r2_noise_empty", lambda t: train(noise=""), ValueError, ["noise = (empty)"]),
    ("r2_sampling_empty", lambda t: train(sampling=""), ValueError, ["sampling = (empty)"]),
    # numbers: bool is not a number, a float is not an int; no pybind11 dispatch dump
    ("r2_batch_size_bool", lambda t: train(batch_size=True), TypeError, ["batch_size"]),
    ("r2_seed_bool", lambda t: train(seed=True), TypeError, ["seed"]),
    ("r2_batch_size_float", lambda t: train(batch_size=8.0), TypeError, ["batch_size"]),
    ("r2_keyword_typo", lambda t: train(bach_size=8), TypeError, ["bach_size", "batch_size"]),
    ("r2_account_positional_delta", lambda t: hsdp.account(run(steps=10), 1e-5), TypeError, ["account"]),
    ("r2_mia_trials_bool", lambda t: hsdp.audit_mia(X, Y, sigma=1.0, trials=True, seed=1), TypeError, ["trials"]),
    ("r2_sigma_bool", lambda t: train(sigma=True), TypeError, ["sigma"]),
    # a number outside an analysis' range is "not applicable", never an internal error
    ("r2_composition_pld_huge_noise", lambda t: hsdp.account(run(steps=10, batch_size=10, sampling="shuffle",
                                                                 noise_std=1e300), analyses=["composition-pld"]),
     ValueError, ["composition-pld", "not applicable"]),
    # model files: overflow and consistency
    ("r2_model_intercept_without_bias", lambda t: hsdp.load_model(write(t, "m.json", _model_text(bias=False))),
     ValueError, ["intercept"]),
    # third round (issue 37): an output is never an input, however it is spelled
    ("r3_train_output_is_data", lambda t: hsdp.train(data=write(t, "d.csv", CSV), output=str(t / "d.csv"), **KW),
     ValueError, ["output = ", "another file than data ("]),
    ("r3_train_output_is_data_dot", lambda t: hsdp.train(data=write(t, "d.csv", CSV), output=f"{t}/./d.csv", **KW),
     ValueError, ["output = ", "data ("]),
    ("r3_train_output_is_data_symlink", lambda t: hsdp.train(data=_link(t), output=t / "d.csv", **KW),
     ValueError, ["output = ", "data ("]),
    ("r3_train_output_is_test_data", lambda t: hsdp.train(data=write(t, "d.csv", CSV), test_data=write(t, "e.csv", CSV),
                                                          output=t / "e.csv", **KW),
     ValueError, ["output = ", "test_data ("]),
    ("r3_train_output_is_feature_ranges", lambda t: hsdp.train(data=write(t, "d.csv", CSV),
                                                               feature_ranges=write(t, "r.txt", "-9 9\n"),
                                                               output=t / "r.txt", **KW),
     ValueError, ["output = ", "feature_ranges ("]),
    ("r3_save_over_data", lambda t: hsdp.train(data=write(t, "d.csv", CSV), **KW).save(t / "d.csv"),
     ValueError, ["output = ", "data ("]),
    # a model file's randomness that is not text: refused (never a silent drop of "seeded")
    ("r3_model_randomness_list", lambda t: hsdp.load_model(write(t, "m.json", _model_with(randomness=[1, 2]))),
     ValueError, ["randomness", "[1,2]"]),
    ("r3_model_randomness_number", lambda t: hsdp.load_model(write(t, "m.json", _model_with(randomness=7))),
     ValueError, ["randomness", "7"]),
    # a user id with white space around it: refused, naming where
    ("r3_users_trailing_space", lambda t: hsdp.train(X, Y, algorithm="federated", batch_size=2, sigma=1.0, seed=1,
                                                     users=[f"u{i // 4}" for i in range(39)] + ["u9 "]),
     ValueError, ["users = users[39] column 3", "white space"]),
    # a missing file whose name is not UTF-8: named escaped, never a cast error
    ("r3_missing_data_not_utf8", lambda t: hsdp.train(data=os.fsdecode(bytes(t) + b"/x\xff.csv"), **KW),
     ValueError, ["data = ", "x\\xff.csv"]),
    ("r3_missing_data_bytes_path", lambda t: hsdp.train(data=bytes(t) + b"/x\xff.csv", **KW),
     ValueError, ["data = ", "x\\xff.csv"]),
]

CSV = "".join(f"{(i % 7) / 10 - 0.3},{(i % 5) / 10},{i % 2}\n" for i in range(20))


def _link(tmp):
    write(tmp, "d.csv", CSV)
    os.symlink("d.csv", tmp / "link.csv")
    return tmp / "link.csv"


def _model_with(**fields):
    import json
    doc = json.loads(trained().to_json())
    doc.update(fields)
    return json.dumps(doc)


def _model_text(bias):
    """A trained model's file with its bias flag replaced (the intercept kept)."""
    import json
    doc = json.loads(trained().to_json())
    doc["model"]["bias"] = bias
    return json.dumps(doc)


@pytest.mark.parametrize("name,call,error,parts", CASES, ids=[c[0] for c in CASES])
def test_malformed(tmp_path, name, call, error, parts):
    faulthandler.dump_traceback_later(LIMIT, exit=True)  # a hang ends the run, naming this case
    start = time.monotonic()
    try:
        with pytest.raises(error) as info:
            call(tmp_path)
    finally:
        faulthandler.cancel_dump_traceback_later()
    assert time.monotonic() - start < LIMIT
    message = str(info.value)
    for part in parts:
        assert part in message, (part, message)
    # Keywords, never the command's flags.
    assert not re.search(r"(^|[\s(])--[a-z]", message), message
    # Never pybind11's dispatch dump of overloads.
    assert "incompatible function arguments" not in message, message


def test_catalogue_size():
    assert len(CASES) >= 80


# Inputs that are valid although unusual: no silent wrong result.
def test_bom_headerless_csv_keeps_its_first_record(tmp_path):
    path = write(tmp_path, "bom.csv", b"\xef\xbb\xbf1,2,0\n3,4,1\n5,6,0\n")
    X_, y_, mapping = hsdp.read_csv(path, labels="zero-one")
    assert X_.shape == (3, 2)
    assert X_[0].tolist() == [1.0, 2.0]
    assert y_.tolist() == [0.0, 1.0, 0.0]


def test_bool_and_integer_arrays_are_numbers():
    r = hsdp.train(X > 0, Y.astype(np.int64), sigma=1.0, seed=1)
    assert r.theta.shape == (1, 4)


def test_seed_at_the_limits_is_accepted():
    a = train(seed=0)
    b = train(seed=2**64 - 1)
    assert a.seeded and b.seeded


# Valid inputs of the second round: numpy integer scalars wherever an int is accepted,
# os.PathLike for every path, names up to NAME_MAX, a keyword's default stated explicitly.
def test_numpy_integers_are_ints():
    a = train(seed=np.int64(3), batch_size=np.int32(8))
    b = train(seed=3, batch_size=8)
    assert a.to_json() == b.to_json()


def test_pathlike_paths(tmp_path):
    import pathlib
    path = pathlib.Path(write(tmp_path, "a.csv", "1,2,0\n3,4,1\n5,6,0\n"))
    X_, y_, _ = hsdp.read_csv(path, labels="zero-one")
    assert X_.shape == (3, 2)
    out = tmp_path / "model.json"
    trained().save(out)
    assert hsdp.load_model(out).weights is not None


def test_name_max_output(tmp_path):
    out = tmp_path / ("m" * 250 + ".json")
    trained().save(str(out))
    assert out.exists()


def test_default_stated_is_read():
    # huber_smoothing stated with the huber loss, noise stated with its default: read, accepted.
    train(model="huber", huber_smoothing=0.5)
    train(noise="gaussian")


def test_last_resort_names_the_call():
    with pytest.raises(RuntimeError) as info:
        hsdp._hsdp._raise_internal_error("boom")
    assert "_raise_internal_error" in str(info.value) and "a bug in hsdp" in str(info.value)


# File names are bytes (docs/input.md): a name that is not UTF-8 works as a str (os.fsdecode's
# surrogate escapes), as bytes, or as a pathlib.Path; stored percent-escaped in JSON (lossless:
# urllib.parse.unquote_to_bytes gives the bytes back), shown as \xff in text.
def test_non_utf8_file_names(tmp_path):
    import json
    import pathlib
    import urllib.parse
    raw = bytes(tmp_path) + b"/d\xff.csv"
    with open(raw, "wb") as f:
        f.write(CSV.encode())
    out = os.fsdecode(bytes(tmp_path) + b"/m\xff.json")
    for data in (os.fsdecode(raw), raw, pathlib.Path(os.fsdecode(raw))):
        r = hsdp.train(data=data, output=out, **KW)
        stored = r.to_dict()["configuration"]["data"]
        assert stored.endswith("/d%FF.csv"), stored
        assert urllib.parse.unquote_to_bytes(stored) == raw
        assert "d\\xff.csv" in r.text() and "m\\xff.json" in r.text()
    with open(os.fsencode(out), "rb") as f:
        assert json.load(f)["configuration"]["data"].endswith("d%FF.csv")
    assert hsdp.load_model(out).weights is not None
    r.save(os.fsencode(out))  # bytes for the output too


def test_hard_link_output_is_another_file(tmp_path):
    data = write(tmp_path, "d.csv", CSV)
    os.link(data, tmp_path / "hard.csv")
    hsdp.train(data=data, output=tmp_path / "hard.csv", **KW)
    assert (tmp_path / "d.csv").read_text() == CSV
