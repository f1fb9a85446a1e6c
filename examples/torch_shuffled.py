#!/usr/bin/env python3
"""Your own PyTorch training loop, certified by hsdp from the ledger of the steps it took.

A private logistic regression on Fashion-MNIST sandals (5) vs sneakers (7), trained with a
PyTorch loop on hsdp.torch's privacy engine: the engine's DataLoader draws the shuffled batches
from hsdp's CSPRNG (a fresh permutation every epoch; `--drop-last false`, PyTorch's default,
keeps the short last batch), `engine.step(batch)` computes the per-example gradients, checks
them against the stated bound, takes the step, adds hsdp's grid noise and projects onto a ball,
and records the step in its ledger. Only the final model is published. The noise is calibrated
for the target before training; after it the certificate is computed from the ledger -- the run
the loop actually performed -- and refused, with the reason, for any step the ledger cannot
vouch for (docs/python.md, "hsdp.torch: a privacy engine").

    /usr/bin/python3 examples/torch_shuffled.py                    # 12000 records, eps = 1
    /usr/bin/python3 examples/torch_shuffled.py --subset 1000 --batch-size 96 --epochs 4 \\
        --drop-last false --json out/torch.json                    # a quick run, PyTorch's default

What makes the last-iterate analyses apply, and who enforces it:
  * a convex, beta-smooth loss: logistic loss, beta = R^2 / 4 (the engine derives it);
  * a bound L on every per-example gradient: |grad| <= |(x, 1)| <= R; every record is scaled to
    norm <= 1 (record-local, needs no data statistics) and the model has a bias, so R = sqrt(2)
    (record_norm=sqrt(2)); the engine checks every per-example gradient against L;
  * a constant step size eta = 1.98/beta < 2/beta on the batch MEAN gradient (the engine's);
  * hsdp's Gaussian noise on its grid, of a fixed std, added to the parameters at every step;
  * projection onto a ball of radius r after every step (the diameter 2 r enters the bound);
  * shuffled batches drawn by the engine: floor(n/b) batches of b per epoch (drop_last=True),
    or ceil(n/b) with a last batch of the n mod b records left (drop_last=False, charged).

Randomness: without --seed the engine's generator is keyed from operating-system entropy (the
order and the noise are never written). --seed keys it from the seed: the run is reproducible
and its certificate is for the experiment only (certificate(experiment=True): order known,
"seeded: for experiments, not for release").
"""

import argparse
import gzip
import json
import math
import os
import struct
import sys
import time
from typing import Any, Optional, Tuple

import numpy as np
import torch

import hsdp.torch as hsdp_torch

FASHION = "/usr/share/datasets/fashion-mnist"


def read_idx(path: str) -> "np.ndarray[Any, np.dtype[np.uint8]]":
    """An IDX file (plain or gzipped) as a numpy array."""
    if path.endswith(".gz"):
        with gzip.open(path, "rb") as f:
            data = f.read()
    else:
        with open(path, "rb") as f:
            data = f.read()
    zero, kind, dims = struct.unpack(">HBB", data[:4])
    if zero != 0 or kind != 0x08:
        raise ValueError("%s: not an unsigned-byte IDX file" % path)
    shape = struct.unpack(">" + "I" * dims, data[4:4 + 4 * dims])
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def load(images: str, labels: str, subset: Optional[int] = None) -> Tuple[torch.Tensor, torch.Tensor]:
    """Records of classes 5 and 7: features scaled to norm <= 1 (the model adds the bias); labels -1 / +1."""
    x = read_idx(os.path.join(FASHION, images)).reshape(-1, 784).astype(np.float64) / 255.0
    y = read_idx(os.path.join(FASHION, labels)).astype(np.int64)
    keep = (y == 5) | (y == 7)
    x, y = x[keep], np.where(y[keep] == 7, 1.0, -1.0)
    if subset:
        x, y = x[:subset], y[:subset]
    x = x / np.maximum(1.0, np.linalg.norm(x, axis=1, keepdims=True))  # record-local
    return torch.tensor(x), torch.tensor(y)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--delta", type=float, default=1e-5)
    ap.add_argument("--subset", type=int, default=None, help="train on the first N records only")
    ap.add_argument("--batch-size", type=int, default=1500)
    ap.add_argument("--epochs", type=int, default=36)
    ap.add_argument("--radius", type=float, default=100.0)
    ap.add_argument("--drop-last", choices=["true", "false"], default="true",
                    help="drop the short last batch of each epoch (true) or keep it (false, PyTorch's default)")
    ap.add_argument("--seed", type=int, default=None,
                    help="seed the order and the noise (for experiments; a published model must "
                         "not come from a seed others know)")
    ap.add_argument("--json", default=None, help="write the run performed and its certificate here")
    args = ap.parse_args()
    torch.set_num_threads(1)

    x, y = load("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", args.subset)
    x_test, y_test = load("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz")
    n, d = x.shape
    b = args.batch_size
    drop_last = args.drop_last == "true"
    model = torch.nn.Linear(d, 1).double()
    torch.nn.init.zeros_(model.weight)
    torch.nn.init.zeros_(model.bias)

    # 1. Before training: the engine with the smallest noise std for the target (final model only).
    try:
        engine = hsdp_torch.make_private_with_epsilon(
            model, x, y, loss="logistic", batch_size=b, target_epsilon=args.epsilon, target_delta=args.delta,
            epochs=args.epochs, record_norm=math.sqrt(2.0), radius=args.radius, sampling="shuffle",
            drop_last=drop_last, seed=args.seed)
    except ValueError as e:
        sys.exit(str(e))
    cal = engine.calibration
    assert cal is not None
    print("calibrated noise std %.6g per step (%s, epsilon %.6f at delta %g, %s)"
          % (engine.noise_std, cal.achieved_name, cal.achieved_epsilon, args.delta,
             hsdp_torch.adjacency_name(engine.adjacency)))

    # 2. Train: the engine's order, its private step (its ledger records every step).
    started = time.time()
    for _ in range(args.epochs):
        for batch in engine.data_loader():
            engine.step(batch)
    seconds = time.time() - started
    performed = len(engine.ledger)

    # 3. After training: the certificate of the run the ledger recorded.
    cert = engine.certificate(args.delta, experiment=args.seed is not None)
    if not cert.certified or cert.report is None or cert.run is None:
        sys.exit("no certificate: " + cert.reason)
    report = cert.report
    best = report.best
    assert best is not None
    batch_sizes = sorted({e.batch_size for e in engine.ledger})
    per_epoch = engine.batches_per_epoch()
    reads = np.zeros(n, dtype=np.int64)
    reads_per_epoch_max = 0
    for k, entry in enumerate(engine.ledger):
        if k % per_epoch == 0:
            reads[:] = 0
        reads[entry.indices] += 1
        reads_per_epoch_max = max(reads_per_epoch_max, int(reads.max()))
    with torch.no_grad():
        accuracy = float(((model(x_test)[:, 0]) * y_test > 0).double().mean())
        train_accuracy = float(((model(x)[:, 0]) * y > 0).double().mean())
    print("trained %d steps (%d epochs of %d batches of %d%s, drawn by the engine, each record at most once per "
          "epoch) in %.1f s (%.2f ms per step)" % (performed, args.epochs, per_epoch, b,
                                                  "" if batch_sizes == [b] else " and one of %d" % (n % b),
                                                  seconds, 1000 * seconds / max(1, performed)))
    print("certificate of the final model, from the ledger: epsilon = %.6f at delta = %g under %s (%s; %s)"
          % (best.epsilon, args.delta, hsdp_torch.adjacency_name(cert.adjacency), best.name,
             best.note or best.citation))
    if cert.add_remove_epsilon is not None:
        print("the same run under %s: epsilon = %.6f" % (hsdp_torch.adjacency_name("remove"), cert.add_remove_epsilon))
    elif cert.add_remove_reason:
        print("the same run under %s: not derived (%s)" % (hsdp_torch.adjacency_name("remove"), cert.add_remove_reason))
    for r in report.analyses:
        if r.applicable and r.name.startswith("composition-pld"):
            print("the same run, every iterate published: epsilon = %.4f (%s, %s)"
                  % (r.epsilon, r.name, hsdp_torch.adjacency_name(cert.adjacency)))
    print("train accuracy %.4f  test accuracy %.4f (2000 t10k records)" % (train_accuracy, accuracy))
    print("randomness: %s" % engine.generator.randomness)
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as f:
            json.dump({"loop": {"n": n, "steps": performed, "batch_sizes": batch_sizes,
                                "drop_last": drop_last, "order_known": bool(cert.run.order_known),
                                "epochs": args.epochs, "steps_per_epoch": per_epoch,
                                "max_reads_per_epoch": reads_per_epoch_max, "noise_std": engine.noise_std,
                                "eta": engine.eta, "radius": args.radius, "parameters": engine.dimension,
                                "randomness": engine.generator.randomness, "seeded": args.seed is not None,
                                "seconds_per_step": seconds / max(1, performed),
                                "account_args": cert.run.cli_args()},
                       "certificate": cert.to_dict(),
                       "calibration": json.loads(cal.to_json()),
                       "report": json.loads(report.to_json()),
                       "test_accuracy": accuracy, "train_accuracy": train_accuracy}, f, indent=1)


if __name__ == "__main__":
    main()
