"""Writes the seed corpora of the libFuzzer targets (tests/fuzz/corpus): small
valid inputs of every kind each target reads, from which the fuzzers mutate,
and their dictionaries (tests/fuzz/*.dict).

    .venv/bin/python tools/fuzz/make_corpus.py      # rewrites tests/fuzz/corpus

model: the mutation campaign's seed models (a CNN, shapes computed through
Shape/Gather/Concat, If and Loop subgraphs, mixed dtypes, attention,
sequences) and models in older exporters' forms (opset 7 and 9), an LSTM, a
Scan, and a model whose weights are external data (w.bin, which the model
target provides). states: files written by singa's own save_states (SINGA's
zip checkpoints; the earlier SINGAST1 files stay in the corpus).
npy: .npy files of several dtypes and orders, and .npz files stored and
deflated, as numpy writes them."""
import io
import os
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mutation_campaign import _init, _model, _vi, seeds  # noqa: E402

CORPUS = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "fuzz", "corpus")


def more_models():
    rng = np.random.default_rng(1)
    legacy = _model(
        [helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["n"], epsilon=1e-5),
         helper.make_node("Upsample", ["n"], ["u"], scales=[1.0, 1.0, 2.0, 2.0]),
         helper.make_node("Pad", ["u"], ["p"], pads=[0, 0, 1, 1, 0, 0, 1, 1]),
         helper.make_node("Slice", ["p"], ["y"], starts=[1], ends=[5], axes=[2])],
        [_vi("x", [1, 2, 3, 3])], [_vi("y", None)],
        [_init("s", np.ones(2, np.float32)), _init("b", np.zeros(2, np.float32)),
         _init("m", np.zeros(2, np.float32)), _init("v", np.ones(2, np.float32))], opset=7)
    decomposed = _model(  # HardSwish as an exporter spells it, on opset 9
        [helper.make_node("Add", ["x", "three"], ["a"]),
         helper.make_node("Clip", ["a"], ["c"], min=0.0, max=6.0),
         helper.make_node("Mul", ["x", "c"], ["m"]),
         helper.make_node("Div", ["m", "six"], ["h"]),
         helper.make_node("GlobalAveragePool", ["h"], ["g"]),
         helper.make_node("Mul", ["h", "g"], ["y"])],
        [_vi("x", ["N", 2, 4, 4])], [_vi("y", ["N", 2, 4, 4])],
        [_init("three", np.array(3, np.float32)), _init("six", np.array(6, np.float32))], opset=9)
    lstm = _model(
        [helper.make_node("LSTM", ["x", "w", "r", "b"], ["y", "h", "c"], hidden_size=3,
                          direction="bidirectional")],
        [_vi("x", ["T", 1, 2])], [_vi("y", None), _vi("h", None), _vi("c", None)],
        [_init("w", rng.standard_normal((2, 12, 2)).astype(np.float32)),
         _init("r", rng.standard_normal((2, 12, 3)).astype(np.float32)),
         _init("b", np.zeros((2, 24), np.float32))], opset=14)
    body = helper.make_graph(
        [helper.make_node("Add", ["s", "xi"], ["s2"]), helper.make_node("Identity", ["s2"], ["o"])],
        "body", [_vi("s", [2]), _vi("xi", [2])], [_vi("s2", [2]), _vi("o", [2])])
    scan = _model(
        [helper.make_node("Scan", ["s0", "x"], ["sN", "ys"], body=body, num_scan_inputs=1)],
        [_vi("x", [3, 2])], [_vi("sN", [2]), _vi("ys", [3, 2])],
        [_init("s0", np.zeros(2, np.float32))], opset=16)
    w = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[4, 4])
    w.data_location = TensorProto.EXTERNAL
    for k, v in [("location", "w.bin"), ("offset", "0"), ("length", "64")]:
        e = w.external_data.add()
        e.key, e.value = k, v
    external = _model([helper.make_node("MatMul", ["x", "w"], ["y"])],
                      [_vi("x", [2, 4])], [_vi("y", [2, 4])], [w])
    return {"legacy7": legacy, "decomposed9": decomposed, "lstm": lstm, "scan": scan,
            "external": external}


def states_files(folder):
    from singa import _singa, tensor
    rng = np.random.default_rng(2)
    files = {
        "linear": {"fc.W": rng.standard_normal((4, 3)).astype(np.float32),
                   "fc.b": np.zeros(3, np.float32)},
        "mixed": {"bn.running_mean": np.zeros(8, np.float32), "step": np.array(7, np.int64),
                  "half": np.ones((2, 2), np.float16), "mask": np.array([True, False]),
                  "aux:epoch": np.array([3], np.int32), "odd \"name\"\n": np.ones(1)},
        "empty": {},
        "scalar": {"s": np.array(1.5, np.float64)},
    }
    for name, arrays in files.items():
        states = {k: tensor.from_numpy(v).data for k, v in arrays.items() if not k.startswith("aux:")}
        aux = {k[4:]: tensor.from_numpy(v).data for k, v in arrays.items() if k.startswith("aux:")}
        _singa.nn.save_states_file(os.path.join(folder, name + ".zip"), states, aux)


def npy_files(folder):
    arrays = {
        "f32": np.arange(12, dtype=np.float32).reshape(3, 4),
        "f16": np.ones(5, np.float16), "i64": np.arange(4, dtype=np.int64),
        "u8": np.arange(6, dtype=np.uint8).reshape(2, 3), "bool": np.array([True, False]),
        "fortran": np.asfortranarray(np.arange(6, dtype=np.float64).reshape(2, 3)),
        "scalar": np.array(2.5, np.float32), "empty": np.zeros((0, 3), np.float32),
        "unicode": np.array(["ab", "c"]), "big_endian": np.arange(3, dtype=">i4"),
        "complex": np.array([1 + 2j], np.complex64),
    }
    for name, a in arrays.items():
        np.save(os.path.join(folder, name + ".npy"), a)
    np.savez(os.path.join(folder, "stored.npz"), x=arrays["f32"], m=arrays["bool"])
    np.savez_compressed(os.path.join(folder, "deflated.npz"), x=arrays["f32"], i=arrays["i64"])
    buf = io.BytesIO()
    np.save(buf, arrays["f32"])
    header_v2 = buf.getvalue().replace(b"\x93NUMPY\x01\x00", b"\x93NUMPY\x02\x00", 1)
    with open(os.path.join(folder, "version2.npy"), "wb") as f:  # a v1 header read as v2
        f.write(header_v2)


NPY_WORDS = [b"\x93NUMPY", b"descr", b"fortran_order", b"shape", b"True", b"False", b"<f4",
             b"<f2", b"<f8", b"<i8", b"<i4", b"|u1", b"|b1", b"<U3", b">i4", b"<c8",
             b"PK\x03\x04", b"PK\x01\x02", b"PK\x05\x06", b"PK\x06\x06", b"PK\x06\x07", b".npy"]
STATES_WORDS = [b"SINGAST1", b"aux:", b"\xff\xff\xff\xff", b"\x00\x00\x00\x00\x00\x00\x00\x80",
                b"PK\x03\x04", b"PK\x01\x02", b"PK\x05\x06", b"tensor_dict.npz",
                b"states_attr.json", b'"state_type"', b'"shape"', b'"dtype"', b"\\u00"]
MODEL_WORDS = [b"ai.onnx", b"ai.onnx.ml", b"com.microsoft", b"external_data", b"location",
               b"offset", b"length", b"w.bin", b"../w.bin", b"dim_param", b"N",
               b"\xff\xff\xff\xff\xff\xff\xff\xff\x01"]  # varint -1


def dictionaries(folder):
    """libFuzzer dictionaries: the words each format is made of."""
    from singa import _singa
    names = set()
    for schema in _singa.op_schemas():
        names.add(schema.name)
        names.update(schema.attributes)
    model = MODEL_WORDS + [n.encode() for n in sorted(names)]
    for kind, words in (("model", model), ("states", STATES_WORDS), ("npy", NPY_WORDS)):
        with open(os.path.join(folder, kind + ".dict"), "w") as f:
            f.write("# written by tools/fuzz/make_corpus.py\n")
            for w in words:
                f.write('"' + "".join(chr(b) if 32 <= b < 127 and b not in b'"\\' else f"\\x{b:02x}"
                                      for b in w) + '"\n')


def main():
    for kind in ("model", "states", "npy"):
        folder = os.path.join(CORPUS, kind)
        os.makedirs(folder, exist_ok=True)
        for f in os.listdir(folder):
            os.remove(os.path.join(folder, f))
    for name, m in {**seeds(), **more_models()}.items():
        with open(os.path.join(CORPUS, "model", name + ".onnx"), "wb") as f:
            f.write(m.SerializeToString())
    states_files(os.path.join(CORPUS, "states"))
    npy_files(os.path.join(CORPUS, "npy"))
    dictionaries(os.path.join(CORPUS, ".."))


if __name__ == "__main__":
    main()
