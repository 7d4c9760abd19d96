"""singa.opt: SINGA's optimizers over the C++ ones (singa._singa.opt).

    sgd = opt.SGD(lr=0.05, momentum=0.9, weight_decay=1e-5)
    sgd.backward_and_update(loss)            # or: sgd(loss)
    for p, g in autograd.backward(loss):     # or by hand
        sgd.update(p, g)
    sgd.step()
    lr = opt.ExponentialDecay(0.1, decay_steps=100, decay_rate=0.9)
    adam = opt.Adam(lr=lr)

Updates run in C++ as one fused pass per parameter (recorded like any op in
graph mode); the learning rate is the scheduler's value at the step count.

dtype (SGD, RMSProp, AdaGrad, Adam): the dtype of the optimizer's states
(momentum, running averages) and of the update arithmetic. None (the
default) uses each parameter's own dtype, which must then be float32 or
float64. With float32 or float64, a parameter of another floating type
(float16, bfloat16, or float32 under float64) is copied into a tensor of
that dtype for each update, its gradient cast the same way, and the result
cast back: its states keep the precision that 16-bit values would lose.
SINGA's half-precision scripts pass the model's dtype, tensor.float16:
a 16-bit dtype means float32 states (the update kernels are float32 and
float64).

    adam = opt.Adam(lr=1e-3, dtype=tensor.float32)   # float16 parameters, float32 states
"""
from . import _singa
from .tensor import DType, Tensor, _ct, _to_dtype, _wrap

_o = _singa.opt

Constant = _o.Constant
ExponentialDecay = _o.ExponentialDecay
DecayScheduler = _o.Scheduler


def _lr(lr):
    """(float lr, scheduler or None) from a number or a scheduler."""
    if isinstance(lr, _o.Scheduler):
        return lr(0), lr
    return float(lr), None


def _state_dtype(dtype, who):
    """The states' DType for an optimizer's dtype argument (None: each
    parameter's own)."""
    if dtype is None:
        return None
    dt = _to_dtype(dtype)
    if dt in (DType.float16, DType.bfloat16):
        return DType.float32
    if dt not in (DType.float32, DType.float64):
        raise ValueError(f"{who}: dtype must be a floating type (float32 or float64 for the "
                         f"states, or a 16-bit one, which keeps float32 states), got "
                         f"{_singa.dtype_name(dt)}")
    return dt


class Optimizer:
    """Base of the optimizers: `self.impl` is the C++ optimizer; `dtype` the
    dtype of the states (see the module documentation)."""

    def __init__(self, impl, dtype=None):
        self.impl = impl
        self.dtype = _state_dtype(dtype, type(self).__name__)
        # name -> [(parameter, its copy in self.dtype)]: the copies keep
        # their identity, which the C++ optimizer keys the states by.
        self._copies = {}

    def __call__(self, loss):
        self.backward_and_update(loss)

    def backward_and_update(self, loss):
        """Backward from loss, updating each parameter as soon as its
        gradient is complete, then one step()."""
        if self.dtype is None:
            self.impl.backward_and_update(_ct(loss))
            return
        for p, g in _singa.backward(_ct(loss), None):
            self.update(p, g)
        self.step()

    def update(self, param, grad):
        p, g = _ct(param), _ct(grad)
        if self.dtype is None or p.dtype == self.dtype:
            self.impl.update(p, g)
            return
        work = self._copy_of(p)
        work.copy_from(p)
        self.impl.update(work, g.astype(self.dtype))
        p.copy_from(work)

    def _copy_of(self, p):
        """The tensor of self.dtype through which p is updated, made on first use."""
        entries = self._copies.setdefault(p.name, [])
        for q, work in entries:
            if q.same_tensor(p):
                return work
        # Made now even while a graph-mode step is being captured: it lives
        # across steps, as the states do.
        dev = p.device
        capturing = dev.graph_enabled()
        dev.EnableGraph(False)
        try:
            work = p.astype(self.dtype)
        finally:
            dev.EnableGraph(capturing)
        work.name = p.name
        entries.append((p, work))
        return work

    def apply(self, param_name, param_value, param_grad):
        """SINGA 3's name for update (the name is the parameter's own)."""
        self.update(param_value, param_grad)

    def step(self):
        self.impl.step()

    @property
    def step_counter(self):
        return self.impl.step_count

    @property
    def lr_value(self):
        return self.impl.learning_rate

    def get_states(self):
        return {k: _wrap(v) for k, v in self.impl.get_states().items()}

    def set_states(self, states):
        self.impl.set_states({k: _ct(v if isinstance(v, Tensor) else Tensor(data=v))
                              for k, v in states.items()})


class SGD(Optimizer):
    def __init__(self, lr=0.1, momentum=0, dampening=0, weight_decay=0, nesterov=False,
                 dtype=None):
        value, sched = _lr(lr)
        super().__init__(_o.SGD(value, float(momentum), float(dampening), float(weight_decay),
                                bool(nesterov), sched), dtype)


class RMSProp(Optimizer):
    def __init__(self, lr=0.1, rho=0.9, epsilon=1e-8, weight_decay=0, dtype=None):
        value, sched = _lr(lr)
        super().__init__(_o.RMSProp(value, float(rho), float(epsilon), float(weight_decay), sched),
                         dtype)


class AdaGrad(Optimizer):
    def __init__(self, lr=0.1, epsilon=1e-8, weight_decay=0, dtype=None):
        value, sched = _lr(lr)
        super().__init__(_o.AdaGrad(value, float(epsilon), float(weight_decay), sched), dtype)


class Adam(Optimizer):
    def __init__(self, lr=1e-3, beta_1=0.9, beta_2=0.999, epsilon=1e-8, weight_decay=0,
                 dtype=None):
        value, sched = _lr(lr)
        super().__init__(_o.Adam(value, float(beta_1), float(beta_2), float(epsilon),
                                 float(weight_decay), sched), dtype)


class DistOpt(Optimizer):
    """Data-parallel training over MPI around any optimizer (SINGA's DistOpt).

        sgd = opt.DistOpt(opt.SGD(lr=0.05, momentum=0.9))
        x_mine = x[sgd.global_rank::sgd.world_size]      # this rank's share
        ...
        sgd.backward_and_update(loss)                    # averaged gradients

    Launch with `mpirun -np N python script.py`; started without mpirun the
    world has one rank. The rank and world size come from MPI: local_rank
    and world_size, when given, are checked against it. nccl_id belongs to
    SINGA's NCCL build and is not used here (MPI needs no id). buffSize is
    the number of float32 elements of one fused message. The wrapped
    optimizer's dtype is not applied: each parameter is updated in its own
    dtype (float32 or float64). A collective that waits longer than
    SINGA_DIST_TIMEOUT seconds (default 300) raises: a peer died or stopped
    taking part; the job then aborts at exit.
    """

    def __init__(self, opt=None, nccl_id=None, local_rank=None, world_size=None,
                 buffSize=4194304, timeout=None):
        if opt is None:
            opt = SGD()
        if not isinstance(opt, Optimizer) or isinstance(opt, DistOpt):
            raise TypeError(f"DistOpt wraps a singa.opt optimizer, got {type(opt).__name__}")
        if nccl_id is not None:
            raise ValueError("DistOpt: this build communicates over MPI; launch the processes "
                             "with mpirun instead of passing an NCCL id")
        super().__init__(opt.impl)
        self.opt = opt
        self.dist = _singa.dist.DistOpt(opt.impl, int(buffSize), float(timeout or 0.0))
        self.communicator = self.dist.communicator
        self.global_rank = self.dist.global_rank
        self.local_rank = self.dist.local_rank
        self.world_size = self.dist.world_size
        if world_size is not None and int(world_size) != self.world_size:
            raise ValueError(f"DistOpt: world_size={world_size} but MPI started "
                             f"{self.world_size} process(es)")
        if local_rank is not None and int(local_rank) != self.local_rank:
            raise ValueError(f"DistOpt: local_rank={local_rank} but MPI gives this process "
                             f"local rank {self.local_rank}")

    def __call__(self, loss):
        self.backward_and_update(loss)

    def all_reduce(self, tensor):
        """Starts averaging tensor (float32) over the ranks in place; done at wait()."""
        self.communicator.all_reduce(_ct(tensor))

    def all_reduce_half(self, tensor):
        """all_reduce with float16 on the wire."""
        self.communicator.all_reduce_half(_ct(tensor))

    def fused_all_reduce(self, tensor, send=True):
        """Adds the tensors to the fused buffer; with send, starts averaging
        the buffer as one message (it also starts when buffSize is reached)."""
        self.communicator.fused_all_reduce([_ct(t) for t in _as_list(tensor)], bool(send))

    def fused_all_reduce_half(self, tensor, send=True):
        self.communicator.fused_all_reduce_half([_ct(t) for t in _as_list(tensor)], bool(send))

    def sparsification(self, tensor, accumulation, spars, topK):
        """Sparse averaging of tensor(s) with error feedback into accumulation
        (same shapes): see backward_and_sparse_update."""
        self.communicator.sparse_all_reduce([_ct(t) for t in _as_list(tensor)],
                                            [_ct(t) for t in _as_list(accumulation)],
                                            float(spars), bool(topK))

    def wait(self):
        """Completes every started reduction, writing the results back."""
        self.communicator.wait()

    def broadcast_params(self, params):
        """Rank 0's values of params (a list, or a Model's get_params() dict)
        on every rank. Parameters are also broadcast when first updated."""
        values = params.values() if isinstance(params, dict) else params
        self.dist.broadcast_params([_ct(p) for p in values])

    def backward_and_update(self, loss):
        """Backward; gradients are averaged over the ranks in fused buckets
        started while backward goes on, then every parameter is updated."""
        self.dist.backward_and_update(_ct(loss))

    def backward_and_update_half(self, loss):
        """backward_and_update with float16 gradients on the wire."""
        self.dist.backward_and_update_half(_ct(loss))

    def backward_and_partial_update(self, loss):
        """Local updates, then a rotating buffSize-element subset of the
        parameters is averaged over the ranks (SINGA's partial update)."""
        self.dist.backward_and_partial_update(_ct(loss))

    def backward_and_sparse_update(self, loss, spars=0.05, topK=False):
        """Sends only part of each gradient: with topK the fraction spars of
        largest entries, otherwise the entries with |g| >= spars. What is not
        sent accumulates locally and is added to the next step's gradient."""
        self.dist.backward_and_sparse_update(_ct(loss), float(spars), bool(topK))


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]
