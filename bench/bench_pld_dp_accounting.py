#!/usr/bin/env python3
"""hsdp's composition-pld and dp_accounting's PLD accountant side by side, in one process.

The reference table of docs/pld.md: eps at delta = 1e-5 of DP-SGD runs (Poisson sampling;
q = 1: full batches), each computed by

  * hsdp: hsdp.analysis("composition-pld").get_epsilon(run, 1e-5) through the Python module,
    the analysis' default discretisation;
  * dp_accounting (google/differential-privacy, python/dp_accounting): a fresh
    PLDAccountant(neighboring_relation, value_discretization_interval=--interval, default
    1e-4, its default) composing SelfComposedDpEvent(PoissonSampledDpEvent(q,
    GaussianDpEvent(z)), T) (GaussianDpEvent alone for q = 1), then get_epsilon(1e-5).

What is timed: CPU time of the process (time.process_time, the machine may be shared; wall
time is printed too). "first" is the first call for that case in this process: hsdp has no
composition or discretisation of that run cached (FFTW plans of a length an earlier case
planned are reused); dp_accounting has no cache.
The repeats ("median" of --repeats calls) give hsdp a run it has not seen each time -- the
noise multiplier times (1 + r 1e-12), the same cost -- so that nothing is found in its caches
of compositions and discretisations; dp_accounting repeats the same event.

dp_accounting is optional: when it cannot be imported (PYTHONPATH must reach a snapshot of
google/differential-privacy's python/dp_accounting, whose dependencies are Debian's
python3-numpy, -scipy, -attr, -mpmath and -absl) the script says so and times hsdp alone.
hsdp is imported from build/python unless PYTHONPATH already provides it.

    PYTHONPATH=build/python:/path/to/differential-privacy/python/dp_accounting \\
        /usr/bin/python3 bench/bench_pld_dp_accounting.py [--repeats 5] [--interval 1e-4]
"""
import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DELTA = 1e-5

# (label, n, batch size, noise multiplier, T, adjacency): q = b / n.
CASES = [
    ("q=0.01 z=1 T=1e4", 60000, 600, 1.0, 10000, "remove"),
    ("q=0.04 z=1.5 T=2250", 60000, 2400, 1.5, 2250, "remove"),
    ("q=256/60000 z=1 T=1e4", 60000, 256, 1.0, 10000, "remove"),
    ("q=0.001 z=0.8 T=1e5", 60000, 60, 0.8, 100000, "remove"),
    ("q=1e-4 z=2 T=1e6", 60000, 6, 2.0, 1000000, "remove"),
    ("q=0.1 z=4 T=1000", 60000, 6000, 4.0, 1000, "remove"),
    ("full batch z=10 T=100", 60000, 60000, 10.0, 100, "remove"),
    ("replace-one q=0.025 z=3 T=8000", 60000, 1500, 3.0, 8000, "replace"),
]


def timed(fn):
    c, w = time.process_time(), time.perf_counter()
    value = fn()
    return value, 1e3 * (time.process_time() - c), 1e3 * (time.perf_counter() - w)


def import_hsdp():
    try:
        import hsdp  # noqa: F401
    except ImportError:
        sys.path.insert(0, os.path.join(HERE, os.pardir, "build", "python"))
        import hsdp  # noqa: F401
    return sys.modules["hsdp"]


def import_dp_accounting():
    try:
        import dp_accounting
        from dp_accounting import privacy_accountant
        from dp_accounting.pld import pld_privacy_accountant
    except ImportError as e:
        return None, str(e)
    return (dp_accounting, privacy_accountant, pld_privacy_accountant), None


def hsdp_epsilon(hsdp, analysis, case, scale=1.0):
    _, n, b, z, t, adjacency = case
    run = hsdp.Run(n=n, batch_size=b, sampling="full" if b == n else "poisson", steps=t, eta=0.1,
                   noise_multiplier=z * scale, clip=1, adjacency=adjacency, release="every")
    return timed(lambda: analysis.get_epsilon(run, DELTA))


def dp_accounting_epsilon(mods, case, interval):
    dp, pa, pld = mods
    _, n, b, z, t, adjacency = case
    relation = (pa.NeighboringRelation.REPLACE_ONE if adjacency == "replace"
                else pa.NeighboringRelation.ADD_OR_REMOVE_ONE)

    def run():
        step = dp.GaussianDpEvent(z) if b == n else dp.PoissonSampledDpEvent(b / n, dp.GaussianDpEvent(z))
        acc = pld.PLDAccountant(relation, value_discretization_interval=interval)
        acc.compose(dp.SelfComposedDpEvent(step, t))
        return acc.get_epsilon(DELTA)

    return timed(run)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5, help="calls per case after the first (median)")
    ap.add_argument("--interval", type=float, default=1e-4, help="dp_accounting's value_discretization_interval")
    ap.add_argument("--cases", default="", help="comma-separated indices into the table (default: all)")
    ap.add_argument("--skip-dp-accounting", action="store_true", help="time hsdp only")
    args = ap.parse_args()

    hsdp = import_hsdp()
    analysis = hsdp.analysis("composition-pld")
    mods, why = (None, "skipped (--skip-dp-accounting)") if args.skip_dp_accounting else import_dp_accounting()
    if mods is None:
        print(f"dp_accounting: not available ({why}); timing hsdp only")
    else:
        version = getattr(mods[0], "__version__", "?")
        print(f"dp_accounting {version} from {os.path.dirname(mods[0].__file__)}, "
              f"PLDAccountant at value_discretization_interval {args.interval:g}")
    print(f"hsdp {getattr(hsdp, '__version__', '')} from {os.path.dirname(hsdp.__file__)}, "
          f"composition-pld default; CPU ms (wall ms), delta = {DELTA:g}, first call and median of "
          f"{args.repeats}")
    picked = [CASES[int(i)] for i in args.cases.split(",")] if args.cases else CASES
    rows = []
    for case in picked:
        eps, first, first_wall = hsdp_epsilon(hsdp, analysis, case)
        again = [hsdp_epsilon(hsdp, analysis, case, 1 + r * 1e-12) for r in range(1, args.repeats + 1)]
        row = dict(case=case[0], eps=eps, first=first, first_wall=first_wall,
                   median=statistics.median(x[1] for x in again) if again else first)
        if mods is not None:
            ref, ref_first, ref_first_wall = dp_accounting_epsilon(mods, case, args.interval)
            ref_again = [dp_accounting_epsilon(mods, case, args.interval) for _ in range(args.repeats)]
            row.update(ref=ref, ref_first=ref_first, ref_first_wall=ref_first_wall,
                       ref_median=statistics.median(x[1] for x in ref_again) if ref_again else ref_first)
        rows.append(row)
        line = (f"{row['case']:32s} hsdp {row['eps']:.6f}  first {row['first']:7.1f} ({row['first_wall']:.0f})"
                f"  median {row['median']:7.1f}")
        if mods is not None:
            line += (f" | dp_accounting {row['ref']:.6f}  first {row['ref_first']:7.0f} ({row['ref_first_wall']:.0f})"
                     f"  median {row['ref_median']:7.0f} | speed-up first {row['ref_first'] / row['first']:5.0f}x"
                     f"  median {row['ref_median'] / row['median']:5.0f}x")
        print(line, flush=True)
    if mods is not None:
        worst = min(min(r["ref_first"] / r["first"], r["ref_median"] / r["median"]) for r in rows)
        print(f"smallest speed-up (CPU time, first call or median): {worst:.0f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
