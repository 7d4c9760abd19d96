"""singa.tensor: SINGA's Python Tensor over the C++ singa::Tensor.

    import numpy as np
    from singa import tensor, device

    x = tensor.Tensor((2, 3))             # float32 on the default (CPU) device
    x.set_value(0.4)
    y = tensor.from_numpy(np.ones((2, 3), np.float32))
    y.uniform(-1, 1)                      # seeded by device.SetRandSeed
    z = x + y * 2                         # broadcasting; numbers act as 0-d tensors
    x += z                                # in place
    w = tensor.mult(x, y.transpose())     # matrix product -> (2, 2)
    a = tensor.to_numpy(w)                # zero-copy view of a contiguous tensor

A Tensor holds a C++ tensor (`_singa.CTensor`) in `.data`; its shape, dtype
and device are read from there. Math calls the registered ONNX ops by name
(`_singa.call_op("Exp", ...)`); + - * / use the binding's direct entry
points so that `a + b` costs one Python-level call. Views (reshape of a
contiguous tensor, transpose, basic slicing) share storage and copy nothing.

Differences from SINGA 3.x, where our design asks for them:
  * every ONNX element type exists (float16, bfloat16, float64, int8..uint64,
    bool, string, float8, int4, int2, ...); from_numpy keeps the array's dtype;
  * 0-d tensors are scalars (shape ()), and an empty tensor is one with a
    zero-sized dimension: is_empty() means "has no elements";
  * integer indexing drops the indexed axis (numpy's rule).
"""
import builtins
import math
import numbers

import numpy as np

from . import _singa
from .device import get_default_device

try:  # numpy has no bfloat16/float8/int4/int2: ml_dtypes provides them
    import ml_dtypes
except ImportError:  # pragma: no cover - ml_dtypes is a declared dependency
    ml_dtypes = None

CTensor = _singa.CTensor
DType = _singa.DType

# ---- dtypes ---------------------------------------------------------------
# Module attributes named like numpy's: tensor.float32, tensor.bfloat16, ...
for _name in DType.__members__ if hasattr(DType, "__members__") else ():
    globals()[_name] = getattr(DType, _name)
float16 = DType.float16
float32 = DType.float32
float64 = DType.float64
bfloat16 = DType.bfloat16
int8 = DType.int8
int16 = DType.int16
int32 = DType.int32
int64 = DType.int64
uint8 = DType.uint8
uint16 = DType.uint16
uint32 = DType.uint32
uint64 = DType.uint64
bool = DType.bool  # noqa: A001 - SINGA's name; the builtin is builtins.bool here
string = DType.string
complex64 = DType.complex64
complex128 = DType.complex128

# Types numpy lacks travel as same-size unsigned "carrier" arrays.
_SPECIAL = {}
if ml_dtypes is not None:
    for _name, _np in [("bfloat16", "bfloat16"), ("float8e4m3fn", "float8_e4m3fn"),
                       ("float8e4m3fnuz", "float8_e4m3fnuz"), ("float8e5m2", "float8_e5m2"),
                       ("float8e5m2fnuz", "float8_e5m2fnuz"), ("int4", "int4"),
                       ("uint4", "uint4"), ("float4e2m1", "float4_e2m1fn"),
                       ("float8e8m0", "float8_e8m0fnu"), ("uint2", "uint2"), ("int2", "int2")]:
        if hasattr(ml_dtypes, _np) and hasattr(DType, _name):
            _SPECIAL[getattr(DType, _name)] = np.dtype(getattr(ml_dtypes, _np))
_SPECIAL_BY_NP = {v: k for k, v in _SPECIAL.items()}
_CARRIER = {1: np.uint8, 2: np.uint16}
_STRING = DType.string

_new = object.__new__
_add, _sub, _mul, _div = _singa.add, _singa.sub, _singa.mul, _singa.div
_radd, _rsub, _rmul, _rdiv = _singa.radd, _singa.rsub, _singa.rmul, _singa.rdiv
_iadd, _isub, _imul, _idiv = _singa.iadd, _singa.isub, _singa.imul, _singa.idiv
_call_op = _singa.call_op


def _to_dtype(dt):
    """A DType from a DType, a name ('float32', and SINGA's 'int'/'float'),
    a numpy dtype or type (incl. ml_dtypes'), or an ONNX type code."""
    if isinstance(dt, DType):
        return dt
    if isinstance(dt, str):
        if dt == "int":
            return DType.int32
        if dt == "float":
            return DType.float32
        return _singa.dtype_from_name(dt)
    if isinstance(dt, builtins.bool):
        raise TypeError(f"not a dtype: {dt!r}")
    if isinstance(dt, numbers.Integral):
        return DType(int(dt))
    try:
        nd = np.dtype(dt)
    except TypeError:
        raise TypeError(f"not a dtype: {dt!r}") from None
    return _np_to_dtype(nd)


def _np_to_dtype(nd):
    if nd in _SPECIAL_BY_NP:
        return _SPECIAL_BY_NP[nd]
    if nd.kind in "OUS":
        return _STRING
    if nd == np.bool_:
        return DType.bool
    return _singa.dtype_from_name(nd.name)


def _np_dtype(dt):
    """The numpy dtype that holds `dt`'s values (object for strings)."""
    if dt in _SPECIAL:
        return _SPECIAL[dt]
    if dt == _STRING:
        return np.dtype(object)
    return np.dtype(_singa.dtype_name(dt))


def sizeof(dtype):
    """Bytes per element of `dtype`."""
    return _singa.dtype_size(_to_dtype(dtype))


def product(shape):
    """Number of elements of a shape (1 for the scalar shape ())."""
    return math.prod(shape)


# ---- numpy <-> CTensor ----------------------------------------------------

def _ctensor_from_numpy(arr, dtype=None):
    """A new CTensor with arr's values, of `dtype` (default: arr's dtype)."""
    arr = np.asarray(arr)
    if arr.dtype.kind in "OUS" and dtype is not None and dtype != _STRING:
        # Text into a number type: what numpy can parse, else an error (a
        # string never silently becomes 0).
        try:
            arr = arr.astype(_np_dtype(dtype))
        except (ValueError, TypeError) as e:
            raise _singa.DTypeError(f"Tensor: cannot convert text data to {_singa.dtype_name(dtype)}"
                                    f" ({e}); pass dtype=tensor.string to keep it text") from None
    if arr.dtype.kind in "OUS":
        values = [x.decode() if isinstance(x, bytes) else str(x) for x in arr.ravel()]
        ct = CTensor.from_strings(values, list(arr.shape))
        return ct if dtype is None or dtype == _STRING else ct.astype(dtype)
    if not arr.dtype.isnative:
        arr = arr.astype(arr.dtype.newbyteorder("="))
    src = _SPECIAL_BY_NP.get(arr.dtype)
    if src is not None:
        ct = CTensor.from_numpy(arr.view(_CARRIER[arr.dtype.itemsize]), _singa.dtype_name(src))
    else:
        ct = CTensor.from_numpy(arr)
    if dtype is not None and ct.dtype != dtype:
        ct = ct.astype(dtype)
    return ct


def _numpy_of(ct):
    """A numpy view of a CTensor (strings: an object array, a copy)."""
    dt = ct.dtype
    out = ct.numpy()
    if dt in _SPECIAL:
        return out.view(_SPECIAL[dt])
    if dt == _STRING:
        return np.array(out, dtype=object).reshape(ct.shape)
    return out


def _wrap(ct):
    """A Tensor over a CTensor (shared, not copied)."""
    t = _new(Tensor)
    t.data = ct
    return t


def _ct(x):
    """The CTensor of a Tensor argument (CTensors and None pass through)."""
    if isinstance(x, Tensor):
        return x.data
    if isinstance(x, (np.ndarray, np.generic, list)):
        raise TypeError(f"expected a singa Tensor, got {type(x).__module__}.{type(x).__name__} "
                        f"(tensor.from_numpy makes one)")
    return x


def _operand(x, like):
    """The second operand of a binary operator as the binding takes it: a
    CTensor, or a float (which the binding makes a 0-d tensor of like's
    dtype)."""
    tx = type(x)
    if tx is float or tx is int:
        return float(x)
    if isinstance(x, Tensor):
        return x.data
    if isinstance(x, (numbers.Real, np.bool_)):  # bool, numpy scalars, fractions...
        return float(x)
    if isinstance(x, (np.ndarray, list, tuple)):
        return _ctensor_from_numpy(np.asarray(x), like.dtype)
    if isinstance(x, CTensor):
        return x
    raise TypeError(f"unsupported operand type for a singa Tensor: {type(x).__name__}")


def _scalar_like(x, like):
    """A CTensor operand for ops without a number fast path: Tensors pass
    through, numbers become 0-d tensors of like's dtype."""
    x = _operand(x, like)
    if isinstance(x, float):
        return CTensor.full([], x, like.dtype, like.device)
    return x


def _int64s(values):
    return CTensor.from_numpy(np.asarray(values, dtype=np.int64).reshape(-1))


def _op(name, *inputs, **attrs):
    """Runs ONNX op `name` on Tensors/CTensors; returns the CTensor outputs."""
    return _call_op(name, [_ct(x) for x in inputs], attrs)


def _op1(name, *inputs, **attrs):
    return _wrap(_call_op(name, [_ct(x) for x in inputs], attrs)[0])


def _reduce(name, t, axis, keepdims):
    ct = _ct(t)
    if axis is None:
        axes = list(range(ct.ndim()))
    elif isinstance(axis, numbers.Integral):
        axes = [int(axis)]
    else:
        axes = [int(a) for a in axis]
    if not axes:  # ONNX reads empty axes as "all"; a 0-d input has none to reduce
        return ct.clone()
    return _call_op(name, [ct, _int64s(axes)], {"keepdims": int(keepdims)})[0]


# ---- indexing -------------------------------------------------------------

def _index(ct, key):
    """Basic indexing (ints, slices, None, Ellipsis) as a view of ct."""
    if not isinstance(key, tuple):
        key = (key,)
    nd = ct.ndim()
    n_ellipsis = builtins.sum(1 for k in key if k is Ellipsis)
    if n_ellipsis > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    n_axes = builtins.sum(1 for k in key if k is not None and k is not Ellipsis)
    if n_axes > nd:
        raise IndexError(f"too many indices for a tensor of shape {tuple(ct.shape)}: "
                         f"{n_axes} given")
    if n_ellipsis == 0:
        key = key + (Ellipsis,)
    out, axis = ct, 0
    for k in key:
        if k is Ellipsis:
            axis += nd - n_axes
            continue
        if k is None:
            out = out.unsqueeze(axis)
            axis += 1
            continue
        n = out.shape[axis]
        if isinstance(k, slice):
            start, stop, step = k.indices(n)
            # slice.indices gives -1 for "before the first element" with a
            # negative step; the C++ Slice reads negatives from the end.
            if step < 0:
                start = -n - 1 if start < 0 else start
                stop = -n - 1 if stop < 0 else stop
            out = out.slice(axis, start, stop, step)
            axis += 1
            continue
        try:
            i = k.__index__()
        except (AttributeError, TypeError):
            raise IndexError(f"only integers, slices, None and ... are valid tensor indices, "
                             f"got {type(k).__name__}") from None
        if not -n <= i < n:
            raise IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")
        i += n if i < 0 else 0
        out = out.slice(axis, i, i + 1).squeeze(axis)
    return out


# ---- the Tensor class -----------------------------------------------------

class Tensor:
    """SINGA's Tensor: a C++ tensor (`.data`) plus autograd bookkeeping.

    Args:
        shape: the shape (a tuple of ints; () is a scalar).
        device: where it lives (default: device.get_default_device()).
        dtype: element type (tensor.float32, ...; names and numpy dtypes work).
        data: initial values: a numpy array (or nested list, copied and
            converted to `dtype`), or a CTensor (shared, dtype ignored).
            Without data the tensor holds zeros (`empty` leaves it
            uninitialised).
        requires_grad: whether autograd computes a gradient for it.
        stores_grad: whether autograd returns that gradient (parameters).
        name: a name for parameters and ONNX export.
    """

    # numpy defers `ndarray + Tensor` to our reflected operators.
    __array_ufunc__ = None

    def __init__(self, shape=(), device=None, dtype=float32, data=None, requires_grad=True,
                 stores_grad=False, name=None, creator=None):
        if device is None:
            device = get_default_device()
        if data is None:
            if isinstance(shape, numbers.Integral):
                shape = (shape,)
            dt = _to_dtype(dtype)
            ct = CTensor(list(shape), dt, device) if dt == _singa.DType.string else \
                CTensor.full(list(shape), 0.0, dt, device)
        elif isinstance(data, CTensor):
            if data.device != device:
                raise ValueError(f"Tensor: data is on {data.device}, not on {device}")
            ct = data
        elif isinstance(data, Tensor):
            ct = data.data
        else:
            ct = _ctensor_from_numpy(data, _to_dtype(dtype))
        self.data = ct
        if requires_grad:
            ct.requires_grad = True
        if stores_grad:
            ct.stores_grad = True
        if name is not None:
            ct.name = name

    # -- autograd state, kept by the C++ tensor (shared by its copies) --
    @property
    def requires_grad(self):
        """Whether ops record themselves for autograd when this is an input
        (in training mode, see autograd.training)."""
        return self.data.requires_grad

    @requires_grad.setter
    def requires_grad(self, on):
        self.data.requires_grad = builtins.bool(on)

    @property
    def stores_grad(self):
        """Whether autograd.backward yields this tensor's gradient (a parameter)."""
        return self.data.stores_grad

    @stores_grad.setter
    def stores_grad(self, on):
        self.data.stores_grad = builtins.bool(on)

    @property
    def name(self):
        """The name (a parameter's dotted path), or None."""
        return self.data.name or None

    @name.setter
    def name(self, value):
        self.data.name = "" if value is None else str(value)

    @property
    def creator(self):
        """The name of the op that made this tensor while recording, or None."""
        return self.data.creator_op

    # -- properties read from the C++ tensor --
    @property
    def shape(self):
        return self.data.shape

    @property
    def dtype(self):
        return self.data.dtype

    @property
    def device(self):
        return self.data.device

    def ndim(self):
        return self.data.ndim()

    def size(self):
        """Number of elements."""
        return self.data.numel()

    def memsize(self):
        """Bytes of the elements."""
        return self.data.nbytes()

    def is_empty(self):
        """True when the tensor has no elements (a zero-sized dimension)."""
        return self.data.numel() == 0

    def is_transpose(self):
        """True when the elements are not laid out row-major (a transposed
        or otherwise permuted view)."""
        return not self.data.is_contiguous()

    def is_dummy(self):
        """True for a tensor without a name (SINGA's 'Dummy#' tensors)."""
        return self.name is None

    def __len__(self):
        shape = self.data.shape
        if not shape:
            raise TypeError("len() of a 0-d tensor")
        return shape[0]

    # -- views and copies --
    def transpose(self, axes=None):
        """A view with the axes permuted (reversed when axes is None)."""
        if axes is None:
            return _wrap(self.data.transpose())
        axes = [int(a) for a in axes]
        if len(axes) != self.data.ndim():
            raise ValueError(f"transpose: axes {axes} do not match shape {self.shape}")
        return _wrap(self.data.permute(axes))

    def T(self):
        """The transposed view (axes reversed)."""
        return _wrap(self.data.transpose())

    def reshape(self, *shape):
        """A tensor with the same elements in `shape` (a view when this one is
        contiguous). One dimension may be -1."""
        if len(shape) == 1 and not isinstance(shape[0], numbers.Integral):
            shape = shape[0]
        return _wrap(self.data.reshape([int(s) for s in shape]))

    def contiguous(self):
        """This tensor when row-major already, else a row-major copy."""
        return _wrap(self.data.contiguous())

    def clone(self):
        """A deep copy."""
        return _wrap(self.data.clone())

    deepcopy = clone

    def copy(self):
        """A shallow copy: a new Tensor sharing this one's storage."""
        return _wrap(self.data.reshape(list(self.data.shape)))

    def as_type(self, dtype):
        """A converted copy (this tensor's data when the dtype matches)."""
        return _wrap(self.data.astype(_to_dtype(dtype)))

    def to_type(self, dtype):
        """Converts this tensor in place; returns it."""
        self.data = self.data.astype(_to_dtype(dtype))
        return self

    def to_device(self, device):
        """Moves the tensor to `device` (in place: a copy there replaces the
        storage; name, requires_grad and stores_grad stay)."""
        ct = self.data
        if device != ct.device:
            moved = ct.to_device(device)
            moved.requires_grad, moved.stores_grad = ct.requires_grad, ct.stores_grad
            if ct.name:
                moved.name = ct.name
            self.data = moved
        return self

    def to_host(self):
        """Moves the tensor to the host (in place)."""
        return self.to_device(_singa.Device.cpu())

    def reset_like(self, t):
        """Replaces the storage with an (unset) one of t's shape, dtype, device."""
        self.data = CTensor(list(t.shape), t.dtype, t.device)

    # -- values --
    def l1(self):
        """SINGA's L1: the mean absolute value, sum(|x|) / size()."""
        n = self.data.numel()
        if n == 0:
            return 0.0
        return float(_reduce("ReduceL1", self, None, False).astype(DType.float64).numpy()) / n

    def l2(self):
        """SINGA's L2: the Euclidean norm divided by size(), sqrt(sum(x^2)) / size()."""
        n = self.data.numel()
        if n == 0:
            return 0.0
        return float(_reduce("ReduceL2", self, None, False).astype(DType.float64).numpy()) / n

    def set_value(self, x, inplace=True):
        """Sets every element to x; returns this tensor (a new one when
        inplace is False)."""
        t = self if inplace else _wrap(CTensor(list(self.shape), self.dtype, self.device))
        if isinstance(x, str):
            t.data.copy_from(CTensor.from_strings([x], []))
        else:
            t.data.fill(float(x))
        return t

    def copy_from_numpy(self, np_array, offset=0):
        """Copies an array's values (same number of elements, any shape;
        converted to this tensor's dtype) into this tensor, starting at
        element `offset`."""
        np_array = np.asarray(np_array)
        _copy_elements(self, _ctensor_from_numpy(np_array.reshape(-1)), np_array.size, offset, 0,
                       what="copy_from_numpy", src_desc=f"array of shape {np_array.shape}")

    def copy_data(self, t):
        """Copies t's values (same number of elements) into this tensor."""
        if not isinstance(t, Tensor):
            raise TypeError("copy_data: t must be a singa Tensor")
        if t.size() != self.size():
            raise ValueError(f"copy_data: source of shape {t.shape} has {t.size()} elements, "
                             f"destination of shape {self.shape} has {self.size()}")
        src = t.data if t.data.shape == self.data.shape else t.data.reshape(list(self.data.shape))
        self.data.copy_from(src)

    def copy_from(self, t, offset=0):
        """Copies from a Tensor or a numpy array."""
        if isinstance(t, Tensor):
            self.copy_data(t)
        elif isinstance(t, np.ndarray):
            self.copy_from_numpy(t, offset)
        else:
            raise ValueError("copy_from: t should be a Tensor or a numpy array")

    def numpy(self):
        return to_numpy(self)

    def item(self):
        """The value of a one-element tensor as a Python number."""
        if self.data.numel() != 1:
            raise ValueError(f"item: tensor of shape {self.shape} has {self.size()} elements, not 1")
        return _numpy_of(self.data).reshape(-1)[0].item() if self.dtype != _STRING \
            else _numpy_of(self.data).reshape(-1)[0]

    def __bool__(self):
        """numpy's rule: only a one-element tensor has a truth value."""
        if self.data.numel() != 1:
            raise ValueError(f"the truth value of a tensor of shape {self.shape} is ambiguous")
        return builtins.bool(self.item())

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __array__(self, dtype=None, copy=None):
        a = to_numpy(self)
        return a if dtype is None else a.astype(dtype)

    def repeat(self, repeats, axis=None):
        """numpy.repeat: each element `repeats` times along `axis` (the
        flattened tensor when None); repeats may be a sequence with one count
        per index of `axis`."""
        return _wrap(_repeat(self.data, repeats, axis))

    # -- random fills (from the device's generator: device.SetRandSeed) --
    def bernoulli(self, p, inplace=True):
        """Each element 1 with probability p, else 0."""
        t = self if inplace else _wrap(CTensor(list(self.shape), self.dtype, self.device))
        _singa.bernoulli(t.data, float(p))
        return t

    def gaussian(self, mean, std, inplace=True):
        """Values from N(mean, std^2)."""
        t = self if inplace else _wrap(CTensor(list(self.shape), self.dtype, self.device))
        _singa.gaussian(t.data, float(mean), float(std))
        return t

    def uniform(self, low, high, inplace=True):
        """Values from U[low, high)."""
        t = self if inplace else _wrap(CTensor(list(self.shape), self.dtype, self.device))
        _singa.uniform(t.data, float(low), float(high))
        return t

    # -- in-place row/column arithmetic on a 2-d tensor (SINGA's deprecated API) --
    def add_column(self, v):
        """Adds v (one value per row) to every column."""
        _iadd(self.data, _as_column(v, self, "add_column"))

    def add_row(self, v):
        """Adds v (one value per column) to every row."""
        _iadd(self.data, _as_row(v, self, "add_row"))

    def div_column(self, v):
        _idiv(self.data, _as_column(v, self, "div_column"))

    def div_row(self, v):
        _idiv(self.data, _as_row(v, self, "div_row"))

    def mult_column(self, v):
        _imul(self.data, _as_column(v, self, "mult_column"))

    def mult_row(self, v):
        _imul(self.data, _as_row(v, self, "mult_row"))

    # -- indexing --
    def __getitem__(self, key):
        return _wrap(_index(self.data, key))

    def __setitem__(self, key, value):
        view = _index(self.data, key)
        if isinstance(value, Tensor):
            view.copy_from(value.data)
        elif isinstance(value, str):
            view.copy_from(CTensor.from_strings([value], []))
        elif isinstance(value, (numbers.Number, np.bool_)):
            view.fill(float(value))
        else:
            view.copy_from(_ctensor_from_numpy(np.asarray(value), view.dtype))

    # -- arithmetic: + - * / call the binding directly --
    def __add__(self, rhs):
        t = _new(Tensor)
        t.data = _add(self.data, rhs.data if isinstance(rhs, Tensor) else _operand(rhs, self.data))
        return t

    def __sub__(self, rhs):
        t = _new(Tensor)
        t.data = _sub(self.data, rhs.data if isinstance(rhs, Tensor) else _operand(rhs, self.data))
        return t

    def __mul__(self, rhs):
        t = _new(Tensor)
        t.data = _mul(self.data, rhs.data if isinstance(rhs, Tensor) else _operand(rhs, self.data))
        return t

    def __truediv__(self, rhs):
        t = _new(Tensor)
        t.data = _div(self.data, rhs.data if isinstance(rhs, Tensor) else _operand(rhs, self.data))
        return t

    def __radd__(self, lhs):
        return _wrap(_reflected(_add, _radd, lhs, self.data))

    def __rsub__(self, lhs):
        return _wrap(_reflected(_sub, _rsub, lhs, self.data))

    def __rmul__(self, lhs):
        return _wrap(_reflected(_mul, _rmul, lhs, self.data))

    def __rtruediv__(self, lhs):
        return _wrap(_reflected(_div, _rdiv, lhs, self.data))

    def __iadd__(self, x):
        _iadd(self.data, x.data if isinstance(x, Tensor) else _operand(x, self.data))
        return self

    def __isub__(self, x):
        _isub(self.data, x.data if isinstance(x, Tensor) else _operand(x, self.data))
        return self

    def __imul__(self, x):
        _imul(self.data, x.data if isinstance(x, Tensor) else _operand(x, self.data))
        return self

    def __itruediv__(self, x):
        _idiv(self.data, x.data if isinstance(x, Tensor) else _operand(x, self.data))
        return self

    def __floordiv__(self, rhs):
        q = self / rhs
        return _op1("Floor", q) if q.dtype in _FLOATS else q

    def __rfloordiv__(self, lhs):
        q = lhs / self
        return _op1("Floor", q) if q.dtype in _FLOATS else q

    def __neg__(self):
        return _wrap(_rsub(self.data, 0.0))

    def __pos__(self):
        return self

    def __abs__(self):
        return _op1("Abs", self)

    def __pow__(self, x):
        return _op1("Pow", self, _scalar_like(x, self.data))

    def __rpow__(self, lhs):
        return _op1("Pow", _scalar_like(lhs, self.data), self)

    def __matmul__(self, rhs):
        return _op1("MatMul", self, _scalar_like(rhs, self.data))

    def __rmatmul__(self, lhs):
        return _op1("MatMul", _scalar_like(lhs, self.data), self)

    # -- comparisons: SINGA returns 1/0 in the left operand's dtype --
    def __lt__(self, rhs):
        return _compare("Less", self, rhs)

    def __le__(self, rhs):
        return _compare("LessOrEqual", self, rhs)

    def __gt__(self, rhs):
        return _compare("Greater", self, rhs)

    def __ge__(self, rhs):
        return _compare("GreaterOrEqual", self, rhs)

    def __eq__(self, rhs):
        if rhs is None:
            return False
        if not isinstance(rhs, (Tensor, numbers.Number, np.ndarray, np.bool_)):
            return NotImplemented
        return _compare("Equal", self, rhs)

    def __ne__(self, rhs):
        if rhs is None:
            return True
        if not isinstance(rhs, (Tensor, numbers.Number, np.ndarray, np.bool_)):
            return NotImplemented
        eq = _compare("Equal", self, rhs)
        return _wrap(_rsub(eq.data, 1.0))

    # Tensors stay hashable by identity (autograd and optimizers key dicts by them).
    __hash__ = object.__hash__

    def __repr__(self):
        body = np.array2string(to_numpy(self), separator=", ", prefix="Tensor(")
        return f"Tensor({body}, dtype={_singa.dtype_name(self.dtype)})"

    def __str__(self):
        return np.array2string(to_numpy(self))


class PlaceHolder(Tensor):
    """A Tensor standing for a model input of a given shape (Model.compile
    infers every other shape from it)."""

    def __init__(self, shape, device=None, dtype=float32):
        super().__init__(shape=shape, device=device, dtype=dtype)


_FLOATS = (float16, bfloat16, float32, float64)


def _reflected(tensor_fn, scalar_fn, lhs, ct):
    """lhs (op) ct where lhs is not a Tensor."""
    x = _operand(lhs, ct)
    return scalar_fn(ct, x) if isinstance(x, float) else tensor_fn(x, ct)


def _compare(op, t, x):
    out = _call_op(op, [t.data, _scalar_like(x, t.data)], {})[0]
    return _wrap(out.astype(t.data.dtype))


def _as_column(v, m, what):
    if m.ndim() != 2:
        raise ValueError(f"{what}: expects a 2-d tensor, got shape {m.shape}")
    v = _ct(v)
    if v.numel() != m.shape[0]:
        raise ValueError(f"{what}: vector of shape {tuple(v.shape)} does not match the "
                         f"{m.shape[0]} rows of a tensor of shape {m.shape}")
    return v.reshape([m.shape[0], 1])


def _as_row(v, m, what):
    if m.ndim() != 2:
        raise ValueError(f"{what}: expects a 2-d tensor, got shape {m.shape}")
    v = _ct(v)
    if v.numel() != m.shape[1]:
        raise ValueError(f"{what}: vector of shape {tuple(v.shape)} does not match the "
                         f"{m.shape[1]} columns of a tensor of shape {m.shape}")
    return v.reshape([1, m.shape[1]])


def _repeat(ct, repeats, axis):
    if axis is None:
        ct = ct.reshape([-1])
        axis = 0
        if not isinstance(repeats, numbers.Integral):
            raise ValueError(f"repeat: with axis None, repeats must be an int, got {repeats!r}")
    nd = ct.ndim()
    if not -nd <= axis < nd:
        raise ValueError(f"repeat: axis {axis} is out of range for shape {tuple(ct.shape)}")
    axis %= nd
    shape = list(ct.shape)
    if isinstance(repeats, numbers.Integral):
        if repeats < 0:
            raise ValueError(f"repeat: negative repeats {repeats}")
        wide = list(shape)
        wide.insert(axis + 1, int(repeats))
        shape[axis] *= int(repeats)
        # A broadcast view, made dense by the reshape (one copy).
        return ct.unsqueeze(axis + 1).broadcast_to(wide).reshape(shape)
    repeats = [int(r) for r in repeats]
    if len(repeats) != shape[axis] or builtins.any(r < 0 for r in repeats):
        raise ValueError(f"repeat: repeats {repeats} must be {shape[axis]} non-negative counts "
                         f"for axis {axis} of shape {tuple(ct.shape)}")
    shape[axis] = builtins.sum(repeats)
    out = CTensor(shape, ct.dtype, ct.device)
    offset = 0
    for i, r in enumerate(repeats):
        if r:
            out.slice(axis, offset, offset + r).copy_from(ct.slice(axis, i, i + 1))
            offset += r
    return out


def _copy_elements(dst, src_ct, size, dst_offset, src_offset, what, src_desc):
    """Copies `size` elements in row-major order from src_ct (from
    src_offset) into dst (from dst_offset)."""
    dst_ct = dst.data
    size, dst_offset, src_offset = int(size), int(dst_offset), int(src_offset)
    if size < 0 or dst_offset < 0 or src_offset < 0:
        raise ValueError(f"{what}: negative size or offset")
    if dst_offset + size > dst_ct.numel():
        raise ValueError(f"{what}: {size} elements at offset {dst_offset} do not fit a "
                         f"destination of shape {tuple(dst_ct.shape)}")
    if src_offset + size > src_ct.numel():
        raise ValueError(f"{what}: {src_desc} has fewer than {src_offset + size} elements")
    if dst_offset == 0 and size == dst_ct.numel() and src_offset == 0 and size == src_ct.numel():
        dst_ct.copy_from(src_ct.reshape(list(dst_ct.shape)))
        return
    if not dst_ct.is_contiguous():
        raise ValueError(f"{what}: a partial copy needs a contiguous destination")
    flat_dst = dst_ct.reshape([-1]).slice(0, dst_offset, dst_offset + size)
    flat_dst.copy_from(src_ct.reshape([-1]).slice(0, src_offset, src_offset + size))


# ---- module functions ------------------------------------------------------

def from_raw_tensor(t):
    """A Tensor sharing a CTensor."""
    return _wrap(t)


def from_raw_tensors(tt):
    return [_wrap(t) for t in tt]


def from_numpy(np_array, dev=None):
    """A new Tensor with the array's shape, dtype and values (a copy). Every
    numpy dtype singa has works, plus ml_dtypes' bfloat16/float8/int4/int2 and
    str/object arrays (dtype string)."""
    ct = _ctensor_from_numpy(np_array)
    t = _wrap(ct)
    if dev is not None:
        t.to_device(dev)
    return t


def to_numpy(t):
    """The tensor's values as a numpy array: a view sharing the storage (no
    copy; writing to it writes to the tensor) except for strings and for a
    tensor on a GPU, whose values are copied."""
    return _numpy_of(_ct(t))


def to_host(t):
    """A copy of t on the host."""
    ct = _ct(t)
    return t.clone() if ct.device == _singa.Device.cpu() else _wrap(ct.to_device(_singa.Device.cpu()))


def copy_from_numpy(data, np_array):
    """Copies an array into a CTensor (same number of elements)."""
    np_array = np.asarray(np_array)
    if np_array.size != data.numel():
        raise ValueError(f"copy_from_numpy: array of shape {np_array.shape} does not fit a "
                         f"tensor of shape {tuple(data.shape)}")
    data.copy_from(_ctensor_from_numpy(np_array.reshape(data.shape)))


def copy_data_to_from(dst, src, size, dst_offset=0, src_offset=0):
    """Copies `size` elements from src (from src_offset) to dst (from
    dst_offset), both in row-major order."""
    _copy_elements(dst, src.data, size, dst_offset, src_offset, what="copy_data_to_from",
                   src_desc=f"source of shape {src.shape}")


def zeros(shape, device=None, dtype=float32):
    return _wrap(CTensor.full(list(shape), 0.0, _to_dtype(dtype), device or get_default_device()))


def ones(shape, device=None, dtype=float32):
    return _wrap(CTensor.full(list(shape), 1.0, _to_dtype(dtype), device or get_default_device()))


def zeros_like(t):
    return _wrap(CTensor.full(list(t.shape), 0.0, t.dtype, t.device))


def ones_like(t):
    return _wrap(CTensor.full(list(t.shape), 1.0, t.dtype, t.device))


def empty(shape, device=None, dtype=float32):
    """An uninitialised tensor: its values are whatever its memory held. For
    buffers whose every element is written before it is read; Tensor(shape)
    gives zeros."""
    if isinstance(shape, numbers.Integral):
        shape = (shape,)
    return _wrap(CTensor(list(shape), _to_dtype(dtype), device or get_default_device()))


def random(shape, device=None):
    """A float32 tensor of values from U[0, 1)."""
    t = empty(shape, device=device)
    _singa.uniform(t.data, 0.0, 1.0)
    return t


def contiguous(t):
    return _wrap(t.data.contiguous())


def reshape(t, shape):
    return t.reshape(shape)


def transpose(t, axes=None):
    return t.transpose(axes)


def abs(t):  # noqa: A001 - SINGA's name
    return _op1("Abs", t)


def exp(t):
    return _op1("Exp", t)


def ceil(t):
    return _op1("Ceil", t)


def floor(t):
    return _op1("Floor", t)


def log(t):
    return _op1("Log", t)


def sigmoid(t):
    return _op1("Sigmoid", t)


def relu(t):
    return _op1("Relu", t)


def sign(t):
    return _op1("Sign", t)


def sqrt(t):
    return _op1("Sqrt", t)


def square(t):
    return _wrap(_mul(t.data, t.data))


def tanh(t):
    return _op1("Tanh", t)


def _out(result, out):
    if out is None:
        return result
    if tuple(out.shape) != tuple(result.shape):
        raise ValueError(f"out has shape {out.shape}, the result has shape {result.shape}")
    out.data.copy_from(result.data)
    return out


def sum(t, axis=None, out=None):  # noqa: A001 - SINGA's name
    """Sum over `axis` (an int, a tuple of ints, or None for all axes, which
    gives a 0-d tensor)."""
    return _out(_wrap(_reduce("ReduceSum", t, axis, False)), out)


def average(t, axis=None):
    """The mean of all elements as a float when axis is None; else a Tensor
    of the means along `axis`."""
    if axis is None:
        n = t.size()
        return float(_reduce("ReduceSum", t, None, False).astype(DType.float64).numpy()) / n \
            if n else float("nan")
    return _wrap(_reduce("ReduceMean", t, axis, False))


def mean(t, axis=None):
    return _wrap(_reduce("ReduceMean", t, axis, False))


def pow(t, x, out=None):  # noqa: A001 - SINGA's name
    """t ** x elementwise (x a number or a Tensor)."""
    return _out(_op1("Pow", t, _scalar_like(x, t.data)), out)


def softmax(t, out=None, axis=-1):
    """Softmax along the last axis (each row of a 2-d tensor)."""
    return _out(_op1("Softmax", t, axis=int(axis)), out)


def lt(t, x):
    return t < x


def le(t, x):
    return t <= x


def gt(t, x):
    return t > x


def ge(t, x):
    return t >= x


def eq(t, x):
    return t == x


def _with_ret(result, ret):
    if ret is None:
        return result
    ret.data.copy_from(result.data)
    return ret


def add(lhs, rhs, ret=None):
    return _with_ret(lhs + rhs, ret)


def sub(lhs, rhs, ret=None):
    return _with_ret(lhs - rhs, ret)


def eltwise_mult(lhs, rhs, ret=None):
    return _with_ret(lhs * rhs, ret)


def div(lhs, rhs, ret=None):
    return _with_ret(lhs / rhs, ret)


def mult(A, B, C=None, alpha=1.0, beta=0.0):
    """Matrix product A @ B (matrix-vector, matrix-matrix or batched, with
    numpy's broadcasting); with C given, C = alpha * A @ B + beta * C."""
    res = _call_op("MatMul", [A.data, B.data], {})[0]
    if C is None:
        return _wrap(res)
    if alpha != 1.0:
        _imul(res, float(alpha))
    if beta != 0.0:
        _imul(C.data, float(beta))
        _iadd(C.data, res)
    else:
        C.data.copy_from(res)
    return C


def axpy(alpha, x, y):
    """y += alpha * x; returns y."""
    _iadd(y.data, _mul(x.data, float(alpha)))
    return y


def einsum(ops, *args):
    """Einstein summation over the operands, e.g. einsum('ij,jk->ik', a, b).
    Each index letter names one axis; letters missing from the output are
    summed. Operands broadcast to the full index space and multiply, so this
    suits small contractions (use mult/tensordot for large matrix products)."""
    if not ops:
        raise ValueError("einsum: no subscripts given")
    spec = ops.replace(" ", "")
    if "..." in spec:
        raise ValueError("einsum: '...' is not supported")
    if "->" in spec:
        lhs, out = spec.split("->")
    else:
        lhs = spec
        letters = lhs.replace(",", "")
        out = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    ins = lhs.split(",")
    if len(ins) != len(args):
        raise ValueError(f"einsum: {len(ins)} operand subscripts for {len(args)} operands")
    order, sizes = [], {}
    for sub_, t in zip(ins, args):
        if len(sub_) != t.ndim():
            raise ValueError(f"einsum: subscripts '{sub_}' do not match an operand of shape "
                             f"{t.shape}")
        if len(set(sub_)) != len(sub_):
            raise ValueError(f"einsum: repeated index in '{sub_}' (diagonals) is not supported")
        for c, n in zip(sub_, t.shape):
            if c not in sizes:
                order.append(c)
                sizes[c] = n
            elif sizes[c] != n:
                if sizes[c] == 1:
                    sizes[c] = n
                elif n != 1:
                    raise ValueError(f"einsum: index '{c}' has sizes {sizes[c]} and {n}")
    for c in out:
        if c not in sizes:
            raise ValueError(f"einsum: output index '{c}' is not in any input")
    prod = None
    for sub_, t in zip(ins, args):
        ct = t.data
        present = [c for c in order if c in sub_]
        ct = ct.permute([sub_.index(c) for c in present])
        for i, c in enumerate(order):
            if c not in sub_:
                ct = ct.unsqueeze(i)
        prod = ct if prod is None else _mul(prod, ct)
    if len(args) == 1:
        prod = prod.broadcast_to([sizes[c] for c in order])
    summed = [i for i, c in enumerate(order) if c not in out]
    kept = [c for c in order if c in out]
    if summed:
        prod = _call_op("ReduceSum", [prod, _int64s(summed)], {"keepdims": 0})[0]
    else:
        prod = prod.contiguous()
    return _wrap(prod.permute([kept.index(c) for c in out]))


def tensordot(A, B, axes=2):
    """numpy.tensordot: sums products over `axes` (an int: the last `axes`
    of A with the first of B; or a pair of axis lists)."""
    if isinstance(axes, numbers.Integral):
        axes_a = list(range(A.ndim() - axes, A.ndim()))
        axes_b = list(range(0, axes))
    else:
        axes_a, axes_b = axes
        axes_a = [axes_a] if isinstance(axes_a, numbers.Integral) else list(axes_a)
        axes_b = [axes_b] if isinstance(axes_b, numbers.Integral) else list(axes_b)
    na, nb = A.ndim(), B.ndim()
    axes_a = [a + na if a < 0 else a for a in axes_a]
    axes_b = [b + nb if b < 0 else b for b in axes_b]
    sa, sb = A.shape, B.shape
    if len(axes_a) != len(axes_b) or builtins.any(sa[a] != sb[b] for a, b in zip(axes_a, axes_b)):
        raise ValueError(f"tensordot: shape mismatch for sum: {sa} axes {axes_a}, "
                         f"{sb} axes {axes_b}")
    free_a = [k for k in range(na) if k not in axes_a]
    free_b = [k for k in range(nb) if k not in axes_b]
    k = math.prod(sa[a] for a in axes_a)
    at = A.data.permute(free_a + axes_a).reshape([math.prod(sa[a] for a in free_a), k])
    bt = B.data.permute(axes_b + free_b).reshape([k, math.prod(sb[b] for b in free_b)])
    res = _call_op("MatMul", [at, bt], {})[0]
    return _wrap(res.reshape([sa[a] for a in free_a] + [sb[b] for b in free_b]))


def repeat(t, repeats, axis=None):
    return t.repeat(repeats, axis)


def concatenate(tensors, axis):
    """Joins tensors along `axis`; all other dimensions and the dtypes must
    match."""
    cts = [_ct(t) for t in tensors]
    if not cts:
        raise ValueError("concatenate: no tensors given")
    first = cts[0]
    nd = first.ndim()
    if nd == 0:
        raise ValueError("concatenate: 0-d tensors cannot be concatenated")
    if not -nd <= axis < nd:
        raise ValueError(f"concatenate: axis {axis} is out of range for shape {first.shape}")
    axis %= nd
    total = 0
    for c in cts:
        if c.dtype != first.dtype:
            raise _singa.DTypeError(f"concatenate: dtypes differ: {_singa.dtype_name(first.dtype)} "
                                    f"and {_singa.dtype_name(c.dtype)}")
        s = c.shape
        if len(s) != nd or builtins.any(s[i] != first.shape[i] for i in range(nd) if i != axis):
            raise _singa.ShapeError(f"concatenate: shapes {tuple(first.shape)} and {tuple(s)} "
                                    f"differ outside axis {axis}")
        total += s[axis]
    shape = list(first.shape)
    shape[axis] = total
    out = CTensor(shape, first.dtype, first.device)
    offset = 0
    for c in cts:
        n = c.shape[axis]
        if n:
            out.slice(axis, offset, offset + n).copy_from(c)
            offset += n
    return _wrap(out)


def bernoulli(p, t):
    """Fills t with 1 (probability p) or 0; returns t."""
    _singa.bernoulli(t.data, float(p))
    return t


def gaussian(mean, std, t):
    """Fills t from N(mean, std^2); returns t."""
    _singa.gaussian(t.data, float(mean), float(std))
    return t


def uniform(low, high, t):
    """Fills t from U[low, high); returns t."""
    _singa.uniform(t.data, float(low), float(high))
    return t


def add_column(alpha, v, beta, M):
    """M = alpha * v + beta * M for every column of M (v has one value per
    row); returns M."""
    col = _as_column(v, M, "add_column")
    if beta != 1.0:
        _imul(M.data, float(beta))
    _iadd(M.data, _mul(col, float(alpha)) if alpha != 1.0 else col)
    return M


def add_row(alpha, v, beta, M):
    """M = alpha * v + beta * M for every row of M (v has one value per
    column); returns M."""
    row = _as_row(v, M, "add_row")
    if beta != 1.0:
        _imul(M.data, float(beta))
    _iadd(M.data, _mul(row, float(alpha)) if alpha != 1.0 else row)
    return M


def sum_columns(M):
    """The sum of M's columns: a (rows, 1) tensor."""
    if M.ndim() != 2:
        raise ValueError(f"sum_columns: expects a 2-d tensor, got shape {M.shape}")
    return _wrap(_reduce("ReduceSum", M, [1], True))


def sum_rows(M):
    """The sum of M's rows: a (1, columns) tensor."""
    if M.ndim() != 2:
        raise ValueError(f"sum_rows: expects a 2-d tensor, got shape {M.shape}")
    return _wrap(_reduce("ReduceSum", M, [0], True))
