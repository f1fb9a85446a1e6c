"""Calibration, planning and the exact audit from Python equal the CLI's JSON."""

import json

import pytest

import hsdp
from conftest import cli_json, run_cli

EXAMPLE = dict(n=1000, eta=0.05, lipschitz=1, smoothness=1, diameter=1, sigma=3, convention="journal")
DPSGD = dict(n=60000, steps=2000, batch_size=256, sampling="fixed", eta=0.1, clip=1, lipschitz=1, release="every")


@pytest.mark.parametrize("kw,parameter,target,extra", [
    (EXAMPLE, "noise", (1, 1e-5), {}),
    (dict(EXAMPLE, n=100, sigma=10), "steps", (1, 1e-5), {}),
    (dict(DPSGD, noise_multiplier=1), "noise", (2, 1e-5), {}),
    (dict(DPSGD, noise_multiplier=2), "steps", (2, 1e-5), {}),
    (dict(DPSGD, noise_multiplier=1), "sampling-rate", (2, 1e-5), {}),
    (dict(DPSGD, noise_multiplier=1), "noise", (2, 1e-5), {"noise_unit": "std"}),
])
def test_calibrate_json_is_the_cli_json(cli, kw, parameter, target, extra):
    run = hsdp.Run(**kw)
    eps, delta = target
    flags = ["calibrate", "--for", parameter, "--epsilon", str(eps), "--delta", str(delta), *run.cli_args()]
    if "noise_unit" in extra:
        flags += ["--noise-unit", extra["noise_unit"]]
    text, doc = cli_json(*flags)
    result = hsdp.calibrate(run, parameter, epsilon=eps, delta=delta, **extra)
    assert result.to_json() + "\n" == text
    assert result.feasible and result.value == doc["value"]
    assert result.achieved_epsilon <= eps
    # The solution's run accounted again from Python gives the same best epsilon.
    assert hsdp.Accountant(result.run).get_epsilon(delta) == result.report.best.epsilon


def test_infeasible_calibration_is_a_result(cli):
    run = hsdp.Run(**dict(EXAMPLE, n=100, sigma=5))
    proc = run_cli("calibrate", "--for", "steps", "--epsilon", "1", "--delta", "1e-5", *run.cli_args(), "--json",
                   check=False)
    assert proc.returncode == 2
    result = hsdp.calibrate(run, "steps", epsilon=1, delta=1e-5)
    assert not result.feasible and result.reason
    assert result.to_json() + "\n" == proc.stdout


PLANS = [
    ["langevin", dict(epsilon=1, delta=1e-5, n=1000, lipschitz=1, smoothness=2, strong_convexity=0.5, diameter=1,
                      dimension=10)],
    ["federated", dict(epsilon=1, delta=1e-5, n=1000, lipschitz=1, smoothness=1, strong_convexity=0.5, diameter=2,
                       dimension=5)],
    ["online", dict(epsilon=2, delta=1e-5, n=2000, lipschitz=1, smoothness=1, diameter=1, dimension=1)],
    ["noisy-sgd", dict(epsilon=1, delta=1e-5, n=12000, lipschitz=1.4142135623730951, smoothness=0.5,
                       dimension=785)],
]


@pytest.mark.parametrize("setting,kw", PLANS)
def test_plan_json_is_the_cli_json(cli, setting, kw):
    flags = ["plan", "--setting", setting]
    for k, v in kw.items():
        flags += ["--" + k.replace("_", "-"), str(v)]
    text, doc = cli_json(*flags)
    p = hsdp.plan(setting, **kw)
    assert p.to_json() + "\n" == text
    assert p.feasible and p.utility == doc["utility"]["value"]
    assert p.report.to_dict() == doc["report"]
    assert p.text() == run_cli(*flags).stdout


@pytest.mark.parametrize("kw,q,grid", [
    (dict(n=10, steps=10, batch_size=10, eta=0.1, noise_std=0.1, lipschitz=1, smoothness=1, diameter=1),
     dict(delta=1e-5, alphas=[2]), 801),
    (dict(n=20, batch_size=1, sampling="cyclic", eta=0.05, noise_std=0.15, lipschitz=1, smoothness=1, diameter=1),
     dict(epsilon=1.0), 401),
])
def test_audit_exact_json_is_the_cli_json(cli, kw, q, grid):
    run = hsdp.Run(**kw)
    flags = ["audit", "exact", *run.cli_args(), "--grid", str(grid)]
    if "delta" in q:
        flags += ["--delta", repr(q["delta"])]
    if "epsilon" in q:
        flags += ["--epsilon", repr(q["epsilon"])]
    for a in q.get("alphas", []):
        flags += ["--alpha", repr(a)]
    text, doc = cli_json(*flags)
    t = hsdp.audit_exact(run, grid=grid, **q)
    assert t.to_json() + "\n" == text
    assert t.to_dict() == doc
    assert all(b.consistent for b in t.bounds)
    assert t.exact.lo <= t.exact.value <= t.exact.hi
    assert [b.name for b in t.bounds] == [b["name"] for b in doc["bounds"]]
