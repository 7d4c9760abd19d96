// singa._singa: the thin binding under the Python package. It exposes the C++
// types as they are (DType, Device, Tensor, the op registry); python/singa
// adds SINGA's documented Python names on top.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <optional>

#include "singa/autograd/autograd.h"
#include "singa/core/cancel.h"
#include "singa/core/mempool.h"
#include "singa/core/parallel.h"
#include "singa/core/random.h"
#include "singa/core/tensor.h"
#include "singa/core/version.h"
#include "singa/kernels/cpu.h"
#include "singa/ops/op.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace singa {
namespace {

// `with device.memory_limit(bytes):` (python/singa/device.py): a MemoryLimit
// on the device's pool from __enter__ to __exit__.
struct MemoryLimitScope {
  MemoryLimitScope(Device device, size_t bytes) : device(device), bytes(bytes) {}
  Device device;
  size_t bytes;
  std::optional<MemoryLimit> scope;
};

// singa._singa.build_info(): the optional parts this build has. CMake
// defines SINGA_CUDA, SINGA_MPI and SINGA_IMAGE for this file as it does for
// the library's sources that use them.
nb::dict BuildInfo() {
  nb::dict info;
  info["version"] = Version();
  info["cuda"] = false;
  info["mpi"] = false;
  info["image_codecs"] = false;
#if SINGA_CUDA
  info["cuda"] = true;
#endif
#if SINGA_MPI
  info["mpi"] = true;
#endif
#if SINGA_IMAGE
  info["image_codecs"] = true;
#endif
  return info;
}

// numpy can hold these directly; the rest travel as same-size unsigned
// carriers that python/singa views through ml_dtypes.
nb::dlpack::dtype DLDType(DType dt) {
  using nb::dlpack::dtype_code;
  auto make = [](dtype_code c, int bits) {
    return nb::dlpack::dtype{uint8_t(c), uint8_t(bits), 1};
  };
  switch (dt) {
    case DType::kFloat16:
      return make(dtype_code::Float, 16);
    case DType::kFloat32:
      return make(dtype_code::Float, 32);
    case DType::kFloat64:
      return make(dtype_code::Float, 64);
    case DType::kInt8:
      return make(dtype_code::Int, 8);
    case DType::kInt16:
      return make(dtype_code::Int, 16);
    case DType::kInt32:
      return make(dtype_code::Int, 32);
    case DType::kInt64:
      return make(dtype_code::Int, 64);
    case DType::kBool:
      return make(dtype_code::Bool, 8);
    case DType::kComplex64:
      return make(dtype_code::Complex, 64);
    case DType::kComplex128:
      return make(dtype_code::Complex, 128);
    default:
      return make(dtype_code::UInt, static_cast<int>(SizeOf(dt) * 8));
  }
}

DType FromDLDType(nb::dlpack::dtype d) {
  using nb::dlpack::dtype_code;
  auto code = static_cast<dtype_code>(d.code);
  if (code == dtype_code::Float && d.bits == 16) return DType::kFloat16;
  if (code == dtype_code::Float && d.bits == 32) return DType::kFloat32;
  if (code == dtype_code::Float && d.bits == 64) return DType::kFloat64;
  if (code == dtype_code::Bfloat && d.bits == 16) return DType::kBFloat16;
  if (code == dtype_code::Int && d.bits == 8) return DType::kInt8;
  if (code == dtype_code::Int && d.bits == 16) return DType::kInt16;
  if (code == dtype_code::Int && d.bits == 32) return DType::kInt32;
  if (code == dtype_code::Int && d.bits == 64) return DType::kInt64;
  if (code == dtype_code::UInt && d.bits == 8) return DType::kUInt8;
  if (code == dtype_code::UInt && d.bits == 16) return DType::kUInt16;
  if (code == dtype_code::UInt && d.bits == 32) return DType::kUInt32;
  if (code == dtype_code::UInt && d.bits == 64) return DType::kUInt64;
  if (code == dtype_code::Bool) return DType::kBool;
  if (code == dtype_code::Complex && d.bits == 64) return DType::kComplex64;
  if (code == dtype_code::Complex && d.bits == 128) return DType::kComplex128;
  throw DTypeError("unsupported array dtype (code " + std::to_string(d.code) + ", " +
                   std::to_string(d.bits) + " bits)");
}

using Array = nb::ndarray<nb::numpy>;
using AnyArray = nb::ndarray<nb::ro, nb::device::cpu>;

// A zero-copy numpy view of a tensor's elements (the array keeps the storage
// alive). Strings come back as a list instead.
nb::object ToNumpy(const Tensor& given) {
  SINGA_CHECK(given.defined(), Error, "to_numpy: the tensor is undefined");
  // A GPU tensor's values are copied to the host.
  const Tensor t = given.ToDevice(Device::Cpu());
  if (t.dtype() == DType::kString) {
    std::vector<std::string> v;
    Tensor c = t.Contiguous();
    const std::string* p = c.data<std::string>();
    v.assign(p, p + c.numel());
    return nb::cast(v);
  }
  auto* keep = new Tensor(t);
  nb::capsule owner(keep, [](void* p) noexcept { delete static_cast<Tensor*>(p); });
  std::vector<size_t> shape(t.shape().begin(), t.shape().end());
  return nb::cast(Array(t.empty() ? nullptr : t.raw_data(), t.ndim(), shape.data(), owner,
                        t.strides().data(), DLDType(t.dtype())));
}

// The array's elements in place, as `dst` (a carrier array reinterpreted):
// borrowed memory (Block::borrowed), which the caller keeps alive while the
// tensor is in use.
Tensor ViewNumpy(const AnyArray& a, DType dst) {
  DType src = FromDLDType(a.dtype());
  Shape shape(a.ndim());
  Strides strides(a.ndim());
  for (size_t i = 0; i < a.ndim(); ++i) {
    shape[i] = static_cast<int64_t>(a.shape(i));
    strides[i] = a.stride(i);
  }
  // numpy has no bfloat16/float8/4-bit types: python/singa passes their bits in
  // an unsigned carrier array of the same size, which is reinterpreted here.
  bool carrier = dst != src && SizeOf(src) == SizeOf(dst) &&
                 (src == DType::kUInt8 || src == DType::kUInt16) && !IsInteger(dst) &&
                 dst != DType::kFloat16 && dst != DType::kBool;
  return Tensor::Wrap(const_cast<void*>(a.data()), carrier ? dst : src, shape, strides, nullptr);
}

// Copies an array into a new tensor of `dtype` (the array's own dtype when
// undefined; a carrier array is reinterpreted as `dtype`).
Tensor FromNumpy(AnyArray a, std::optional<std::string> dtype_name) {
  const DType src = FromDLDType(a.dtype());
  const DType dst = dtype_name ? DTypeFromName(*dtype_name) : src;
  const Tensor view = ViewNumpy(a, dst);
  // Copied now even while a graph is captured: the array may be gone by the
  // replay, and shape inference may read the values at once.
  CaptureSuspendGuard now(Device::Cpu());
  Tensor out(view.shape(), dst);
  out.CopyFrom(view);
  return out;
}

Tensor FromStrings(const std::vector<std::string>& values, const Shape& shape) {
  Tensor t(shape, DType::kString);
  SINGA_CHECK(static_cast<int64_t>(values.size()) == t.numel(), ShapeError,
              "from_numpy: " << values.size() << " strings for shape " << ToString(shape));
  std::string* p = t.data<std::string>();
  for (size_t i = 0; i < values.size(); ++i) p[i] = values[i];
  return t;
}

AttrValue ToAttrValue(nb::handle v, const std::string& key) {
  if (v.is_none()) return std::monostate{};
  if (nb::isinstance<bool>(v)) return static_cast<int64_t>(nb::cast<bool>(v));
  if (nb::isinstance<nb::int_>(v)) return nb::cast<int64_t>(v);
  if (nb::isinstance<nb::float_>(v)) return nb::cast<float>(v);
  if (nb::isinstance<nb::str>(v)) return nb::cast<std::string>(v);
  if (nb::isinstance<Tensor>(v)) return nb::cast<Tensor>(v);
  if (nb::isinstance<DType>(v)) return static_cast<int64_t>(nb::cast<DType>(v));
  if (nb::isinstance<nb::list>(v) || nb::isinstance<nb::tuple>(v)) {
    nb::sequence seq = nb::borrow<nb::sequence>(v);
    size_t n = nb::len(seq);
    bool all_int = true, all_num = true, all_str = true, all_tensor = true;
    for (nb::handle e : seq) {
      bool is_int = nb::isinstance<nb::int_>(e);
      all_int &= is_int;
      all_num &= is_int || nb::isinstance<nb::float_>(e);
      all_str &= nb::isinstance<nb::str>(e);
      all_tensor &= nb::isinstance<Tensor>(e);
    }
    if (n == 0 || all_int) {
      std::vector<int64_t> out;
      for (nb::handle e : seq) out.push_back(nb::cast<int64_t>(e));
      return out;
    }
    if (all_num) {
      std::vector<float> out;
      for (nb::handle e : seq) out.push_back(nb::cast<float>(e));
      return out;
    }
    if (all_str) {
      std::vector<std::string> out;
      for (nb::handle e : seq) out.push_back(nb::cast<std::string>(e));
      return out;
    }
    if (all_tensor) {
      std::vector<Tensor> out;
      for (nb::handle e : seq) out.push_back(nb::cast<Tensor>(e));
      return out;
    }
  }
  throw ShapeError("attribute '" + key + "': unsupported Python value of type " +
                   nb::cast<std::string>(nb::str(v.type())));
}

nb::object FromAttrValue(const AttrValue& v) {
  return std::visit(
      [](const auto& x) -> nb::object {
        using X = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<X, std::monostate> || std::is_same_v<X, SubgraphPtr>)
          return nb::none();  // a graph is the importer's: Python sees none
        else
          return nb::cast(x);
      },
      v);
}

TensorList CallOpPy(const std::string& name, const std::vector<std::optional<Tensor>>& inputs,
                    nb::dict attrs, int opset, int num_outputs, bool reference,
                    const std::string& domain) {
  TensorList in;
  in.reserve(inputs.size());
  for (auto& t : inputs) in.push_back(t ? *t : Tensor());
  AttrMap m;
  for (auto [k, v] : attrs) {
    std::string key = nb::cast<std::string>(k);
    m[key] = ToAttrValue(v, key);
  }
  const OpSchema& s = OpRegistry::Get(name, opset, domain);
  auto parsed = s.ParseAttrs(m, in);
  nb::gil_scoped_release release;
  KernelVariantGuard guard(reference ? KernelVariant::kReference : KernelVariant::kFast);
  return s.Run(in, parsed, num_outputs);
}

const std::shared_ptr<const void>& NoAttrsPtr() {
  static const std::shared_ptr<const void> p = std::make_shared<NoAttrs>();
  return p;
}

Tensor BinaryOp(const OpSchema& s, const Tensor& a, const Tensor& b) {
  Tensor in[2] = {a, b};
  return s.Run(in, NoAttrsPtr())[0];
}

// A Python number as a 0-d tensor of `like`'s dtype (SINGA's scalar operands
// take the tensor's type). The last scalar per dtype is kept: loops such as
// `x * 0.5` then allocate only their result. Callers hold the GIL, and ops
// never write their inputs, so sharing the cached tensor is safe.
Tensor ScalarLike(const Tensor& like, double v) {
  SINGA_CHECK(like.defined(), Error, "operand is an undefined tensor");
  struct Cached {
    double value;
    Tensor t;
  };
  static Cached cache[kNumDTypes];
  Cached& c = cache[static_cast<int>(like.dtype())];
  if (c.t.defined() && c.t.device() == like.device() && std::memcmp(&c.value, &v, sizeof v) == 0)
    return c.t;
  Tensor t = Tensor::Full({}, v, like.dtype(), like.device());
  // While a graph is captured the fill is only recorded: not reusable eagerly.
  if (!like.device().graph_enabled()) c = {v, t};
  return t;
}

// a op= b, writing into a's storage. The kernel runs straight into `a` when
// that is safe (same dtype, dense, no overlap with b); otherwise the op runs
// normally (which checks and names dtypes) and the result is copied back.
void BinaryInplace(const OpSchema& s, Tensor& a, const Tensor& b) {
  Tensor in[2] = {a, b};
  InferCtx ctx(s, in, 1, "");
  SpecList spec = s.infer(ctx, NoAttrsPtr().get());
  SINGA_CHECK(spec[0].shape == a.shape(), ShapeError,
              s.name << " (in place): result shape " << ToString(spec[0].shape) << " of "
                     << a.ToString() << " and " << b.ToString()
                     << " does not fit the left operand");
  if (a.dtype() != b.dtype() || !a.is_contiguous() || a.block() == b.block()) {
    a.CopyFrom(s.Run(in, NoAttrsPtr())[0]);
    return;
  }
  Tensor out[1] = {a};
  auto fn = s.kernel;
  a.device().Exec(
      [fn, x = a, y = b]() mutable {
        Tensor ins[2] = {x, y};
        Tensor outs[1] = {x};
        KernelCtx k{ins, outs};
        fn(k, NoAttrsPtr().get());
      },
      in, out);
}

}  // namespace

Tensor BorrowNumpy(nb::handle array) {
  const AnyArray a = nb::cast<AnyArray>(array);
  return ViewNumpy(a, FromDLDType(a.dtype()));
}

}  // namespace singa

using namespace singa;

namespace singa {
void BindNN(nb::module_& m);  // nn_bindings.cc

// singa's Python exception types, most derived last.
struct ErrorTypes {
  nb::handle error, shape, dtype, invalid, unsupported, io, memory, cancelled;
};
void SetError(nb::handle type, const Error& e) {
  const char* msg = e.what();
  PyObject* text =
      PyUnicode_DecodeUTF8(msg, static_cast<Py_ssize_t>(std::strlen(msg)), "backslashreplace");
  PyErr_SetObject(type.ptr(), text);
  Py_XDECREF(text);
}
// A Python exception class singa._singa.NAME deriving from `builtin` and,
// when given, from `base`; the module holds it.
nb::handle NewError(nb::module_& m, const char* name, PyObject* builtin, nb::handle base) {
  const std::string qualified = std::string("singa._singa.") + name;
  nb::object bases =
      base ? nb::make_tuple(base, nb::handle(builtin)) : nb::make_tuple(nb::handle(builtin));
  nb::object type = nb::steal(PyErr_NewException(qualified.c_str(), bases.ptr(), nullptr));
  if (!type) throw nb::python_error();
  m.attr(name) = type;
  return type;
}
void BindOnnx(nb::module_& m);  // onnx_bindings.cc
void BindDist(nb::module_& m);  // dist_bindings.cc
}  // namespace singa

NB_MODULE(_singa, m) {
  m.doc() = "singa C++ core";

  // Errors: ValueError / NotImplementedError / OSError subclasses.
  // Registered base first: nanobind tries the newest translator first.
  // Each is a subclass of Error, so `except singa.Error` catches them all,
  // and of the built-in class a Python user would expect.
  const nb::handle error = NewError(m, "Error", PyExc_RuntimeError, {});
  static ErrorTypes types{error,
                          NewError(m, "ShapeError", PyExc_ValueError, error),
                          NewError(m, "DTypeError", PyExc_ValueError, error),
                          NewError(m, "InvalidModel", PyExc_ValueError, error),
                          NewError(m, "UnsupportedOp", PyExc_NotImplementedError, error),
                          NewError(m, "SingaIOError", PyExc_OSError, error),
                          NewError(m, "SingaMemoryError", PyExc_MemoryError, error),
                          NewError(m, "Cancelled", PyExc_RuntimeError, error)};
  // The message may carry bytes from a file that are not UTF-8 (shown as
  // \xNN, never a UnicodeDecodeError in place of the error).
  nb::register_exception_translator(
      [](const std::exception_ptr& p, void* payload) {
        const auto& t = *static_cast<const ErrorTypes*>(payload);
        try {
          std::rethrow_exception(p);
        } catch (const MemoryError& e) {
          SetError(t.memory, e);
        } catch (const Cancelled& e) {
          SetError(t.cancelled, e);
        } catch (const IOError& e) {
          SetError(t.io, e);
        } catch (const UnsupportedOp& e) {
          SetError(t.unsupported, e);
        } catch (const InvalidModel& e) {
          SetError(t.invalid, e);
        } catch (const DTypeError& e) {
          SetError(t.dtype, e);
        } catch (const ShapeError& e) {
          SetError(t.shape, e);
        } catch (const Error& e) {
          SetError(t.error, e);
        }
      },
      &types);
  // Ctrl-C stops a run at its next cancellation point (a Loop iteration)
  // with KeyboardInterrupt, even while the run has released the GIL.
  SetInterruptHook([] {
    if (!Py_IsInitialized()) return;
    nb::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) throw nb::python_error();
  });
  m.attr("__version__") = Version();
  m.def("build_info", &BuildInfo,
        "What this build has: {'version', 'cuda', 'mpi', 'image_codecs'}; cuda, mpi and "
        "image_codecs are False where singa was built without them (SINGA_CUDA, SINGA_MPI, "
        "SINGA_IMAGE).");
  m.def("max_tensor_bytes", &MaxTensorBytes,
        "The largest tensor singa allocates (default: the machine's physical memory).");
  m.def("set_max_tensor_bytes", &SetMaxTensorBytes, "bytes"_a,
        "Refuse tensors larger than this many bytes (MemoryError naming the tensor) before "
        "allocating them.");

  nb::enum_<DType> dt(m, "DType");
  for (int i = 1; i < kNumDTypes; ++i) {
    auto d = static_cast<DType>(i);
    dt.value(std::string(Name(d)).c_str(), d);
  }
  m.def("dtype_from_name", &DTypeFromName);
  m.def("dtype_name", [](DType d) { return std::string(Name(d)); });
  m.def("dtype_size", &SizeOf);

  nb::enum_<DeviceType>(m, "DeviceType")
      .value("cpu", DeviceType::kCpu)
      .value("cuda", DeviceType::kCuda)
      .value("opencl", DeviceType::kOpenCL);

  nb::class_<MemStats>(m, "MemStats")
      .def_ro("current_bytes", &MemStats::current_bytes)
      .def_ro("peak_bytes", &MemStats::peak_bytes)
      .def_ro("cached_bytes", &MemStats::cached_bytes)
      .def_ro("num_mallocs", &MemStats::num_mallocs)
      .def_ro("num_os_allocs", &MemStats::num_os_allocs)
      .def("__repr__", [](const MemStats& s) {
        return "MemStats(current_bytes=" + std::to_string(s.current_bytes) +
               ", peak_bytes=" + std::to_string(s.peak_bytes) +
               ", cached_bytes=" + std::to_string(s.cached_bytes) + ")";
      });

  nb::class_<MemoryLimitScope>(m, "MemoryLimit")
      .def(nb::init<Device, size_t>(), "device"_a, "bytes"_a)
      .def("__enter__",
           [](MemoryLimitScope& s) {
             SINGA_CHECK(!s.scope, Error, "memory_limit: this limit is already in force");
             s.scope.emplace(s.device.mem_pool(), s.bytes);
           })
      .def("__exit__", [](MemoryLimitScope& s, nb::args) { s.scope.reset(); });

  nb::class_<Device>(m, "Device")
      .def_static("cpu", &Device::Cpu)
      .def_static("cuda", &Device::Cuda, "index"_a = 0)
      .def_static("num_cuda_gpus", &Device::NumCudaGpus)
      .def_static("opencl", &Device::OpenCL, "index"_a = 0)
      .def_ro("type", &Device::type)
      .def_ro("index", &Device::index)
      .def("__eq__", [](const Device& a, const Device& b) { return a == b; })
      .def("__hash__", [](const Device& d) { return static_cast<int>(d.type) * 1024 + d.index; })
      .def("__repr__", &Device::ToString)
      .def("enable_graph", &Device::EnableGraph, "enable"_a)
      .def("graph_enabled", &Device::graph_enabled)
      .def("run_graph", &Device::RunGraph, "sequential"_a = false)
      .def("reset_graph", &Device::ResetGraph)
      .def("graph_size", &Device::graph_size)
      .def("sync", &Device::Sync)
      .def("set_rand_seed", &Device::SetRandSeed, "seed"_a)
      .def("set_verbosity", &Device::SetVerbosity, "level"_a)
      // SINGA's documented (capitalised) names for the same methods.
      .def("EnableGraph", &Device::EnableGraph, "enable"_a)
      .def("RunGraph", &Device::RunGraph, "sequential"_a = false)
      .def("ResetGraph", &Device::ResetGraph)
      .def("Sync", &Device::Sync)
      .def("SetRandSeed", &Device::SetRandSeed, "seed"_a)
      .def("SetVerbosity", &Device::SetVerbosity, "level"_a)
      .def("id", [](const Device& d) { return d.index; })
      .def("mem_stats", [](const Device& d) { return d.mem_pool().stats(); })
      .def("reset_peak_memory", [](const Device& d) { d.mem_pool().ResetPeak(); })
      .def("empty_cache", [](const Device& d) { d.mem_pool().EmptyCache(); })
      .def("set_mem_caching", [](const Device& d, bool on) { d.mem_pool().set_caching(on); });

  nb::class_<Tensor>(m, "CTensor")
      .def(nb::init<>())
      .def(nb::init<Shape, DType, Device>(), "shape"_a, "dtype"_a = DType::kFloat32,
           "device"_a = Device::Cpu())
      .def_static("full", &Tensor::Full, "shape"_a, "value"_a, "dtype"_a = DType::kFloat32,
                  "device"_a = Device::Cpu())
      .def_static("from_numpy", &FromNumpy, "array"_a, "dtype"_a = nb::none())
      .def_static("from_strings", &FromStrings, "values"_a, "shape"_a)
      .def("numpy", &ToNumpy)
      .def("to_device", &Tensor::ToDevice, "device"_a)
      .def_prop_ro("defined", &Tensor::defined)
      .def_prop_ro("shape", [](const Tensor& t) { return nb::tuple(nb::cast(t.shape())); })
      .def_prop_ro("strides", [](const Tensor& t) { return t.strides(); })
      .def_prop_ro("offset", &Tensor::offset)
      .def_prop_ro("dtype", &Tensor::dtype)
      .def_prop_ro("device", &Tensor::device)
      .def("ndim", &Tensor::ndim)
      .def("numel", &Tensor::numel)
      .def("nbytes", &Tensor::nbytes)
      .def("itemsize", &Tensor::itemsize)
      .def("is_contiguous", &Tensor::is_contiguous)
      .def_prop_rw("requires_grad", &Tensor::requires_grad,
                   [](Tensor& t, bool on) { t.set_requires_grad(on); })
      .def_prop_rw("stores_grad", &Tensor::stores_grad,
                   [](Tensor& t, bool on) { t.set_stores_grad(on); })
      .def_prop_rw("name", &Tensor::name,
                   [](Tensor& t, std::string n) { t.set_name(std::move(n)); })
      .def_prop_ro("creator_op",
                   [](const Tensor& t) -> nb::object {
                     if (!t.creator()) return nb::none();
                     return nb::str(t.creator()->op->name.c_str());
                   })
      .def("detach", &Tensor::Detach)
      .def("same_tensor", [](const Tensor& a, const Tensor& b) { return a.id() == b.id(); })
      .def("shares_storage",
           [](const Tensor& a, const Tensor& b) { return a.block() == b.block(); })
      .def("reshape", &Tensor::Reshape, "shape"_a)
      .def("permute", &Tensor::Permute, "perm"_a)
      .def("transpose", &Tensor::Transpose)
      .def("slice", &Tensor::Slice, "axis"_a, "start"_a, "stop"_a, "step"_a = 1)
      .def("broadcast_to", &Tensor::BroadcastTo, "shape"_a)
      .def("squeeze", &Tensor::Squeeze, "axis"_a)
      .def("unsqueeze", &Tensor::Unsqueeze, "axis"_a)
      .def("contiguous", &Tensor::Contiguous)
      .def("clone", &Tensor::Clone)
      .def("astype", &Tensor::AsType, "dtype"_a)
      .def("copy_from", &Tensor::CopyFrom, "src"_a)
      .def("fill", &Tensor::Fill, "value"_a)
      .def("__repr__", &Tensor::ToString);

  // Ops.
  m.def(
      "call_op", &CallOpPy, "name"_a, "inputs"_a, "attrs"_a = nb::dict(), "opset"_a = kLatestOpset,
      "num_outputs"_a = -1, "reference"_a = false, "domain"_a = "",
      "Runs an ONNX op by name: inputs (None for an absent optional input), attributes as a dict.");
  static const OpSchema* add = &OpRegistry::Get("Add");
  static const OpSchema* sub = &OpRegistry::Get("Sub");
  static const OpSchema* mul = &OpRegistry::Get("Mul");
  static const OpSchema* div = &OpRegistry::Get("Div");
  // Fast paths for Python's + - * / (no attribute parsing, no dict): the
  // second operand is a tensor or a number (a 0-d tensor of a's dtype).
  // r* reverse the operands (number op tensor); i* write into a.
  struct Binary {
    const char *name, *rname, *iname;
    const OpSchema* op;
  };
  for (Binary e : {Binary{"add", "radd", "iadd", add}, Binary{"sub", "rsub", "isub", sub},
                   Binary{"mul", "rmul", "imul", mul}, Binary{"div", "rdiv", "idiv", div}}) {
    const OpSchema* op = e.op;
    m.def(e.name, [op](const Tensor& a, const Tensor& b) { return BinaryOp(*op, a, b); });
    m.def(e.name, [op](const Tensor& a, double v) { return BinaryOp(*op, a, ScalarLike(a, v)); });
    m.def(e.rname, [op](const Tensor& a, double v) { return BinaryOp(*op, ScalarLike(a, v), a); });
    m.def(e.iname, [op](Tensor& a, const Tensor& b) { BinaryInplace(*op, a, b); });
    m.def(e.iname, [op](Tensor& a, double v) { BinaryInplace(*op, a, ScalarLike(a, v)); });
  }

  // Random fills from the device generator (Device::SetRandSeed).
  m.def("uniform", &Uniform, "t"_a, "low"_a, "high"_a);
  m.def("gaussian", &Gaussian, "t"_a, "mean"_a, "std"_a);
  m.def("bernoulli", &Bernoulli, "t"_a, "p"_a);

  nb::class_<OpSchema>(m, "OpSchema")
      .def_ro("name", &OpSchema::name)
      .def_ro("domain", &OpSchema::domain)
      .def_ro("since_version", &OpSchema::since_version)
      .def_ro("nondeterministic", &OpSchema::nondeterministic)
      .def_ro("inputs", &OpSchema::input_names)
      .def_ro("outputs", &OpSchema::output_names)
      .def_prop_ro("attributes",
                   [](const OpSchema& s) {
                     nb::dict d;
                     for (auto& a : s.attrs)
                       d[a.name.c_str()] =
                           nb::make_tuple(a.required, FromAttrValue(a.default_value));
                     return d;
                   })
      .def_prop_ro("dtype_rules",
                   [](const OpSchema& s) {
                     std::vector<std::pair<std::vector<DType>, std::vector<int>>> r;
                     for (auto& rule : s.dtype_rules) r.emplace_back(rule.allowed, rule.inputs);
                     return r;
                   })
      .def_prop_ro("has_reference",
                   [](const OpSchema& s) { return static_cast<bool>(s.reference); })
      .def_prop_ro("is_alias", [](const OpSchema& s) { return static_cast<bool>(s.alias); })
      .def_prop_ro("has_backward", [](const OpSchema& s) { return static_cast<bool>(s.backward); })
      .def_prop_ro("has_tensor_kernel",
                   [](const OpSchema& s) { return static_cast<bool>(s.kernel || s.alias); })
      .def_prop_ro("has_value_kernel",
                   [](const OpSchema& s) { return static_cast<bool>(s.value_kernel); })
      .def_prop_ro("graph_attributes",
                   [](const OpSchema& s) {
                     std::vector<std::string> names;
                     for (const AttrInfo& a : s.attrs)
                       if (a.graph) names.push_back(a.name);
                     return names;
                   })
      .def_prop_ro("has_export_hook",
                   [](const OpSchema& s) { return static_cast<bool>(s.to_onnx); });
  m.def("op_schemas", &OpRegistry::All, nb::rv_policy::reference);
  m.def("find_op", &OpRegistry::Find, "name"_a, "opset"_a = kLatestOpset, "domain"_a = "",
        nb::rv_policy::reference);

  // Autograd.
  m.def("grad_enabled", &GradEnabled);
  m.def("set_grad_enabled", &SetGradEnabled, "enabled"_a);
  m.def("recording_enabled", &RecordingEnabled);
  m.def("set_recording", &SetRecording, "on"_a,
        "Off, ops record nothing (not even the structure the ONNX export reads).");
  m.def(
      "backward",
      [](const Tensor& y, std::optional<Tensor> dy) {
        nb::gil_scoped_release release;
        return autograd::Gradients(y, dy ? *dy : Tensor());
      },
      "y"_a, "dy"_a = nb::none(),
      "Gradients of y for every tensor marked stores_grad, as (param, grad) pairs in the order "
      "they completed.");
  m.def("get_num_threads", &GetNumThreads);
  m.def("set_num_threads", &SetNumThreads, "n"_a);
  m.attr("LATEST_OPSET") = kLatestOpset;
  m.def("channel_block", &cpu::ChannelBlock,
        "The channel block of oneDNN's blocked layouts on this CPU (16 with AVX-512, else 8): "
        "FusedConv's `blocked` tensors are nChw<block>c.");
  BindNN(m);
  BindOnnx(m);
  BindDist(m);
}
