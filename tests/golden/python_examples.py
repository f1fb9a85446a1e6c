"""The Python examples whose output is golden (scripts/golden.py): the "Describe, then ask"
block of docs/python.md, value by value, then examples/python_tour.py (its printed output; the
PNG figures are not compared). Run with the output directory as the only argument."""

import os
import pathlib
import runpy
import sys

import hsdp

work = pathlib.Path(sys.argv[1])
work.mkdir(parents=True, exist_ok=True)
os.chdir(work)

# docs/python.md, "Describe, then ask"
run = hsdp.Run(n=1000, eta=0.05, sigma=3, convention="journal",
               lipschitz=1, smoothness=1, diameter=1)
acc = hsdp.Accountant(run)
print(repr(run))
print(acc.get_epsilon(1e-5))
print(acc.get_delta(1.0))
report = acc.report(delta=1e-5)
best = report.best
assert best is not None
print(best.name)
print([r.name for r in report.analyses if not r.applicable])
print(report.table())
print(report.to_json())
print(run.cli_args())
print(run.replace(steps=2000).cli_args())
print(hsdp.calibrate(run, "noise", epsilon=1.0, delta=1e-5).to_json())
print(hsdp.plan("federated", epsilon=1, delta=1e-5, n=1000, lipschitz=1, smoothness=1,
                strong_convexity=0.5, diameter=2, dimension=5).to_json())

# docs/python.md, "From a data file": the request of `hsdp train --data ... --json`
heart = "/usr/share/doc/liblinear-tools/examples/heart_scale"
r = hsdp.train(data=heart, format="libsvm", model="logistic", epsilon=1, seed=1)
print(r.text(), end="")
assert r.test_evaluation is not None and r.plan is not None
print(r.split, r.test_evaluation["accuracy"], r.plan["chosen"])

# examples/python_tour.py (two training targets: HSDP_TOUR_QUICK)
os.environ["HSDP_TOUR_QUICK"] = "1"
tour = pathlib.Path(__file__).resolve().parents[2] / "examples" / "python_tour.py"
sys.argv = [str(tour), "tour"]
runpy.run_path(str(tour), run_name="__main__")
