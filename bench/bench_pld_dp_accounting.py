#!/usr/bin/env python3
"""Time dp_accounting's PLD accountant and hsdp's PLD on the same DP-SGD run, in one process.

DP-SGD, Poisson q = 0.01, noise multiplier 1, T = 10^4, add/remove, eps at delta = 1e-5
(issue 13). dp_accounting is optional: when it cannot be imported (put a snapshot of
google/differential-privacy/python on PYTHONPATH), the script says so and exits 0. hsdp is
timed through the Python module when it is importable, otherwise through the benchmark
binary bench_pld (argument --bench, default build/bench/bench_pld).
"""
import argparse
import json
import subprocess
import sys
import time

Q, Z, T, DELTA = 0.01, 1.0, 10_000, 1e-5


def time_dp_accounting(repeats):
    try:
        import dp_accounting
        from dp_accounting.pld import pld_privacy_accountant
    except ImportError as e:  # not installed here: skip cleanly
        print(f"dp_accounting not importable ({e}); skipping the reference timing")
        return None
    event = dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(Q, dp_accounting.GaussianDpEvent(Z)), T)
    best, eps = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        acc = pld_privacy_accountant.PLDAccountant()  # default discretisation 1e-4
        acc.compose(event)
        eps = acc.get_epsilon(DELTA)
        best = min(best, time.perf_counter() - start)
    print(f"dp_accounting PLD: eps = {eps:.4f}, {best * 1e3:.1f} ms")
    return best


def time_hsdp(bench):
    out = subprocess.run([bench, "--benchmark_filter=BM_DpSgdEpsilon/10000/100/10000/0/0$",
                          "--benchmark_format=json"], check=True, capture_output=True, text=True)
    run = json.loads(out.stdout)["benchmarks"][0]
    ms = run["real_time"] if run["time_unit"] == "ms" else run["real_time"] / 1e6
    print(f"hsdp PLD: {run.get('label', '')}, {ms:.2f} ms")
    return ms / 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench", default="build/bench/bench_pld")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    ref = time_dp_accounting(args.repeats)
    ours = time_hsdp(args.bench)
    if ref is not None:
        print(f"ratio dp_accounting / hsdp: {ref / ours:.0f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
