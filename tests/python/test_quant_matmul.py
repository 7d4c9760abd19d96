"""MatMulInteger and QLinearMatMul with per-row zero points and scales of a
(1-D, one per row, as the spec says), which onnx's reference evaluator
broadcasts along the wrong axis: checked against numpy here."""
import numpy as np

from singa import _singa
from op_harness import to_numpy, to_singa


def test_matmul_integer_per_row_zero_point():
    rng = np.random.default_rng(2)
    a = rng.integers(0, 256, (3, 4)).astype(np.uint8)
    b = rng.integers(-128, 128, (4, 5)).astype(np.int8)
    za = np.array([3, 100, 7], np.uint8)
    zb = np.array([1, -2, 3, -4, 5], np.int8)
    got = to_numpy(_singa.call_op("MatMulInteger", [to_singa(x) for x in (a, b, za, zb)], {},
                                  10, 1, False)[0])
    want = (a.astype(np.int32) - za[:, None]) @ (b.astype(np.int32) - zb[None, :])
    np.testing.assert_array_equal(got, want)


def test_qlinear_matmul_per_row_scale():
    rng = np.random.default_rng(3)
    a = rng.integers(0, 256, (3, 4)).astype(np.uint8)
    b = rng.integers(0, 256, (4, 2)).astype(np.uint8)
    sa = np.array([0.01, 0.02, 0.03], np.float32)
    za = np.array([10, 20, 30], np.uint8)
    sb, zb = np.float32(0.05), np.uint8(128)
    sy, zy = np.float32(0.2), np.uint8(100)
    ins = [a, sa, za, b, np.array(sb), np.array(zb), np.array(sy), np.array(zy)]
    got = to_numpy(_singa.call_op("QLinearMatMul", [to_singa(x) for x in ins], {}, 21, 1,
                                  False)[0])
    acc = (a.astype(np.int32) - za[:, None].astype(np.int32)) @ (b.astype(np.int32) - int(zb))
    factor = ((sa * sb) / sy).astype(np.float32)[:, None]
    want = np.clip(np.rint(acc * factor.astype(np.float64) + int(zy)), 0, 255).astype(np.uint8)
    np.testing.assert_array_equal(got, want)
