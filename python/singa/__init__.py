"""singa: a deep-learning system with ONNX as its exchange format.

The C++ core is singa._singa; the modules here keep SINGA's documented
Python API (device, tensor, ...) on top of it.

Errors are singa's own classes, each also a built-in one: Error
(RuntimeError) for any singa failure; ShapeError, DTypeError and
InvalidModel (ValueError); UnsupportedOp (NotImplementedError); SingaIOError
(OSError); SingaMemoryError (MemoryError); Cancelled (RuntimeError)."""
from . import _singa  # noqa: F401
from ._singa import (Cancelled, DTypeError, Error, InvalidModel, ShapeError,  # noqa: F401
                     SingaIOError, SingaMemoryError, UnsupportedOp)

__version__ = _singa.__version__
from . import device  # noqa: F401
from . import tensor  # noqa: F401
from . import autograd  # noqa: F401,E402
from . import layer  # noqa: F401,E402
from . import model  # noqa: F401,E402
from . import opt  # noqa: F401,E402
