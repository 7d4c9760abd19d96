"""RNN, GRU and LSTM attributes onnx's reference evaluator ignores
(sequence_lens, clip, activations with alpha/beta, input_forget), checked
against onnxruntime on one-node models; and an empty sequence."""
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from singa import _singa
from op_harness import to_numpy, to_singa

SEQ, BATCH, IN, H = 5, 3, 4, 6
GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
N_OUT = {"RNN": 2, "GRU": 2, "LSTM": 3}


def _inputs(op, dirs, rng, lens=None):
    g = GATES[op]
    ins = [rng.uniform(-1, 1, (SEQ, BATCH, IN)).astype(np.float32),
           rng.uniform(-0.6, 0.6, (dirs, g * H, IN)).astype(np.float32),
           rng.uniform(-0.6, 0.6, (dirs, g * H, H)).astype(np.float32),
           rng.uniform(-0.5, 0.5, (dirs, 2 * g * H)).astype(np.float32),
           np.array(lens if lens is not None else [SEQ] * BATCH, dtype=np.int32),
           rng.uniform(-1, 1, (dirs, BATCH, H)).astype(np.float32)]
    if op == "LSTM":
        ins += [rng.uniform(-1, 1, (dirs, BATCH, H)).astype(np.float32),
                rng.uniform(-0.5, 0.5, (dirs, 3 * H)).astype(np.float32)]
    return ins


def _ort(op, ins, attrs):
    names = [f"i{k}" for k in range(len(ins))]
    outs = [f"o{k}" for k in range(N_OUT[op])]
    node = helper.make_node(op, names, outs, **attrs)
    vi = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
          for n, a in zip(names, ins)]
    graph = helper.make_graph([node], "g", vi, [helper.make_tensor_value_info(
        o, TensorProto.FLOAT, None) for o in outs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 8
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, dict(zip(names, ins)))


ROWS = [
    ("RNN", {"direction": "forward"}, [5, 2, 4]),
    ("RNN", {"direction": "reverse"}, [5, 2, 4]),
    ("RNN", {"direction": "bidirectional"}, [1, 5, 3]),
    ("GRU", {"direction": "forward"}, [5, 2, 4]),
    ("GRU", {"direction": "bidirectional", "linear_before_reset": 1}, [3, 5, 1]),
    ("GRU", {"direction": "bidirectional"}, [4, 5, 2]),
    ("LSTM", {"direction": "forward"}, [5, 2, 4]),
    ("LSTM", {"direction": "bidirectional"}, [2, 5, 3]),
    ("RNN", {"clip": 0.3}, None),
    ("GRU", {"clip": 0.3, "direction": "reverse"}, None),
    ("LSTM", {"clip": 0.3}, None),
    ("RNN", {"activations": ["Relu"]}, None),
    ("RNN", {"activations": ["LeakyRelu", "ScaledTanh"], "activation_alpha": [0.2, 0.7],
             "activation_beta": [1.3], "direction": "bidirectional"}, None),
    ("GRU", {"activations": ["HardSigmoid", "Softsign"], "activation_alpha": [0.3],
             "activation_beta": [0.4]}, None),
    ("LSTM", {"activations": ["Sigmoid", "Elu", "Softplus"], "activation_alpha": [0.8]}, None),
    ("LSTM", {"input_forget": 1}, None),
]


@pytest.mark.parametrize("op,attrs,lens", ROWS, ids=lambda v: str(v))
@pytest.mark.parametrize("reference", [False, True])
def test_against_onnxruntime(op, attrs, lens, reference):
    rng = np.random.default_rng(7)
    dirs = 2 if attrs.get("direction") == "bidirectional" else 1
    ins = _inputs(op, dirs, rng, lens)
    attrs = dict(attrs, hidden_size=H)
    want = _ort(op, ins, attrs)
    got = _singa.call_op(op, [to_singa(a) for a in ins], attrs, 14, N_OUT[op], reference)
    for k, (g, w) in enumerate(zip(got, want)):
        # float32 over a few steps of GEMM and transcendental round-off.
        np.testing.assert_allclose(to_numpy(g), w, rtol=1e-4, atol=1e-5, err_msg=f"output {k}")


@pytest.mark.parametrize("op", ["RNN", "GRU", "LSTM"])
def test_a_bidirectional_layer_gives_the_same_bits_on_one_thread_and_two(op):
    """The fast kernel runs the two directions on a thread each, each on
    scratch of its own: the results are those of running them in turn. (Big
    enough for two threads: an op on less than 32 KiB runs on one.)"""
    rng = np.random.default_rng(5)
    seq, batch, n_in, hidden, g = 40, 2, 64, 32, GATES[op]
    ins = [to_singa(rng.uniform(-0.5, 0.5, shape).astype(np.float32)) for shape in
           [(seq, batch, n_in), (2, g * hidden, n_in), (2, g * hidden, hidden),
            (2, 2 * g * hidden)]]
    attrs = {"direction": "bidirectional", "hidden_size": hidden}
    threads = _singa.get_num_threads()
    try:
        runs = []
        for n in (1, 2):
            _singa.set_num_threads(n)
            runs.append([to_numpy(t) for t in _singa.call_op(op, ins, attrs, 14, N_OUT[op],
                                                              False)])
    finally:
        _singa.set_num_threads(threads)
    for k, (one, two) in enumerate(zip(*runs)):
        np.testing.assert_array_equal(one, two, err_msg=f"output {k}")


@pytest.mark.parametrize("op", ["RNN", "GRU", "LSTM"])
def test_empty_sequence_keeps_the_initial_state(op):
    rng = np.random.default_rng(3)
    ins = _inputs(op, 1, rng)
    ins[0] = ins[0][:0]
    ins[4] = None
    got = _singa.call_op(op, [to_singa(a) for a in ins], {}, 14, N_OUT[op], False)
    assert to_numpy(got[0]).shape == (0, 1, BATCH, H)
    np.testing.assert_array_equal(to_numpy(got[1]), ins[5])
    if op == "LSTM":
        np.testing.assert_array_equal(to_numpy(got[2]), ins[6])


@pytest.mark.parametrize("op", ["RNN", "GRU", "LSTM"])
def test_opset1_matches_opset7(op):
    # onnx's reference evaluator has no opset-1 recurrent kernels.
    rng = np.random.default_rng(11)
    ins = [to_singa(a) for a in _inputs(op, 1, rng)]
    old = _singa.call_op(op, ins, {"output_sequence": 1}, 1, N_OUT[op], False)
    new = _singa.call_op(op, ins, {}, 7, N_OUT[op], False)
    for a, b in zip(old, new):
        np.testing.assert_array_equal(to_numpy(a), to_numpy(b))
