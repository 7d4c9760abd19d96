"""singa.device: where tensors live and ops run (SINGA's Python API).

The CPU is the default device. A build with CUDA (make setup CUDA=1) adds
the GPUs: `create_cuda_gpu()` is GPU 0, `get_num_gpus()` counts them, and
`Tensor.to_device(dev)` / `to_host()` move tensors; an op runs on the device
of its GPU inputs. Asking for a GPU that the build or the machine lacks, or
for OpenCL, raises NotImplementedError (a `_singa.UnsupportedOp`) saying which.

    from singa import device
    dev = device.get_default_device()
    dev.SetRandSeed(0)                    # seeds Tensor.gaussian/uniform/bernoulli
    dev.EnableGraph(True)                 # record ops instead of running them ...
    dev.EnableGraph(False)
    dev.RunGraph()                        # ... and replay the recording
    device.memory_stats(dev).peak_bytes   # bytes in use at the high-water mark

A Device is the C++ value `singa::Device` ({type, index}) itself, not a Python
wrapper: tensors report it without allocating a wrapper object. It carries
SINGA's capitalised method names (EnableGraph, RunGraph, ResetGraph, Sync,
SetRandSeed, SetVerbosity) and snake_case aliases (enable_graph, ...).
"""
from . import _singa

Device = _singa.Device
DeviceType = _singa.DeviceType
MemStats = _singa.MemStats
UnsupportedDevice = _singa.UnsupportedOp  # a NotImplementedError

_CPU = Device.cpu()
_lazy_alloc = True


def create_cpu_device():
    """The host CPU device (there is one; every call returns it)."""
    return _CPU


def get_default_device():
    """The device tensors are created on when none is given: the CPU."""
    return _CPU


def create_cuda_gpu():
    """GPU 0 (NotImplementedError without CUDA support or a GPU)."""
    return Device.cuda(0)


def create_cuda_gpu_on(device_id):
    """GPU `device_id` (NotImplementedError when there is no such GPU)."""
    return Device.cuda(int(device_id))


def create_cuda_gpus(num):
    """GPUs 0 .. num-1 (NotImplementedError when there are fewer)."""
    return [Device.cuda(i) for i in range(max(int(num), 1))]


def create_cuda_gpus_on(device_ids):
    """The GPUs of `device_ids` (NotImplementedError for one that is missing)."""
    return [Device.cuda(int(i)) for i in list(device_ids) or [0]]


def get_num_gpus():
    """Number of CUDA GPUs this process can use (0 without CUDA support)."""
    return Device.num_cuda_gpus()


def get_num_opencl_platforms():
    return 0


def get_num_opencl_devices():
    return 0


def create_opencl_device():
    """Raises NotImplementedError: this build has no OpenCL support."""
    return Device.opencl(0)


def enable_lazy_alloc(enable):
    """SINGA's switch for allocating tensor memory on first use. Memory here is
    always allocated on first access (so a recorded graph can plan it); the
    flag is kept for compatibility and reported by `lazy_alloc_enabled()`."""
    global _lazy_alloc
    _lazy_alloc = bool(enable)


def lazy_alloc_enabled():
    return _lazy_alloc


# ---- memory statistics (of the device's caching allocator) ----------------

def memory_stats(dev=None):
    """A MemStats snapshot: current_bytes, peak_bytes, cached_bytes,
    num_mallocs, num_os_allocs. Sizes are rounded up to the allocator's size
    classes."""
    return (dev or _CPU).mem_stats()


def memory_limit(nbytes, dev=None):
    """A context manager that bounds the memory a piece of work takes:

        with device.memory_limit(1 << 30):
            rep.run(x)          # SingaMemoryError (a MemoryError) past 1 GiB more

    Inside it, a tensor allocated on `dev` by this thread that would put the
    bytes in use more than `nbytes` above where they were on entry raises
    singa's MemoryError naming the sizes, before anything is allocated.
    `sonnx.prepare` and `SingaRep.run` take the same limit as memory_limit=."""
    return _singa.MemoryLimit(dev or _CPU, int(nbytes))


def current_memory(dev=None):
    """Bytes held by live tensors on `dev`."""
    return (dev or _CPU).mem_stats().current_bytes


def peak_memory(dev=None):
    """The most bytes held at once since the last `reset_peak_memory`."""
    return (dev or _CPU).mem_stats().peak_bytes


def reset_peak_memory(dev=None):
    (dev or _CPU).reset_peak_memory()


def empty_cache(dev=None):
    """Returns the allocator's cached (freed) memory to the OS."""
    (dev or _CPU).empty_cache()


# ---- threads (one pool: our loops and oneDNN share it) ---------------------

def set_num_threads(n):
    """Threads for intra-op parallelism; n <= 0 restores the default (the
    number of cores)."""
    _singa.set_num_threads(int(n))


def get_num_threads():
    return _singa.get_num_threads()


__all__ = [
    "Device", "DeviceType", "MemStats", "UnsupportedDevice", "create_cpu_device",
    "get_default_device", "create_cuda_gpu", "create_cuda_gpu_on", "create_cuda_gpus",
    "create_cuda_gpus_on", "get_num_gpus", "create_opencl_device", "enable_lazy_alloc",
    "memory_stats", "current_memory", "peak_memory", "reset_peak_memory", "empty_cache",
    "set_num_threads", "get_num_threads",
]
