#!/usr/bin/env python3
"""Time per step: hsdp.torch's privacy engine against the plain PyTorch loop it replaced.

Both train the logistic regression of examples/torch_shuffled.py on the same records with the
same batch size and noise std: the plain loop is the example's former loop (DataLoader with
shuffle=True, per-example gradients by hand, torch.randn noise, projection); the engine adds
what the certificate needs (its CSPRNG order, the per-example bound check, grid noise from the
CSPRNG, the parameter checksums, the batch checked against its copy of the records, and the
ledger entry with its SHA-256 link). Prints milliseconds per step (the median over
--repeats runs of --epochs epochs each) and the ratio.

    /usr/bin/python3 bench/bench_torch_engine.py                  # Fashion-MNIST 5 vs 7, b = 1500
    /usr/bin/python3 bench/bench_torch_engine.py --subset 2000 --batch-size 64
"""

import argparse
import importlib.util
import math
import pathlib
import statistics
import time

import torch
from torch.utils.data import DataLoader, TensorDataset

import hsdp.torch as hsdp_torch

REPO = pathlib.Path(__file__).resolve().parents[1]


def example_module():
    spec = importlib.util.spec_from_file_location("torch_shuffled", REPO / "examples" / "torch_shuffled.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def plain_loop(x, y, b, s, eta, radius, epochs):
    """The example's loop before the engine: returns (seconds, steps)."""
    n, d = x.shape
    xa = torch.hstack([x, torch.ones(n, 1, dtype=torch.float64)])  # the bias as a feature
    gen, noise_gen = torch.Generator().manual_seed(1), torch.Generator().manual_seed(2)
    loader = DataLoader(TensorDataset(xa, y, torch.arange(n)), batch_size=b, shuffle=True, drop_last=True,
                        generator=gen)
    w = torch.zeros(d + 1, dtype=torch.float64)
    steps = 0
    started = time.perf_counter()
    for _ in range(epochs):
        for xb, yb, _ib in loader:
            per_example = -(yb * torch.sigmoid(-yb * (xb @ w)))[:, None] * xb
            w = w - eta * per_example.mean(dim=0) + s * torch.randn(d + 1, dtype=torch.float64, generator=noise_gen)
            norm = torch.linalg.norm(w)
            if norm > radius:
                w = w * (radius / norm)
            steps += 1
    return time.perf_counter() - started, steps


def engine_loop(x, y, b, s, radius, epochs):
    model = torch.nn.Linear(x.shape[1], 1).double()
    torch.nn.init.zeros_(model.weight)
    torch.nn.init.zeros_(model.bias)
    engine = hsdp_torch.PrivacyEngine(model, x, y, loss="logistic", batch_size=b, noise_std=s,
                                      record_norm=math.sqrt(2.0), radius=radius)
    started = time.perf_counter()
    for _ in range(epochs):
        for batch in engine.data_loader():
            engine.step(batch)
    seconds = time.perf_counter() - started
    assert engine.certificate(1e-5).certified
    return seconds, len(engine.ledger)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--subset", type=int, default=None)
    ap.add_argument("--batch-size", type=int, default=1500)
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--noise-std", type=float, default=0.0613473)
    ap.add_argument("--radius", type=float, default=100.0)
    args = ap.parse_args()
    torch.set_num_threads(1)
    ex = example_module()
    x, y = ex.load("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", args.subset)
    eta = 1.98 / 0.5
    plain, engine = [], []
    for _ in range(args.repeats):
        sec, steps = plain_loop(x, y, args.batch_size, args.noise_std, eta, args.radius, args.epochs)
        plain.append(1000 * sec / steps)
        sec, steps = engine_loop(x, y, args.batch_size, args.noise_std, args.radius, args.epochs)
        engine.append(1000 * sec / steps)
    p, e = statistics.median(plain), statistics.median(engine)
    print("records %d x %d, batch size %d, %d steps per run, median of %d runs, 1 thread"
          % (x.shape[0], x.shape[1], args.batch_size, steps, args.repeats))
    print("plain loop   %.3f ms per step" % p)
    print("engine       %.3f ms per step" % e)
    print("ratio        %.2fx" % (e / p))


if __name__ == "__main__":
    main()
