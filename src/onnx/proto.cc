// TensorProto / AttributeProto / ValueInfoProto -> singa types.
#include "onnx/proto.h"

#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

namespace singa::sonnx {
namespace {

namespace fs = std::filesystem;

// Bytes of a dense little-endian buffer holding n elements of dt.
size_t PackedBytes(DType dt, int64_t n) {
  const int bits = PackedBits(dt);
  return bits ? static_cast<size_t>((n * bits + 7) / 8) : static_cast<size_t>(n) * SizeOf(dt);
}

// Copies a raw little-endian buffer (ONNX's raw_data / external data layout)
// into t. 4-bit types are packed two per byte in the file and 2-bit types
// four per byte, lowest bits first; in memory they take one byte each.
void FillFromRaw(Tensor& t, const char* data, size_t size, const std::string& what) {
  const int64_t n = t.numel();
  const size_t want = PackedBytes(t.dtype(), n);
  SINGA_CHECK(size == want, InvalidModel,
              what << ": " << size << " bytes of data for " << t.ToString() << " (expected " << want
                   << ")");
  if (n == 0) return;
  auto* out = static_cast<uint8_t*>(t.raw_data());
  if (const int bits = PackedBits(t.dtype())) {
    const int per_byte = 8 / bits;
    const uint8_t mask = static_cast<uint8_t>((1 << bits) - 1);
    for (int64_t i = 0; i < n; ++i) {
      const auto b = static_cast<uint8_t>(data[i / per_byte]);
      out[i] = static_cast<uint8_t>((b >> (i % per_byte * bits)) & mask);
    }
    return;
  }
  if (t.dtype() == DType::kBool) {
    // Any non-zero byte is true; a C++ bool must hold exactly 0 or 1.
    for (int64_t i = 0; i < n; ++i) out[i] = data[i] != 0;
    return;
  }
  std::memcpy(out, data, size);
}

// The external bytes of p: the file must be a regular file inside base_dir
// and hold [offset, offset + length), and `check_length` must accept length
// (the rest of the file when not given), all before anything is read.
std::string ReadExternal(const onnx::TensorProto& p, const std::string& base_dir,
                         const std::function<void(size_t)>& check_length, const std::string& what) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& kv : p.external_data()) {
    if (kv.key() == "location") {
      location = kv.value();
    } else if (kv.key() == "offset" || kv.key() == "length") {
      int64_t v = 0;
      const std::string& s = kv.value();
      auto [end, err] = std::from_chars(s.data(), s.data() + s.size(), v);
      SINGA_CHECK(
          err == std::errc() && end == s.data() + s.size() && v >= 0, InvalidModel,
          what << ": external data " << kv.key() << " '" << s << "' is not a non-negative integer");
      (kv.key() == "offset" ? offset : length) = v;
    }
  }
  SINGA_CHECK(!location.empty(), InvalidModel, what << ": external data without a location");
  SINGA_CHECK(!base_dir.empty(), IOError,
              what << ": the data is in the external file '" << location
                   << "', but the model was given as bytes without its folder: prepare it from "
                      "its path (or pass the folder)");
  SINGA_CHECK(!fs::path(location).is_absolute(), IOError,
              what << ": external data path '" << location
                   << "' is absolute; it must be relative to the model's folder");
  std::error_code ec;
  const fs::path base = fs::weakly_canonical(fs::absolute(base_dir), ec);
  const fs::path full = fs::weakly_canonical(base / location, ec);
  // Symbolic links are resolved by weakly_canonical: the file itself must be
  // inside the model's folder, not only its name.
  const fs::path rel = full.lexically_relative(base);
  SINGA_CHECK(!ec && !rel.empty() && *rel.begin() != "..", IOError,
              what << ": external data path '" << location << "' leaves the model's folder '"
                   << base.string() << "'");
  const fs::file_status st = fs::status(full, ec);
  SINGA_CHECK(!ec && fs::is_regular_file(st), IOError,
              what << ": external data file '" << full.string() << "' "
                   << (ec || !fs::exists(st) ? "does not exist" : "is not a regular file"));
  const auto file_size = static_cast<int64_t>(fs::file_size(full, ec));
  SINGA_CHECK(!ec, IOError,
              what << ": cannot read the size of external data file '" << full.string() << "'");
  SINGA_CHECK(offset <= file_size, IOError,
              what << ": external data offset " << offset << " is past the end of '"
                   << full.string() << "' (" << file_size << " bytes)");
  if (length < 0) length = file_size - offset;
  SINGA_CHECK(length <= file_size - offset, IOError,
              what << ": external data file '" << full.string() << "' has " << file_size
                   << " bytes; the tensor needs " << length << " from offset " << offset
                   << " (truncated file?)");
  check_length(static_cast<size_t>(length));
  std::ifstream in(full, std::ios::binary);
  SINGA_CHECK(in, IOError,
              what << ": cannot open external data file '" << full.string()
                   << "': " << std::strerror(errno));
  std::string bytes(static_cast<size_t>(length), '\0');
  in.seekg(offset);
  in.read(bytes.data(), length);
  SINGA_CHECK(in, IOError, what << ": reading external data file '" << full.string() << "' failed");
  return bytes;
}

// Values stored one per int32 (or uint64/int64) entry; 1- and 2-byte types
// (including float16/bfloat16/float8) keep their bit patterns in the low bits.
template <class Src>
void FillFromInts(Tensor& t, const Src& src) {
  const int64_t n = t.numel();
  void* out = t.raw_data();
  switch (SizeOf(t.dtype())) {
    case 1:
      for (int64_t i = 0; i < n; ++i)
        static_cast<uint8_t*>(out)[i] =
            t.dtype() == DType::kBool ? src[i] != 0 : static_cast<uint8_t>(src[i]);
      break;
    case 2:
      for (int64_t i = 0; i < n; ++i)
        static_cast<uint16_t*>(out)[i] = static_cast<uint16_t>(src[i]);
      break;
    case 4:
      for (int64_t i = 0; i < n; ++i)
        static_cast<uint32_t*>(out)[i] = static_cast<uint32_t>(src[i]);
      break;
    default:
      for (int64_t i = 0; i < n; ++i)
        static_cast<uint64_t*>(out)[i] = static_cast<uint64_t>(src[i]);
  }
}

}  // namespace

int PackedBits(DType dt) {
  switch (dt) {
    case DType::kInt4:
    case DType::kUInt4:
    case DType::kFloat4E2M1:
      return 4;
    case DType::kInt2:
    case DType::kUInt2:
      return 2;
    default:
      return 0;
  }
}

// How many entries of its typed field (float_data, int32_data, ...) a
// tensor of n elements of dt needs, and that field's size and name.
struct FieldData {
  int64_t want, have;
  const char* name;
};
FieldData FieldOf(const onnx::TensorProto& p, DType dt, int64_t n) {
  switch (dt) {
    case DType::kFloat32:
      return {n, p.float_data_size(), "float_data"};
    case DType::kComplex64:
      return {2 * n, p.float_data_size(), "float_data"};
    case DType::kFloat64:
      return {n, p.double_data_size(), "double_data"};
    case DType::kComplex128:
      return {2 * n, p.double_data_size(), "double_data"};
    case DType::kInt64:
      return {n, p.int64_data_size(), "int64_data"};
    case DType::kUInt32:
    case DType::kUInt64:
      return {n, p.uint64_data_size(), "uint64_data"};
    case DType::kString:
      return {n, p.string_data_size(), "string_data"};
    default:  // 4- and 2-bit types: one byte's worth per int32_data entry
      return {PackedBits(dt) ? static_cast<int64_t>(PackedBytes(dt, n)) : n, p.int32_data_size(),
              "int32_data"};
  }
}

Tensor TensorFromProto(const onnx::TensorProto& p, const std::string& base_dir, Device device,
                       const std::string& what) {
  // Decoded in host memory; then numeric and bool tensors move to a GPU
  // (strings, float8 and 4-bit types stay on the host).
  if (device.type != DeviceType::kCpu) {
    Tensor t = TensorFromProto(p, base_dir, Device::Cpu(), what);
    return IsNumeric(t.dtype()) || t.dtype() == DType::kBool ? t.ToDevice(device) : t;
  }
  const int code = p.data_type();
  SINGA_CHECK(code > 0 && code < kNumDTypes, UnsupportedOp,
              what << ": tensor data type " << code << " is not supported");
  SINGA_CHECK(!p.has_segment(), UnsupportedOp, what << ": segmented tensors are not supported");
  const DType dt = static_cast<DType>(code);
  Shape shape;
  for (int64_t d : p.dims()) {
    SINGA_CHECK(d >= 0, InvalidModel, what << ": negative dimension " << d << " in its shape");
    shape.push_back(d);
  }
  // Every size is checked before the tensor is allocated: dims whose product
  // overflows or exceeds the memory limit, and data shorter or longer than
  // the dims promise.
  TensorBytes(shape, dt, what);
  const int64_t n = NumElements(shape);
  const size_t raw_bytes = PackedBytes(dt, n);
  auto check_raw = [&](size_t size) {
    SINGA_CHECK(size == raw_bytes, InvalidModel,
                what << ": " << size << " bytes of data for " << Name(dt) << ToString(shape)
                     << " (expected " << raw_bytes << ")");
  };
  if (p.data_location() == onnx::TensorProto::EXTERNAL) {
    std::string bytes = ReadExternal(p, base_dir, check_raw, what);
    Tensor t(shape, dt, device);
    FillFromRaw(t, bytes.data(), bytes.size(), what);
    return t;
  }
  if (p.has_raw_data()) {
    SINGA_CHECK(dt != DType::kString, InvalidModel, what << ": string tensors cannot use raw_data");
    check_raw(p.raw_data().size());
    Tensor t(shape, dt, device);
    FillFromRaw(t, p.raw_data().data(), p.raw_data().size(), what);
    return t;
  }
  const FieldData field = FieldOf(p, dt, n);
  SINGA_CHECK(field.have == field.want, InvalidModel,
              what << ": " << field.have << " values in " << field.name << " for " << Name(dt)
                   << ToString(shape) << " (expected " << field.want << ")");
  Tensor t(shape, dt, device);
  switch (dt) {
    case DType::kFloat32:
    case DType::kComplex64:
      if (n) std::memcpy(t.raw_data(), p.float_data().data(), field.want * sizeof(float));
      break;
    case DType::kFloat64:
    case DType::kComplex128:
      if (n) std::memcpy(t.raw_data(), p.double_data().data(), field.want * sizeof(double));
      break;
    case DType::kInt64:
      FillFromInts(t, p.int64_data());
      break;
    case DType::kUInt32:
    case DType::kUInt64:
      FillFromInts(t, p.uint64_data());
      break;
    case DType::kString: {
      std::string* out = t.data<std::string>();
      for (int64_t i = 0; i < n; ++i) out[i] = p.string_data(static_cast<int>(i));
      break;
    }
    default:
      if (PackedBits(dt)) {
        std::string packed(static_cast<size_t>(field.want), '\0');
        for (int i = 0; i < p.int32_data_size(); ++i)
          packed[i] = static_cast<char>(p.int32_data(i));
        FillFromRaw(t, packed.data(), packed.size(), what);
      } else {
        FillFromInts(t, p.int32_data());
      }
  }
  return t;
}

AttrValue AttrFromProto(const onnx::AttributeProto& a, const std::string& base_dir, Device device,
                        const std::string& where) {
  using A = onnx::AttributeProto;
  const std::string what = where + ": attribute '" + a.name() + "'";
  SINGA_CHECK(a.ref_attr_name().empty(), UnsupportedOp,
              what << " refers to a function attribute; functions are not supported");
  A::AttributeType type = a.type();
  if (type == A::UNDEFINED) {
    // Models from before IR version 2 leave `type` unset: it follows from
    // the field that is present.
    if (a.has_f())
      type = A::FLOAT;
    else if (a.has_i())
      type = A::INT;
    else if (a.has_s())
      type = A::STRING;
    else if (a.has_t())
      type = A::TENSOR;
    else if (a.has_g())
      type = A::GRAPH;
    else if (a.floats_size())
      type = A::FLOATS;
    else if (a.ints_size())
      type = A::INTS;
    else if (a.strings_size())
      type = A::STRINGS;
    else if (a.tensors_size())
      type = A::TENSORS;
    else if (a.graphs_size())
      type = A::GRAPHS;
  }
  switch (type) {
    case A::FLOAT:
      return a.f();
    case A::INT:
      return static_cast<int64_t>(a.i());
    case A::STRING:
      return a.s();
    case A::TENSOR:
      return TensorFromProto(a.t(), base_dir, device, what);
    case A::FLOATS:
      return std::vector<float>(a.floats().begin(), a.floats().end());
    case A::INTS:
      return std::vector<int64_t>(a.ints().begin(), a.ints().end());
    case A::STRINGS:
      return std::vector<std::string>(a.strings().begin(), a.strings().end());
    case A::TENSORS: {
      std::vector<Tensor> ts;
      for (const auto& t : a.tensors()) ts.push_back(TensorFromProto(t, base_dir, device, what));
      return ts;
    }
    case A::GRAPH:
    case A::GRAPHS:
      throw UnsupportedOp(what + " is a graph: the op takes no graph attribute of that name");
    case A::SPARSE_TENSOR:
    case A::SPARSE_TENSORS:
      throw UnsupportedOp(what + " is a sparse tensor: sparse tensors are not supported");
    case A::TYPE_PROTO:
      // A type (Optional's `type`): its serialized TypeProto.
      return a.tp().SerializeAsString();
    case A::TYPE_PROTOS:
      throw UnsupportedOp(what + " is a list of types: type-list attributes are not supported");
    default:
      throw InvalidModel(what + " has no value (attribute type " + std::to_string(a.type()) + ")");
  }
}

namespace {

// Fills v from a tensor type, or from a sequence or optional of one (an
// optional may hold a sequence; nothing else nests).
void ReadType(const onnx::TypeProto& type, ValueInfo& v, const std::string& what, bool nested) {
  const std::string where = what + " '" + v.name + "'";
  switch (type.value_case()) {
    case onnx::TypeProto::kTensorType:
      break;
    case onnx::TypeProto::kSequenceType:
      SINGA_CHECK(!v.sequence, UnsupportedOp,
                  where << " is a sequence of sequences: nested sequences are not supported");
      v.sequence = true;
      if (type.sequence_type().has_elem_type())
        ReadType(type.sequence_type().elem_type(), v, what, true);
      return;
    case onnx::TypeProto::kOptionalType:
      SINGA_CHECK(!nested, UnsupportedOp,
                  where << ": an optional inside a sequence or optional is not supported");
      v.optional = true;
      if (type.optional_type().has_elem_type())
        ReadType(type.optional_type().elem_type(), v, what, true);
      return;
    case onnx::TypeProto::kMapType:
      throw UnsupportedOp(where + " is a map: map types are not supported");
    case onnx::TypeProto::kSparseTensorType:
      throw UnsupportedOp(where + " is a sparse tensor: sparse tensors are not supported");
    default:
      return;
  }
  const auto& tt = type.tensor_type();
  const int code = tt.elem_type();
  SINGA_CHECK(code >= 0 && code < kNumDTypes, UnsupportedOp,
              where << ": element type " << code << " is not supported");
  v.dtype = static_cast<DType>(code);
  if (tt.has_shape()) {
    v.has_shape = true;
    for (const auto& d : tt.shape().dim()) {
      if (d.has_dim_value()) {
        v.dims.push_back(d.dim_value());
        v.dim_params.emplace_back();
      } else {
        v.dims.push_back(-1);
        v.dim_params.push_back(d.has_dim_param() ? d.dim_param() : std::string());
      }
    }
  }
}

}  // namespace

ValueInfo ValueInfoFromProto(const onnx::ValueInfoProto& info, const std::string& what) {
  ValueInfo v;
  v.name = info.name();
  if (info.has_type()) ReadType(info.type(), v, what, false);  // else undeclared: anything goes
  return v;
}

}  // namespace singa::sonnx
