"""Loading an ONNX model and running it (seeds/onnx.md, "Loading an ONNX
Model into SINGA" and "Inference SINGA model").

    python examples/onnx/inference.py MODEL.onnx [--input x.npy]
    python examples/onnx/inference.py            # no file: export.py's digits CNN

A model file gets its declared input shape (symbolic dims 1) filled with
uniform random values unless --input gives an array; without a file the
script trains and exports the digits CNN (export.py) and reports its accuracy.
"""
import argparse
import os
import sys

import numpy as np
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import export  # noqa: E402
from train_digits import load_data  # noqa: E402

from singa import device, sonnx, tensor  # noqa: E402


class MyModel(sonnx.SONNXModel):
    """The seed's wrapper: an imported model whose forward returns its first output."""

    def __init__(self, onnx_model):
        super(MyModel, self).__init__(onnx_model)

    def forward(self, *x):
        y = super(MyModel, self).forward(*x)
        # A SINGA model returns its outputs as a list: take the only one.
        return y[0]

    def train_one_batch(self, x, y):
        pass


def input_array(onnx_model, path, rng):
    if path:
        return np.load(path)
    dims = onnx_model.graph.input[0].type.tensor_type.shape.dim
    return rng.random([d.dim_value or 1 for d in dims]).astype(np.float32)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model", nargs="?", help="an ONNX file (default: export.py's digits CNN)")
    ap.add_argument("--input", help="a .npy array for the model's first input")
    ap.add_argument("--out", default="out", help="where the digits CNN is exported")
    ap.add_argument("--epochs", type=int, default=5, help="training epochs of the digits CNN")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    digits = args.model is None
    if digits:
        export.main(["--epochs", str(args.epochs), "--out", args.out, "--seed", str(args.seed)])
        args.model = os.path.join(args.out, "digits_cnn.onnx")
        x_test, y_test = load_data(args.seed)[1::2]
    onnx_model = onnx.load(args.model)
    x_np = x_test if digits else input_array(onnx_model, args.input, np.random.default_rng(0))

    # Convert the ONNX model into a singa model (device.create_cuda_gpu() on a GPU build).
    dev = device.get_default_device()
    x = tensor.PlaceHolder(x_np.shape, device=dev)
    model = MyModel(onnx_model)
    model.compile([x], is_train=False, use_graph=True, sequential=True)

    x = tensor.Tensor(device=dev, data=x_np)
    y = tensor.to_numpy(model.forward(x))
    print(f"{args.model}: input {x_np.shape} -> output {y.shape}")

    # The same model through the onnx Backend API (the file's graph as a static plan).
    rep = sonnx.prepare(onnx_model, dev)
    same = tensor.to_numpy(rep.run([x_np])[0])
    print(f"SingaRep.run: max |difference| {np.abs(same - y).max():.2e}")
    if digits:
        print(f"test accuracy {(y.argmax(1) == y_test).mean():.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
