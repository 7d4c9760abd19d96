"""Saving a singa model as ONNX (SINGA's ONNX documentation, "Saving SINGA model into ONNX
Format"): train the digits CNN built from singa layers, trace it with
sonnx.to_onnx, check and save the file, then run it with sonnx and, where it
is installed, onnxruntime.

    python examples/onnx/export.py [--epochs 5] [--out out]
"""
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import onnx  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import example_cli  # noqa: E402
from demo import BATCH, accuracy, train  # noqa: E402
from train_digits import CNN, load_data  # noqa: E402

from singa import autograd, device, opt, sonnx, tensor  # noqa: E402


def main(argv=None):
    ap = example_cli.parser(__doc__)
    ap.add_argument("--epochs", type=int, default=5, help="training epochs of the digits CNN")
    ap.add_argument("--out", default="out", help="where the ONNX file and the plot go")
    ap.add_argument("--seed", type=int, default=0, help="seed of the data split and the weights")
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    device.get_default_device().SetRandSeed(args.seed)
    x_train, x_test, y_train, y_test = load_data(args.seed)

    model = CNN()
    model.set_optimizer(opt.SGD(lr=0.05, momentum=0.9, weight_decay=1e-5))
    model.compile([tensor.PlaceHolder((BATCH, 1, 8, 8))], is_train=True, use_graph=True)
    losses = train(model, x_train, y_train, args.epochs, "train", np.random.default_rng(args.seed))

    # SINGA's ONNX page's form: x is the input tensor, y the output tensor of a
    # forward in training mode, where every op records the op that made it;
    # to_onnx traces those records back from y. (sonnx.to_onnx([x], model)
    # runs the forward itself.)
    x = tensor.Tensor(data=x_test, requires_grad=False)
    autograd.training = True
    y = model.forward(x)
    autograd.training = False
    onnx_model = sonnx.to_onnx([x], [y], model_name="digits_cnn", dynamic_batch=True)
    onnx.checker.check_model(onnx_model, full_check=True)
    path = os.path.join(args.out, "digits_cnn.onnx")
    onnx.save(onnx_model, path)
    ours = tensor.to_numpy(y)
    print(f"saved {path}: " + " ".join(n.op_type for n in onnx_model.graph.node))

    rep = sonnx.prepare(onnx.load(path), device.get_default_device())
    back = tensor.to_numpy(rep.run([x_test])[0])
    print(f"re-imported with sonnx: max |difference| {np.abs(back - ours).max():.2e}")
    try:
        import onnxruntime as ort
    except ImportError:
        print("onnxruntime is not installed: skipped")
    else:
        sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        got = sess.run(None, {sess.get_inputs()[0].name: x_test})[0]
        print(f"onnxruntime: max |difference| {np.abs(got - ours).max():.2e}")

    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(range(1, len(losses) + 1), losses, marker="o")
    ax.set(xlabel="epoch", ylabel="training loss", yscale="log", title="digits CNN before export")
    fig.tight_layout()
    fig.savefig(os.path.join(args.out, "export.png"), dpi=100)
    print(f"test accuracy {accuracy(ours, y_test):.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(example_cli.run(main))
