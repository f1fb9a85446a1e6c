#!/usr/bin/env python3
"""Your own PyTorch training loop, certified by hsdp for the model you publish.

A private logistic regression on Fashion-MNIST sandals (5) vs sneakers (7), trained with a
plain PyTorch loop: `DataLoader(shuffle=True, drop_last=True)` draws the batches (a fresh
permutation every epoch), per-example gradients are written out by hand, Gaussian noise is
added to every step and the parameters are projected onto a ball. Only the final model is
published. hsdp calibrates the noise for the target before training and certifies the run the
loop actually performed after it (docs/python.md, "Accounting your own training loop").

    /usr/bin/python3 examples/torch_shuffled.py                    # 12000 records, eps = 1
    /usr/bin/python3 examples/torch_shuffled.py --subset 1000 --batch-size 100 --epochs 4 \\
        --seed 1 --json out/torch.json                             # a quick run

What makes the last-iterate analyses apply, and how this loop enforces it:
  * a convex, beta-smooth loss: logistic loss, beta = |x|^2 / 4;
  * a bound L on every per-example gradient: |grad| <= |x|, and every record is scaled to
    norm <= 1 (record-local, needs no data statistics) plus a bias feature 1, so L = sqrt(2)
    and beta = 1/2;
  * a step size eta <= 2/beta (here 1.98/beta), constant, with the batch MEAN gradient (the
    sensitivity of one step is 2 eta L / b);
  * Gaussian noise of a fixed std added to the parameters at every step;
  * projection onto a ball of radius r after every step (the diameter 2 r enters the bound);
  * shuffled batches of exactly b records: a fresh permutation each epoch, never published,
    floor(n/b) batches (drop_last=True: a short last batch would have a larger sensitivity).

Randomness: --seed makes the run reproducible and marks its ledger "seeded: for experiments, not
for release" (anyone who knows the seed can regenerate the noise). This loop draws with
torch.Generator and torch.randn, a statistical generator and a floating-point Gaussian sampler:
fine for the experiment it is, but not the CSPRNG and grid noise that `hsdp train` uses for a
model you release (docs/security.md).
"""

import argparse
import gzip
import json
import math
import os
import struct
import sys
import time

import numpy as np
import torch
from torch.utils.data import DataLoader, TensorDataset

import hsdp

FASHION = "/usr/share/datasets/fashion-mnist"


def read_idx(path):
    """An IDX file (plain or gzipped) as a numpy array."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    zero, kind, dims = struct.unpack(">HBB", data[:4])
    if zero != 0 or kind != 0x08:
        raise ValueError("%s: not an unsigned-byte IDX file" % path)
    shape = struct.unpack(">" + "I" * dims, data[4:4 + 4 * dims])
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def load(images, labels, subset=None):
    """Records of classes 5 and 7: features scaled to norm <= 1 plus a bias 1; labels -1 / +1."""
    x = read_idx(os.path.join(FASHION, images)).reshape(-1, 784).astype(np.float64) / 255.0
    y = read_idx(os.path.join(FASHION, labels)).astype(np.int64)
    keep = (y == 5) | (y == 7)
    x, y = x[keep], np.where(y[keep] == 7, 1.0, -1.0)
    if subset:
        x, y = x[:subset], y[:subset]
    x = x / np.maximum(1.0, np.linalg.norm(x, axis=1, keepdims=True))  # record-local
    x = np.hstack([x, np.ones((len(x), 1))])
    return torch.tensor(x), torch.tensor(y)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--delta", type=float, default=1e-5)
    ap.add_argument("--subset", type=int, default=None, help="train on the first N records only")
    ap.add_argument("--batch-size", type=int, default=1500)
    ap.add_argument("--epochs", type=int, default=36)
    ap.add_argument("--radius", type=float, default=100.0)
    ap.add_argument("--seed", type=int, default=None,
                    help="seed the order and the noise (for experiments; a published model must "
                         "not come from a seed others know)")
    ap.add_argument("--json", default=None, help="write the run performed and its certificate here")
    args = ap.parse_args()
    torch.set_num_threads(1)

    x, y = load("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", args.subset)
    x_test, y_test = load("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz")
    n, p = x.shape
    b = args.batch_size
    L, beta = math.sqrt(2.0), 0.5   # |x| <= sqrt(2) with the bias; logistic: beta = |x|^2 / 4
    eta = 1.98 / beta                # < 2 / beta: every step is a contraction
    steps_per_epoch = n // b         # drop_last=True
    steps = args.epochs * steps_per_epoch

    # 1. Before training: the smallest noise std for the target, final model only.
    planned = hsdp.Run(n=n, steps=steps, batch_size=b, sampling="shuffle", eta=eta, noise_std=1.0,
                       lipschitz=L, smoothness=beta, diameter=2 * args.radius, dimension=p,
                       release="last")
    cal = hsdp.calibrate(planned, "noise", epsilon=args.epsilon, delta=args.delta, noise_unit="std")
    if not cal.feasible:
        sys.exit("no noise meets the target: " + cal.reason)
    s = cal.value
    print("calibrated noise std %.6g per step (%s, epsilon %.6f at delta %g)"
          % (s, cal.achieved_name, cal.achieved_epsilon, args.delta))

    # 2. Train: the data loader's shuffled order, per-example gradients, noise, projection.
    gen = torch.Generator()
    noise_gen = torch.Generator()
    if args.seed is not None:
        gen.manual_seed(args.seed)
        noise_gen.manual_seed(args.seed + 1)
    else:
        gen.seed()
        noise_gen.seed()
    index = torch.arange(n)
    loader = DataLoader(TensorDataset(x, y, index), batch_size=b, shuffle=True, drop_last=True,
                        generator=gen)
    w = torch.zeros(p, dtype=torch.float64)
    performed, batch_sizes, reads_per_epoch_max = 0, set(), 0
    started = time.time()
    for _ in range(args.epochs):
        reads = torch.zeros(n, dtype=torch.int64)
        for xb, yb, ib in loader:
            margin = yb * (xb @ w)
            # per-example gradient of log(1 + exp(-y w.x)): -y x sigmoid(-y w.x), |.| <= |x| <= L
            per_example = -(yb * torch.sigmoid(-margin))[:, None] * xb
            grad = per_example.mean(dim=0)
            w = w - eta * grad + s * torch.randn(p, dtype=torch.float64, generator=noise_gen)
            norm = torch.linalg.norm(w)
            if norm > args.radius:
                w = w * (args.radius / norm)
            reads[ib] += 1
            performed += 1
            batch_sizes.add(len(ib))
        reads_per_epoch_max = max(reads_per_epoch_max, int(reads.max()))
    seconds = time.time() - started
    randomness = ("seeded: for experiments, not for release (torch.Generator seeded with %d)" % args.seed
                  if args.seed is not None else
                  "torch.Generator from operating-system entropy (a statistical generator and floating-point "
                  "Gaussian noise, not hsdp's CSPRNG and grid: docs/security.md)")

    # 3. After training: certify the run the loop performed (its own counts, not the plan's).
    if batch_sizes != {b} or reads_per_epoch_max > 1:
        sys.exit("the loop did not run shuffled batches of exactly b records (b = %s, reads %d)"
                 % (sorted(batch_sizes), reads_per_epoch_max))
    ran = hsdp.Run(n=n, steps=performed, batch_size=b, sampling="shuffle", eta=eta, noise_std=s,
                   lipschitz=L, smoothness=beta, diameter=2 * args.radius, dimension=p,
                   release="last")
    report = hsdp.account(ran, delta=args.delta)
    best = report.best
    accuracy = float(((x_test @ w) * y_test > 0).double().mean())
    train_accuracy = float(((x @ w) * y > 0).double().mean())
    print("trained %d steps (%d epochs of %d batches of %d, shuffled, each record once per epoch) "
          "in %.1f s" % (performed, args.epochs, steps_per_epoch, b, seconds))
    print("certificate of the final model: epsilon = %.6f at delta = %g (%s; %s)"
          % (best.epsilon, args.delta, best.name, best.note or best.citation))
    for r in report.analyses:
        if r.applicable and r.name.startswith("composition-pld"):
            print("the same run, every iterate published: epsilon = %.4f (%s)" % (r.epsilon, r.name))
    print("train accuracy %.4f  test accuracy %.4f (2000 t10k records)" % (train_accuracy, accuracy))
    print("randomness: %s" % randomness)
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as f:
            json.dump({"loop": {"n": n, "steps": performed, "batch_sizes": sorted(batch_sizes),
                                "epochs": args.epochs, "steps_per_epoch": steps_per_epoch,
                                "max_reads_per_epoch": reads_per_epoch_max, "noise_std": s,
                                "eta": eta, "radius": args.radius, "parameters": p,
                                "randomness": randomness, "seeded": args.seed is not None},
                       "calibration": json.loads(cal.to_json()),
                       "report": json.loads(report.to_json()),
                       "test_accuracy": accuracy, "train_accuracy": train_accuracy}, f, indent=1)


if __name__ == "__main__":
    main()
