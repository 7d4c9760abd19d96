"""Optimizers and schedulers, step by step against torch.optim on the same
parameters and gradients (torch is an oracle only)."""
import math

import numpy as np
import pytest
import torch

from singa import opt, tensor

STEPS = 6
# NOTE: float32 updates; torch orders the same operations slightly
# differently (e.g. addcdiv), so values agree to a few float32 ulps per step.
RTOL, ATOL = 2e-5, 1e-6


def _run_pair(make_ours, make_torch, shapes=((4, 3), (5,)), dtype=np.float32):
    rng = np.random.default_rng(7)
    init = [rng.standard_normal(s).astype(dtype) for s in shapes]
    grads = [[rng.standard_normal(s).astype(dtype) for s in shapes] for _ in range(STEPS)]
    ours = [tensor.Tensor(data=a, dtype=tensor.float64 if dtype == np.float64 else tensor.float32,
                          stores_grad=True, name=f"p{i}") for i, a in enumerate(init)]
    theirs = [torch.nn.Parameter(torch.from_numpy(a.copy())) for a in init]
    o, t = make_ours(), make_torch(theirs)
    for step in range(STEPS):
        for p, q, g in zip(ours, theirs, grads[step]):
            o.update(p, tensor.Tensor(data=g, dtype=p.dtype))
            q.grad = torch.from_numpy(g.copy())
        o.step()
        t.step()
        for p, q in zip(ours, theirs):
            np.testing.assert_allclose(tensor.to_numpy(p), q.detach().numpy(), rtol=RTOL,
                                       atol=ATOL, err_msg=f"step {step}")
    return o, ours


@pytest.mark.parametrize("kw", [
    dict(lr=0.1),
    dict(lr=0.05, momentum=0.9),
    dict(lr=0.05, momentum=0.9, dampening=0.3),
    dict(lr=0.05, momentum=0.9, weight_decay=0.01),
    dict(lr=0.05, momentum=0.8, nesterov=True, weight_decay=1e-3),
], ids=lambda kw: "-".join(f"{k}{v}" for k, v in kw.items()))
def test_sgd(kw):
    _run_pair(lambda: opt.SGD(**kw), lambda ps: torch.optim.SGD(ps, **kw))


@pytest.mark.parametrize("wd", [0.0, 0.01])
def test_rmsprop(wd):
    _run_pair(lambda: opt.RMSProp(lr=0.01, rho=0.9, epsilon=1e-6, weight_decay=wd),
              lambda ps: torch.optim.RMSprop(ps, lr=0.01, alpha=0.9, eps=1e-6, weight_decay=wd))


@pytest.mark.parametrize("wd", [0.0, 0.01])
def test_adagrad(wd):
    _run_pair(lambda: opt.AdaGrad(lr=0.1, epsilon=1e-8, weight_decay=wd),
              lambda ps: torch.optim.Adagrad(ps, lr=0.1, eps=1e-8, weight_decay=wd))


@pytest.mark.parametrize("wd", [0.0, 0.01])
def test_adam(wd):
    _run_pair(lambda: opt.Adam(lr=0.01, beta_1=0.8, beta_2=0.99, epsilon=1e-7, weight_decay=wd),
              lambda ps: torch.optim.Adam(ps, lr=0.01, betas=(0.8, 0.99), eps=1e-7,
                                          weight_decay=wd))


def test_float64_parameters():
    _run_pair(lambda: opt.Adam(lr=0.01), lambda ps: torch.optim.Adam(ps, lr=0.01),
              dtype=np.float64)


def test_exponential_decay_matches_torch_schedule():
    sched = opt.ExponentialDecay(0.1, decay_steps=1, decay_rate=0.5)
    _run_pair(lambda: opt.SGD(lr=sched, momentum=0.9),
              lambda ps: _WithScheduler(torch.optim.SGD(ps, lr=0.1, momentum=0.9), 0.5))


class _WithScheduler:
    def __init__(self, o, gamma):
        self.o, self.s = o, torch.optim.lr_scheduler.ExponentialLR(o, gamma)

    def step(self):
        self.o.step()
        self.s.step()


def test_schedulers():
    assert opt.Constant(0.3)(1000) == pytest.approx(0.3)
    d = opt.ExponentialDecay(0.1, decay_steps=10, decay_rate=0.5)
    assert d(5) == pytest.approx(0.1 * 0.5 ** 0.5)
    s = opt.ExponentialDecay(0.1, decay_steps=10, decay_rate=0.5, staircase=True)
    assert s(15) == pytest.approx(0.05) and s(9) == pytest.approx(0.1)
    sgd = opt.SGD(lr=d)
    assert sgd.lr_value == pytest.approx(0.1)
    sgd.step()
    sgd.step()
    assert sgd.step_counter == 2 and sgd.lr_value == pytest.approx(d(2))
    with pytest.raises(RuntimeError, match="decay_steps"):
        opt.ExponentialDecay(0.1, 0, 0.5)


def test_states_round_trip_continues_identically():
    """get_states after 3 steps, set_states into a fresh optimizer: both
    continue with the same updates."""
    def make():
        return opt.Adam(lr=0.01)
    o1, ps1 = _run_pair(make, lambda ps: torch.optim.Adam(ps, lr=0.01))
    states = o1.get_states()
    assert {"step", "p0:m", "p0:v", "p0:count", "p1:m"} <= set(states)
    assert int(tensor.to_numpy(states["step"])) == STEPS
    o2 = make()
    o2.set_states(states)  # parameters not seen yet: kept until their first update
    ps2 = [tensor.Tensor(data=tensor.to_numpy(p).copy(), stores_grad=True, name=p.name)
           for p in ps1]
    g = [tensor.Tensor(data=np.full(p.shape, 0.5, np.float32)) for p in ps1]
    for o, ps in ((o1, ps1), (o2, ps2)):
        for p, gi in zip(ps, g):
            o.update(p, gi)
    for a, b in zip(ps1, ps2):
        np.testing.assert_array_equal(tensor.to_numpy(a), tensor.to_numpy(b))


def test_bad_input():
    sgd = opt.SGD(lr=0.1)
    p = tensor.Tensor((3,), stores_grad=True, name="w")
    with pytest.raises(ValueError, match="does not match parameter 'w'"):
        sgd.update(p, tensor.Tensor((4,)))
    with pytest.raises(ValueError, match="float32 and float64"):
        sgd.update(tensor.Tensor((3,), dtype=tensor.int32, stores_grad=True),
                   tensor.Tensor((3,), dtype=tensor.int32))
    with pytest.raises(RuntimeError, match="nesterov"):
        opt.SGD(lr=0.1, nesterov=True)
    assert math.isfinite(sgd.lr_value)
