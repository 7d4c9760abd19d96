"""The training benchmarks' models, each defined twice with the same
structure: with singa's layer API and with torch.nn.

    from models import build, copy_weights, singa_step, torch_step
    ours, ref = build("resnet18")                  # singa model.Model, torch nn.Module
    ours.compile([tx], is_train=True, use_graph=True)
    copy_weights(ref, ours)                        # torch's initial weights into singa

The architectures are torchvision's: ResNet-18 (BasicBlock, batch norm,
1000 classes) and MobileNet-V2 (inverted residuals, ReLU6 = Clip(0, 6),
depthwise convolutions; the classifier's Dropout(0.2) is left out so that
both frameworks compute the same numbers), plus a small CNN for 1x8x8
digits. Attribute names are the same in both versions, so a parameter's
dotted name matches up to the suffix: singa's Conv/Linear "W"/"b" are
torch's "weight"/"bias" (Linear's W is transposed: singa computes x W),
BatchNorm's "scale" is torch's "weight". singa's BatchNorm momentum 0.9
(ONNX: the weight of the old running value) is torch's 0.1.
"""
from __future__ import annotations

import numpy as np
import torch
import torch.nn as tnn
import torch.nn.functional as F

from singa import autograd, layer, model, opt, tensor

# ---- singa ------------------------------------------------------------------


class _SingaModel(model.Model):
    def train_one_batch(self, x, y):
        out = self.forward(x)
        loss = autograd.softmax_cross_entropy(out, y)
        self.optimizer.backward_and_update(loss)
        return out, loss

    def set_optimizer(self, optimizer):
        self.optimizer = optimizer


class SingaCNN(_SingaModel):
    def __init__(self, classes=10):
        super().__init__()
        self.conv1 = layer.Conv2d(16, 3, padding=1)
        self.pool1 = layer.MaxPool2d(2, 2)
        self.conv2 = layer.Conv2d(32, 3, padding=1)
        self.pool2 = layer.MaxPool2d(2, 2)
        self.fc1 = layer.Linear(64)
        self.fc2 = layer.Linear(classes)

    def forward(self, x):
        x = self.pool1(autograd.relu(self.conv1(x)))
        x = self.pool2(autograd.relu(self.conv2(x)))
        x = autograd.relu(self.fc1(autograd.flatten(x, 1)))
        return self.fc2(x)


def _sconv(cout, k, stride=1, padding=0, group=1):
    return layer.Conv2d(cout, k, stride=stride, padding=padding, group=group, bias=False)


class SingaBasicBlock(layer.Layer):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = _sconv(cout, 3, stride, 1)
        self.bn1 = layer.BatchNorm2d(cout)
        self.conv2 = _sconv(cout, 3, 1, 1)
        self.bn2 = layer.BatchNorm2d(cout)
        self.has_down = stride != 1 or cin != cout
        if self.has_down:
            self.down_conv = _sconv(cout, 1, stride)
            self.down_bn = layer.BatchNorm2d(cout)

    def forward(self, x):
        y = autograd.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        idt = self.down_bn(self.down_conv(x)) if self.has_down else x
        return autograd.relu(autograd.add(y, idt))


class SingaResNet18(_SingaModel):
    def __init__(self, classes=1000):
        super().__init__()
        self.conv1 = _sconv(64, 7, 2, 3)
        self.bn1 = layer.BatchNorm2d(64)
        self.pool = layer.MaxPool2d(3, 2, padding=1)
        self.blocks = []
        cin = 64
        for i, (cout, stride) in enumerate([(64, 1), (128, 2), (256, 2), (512, 2)]):
            for j in range(2):
                b = SingaBasicBlock(cin, cout, stride if j == 0 else 1)
                setattr(self, f"layer{i + 1}_{j}", b)
                self.blocks.append(b)
                cin = cout
        self.fc = layer.Linear(classes)

    def forward(self, x):
        x = self.pool(autograd.relu(self.bn1(self.conv1(x))))
        for b in self.blocks:
            x = b(x)
        return self.fc(autograd.flatten(autograd.globalaveragepool(x), 1))


def _relu6(x):
    return autograd.clip(x, 0.0, 6.0)


class SingaConvBN(layer.Layer):
    """Conv (no bias), batch norm, then ReLU6 unless act is False."""

    def __init__(self, cout, k, stride=1, group=1, act=True):
        super().__init__()
        self.conv = _sconv(cout, k, stride, (k - 1) // 2, group)
        self.bn = layer.BatchNorm2d(cout)
        self.act = act

    def forward(self, x):
        y = self.bn(self.conv(x))
        return _relu6(y) if self.act else y


class SingaInvertedResidual(layer.Layer):
    def __init__(self, cin, cout, stride, expand):
        super().__init__()
        hidden = cin * expand
        self.use_res = stride == 1 and cin == cout
        self.has_expand = expand != 1
        if self.has_expand:
            self.expand = SingaConvBN(hidden, 1)
        self.dw = SingaConvBN(hidden, 3, stride, group=hidden)
        self.project = SingaConvBN(cout, 1, act=False)

    def forward(self, x):
        y = self.expand(x) if self.has_expand else x
        y = self.project(self.dw(y))
        return autograd.add(x, y) if self.use_res else y


# torchvision's inverted-residual settings: expansion t, channels c, repeats n, stride s
MOBILENET_V2_SETTINGS = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                         (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]


class SingaMobileNetV2(_SingaModel):
    def __init__(self, classes=1000):
        super().__init__()
        self.stem = SingaConvBN(32, 3, 2)
        self.blocks = []
        cin = 32
        for t, c, n, s in MOBILENET_V2_SETTINGS:
            for i in range(n):
                b = SingaInvertedResidual(cin, c, s if i == 0 else 1, t)
                setattr(self, f"block{len(self.blocks)}", b)
                self.blocks.append(b)
                cin = c
        self.head = SingaConvBN(1280, 1)
        self.fc = layer.Linear(classes)

    def forward(self, x):
        x = self.stem(x)
        for b in self.blocks:
            x = b(x)
        x = self.head(x)
        return self.fc(autograd.flatten(autograd.globalaveragepool(x), 1))


# ---- torch ------------------------------------------------------------------


class TorchCNN(tnn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.conv1 = tnn.Conv2d(1, 16, 3, padding=1)
        self.pool1 = tnn.MaxPool2d(2, 2)
        self.conv2 = tnn.Conv2d(16, 32, 3, padding=1)
        self.pool2 = tnn.MaxPool2d(2, 2)
        self.fc1 = tnn.Linear(32 * 2 * 2, 64)
        self.fc2 = tnn.Linear(64, classes)

    def forward(self, x):
        x = self.pool1(F.relu(self.conv1(x)))
        x = self.pool2(F.relu(self.conv2(x)))
        return self.fc2(F.relu(self.fc1(torch.flatten(x, 1))))


def _tbn(c):
    return tnn.BatchNorm2d(c, eps=1e-5, momentum=0.1)


class TorchBasicBlock(tnn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = tnn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = _tbn(cout)
        self.conv2 = tnn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = _tbn(cout)
        self.has_down = stride != 1 or cin != cout
        if self.has_down:
            self.down_conv = tnn.Conv2d(cin, cout, 1, stride, bias=False)
            self.down_bn = _tbn(cout)

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        idt = self.down_bn(self.down_conv(x)) if self.has_down else x
        return F.relu(y + idt)


class TorchResNet18(tnn.Module):
    def __init__(self, classes=1000):
        super().__init__()
        self.conv1 = tnn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = _tbn(64)
        self.pool = tnn.MaxPool2d(3, 2, padding=1)
        self.blocks = []
        cin = 64
        for i, (cout, stride) in enumerate([(64, 1), (128, 2), (256, 2), (512, 2)]):
            for j in range(2):
                b = TorchBasicBlock(cin, cout, stride if j == 0 else 1)
                self.add_module(f"layer{i + 1}_{j}", b)
                self.blocks.append(b)
                cin = cout
        self.fc = tnn.Linear(512, classes)
        # torchvision's initialization
        for m in self.modules():
            if isinstance(m, tnn.Conv2d):
                tnn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")

    def forward(self, x):
        x = self.pool(F.relu(self.bn1(self.conv1(x))))
        for b in self.blocks:
            x = b(x)
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


class TorchConvBN(tnn.Module):
    def __init__(self, cin, cout, k, stride=1, group=1, act=True):
        super().__init__()
        self.conv = tnn.Conv2d(cin, cout, k, stride, (k - 1) // 2, groups=group, bias=False)
        self.bn = _tbn(cout)
        self.act = act

    def forward(self, x):
        y = self.bn(self.conv(x))
        return F.relu6(y) if self.act else y


class TorchInvertedResidual(tnn.Module):
    def __init__(self, cin, cout, stride, expand):
        super().__init__()
        hidden = cin * expand
        self.use_res = stride == 1 and cin == cout
        self.has_expand = expand != 1
        if self.has_expand:
            self.expand = TorchConvBN(cin, hidden, 1)
        self.dw = TorchConvBN(hidden, hidden, 3, stride, group=hidden)
        self.project = TorchConvBN(hidden, cout, 1, act=False)

    def forward(self, x):
        y = self.expand(x) if self.has_expand else x
        y = self.project(self.dw(y))
        return x + y if self.use_res else y


class TorchMobileNetV2(tnn.Module):
    def __init__(self, classes=1000):
        super().__init__()
        self.stem = TorchConvBN(3, 32, 3, 2)
        self.blocks = []
        cin = 32
        for t, c, n, s in MOBILENET_V2_SETTINGS:
            for i in range(n):
                b = TorchInvertedResidual(cin, c, s if i == 0 else 1, t)
                self.add_module(f"block{len(self.blocks)}", b)
                self.blocks.append(b)
                cin = c
        self.head = TorchConvBN(cin, 1280, 1)
        self.fc = tnn.Linear(1280, classes)
        # torchvision's initialization
        for m in self.modules():
            if isinstance(m, tnn.Conv2d):
                tnn.init.kaiming_normal_(m.weight, mode="fan_out")
            elif isinstance(m, tnn.Linear):
                tnn.init.normal_(m.weight, 0, 0.01)
                tnn.init.zeros_(m.bias)

    def forward(self, x):
        x = self.stem(x)
        for b in self.blocks:
            x = b(x)
        x = self.head(x)
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


# ---- the pairs ----------------------------------------------------------------

MODELS = {
    "cnn": (SingaCNN, TorchCNN, (1, 8, 8), 10),
    "resnet18": (SingaResNet18, TorchResNet18, (3, 224, 224), 1000),
    "mobilenetv2": (SingaMobileNetV2, TorchMobileNetV2, (3, 224, 224), 1000),
}


def build(name, seed=0):
    """(singa model, torch model) of the same architecture, not yet compiled."""
    s_cls, t_cls, _, _ = MODELS[name]
    torch.manual_seed(seed)
    return s_cls(), t_cls()


def data(name, batch, hw=None, seed=0):
    """Random inputs (float32 NCHW) and class labels (int64) for a model."""
    _, _, shape, classes = MODELS[name]
    if hw is not None:
        shape = (shape[0], hw, hw)
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch,) + shape, dtype=np.float32)
    y = rng.integers(0, classes, batch).astype(np.int64)
    return x, y


def singa_inputs(x, y):
    return (tensor.Tensor(data=x, requires_grad=False),
            tensor.Tensor(data=y.astype(np.int32), dtype=tensor.int32, requires_grad=False))


def torch_name(singa_name):
    """The torch parameter/buffer name of a singa state name."""
    path, leaf = singa_name.rsplit(".", 1)
    return path + "." + {"W": "weight", "b": "bias", "scale": "weight"}.get(leaf, leaf)


def copy_weights(ref, ours):
    """Copies the torch model's parameters and buffers into the compiled
    singa model; every state of either side must find its counterpart."""
    theirs = {k: v.detach().numpy() for k, v in ref.state_dict().items()
              if not k.endswith("num_batches_tracked")}
    mine = ours.get_states()
    values = {}
    for k, t in mine.items():
        v = theirs.pop(torch_name(k))
        if len(t.shape) == 2 and k.endswith(".W"):  # Linear: singa holds W as [in, out]
            v = v.T
        values[k] = np.ascontiguousarray(v)
    assert not theirs, f"torch states without a singa counterpart: {sorted(theirs)}"
    ours.set_states(values)


def singa_model(name, x, lr=0.05, use_graph=False, ref=None, seed=0):
    """A compiled singa training model (SGD, momentum 0.9) for input x
    (a singa Tensor); with ref, starting from ref's weights."""
    ours, _ = build(name, seed) if ref is None else (MODELS[name][0](), None)
    ours.set_optimizer(opt.SGD(lr=lr, momentum=0.9))
    ours.compile([x], is_train=True, use_graph=use_graph)
    if ref is not None:
        copy_weights(ref, ours)
    return ours


def torch_step_fn(ref, x, y, lr=0.05):
    """A closure running one torch training step; returns the loss."""
    sgd = torch.optim.SGD(ref.parameters(), lr=lr, momentum=0.9)
    ref.train()

    def step():
        sgd.zero_grad(set_to_none=True)
        loss = F.cross_entropy(ref(x), y)
        loss.backward()
        sgd.step()
        return loss

    return step
