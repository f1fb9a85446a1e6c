"""hsdp.compare makes the request `hsdp compare` makes (the same CSV and SVG, the same
checks); a DP-SGD run needs no eta and its report gives the add/remove-one value beside the
replace-one one, as the command does."""

import pytest

import hsdp
from conftest import cli_error, cli_json, run_cli

DP_SGD = dict(n=60000, batch_size=256, sampling="poisson", noise_multiplier=1.1, clip=1, steps=14062)
DP_SGD_FLAGS = ["--n", "60000", "--batch-size", "256", "--sampling", "poisson", "--noise-multiplier", "1.1",
                "--clip", "1", "--steps", "14062"]


def test_dp_sgd_without_eta_reports_both_adjacencies_like_the_command():
    run = hsdp.Run(**DP_SGD)
    assert run.eta is None
    report = hsdp.account(run, delta=1e-5)
    text, doc = cli_json("account", *DP_SGD_FLAGS, "--delta", "1e-5")
    assert report.to_json() + "\n" == text
    assert report.adjacency == "replace"
    assert report.epsilon == pytest.approx(4.22, abs=0.005)
    assert report.add_remove_epsilon == pytest.approx(2.38, abs=0.005)  # Opacus, dp_accounting
    assert report.add_remove_best.name == "composition-pld"
    assert [r.name for r in report.add_remove] == ["composition-rdp", "composition-pld", "last-iterate-heuristic"]
    assert report.result("shifted-renyi").reason == "needs the step size eta (--eta)"
    assert "best under add/remove-one: composition-pld" in report.table()
    assert not hsdp.analysis("contraction-per-index").applies(run)
    # get_epsilon answers for the run's own adjacency
    assert hsdp.Accountant(run).get_epsilon(1e-5) == report.epsilon
    assert hsdp.Accountant(run.replace(adjacency="remove")).get_epsilon(1e-5) == report.add_remove_epsilon


def test_a_std_without_eta_is_an_error_naming_eta():
    with pytest.raises(ValueError, match=r"^eta = \(missing\): must be given with noise_std"):
        hsdp.Run(n=100, noise_std=1)


def test_compare_equals_the_command(tmp_path):
    run = hsdp.Run(example=True)
    c = hsdp.compare(run, x="steps", from_=1, to=1000, points=6, log_x=True, svg=str(tmp_path / "py.svg"))
    cli_svg = tmp_path / "cli.svg"
    proc = run_cli("compare", "--example", "--x", "steps", "--from", "1", "--to", "1000", "--points", "6", "--log-x",
                   "--svg", str(cli_svg))
    assert c.to_csv() == proc.stdout
    assert (tmp_path / "py.svg").read_text() == cli_svg.read_text() == c.to_svg()
    assert c.axis == "steps" and len(c.xs) == 6 and c.y_label.startswith("epsilon")
    curve = c.curve("shifted-renyi")
    assert curve.applicable and len(curve.ys) == 6 and all(y is not None for y in curve.ys)
    assert not c.curve("contraction-laplace").applicable
    # a DP-SGD run without eta, swept over the noise multiplier
    n = hsdp.compare(hsdp.Run(**DP_SGD), x="noise", from_=0.8, to=1.6, points=3, analyses=["composition-pld"])
    assert n.x_name == "noise_multiplier"
    assert n.curve("composition-pld").ys[1] == pytest.approx(hsdp.account(hsdp.Run(**DP_SGD | {"noise_multiplier": 1.2})).result("composition-pld").epsilon)


def test_compare_figure_equals_the_command(tmp_path):
    c = hsdp.compare(figure="journal-fig2", points=4, csv=str(tmp_path / "f.csv"))
    proc = run_cli("compare", "--figure", "journal-fig2", "--points", "4")
    assert (tmp_path / "f.csv").read_text() == proc.stdout == c.to_csv()


def test_compare_errors_name_keywords():
    run = hsdp.Run(example=True)
    with pytest.raises(ValueError, match=r"^x = \(missing\): must be given: .*\(or use figure\)"):
        hsdp.compare(run, from_=1, to=10)
    with pytest.raises(ValueError, match=r"^to = 1: must be > from_ = 5"):
        hsdp.compare(run, x="steps", from_=5, to=1)
    assert cli_error("compare", "--example", "--x", "steps", "--from", "5", "--to", "1").startswith("--to = 1: must be > --from = 5")
    with pytest.raises(ValueError, match=r"^run = \(given\): must be absent with figure='journal-fig2'"):
        hsdp.compare(run, figure="journal-fig2")
    with pytest.raises(ValueError, match=r"^run = \(missing\)"):
        hsdp.compare(x="steps", from_=1, to=10)
    with pytest.raises(ValueError, match=r"^y_scale = cubic: must be one of auto, log, linear"):
        hsdp.compare(run, x="steps", from_=1, to=10, y_scale="cubic")
