"""Loading an ONNX model and running it (SINGA's ONNX documentation,
"Loading an ONNX Model into SINGA" and "Inference SINGA model").

    python examples/onnx/inference.py MODEL.onnx [--input x.npy]
    python examples/onnx/inference.py            # no file: export.py's digits CNN

A model file gets inputs of its declared dtypes and shapes (symbolic dims
1; floats uniform random, integers 0) unless --input gives the arrays;
without a file the script trains and exports the digits CNN (export.py) and
reports its accuracy.
"""
import os
import sys

import numpy as np
from onnx import helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import example_cli  # noqa: E402
import export  # noqa: E402
from train_digits import load_data  # noqa: E402

from singa import device, sonnx, tensor  # noqa: E402


class MyModel(sonnx.SONNXModel):
    """SINGA's ONNX page's wrapper: an imported model whose forward returns its first output."""

    def __init__(self, onnx_model):
        super(MyModel, self).__init__(onnx_model)

    def forward(self, *x):
        y = super(MyModel, self).forward(*x)
        # A SINGA model returns its outputs as a list: take the only one.
        return y[0]

    def train_one_batch(self, x, y):
        pass


def input_arrays(onnx_model, paths, rng):
    """One array per input of the graph: read from `paths` (each must have
    the declared dtype), or generated as `singa run --generate` does:
    symbolic dims 1, floats uniform in [0, 1), integers 0, bools false."""
    weights = {t.name for t in onnx_model.graph.initializer}
    inputs = [i for i in onnx_model.graph.input if i.name not in weights]
    dtypes = [helper.tensor_dtype_to_np_dtype(i.type.tensor_type.elem_type) for i in inputs]
    if paths:
        if len(paths) != len(inputs):
            raise ValueError(f"the model takes {len(inputs)} input(s) "
                             f"({', '.join(i.name for i in inputs)}); --input gave {len(paths)}")
        arrays = [np.load(f) for f in paths]
        for i, a, dtype in zip(inputs, arrays, dtypes):
            if a.dtype != dtype:
                raise ValueError(f"input '{i.name}' is {dtype}, the file holds {a.dtype} "
                                 f"(save it with .astype(np.{dtype.name}))")
        return arrays
    arrays = []
    for i, dtype in zip(inputs, dtypes):
        shape = [d.dim_value or 1 for d in i.type.tensor_type.shape.dim]
        arrays.append(rng.random(shape).astype(dtype) if np.issubdtype(dtype, np.floating)
                      else np.zeros(shape, dtype))
    return arrays


def main(argv=None):
    ap = example_cli.parser(__doc__)
    ap.add_argument("model", nargs="?", help="an ONNX file (default: export.py's digits CNN)")
    ap.add_argument("--input", nargs="+", metavar="FILE",
                    help="one .npy array per model input, in order (default: generated)")
    ap.add_argument("--out", default="out", help="where the digits CNN is exported")
    ap.add_argument("--epochs", type=int, default=5, help="training epochs of the digits CNN")
    ap.add_argument("--seed", type=int, default=0, help="seed of the data split and the weights")
    args = ap.parse_args(argv)
    digits = args.model is None
    if digits:
        export.main(["--epochs", str(args.epochs), "--out", args.out, "--seed", str(args.seed)])
        args.model = os.path.join(args.out, "digits_cnn.onnx")
        x_test, y_test = load_data(args.seed)[1::2]
    onnx_model = example_cli.load_model(args.model)
    xs_np = [x_test] if digits else input_arrays(onnx_model, args.input,
                                                 np.random.default_rng(0))

    # Convert the ONNX model into a singa model (device.create_cuda_gpu() on a GPU build).
    dev = device.get_default_device()
    xs = [tensor.PlaceHolder(a.shape, device=dev, dtype=a.dtype) for a in xs_np]
    model = MyModel(onnx_model)
    model.compile(xs, is_train=False, use_graph=True, sequential=True)

    xs = [tensor.Tensor(device=dev, data=a, dtype=a.dtype) for a in xs_np]
    y = tensor.to_numpy(model.forward(*xs))
    shapes = ", ".join(f"{a.dtype} {a.shape}" for a in xs_np)
    print(f"{args.model}: input {shapes} -> output {y.shape}")

    # The same model through the onnx Backend API (the file's graph as a static plan).
    rep = sonnx.prepare(onnx_model, dev)
    same = tensor.to_numpy(rep.run(xs_np)[0])
    print(f"SingaRep.run: max |difference| {np.abs(same - y).max():.2e}")
    if digits:
        print(f"test accuracy {(y.argmax(1) == y_test).mean():.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(example_cli.run(main))
