"""The architectures of the ONNX model zoo table (SINGA's ONNX documentation), defined with
torch.nn and exported by torch's TorchScript exporter, with random weights.

    import zoo_models as zm
    path = zm.export("resnet18", opset=11, size="small")   # cached .onnx path
    feeds = zm.sample_feeds("resnet18", batch=2, size="small")
    zm.ZOO["gpt2"].full                                     # the full-size config

torchvision does not import beside torch 2.13 here, so the vision models are
written out after torchvision's (ResNet-18, MobileNet-V2, VGG-16,
ShuffleNet-V2), darknet's (Tiny-YOLOv2, VOC), insightface's (IResNet, the
ArcFace backbone) and the FER+ paper's (Emotion-FerPlus); the transformers
after Hugging Face's BERT, RoBERTa and GPT-2, written with plain torch.nn
layers so the export uses plain ONNX ops. Every model has a "full" config
(the zoo's size, for benchmarks and the examples) and a "small" one (same
graph, fewer and narrower layers, for tests).

The export keeps BatchNormalization nodes (TrainingMode.PRESERVE on a model
in eval mode) as the zoo files have them, instead of folding them into the
convolutions. Batch (and, for the transformers, sequence) axes are dynamic.
Exports are cached under $SINGA_ZOO_CACHE (default: <tmp>/singa-zoo), keyed
by the model, config, opset, torch version and this file's source, so an
edited definition never reuses a stale file.

This module is shared by examples/onnx, tests/python/test_zoo.py and
bench/onnx_infer.py (which import it by path): singa itself does not depend
on torch.
"""
from __future__ import annotations

import dataclasses
import hashlib
import inspect
import io
import json
import math
import os
import tempfile
import warnings

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

# The newest opset torch's TorchScript exporter writes (20 in torch 2.13);
# the dynamo exporter would need onnxscript, which is not installed.
try:
    from torch.onnx._constants import ONNX_TORCHSCRIPT_EXPORTER_MAX_OPSET as NEWEST_OPSET
except ImportError:  # the private constant moved: torch 2.13's value
    NEWEST_OPSET = 20
OPSETS = (11, NEWEST_OPSET)


# ---- vision: torchvision's classifiers ------------------------------------------


def _bn(c):
    return nn.BatchNorm2d(c)


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = _bn(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = _bn(cout)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), _bn(cout))

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return F.relu(y + (x if self.downsample is None else self.downsample(x)))


class ResNet18(nn.Module):
    def __init__(self, width=64, classes=1000, **_):
        super().__init__()
        self.conv1 = nn.Conv2d(3, width, 7, 2, 3, bias=False)
        self.bn1 = _bn(width)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        layers, cin = [], width
        for i, stride in enumerate([1, 2, 2, 2]):
            cout = width * 2 ** i
            layers += [BasicBlock(cin, cout, stride), BasicBlock(cout, cout, 1)]
            cin = cout
        self.layers = nn.Sequential(*layers)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        x = self.maxpool(F.relu(self.bn1(self.conv1(x))))
        x = F.adaptive_avg_pool2d(self.layers(x), 1)
        return self.fc(torch.flatten(x, 1))


def _divisible(v, d=8):
    """torchvision's _make_divisible: round channels to a multiple of d."""
    new = max(d, int(v + d / 2) // d * d)
    return new + d if new < 0.9 * v else new


class ConvBNReLU6(nn.Sequential):
    def __init__(self, cin, cout, k=3, stride=1, groups=1, act=True):
        mods = [nn.Conv2d(cin, cout, k, stride, (k - 1) // 2, groups=groups, bias=False), _bn(cout)]
        super().__init__(*(mods + [nn.ReLU6()] if act else mods))


class InvertedResidual(nn.Module):
    def __init__(self, cin, cout, stride, expand):
        super().__init__()
        hidden = int(round(cin * expand))
        self.use_res = stride == 1 and cin == cout
        mods = [ConvBNReLU6(cin, hidden, 1)] if expand != 1 else []
        mods += [ConvBNReLU6(hidden, hidden, 3, stride, groups=hidden),
                 ConvBNReLU6(hidden, cout, 1, act=False)]
        self.conv = nn.Sequential(*mods)

    def forward(self, x):
        return x + self.conv(x) if self.use_res else self.conv(x)


class MobileNetV2(nn.Module):
    SETTINGS = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]

    def __init__(self, width_mult=1.0, classes=1000, max_repeats=None, **_):
        super().__init__()
        cin = _divisible(32 * width_mult)
        last = _divisible(1280 * max(1.0, width_mult))
        mods = [ConvBNReLU6(3, cin, 3, 2)]
        for t, c, n, s in self.SETTINGS:
            cout = _divisible(c * width_mult)
            for i in range(min(n, max_repeats or n)):
                mods.append(InvertedResidual(cin, cout, s if i == 0 else 1, t))
                cin = cout
        mods.append(ConvBNReLU6(cin, last, 1))
        self.features = nn.Sequential(*mods)
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(last, classes))

    def forward(self, x):
        x = F.adaptive_avg_pool2d(self.features(x), 1)
        return self.classifier(torch.flatten(x, 1))


class VGG16(nn.Module):
    CFG = [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"]

    def __init__(self, width=64, hidden=4096, classes=1000, image=224, **_):
        super().__init__()
        mods, cin = [], 3
        for v in self.CFG:
            if v == "M":
                mods.append(nn.MaxPool2d(2, 2))
            else:
                cout = v * width // 64
                mods += [nn.Conv2d(cin, cout, 3, padding=1), nn.ReLU(inplace=True)]
                cin = cout
        self.features = nn.Sequential(*mods)
        # torchvision's AdaptiveAvgPool2d((7, 7)) is the identity at 224x224
        # (and the zoo's VGG-16 has none): the classifier reads the 7x7 map.
        side = image // 32
        self.classifier = nn.Sequential(
            nn.Linear(cin * side * side, hidden), nn.ReLU(True), nn.Dropout(),
            nn.Linear(hidden, hidden), nn.ReLU(True), nn.Dropout(), nn.Linear(hidden, classes))

    def forward(self, x):
        return self.classifier(torch.flatten(self.features(x), 1))


def channel_shuffle(x, groups):
    n, c, h, w = x.size()
    x = x.view(n, groups, c // groups, h, w).transpose(1, 2).contiguous()
    return x.view(n, c, h, w)


class ShuffleUnit(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.stride = stride
        half = cout // 2
        if stride > 1:
            self.branch1 = nn.Sequential(
                nn.Conv2d(cin, cin, 3, stride, 1, groups=cin, bias=False), _bn(cin),
                nn.Conv2d(cin, half, 1, bias=False), _bn(half), nn.ReLU(inplace=True))
        b2_in = cin if stride > 1 else half
        self.branch2 = nn.Sequential(
            nn.Conv2d(b2_in, half, 1, bias=False), _bn(half), nn.ReLU(inplace=True),
            nn.Conv2d(half, half, 3, stride, 1, groups=half, bias=False), _bn(half),
            nn.Conv2d(half, half, 1, bias=False), _bn(half), nn.ReLU(inplace=True))

    def forward(self, x):
        if self.stride == 1:
            x1, x2 = x.chunk(2, dim=1)
            out = torch.cat((x1, self.branch2(x2)), dim=1)
        else:
            out = torch.cat((self.branch1(x), self.branch2(x)), dim=1)
        return channel_shuffle(out, 2)


class ShuffleNetV2(nn.Module):
    def __init__(self, repeats=(4, 8, 4), channels=(24, 116, 232, 464, 1024), classes=1000, **_):
        super().__init__()
        self.conv1 = nn.Sequential(nn.Conv2d(3, channels[0], 3, 2, 1, bias=False),
                                   _bn(channels[0]), nn.ReLU(inplace=True))
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        stages, cin = [], channels[0]
        for n, cout in zip(repeats, channels[1:4]):
            stages += [ShuffleUnit(cin, cout, 2)] + [ShuffleUnit(cout, cout, 1) for _ in range(n - 1)]
            cin = cout
        self.stages = nn.Sequential(*stages)
        self.conv5 = nn.Sequential(nn.Conv2d(cin, channels[4], 1, bias=False), _bn(channels[4]),
                                   nn.ReLU(inplace=True))
        self.fc = nn.Linear(channels[4], classes)

    def forward(self, x):
        x = self.conv5(self.stages(self.maxpool(self.conv1(x))))
        return self.fc(x.mean([2, 3]))  # torchvision's global pool: ReduceMean


# ---- vision: detection and faces ------------------------------------------------


class TinyYOLOv2(nn.Module):
    """Darknet's tiny-yolo-voc: 9 convolutions, 125 = 5 anchors x (4 box +
    1 objectness + 20 VOC classes) per cell of a 13x13 grid at 416x416."""

    def __init__(self, width=16, anchors=5, classes=20, **_):
        super().__init__()
        chans = [width * 2 ** i for i in range(6)] + [width * 64, width * 64]
        mods, cin = [], 3
        for i, c in enumerate(chans):
            mods += [nn.Conv2d(cin, c, 3, 1, 1, bias=False), _bn(c), nn.LeakyReLU(0.1)]
            if i < 5:
                mods.append(nn.MaxPool2d(2, 2))
            elif i == 5:  # darknet's size-2 stride-1 pool keeps 13x13: edge-pad right and bottom
                mods += [nn.ReplicationPad2d((0, 1, 0, 1)), nn.MaxPool2d(2, 1)]
            cin = c
        self.features = nn.Sequential(*mods)
        self.head = nn.Conv2d(cin, anchors * (5 + classes), 1)

    def forward(self, x):
        return self.head(self.features(x * (1 / 255.0)))  # pixels 0..255 like the zoo file


class IBasicBlock(nn.Module):
    """insightface's IResNet block: BN-Conv-BN-PReLU-Conv-BN plus shortcut."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.bn1 = nn.BatchNorm2d(cin, eps=1e-5)
        self.conv1 = nn.Conv2d(cin, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout, eps=1e-5)
        self.prelu = nn.PReLU(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, stride, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(cout, eps=1e-5)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                            nn.BatchNorm2d(cout, eps=1e-5))

    def forward(self, x):
        y = self.bn3(self.conv2(self.prelu(self.bn2(self.conv1(self.bn1(x))))))
        return y + (x if self.downsample is None else self.downsample(x))


class ArcFaceIResNet(nn.Module):
    """The ArcFace backbone (LResNet100E-IR in the zoo: layers (3, 13, 30, 3)),
    112x112 faces to a 512-d embedding through a BN-Dropout-FC-BN head."""

    def __init__(self, layers=(3, 13, 30, 3), width=64, embedding=512, image=112, **_):
        super().__init__()
        self.conv1 = nn.Conv2d(3, width, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width, eps=1e-5)
        self.prelu = nn.PReLU(width)
        blocks, cin = [], width
        for i, n in enumerate(layers):
            cout = width * 2 ** i
            blocks += [IBasicBlock(cin, cout, 2)] + [IBasicBlock(cout, cout, 1) for _ in range(n - 1)]
            cin = cout
        self.blocks = nn.Sequential(*blocks)
        self.bn2 = nn.BatchNorm2d(cin, eps=1e-5)
        self.dropout = nn.Dropout(0.4)
        side = image // 16
        self.fc = nn.Linear(cin * side * side, embedding)
        self.features = nn.BatchNorm1d(embedding, eps=1e-5)

    def forward(self, x):
        x = self.blocks(self.prelu(self.bn1(self.conv1(x))))
        x = torch.flatten(self.dropout(self.bn2(x)), 1)
        return self.features(self.fc(x))


class EmotionFerPlus(nn.Module):
    """The FER+ paper's VGG-13-style CNN: 64x64 grey faces to 8 emotion scores."""

    EMOTIONS = ["neutral", "happiness", "surprise", "sadness", "anger", "disgust", "fear",
                "contempt"]

    def __init__(self, width=64, hidden=1024, image=64, **_):
        super().__init__()
        mods, cin = [], 1
        for mult, n in [(1, 2), (2, 2), (4, 3), (4, 3)]:
            for _ in range(n):
                mods += [nn.Conv2d(cin, width * mult, 3, padding=1), nn.ReLU(inplace=True)]
                cin = width * mult
            mods += [nn.MaxPool2d(2, 2), nn.Dropout(0.25)]
        self.features = nn.Sequential(*mods)
        side = image // 16
        self.classifier = nn.Sequential(
            nn.Linear(cin * side * side, hidden), nn.ReLU(True), nn.Dropout(0.5),
            nn.Linear(hidden, hidden), nn.ReLU(True), nn.Dropout(0.5),
            nn.Linear(hidden, len(self.EMOTIONS)))

    def forward(self, x):
        return self.classifier(torch.flatten(self.features(x), 1))


# ---- transformers ---------------------------------------------------------------


class SelfAttention(nn.Module):
    """Multi-head attention written out (MatMul, Softmax, Reshape, Transpose),
    with an additive mask [N, 1, 1 or S, S]."""

    def __init__(self, hidden, heads):
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.query, self.key, self.value = (nn.Linear(hidden, hidden) for _ in range(3))
        self.out = nn.Linear(hidden, hidden)

    def split(self, x):
        n, s, _ = x.shape
        return x.view(n, s, self.heads, self.head_dim).transpose(1, 2)

    def attend(self, q, k, v, mask):
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim) + mask
        ctx = torch.matmul(F.softmax(scores, dim=-1), v).transpose(1, 2).contiguous()
        n, s = ctx.shape[:2]
        return self.out(ctx.view(n, s, self.heads * self.head_dim))

    def forward(self, x, mask):
        return self.attend(self.split(self.query(x)), self.split(self.key(x)),
                           self.split(self.value(x)), mask)


class EncoderLayer(nn.Module):
    """BERT's post-LayerNorm layer with an erf GELU."""

    def __init__(self, hidden, heads, inter, eps):
        super().__init__()
        self.attn = SelfAttention(hidden, heads)
        self.ln1 = nn.LayerNorm(hidden, eps=eps)
        self.fc1 = nn.Linear(hidden, inter)
        self.fc2 = nn.Linear(inter, hidden)
        self.ln2 = nn.LayerNorm(hidden, eps=eps)
        self.drop = nn.Dropout(0.1)

    def forward(self, x, mask):
        x = self.ln1(x + self.drop(self.attn(x, mask)))
        return self.ln2(x + self.drop(self.fc2(F.gelu(self.fc1(x)))))


def _extended_mask(attention_mask, dtype):
    """[N, S] of 1 (attend) / 0 (padding) -> an additive [N, 1, 1, S] mask."""
    return (1.0 - attention_mask[:, None, None, :].to(dtype)) * -10000.0


class Bert(nn.Module):
    """BERT with the SQuAD head of the zoo's BERT-Squad: (input_ids,
    attention_mask, token_type_ids) -> (start_logits, end_logits)."""

    def __init__(self, vocab=30522, hidden=768, layers=12, heads=12, inter=3072,
                 max_pos=512, type_vocab=2, **_):
        super().__init__()
        self.word = nn.Embedding(vocab, hidden)
        self.position = nn.Embedding(max_pos, hidden)
        self.token_type = nn.Embedding(type_vocab, hidden)
        self.register_buffer("position_ids", torch.arange(max_pos)[None], persistent=False)
        self.ln = nn.LayerNorm(hidden, eps=1e-12)
        self.layers = nn.ModuleList(EncoderLayer(hidden, heads, inter, 1e-12) for _ in range(layers))
        self.qa = nn.Linear(hidden, 2)

    def forward(self, input_ids, attention_mask, token_type_ids):
        # Hugging Face's positions: a slice of a constant (no Range op).
        pos = self.position_ids[:, :input_ids.shape[1]]
        x = self.ln(self.word(input_ids) + self.position(pos) + self.token_type(token_type_ids))
        mask = _extended_mask(attention_mask, x.dtype)
        for layer in self.layers:
            x = layer(x, mask)
        start, end = self.qa(x).split(1, dim=-1)
        return start.squeeze(-1), end.squeeze(-1)


class Roberta(nn.Module):
    """RoBERTa with a sentiment head like the zoo's roberta-sequence-
    classification: (input_ids, attention_mask) -> logits [N, 2]. Positions
    count the non-padding tokens (a CumSum), as in Hugging Face's model."""

    def __init__(self, vocab=50265, hidden=768, layers=12, heads=12, inter=3072, max_pos=514,
                 pad=1, labels=2, **_):
        super().__init__()
        self.pad = pad
        self.word = nn.Embedding(vocab, hidden, padding_idx=pad)
        self.position = nn.Embedding(max_pos, hidden, padding_idx=pad)
        self.token_type = nn.Embedding(1, hidden)
        self.ln = nn.LayerNorm(hidden, eps=1e-5)
        self.layers = nn.ModuleList(EncoderLayer(hidden, heads, inter, 1e-5) for _ in range(layers))
        self.dense = nn.Linear(hidden, hidden)
        self.out_proj = nn.Linear(hidden, labels)

    def forward(self, input_ids, attention_mask):
        keep = input_ids.ne(self.pad).int()
        pos = (torch.cumsum(keep, dim=1).type_as(keep) * keep).long() + self.pad
        x = self.word(input_ids) + self.position(pos) + self.token_type.weight[0]
        x = self.ln(x)
        mask = _extended_mask(attention_mask, x.dtype)
        for layer in self.layers:
            x = layer(x, mask)
        return self.out_proj(torch.tanh(self.dense(x[:, 0, :])))


class GPT2Block(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.ln_1 = nn.LayerNorm(hidden, eps=1e-5)
        self.attn = SelfAttention(hidden, heads)
        self.ln_2 = nn.LayerNorm(hidden, eps=1e-5)
        self.c_fc = nn.Linear(hidden, 4 * hidden)
        self.c_proj = nn.Linear(4 * hidden, hidden)

    def forward(self, x, mask):
        x = x + self.attn(self.ln_1(x), mask)
        return x + self.c_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


class GPT2(nn.Module):
    """GPT-2 (pre-LayerNorm, tanh GELU, causal attention, LM head tied to
    the token embedding): input_ids [N, S] -> logits [N, S, vocab]."""

    def __init__(self, vocab=50257, hidden=768, layers=12, heads=12, max_pos=1024, **_):
        super().__init__()
        self.wte = nn.Embedding(vocab, hidden)
        self.wpe = nn.Embedding(max_pos, hidden)
        self.register_buffer("position_ids", torch.arange(max_pos)[None], persistent=False)
        # Hugging Face's causal mask: a constant lower triangle sliced to
        # [S, S] (no Trilu op), turned into an additive mask.
        causal = torch.tril(torch.ones(max_pos, max_pos, dtype=torch.bool))
        self.register_buffer("causal", causal[None, None], persistent=False)
        self.blocks = nn.ModuleList(GPT2Block(hidden, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(hidden, eps=1e-5)

    def forward(self, input_ids):
        s = input_ids.shape[1]
        x = self.wte(input_ids) + self.wpe(self.position_ids[:, :s])
        mask = torch.where(self.causal[:, :, :s, :s], 0.0, -10000.0)
        for block in self.blocks:
            x = block(x, mask)
        return F.linear(self.ln_f(x), self.wte.weight)


# ---- the zoo table ------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ZooModel:
    name: str
    title: str
    cls: type
    full: dict
    small: dict
    kind: str  # "classify", "detect", "embed", "emotion", "qa", "sentiment", "lm"
    needs_ops: tuple = ()  # ops singa must have for the model to run

    def config(self, size):
        return dict(self.full if size == "full" else self.small)

    @property
    def is_text(self):
        return self.kind in ("qa", "sentiment", "lm")

    def input_names(self):
        return {"qa": ["input_ids", "attention_mask", "token_type_ids"],
                "sentiment": ["input_ids", "attention_mask"], "lm": ["input_ids"]}.get(
                    self.kind, ["input"])

    def output_names(self):
        return {"qa": ["start_logits", "end_logits"], "lm": ["logits"], "embed": ["embedding"]}.get(
            self.kind, ["output"])

    def input_shape(self, size, batch, seq=None):
        """The shape of the (first) input: [N, C, H, W] or [N, S]."""
        cfg = self.config(size)
        if self.is_text:
            return (batch, seq or cfg["seq"])
        return (batch, 1 if self.kind == "emotion" else 3, cfg["image"], cfg["image"])


_TEXT_SMALL = dict(hidden=32, layers=2, heads=4, inter=64, seq=12)

ZOO = {m.name: m for m in [
    ZooModel("resnet18", "ResNet-18", ResNet18, dict(width=64, classes=1000, image=224),
             dict(width=8, classes=10, image=32), "classify"),
    ZooModel("mobilenetv2", "MobileNet-V2", MobileNetV2,
             dict(width_mult=1.0, classes=1000, image=224),
             dict(width_mult=0.25, classes=10, image=32, max_repeats=2), "classify"),
    ZooModel("vgg16", "VGG-16", VGG16, dict(width=64, hidden=4096, classes=1000, image=224),
             dict(width=8, hidden=32, classes=10, image=32), "classify"),
    ZooModel("shufflenetv2", "ShuffleNet-V2", ShuffleNetV2,
             dict(repeats=(4, 8, 4), channels=(24, 116, 232, 464, 1024), classes=1000, image=224),
             dict(repeats=(2, 2, 2), channels=(8, 16, 32, 64, 64), classes=10, image=32),
             "classify"),
    ZooModel("tiny_yolov2", "Tiny YOLOv2", TinyYOLOv2, dict(width=16, image=416),
             dict(width=2, image=64), "detect"),
    ZooModel("arcface", "ArcFace (LResNet100E-IR)", ArcFaceIResNet,
             dict(layers=(3, 13, 30, 3), width=64, embedding=512, image=112),
             dict(layers=(1, 2, 1, 1), width=8, embedding=32, image=32), "embed"),
    ZooModel("emotion_ferplus", "Emotion FerPlus", EmotionFerPlus,
             dict(width=64, hidden=1024, image=64), dict(width=4, hidden=32, image=32), "emotion"),
    ZooModel("bert", "BERT-Squad", Bert, dict(seq=128),
             dict(vocab=500, max_pos=64, type_vocab=2, **_TEXT_SMALL), "qa"),
    ZooModel("roberta", "RoBERTa (sentiment)", Roberta, dict(seq=128),
             dict(vocab=500, max_pos=64, pad=1, **_TEXT_SMALL), "sentiment", ("CumSum",)),
    ZooModel("gpt2", "GPT-2", GPT2, dict(seq=128),
             dict(vocab=500, max_pos=64, **{k: v for k, v in _TEXT_SMALL.items() if k != "inter"}),
             "lm"),
]}


def _randomize(model, seed):
    """Fixed-seed random weights with torchvision's scaling (activations stay
    of order 1 through deep stacks) and non-trivial BatchNorm statistics."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.Conv2d):
                fan_out = m.out_channels * m.kernel_size[0] * m.kernel_size[1] // m.groups
                m.weight.normal_(0, math.sqrt(2.0 / fan_out), generator=g)
                if m.bias is not None:
                    m.bias.normal_(0, 0.01, generator=g)
            elif isinstance(m, nn.Linear):
                m.weight.normal_(0, 1 / math.sqrt(m.in_features), generator=g)
                m.bias.normal_(0, 0.01, generator=g)
            elif isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
                m.weight.uniform_(0.5, 1.5, generator=g)
                m.bias.normal_(0, 0.1, generator=g)
                m.running_mean.normal_(0, 0.1, generator=g)
                m.running_var.uniform_(0.5, 1.5, generator=g)
            elif isinstance(m, nn.LayerNorm):
                m.weight.uniform_(0.8, 1.2, generator=g)
                m.bias.normal_(0, 0.05, generator=g)
            elif isinstance(m, nn.Embedding):
                m.weight.normal_(0, 0.5, generator=g)
            elif isinstance(m, nn.PReLU):
                m.weight.uniform_(0.1, 0.3, generator=g)
    return model


def build(name, size="small", seed=0):
    """The torch model (eval mode) with its fixed random weights."""
    spec = ZOO[name]
    cfg = spec.config(size)
    torch.manual_seed(seed)
    return _randomize(spec.cls(**cfg), seed).eval()


def sample_feeds(name, batch=1, size="small", seed=0, seq=None):
    """Random inputs by input name: images (0..255 for Tiny-YOLOv2, else
    standard normal), token ids (with some padding masked out), masks."""
    spec = ZOO[name]
    rng = np.random.default_rng(seed)
    shape = spec.input_shape(size, batch, seq)
    if not spec.is_text:
        x = rng.standard_normal(shape, dtype=np.float32)
        if spec.kind == "detect":
            x = rng.uniform(0, 255, shape).astype(np.float32)
        return {"input": x}
    cfg = spec.config(size)
    vocab = cfg.get("vocab") or inspect.signature(spec.cls).parameters["vocab"].default
    ids = rng.integers(3, vocab, shape).astype(np.int64)
    mask = np.ones(shape, np.int64)
    if spec.kind != "lm" and shape[1] > 4:
        pad = cfg.get("pad", 0)
        ids[:, -2:] = pad  # the last two tokens are padding, masked out
        mask[:, -2:] = 0
    feeds = {"input_ids": ids, "attention_mask": mask,
             "token_type_ids": (np.arange(shape[1]) >= shape[1] // 2).astype(np.int64)[None]
             .repeat(batch, 0)}
    return {k: feeds[k] for k in spec.input_names()}


def cache_dir():
    d = os.environ.get("SINGA_ZOO_CACHE") or os.path.join(tempfile.gettempdir(), "singa-zoo")
    os.makedirs(d, exist_ok=True)
    return d


def _source_hash():
    with open(__file__, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()[:12]


def export(name, opset=NEWEST_OPSET, size="small", seed=0, path=None):
    """Exports the model (TorchScript exporter, dynamic batch, and sequence
    for the transformers) and returns the file's path: `path`, or a file
    in cache_dir() reused while the definition, config and opset stay."""
    spec = ZOO[name]
    cfg = spec.config(size)
    if path is None:
        key = json.dumps([name, cfg, opset, seed, torch.__version__, _source_hash()],
                         sort_keys=True)
        digest = hashlib.sha256(key.encode()).hexdigest()[:16]
        path = os.path.join(cache_dir(), f"{name}-{size}-op{opset}-{digest}.onnx")
        if os.path.exists(path):
            return path
    model = build(name, size, seed)
    feeds = sample_feeds(name, 1 if spec.is_text else 2, size, seed)
    args = tuple(torch.from_numpy(feeds[n]) for n in spec.input_names())
    axes = {0: "batch", 1: "sequence"} if spec.is_text else {0: "batch"}
    dynamic = {n: axes for n in spec.input_names()}
    for n in spec.output_names():
        dynamic[n] = {0: "batch", 1: "sequence"} if spec.kind in ("qa", "lm") else {0: "batch"}
    buf = io.BytesIO()
    with warnings.catch_warnings():  # the TorchScript exporter's deprecation notice
        warnings.simplefilter("ignore")
        torch.onnx.export(model, args, buf, dynamo=False, opset_version=opset,
                          input_names=spec.input_names(), output_names=spec.output_names(),
                          dynamic_axes=dynamic, training=torch.onnx.TrainingMode.PRESERVE,
                          do_constant_folding=True)
    tmp = f"{path}.{os.getpid()}.tmp"  # tests and benchmarks may export at once
    with open(tmp, "wb") as f:
        f.write(buf.getvalue())
    os.replace(tmp, path)
    if os.path.dirname(path) == cache_dir():
        # Exports of an older definition are never read again (full-size
        # ones take gigabytes): drop them.
        prefix = os.path.basename(path).rsplit("-", 1)[0] + "-"
        for old in os.listdir(cache_dir()):
            if old.startswith(prefix) and old.endswith(".onnx") and old != os.path.basename(path):
                os.remove(os.path.join(cache_dir(), old))
    return path
