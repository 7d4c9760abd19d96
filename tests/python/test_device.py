"""singa.device: the CPU device, clear errors for CUDA/OpenCL, graph capture and
replay, random seeds, memory statistics and threads."""
import numpy as np
import pytest

from singa import device, tensor


def test_cpu_device_is_the_default():
    dev = device.create_cpu_device()
    assert dev == device.get_default_device()
    assert dev.type == device.DeviceType.cpu
    assert dev.id() == 0
    assert "cpu" in repr(dev)
    assert tensor.Tensor((2,)).device == dev


@pytest.mark.parametrize("make", [
    device.create_cuda_gpu,
    lambda: device.create_cuda_gpu_on(0),
    lambda: device.create_cuda_gpu_on(1),
    lambda: device.create_cuda_gpus(2),
    lambda: device.create_cuda_gpus_on([0, 1]),
])
@pytest.mark.skipif(device.get_num_gpus() > 0, reason="this machine has a GPU")
def test_cuda_request_without_a_gpu_says_so(make):
    with pytest.raises(NotImplementedError, match="CUDA"):
        make()


def test_cuda_request_past_the_last_gpu_says_how_many():
    with pytest.raises(NotImplementedError, match="CUDA"):
        device.create_cuda_gpu_on(device.get_num_gpus())


def test_opencl_request_says_this_build_has_no_opencl():
    with pytest.raises(NotImplementedError, match="OpenCL"):
        device.create_opencl_device()


def test_gpu_count_is_a_count():
    assert isinstance(device.get_num_gpus(), int) and device.get_num_gpus() >= 0


def test_lazy_alloc_flag():
    device.enable_lazy_alloc(False)
    assert not device.lazy_alloc_enabled()
    device.enable_lazy_alloc(True)
    assert device.lazy_alloc_enabled()


@pytest.mark.parametrize("name", ["EnableGraph", "RunGraph", "ResetGraph", "Sync", "SetRandSeed",
                                  "SetVerbosity", "graph_enabled", "enable_graph", "run_graph",
                                  "reset_graph", "sync", "set_rand_seed", "set_verbosity"])
def test_documented_and_snake_case_methods_exist(name):
    assert callable(getattr(device.get_default_device(), name))


def test_graph_capture_and_replay():
    dev = device.get_default_device()
    a = tensor.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3))
    b = tensor.from_numpy(np.ones((2, 3), np.float32))
    dev.ResetGraph()
    dev.EnableGraph(True)
    try:
        assert dev.graph_enabled()
        c = a + b
        d = c * 2.0
    finally:
        dev.EnableGraph(False)
    assert not dev.graph_enabled()
    assert dev.graph_size() >= 2
    dev.RunGraph()
    dev.Sync()
    np.testing.assert_array_equal(tensor.to_numpy(d), (np.arange(6).reshape(2, 3) + 1) * 2)
    # Replay reads the inputs' current values.
    a.copy_from_numpy(np.full((2, 3), 10, np.float32))
    dev.RunGraph(True)
    np.testing.assert_array_equal(tensor.to_numpy(d), np.full((2, 3), 22))
    dev.ResetGraph()
    assert dev.graph_size() == 0


def test_set_verbosity_accepts_a_level():
    dev = device.get_default_device()
    dev.SetVerbosity(1)
    dev.SetVerbosity(0)


def test_seeded_random_is_reproducible():
    dev = device.get_default_device()

    def draw(seed):
        dev.SetRandSeed(seed)
        t = tensor.Tensor((4, 5))
        t.gaussian(0.0, 1.0)
        u = tensor.Tensor((7,), dtype=tensor.float64).uniform(-1, 1)
        m = tensor.Tensor((9,), dtype=tensor.int32).bernoulli(0.5)
        return [tensor.to_numpy(x).copy() for x in (t, u, m)]

    first, again, other = draw(7), draw(7), draw(8)
    for x, y in zip(first, again):
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(first[0], other[0])
    dev.set_rand_seed(7)  # the snake_case alias seeds the same generator
    np.testing.assert_array_equal(tensor.Tensor((4, 5)).gaussian(0, 1).numpy(), first[0])


def test_memory_stats_follow_tensors():
    dev = device.get_default_device()
    nbytes = 1 << 20
    before = device.current_memory(dev)
    t = tensor.zeros((nbytes // 4,))  # written, so allocated
    during = device.current_memory()
    assert during - before >= nbytes
    assert device.peak_memory() >= during
    stats = device.memory_stats()
    assert stats.current_bytes == during and stats.num_mallocs > 0
    del t
    after = device.current_memory()
    assert during - after >= nbytes
    device.reset_peak_memory()
    assert device.peak_memory() == device.current_memory()
    device.empty_cache()
    assert device.memory_stats().cached_bytes == 0
    # The Device methods report the same numbers.
    assert dev.mem_stats().current_bytes == device.current_memory()


def test_unwritten_tensor_is_not_allocated():
    # Memory is allocated on first access (SINGA's lazy allocation); a
    # Tensor made without data holds zeros, so only `empty` stays unwritten.
    before = device.current_memory()
    t = tensor.empty((1 << 18,))
    assert device.current_memory() == before
    t.set_value(1.0)
    assert device.current_memory() > before


def test_threads():
    n = device.get_num_threads()
    assert n >= 1
    device.set_num_threads(1)
    assert device.get_num_threads() == 1
    device.set_num_threads(n)
    assert device.get_num_threads() == n


def test_scalar_operand_created_during_capture_is_not_reused_eagerly():
    dev = device.get_default_device()
    a = tensor.from_numpy(np.ones(3, np.float32))
    dev.EnableGraph(True)
    try:
        b = a * 0.125  # the 0-d operand's fill is only recorded here
    finally:
        dev.EnableGraph(False)
    np.testing.assert_array_equal(tensor.to_numpy(a * 0.125), np.full(3, 0.125))
    dev.RunGraph()
    np.testing.assert_array_equal(tensor.to_numpy(b), np.full(3, 0.125))
    dev.ResetGraph()
