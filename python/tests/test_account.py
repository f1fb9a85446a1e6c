"""Accounting from Python equals `hsdp account --json` for the same runs (byte for byte)."""

import math

import pytest

import hsdp
from conftest import cli_json

# (run keywords, query keywords): a spread of the run description's features.
RUNS = [
    (dict(example=True), dict()),
    (dict(n=1000, eta=0.05, sigma=3, convention="journal", lipschitz=1, smoothness=1, diameter=1), dict(delta=1e-6)),
    (dict(n=1000, eta=0.05, sigma=3, convention="journal", lipschitz=1, smoothness=1, diameter=1), dict(epsilon=1.0)),
    (dict(n=60000, steps=2000, batch_size=256, sampling="poisson", eta=0.1, noise_multiplier=1.1, clip=1,
          lipschitz=1, release="every"), dict(delta=1e-5, alphas=[2, 8.5])),
    (dict(n=500, steps=200, batch_size=500, eta=0.5, sigma=0.5, convention="chourasia", lipschitz=1,
          smoothness=2, strong_convexity=0.1), dict(delta=1e-5, alphas=[4])),
    (dict(n=100, eta=0.05, noise="laplace", sigma=2, convention="isit", lipschitz=1, smoothness=1,
          diameter=1, dimension=1), dict(delta=1e-4)),
    (dict(n=200, eta=0.1, eta_schedule="inv-sqrt", sigma=1, convention="journal", lipschitz=1,
          diameter=2, release="random-stop", dimension=3), dict()),
    (dict(n=100, steps=50, batch_size=10, sampling="fixed", eta=0.1, noise_std=0.2, lipschitz=1,
          smoothness=1, diameter=1, adjacency="remove", convex=False), dict(epsilon=2.0)),
    (dict(n=100, eta=0.05, sigma=3, convention="journal", lipschitz=1, smoothness=1, diameter=1, index=40),
     dict()),
    (dict(n=40, steps=20, batch_size=4, sampling="shuffle", eta=0.1, sigma=2, convention="federated",
          lipschitz=1, smoothness=1, strong_convexity=0.5, diameter=2), dict()),
    (dict(n=10000, steps=500, batch_size=100, sampling="poisson", eta=0.1, noise_multiplier=1.2, clip=1,
          adjacency="remove", release="every", pld_interval=5e-4, pld_cells=20), dict(delta=1e-6)),
]


def query_flags(q):
    flags = []
    if "delta" in q:
        flags += ["--delta", repr(q["delta"])]
    if "epsilon" in q:
        flags += ["--epsilon", repr(q["epsilon"])]
    for a in q.get("alphas", []):
        flags += ["--alpha", repr(a)]
    return flags


@pytest.mark.parametrize("kw,q", RUNS)
def test_report_json_is_the_cli_json(cli, kw, q):
    run = hsdp.Run(**kw)
    text, doc = cli_json("account", *run.cli_args(), *query_flags(q))
    report = hsdp.account(run, **q)
    assert report.to_json() + "\n" == text
    assert report.to_dict() == doc
    # The objects carry the same values as the JSON.
    assert len(report.analyses) == len(doc["analyses"])
    for r, j in zip(report.analyses, doc["analyses"]):
        assert (r.name, r.citation, r.applicable, r.reason, r.kind) == (
            j["name"], j["citation"], j["applicable"], j["reason"], j["kind"])
        if r.applicable:
            eps = math.inf if j["epsilon"] == "inf" else j["epsilon"]
            assert r.epsilon == eps and r.delta == j["delta"]
            assert {k: (math.inf if v == "inf" else v) for k, v in j.get("details", {}).items()} == r.details
            assert r.note == j.get("note", "")
            assert [(p["alpha"], p["epsilon"]) for p in j.get("rdp", [])] == [
                (a, e if e != math.inf else "inf") for a, e in r.rdp]
        else:
            assert r.epsilon is None and r.delta is None
    if doc["best"] is None:
        assert report.best is None
    else:
        assert report.best.name == doc["best"]["name"]


@pytest.mark.parametrize("kw,q", RUNS[:4])
def test_accountant_get_epsilon_and_get_delta(cli, kw, q):
    run = hsdp.Run(**kw)
    acc = hsdp.Accountant(run)
    _, doc = cli_json("account", *run.cli_args(), "--delta", "1e-5")
    assert acc.get_epsilon(1e-5) == doc["best"]["epsilon"]
    _, doc = cli_json("account", *run.cli_args(), "--epsilon", "1.5")
    assert acc.get_delta(1.5) == doc["best"]["delta"]
    assert acc.report(delta=1e-5).best.name == hsdp.account(run, delta=1e-5).best.name


def test_named_analyses_equal_cli_restricted_report(cli):
    run = hsdp.Run(**RUNS[1][0])
    applicable = [r.name for r in hsdp.account(run).analyses if r.applicable and r.kind == "upper"]
    assert applicable
    for name in applicable:
        text, doc = cli_json("account", *run.cli_args(), "--analysis", name, "--delta", "1e-6")
        a = hsdp.analysis(name)
        assert a.name == name and a.applies(run) and a.check(run) is None
        eps = a.get_epsilon(run, 1e-6)
        assert (math.inf if doc["analyses"][0]["epsilon"] == "inf" else doc["analyses"][0]["epsilon"]) == eps
        assert hsdp.Accountant(run, analyses=[name]).get_epsilon(1e-6) == eps
        assert hsdp.account(run, delta=1e-6, analyses=[name]).to_json() + "\n" == text


def test_analyses_list_is_the_report_order(cli):
    _, doc = cli_json("account", "--example")
    assert hsdp.analyses() == [a["name"] for a in doc["analyses"]]
    for name in hsdp.analyses():
        assert hsdp.analysis(name).name == name


def test_rdp_of_an_rdp_analysis():
    run = hsdp.Run(**RUNS[3][0])
    report = hsdp.account(run, delta=1e-5, alphas=[8.5])
    for r in report.analyses:
        if r.applicable and r.rdp:
            assert hsdp.analysis(r.name).rdp(run, 8.5) == r.rdp[0][1]


def test_per_index_view_equals_cli(cli):
    run = hsdp.Run(n=100, eta=0.05, sigma=3, convention="journal", lipschitz=1, smoothness=1, diameter=1)
    text, _ = cli_json("account", *run.cli_args(), "--per-index", "--per-index-points", "20")
    report = hsdp.account(run, per_index=True, per_index_points=20)
    assert report.to_json() + "\n" == text
    assert report.per_index["subsampled"] is True


def test_run_properties_and_replace():
    run = hsdp.Run(n=1000, eta=0.05, sigma=3, convention="journal", lipschitz=1, smoothness=1, diameter=1)
    assert (run.n, run.steps, run.batch_size, run.sampling) == (1000, 1000, 1, "cyclic")
    assert run.noise_std == pytest.approx(0.15)
    assert run.eta == 0.05 and run.diameter == 1 and run.lipschitz == 1 and run.convex
    longer = run.replace(steps=2000)
    assert longer.steps == 2000 and run.steps == 1000
    assert "--steps" in longer.cli_args()
    sched = hsdp.Run(n=10, eta=0.1, eta_schedule="inv-t", noise_std=1)
    assert isinstance(sched.eta, list) and len(sched.eta) == 10
    assert hsdp.Run(example=True).to_dict()["n"] == 100
    assert hsdp.account(run).run.n == 1000 and hsdp.account(run).run.cli_args() is None


def test_replace_works_on_every_run():
    run = hsdp.Run(n=1000, eta=0.05, sigma=3, convention="journal", lipschitz=1, smoothness=1, diameter=1)
    cal = hsdp.calibrate(run, "noise", epsilon=1.0, delta=1e-5)
    shorter = cal.run.replace(steps=500)
    assert shorter.steps == 500 and shorter.noise_std == pytest.approx(cal.run.noise_std)
    assert hsdp.account(run).run.replace(diameter=2).diameter == 2
    sched = hsdp.Run(n=100, eta=0.5, eta_schedule="inv-sqrt", noise_std=1, lipschitz=1)
    again = hsdp.account(sched).run.replace(lipschitz=2)
    assert again.eta == sched.eta and again.lipschitz == 2
    plan = hsdp.plan("langevin", epsilon=1, delta=1e-5, n=1000, lipschitz=1, smoothness=2,
                     strong_convexity=0.5, diameter=1, dimension=10)
    assert plan.run.replace(steps=plan.run.steps + 1).steps == plan.run.steps + 1


def test_parallel_threads_give_the_serial_results():
    # The GIL is released while accounting: several threads run the library at once.
    from concurrent.futures import ThreadPoolExecutor

    runs = [hsdp.Run(**kw) for kw, _ in RUNS]
    serial = [hsdp.account(r, delta=1e-5).to_json() for r in runs]
    with ThreadPoolExecutor(max_workers=4) as pool:
        parallel = list(pool.map(lambda r: hsdp.account(r, delta=1e-5).to_json(), runs * 2))
    assert parallel == serial * 2


def test_run_signature_lists_the_run_fields():
    import inspect
    params = inspect.signature(hsdp.Run).parameters
    assert {"n", "steps", "batch_size", "eta", "sigma", "convention", "noise_multiplier", "clip",
            "convex", "release", "adjacency"} <= set(params)
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params.values())
    assert params["n"].default is None and params["convex"].default is True


def test_pld_grid_keywords_reach_composition_pld():
    # A Gaussian composition: 100 steps reading every record, the sum over the fixed n (Poisson,
    # q = 1), noise multiplier 5, add/remove = 2-GDP.
    kw = dict(n=1000, batch_size=1000, sampling="poisson", steps=100, eta=0.1, noise_multiplier=5, clip=1, adjacency="remove",
              release="every")
    default = hsdp.account(hsdp.Run(**kw), delta=1e-5, analyses=["composition-pld"]).analyses[0]
    fine_run = hsdp.Run(**kw, pld_interval=1e-4, pld_cells=100)
    assert (fine_run.pld_interval, fine_run.pld_cells) == (1e-4, 100)
    assert fine_run.cli_args()[-4:] == ["--pld-interval", "0.0001", "--pld-cells", "100"]
    fine = hsdp.account(fine_run, delta=1e-5, analyses=["composition-pld"]).analyses[0]
    # The default grid: the 100 Gaussian steps are one Gaussian of mu = 2, on mu / 256.
    assert default.details["pld_interval"] == 2 / 256 and "pld_cells" not in default.details
    assert fine.details["pld_interval"] == 1e-4 and fine.details["pld_cells"] == 100
    exact = 9.9972561464  # eps(1e-5) of 2-GDP (closed form; tests/cli/test_cli.cpp)
    assert exact <= fine.epsilon < default.epsilon <= exact + 5e-5
    # replace() keeps the knobs, and changes them
    assert fine_run.replace(steps=50).pld_interval == 1e-4
    assert fine_run.replace(pld_interval=2e-4).pld_interval == 2e-4
