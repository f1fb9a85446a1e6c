"""examples/torch_shuffled.py: a PyTorch loop with DataLoader(shuffle=True), certified by hsdp.

The example runs on a small subset; the test checks that the certificate is for exactly the
run the loop performed (records, steps, batch size, shuffled order read once per epoch, noise,
step size, domain) and that the same run stated to `hsdp account` gives the same report.
CI installs python3-torch and sets HSDP_REQUIRE_TORCH=1, so a missing torch fails there."""

import json
import os
import subprocess
import sys

import pytest

from conftest import REPO, cli_json

if os.environ.get("HSDP_REQUIRE_TORCH"):
    import torch  # noqa: F401  (fail, not skip, where torch must be present)
else:
    pytest.importorskip("torch")


def test_certificate_is_for_the_loop_that_ran(tmp_path):
    out = tmp_path / "torch.json"
    env = dict(os.environ)
    import hsdp
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.dirname(hsdp.__file__)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    proc = subprocess.run([sys.executable, str(REPO / "examples" / "torch_shuffled.py"), "--subset", "600",
                           "--batch-size", "64", "--epochs", "3", "--seed", "1", "--json", str(out)],
                          capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    loop, report = doc["loop"], doc["report"]
    run = report["run"]
    # The run the loop performed: 600 records, floor(600/64) = 9 batches of exactly 64 per
    # epoch (drop_last), 3 epochs, each record read at most once per epoch.
    assert loop["n"] == run["n"] == 600
    assert loop["steps_per_epoch"] == 9
    assert loop["steps"] == run["steps"] == 27
    assert loop["batch_sizes"] == [run["batch_size"]] == [64]
    assert loop["max_reads_per_epoch"] == 1
    assert run["sampling"] == "shuffle" and run["release"] == "last"
    assert run["noise_std"] == loop["noise_std"] == doc["calibration"]["value"]
    assert run["eta"] == loop["eta"]
    assert run["diameter"] == 2 * loop["radius"]
    # Certified for the final model at the target, by the shuffled-batch analysis.
    assert report["best"]["name"] == "shifted-interpolation"
    assert report["best"]["epsilon"] <= 1.0
    assert doc["calibration"]["achieved"]["epsilon"] <= 1.0
    assert 0.5 < doc["test_accuracy"] <= 1.0
    # The same run stated to the command gives the same report.
    _, cli = cli_json("account", "--n", 600, "--steps", 27, "--batch-size", 64, "--sampling", "shuffle",
                      "--eta", loop["eta"], "--noise-std", repr(loop["noise_std"]), "--lipschitz", repr(2 ** 0.5),
                      "--smoothness", 0.5, "--diameter", 2 * loop["radius"], "--dimension", loop["parameters"],
                      "--release", "last", "--delta", 1e-5)
    assert cli["best"] == report["best"]
