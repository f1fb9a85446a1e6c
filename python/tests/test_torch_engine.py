"""hsdp.torch's privacy engine: the certificate comes from the ledger of the steps taken.

The eleven loop changes of issue 32 (each left the old example's printed epsilon unchanged):
half the noise, no noise, shuffle=False, the same permutation every epoch, step size x3,
gradient sum instead of mean, records not scaled to the bound, no projection, a public noise
seed, a smaller batch size, drop_last=False. With the engine each gives either the honest
certificate -- asserted equal to hsdp.account on a Run the test builds itself from what the
loop did (the grid's charges computed here from docs/security.md's constants) -- or a refusal
whose reason is asserted."""

import dataclasses
import io
import math
import os

import numpy as np
import pytest

if os.environ.get("HSDP_REQUIRE_TORCH"):
    import torch
else:
    torch = pytest.importorskip("torch")

import hsdp
import hsdp.torch as ht

N, D, B, EPOCHS = 600, 20, 64, 3
L = math.sqrt(2.0)                    # records with |(x, 1)| <= sqrt 2
BETA = L * L / 4.0                    # logistic: beta = R^2 / 4, as the engine computes it
ETA = 1.98 / BETA
RADIUS = 100.0
P = D + 1
DELTA = 1e-5
S = 0.6186117348                      # the noise std make_private_with_epsilon calibrates for eps = 1


def data(scaled=True):
    g = torch.Generator().manual_seed(5)
    x = torch.randn(N, D, dtype=torch.float64, generator=g) * 3.0
    if scaled:
        x = x / torch.clamp(torch.linalg.norm(x, dim=1, keepdim=True), min=1.0)  # record-local
    y = torch.where(x[:, 0] + 0.3 * x[:, 1] > 0, 1.0, -1.0).double()
    return x, y


def model():
    m = torch.nn.Linear(D, 1).double()
    torch.nn.init.zeros_(m.weight)
    torch.nn.init.zeros_(m.bias)
    return m


def engine(scaled=True, **kw):
    x, y = data(scaled)
    options = dict(loss="logistic", batch_size=B, noise_std=S, record_norm=L, radius=RADIUS)
    options.update(kw)
    return ht.PrivacyEngine(model(), x, y, **options)


def train(e, epochs=EPOCHS):
    for _ in range(epochs):
        for batch in e.data_loader():
            e.step(batch)
    return e


def expected(steps, **kw):
    """hsdp.account on the run the test knows the loop performed (grid charges as in
    docs/security.md: slack 2 2^-32 sqrt P, epsilon 2 P T 2^-52, log beta log(P T) - 11000)."""
    run = dict(n=N, steps=steps, batch_size=B, sampling="shuffle", drop_last=True, eta=ETA, noise_std=S,
               lipschitz=L, smoothness=BETA, diameter=2 * RADIUS, dimension=P, release="last",
               grid_slack=2 * 2.0 ** -32 * math.sqrt(P), grid_epsilon=2 * P * steps * 2.0 ** -52,
               grid_log_beta=math.log(P * steps) - 11000.0)
    run.update(kw)
    run = {k: v for k, v in run.items() if v is not None}
    return hsdp.account(hsdp.Run(**run), delta=DELTA)


def certified(e, steps, **kw):
    c = e.certificate(DELTA)
    assert c.certified, c.reason
    r = expected(steps, **kw)
    assert r.best is not None
    assert c.epsilon == r.best.epsilon and c.analysis == r.best.name
    assert c.steps == steps == len(e.ledger)
    assert c.adjacency == "replace" and "replace-one" in str(c)
    return c


def refused(e, *fragments):
    c = e.certificate(DELTA)
    assert not c.certified and c.epsilon is None
    for f in fragments:
        assert f in c.reason, c.reason
    with pytest.raises(ht.LedgerError) as info:
        e.get_epsilon(DELTA)
    assert info.value.reason == c.reason
    assert str(c).startswith("no certificate (replace-one adjacency")
    return c


@pytest.fixture(scope="module")
def baseline():
    e = train(engine())
    return certified(e, EPOCHS * (N // B))


def test_calibrated_noise_is_the_documented_one():
    x, y = data()
    e = ht.make_private_with_epsilon(model(), x, y, loss="logistic", batch_size=B, target_epsilon=1.0,
                                     target_delta=DELTA, epochs=EPOCHS, record_norm=L, radius=RADIUS)
    assert e.calibration is not None and e.noise_std == e.calibration.value
    assert e.noise_std == pytest.approx(S, rel=1e-9)
    train(e)
    c = e.certificate(DELTA)
    assert c.certified and c.epsilon <= 1.0 and c.epsilon == pytest.approx(e.calibration.achieved_epsilon, rel=1e-9)


def test_the_ledger_records_every_step(baseline):
    e = train(engine())
    assert len(e.ledger) == 27
    seen = np.zeros(N, dtype=int)
    for k, entry in enumerate(e.ledger, start=1):
        assert entry.step == k and entry.drawn and entry.batch_size == B and not entry.problems
        assert entry.noise_std == S and entry.eta == ETA and entry.radius == RADIUS and entry.bound == L
        assert entry.max_gradient_norm <= L * (1 + 2.0 ** -40)
        seen[entry.indices] += 1
        if k > 1:
            assert entry.checksum_before == e.ledger[k - 2].checksum_after
    assert seen.max() == EPOCHS  # each record at most once per epoch, 3 epochs
    assert float(torch.linalg.norm(torch.cat([e.model.weight.reshape(-1), e.model.bias]))) <= RADIUS


# 1. half the noise: certified at the noise used; changed mid-run: refused.
def test_half_the_noise(baseline):
    c = certified(train(engine(noise_std=S / 2)), 27, noise_std=S / 2)
    assert c.epsilon > baseline.epsilon
    e = engine()
    for i, batch in enumerate(e.data_loader()):
        if i == 4:
            e.noise_std = S / 2
        e.step(batch)
    refused(e, "step 5: noise std", "differs from step 1's")


# 2. no noise: refused.
def test_no_noise():
    refused(train(engine(noise_std=0.0)), "no noise")


# 3. shuffle=False: batches of another loader are refused; the engine's cyclic order is certified.
def test_shuffle_false():
    e = engine()
    x, y = data()
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y, torch.arange(N)), batch_size=B,
                                         shuffle=False, drop_last=True)
    for batch in loader:
        e.step(batch)
    refused(e, "step 1: the engine's sampler drew no batch for this step")
    e = train(engine(sampling="cyclic"), epochs=1)
    assert [list(entry.indices) for entry in e.ledger[:2]] == [list(range(64)), list(range(64, 128))]
    certified(e, 9, sampling="cyclic", drop_last=None)


# 4. the same permutation every epoch: the reused batches are refused.
def test_same_permutation_every_epoch():
    e = engine()
    batches = list(e.data_loader())  # drawn ahead: the first epoch's 9 steps are vouched for
    for _ in range(EPOCHS):
        for batch in batches:
            e.step(batch)
    assert [entry.drawn for entry in e.ledger] == [True] * 9 + [False] * 18
    refused(e, "step 10: the engine's sampler drew no batch for this step", "drawn for step 1, used again",
            "(and 17 more)")
    e = engine()
    first = []
    for epoch in range(EPOCHS):
        for i, batch in enumerate(e.data_loader()):  # the engine draws a fresh permutation ...
            if epoch == 0:
                first.append(batch)
            e.step(first[i])                         # ... the loop reuses the first
    refused(e, "step 10: its batch (64 records) is not the batch the engine's sampler drew for step 10",
            "drawn for step 1, used again")


# 5. step size x3: certified at 3 eta; changed mid-run: refused.
def test_step_size_times_three(baseline):
    certified(train(engine(eta=3 * ETA)), 27, eta=3 * ETA)
    e = engine()
    for i, batch in enumerate(e.data_loader()):
        if i == 2:
            e.eta = 3 * ETA
        e.step(batch)
    refused(e, "step 3: step size", "changed between steps")


# 6. gradient sum instead of mean: certified as the mean with step size eta b; a hand-written
#    sum step outside the engine is refused.
def test_gradient_sum_instead_of_mean():
    certified(train(engine(reduction="sum")), 27, eta=ETA * B)
    e = engine()
    for i, (xb, yb, ib) in enumerate(e.data_loader()):
        e.step((xb, yb, ib))
        if i == 3:
            with torch.no_grad():
                w = e.model.weight
                per_example = -(yb * torch.sigmoid(-yb * (xb @ w[0])))[:, None] * xb
                w -= ETA * per_example.sum(dim=0)
    refused(e, "step 5: the parameters changed outside the engine after step 4")


# 7. records not scaled to the bound: refused when the engine is made (the bound is checked on
#    the records, not only on the gradients at the points training visits); clipped instead:
#    the clipped run is certified (clipping acts: only composition applies).
def test_records_not_scaled_to_the_bound():
    with pytest.raises(ValueError, match=r"x: record 175 has norm 19.7033 with the bias feature 1, above "
                                         r"record_norm = 1.41421 \(600 of 600 records are\)"):
        engine(scaled=False)
    e = train(engine(scaled=False, record_norm=None, clip=L, eta=ETA))
    assert e.clipping_acts and sum(entry.clipped for entry in e.ledger) > 0
    c = certified(e, 27, clip=L, convex=False, lipschitz=None, smoothness=None)
    assert c.analysis.startswith("composition")


# 8. no projection: certified without a diameter.
def test_no_projection(baseline):
    c = certified(train(engine(radius=None)), 27, diameter=None)
    assert c.run is not None and math.isinf(c.run.diameter)


# 9. a public noise seed: torch's seed does not reach the engine's noise (certified as before);
#    the engine's own seed is refused for release, and certified as an experiment (order known).
def test_public_noise_seed(baseline):
    weights = []
    for _ in range(2):
        torch.manual_seed(1234)
        e = train(engine())
        weights.append(e.model.weight.detach().clone())
        assert e.certificate(DELTA).epsilon == baseline.epsilon
    assert not torch.equal(weights[0], weights[1])  # the noise is not torch's
    e = train(engine(seed=7))
    refused(e, "seeded generator", "seed 7")
    c = e.certificate(DELTA, experiment=True)
    r = expected(27, order_known=True)
    assert c.certified and c.epsilon == r.best.epsilon and c.run.order_known
    again = train(engine(seed=7))
    assert torch.equal(again.model.weight, e.model.weight)  # reproducible: for experiments


# 10. a smaller batch size: the engine's is certified; a batch cut smaller in the loop is refused.
def test_smaller_batch_size():
    c = certified(train(engine(batch_size=32)), 3 * (N // 32), batch_size=32)
    assert c.run.batch_size == 32
    e = engine()
    for xb, yb, ib in e.data_loader():
        e.step((xb[:32], yb[:32], ib[:32]))
    refused(e, "step 1: its batch (32 records) is not the batch the engine's sampler drew for step 1 (64 records)")


# 11. drop_last=False: certified with the partial last batch charged; another loader's is refused.
def test_drop_last_false(baseline):
    e = train(engine(drop_last=False))
    assert sorted({entry.batch_size for entry in e.ledger}) == [N % B, B]
    assert [entry.normaliser for entry in e.ledger[:10]] == [B] * 9 + [N % B]
    c = certified(e, 30, drop_last=False)
    assert c.epsilon > baseline.epsilon
    e = engine()
    x, y = data()
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y, torch.arange(N)), batch_size=B,
                                         shuffle=True, drop_last=False)
    for batch in loader:
        e.step(batch)
    refused(e, "the engine's sampler drew no batch")


def test_an_optimizer_step_outside_the_engine():
    e = engine()
    opt = torch.optim.SGD(e.model.parameters(), lr=0.1)
    for i, (xb, yb, ib) in enumerate(e.data_loader()):
        e.step((xb, yb, ib))
        if i == 8:  # after the last engine step: found at certification
            opt.zero_grad()
            torch.nn.functional.softplus(-yb * e.model(xb)[:, 0]).mean().backward()
            opt.step()
    refused(e, "after step 9: the parameters changed outside the engine")


def test_poisson_and_opacus_mapping():
    # Opacus's make_private: clipping at C, noise std noise_multiplier C on the gradient sum,
    # Poisson batches: the engine's ledger gives the run hsdp.Run(noise_multiplier=..) states.
    x, y = data()
    e = ht.make_private(model(), x, y, loss="logistic", batch_size=B, noise_multiplier=1.1, max_grad_norm=1.0,
                        eta=0.5, adjacency="remove", release="every")
    for _ in range(2):
        for batch in e.data_loader():
            e.step(batch)
    assert len(e.ledger) == 2 * (N // B) and len({entry.batch_size for entry in e.ledger}) > 1
    c = e.certificate(DELTA)
    assert c.certified and c.adjacency == "remove" and "add/remove-one" in str(c)
    assert c.add_remove_epsilon is None
    run = hsdp.Run(n=N, steps=18, batch_size=B, sampling="poisson", eta=0.5, noise_std=0.5 * 1.1 / B, clip=1.0,
                   convex=False, dimension=P, release="every", adjacency="remove",
                   grid_slack=2 * 2.0 ** -32 * math.sqrt(P), grid_epsilon=2 * P * 18 * 2.0 ** -52,
                   grid_log_beta=math.log(P * 18) - 11000.0)
    r = hsdp.account(run, delta=DELTA)
    assert r.best is not None and c.epsilon == r.best.epsilon
    # make_private_with_epsilon under add/remove needs less noise than under replace-one
    kw = dict(loss="logistic", batch_size=B, target_epsilon=1.0, target_delta=DELTA, epochs=2, clip=1.0, eta=0.5,
              sampling="poisson", release="every")
    remove = ht.make_private_with_epsilon(model(), x, y, adjacency="remove", **kw)
    replace = ht.make_private_with_epsilon(model(), x, y, **kw)
    assert remove.noise_std < replace.noise_std


def test_bad_keywords_name_themselves():
    x, y = data()
    with pytest.raises(ValueError, match="loss = 'hinge'"):
        ht.PrivacyEngine(model(), x, y, loss="hinge", batch_size=B, noise_std=S, record_norm=L)
    with pytest.raises(ValueError, match="record_norm = None and clip = None"):
        ht.PrivacyEngine(model(), x, y, loss="logistic", batch_size=B, noise_std=S)
    with pytest.raises(ValueError, match=r"batch_size = 0: must be an integer in \[1, n = 600\]"):
        ht.PrivacyEngine(model(), x, y, loss="logistic", batch_size=0, noise_std=S, record_norm=L)
    with pytest.raises(TypeError, match="float64"):
        ht.PrivacyEngine(torch.nn.Linear(D, 1), x, y, loss="logistic", batch_size=B, noise_std=S, record_norm=L)


def test_softmax_and_squared_losses():
    x, y = data()
    labels = (x[:, 0] > 0).long() + (x[:, 1] > 0).long()
    m = torch.nn.Linear(D, 3).double()
    torch.nn.init.zeros_(m.weight)
    torch.nn.init.zeros_(m.bias)
    e = train(ht.PrivacyEngine(m, x, labels, loss="softmax", batch_size=B, noise_std=S, record_norm=L,
                               radius=RADIUS), epochs=1)
    c = e.certificate(DELTA)
    r = expected(9, lipschitz=math.sqrt(2) * L, smoothness=L * L / 2, eta=1.98 / (L * L / 2), dimension=3 * P,
                 grid_slack=2 * 2.0 ** -32 * math.sqrt(3 * P), grid_epsilon=2 * 3 * P * 9 * 2.0 ** -52,
                 grid_log_beta=math.log(3 * P * 9) - 11000.0)
    assert c.certified and c.epsilon == r.best.epsilon
    # per-example gradients: the engine's closed form against autograd, record by record
    xb, yb = x[:5], labels[:5]
    scores = e._per_example_scores(xb, yb)
    for i in range(5):
        m.zero_grad()
        torch.nn.functional.cross_entropy(m(xb[i:i + 1]), yb[i:i + 1]).backward()
        assert torch.allclose(m.weight.grad, scores[i][:, None] * xb[i][None, :], atol=1e-12)
        assert torch.allclose(m.bias.grad, scores[i], atol=1e-12)
    target = 0.5 * x[:, 0]
    e = train(ht.PrivacyEngine(model(), x, target, loss="squared", batch_size=B, noise_std=S, record_norm=L,
                               radius=1.0, label_bound=1.0), epochs=1)
    c = e.certificate(DELTA)
    r = expected(9, lipschitz=L * (L * 1.0 + 1.0), smoothness=L * L, eta=1.98 / (L * L), diameter=2.0)
    assert c.certified and c.epsilon == r.best.epsilon


def test_what_the_certificate_reads_is_fixed_at_construction():
    e = engine()
    for name, value in (("radius", None), ("batch_size", 32), ("lipschitz", 0.1), ("adjacency", "remove")):
        with pytest.raises(AttributeError, match="PrivacyEngine.%s is fixed when the engine is made" % name):
            setattr(e, name, value)


def test_an_empty_poisson_batch_is_a_step():
    x, y = data()
    e = ht.PrivacyEngine(model(), x, y, loss="logistic", batch_size=1, sampling="poisson", noise_std=S,
                         record_norm=L, radius=RADIUS)
    for _ in range(2):
        for batch in e.data_loader():
            e.step(batch)
    sizes = [entry.batch_size for entry in e.ledger]
    assert len(sizes) == 2 * N and 0 in sizes and all(entry.drawn for entry in e.ledger)
    c = e.certificate(DELTA)
    r = expected(2 * N, batch_size=1, sampling="poisson", drop_last=None)
    assert c.certified and c.epsilon == r.best.epsilon


def test_clipping_that_cannot_act_still_enforces_the_bound():
    # clip = 10 >= L: the run is certified with L, so records above R are refused
    with pytest.raises(ValueError, match="above record_norm = 1.41421"):
        engine(scaled=False, clip=10.0)
    e = train(engine(clip=10.0))
    assert not e.clipping_acts
    certified(e, 27)


def test_labels_are_checked():
    x, y = data()
    with pytest.raises(ValueError, match="needs labels -1 and \\+1"):
        ht.PrivacyEngine(model(), x, (y > 0).double(), loss="logistic", batch_size=B, noise_std=S, record_norm=L)


def test_fixed_size_batches():
    e = train(engine(sampling="fixed"), epochs=1)
    assert all(entry.batch_size == B and len(set(entry.indices)) == B for entry in e.ledger)
    certified(e, 9, sampling="fixed", drop_last=None)


# ----------------------------------------------------------------- issue 35: the engine vouches only for what it saw
def test_one_record_above_the_bound_is_refused_when_the_engine_is_made():
    # With small noise the gradients at the visited points can stay below L while a record is
    # above R: the bound is checked on the records themselves.
    x, y = data()
    x[17] = x[17] / torch.linalg.norm(x[17]) * 1.5      # |(x, 1)| = sqrt(3.25) > sqrt 2
    with pytest.raises(ValueError, match=r"x: record 17 has norm 1.80278 with the bias feature 1, above "
                                         r"record_norm = 1.41421 \(1 of 600 records are\)"):
        ht.PrivacyEngine(model(), x, y, loss="logistic", batch_size=B, noise_std=1e-3, record_norm=L)
    # at the bound exactly (rounding only): accepted
    x[17] = x[17] / torch.linalg.norm(x[17])
    ht.PrivacyEngine(model(), x, y, loss="logistic", batch_size=B, noise_std=1e-3, record_norm=L)


def test_the_engine_owns_its_records(baseline):
    x, y = data()
    e = ht.PrivacyEngine(model(), x, y, loss="logistic", batch_size=B, noise_std=S, record_norm=L, radius=RADIUS)
    for epoch in range(EPOCHS):
        for i, batch in enumerate(e.data_loader()):
            e.step(batch)
            if epoch == 1 and i == 2:
                x.mul_(100.0)           # the caller's tensors edited in place mid-run: harmless
                y.neg_()
                e.x.mul_(100.0)         # a copy: harmless too
    assert torch.equal(e.x, data()[0]) and torch.equal(e.y, data()[1])
    assert e.certificate(DELTA).epsilon == baseline.epsilon
    # the engine's own copy edited behind its back: refused (its digest is checked)
    e._x[0, 0] += 1.0
    refused(e, "the engine's records changed after it was made")


def test_the_ledger_is_sealed(baseline):
    e = train(engine())
    assert isinstance(e.ledger, tuple)
    assert not hasattr(e, "order")     # the order is the engine's: no draw from outside
    e._ledger.pop()                     # truncated
    refused(e, "the ledger is not the one the engine sealed (26 entries now")
    e = train(engine())
    object.__setattr__(e._ledger[3], "noise_std", 100 * S)   # an entry's noise edited
    refused(e, "the ledger's chain is broken at entry 4")
    e = train(engine())
    last = dataclasses.replace(e._ledger[-1], noise_std=100 * S)
    e._ledger[-1] = ht._with_digest(last, e._ledger[-2].digest)   # edited and re-chained: the seal differs
    refused(e, "the ledger is not the one the engine sealed")
    e = engine()
    for i, batch in enumerate(e.data_loader()):
        e.step(batch)
        if i == 1:
            e._order.next()             # a draw skipped behind the engine's back
    refused(e, "step 3: the engine's order was drawn outside the engine")


def test_resume_carries_the_ledger(baseline):
    first = train(engine(), epochs=1)
    buffer = io.BytesIO()
    torch.save({"model": first.model.state_dict(), "engine": first.state_dict()}, buffer)
    state = torch.load(io.BytesIO(buffer.getvalue()))
    assert hexkey(first) not in repr(state)        # the seal's key stays in memory
    m = model()
    m.load_state_dict(state["model"])
    x, y = data()
    resumed = ht.PrivacyEngine(m, x, y, loss="logistic", batch_size=B, noise_std=S, record_norm=L, radius=RADIUS)
    resumed.load_state_dict(state["engine"])
    train(resumed, epochs=EPOCHS - 1)
    c = certified(resumed, 27)                    # every step, the first engine's and this one's
    assert c.epsilon == baseline.epsilon
    assert [entry.segment for entry in resumed.ledger] == [0] * 9 + [1] * 18
    # a fresh engine on the trained weights certifies nothing: its steps would hide the first 9
    fresh = train(ht.PrivacyEngine(first.model, x, y, loss="logistic", batch_size=B, noise_std=S, record_norm=L,
                                   radius=RADIUS), epochs=2)
    refused(fresh, "step 1: the initial parameters are the output of step 9 of another engine")


def test_resume_refusals():
    first = train(engine(), epochs=1)
    state = first.state_dict()
    x, y = data()

    def again(m):
        return ht.PrivacyEngine(m, x, y, loss="logistic", batch_size=B, noise_std=S, record_norm=L, radius=RADIUS)
    with pytest.raises(ValueError, match="not those the ledger's last step \\(step 9\\) produced"):
        again(model()).load_state_dict(state)
    edited = dict(state, ledger=[dict(entry) for entry in state["ledger"]])
    edited["ledger"][2]["noise_std"] = 100 * S
    with pytest.raises(ValueError, match="chain is broken at entry 3"):
        again(first.model).load_state_dict(edited)
    with pytest.raises(ValueError, match=r"noise_std = 0.1 differs from the earlier engine's 0.61861"):
        ht.PrivacyEngine(first.model, x, y, loss="logistic", batch_size=B, noise_std=0.1, record_norm=L,
                         radius=RADIUS).load_state_dict(state)
    with pytest.raises(ValueError, match=r"batch_size 32, earlier 64"):
        ht.PrivacyEngine(first.model, x, y, loss="logistic", batch_size=32, noise_std=S, record_norm=L,
                         radius=RADIUS).load_state_dict(state)
    e = engine()
    for i, batch in enumerate(e.data_loader()):
        if i == 4:
            break
        e.step(batch)
    with pytest.raises(ValueError, match="4 steps is not a whole number of epochs"):
        again(e.model).load_state_dict(e.state_dict())


def test_a_module_beyond_the_linear_model_is_refused():
    class Scaled(torch.nn.Linear):
        def __init__(self) -> None:
            super().__init__(D, 1)
            self.register_buffer("mean", torch.zeros(D, dtype=torch.float64))

    x, y = data()
    with pytest.raises(TypeError, match="exactly a torch.nn.Linear"):
        ht.PrivacyEngine(Scaled().double(), x, y, loss="logistic", batch_size=B, noise_std=S, record_norm=L)
    e = train(engine(), epochs=1)
    e.model.register_buffer("mean", x.mean(dim=0))   # fitted on the records after the engine was made
    refused(e, "the model holds buffers mean beyond the linear model's weight and bias")


def test_early_stop_is_declared():
    def planned():
        x, y = data()
        return ht.make_private_with_epsilon(model(), x, y, loss="logistic", batch_size=B, target_epsilon=1.0,
                                            target_delta=DELTA, epochs=EPOCHS, record_norm=L, radius=RADIUS)
    e = train(planned(), epochs=1)
    assert e.planned_steps == 27
    e.stop_early("train accuracy above 0.9")       # reads the records: no analysis charges the stop
    refused(e, "stopped at step 9 by a rule that reads the training records (train accuracy above 0.9)")
    e = train(planned(), epochs=1)
    e.stop_early("validation accuracy on public data", reads_records=False)
    c = e.certificate(DELTA)
    r = expected(27, release="every", noise_std=e.noise_std)
    assert c.certified and c.epsilon == r.best.epsilon and c.run.steps == 27 and c.run.release == "every"
    assert "every-iterate composition of the planned 27 steps" in str(c)
    e.step(next(iter(e.data_loader())))
    refused(e, "step 10: taken after the stop declared at step 9")
    # no planned T: refused
    e = train(engine(), epochs=1)
    e.stop_early("public validation", reads_records=False)
    refused(e, "state planned_steps when the engine is made")
    # an undeclared stop before the planned steps: it may have read the data, so no certificate
    e = train(planned(), epochs=1)
    refused(e, "9 steps taken of the planned 27, and no stopping rule declared", "stop_early(")


def test_post_processing_and_leaving_an_epoch_early_are_not_refused(baseline):
    e = train(engine())
    e.model.eval()
    e.model.float()                               # a cast after the last step
    assert e.certificate(DELTA).epsilon == baseline.epsilon
    with pytest.raises(TypeError, match="float64"):
        e.step(next(iter(e.data_loader())))
    # DataLoader workers fetch ahead; the loop leaves each epoch after 4 steps
    e = engine()
    for _ in range(2):
        for i, batch in enumerate(e.data_loader(num_workers=2)):
            e.step(batch)
            if i == 3:
                break
    assert [entry.drawn for entry in e.ledger] == [True] * 8
    certified(e, 8)


def test_settable_attributes_are_validated():
    e = engine()
    for value in (float("nan"), -1.0, float("inf")):
        with pytest.raises(ValueError, match="noise_std = .*: must be a finite number >= 0"):
            e.noise_std = value
        with pytest.raises(ValueError, match="eta = .*: must be a positive finite number"):
            e.eta = value
    with pytest.raises(TypeError, match="keyword 'noise_std' expects float, got str"):
        e.noise_std = "0.5"
    assert e.noise_std == S


def test_arguments_go_through_one_validator():
    x, y = data()
    kw = dict(loss="logistic", noise_std=S, record_norm=L)
    e = ht.PrivacyEngine(model(), x[:40], y[:40], batch_size=np.int64(8), **kw)
    assert e.batch_size == 8 and type(e.batch_size) is int
    with pytest.raises(TypeError, match=r"PrivacyEngine\(\): keyword 'noise_std' expects float, got str \('0.5'\)"):
        ht.PrivacyEngine(model(), x, y, loss="logistic", batch_size=B, noise_std="0.5", record_norm=L)
    with pytest.raises(TypeError, match=r"keyword 'record_norm' expects Optional\[float\], got bool \(True\)"):
        ht.PrivacyEngine(model(), x, y, loss="logistic", batch_size=B, noise_std=S, record_norm=True)
    with pytest.raises(TypeError, match=r"keyword 'batch_size' expects int, got float \(8.0\)"):
        ht.PrivacyEngine(model(), x, y, batch_size=8.0, **kw)
    with pytest.raises(ValueError, match=r"epochs = -1: must be an integer >= 1"):
        e.steps_for(-1)
    with pytest.raises(ValueError, match=r"delta = 2.0: must be a number in \(0, 1\)"):
        e.certificate(2.0)
    with pytest.raises(TypeError, match=r"make_private\(\): keyword 'noise_multiplier' expects float, got str"):
        ht.make_private(model(), x, y, loss="logistic", batch_size=B, noise_multiplier="1", max_grad_norm=1.0, eta=0.5)
    with pytest.raises(ValueError, match=r"target_epsilon = -1.0: must be a positive finite number"):
        ht.make_private_with_epsilon(model(), x, y, loss="logistic", batch_size=B, target_epsilon=-1.0,
                                     target_delta=DELTA, epochs=1, record_norm=L)
    assert ht.PrivacyEngine(model(), x, y, loss="logistic", batch_size=B, noise_std=np.float32(0.5),
                            record_norm=np.array(L)).record_norm == pytest.approx(L)


def hexkey(e):
    return e._key.hex()
