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
"""
from . import _singa
from .tensor import Tensor, _ct, _wrap

_o = _singa.opt

Constant = _o.Constant
ExponentialDecay = _o.ExponentialDecay
DecayScheduler = _o.Scheduler


def _lr(lr):
    """(float lr, scheduler or None) from a number or a scheduler."""
    if isinstance(lr, _o.Scheduler):
        return lr(0), lr
    return float(lr), None


class Optimizer:
    """Base of the optimizers: `self.impl` is the C++ optimizer."""

    def __init__(self, impl):
        self.impl = impl

    def __call__(self, loss):
        self.backward_and_update(loss)

    def backward_and_update(self, loss):
        """Backward from loss, updating each parameter as soon as its
        gradient is complete, then one step()."""
        self.impl.backward_and_update(_ct(loss))

    def update(self, param, grad):
        self.impl.update(_ct(param), _ct(grad))

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
                                bool(nesterov), sched))


class RMSProp(Optimizer):
    def __init__(self, lr=0.1, rho=0.9, epsilon=1e-8, weight_decay=0, dtype=None):
        value, sched = _lr(lr)
        super().__init__(_o.RMSProp(value, float(rho), float(epsilon), float(weight_decay), sched))


class AdaGrad(Optimizer):
    def __init__(self, lr=0.1, epsilon=1e-8, weight_decay=0, dtype=None):
        value, sched = _lr(lr)
        super().__init__(_o.AdaGrad(value, float(epsilon), float(weight_decay), sched))


class Adam(Optimizer):
    def __init__(self, lr=1e-3, beta_1=0.9, beta_2=0.999, epsilon=1e-8, weight_decay=0,
                 dtype=None):
        value, sched = _lr(lr)
        super().__init__(_o.Adam(value, float(beta_1), float(beta_2), float(epsilon),
                                 float(weight_decay), sched))
