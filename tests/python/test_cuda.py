"""singa on a CUDA GPU, from Python: SINGA's ONNX page's device calls, tensors to
and from numpy, ops and autograd, models (an MLP, a CNN) trained with the
layers and an optimizer, the same losses as on the CPU. Skipped without a GPU."""
import numpy as np
import pytest

from singa import autograd, device, layer, model, opt, tensor

pytestmark = pytest.mark.skipif(device.get_num_gpus() == 0, reason="no GPU on this machine")


def test_tensors_move_between_numpy_host_and_gpu():
    dev = device.create_cuda_gpu()
    assert dev.type == device.DeviceType.cuda
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = tensor.from_numpy(a, dev)
    assert t.device == dev
    np.testing.assert_array_equal(tensor.to_numpy(t), a)
    t.to_host()
    assert t.device == device.get_default_device()
    t.to_device(dev)
    np.testing.assert_array_equal(tensor.to_numpy(t.transpose()), a.T)


def test_ops_and_gradients_match_the_cpu():
    dev = device.create_cuda_gpu()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 5)).astype(np.float32)
    w = rng.standard_normal((5, 3)).astype(np.float32)

    def run(d):
        tx = tensor.from_numpy(x, d)
        tw = tensor.from_numpy(w, d)
        tw.requires_grad = tw.stores_grad = True
        autograd.training = True
        try:
            y = autograd.softmax(autograd.relu(autograd.matmul(tx, tw)))
            loss = autograd.mse_loss(y, tensor.from_numpy(np.zeros((4, 3), np.float32), d))
            [(_, g)] = list(autograd.backward(loss))
        finally:
            autograd.training = False
        return tensor.to_numpy(y), tensor.to_numpy(g)

    (y_cpu, g_cpu), (y_gpu, g_gpu) = run(device.get_default_device()), run(dev)
    np.testing.assert_allclose(y_gpu, y_cpu, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(g_gpu, g_cpu, rtol=1e-4, atol=1e-6)


class MLP(model.Model):
    def __init__(self):
        super().__init__()
        self.l1 = layer.Linear(16)
        self.relu = layer.ReLU()
        self.l2 = layer.Linear(4)

    def forward(self, x):
        return self.l2(self.relu(self.l1(x)))

    def train_one_batch(self, x, y):
        out = self.forward(x)
        loss = autograd.softmax_cross_entropy(out, y)
        self.optimizer.backward_and_update(loss)
        return out, loss

    def set_optimizer(self, optimizer):
        self.optimizer = optimizer


class CNN(MLP):
    """Convolution, batch normalization and pooling: cuDNN on the GPU."""

    def __init__(self):
        super().__init__()
        self.conv = layer.Conv2d(6, 3, padding=1)
        self.bn = layer.BatchNorm2d()
        self.pool = layer.MaxPool2d(2, 2)
        self.flat = layer.Flatten()

    def forward(self, x):
        x = self.pool(self.relu(self.bn(self.conv(x))))
        return super().forward(self.flat(x))


@pytest.mark.parametrize("graph", [False, True])
@pytest.mark.parametrize("net, shape", [(MLP, (32, 8)), (CNN, (32, 3, 8, 8))])
def test_model_trains_with_the_cpus_losses(graph, net, shape):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape).astype(np.float32)
    y = (np.arange(32) % 4).astype(np.int32)

    def losses(d):
        d.SetRandSeed(0)
        m = net()
        m.set_optimizer(opt.SGD(lr=0.1, momentum=0.9))
        tx, ty = tensor.from_numpy(x, d), tensor.from_numpy(y, d)
        m.compile([tx], is_train=True, use_graph=graph, sequential=False)
        # The same initial parameters on both devices.
        init = np.random.default_rng(2)
        for _, p in sorted(m.get_params().items()):
            p.copy_from_numpy(init.standard_normal(p.shape).astype(np.float32) * 0.3)
        return [float(tensor.to_numpy(m(tx, ty)[1]).item()) for _ in range(10)]

    cpu, gpu = losses(device.get_default_device()), losses(device.create_cuda_gpu())
    np.testing.assert_allclose(gpu, cpu, rtol=1e-4)
    assert gpu[-1] < gpu[0]


def _onnx_cnn():
    """A small ONNX model as exporters write it: Conv, BatchNormalization,
    Clip (ReLU6), MaxPool, GlobalAveragePool, Flatten, LayerNormalization,
    Gemm, Softmax."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(3)

    def init(name, *shape, scale=0.3):
        return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32),
                                       name)

    var = numpy_helper.from_array(rng.uniform(0.5, 1.5, 4).astype(np.float32), "var")
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c", "s", "bb", "m", "var"], ["n"]),
        helper.make_node("Clip", ["n", "lo", "hi"], ["r"]),
        helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("GlobalAveragePool", ["p"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"]),
        helper.make_node("LayerNormalization", ["f", "ls", "lb"], ["l"]),
        helper.make_node("Gemm", ["l", "fw", "fb"], ["z"], transB=1),
        helper.make_node("Softmax", ["z"], ["y"], axis=-1),
    ]
    inits = [init("w", 4, 3, 3, 3), init("b", 4), init("s", 4), init("bb", 4), init("m", 4),
             var, numpy_helper.from_array(np.float32(0), "lo"),
             numpy_helper.from_array(np.float32(6), "hi"), init("ls", 4), init("lb", 4),
             init("fw", 5, 4), init("fb", 5)]
    graph = helper.make_graph(
        nodes, "cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 5])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_onnx_model_runs_on_the_gpu_as_on_the_cpu():
    from singa import sonnx

    model = _onnx_cnn()
    x = np.random.default_rng(4).standard_normal((2, 3, 8, 8)).astype(np.float32)
    want = sonnx.prepare(model, device="CPU").run([x])[0]
    rep = sonnx.prepare(model, device="CUDA")
    for _ in range(3):  # the plan's build, then its replays
        np.testing.assert_allclose(tensor.to_numpy(rep.run([x])[0]), tensor.to_numpy(want),
                                   rtol=1e-4, atol=1e-6)
