"""singa.tensor against numpy: construction, every dtype through
from_numpy/to_numpy, views, operators, module functions and errors.

Tests of functions built on ops that live in other op files skip (naming the
op) while that op is not registered in this build."""
import ml_dtypes
import numpy as np
import pytest

from singa import _singa, device, tensor
from singa.tensor import Tensor

RNG = np.random.default_rng(1234)


def needs(*ops):
    missing = [op for op in ops if _singa.find_op(op) is None]
    return pytest.mark.skipif(bool(missing), reason=f"op(s) not registered yet: {missing}")


def arr(shape, dtype=np.float32, low=-3, high=3):
    if np.dtype(dtype) == np.bool_:
        return RNG.random(shape) < 0.5
    if np.issubdtype(np.dtype(dtype), np.integer):
        info = np.iinfo(dtype)
        return RNG.integers(max(low, info.min), min(high, info.max) + 1, size=shape).astype(dtype)
    return RNG.uniform(low, high, size=shape).astype(dtype)


def npy(t):
    return tensor.to_numpy(t)


# ---- construction ------------------------------------------------------------

def test_tensor_defaults():
    t = Tensor((2, 3))
    assert t.shape == (2, 3)
    assert t.dtype == tensor.float32
    assert t.device == device.get_default_device()
    assert t.requires_grad is True and t.stores_grad is False
    assert t.creator is None and t.name is None
    assert t.ndim() == 2 and t.size() == 6 and t.memsize() == 24
    assert isinstance(t.data, tensor.CTensor)


def test_tensor_arguments():
    t = Tensor((4,), device.get_default_device(), tensor.int32, requires_grad=False,
               stores_grad=True, name="w")
    assert t.dtype == tensor.int32
    # A tensor that stores its gradient (a parameter) requires one.
    assert t.requires_grad is True and t.stores_grad is True and t.name == "w"
    assert Tensor((2,), requires_grad=False).requires_grad is False
    assert Tensor((2,)).requires_grad is True and Tensor((2,)).name is None
    assert Tensor(3).shape == (3,)
    assert Tensor().shape == () and Tensor().size() == 1


def test_tensor_from_data():
    a = arr((2, 3), np.float64)
    t = Tensor(data=a)  # converted to the dtype argument (float32 by default)
    assert t.dtype == tensor.float32
    np.testing.assert_allclose(npy(t), a.astype(np.float32))
    t64 = Tensor(data=a, dtype=tensor.float64)
    np.testing.assert_array_equal(npy(t64), a)
    shared = Tensor(data=t64.data)
    assert shared.data is t64.data
    listed = Tensor(data=[[1, 2], [3, 4]], dtype="int")
    assert listed.dtype == tensor.int32 and npy(listed).tolist() == [[1, 2], [3, 4]]


@pytest.mark.parametrize("dt", ["float32", np.float32, np.dtype("float32"), tensor.float32, 1])
def test_dtype_spellings(dt):
    assert Tensor((1,), dtype=dt).dtype == tensor.float32


def test_placeholder():
    x = tensor.PlaceHolder((8, 3, 4), device=device.get_default_device())
    assert isinstance(x, Tensor)
    assert x.shape == (8, 3, 4) and x.dtype == tensor.float32
    assert tensor.PlaceHolder((2,), dtype=tensor.int64).dtype == tensor.int64


def test_module_dtypes():
    for name in ["float16", "float32", "float64", "bfloat16", "int8", "int16", "int32", "int64",
                 "uint8", "uint16", "uint32", "uint64", "bool", "string"]:
        assert getattr(tensor, name) == _singa.dtype_from_name(name)
    assert tensor.sizeof(tensor.float32) == 4
    assert tensor.sizeof(tensor.bfloat16) == 2
    assert tensor.sizeof("float64") == 8
    assert tensor.product((2, 3, 4)) == 24 and tensor.product(()) == 1


# ---- numpy round trips -------------------------------------------------------

ROUND_TRIP = [np.float16, np.float32, np.float64, np.int8, np.int16, np.int32, np.int64,
              np.uint8, np.uint16, np.uint32, np.uint64, np.bool_, np.complex64,
              ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2,
              ml_dtypes.float8_e4m3fnuz, ml_dtypes.float8_e5m2fnuz, ml_dtypes.int4,
              ml_dtypes.uint4, ml_dtypes.float8_e8m0fnu, ml_dtypes.int2, ml_dtypes.uint2]


@pytest.mark.parametrize("dt", ROUND_TRIP, ids=lambda d: np.dtype(d).name)
def test_round_trip_every_dtype(dt):
    if np.dtype(dt) == np.bool_:
        a = arr((3, 4), np.bool_)
    elif np.dtype(dt).kind == "c":
        a = (arr((3, 4)) + 1j * arr((3, 4))).astype(dt)
    else:
        start = 1 if np.dtype(dt) == ml_dtypes.float8_e8m0fnu else 0  # e8m0 has no zero
        a = np.arange(start, start + 12).reshape(3, 4).astype(np.float32).astype(dt)
    t = tensor.from_numpy(a)
    assert t.shape == (3, 4)
    assert tensor.to_numpy(t).dtype == np.dtype(dt)
    np.testing.assert_array_equal(tensor.to_numpy(t), a)
    # ... and through the Tensor constructor's dtype argument
    t2 = Tensor(data=a, dtype=t.dtype)
    np.testing.assert_array_equal(tensor.to_numpy(t2), a)


def test_round_trip_strings():
    a = np.array([["a", "bc"], ["", "déf"]], dtype=object)
    t = tensor.from_numpy(a)
    assert t.dtype == tensor.string and t.shape == (2, 2)
    out = tensor.to_numpy(t)
    assert out.dtype == object and out.tolist() == a.tolist()
    u = tensor.from_numpy(np.array(["x", "yz"]))  # numpy's unicode arrays too
    assert tensor.to_numpy(u).tolist() == ["x", "yz"]
    u.set_value("q")
    assert tensor.to_numpy(u).tolist() == ["q", "q"]


def test_round_trip_scalar_and_empty():
    s = tensor.from_numpy(np.array(2.5, np.float32))
    assert s.shape == () and s.item() == 2.5 and float(s) == 2.5
    e = tensor.from_numpy(np.zeros((0, 4), np.int64))
    assert e.shape == (0, 4) and e.is_empty() and not s.is_empty()
    assert tensor.to_numpy(e).shape == (0, 4)


def test_from_numpy_copies_noncontiguous_and_big_endian_arrays():
    a = arr((4, 6))
    np.testing.assert_array_equal(npy(tensor.from_numpy(a[:, ::2])), a[:, ::2])
    np.testing.assert_array_equal(npy(tensor.from_numpy(a.T)), a.T)
    np.testing.assert_array_equal(npy(tensor.from_numpy(a[::-1])), a[::-1])
    be = a.astype(">f4")
    np.testing.assert_array_equal(npy(tensor.from_numpy(be)), a)
    src = a.copy()
    t = tensor.from_numpy(src)
    src[0, 0] = 100  # from_numpy copies
    assert npy(t)[0, 0] != 100


def test_to_numpy_is_zero_copy():
    t = tensor.from_numpy(arr((3, 4)))
    a = tensor.to_numpy(t)
    b = tensor.to_numpy(t)
    assert np.shares_memory(a, b)
    a[1, 2] = 42.0
    assert tensor.to_numpy(t)[1, 2] == 42.0
    bf = tensor.from_numpy(np.ones(4, ml_dtypes.bfloat16))
    assert np.shares_memory(tensor.to_numpy(bf), tensor.to_numpy(bf))
    assert np.shares_memory(t.numpy(), np.asarray(t))


# ---- views ---------------------------------------------------------------------

def test_views_share_storage():
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    t = tensor.from_numpy(a)
    views = {
        "reshape": (t.reshape((6, 4)), a.reshape(6, 4)),
        "reshape-args": (t.reshape(4, -1), a.reshape(4, -1)),
        "transpose": (t.transpose(), a.transpose()),
        "transpose-axes": (t.transpose((1, 0, 2)), a.transpose(1, 0, 2)),
        "T": (t.T(), a.T),
        "slice": (t[1, :, ::2], a[1, :, ::2]),
        "copy": (t.copy(), a),
    }
    for name, (v, want) in views.items():
        assert v.data.shares_storage(t.data), name
        np.testing.assert_array_equal(npy(v), want, err_msg=name)
    assert t.transpose().is_transpose() and not t.is_transpose()
    # Writing through a view writes the tensor.
    t[0, 1, 2] = -1.0
    assert npy(views["transpose"][0])[2, 1, 0] == -1.0


def test_contiguous_and_clone_copy():
    t = tensor.from_numpy(arr((3, 4)))
    tt = t.transpose()
    c = tt.contiguous()
    assert not c.data.shares_storage(t.data) and not c.is_transpose()
    np.testing.assert_array_equal(npy(c), npy(t).T)
    assert tensor.contiguous(t).data.shares_storage(t.data)  # already row-major
    k = t.clone()
    assert not k.data.shares_storage(t.data)
    k.set_value(0)
    assert npy(t).any()
    np.testing.assert_array_equal(npy(tensor.reshape(t, (4, 3))), npy(t).reshape(4, 3))
    np.testing.assert_array_equal(npy(tensor.transpose(t)), npy(t).T)


INDEX_CASES = [
    0, -1, (1, 2), slice(None), slice(1, None), slice(None, None, -1), slice(-1, 0, -2),
    (Ellipsis, 1), (None, 0), (slice(None), None, 1), (0, Ellipsis, slice(1, 3)),
    (slice(5, 1), 0), (slice(-10, None, -1),), (1, slice(None, None, -2), None),
]


@pytest.mark.parametrize("key", INDEX_CASES, ids=repr)
def test_getitem_matches_numpy(key):
    a = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    t = tensor.from_numpy(a)
    v = t[key]
    np.testing.assert_array_equal(npy(v), a[key])
    assert v.data.shares_storage(t.data)


@pytest.mark.parametrize("key,err", [((0, 0, 0, 0), IndexError), (3, IndexError),
                                     ((Ellipsis, Ellipsis), IndexError), ("a", IndexError)])
def test_getitem_errors(key, err):
    with pytest.raises(err):
        tensor.from_numpy(np.zeros((3, 4, 5), np.float32))[key]


def test_setitem():
    a = np.zeros((3, 4), np.float32)
    t = tensor.from_numpy(a)
    t[0] = 1.0
    t[1, 1:3] = tensor.from_numpy(np.array([5, 6], np.float32))
    t[2] = np.arange(4)
    t[:, -1] = tensor.from_numpy(np.array([7], np.float32))  # broadcast
    a[0] = 1
    a[1, 1:3] = [5, 6]
    a[2] = np.arange(4)
    a[:, -1] = 7
    np.testing.assert_array_equal(npy(t), a)
    assert len(t) == 3
    assert [r.shape for r in t] == [(4,)] * 3


# ---- operators -------------------------------------------------------------------

OP_DTYPES = [np.float32, np.float64, np.float16, np.int32, np.int64, np.int8, np.uint8]
BINARY = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.divide}


def _apply(sym, x, y):
    return {"+": lambda: x + y, "-": lambda: x - y, "*": lambda: x * y, "/": lambda: x / y}[sym]()


def _expected(sym, x, y, dt):
    if sym == "/" and np.issubdtype(np.dtype(dt), np.integer):
        return np.trunc(np.asarray(x, np.float64) / np.asarray(y, np.float64)).astype(dt)
    with np.errstate(over="ignore"):
        return BINARY[sym](x, y).astype(dt)


def _tol(dt):
    return {np.float16: 1e-3, np.float32: 1e-6}.get(dt, 0)


@pytest.mark.parametrize("dt", OP_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("sym", list(BINARY))
@pytest.mark.parametrize("sa,sb", [((2, 3), (2, 3)), ((2, 3), (3,)), ((4, 1, 3), (2, 1)),
                                   ((), (2, 2)), ((0, 3), (1, 3))])
def test_binary_operators_broadcast(dt, sym, sa, sb):
    x, y = arr(sa, dt, 1, 5), arr(sb, dt, 1, 5)
    got = npy(_apply(sym, tensor.from_numpy(x), tensor.from_numpy(y)))
    want = _expected(sym, x, y, dt)
    assert got.dtype == np.dtype(dt)
    np.testing.assert_allclose(got, want, rtol=_tol(dt))


@pytest.mark.parametrize("dt", [np.float32, np.int32, ml_dtypes.bfloat16],
                         ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("sym", list(BINARY))
def test_scalar_and_reflected_operands(dt, sym):
    x = arr((2, 3), np.float32, 1, 5).astype(dt)
    t = tensor.from_numpy(x)
    for s in (2, 2.0, np.float32(2), True):
        fwd, rev = npy(_apply(sym, t, s)), npy(_apply(sym, s, t))
        assert fwd.dtype == np.dtype(dt) and rev.dtype == np.dtype(dt)  # the tensor's dtype
        xs = x.astype(np.float64)
        s64 = np.float64(s)
        want_f, want_r = _apply(sym, xs, s64), _apply(sym, s64, xs)
        if np.issubdtype(np.dtype(dt), np.integer) and sym == "/":
            want_f, want_r = np.trunc(want_f), np.trunc(want_r)
        rtol = 1e-2 if dt == ml_dtypes.bfloat16 else 1e-6
        np.testing.assert_allclose(fwd.astype(np.float64), want_f, rtol=rtol)
        np.testing.assert_allclose(rev.astype(np.float64), want_r, rtol=rtol)


def test_numpy_array_operands():
    x, y = arr((2, 3)), arr((2, 3))
    t = tensor.from_numpy(x)
    r = t + y
    assert isinstance(r, Tensor)
    np.testing.assert_allclose(npy(r), x + y, rtol=1e-6)
    r = y - t  # ndarray on the left defers to Tensor.__rsub__
    assert isinstance(r, Tensor)
    np.testing.assert_allclose(npy(r), y - x, rtol=1e-6)


@pytest.mark.parametrize("sym", list(BINARY))
def test_inplace_operators(sym):
    x, y = arr((3, 4), np.float32, 1, 5), arr((4,), np.float32, 1, 5)
    t = tensor.from_numpy(x)
    storage = t.data
    u = t
    if sym == "+":
        u += tensor.from_numpy(y)
        u += 1
    elif sym == "-":
        u -= tensor.from_numpy(y)
        u -= 1
    elif sym == "*":
        u *= tensor.from_numpy(y)
        u *= 2
    else:
        u /= tensor.from_numpy(y)
        u /= 2
    assert u is t and t.data is storage
    want = _apply(sym, _apply(sym, x, y), np.float32(1 if sym in "+-" else 2))
    np.testing.assert_allclose(npy(t), want, rtol=1e-6)


def test_inplace_on_views_and_aliases():
    a = arr((3, 3))
    t = tensor.from_numpy(a)
    t += t.transpose()  # the operand overlaps the result
    np.testing.assert_allclose(npy(t), a + a.T, rtol=1e-6)
    base = tensor.from_numpy(a)
    view = base.transpose()
    view *= 2.0  # non-contiguous destination
    np.testing.assert_allclose(npy(base), a * 2, rtol=1e-6)
    row = base[1]
    row -= 1.0  # a slice writes into its tensor
    want = a * 2
    want[1] -= 1
    np.testing.assert_allclose(npy(base), want, rtol=1e-6)
    i = tensor.from_numpy(np.array([1, 2], np.int32))
    i += tensor.from_numpy(np.array([1.5, 1.5], np.float32)).as_type(tensor.int32)
    assert npy(i).tolist() == [2, 3]


def test_unary_operators():
    x = arr((2, 3))
    t = tensor.from_numpy(x)
    np.testing.assert_array_equal(npy(-t), -x)
    assert (+t) is t
    u = tensor.from_numpy(np.array([1, 2], np.uint8))
    assert npy(-u).dtype == np.uint8


def test_operator_errors_name_shapes_and_dtypes():
    a, b = Tensor((2, 3)), Tensor((4,))
    a.set_value(1)
    b.set_value(1)
    with pytest.raises(ValueError, match=r"2,3.*4|4.*2,3"):
        a + b
    i = Tensor((2, 3), dtype=tensor.int32).set_value(1)
    with pytest.raises(ValueError, match="int32|float32"):
        a * i
    with pytest.raises(ValueError, match="2,3"):
        a += Tensor((2, 2, 3)).set_value(0)
    with pytest.raises(TypeError):
        a + "x"
    s = tensor.from_numpy(np.array(["a"], dtype=object))
    with pytest.raises(ValueError, match="string"):
        s + s
    # Errors are ValueError subclasses of our own.
    with pytest.raises(_singa.ShapeError):
        a - b
    with pytest.raises(_singa.DTypeError):
        a - i


def test_tensors_hash_by_identity():
    a, b = Tensor((1,)), Tensor((1,))
    d = {a: 1, b: 2}
    assert d[a] == 1 and d[b] == 2
    assert (a == None) is False  # noqa: E711 - SINGA's rule
    assert (a != None) is True  # noqa: E711


def test_repr_and_str_show_values():
    t = tensor.from_numpy(np.array([[1.5, 2.0], [3.0, 4.0]], np.float32))
    assert "1.5" in str(t) and "4." in str(t)
    r = repr(t)
    assert r.startswith("Tensor(") and "1.5" in r and "float32" in r
    assert "abc" in repr(tensor.from_numpy(np.array(["abc"], dtype=object)))
    assert "bfloat16" in repr(tensor.from_numpy(np.ones(2, ml_dtypes.bfloat16)))


# ---- values, copies, conversions ----------------------------------------------------

def test_set_value_and_fills():
    t = Tensor((2, 3), dtype=tensor.int64)
    assert t.set_value(7) is t
    assert npy(t).tolist() == [[7] * 3] * 2
    other = t.set_value(1, inplace=False)
    assert npy(other).sum() == 6 and npy(t)[0, 0] == 7
    np.testing.assert_array_equal(npy(tensor.zeros((2, 2))), np.zeros((2, 2)))
    np.testing.assert_array_equal(npy(tensor.ones((3,), dtype=tensor.int8)), np.ones(3, np.int8))
    z, o = tensor.zeros_like(t), tensor.ones_like(t)
    assert z.dtype == tensor.int64 and npy(z).sum() == 0 and npy(o).sum() == 6


def test_copy_from_numpy_and_copy_data():
    t = Tensor((2, 3))
    t.copy_from_numpy(np.arange(6))  # any shape with the same size; converted
    np.testing.assert_array_equal(npy(t), np.arange(6).reshape(2, 3))
    t.copy_from_numpy(np.array([9, 9], np.float32), offset=2)
    assert npy(t).ravel().tolist() == [0, 1, 9, 9, 4, 5]
    with pytest.raises(ValueError, match="shape"):
        t.copy_from_numpy(np.zeros(7))
    u = Tensor((3, 2))
    u.copy_data(t)
    np.testing.assert_array_equal(npy(u).ravel(), npy(t).ravel())
    with pytest.raises(ValueError, match="elements"):
        u.copy_data(Tensor((5,)))
    v = Tensor((6,))
    v.copy_from(t)
    v.copy_from(np.ones(6))
    assert npy(v).sum() == 6
    ct = tensor.Tensor((2,)).data
    tensor.copy_from_numpy(ct, np.array([3, 4]))
    assert tensor.to_numpy(ct).tolist() == [3, 4]


def test_copy_data_to_from():
    dst = tensor.zeros((6,))
    src = tensor.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3))
    tensor.copy_data_to_from(dst, src, 3, dst_offset=1, src_offset=2)
    assert npy(dst).tolist() == [0, 2, 3, 4, 0, 0]
    tensor.copy_data_to_from(dst, src, 6)
    assert npy(dst).tolist() == [0, 1, 2, 3, 4, 5]
    with pytest.raises(ValueError):
        tensor.copy_data_to_from(dst, src, 4, dst_offset=3)


@pytest.mark.parametrize("dt", [tensor.float16, tensor.bfloat16, tensor.float64, tensor.int32,
                                tensor.uint8, tensor.bool, "int", "float"])
def test_as_type_and_to_type(dt):
    x = np.array([[0.0, 1.0, 2.0]], np.float32)
    t = tensor.from_numpy(x)
    c = t.as_type(dt)
    assert c.dtype == tensor._to_dtype(dt) and t.dtype == tensor.float32
    np.testing.assert_array_equal(npy(c).astype(np.float32), x if dt != tensor.bool else x != 0)
    assert t.to_type(dt) is t and t.dtype == tensor._to_dtype(dt)


def test_to_device_and_host():
    t = tensor.from_numpy(np.ones(3, np.float32), dev=device.get_default_device())
    assert t.to_device(device.get_default_device()) is t
    assert t.to_host() is t
    h = tensor.to_host(t)
    assert h.device == t.device and not h.data.shares_storage(t.data)
    r = Tensor((1,))
    r.reset_like(t)
    assert r.shape == (3,)


def test_repeat_matches_numpy():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = tensor.from_numpy(a)
    for reps, axis in [(2, None), (3, 0), (2, 1), (2, -1), ([1, 0, 2], 1), ((2, 1), 0), (0, 0)]:
        np.testing.assert_array_equal(npy(t.repeat(reps, axis)), np.repeat(a, reps, axis),
                                      err_msg=f"{reps} {axis}")
        np.testing.assert_array_equal(npy(tensor.repeat(t, reps, axis)), np.repeat(a, reps, axis))
    with pytest.raises(ValueError):
        t.repeat([1, 2], 1)
    with pytest.raises(ValueError):
        t.repeat(-1, 0)
    with pytest.raises(ValueError):
        t.repeat([1, 2], None)


def test_concatenate_matches_numpy():
    xs = [arr((2, 3)), arr((1, 3)), arr((0, 3))]
    got = tensor.concatenate([tensor.from_numpy(x) for x in xs], 0)
    np.testing.assert_array_equal(npy(got), np.concatenate(xs, 0))
    ys = [arr((2, 1), np.int64), arr((2, 4), np.int64)]
    got = tensor.concatenate([tensor.from_numpy(y) for y in ys], -1)
    np.testing.assert_array_equal(npy(got), np.concatenate(ys, -1))
    with pytest.raises(ValueError, match=r"\(2, 3\).*\(2, 2\)"):
        tensor.concatenate([Tensor((2, 3)), Tensor((2, 2))], 0)
    with pytest.raises(ValueError, match="float32.*int32"):
        tensor.concatenate([Tensor((2, 3)), Tensor((2, 3), dtype=tensor.int32)], 0)


def test_row_and_column_methods():
    m = arr((3, 4), np.float32, 1, 3)
    col, row = arr((3,), np.float32, 1, 3), arr((4,), np.float32, 1, 3)
    cases = {
        "add_column": m + col[:, None], "add_row": m + row[None, :],
        "mult_column": m * col[:, None], "mult_row": m * row[None, :],
        "div_column": m / col[:, None], "div_row": m / row[None, :],
    }
    for name, want in cases.items():
        t = tensor.from_numpy(m)
        v = col if "column" in name else row
        getattr(t, name)(tensor.from_numpy(v))
        np.testing.assert_allclose(npy(t), want, rtol=1e-6, err_msg=name)
    with pytest.raises(ValueError, match="rows"):
        tensor.from_numpy(m).add_column(tensor.from_numpy(row))
    t = tensor.from_numpy(m)
    assert tensor.add_column(2.0, tensor.from_numpy(col), 0.5, t) is t
    np.testing.assert_allclose(npy(t), 2 * col[:, None] + 0.5 * m, rtol=1e-6)
    t = tensor.from_numpy(m)
    tensor.add_row(1.0, tensor.from_numpy(row), 1.0, t)
    np.testing.assert_allclose(npy(t), row[None, :] + m, rtol=1e-6)


def test_module_arithmetic_functions():
    x, y = arr((2, 3)), arr((2, 3), low=1)
    a, b = tensor.from_numpy(x), tensor.from_numpy(y)
    np.testing.assert_allclose(npy(tensor.add(a, b)), x + y, rtol=1e-6)
    np.testing.assert_allclose(npy(tensor.sub(a, b)), x - y, rtol=1e-6)
    np.testing.assert_allclose(npy(tensor.eltwise_mult(a, b)), x * y, rtol=1e-6)
    np.testing.assert_allclose(npy(tensor.div(a, b)), x / y, rtol=1e-6)
    ret = Tensor((2, 3))
    assert tensor.add(a, 1.0, ret) is ret
    np.testing.assert_allclose(npy(ret), x + 1, rtol=1e-6)
    np.testing.assert_allclose(npy(tensor.square(a)), x * x, rtol=1e-6)
    assert tensor.axpy(2.0, a, b) is b
    np.testing.assert_allclose(npy(b), y + 2 * x, rtol=1e-6)


def test_random_fills():
    device.get_default_device().SetRandSeed(3)
    t = Tensor((20000,))
    assert t.uniform(-2, 4) is t
    u = npy(t)
    assert u.min() >= -2 and u.max() < 4 and abs(u.mean() - 1) < 0.05
    tensor.gaussian(1.0, 2.0, t)
    g = npy(t)
    assert abs(g.mean() - 1) < 0.1 and abs(g.std() - 2) < 0.1
    tensor.bernoulli(0.25, t)
    b = npy(t)
    assert set(np.unique(b)) <= {0.0, 1.0} and abs(b.mean() - 0.25) < 0.02
    r = tensor.random((100,))
    assert r.dtype == tensor.float32 and 0 <= npy(r).min() and npy(r).max() < 1
    h = Tensor((1000,), dtype=tensor.bfloat16).gaussian(0, 1)
    assert abs(npy(h).astype(np.float32).std() - 1) < 0.15
    tensor.uniform(0, 1, Tensor((3, 4)).transpose())  # strided views fill too
    with pytest.raises(ValueError, match="int32"):
        Tensor((3,), dtype=tensor.int32).gaussian(0, 1)
    with pytest.raises(ValueError):
        t.bernoulli(1.5)


# ---- functions built on other op files ------------------------------------------------

@needs("ReduceL1", "ReduceL2")
def test_l1_l2_are_means():
    x = arr((3, 4))
    t = tensor.from_numpy(x)
    assert t.l1() == pytest.approx(np.abs(x).sum() / x.size, rel=1e-5)
    assert t.l2() == pytest.approx(np.sqrt((x.astype(np.float64) ** 2).sum()) / x.size, rel=1e-5)


@needs("Abs", "Exp", "Ceil", "Log", "Sigmoid", "Sign", "Sqrt", "Tanh", "Floor")
def test_unary_math():
    x = arr((3, 4), low=0.1, high=3)
    t = tensor.from_numpy(x)
    cases = {"abs": np.abs, "exp": np.exp, "ceil": np.ceil, "log": np.log, "sign": np.sign,
             "sigmoid": lambda v: 1 / (1 + np.exp(-v)), "sqrt": np.sqrt, "tanh": np.tanh,
             "floor": np.floor}
    for name, f in cases.items():
        np.testing.assert_allclose(npy(getattr(tensor, name)(t)), f(x), rtol=1e-5, err_msg=name)
    np.testing.assert_allclose(npy(abs(-t)), x, rtol=1e-6)
    np.testing.assert_allclose(npy(t // 0.5), np.floor(x / 0.5), rtol=1e-6)


@needs("Pow")
def test_pow():
    x = arr((2, 3), low=0.5, high=2)
    t = tensor.from_numpy(x)
    np.testing.assert_allclose(npy(tensor.pow(t, 2.0)), x ** 2, rtol=1e-5)
    np.testing.assert_allclose(npy(t ** 3), x ** 3, rtol=1e-5)
    np.testing.assert_allclose(npy(2 ** t), 2 ** x, rtol=1e-5)
    np.testing.assert_allclose(npy(tensor.pow(t, t)), x ** x, rtol=1e-5)


@needs("Less", "LessOrEqual", "Greater", "GreaterOrEqual", "Equal")
def test_comparisons_give_ones_and_zeros_in_the_tensor_dtype():
    x = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    y = np.array([3, 2, 1], np.float32)
    t, u = tensor.from_numpy(x), tensor.from_numpy(y)
    for f, g in [(tensor.lt, np.less), (tensor.le, np.less_equal), (tensor.gt, np.greater),
                 (tensor.ge, np.greater_equal), (tensor.eq, np.equal)]:
        got = f(t, u)
        assert got.dtype == tensor.float32
        np.testing.assert_array_equal(npy(got), g(x, y).astype(np.float32))
        np.testing.assert_array_equal(npy(f(t, 3)), g(x, 3).astype(np.float32))
    np.testing.assert_array_equal(npy(t != 2), (x != 2).astype(np.float32))
    np.testing.assert_array_equal(npy(3 > t), (3 > x).astype(np.float32))


@needs("ReduceSum", "ReduceMean")
def test_sum_average_and_rows_columns():
    x = arr((3, 4, 5), np.float64)
    t = tensor.from_numpy(x)
    np.testing.assert_allclose(npy(tensor.sum(t)), x.sum())
    assert tensor.sum(t).shape == ()
    np.testing.assert_allclose(npy(tensor.sum(t, 1)), x.sum(1))
    np.testing.assert_allclose(npy(tensor.sum(t, (0, 2))), x.sum((0, 2)))
    np.testing.assert_allclose(npy(tensor.sum(t, -1)), x.sum(-1))
    out = Tensor((3, 5), dtype=tensor.float64)
    assert tensor.sum(t, 1, out) is out
    assert tensor.average(t) == pytest.approx(x.mean())
    np.testing.assert_allclose(npy(tensor.average(t, 0)), x.mean(0))
    m = x[0]
    tm = tensor.from_numpy(m)
    np.testing.assert_allclose(npy(tensor.sum_columns(tm)), m.sum(1, keepdims=True))
    np.testing.assert_allclose(npy(tensor.sum_rows(tm)), m.sum(0, keepdims=True))


@needs("Softmax")
def test_softmax():
    x = arr((3, 5))
    e = np.exp(x - x.max(-1, keepdims=True))
    np.testing.assert_allclose(npy(tensor.softmax(tensor.from_numpy(x))),
                               e / e.sum(-1, keepdims=True), rtol=1e-5)


@needs("MatMul")
def test_mult_and_tensordot():
    a, b, v = arr((3, 4)), arr((4, 5)), arr((4,))
    ta, tb = tensor.from_numpy(a), tensor.from_numpy(b)
    np.testing.assert_allclose(npy(tensor.mult(ta, tb)), a @ b, rtol=1e-5)
    np.testing.assert_allclose(npy(tensor.mult(ta, tensor.from_numpy(v))), a @ v, rtol=1e-5)
    np.testing.assert_allclose(npy(ta @ tb), a @ b, rtol=1e-5)
    c = arr((3, 5))
    tc = tensor.from_numpy(c)
    assert tensor.mult(ta, tb, tc, alpha=2.0, beta=0.5) is tc
    np.testing.assert_allclose(npy(tc), 2 * a @ b + 0.5 * c, rtol=1e-5)
    x, y = arr((3, 2, 4)), arr((4, 2, 5))
    tx, ty = tensor.from_numpy(x), tensor.from_numpy(y)
    np.testing.assert_allclose(npy(tensor.tensordot(tx, ty, 1)), np.tensordot(x, y, 1), rtol=1e-5)
    np.testing.assert_allclose(npy(tensor.tensordot(tx, ty, ([1, 2], [1, 0]))),
                               np.tensordot(x, y, ([1, 2], [1, 0])), rtol=1e-5)
    with pytest.raises(ValueError, match="mismatch"):
        tensor.tensordot(tx, ty, ([0], [0]))


def test_einsum_without_reduction():
    a, b = arr((4, 3)), arr((4, 3))
    ta, tb = tensor.from_numpy(a), tensor.from_numpy(b)
    np.testing.assert_allclose(npy(tensor.einsum("ki,ki->ki", ta, tb)), a * b, rtol=1e-6)
    np.testing.assert_allclose(npy(tensor.einsum("ki,kj->kij", ta, tb)),
                               np.einsum("ki,kj->kij", a, b), rtol=1e-6)
    np.testing.assert_allclose(npy(tensor.einsum("ij->ji", ta)), a.T)
    with pytest.raises(ValueError):
        tensor.einsum("ij,jk->ik", ta)
    with pytest.raises(ValueError, match="sizes"):
        tensor.einsum("ij,ij->ij", ta, tensor.from_numpy(arr((4, 2))))


@needs("ReduceSum")
def test_einsum_with_reduction():
    a, b = arr((4, 3)), arr((3, 4))
    c = arr((3, 2, 2))
    for spec, ops in [("ij,jk->ik", (a, b)), ("kia,kja->kij", (c, c)), ("ij->j", (a,)),
                      ("ij,jk", (a, b))]:
        got = tensor.einsum(spec, *[tensor.from_numpy(o) for o in ops])
        np.testing.assert_allclose(npy(got), np.einsum(spec, *ops), rtol=1e-5, atol=1e-6,
                                   err_msg=spec)


def test_truth_value_follows_numpy():
    assert bool(tensor.from_numpy(np.array([2.0], np.float32)))
    assert not bool(tensor.zeros(()))
    with pytest.raises(ValueError, match="ambiguous"):
        bool(tensor.ones((2,)))


def test_a_tensor_without_data_holds_zeros_even_in_reused_memory():
    for _ in range(3):  # freed memory comes back from the pool's cache
        t = tensor.from_numpy(np.full((64, 64), 7.0, np.float32))
        del t
        z = tensor.Tensor((64, 64))
        np.testing.assert_array_equal(tensor.to_numpy(z), np.zeros((64, 64), np.float32))
        assert (tensor.to_numpy(tensor.Tensor((3,), dtype=tensor.int32)) == 0).all()
    assert tensor.empty((2, 3)).shape == (2, 3)
