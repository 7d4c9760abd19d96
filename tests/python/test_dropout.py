"""Dropout's training path, which the op table cannot check against the
evaluator (its mask is random): the fraction dropped, the scaling, the
backward's use of the forward's mask, seeding, and a new mask on every
replay of a captured graph."""
import ml_dtypes
import numpy as np
import pytest

from singa import _singa
from op_harness import to_numpy, to_singa


def _dropout(x, ratio, training=True, num_outputs=2, attrs=None, opset=_singa.LATEST_OPSET):
    inputs = [x, to_singa(np.array(ratio, np.float32)), to_singa(np.array(training))]
    return _singa.call_op("Dropout", inputs, attrs or {}, opset, num_outputs)


def test_training_drops_a_ratio_and_scales_the_rest():
    rng = np.random.default_rng(0)
    a = rng.uniform(1, 2, size=(200, 500)).astype(np.float32)
    y, mask = (to_numpy(t) for t in _dropout(to_singa(a), 0.3))
    assert mask.dtype == np.bool_
    # 100,000 Bernoulli(0.3) draws: the dropped fraction has standard
    # deviation 0.00145, so 0.01 is about 7 of them.
    assert abs(1 - mask.mean() - 0.3) < 0.01
    np.testing.assert_allclose(y, np.where(mask, a / np.float32(0.7), 0), rtol=1e-6)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64"])
def test_training_other_float_dtypes(dtype):
    nd = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "float64": np.float64}[dtype]
    a = np.random.default_rng(1).uniform(1, 2, size=(50, 40)).astype(nd)
    y, mask = (to_numpy(t) for t in _dropout(to_singa(a), 0.5))
    assert y.dtype == a.dtype
    assert 0.4 < mask.mean() < 0.6
    want = np.where(mask, a.astype(np.float64) * 2, 0).astype(nd)  # *2 is exact
    np.testing.assert_array_equal(y.astype(np.float64), want.astype(np.float64))


def test_training_float8():
    a = np.random.default_rng(2).uniform(1, 2, size=(30, 30)).astype(ml_dtypes.float8_e4m3fn)
    y, mask = (to_numpy(t) for t in _dropout(to_singa(a), 0.5))
    want = np.where(mask, a.astype(np.float32) * 2, 0)  # *2 is exact in float8 too
    np.testing.assert_array_equal(y.astype(np.float32), want)


def test_ratio_zero_and_inference_are_identity():
    a = np.random.default_rng(3).standard_normal((10, 10)).astype(np.float32)
    for ratio, training in [(0.0, True), (0.9, False)]:
        y, mask = (to_numpy(t) for t in _dropout(to_singa(a), ratio, training))
        np.testing.assert_array_equal(y, a)
        assert mask.all()


def test_default_ratio_is_one_half():
    a = np.ones((100, 100), np.float32)
    inputs = [to_singa(a), None, to_singa(np.array(True))]
    y, mask = (to_numpy(t) for t in _singa.call_op("Dropout", inputs, {}, 22, 2))
    assert abs(mask.mean() - 0.5) < 0.02  # 10,000 draws: 0.02 is 4 standard deviations
    np.testing.assert_array_equal(y, np.where(mask, 2.0, 0.0))


@pytest.mark.parametrize("num_outputs", [1, 2])
def test_backward_uses_the_forward_mask(num_outputs):
    rng = np.random.default_rng(4)
    a = rng.uniform(1, 2, size=(20, 30))
    x = to_singa(a)
    x.stores_grad = True
    outs = _dropout(x, 0.4, num_outputs=num_outputs)
    assert len(outs) == num_outputs
    y = outs[0]
    w = rng.standard_normal(a.shape)
    (p, g), = _singa.backward(y, to_singa(w))
    assert p.same_tensor(x)
    kept = to_numpy(y) != 0  # a > 0, so exactly the kept elements are nonzero
    if num_outputs == 2:
        np.testing.assert_array_equal(to_numpy(outs[1]), kept)
    scale = 1 / (1 - float(np.float32(0.4)))  # the ratio input is float32
    np.testing.assert_allclose(to_numpy(g), np.where(kept, w * scale, 0), rtol=1e-12)


def test_backward_in_inference_passes_the_gradient():
    a = np.random.default_rng(5).standard_normal((4, 5))
    x = to_singa(a)
    x.stores_grad = True
    y = _dropout(x, 0.4, training=False, num_outputs=1)[0]
    w = np.random.default_rng(6).standard_normal(a.shape)
    (_, g), = _singa.backward(y, to_singa(w))
    np.testing.assert_array_equal(to_numpy(g), w)


def test_seed_attribute_repeats_the_mask():
    a = to_singa(np.ones((50, 50), np.float32))
    m1 = to_numpy(_dropout(a, 0.5, attrs={"seed": 11})[1])
    m2 = to_numpy(_dropout(a, 0.5, attrs={"seed": 11})[1])
    m3 = to_numpy(_dropout(a, 0.5, attrs={"seed": 12})[1])
    np.testing.assert_array_equal(m1, m2)
    assert (m1 != m3).any()


def test_device_seed_reproduces_and_draws_advance():
    dev = _singa.Device.cpu()
    a = to_singa(np.ones((50, 50), np.float32))
    dev.set_rand_seed(7)
    m1 = to_numpy(_dropout(a, 0.5)[1])
    m2 = to_numpy(_dropout(a, 0.5)[1])
    dev.set_rand_seed(7)
    m3 = to_numpy(_dropout(a, 0.5)[1])
    assert (m1 != m2).any()
    np.testing.assert_array_equal(m1, m3)


def test_graph_replay_draws_a_new_mask():
    dev = _singa.Device.cpu()
    a = to_singa(np.ones((40, 40), np.float32))
    dev.reset_graph()
    dev.enable_graph(True)
    try:
        y, mask = _dropout(a, 0.5)
    finally:
        dev.enable_graph(False)
    masks = []
    for _ in range(2):
        dev.run_graph()
        masks.append(to_numpy(mask).copy())
        np.testing.assert_array_equal(to_numpy(y), np.where(masks[-1], 2.0, 0.0))
    dev.reset_graph()
    assert (masks[0] != masks[1]).any()


def test_opset7_mask_has_the_data_type():
    a = np.random.default_rng(8).standard_normal((3, 4)).astype(np.float32)
    y, mask = _singa.call_op("Dropout", [to_singa(a)], {"ratio": 0.3}, 7, 2)
    np.testing.assert_array_equal(to_numpy(y), a)
    m = to_numpy(mask)
    assert m.dtype == np.float32 and (m == 1).all()
