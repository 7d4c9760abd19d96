"""The training benchmarks' models (bench/models.py): the singa and torch
versions have the same structure, so with the same initial weights a few
training steps (forward, backward, SGD momentum 0.9) give the same losses,
in eager and in graph mode. Small inputs keep this fast."""
import os
import sys

import numpy as np
import pytest
import torch

from singa import autograd, tensor

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
import models  # noqa: E402

# NOTE: float32 through different convolution/BN kernels (oneDNN vs torch's),
# a few dozen layers deep, then a 1000-way softmax; steps 2 and 3 also carry
# the rounding of the update. rtol 1e-3 is the brief's tolerance.
RTOL = 1e-3
# NOTE: two steps: the loss of the first checks the forward, the second the
# backward and the update. Later steps are not a fair comparison: from random
# weights on random data, MobileNet-V2's losses in torch float32 and torch
# float64 already differ by ~1% at the third step (measured at batch 2-8,
# 32-96 pixels), and by 1e-4 at the second at batch 4 and 96x96 (1e-3 at
# batch 2 and 64x64, too close to RTOL; hence its larger input).
STEPS = 2


@pytest.fixture(autouse=True)
def _restore_mode():
    yield
    autograd.training = False


@pytest.mark.parametrize("use_graph", [False, True], ids=["eager", "graph"])
@pytest.mark.parametrize("name,batch,hw", [("cnn", 8, None), ("resnet18", 2, 64),
                                           ("mobilenetv2", 4, 96)])
def test_training_steps_match_torch(name, batch, hw, use_graph):
    torch.set_num_threads(2)
    _, ref = models.build(name)
    x, y = models.data(name, batch, hw)
    tx, ty = models.singa_inputs(x, y)
    ours = models.singa_model(name, tx, lr=0.001, use_graph=use_graph, ref=ref)
    assert not tx.requires_grad
    n_params = len(ours.get_params())
    assert n_params == len(list(ref.parameters()))
    step = models.torch_step_fn(ref, torch.from_numpy(x), torch.from_numpy(y), lr=0.001)
    for i in range(STEPS):
        _, loss = ours(tx, ty)
        expect = float(step().detach())
        got = float(tensor.to_numpy(loss).reshape(-1)[0])
        assert np.isfinite(got)
        np.testing.assert_allclose(got, expect, rtol=RTOL, err_msg=f"{name} step {i}")


# NOTE: per parameter, max |singa update - torch update| / max |torch update|
# after the first step. With lr 1 the first SGD-momentum update is the
# gradient itself, large enough that float32 rounding of the parameters does
# not hide it (at lr 1e-3 that rounding alone gave 3e-3 for BN scales). The
# differences left are float32 summation order through ~20 layers: at most
# 2.7e-5 over ~70 fresh processes (eager and graph, gradients and updates,
# whatever convolution layouts the timing picked or each one forced, 1 and 2
# threads, on a loaded machine); 1e-3 keeps a 37x margin and
# still fails on a corruption such as the 3% error in one conv's dW reported
# once for layer4_0.conv2.
GRAD_TOL = 1e-3


@pytest.mark.parametrize("use_graph", [False, True], ids=["eager", "graph"])
def test_resnet18_first_step_gradients_match_torch(use_graph):
    torch.set_num_threads(2)
    _, ref = models.build("resnet18")
    x, y = models.data("resnet18", 2, 64)
    tx, ty = models.singa_inputs(x, y)
    ours = models.singa_model("resnet18", tx, lr=1.0, use_graph=use_graph, ref=ref)
    before = {k: tensor.to_numpy(v).copy() for k, v in ours.get_params().items()}
    theirs = dict(ref.named_parameters())
    theirs_before = {k: v.detach().numpy().copy() for k, v in theirs.items()}
    step = models.torch_step_fn(ref, torch.from_numpy(x), torch.from_numpy(y), lr=1.0)
    ours(tx, ty)
    step()
    errors = {}
    for k, v in ours.get_params().items():
        tk = models.torch_name(k)
        got = before[k] - tensor.to_numpy(v)
        want = theirs_before[tk] - theirs[tk].detach().numpy()
        if got.shape != want.shape:  # Linear: singa holds W as [in, out]
            got = got.T
        assert np.all(np.isfinite(got)), k
        errors[k] = float(np.abs(got - want).max() / max(float(np.abs(want).max()), 1e-30))
    worst = max(errors, key=errors.get)
    assert errors[worst] < GRAD_TOL, f"{worst}: {errors[worst]:.2e}"


def test_names_map_one_to_one():
    for name in models.MODELS:
        ours, ref = models.build(name)
        x, y = models.data(name, 2, 32 if name != "cnn" else None)
        tx, _ = models.singa_inputs(x, y)
        ours.compile([tx], is_train=False)
        mapped = {models.torch_name(k) for k in ours.get_states()}
        want = {k for k in ref.state_dict() if not k.endswith("num_batches_tracked")}
        assert mapped == want, name
