"""singa.check: a model run by singa and by onnxruntime on the same inputs.

    python -m singa.check model.onnx [--input FILE ...] [--atol A] [--rtol R]
                          [--dim NAME=N ...] [--threads N] [--seed N]

This is the `singa check` command: the singa executable checks its arguments
and then runs this module, which runs the model through singa's Python
binding and through onnxruntime in the same process. It prints singa's
outputs, then for each output the largest absolute and relative differences
and the number of elements outside atol + rtol * |onnxruntime|.

Inputs come from --input files (.npy files in the model's input order or as
NAME=FILE.npy, or an .npz file of arrays named like the inputs); the others
are generated as `singa run --generate` makes them: floats uniform in [0, 1)
from the seed, integers 0, bools false. Symbolic dims are 1 unless --dim
NAME=N sets them.

The exit status is 0 when every element is within the tolerance, and also
when onnxruntime is not installed (the model then runs in singa only and the
check says so); 1 when an element is outside the tolerance or onnxruntime
fails on the model; 2 for bad input (arguments, files, the model), each
error one line on stderr.
"""
import argparse
import math
import os
import sys
import zipfile

import numpy as np

from . import _singa, sonnx, tensor

_PROG = "singa check"
_DT = _singa.DType
# Float types numpy cannot compute in: generated as float32, then converted.
_NARROW_FLOATS = (_DT.float8e4m3fn, _DT.float8e4m3fnuz, _DT.float8e5m2, _DT.float8e5m2fnuz,
                  _DT.float4e2m1)
_FLOATS = (_DT.float16, _DT.bfloat16, _DT.float32, _DT.float64)


class UsageError(Exception):
    """A mistake in the command line (an option, a dim, an input name)."""


class InputError(Exception):
    """An input file that cannot be read."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


class _Once(argparse.Action):
    """An option that takes one value and may be given once."""

    def __call__(self, parser, namespace, values, option_string=None):
        if getattr(namespace, self.dest) is not None:
            raise UsageError(f"{option_string} is given twice")
        setattr(namespace, self.dest, values)


def parse_args(argv):
    """The command line as an argparse.Namespace: model, input, dim, atol,
    rtol, threads and seed (option values as given, as strings)."""
    p = _Parser(prog=_PROG, allow_abbrev=False, add_help=False,
                description="Runs the model with singa and with onnxruntime on the same inputs "
                            "and reports the largest differences per output.")
    p.add_argument("-h", "--help", action="help", help="Prints this help and exits.")
    p.add_argument("model", nargs="?", metavar="MODEL.onnx", help="The ONNX model file.")
    p.add_argument("--input", action="extend", nargs="+", default=[], metavar="[NAME=]FILE",
                   help="Reads input values from .npy files, in the model's input order or as "
                        "NAME=FILE.npy, or from an .npz file of arrays named like the inputs; "
                        "an argument ending in .onnx is the model.")
    p.add_argument("--atol", action=_Once, metavar="A",
                   help="Sets the absolute tolerance (the default is 1e-4).")
    p.add_argument("--rtol", action=_Once, metavar="R",
                   help="Sets the relative tolerance (the default is 1e-3).")
    p.add_argument("--dim", action="extend", nargs="+", default=[], metavar="NAME=N",
                   help="Sets the symbolic input dim NAME to N (a dim not given is 1).")
    p.add_argument("--threads", action=_Once, metavar="N",
                   help="Runs the model's ops on N threads (the default is one per core).")
    p.add_argument("--seed", action=_Once, metavar="N",
                   help="Seeds the generated inputs (the default is 0).")
    args = p.parse_args(argv)
    # --input takes one or more files: a file ending in .onnx among them is the model.
    for f in [f for f in args.input if f.endswith(".onnx")]:
        if args.model is not None:
            raise UsageError(f"unexpected argument '{f}' (one MODEL only)")
        args.model = f
        args.input.remove(f)
    if args.model is None:
        raise UsageError("no MODEL.onnx given")
    return args


def _int(text, name, min_value):
    """An int64 written in decimal digits, with an optional minus sign."""
    digits = text[1:] if text.startswith("-") else text
    v = int(text) if digits.isascii() and digits.isdigit() else None
    if v is None or not -(2 ** 63) <= v < 2 ** 63:
        raise UsageError(f"{name} takes an integer, got '{text}'")
    if v < min_value:
        raise UsageError(f"{name} must be at least {min_value}, got {v}")
    return v


def _number(text, name):
    try:
        v = float(text)
    except ValueError:
        v = -1.0
    if not v >= 0:
        raise UsageError(f"{name} takes a non-negative number, got '{text}'")
    return v


def parse_dims(specs, infos):
    """{NAME: N} from --dim NAME=N for the symbolic dims of the inputs `infos`;
    a UsageError names a NAME that none of them has."""
    symbols = sorted({p for info in infos for p in info.dim_params if p})
    dims = {}
    for s in specs:
        name, eq, value = s.partition("=")
        if not eq or not name:
            raise UsageError(f"--dim takes NAME=N, got '{s}'")
        if name not in symbols:
            known = f"they have {', '.join(symbols)}" if symbols else "they have none"
            raise UsageError(f"--dim {s}: the model's inputs have no symbolic dim '{name}' "
                             f"({known})")
        v = _int(value, f"--dim {name}", -(2 ** 63))
        if v < 0:
            raise UsageError(f"--dim {name} must not be negative")
        dims[name] = v
    return dims


def _describe(info):
    """'x: float32[N,3,224,224]', as singa info writes an input."""
    if info.dtype is None and not info.has_shape:
        return f"{info.name}: (type not declared)"
    s = f"{info.name}: " + ("?" if info.dtype is None else _singa.dtype_name(info.dtype))
    if not info.has_shape:
        return s + "[shape not declared]"
    return s + "[" + ",".join(str(d) if d >= 0 else (p or "?")
                              for d, p in zip(info.dims, info.dim_params)) + "]"


def generated_input(info, dims):
    """A generated value for the input `info`: floats uniform in [0, 1) from
    the CPU device's seed, integers 0, bools false; symbolic dims from `dims`
    (default 1)."""
    if not info.has_shape or info.dtype is None:
        what = "element type" if info.has_shape else "shape"
        raise UsageError(f"input '{info.name}' declares no {what}; give its value with "
                         f"--input {info.name}=FILE.npy")
    if info.dtype == _DT.string:
        raise UsageError(f"input '{info.name}' holds strings; give its value with --input "
                         f"{info.name}=FILE.npy")
    shape = [d if d >= 0 else dims.get(p, 1) for d, p in zip(info.dims, info.dim_params)]
    narrow = info.dtype in _NARROW_FLOATS
    try:
        t = _singa.CTensor(shape, _DT.float32 if narrow else info.dtype)
    except _singa.Error as e:  # the size, refused before allocating: named by the input
        raise type(e)(f"input '{info.name}': " + str(e).removeprefix("Tensor: ")) from None
    if narrow or info.dtype in _FLOATS:
        _singa.uniform(t, 0.0, 1.0)
    else:
        t.fill(0)
    return tensor.to_numpy(tensor.from_raw_tensor(t.astype(info.dtype) if narrow else t))


def _load(path, suffix):
    """The array of an .npy file or the {name: array} of an .npz file."""
    kind = "an .npz file" if suffix == ".npz" else "a .npy file"
    try:
        with open(path, "rb") as f:
            loaded = np.load(f, allow_pickle=False)
            if isinstance(loaded, np.lib.npyio.NpzFile):
                with loaded:
                    arrays = {k: loaded[k] for k in loaded.files}
                if suffix != ".npz":
                    raise ValueError("it holds several arrays")
                return arrays
            if suffix == ".npz":
                raise ValueError("it is not a zip of .npy files")
            return loaded
    except OSError as e:
        raise InputError(f"cannot open '{path}': {e.strerror or e}") from None
    except (ValueError, EOFError, zipfile.BadZipFile) as e:
        raise InputError(f"'{path}' is not {kind} ({str(e).strip() or type(e).__name__})") \
            from None


def model_inputs(infos, specs, dims):
    """One numpy array per input of `infos`: from the --input `specs`
    (NAME=FILE.npy, FILE.npy in input order, or FILE.npz of arrays named
    like the inputs), the others generated (generated_input)."""
    names = ", ".join(v.name for v in infos)
    index = {v.name: i for i, v in enumerate(infos)}
    values = [None] * len(infos)

    def put(i, array, source):
        if values[i] is not None:
            raise UsageError(f"input '{infos[i].name}' is given twice (again by {source})")
        values[i] = array

    for spec in specs:
        path, named = spec, None
        name, eq, rest = spec.partition("=")
        if eq and not os.path.exists(spec):  # not a file named so: NAME=FILE
            if name not in index:
                raise UsageError(f"--input {spec}: the model has no input '{name}' "
                                 f"(inputs: {names})")
            path, named = rest, index[name]
        if path.endswith(".npz"):
            if named is not None:
                raise UsageError(f"--input {spec}: NAME= takes an .npy file")
            for key, array in _load(path, ".npz").items():
                i = index.get(key)
                # np.savez(a, b) names its arrays arr_0, arr_1, ...: input order.
                if i is None and key.startswith("arr_") and key[4:].isdigit():
                    i = int(key[4:]) if int(key[4:]) < len(infos) else None
                if i is None:
                    raise UsageError(f"'{path}' has array '{key}', which is not an input of the "
                                     f"model (inputs: {names})")
                put(i, array, f"'{path}'")
            continue
        array = _load(path, ".npy")
        if named is None:
            named = next((i for i, v in enumerate(values) if v is None), None)
            if named is None:
                raise UsageError(f"--input {spec}: the model takes {len(infos)} input(s) "
                                 f"({names}), all given already")
        put(named, array, f"'{path}'")
    return [v if v is not None else generated_input(infos[i], dims) for i, v in enumerate(values)]


class Diff:
    """How far singa's output is from onnxruntime's: the largest absolute and
    relative differences and the number of elements outside the tolerance."""

    def __init__(self, max_abs, max_rel, mismatched):
        self.max_abs, self.max_rel, self.mismatched = max_abs, max_rel, mismatched


def compare(got, want, atol, rtol):
    """The Diff of `got` (singa) from `want` (onnxruntime), arrays of one shape.
    NaN matches only NaN, equal infinities match; relative differences skip
    the elements with |want| <= atol, which say nothing."""
    a = np.asarray(got).astype(np.float64).ravel()
    b = np.asarray(want).astype(np.float64).ravel()
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    nan_mismatch = int(np.count_nonzero(nan_a != nan_b))
    differ = ~nan_a & ~nan_b & (a != b)
    a, b = a[differ], b[differ]
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(a - b)
        rel = diff[np.abs(b) > atol] / np.abs(b[np.abs(b) > atol])
        mismatched = int(np.count_nonzero(~(diff <= atol + rtol * np.abs(b))))
    max_abs = float(diff.max()) if diff.size else 0.0
    max_rel = float(rel.max()) if rel.size else 0.0
    if nan_mismatch:
        max_abs = max_rel = math.inf
    return Diff(max_abs, max_rel, mismatched + nan_mismatch)


def _shape_text(array):
    """'float32[2,5]', as singa writes a tensor's type."""
    dt = _singa.dtype_name(tensor._np_to_dtype(array.dtype))
    return f"{dt}[{','.join(str(d) for d in array.shape)}]"


def _onnxruntime(model, feeds, threads):
    """onnxruntime's outputs {name: array}, or the ImportError that says it is
    not installed."""
    try:
        import onnxruntime as ort
    except ImportError as e:
        return e
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    results = sess.run(None, feeds)
    return {o.name: r for o, r in zip(sess.get_outputs(), results)}


def check(args):
    """Runs the check of the parsed command line `args` (parse_args) and
    returns the exit status: 0 ok, 1 when an element is outside the tolerance
    or onnxruntime fails on the model."""
    if args.threads is not None:
        _singa.set_num_threads(_int(args.threads, "--threads", 1))
    atol = 1e-4 if args.atol is None else _number(args.atol, "--atol")
    rtol = 1e-3 if args.rtol is None else _number(args.rtol, "--rtol")
    seed = 0 if args.seed is None else _int(args.seed, "--seed", 0)
    _singa.Device.cpu().set_rand_seed(seed)
    rep = sonnx.prepare(args.model)
    infos = rep.inputs
    dims = parse_dims(args.dim, infos)
    inputs = model_inputs(infos, args.input, dims)
    names = [o.name for o in rep.outputs]
    got = []
    for name, out in zip(names, rep.run(inputs)):
        if not isinstance(out, tensor.Tensor):
            raise UsageError(f"output '{name}' is a sequence or an empty optional; singa check "
                             f"compares tensor outputs")
        got.append(out)
    try:
        expected = _onnxruntime(args.model, {v.name: x for v, x in zip(infos, inputs)},
                                _singa.get_num_threads())
    except Exception as e:  # onnxruntime's own errors have no common base class
        text = str(e).strip()
        why = f"{type(e).__name__}: {text.splitlines()[0]}" if text else type(e).__name__
        for name, out in zip(names, got):
            print(f"{name}: {out.data!r}")
        print(f"{_PROG}: onnxruntime failed on the model: {why}", file=sys.stderr)
        return 1
    for name, out in zip(names, got):
        print(f"{name}: {out.data!r}")
    if isinstance(expected, ImportError):
        print(f"no comparison: onnxruntime is not installed for {sys.executable} ({expected})")
        return 0

    print("%-24s %-22s %12s %12s %10s  %s" % ("output", "shape", "max abs", "max rel",
                                              "mismatch", ""))
    ok = True
    for name, out in zip(names, got):
        want = expected.get(name)
        mine = tensor.to_numpy(out)
        shape = repr(out.data)
        if want is None or tuple(want.shape) != tuple(mine.shape):
            print("%-24s %-22s FAIL: onnxruntime gives %s"
                  % (name, shape, "no such output" if want is None else _shape_text(want)))
            ok = False
            continue
        if mine.dtype.kind in "OUS" or want.dtype.kind in "OUS":
            same = [str(x) for x in mine.ravel()] == [str(x) for x in want.ravel()]
            print("%-24s %-22s %s" % (name, shape,
                                      "ok (strings equal)" if same else "FAIL (strings differ)"))
            ok &= same
            continue
        d = compare(mine, want, atol, rtol)
        print("%-24s %-22s %12.3g %12.3g %10d  %s" % (name, shape, d.max_abs, d.max_rel,
                                                      d.mismatched,
                                                      "FAIL" if d.mismatched else "ok"))
        ok &= d.mismatched == 0
    print("%s: |singa - onnxruntime| <= %g + %g * |onnxruntime| %s"
          % ("ok" if ok else "FAIL", atol, rtol,
             "for every element" if ok else "fails for some elements"))
    return 0 if ok else 1


def _one_line(text):
    return " ".join(str(text).split("\n"))


def main(argv=None):
    """The command: parses `argv` (default: sys.argv[1:]), runs the check and
    returns the exit status; every error is one line on stderr."""
    try:
        return check(parse_args(sys.argv[1:] if argv is None else argv))
    except UsageError as e:
        print(f"{_PROG}: {_one_line(e)} (see {_PROG} --help)", file=sys.stderr)
    except (_singa.Error, InputError) as e:
        print(f"{_PROG}: {_one_line(e)}", file=sys.stderr)
    except Exception as e:  # a bug or the machine (memory), still one line
        print(f"{_PROG}: internal error: {_one_line(e)}", file=sys.stderr)
        return 1
    return 2


if __name__ == "__main__":
    sys.exit(main())
