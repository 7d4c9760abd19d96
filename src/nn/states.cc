// The states file of Model::SaveStates: SINGA's checkpoint format, a zip
// holding tensor_dict.npz (one NAME.npy per tensor, as np.savez writes it)
// and states_attr.json ({NAME: {"state_type": 0 for a model state or 1 for
// an aux state, "shape": [...], "dtype": SINGA's dtype code}}). Files of the
// earlier "SINGAST1" format load too.
#include <cctype>
#include <cstdio>
#include <cstring>
#include <map>

#include "singa/core/file.h"
#include "singa/core/json.h"
#include "singa/core/npy.h"
#include "singa/nn/model.h"

namespace singa::nn {
namespace {

constexpr char kTensors[] = "tensor_dict.npz";
constexpr char kAttrs[] = "states_attr.json";
constexpr int kModelState = 0, kAuxState = 1;

// SINGA's DataType codes; other dtypes are written by name (SINGA's reader
// takes the dtype from the array itself).
std::string DTypeField(DType d) {
  switch (d) {
    case DType::kFloat32:
      return "0";
    case DType::kFloat16:
      return "1";
    case DType::kInt32:
      return "2";
    case DType::kInt8:
      return "3";
    case DType::kFloat64:
      return "4";
    case DType::kUInt8:
      return "5";
    default:
      return "\"" + std::string(Name(d)) + "\"";
  }
}

// The little JSON states_attr.json needs: objects, arrays, strings,
// numbers, true/false/null; depth-limited, every read bounds-checked.
class Json {
 public:
  Json(std::string_view text, std::string what) : s_(text), what_(std::move(what)) {}

  // {name: state_type} of the top-level object.
  std::map<std::string, int64_t> StateTypes() {
    std::map<std::string, int64_t> out;
    Object(0, [&](const std::string& name) {
      int64_t type = -1;
      Object(1, [&](const std::string& key) {
        if (key == "state_type")
          type = Integer();
        else
          Skip(2);
      });
      SINGA_CHECK(type == kModelState || type == kAuxState, IOError,
                  what_ << ": '" << name << "' has no state_type 0 or 1");
      out[name] = type;
    });
    Space();
    SINGA_CHECK(i_ == s_.size(), IOError, what_ << ": text after the JSON object");
    return out;
  }

 private:
  [[noreturn]] void Fail(const std::string& why) const {
    throw IOError(what_ + ": invalid JSON at byte " + std::to_string(i_) + " (" + why + ")");
  }
  void Space() {
    while (i_ < s_.size() && std::strchr(" \t\r\n", s_[i_])) ++i_;
  }
  char Peek() {
    Space();
    if (i_ >= s_.size()) Fail("unexpected end");
    return s_[i_];
  }
  void Expect(char c) {
    if (Peek() != c) Fail(std::string("expected '") + c + "'");
    ++i_;
  }
  template <class F>
  void Object(int depth, F&& member) {
    Expect('{');
    if (Peek() == '}') {
      ++i_;
      return;
    }
    for (;;) {
      const std::string key = String();
      Expect(':');
      member(key);
      if (Peek() == '}') {
        ++i_;
        return;
      }
      Expect(',');
    }
  }
  std::string String() {
    Expect('"');
    std::string out;
    while (i_ < s_.size() && s_[i_] != '"') {
      char c = s_[i_++];
      if (c != '\\') {
        out += c;
        continue;
      }
      if (i_ >= s_.size()) Fail("unexpected end");
      c = s_[i_++];
      const char* plain = std::strchr("\"\\/bfnrt", c);
      if (!plain) {
        if (c != 'u' || i_ + 4 > s_.size()) Fail("bad escape");
        unsigned cp = 0;
        for (int k = 0; k < 4; ++k) {
          const char h = s_[i_++];
          cp = cp * 16 + (std::isdigit(static_cast<unsigned char>(h)) ? h - '0'
                          : (h | 32) >= 'a' && (h | 32) <= 'f'        ? (h | 32) - 'a' + 10
                                                               : (Fail("bad \\u escape"), 0u));
        }
        // UTF-8 (a surrogate half stays as the code unit's 3-byte form).
        if (cp < 0x80) {
          out += static_cast<char>(cp);
        } else if (cp < 0x800) {
          out += static_cast<char>(0xc0 | (cp >> 6));
          out += static_cast<char>(0x80 | (cp & 0x3f));
        } else {
          out += static_cast<char>(0xe0 | (cp >> 12));
          out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
          out += static_cast<char>(0x80 | (cp & 0x3f));
        }
        continue;
      }
      out += "\"\\/\b\f\n\r\t"[plain - "\"\\/bfnrt"];
    }
    if (i_ >= s_.size()) Fail("unterminated string");
    ++i_;
    return out;
  }
  int64_t Integer() {
    Space();
    const size_t start = i_;
    if (i_ < s_.size() && s_[i_] == '-') ++i_;
    while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
    if (i_ == start || i_ - start > 18) Fail("expected an integer");
    return std::stoll(std::string(s_.substr(start, i_ - start)));
  }
  void Skip(int depth) {
    if (depth > 64) Fail("nested too deeply");
    const char c = Peek();
    if (c == '{') return Object(depth, [&](const std::string&) { Skip(depth + 1); });
    if (c == '"') return static_cast<void>(String());
    if (c == '[') {
      ++i_;
      if (Peek() == ']') {
        ++i_;
        return;
      }
      for (;;) {
        Skip(depth + 1);
        if (Peek() == ']') {
          ++i_;
          return;
        }
        Expect(',');
      }
    }
    const size_t start = i_;
    while (i_ < s_.size() && std::strchr("+-.0123456789eEtruefalsn", s_[i_])) ++i_;
    if (i_ == start) Fail("unexpected character");
  }

  std::string_view s_;
  std::string what_;
  size_t i_ = 0;
};

// ---- "SINGAST1": a uint64 count, then per tensor: uint32 name length,
// name, int32 dtype (ONNX code), uint32 rank, int64 dims, uint64 byte
// count, data; aux states under the prefix "aux:".
constexpr char kMagic[8] = {'S', 'I', 'N', 'G', 'A', 'S', 'T', '1'};
constexpr char kAuxPrefix[] = "aux:";

StatesFile ParseSingast1(std::string_view b, const std::string& path) {
  size_t at = sizeof(kMagic);
  auto corrupt = [&](const std::string& part) {
    return IOError("load_states: '" + path + "' is corrupt (" + part + ")");
  };
  auto get = [&]<class T>(T) {
    T v{};
    if (b.size() - at < sizeof(T)) throw IOError("load_states: '" + path + "' is truncated");
    std::memcpy(&v, b.data() + at, sizeof(T));
    at += sizeof(T);
    return v;
  };
  StatesFile out;
  const auto count = get(uint64_t{});
  for (uint64_t i = 0; i < count; ++i) {
    const auto len = get(uint32_t{});
    if (len > b.size() - at) throw corrupt("name length");
    std::string name(b.substr(at, len));
    at += len;
    const auto code = get(int32_t{});
    if (code <= 0 || code >= kNumDTypes || code == static_cast<int32_t>(DType::kString))
      throw corrupt("dtype of '" + name + "'");
    const auto rank = get(uint32_t{});
    if (rank > 64) throw corrupt("rank of '" + name + "'");
    Shape shape(rank);
    for (auto& d : shape) {
      d = get(int64_t{});
      if (d < 0) throw corrupt("shape of '" + name + "'");
    }
    const auto dtype = static_cast<DType>(code);
    const auto bytes = get(uint64_t{});
    if (bytes > b.size() - at)
      throw IOError("load_states: '" + path + "' is truncated ('" + name + "' needs " +
                    std::to_string(bytes) + " bytes, " + std::to_string(b.size() - at) +
                    " are left)");
    size_t want = 0;
    try {
      want = TensorBytes(shape, dtype, "'" + name + "'");
    } catch (const Error& e) {
      throw corrupt(e.what());
    }
    if (bytes != want) throw corrupt("size of '" + name + "'");
    Tensor t(shape, dtype);
    if (bytes) std::memcpy(t.raw_data(), b.data() + at, bytes);
    at += bytes;
    if (name.rfind(kAuxPrefix, 0) == 0)
      out.aux[name.substr(sizeof(kAuxPrefix) - 1)] = t;
    else
      out.states[name] = t;
  }
  return out;
}

}  // namespace

void SaveStatesFile(const std::string& path, const TensorMap& states, const TensorMap& aux) {
  NamedTensors tensors;
  std::string attrs = "{";
  auto add = [&](const TensorMap& m, int type) {
    for (auto& [name, t] : m) {
      SINGA_CHECK(t.dtype() != DType::kString, DTypeError,
                  "save_states: '" << name << "' is a string tensor");
      SINGA_CHECK(type == kModelState || !states.count(name), Error,
                  "save_states: '" << name << "' is both a state of the model and an aux state");
      const Tensor c = t.ToDevice(Device::Cpu()).Contiguous();
      tensors.emplace_back(name, c);
      std::string shape;
      for (int64_t d : c.shape()) shape += (shape.empty() ? "" : ", ") + std::to_string(d);
      attrs += (attrs.size() > 1 ? ", " : "") + JsonString(name) +
               ": {\"state_type\": " + std::to_string(type) + ", \"shape\": [" + shape +
               "], \"dtype\": " + DTypeField(c.dtype()) + "}";
    }
  };
  add(states, kModelState);
  add(aux, kAuxState);
  attrs += "}";
  const std::string what = "save_states: '" + path + "'";
  const std::string zip =
      ZipBytes({{kTensors, NpzBytes(tensors, what)}, {kAttrs, std::move(attrs)}}, what);
  // Through a temporary file renamed over the target: a failed or
  // interrupted save leaves the previous file as it was.
  WriteFileAtomically(
      path, [&](std::FILE* f) { std::fwrite(zip.data(), 1, zip.size(), f); }, "save_states");
}

StatesFile LoadStatesFile(const std::string& path) {
  const std::string bytes = ReadFile(path);
  if (bytes.size() >= sizeof(kMagic) && std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) == 0)
    return ParseSingast1(bytes, path);
  const std::string what = "load_states: '" + path + "'";
  SINGA_CHECK(bytes.rfind("PK", 0) == 0, IOError,
              what << " is not a states file (SINGA's zip checkpoint or SINGAST1)");
  const std::string* npz = nullptr;
  const std::string* json = nullptr;
  const ZipEntries entries = ParseZip(bytes, what, "a states file");
  for (const auto& [name, data] : entries) {
    // SINGA writes the two files at the archive's top level.
    const std::string base = name.substr(name.rfind('/') + 1);
    if (base == kTensors) npz = &data;
    if (base == kAttrs) json = &data;
  }
  SINGA_CHECK(npz && json, IOError,
              what << " lacks " << (npz ? kAttrs : kTensors) << " (SINGA's checkpoint holds "
                   << kTensors << " and " << kAttrs << ")");
  const std::map<std::string, int64_t> types = Json(*json, what + " " + kAttrs).StateTypes();
  StatesFile out;
  for (auto& [name, t] : ParseNpz(*npz, what + " " + kTensors)) {
    auto it = types.find(name);
    SINGA_CHECK(it != types.end(), IOError,
                what << ": '" << name << "' has no entry in " << kAttrs);
    (it->second == kModelState ? out.states : out.aux)[name] = t;
  }
  return out;
}

}  // namespace singa::nn
