"""Transfer learning on an ONNX model (SINGA's ONNX documentation, "Transfer-learning an
ONNX model"): cut the imported model with last_layers, append a Linear
layer, train on a new task, and export the result.

    python examples/onnx/transfer_learning.py [MODEL.onnx] [--last-layers -2] [--epochs 3]

The new task is digit parity (odd/even) on scikit-learn's digits. MODEL.onnx
must take [N, 1, 8, 8] digits (default: export.py's digits CNN, trained on the
ten classes). last_layers: -1 keeps every layer, -2 cuts after the
second-to-last (here: drops the classifier Gemm), -3 one more, and so on.
"""
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import export  # noqa: E402
import example_cli  # noqa: E402
from demo import BATCH, accuracy, train  # noqa: E402
from train_digits import load_data  # noqa: E402

from singa import autograd, device, layer, opt, sonnx, tensor  # noqa: E402


class MyModel(sonnx.SONNXModel):
    """SINGA's ONNX page's transfer model: the imported layers up to `last_layers`,
    then a new Linear layer."""

    def __init__(self, onnx_model, classes, last_layers):
        super(MyModel, self).__init__(onnx_model)
        self.last_layers = last_layers
        self.linear = layer.Linear(classes)

    def forward(self, *x):
        y = super(MyModel, self).forward(*x, last_layers=self.last_layers)[0]
        return self.linear(y)

    def train_one_batch(self, x, y, dist_option="fp32", spars=None):
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
        return out, loss

    def set_optimizer(self, optimizer):
        self.optimizer = optimizer


def main(argv=None):
    ap = example_cli.parser(__doc__)
    ap.add_argument("model", nargs="?", help="an ONNX file taking [N, 1, 8, 8] digits")
    ap.add_argument("--last-layers", type=int, default=-2,
                    help="where to cut the imported model (-1 keeps every layer)")
    ap.add_argument("--epochs", type=int, default=3, help="training epochs of the new model")
    ap.add_argument("--out", default="out", help="where the default model and the result go")
    ap.add_argument("--seed", type=int, default=0, help="seed of the data split and the weights")
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    if args.model is None:
        export.main(["--epochs", "5", "--out", args.out, "--seed", str(args.seed)])
        args.model = os.path.join(args.out, "digits_cnn.onnx")
    device.get_default_device().SetRandSeed(args.seed)
    x_train, x_test, y_train, y_test = load_data(args.seed)
    parity_train, parity_test = y_train % 2, y_test % 2

    model = MyModel(example_cli.load_model(args.model), 2, args.last_layers)
    model.set_optimizer(opt.SGD(lr=0.02, momentum=0.9, weight_decay=1e-5))
    tx = tensor.PlaceHolder((BATCH, 1, 8, 8))
    model.compile([tx], is_train=True, use_graph=True, sequential=True)

    def test_accuracy():
        model.eval()
        acc = accuracy(tensor.to_numpy(model(tensor.Tensor(data=x_test))), parity_test)
        model.train()
        return acc

    before = test_accuracy()
    losses = train(model, x_train, parity_train, args.epochs, "transfer",
                   np.random.default_rng(args.seed))
    after = test_accuracy()
    print(f"parity test accuracy {before:.4f} before, {after:.4f} after training")

    # The transfer-learned model (imported layers, new head, trained weights) as ONNX.
    path = os.path.join(args.out, "digits_parity.onnx")
    model.eval()
    sonnx.to_onnx([tensor.Tensor(data=x_test[:BATCH], requires_grad=False)], model,
                  model_name="digits_parity", dynamic_batch=True, path=path)
    print(f"exported {path}")

    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(range(1, len(losses) + 1), losses, marker="o")
    ax.set(xlabel="epoch", ylabel="training loss", yscale="log",
           title=f"parity head: test accuracy {before:.3f} -> {after:.3f}")
    fig.tight_layout()
    fig.savefig(os.path.join(args.out, "transfer_learning.png"), dpi=100)
    print(f"test accuracy {after:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(example_cli.run(main))
