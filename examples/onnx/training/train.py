"""Re-train an ONNX model with singa, data-parallel over MPI (SINGA's ONNX documentation:
re-training and transfer-learning examples; SINGA's examples/onnx/training):
load an ONNX model, cut it with last_layers, append a Linear head, and train
on scikit-learn's digits with one of DistOpt's options.

    .venv/bin/python examples/onnx/training/train.py                     # one process
    mpirun -np 2 .venv/bin/python examples/onnx/training/train.py --dist-option fp16
    mpirun -np 2 .venv/bin/python examples/onnx/training/train.py model.onnx \\
        --dist-option sparseTopK --spars 0.05

(as root add --allow-run-as-root after mpirun; with more ranks than cores add
--oversubscribe; for several machines see docs/distributed.md.)

The model takes [N, 1, 8, 8] images (the digits). Without a path, a small
CNN (conv-relu-pool x2, Gemm-relu, Gemm) is built with onnx.helper from a
fixed seed and also written to --out for inspection. Every rank trains on its
own part of the training set; rank 0 prints the loss and accuracies reduced
over the ranks, shows a progress bar and saves a plot.
"""
import json
import os
import sys
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from tqdm import tqdm  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import example_cli  # noqa: E402

from singa import autograd, data, device, layer, opt, sonnx, tensor  # noqa: E402

DIST_OPTIONS = ("fp32", "fp16", "partialUpdate", "sparseTopK", "sparseThreshold")
DEFAULT_SPARS = {"sparseTopK": 0.05, "sparseThreshold": 0.01}


def digits_cnn_onnx(seed=0):
    """A small, untrained CNN for 1x8x8 digits as an ONNX model (He-normal
    weights from a fixed seed, so every rank builds the same one)."""
    rng = np.random.default_rng(seed)

    def he(*shape):
        fan_in = int(np.prod(shape[1:])) if len(shape) == 4 else shape[0]
        return (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)

    weights = {
        "conv1.W": he(16, 1, 3, 3), "conv1.b": np.zeros(16, np.float32),
        "conv2.W": he(32, 16, 3, 3), "conv2.b": np.zeros(32, np.float32),
        "fc1.W": he(128, 64), "fc1.b": np.zeros(64, np.float32),
        "fc2.W": he(64, 10), "fc2.b": np.zeros(10, np.float32),
    }
    nodes = [
        helper.make_node("Conv", ["x", "conv1.W", "conv1.b"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "conv2.W", "conv2.b"], ["c2"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["r2"]),
        helper.make_node("MaxPool", ["r2"], ["p2"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Flatten", ["p2"], ["f"]),
        helper.make_node("Gemm", ["f", "fc1.W", "fc1.b"], ["h"]),
        helper.make_node("Relu", ["h"], ["features"]),
        helper.make_node("Gemm", ["features", "fc2.W", "fc2.b"], ["logits"]),
    ]
    graph = helper.make_graph(
        nodes, "digits_cnn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 1, 8, 8])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 10])],
        [numpy_helper.from_array(v, k) for k, v in weights.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    return model


class MyModel(sonnx.SONNXModel):
    """The imported model up to last_layers, then a new Linear head."""

    def __init__(self, onnx_model, num_classes=10, last_layers=-2):
        super().__init__(onnx_model)
        self.last_layers = last_layers
        self.linear = layer.Linear(num_classes)

    def forward(self, *x):
        y = super().forward(*x, last_layers=self.last_layers)[0]
        return self.linear(autograd.flatten(y, 1))

    def train_one_batch(self, x, y, dist_option, spars):
        out = self.forward(x)
        loss = autograd.softmax_cross_entropy(out, y)
        if dist_option == "fp32":
            self.optimizer.backward_and_update(loss)
        elif dist_option == "fp16":
            self.optimizer.backward_and_update_half(loss)
        elif dist_option == "partialUpdate":
            self.optimizer.backward_and_partial_update(loss)
        elif dist_option == "sparseTopK":
            self.optimizer.backward_and_sparse_update(loss, topK=True, spars=spars)
        elif dist_option == "sparseThreshold":
            self.optimizer.backward_and_sparse_update(loss, topK=False, spars=spars)
        else:
            raise ValueError(f"unknown dist option {dist_option!r}; one of {DIST_OPTIONS}")
        return out, loss

    def set_optimizer(self, optimizer):
        self.optimizer = optimizer


def accuracy(pred, target):
    """The number of correct predictions."""
    return int((np.asarray(pred).argmax(1) == target).sum())


def partition(global_rank, world_size, train_x, train_y, val_x, val_y):
    """This rank's contiguous share of the (already shuffled) data."""
    def part(a):
        n = len(a) // world_size
        return a[global_rank * n:(global_rank + 1) * n]
    return part(train_x), part(train_y), part(val_x), part(val_y)


def reduce_variable(values, dist_opt):
    """The sums over the ranks of a few numbers (all_reduce averages)."""
    t = tensor.Tensor(data=np.asarray(values, np.float32), requires_grad=False)
    dist_opt.all_reduce(t)
    dist_opt.wait()
    return tensor.to_numpy(t) * dist_opt.world_size


def check_input(onnx_model):
    dims = onnx_model.graph.input[0].type.tensor_type.shape.dim
    shape = [d.dim_value if d.HasField("dim_value") else None for d in dims]
    if len(shape) != 4 or shape[1:] != [1, 8, 8]:
        raise SystemExit(f"the model's input {onnx_model.graph.input[0].name} has shape "
                         f"{shape}; this example feeds [N, 1, 8, 8] digits")


def run(args):
    # mpirun binds each rank to its share of the cores: one thread per CPU
    # this process may run on (more would wait on each other).
    device.set_num_threads(args.threads or len(os.sched_getaffinity(0)))
    dev = device.get_default_device()
    dev.SetRandSeed(args.seed)
    sgd = opt.DistOpt(opt.SGD(lr=args.lr, momentum=0.9, weight_decay=1e-5),
                      buffSize=args.buff_size)
    rank, world = sgd.global_rank, sgd.world_size

    if args.model:
        onnx_model = example_cli.load_model(args.model)
        source = args.model
    else:
        onnx_model = digits_cnn_onnx(args.seed)
        source = "a new digits CNN"
        if rank == 0:
            os.makedirs(args.out, exist_ok=True)
            onnx.save(onnx_model, os.path.join(args.out, "digits_cnn.onnx"))
    check_input(onnx_model)

    digits = load_digits()
    x = (digits.images / 16.0).astype(np.float32)[:, None]
    y = digits.target.astype(np.int32)
    train_x, val_x, train_y, val_y = train_test_split(x, y, test_size=0.2,
                                                      random_state=args.seed, stratify=y)
    train_x, train_y, val_x, val_y = partition(rank, world, train_x, train_y, val_x, val_y)

    model = MyModel(onnx_model, num_classes=10, last_layers=args.last_layers)
    model.set_optimizer(sgd)
    bs = args.batch_size
    tx = tensor.Tensor((bs, 1, 8, 8), dev, requires_grad=False)
    ty = tensor.Tensor((bs,), dev, tensor.int32, requires_grad=False)
    # Graph mode replays one batch shape: every rank takes full batches only.
    num_train_batch = len(train_x) // bs
    if num_train_batch == 0:
        raise SystemExit(f"rank {rank}: {len(train_x)} training images, fewer than one "
                         f"batch of {bs}")
    model.compile([tx], is_train=True, use_graph=args.graph, sequential=True)
    spars = args.spars if args.spars is not None else DEFAULT_SPARS.get(args.dist_option)

    if rank == 0:
        print(f"re-training {source} (cut at last_layers={args.last_layers}, new Linear head) "
              f"on {world} rank(s), dist option {args.dist_option}"
              + (f", spars {spars}" if spars is not None else ""), flush=True)
    train_batches = data.batches(train_x, train_y, batch_size=bs, shuffle=True, drop_last=True,
                                 seed=args.seed + rank)
    history = []
    start = time.time()
    for epoch in range(args.max_epoch):
        epoch_start = time.time()
        train_loss, train_correct = 0.0, 0
        model.train()
        bar = tqdm(train_batches, desc=f"epoch {epoch + 1}/{args.max_epoch}",
                   disable=rank != 0 or args.quiet, leave=False)
        for xb, yb in bar:
            tx.copy_from_numpy(xb)
            ty.copy_from_numpy(yb)
            out, loss = model(tx, ty, args.dist_option, spars)
            train_correct += accuracy(tensor.to_numpy(out), yb)
            train_loss += float(tensor.to_numpy(loss)[0])

        model.eval()
        test_correct = 0
        for xb, yb in data.batches(val_x, val_y, batch_size=bs):
            out = model(tensor.Tensor(data=xb, requires_grad=False))
            test_correct += accuracy(tensor.to_numpy(out), yb)

        loss_sum, train_hits, test_hits, test_seen = reduce_variable(
            [train_loss / num_train_batch, train_correct, test_correct, len(val_x)], sgd)
        record = {"loss": float(loss_sum / world),
                  "train_acc": float(train_hits / (num_train_batch * bs * world)),
                  "test_acc": float(test_hits / test_seen)}
        history.append(record)
        if rank == 0:
            print(f"epoch {epoch + 1}: training loss = {record['loss']:.4f}, training accuracy "
                  f"= {record['train_acc']:.4f}, evaluation accuracy = {record['test_acc']:.4f}, "
                  f"{time.time() - epoch_start:.2f} s", flush=True)

    if rank == 0:
        print(f"{args.dist_option}: {world} rank(s), {time.time() - start:.2f} s for "
              f"{args.max_epoch} epochs; evaluation accuracy {history[-1]['test_acc']:.4f}; "
              f"rank 0 sent {sgd.communicator.bytes_sent / 2 ** 20:.2f} MiB", flush=True)
        save_plot(history, args)
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"dist_option": args.dist_option, "world_size": world,
                           "bytes_sent": sgd.communicator.bytes_sent,
                           "steps": args.max_epoch * num_train_batch, "history": history}, f)
    return history


def save_plot(history, args):
    plot = args.plot or os.path.join(args.out, f"onnx_training_{args.dist_option}.png")
    if os.path.dirname(plot):
        os.makedirs(os.path.dirname(plot), exist_ok=True)
    epochs = range(1, len(history) + 1)
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(9, 3.5))
    a1.plot(epochs, [h["loss"] for h in history], marker="o")
    a1.set(xlabel="epoch", ylabel="training loss", title=f"loss ({args.dist_option})")
    a2.plot(epochs, [h["train_acc"] for h in history], marker="o", label="train")
    a2.plot(epochs, [h["test_acc"] for h in history], marker="o", label="evaluation")
    a2.set(xlabel="epoch", ylabel="accuracy", title="accuracy")
    a2.legend()
    fig.tight_layout()
    fig.savefig(plot, dpi=100)
    plt.close(fig)
    print(f"plot saved to {plot}", flush=True)


def main():
    p = example_cli.parser(__doc__)
    p.add_argument("model", nargs="?", help="an ONNX model taking [N, 1, 8, 8] "
                   "(default: build a small digits CNN)")
    p.add_argument("--dist-option", default="fp32", choices=DIST_OPTIONS,
                   help="how the ranks exchange gradients")
    p.add_argument("--spars", type=float, default=None,
                   help="kept fraction for sparseTopK (default 0.05), magnitude threshold for "
                        "sparseThreshold (default 0.01)")
    p.add_argument("--epoch", "--max-epoch", dest="max_epoch", type=int, default=10,
                   help="passes over each rank's share of the data")
    p.add_argument("--bs", "--batch-size", dest="batch_size", type=int, default=32,
                   help="batch size of each rank")
    p.add_argument("--lr", "--learning-rate", dest="lr", type=float, default=0.05,
                   help="SGD learning rate")
    p.add_argument("--last-layers", type=int, default=-2,
                   help="cut the imported model after this node (-1: keep every node, -2: "
                        "drop the last one, the default CNN's classifier)")
    p.add_argument("--buff-size", type=int, default=4194304,
                   help="float32 elements of one fused message")
    p.add_argument("--no-graph", "--disable-graph", dest="graph", action="store_false",
                   help="run eagerly instead of graph mode")
    p.add_argument("--threads", type=int, default=0,
                   help="threads per rank (default: the CPUs the rank is bound to)")
    p.add_argument("--out", default="out", help="where the default model and the plot go")
    p.add_argument("--plot", help="the plot's path (default OUT/onnx_training_OPTION.png)")
    p.add_argument("--json", help="rank 0 writes the per-epoch results here")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--seed", type=int, default=0, help="seed of the data split and the weights")
    run(p.parse_args())
    return 0


if __name__ == "__main__":
    sys.exit(example_cli.run(main))
