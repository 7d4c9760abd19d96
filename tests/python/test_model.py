"""Model: compile, train/eval, graph mode (capture once, replay natively,
same numbers as eager), the memory plan, and save/load of states."""
import os

import numpy as np
import pytest

from singa import autograd, device, layer, model, opt, tensor


class MLP(model.Model):
    def __init__(self, hidden=16, classes=4, dropout=0.0):
        super().__init__()
        self.fc1 = layer.Linear(hidden)
        self.relu = layer.ReLU()
        self.drop = layer.Dropout(dropout)
        self.fc2 = layer.Linear(classes)

    def forward(self, x):
        return self.fc2(self.drop(self.relu(self.fc1(x))))

    # SINGA's ONNX page's signature: extra non-tensor arguments are fixed at capture.
    def train_one_batch(self, x, y, dist_option="fp32", spars=None):
        out = self.forward(x)
        loss = autograd.softmax_cross_entropy(out, y)
        if dist_option == "fp32":
            self.optimizer.backward_and_update(loss)
        return out, loss

    def set_optimizer(self, optimizer):
        self.optimizer = optimizer


def _data(n=32, d=8, classes=4, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d)).astype(np.float32)
    y = (x[:, :classes].argmax(1)).astype(np.int32)
    return x, y


def _train(use_graph, steps=8, make_opt=lambda: opt.SGD(lr=0.1, momentum=0.9), seed=0):
    device.get_default_device().SetRandSeed(seed)
    x, y = _data()
    m = MLP()
    m.set_optimizer(make_opt())
    tx, ty = tensor.Tensor(data=x), tensor.Tensor(data=y, dtype=tensor.int32)
    m.compile([tx], is_train=True, use_graph=use_graph)
    losses = []
    for i in range(steps):
        xb = np.roll(x, i, axis=0)
        yb = np.roll(y, i, axis=0)
        tx.copy_from_numpy(xb)
        ty.copy_from_numpy(yb)
        out, loss = m(tx, ty, "fp32", None)
        losses.append(float(tensor.to_numpy(loss)[0]))
    return m, losses, out


@pytest.mark.parametrize("make_opt", [lambda: opt.SGD(lr=0.1, momentum=0.9, nesterov=True),
                                      lambda: opt.Adam(lr=0.01),
                                      lambda: opt.RMSProp(lr=0.01),
                                      lambda: opt.AdaGrad(lr=0.1)],
                         ids=["sgd", "adam", "rmsprop", "adagrad"])
def test_graph_and_eager_give_the_same_numbers(make_opt):
    m1, l1, o1 = _train(False, make_opt=make_opt)
    m2, l2, o2 = _train(True, make_opt=make_opt)
    assert l1[-1] < l1[0]
    np.testing.assert_array_equal(l1, l2)
    np.testing.assert_array_equal(tensor.to_numpy(o1), tensor.to_numpy(o2))
    for (k, a), (k2, b) in zip(m1.get_params().items(), m2.get_params().items()):
        assert k == k2
        np.testing.assert_array_equal(tensor.to_numpy(a), tensor.to_numpy(b), err_msg=k)


def test_graph_replays_without_python_and_plans_memory():
    m, _, _ = _train(True, steps=3)
    step, = m.captured_steps()
    assert step.captured and step.num_ops > 10
    # The arena holds every intermediate of the step; blocks that are never
    # alive together share it, so it is smaller than their sum.
    x, y = _data()
    calls = []
    m.train_one_batch = lambda *a: calls.append(a)  # replay must not run Python
    tx, ty = tensor.Tensor(data=x), tensor.Tensor(data=y, dtype=tensor.int32)
    out, loss = m(tx, ty, "fp32", None)
    assert calls == []
    assert 0 < step.arena_bytes


def test_graph_mode_captures_one_step_per_signature():
    m, _, _ = _train(True, steps=2, make_opt=lambda: opt.SGD(lr=0.0))  # lr 0: weights stay
    x, y = _data()
    m.eval()
    full = tensor.to_numpy(m(tensor.Tensor(data=x))).copy()
    part = m(tensor.Tensor(data=x[:5]))  # another shape: captured anew
    np.testing.assert_allclose(tensor.to_numpy(part), full[:5], rtol=1e-6)
    again = m(tensor.Tensor(data=x[5:10]))  # replayed into a tensor of its own
    assert again is not part
    np.testing.assert_allclose(tensor.to_numpy(again), full[5:10], rtol=1e-6)
    np.testing.assert_allclose(tensor.to_numpy(part), full[:5], rtol=1e-6)
    assert m.num_captured_steps == 3  # train, eval [32, 8], eval [5, 8]


@pytest.mark.parametrize("graph", [False, True])
def test_results_keep_their_values_when_the_step_runs_again(graph):
    """A loss history read step by step, as numpy views and as Tensors: a
    replayed step writes its own tensors, never those handed out before."""
    device.get_default_device().SetRandSeed(0)
    x, y = _data()
    m = MLP()
    m.set_optimizer(opt.SGD(lr=0.1))
    tx, ty = tensor.Tensor(data=x), tensor.Tensor(data=y, dtype=tensor.int32)
    m.compile([tx], is_train=True, use_graph=graph)
    views, results = [], []
    for _ in range(4):
        out, loss = m(tx, ty)
        views.append(tensor.to_numpy(loss))
        results.append((out, loss, float(views[-1][0]), tensor.to_numpy(out).copy()))
    losses = [r[2] for r in results]
    assert all(a > b for a, b in zip(losses, losses[1:])), losses
    assert [float(v[0]) for v in views] == losses
    for out, loss, value, out_then in results:
        assert float(tensor.to_numpy(loss)[0]) == value
        np.testing.assert_array_equal(tensor.to_numpy(out), out_then)
    assert len({id(r[1]) for r in results}) == 4


def test_compile_names_and_modes():
    m = MLP()
    m.set_optimizer(opt.SGD(lr=0.1))
    m.compile([tensor.PlaceHolder((2, 8))], is_train=False)
    assert [p.name for p in m.get_params().values()] == ["fc1.W", "fc1.b", "fc2.W", "fc2.b"]
    assert autograd.training is False
    out = m(tensor.Tensor(data=np.ones((2, 8), np.float32)))
    # Eval records the structure (for the export), nothing for backward.
    assert out.shape == (2, 4) and out.creator == "Gemm" and not out.requires_grad
    m.train()
    assert autograd.training is True and m.training
    m.eval()


def test_dropout_follows_the_mode():
    x = tensor.Tensor(data=np.ones((64, 64), np.float32))
    d = layer.Dropout(0.5)
    autograd.training = False
    np.testing.assert_array_equal(tensor.to_numpy(d(x)), 1.0)
    autograd.training = True
    y = tensor.to_numpy(d(x))
    assert set(np.unique(y)) <= {0.0, 2.0} and 0.3 < (y == 0).mean() < 0.7
    autograd.training = False


def test_save_and_load_states(tmp_path):
    m, _, _ = _train(False, steps=2)
    path = tmp_path / "mlp.states"
    aux = {"epoch": np.array([3], np.int64), "note": tensor.Tensor(data=np.ones(2, np.float32))}
    m.save_states(path, aux)
    m2 = MLP()
    m2.compile([tensor.PlaceHolder((2, 8))], is_train=False)
    got = m2.load_states(path)
    assert int(tensor.to_numpy(got["epoch"])[0]) == 3 and set(got) == {"epoch", "note"}
    for k, v in m.get_states().items():
        np.testing.assert_array_equal(tensor.to_numpy(v), tensor.to_numpy(m2.get_states()[k]))

    other = MLP(hidden=5)
    other.compile([tensor.PlaceHolder((2, 8))], is_train=False)
    with pytest.raises(OSError, match=r"fc1\.W: the model has float32\[8,5\], the file"):
        other.load_states(path)


def test_interrupted_save_keeps_the_previous_file(tmp_path):
    m, _, _ = _train(False, steps=1)
    path = tmp_path / "mlp.states"
    m.save_states(path)
    before = path.read_bytes()
    bad = {"names": tensor.from_numpy(np.array(["a", "b"], dtype=object))}
    with pytest.raises(ValueError, match="string"):
        m.save_states(path, bad)  # fails half-way through writing
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["mlp.states"]


@pytest.mark.parametrize("content", [b"", b"SINGAST1", b"not a states file at all",
                                     b"SINGAST1\x05\x00\x00\x00\x00\x00\x00\x00\xff\xff"])
def test_corrupt_states_file(tmp_path, content):
    path = tmp_path / "bad.states"
    path.write_bytes(content)
    m = MLP()
    m.compile([tensor.PlaceHolder((2, 8))], is_train=False)
    with pytest.raises(OSError, match="bad.states"):
        m.load_states(path)
    with pytest.raises(OSError, match="cannot open"):
        m.load_states(tmp_path / "missing.states")


def test_seed_retraining_snippet_runs_with_a_layer_model():
    """SINGA's ONNX page's re-training code, with a model built from layers in
    place of SONNXModel and the CPU device in place of CUDA."""
    from singa import device as _device

    class MyModel(model.Model):

        def __init__(self):
            super(MyModel, self).__init__()
            self.conv = layer.Conv2d(4, 3, padding=1)
            self.flat = layer.Flatten()
            self.linear = layer.Linear(3)

        def forward(self, *x):
            y = self.linear(self.flat(autograd.relu(self.conv(x[0]))))
            return y

        def train_one_batch(self, x, y, dist_option, spars):
            out = self.forward(x)
            loss = autograd.softmax_cross_entropy(out, y)
            if dist_option == 'fp32':
                self.optimizer.backward_and_update(loss)
            return out, loss

        def set_optimizer(self, optimizer):
            self.optimizer = optimizer

    dev = _device.create_cpu_device()
    rng = np.random.default_rng(5)
    data = rng.standard_normal((8, 2, 6, 6)).astype(np.float32)
    labels = (data.mean(axis=(1, 2, 3)) > 0).astype(np.int32) + 1
    for graph in (False, True):
        model_ = MyModel()
        tx = tensor.Tensor((8, 2, 6, 6), dev)
        ty = tensor.Tensor((8,), dev, tensor.int32)
        sgd = opt.SGD(lr=0.005, momentum=0.9, weight_decay=1e-5)
        model_.set_optimizer(sgd)
        model_.compile([tx], is_train=True, use_graph=graph, sequential=True)
        tx.copy_from_numpy(data)
        ty.copy_from_numpy(labels)
        losses = [float(tensor.to_numpy(model_(tx, ty, 'fp32', None)[1])[0]) for _ in range(20)]
        assert losses[-1] < losses[0]


class _Clipper(model.Model):
    """Builds constants from numpy inside the step (Clip bounds, a Reshape
    shape): in graph mode they must hold their values at capture and replay."""

    def __init__(self):
        super().__init__()
        self.fc = layer.Linear(6)

    def forward(self, x):
        y = autograd.clip(self.fc(x), 0.0, 0.5)
        return autograd.reshape(y, (x.shape[0], 2, 3))

    def train_one_batch(self, x, y):
        out = self.forward(x)
        loss = autograd.mse_loss(out, y)
        self.optimizer.backward_and_update(loss)
        return out, loss


def test_graph_mode_keeps_host_constants_made_inside_the_step():
    rng = np.random.default_rng(6)
    x = rng.standard_normal((4, 5)).astype(np.float32)
    t = rng.random((4, 2, 3)).astype(np.float32) * 0.5
    results = []
    for graph in (False, True):
        device.get_default_device().SetRandSeed(1)
        m = _Clipper()
        m.optimizer = opt.SGD(lr=0.1)
        tx, ty = tensor.Tensor(data=x), tensor.Tensor(data=t)
        m.compile([tx], is_train=True, use_graph=graph)
        results.append([float(tensor.to_numpy(m(tx, ty)[1])[0]) for _ in range(4)])
    np.testing.assert_array_equal(results[0], results[1])
