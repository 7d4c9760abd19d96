"""singa: a deep-learning system with ONNX as its exchange format.

The C++ core is singa._singa; the modules here keep SINGA's documented
Python API (device, tensor, ...) on top of it."""
from . import _singa  # noqa: F401
from . import device  # noqa: F401
from . import tensor  # noqa: F401
from . import autograd  # noqa: F401,E402
from . import layer  # noqa: F401,E402
from . import model  # noqa: F401,E402
from . import opt  # noqa: F401,E402
