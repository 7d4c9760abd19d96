"""The main job, end to end on scikit-learn's digits (SINGA's ONNX page's "full
example"): train a CNN with singa, export it with sonnx.to_onnx and save it
as an ONNX file, load it with sonnx, infer, re-train it, transfer-learn a
new head and export that model again; then the same with the model written
at opset 9 (as the model zoo's files are), checked in onnxruntime; printing
the accuracies and saving a plot. `make demo` runs this.
"""
import os
import sys
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import onnx  # noqa: E402
from tqdm import tqdm  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import example_cli  # noqa: E402
from train_digits import CNN, load_data  # noqa: E402

from singa import autograd, data, device, layer, opt, sonnx, tensor  # noqa: E402

BATCH = 64


def train(m, x, y, epochs, desc, rng):
    """Runs m(tx, ty) (train_one_batch) over full batches; returns losses per epoch."""
    tx = tensor.Tensor((BATCH,) + x.shape[1:], requires_grad=False)
    ty = tensor.Tensor((BATCH,), dtype=tensor.int32, requires_grad=False)
    losses = []
    train_batches = data.batches(x, y, batch_size=BATCH, shuffle=True, drop_last=True, seed=rng)
    for e in range(epochs):
        total, steps = 0.0, 0
        bar = tqdm(train_batches, desc=f"{desc} epoch {e + 1}/{epochs}", leave=False)
        for xb, yb in bar:
            tx.copy_from_numpy(xb)
            ty.copy_from_numpy(yb)
            out, loss = m(tx, ty)
            total += float(tensor.to_numpy(loss)[0])
            steps += 1
            bar.set_postfix(loss=f"{total / steps:.4f}", refresh=False)
        losses.append(total / steps)
    return losses


def accuracy(logits, y):
    return float((np.asarray(logits).argmax(1) == y).mean())


def export(m, x, path, name):
    """m's inference graph on inputs like x, traced by sonnx.to_onnx (which
    runs m.forward with recording on) and saved to path."""
    onnx_model = sonnx.to_onnx([tensor.Tensor(data=x, requires_grad=False)], m, model_name=name,
                               dynamic_batch=True, input_names=["x"], output_names=["logits"])
    onnx.checker.check_model(onnx_model, full_check=True)
    sonnx.save(onnx_model, path)
    return onnx_model


class Retrain(sonnx.SONNXModel):
    """Re-training the imported model (SINGA's ONNX documentation)."""

    def forward(self, *x):
        return super().forward(*x)[0]

    def train_one_batch(self, x, y):
        out = self.forward(x)
        loss = autograd.softmax_cross_entropy(out, y)
        self.optimizer.backward_and_update(loss)
        return out, loss

    def set_optimizer(self, optimizer):
        self.optimizer = optimizer


class Transfer(Retrain):
    """Transfer learning (SINGA's ONNX documentation): cut the imported model after its
    feature layer and append a new head."""

    def __init__(self, onnx_model, classes):
        super().__init__(onnx_model)
        self.head = layer.Linear(classes)

    def forward(self, *x):
        features = sonnx.SONNXModel.forward(self, *x, last_layers=-2)[0]  # drop the last Gemm
        return self.head(features)


def main():
    ap = example_cli.parser(__doc__)
    ap.add_argument("--epochs", type=int, default=10, help="training epochs of the digits CNN")
    ap.add_argument("--out", default="out", help="where the models and the plot are written")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    device.get_default_device().SetRandSeed(0)
    rng = np.random.default_rng(0)
    x_train, x_test, y_train, y_test = load_data(0)
    start = time.time()

    print("1. train a CNN with singa (graph mode)")
    cnn = CNN()
    cnn.set_optimizer(opt.SGD(lr=0.05, momentum=0.9, weight_decay=1e-5))
    cnn.compile([tensor.PlaceHolder((BATCH, 1, 8, 8))], is_train=True, use_graph=True)
    curves = {"train CNN": train(cnn, x_train, y_train, args.epochs, "train", rng)}
    cnn.eval()
    acc_cnn = accuracy(tensor.to_numpy(cnn(tensor.Tensor(data=x_test))), y_test)
    print(f"   test accuracy {acc_cnn:.4f}")

    path = os.path.join(args.out, "digits_cnn.onnx")
    print(f"2. export it with sonnx.to_onnx and save it: {path}")
    onnx_model = export(cnn, x_test[:BATCH], path, "digits_cnn")
    print("   nodes: " + " ".join(n.op_type for n in onnx_model.graph.node))

    print("3. load it with sonnx and infer")
    rep = sonnx.prepare(onnx.load(path), device.get_default_device())
    acc_onnx = accuracy(tensor.to_numpy(rep.run([x_test])[0]), y_test)
    print(f"   test accuracy {acc_onnx:.4f} (the trained CNN: {acc_cnn:.4f})")

    print("4. re-train the imported model")
    re = Retrain(onnx_model)
    re.set_optimizer(opt.SGD(lr=0.01, momentum=0.9))
    re.compile([tensor.PlaceHolder((BATCH, 1, 8, 8))], is_train=True, use_graph=True,
               sequential=True)
    curves["re-train"] = train(re, x_train, y_train, max(2, args.epochs // 3), "re-train", rng)
    re.eval()
    acc_re = accuracy(tensor.to_numpy(re(tensor.Tensor(data=x_test))), y_test)
    print(f"   test accuracy {acc_re:.4f}")

    print("5. transfer-learn: cut the last layer, append a new head for digit parity")
    parity_train, parity_test = y_train % 2, y_test % 2
    tl = Transfer(onnx_model, 2)
    tl.set_optimizer(opt.SGD(lr=0.02, momentum=0.9))
    tl.compile([tensor.PlaceHolder((BATCH, 1, 8, 8))], is_train=True, use_graph=True)
    tl.eval()
    acc_before = accuracy(tensor.to_numpy(tl(tensor.Tensor(data=x_test))), parity_test)
    tl.train()
    curves["transfer"] = train(tl, x_train, parity_train, max(2, args.epochs // 3), "transfer",
                               rng)
    tl.eval()
    acc_tl = accuracy(tensor.to_numpy(tl(tensor.Tensor(data=x_test))), parity_test)
    print(f"   parity test accuracy {acc_before:.4f} before, {acc_tl:.4f} after training the head")

    path_tl = os.path.join(args.out, "digits_parity.onnx")
    print(f"6. export the transfer-learned model (new head, trained weights): {path_tl}")
    export(tl, x_test[:BATCH], path_tl, "digits_parity")
    rep_tl = sonnx.prepare(onnx.load(path_tl), device.get_default_device())
    acc_tl_onnx = accuracy(tensor.to_numpy(rep_tl.run([x_test])[0]), parity_test)
    print(f"   parity test accuracy {acc_tl_onnx:.4f} from the exported file")

    print("7. an opset-9 model of batch 1 (as the model zoo's are): import it for batches of "
          f"{BATCH}, transfer-learn, export, run the export in onnxruntime")
    # The exported graph written as the model zoo's files are: opset 9, batch 1.
    # Its ops (Conv, Relu, MaxPool, Flatten, Gemm) read the same at opset 9, as
    # the checker confirms; the placeholder of compile gives the batch.
    old = sonnx.update_batch_size(onnx.ModelProto.FromString(onnx_model.SerializeToString()), 1)
    old.opset_import[0].version, old.ir_version = 9, 4
    onnx.checker.check_model(old, full_check=True)
    tl9 = Transfer(old, 2)
    tl9.set_optimizer(opt.SGD(lr=0.02, momentum=0.9))
    tl9.compile([tensor.PlaceHolder((BATCH, 1, 8, 8))], is_train=True, use_graph=True)
    train(tl9, x_train, parity_train, 2, "opset 9 transfer", rng)
    tl9.eval()
    x9 = tensor.Tensor(data=x_test[:BATCH])
    out9 = tl9(x9)
    om9 = sonnx.to_onnx([x9], [out9])  # right after the inference call
    onnx.checker.check_model(om9, full_check=True)
    path9 = os.path.join(args.out, "digits_parity_from_opset9.onnx")
    sonnx.save(om9, path9)
    import onnxruntime as ort
    sess = ort.InferenceSession(path9, providers=["CPUExecutionProvider"])
    got = sess.run(None, {sess.get_inputs()[0].name: x_test[:BATCH]})[0]
    want = tensor.to_numpy(out9)
    diff9 = float(np.abs(got - want).max())
    print(f"   exported at opset {om9.opset_import[0].version} to {path9}; onnxruntime vs singa: "
          f"max |difference| {diff9:.1e}, parity accuracy {accuracy(got, parity_test[:BATCH]):.4f}")

    fig, ax = plt.subplots(figsize=(7, 4))
    for name, ys in curves.items():
        ax.plot(range(1, len(ys) + 1), ys, marker="o", label=name)
    ax.set(xlabel="epoch", ylabel="training loss", yscale="log",
           title=f"digits: CNN {acc_cnn:.3f}, ONNX {acc_onnx:.3f}, re-trained {acc_re:.3f}, "
                 f"transfer {acc_tl:.3f}")
    ax.legend()
    fig.tight_layout()
    plot = os.path.join(args.out, "demo.png")
    fig.savefig(plot, dpi=100)
    print(f"done in {time.time() - start:.1f} s; plot saved to {plot}")
    ok = (acc_cnn >= 0.95 and abs(acc_onnx - acc_cnn) < 1e-9 and acc_re >= 0.95 and acc_tl > 0.9
          and abs(acc_tl_onnx - acc_tl) < 1e-9 and diff9 < 1e-4)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(example_cli.run(main))
