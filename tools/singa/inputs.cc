// What the commands that run a model share: its inputs (from files or
// generated), symbolic dims, threads, and number formatting.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>

#include "cli.h"
#include "singa/core/parallel.h"
#include "singa/core/random.h"

namespace singa::cli {

DimValues ParseDims(const Args& args, const std::vector<sonnx::ValueInfo>& inputs) {
  std::set<std::string> symbols;
  for (const auto& in : inputs)
    for (const std::string& p : in.dim_params)
      if (!p.empty()) symbols.insert(p);
  DimValues d;
  for (const std::string& s : args.list("--dim")) {
    const size_t eq = s.find('=');
    if (eq == std::string::npos || eq == 0) throw UsageError("--dim takes NAME=N, got '" + s + "'");
    if (!symbols.count(s.substr(0, eq))) {
      std::string known;
      for (const std::string& p : symbols) known += (known.empty() ? "" : ", ") + p;
      throw UsageError(
          "--dim " + s + ": the model's inputs have no symbolic dim '" + s.substr(0, eq) + "' (" +
          (known.empty() ? std::string("they have none") : "they have " + known) + ")");
    }
    const int64_t v = ParseInt(s.substr(eq + 1), "--dim " + s.substr(0, eq));
    if (v < 0) throw UsageError("--dim " + s.substr(0, eq) + " must not be negative");
    d.named[s.substr(0, eq)] = v;
  }
  return d;
}

Shape InputShape(const sonnx::ValueInfo& info, const DimValues& dims) {
  Shape shape;
  for (size_t i = 0; i < info.dims.size(); ++i) {
    if (info.dims[i] >= 0) {
      shape.push_back(info.dims[i]);
    } else if (i == 0 && dims.batch > 0) {
      shape.push_back(dims.batch);
    } else {
      auto it = dims.named.find(info.dim_params[i]);
      shape.push_back(it != dims.named.end() ? it->second : 1);
    }
  }
  return shape;
}

Tensor GeneratedInput(const sonnx::ValueInfo& info, const DimValues& dims) {
  if (!info.has_shape || info.dtype == DType::kUndefined)
    throw UsageError("input '" + info.name + "' declares no " +
                     (info.has_shape ? "element type" : "shape") +
                     "; give its value with --input " + info.name + "=FILE.npy");
  if (info.dtype == DType::kString)
    throw UsageError("input '" + info.name + "' holds strings; give its value with --input " +
                     info.name + "=FILE.npy");
  const Shape shape = InputShape(info, dims);
  TensorBytes(shape, info.dtype, "input '" + info.name + "'");  // named, before allocating
  if (IsFloat(info.dtype)) {
    Tensor t(shape, info.dtype);
    Uniform(t, 0.0, 1.0);
    return t;
  }
  if (info.dtype == DType::kFloat8E4M3FN || info.dtype == DType::kFloat8E4M3FNUZ ||
      info.dtype == DType::kFloat8E5M2 || info.dtype == DType::kFloat8E5M2FNUZ ||
      info.dtype == DType::kFloat4E2M1) {
    Tensor t(shape, DType::kFloat32);
    Uniform(t, 0.0, 1.0);
    return t.AsType(info.dtype);
  }
  Tensor t(shape, info.dtype);
  std::memset(t.raw_data(), 0, t.nbytes());
  return t;
}

TensorList ModelInputs(const sonnx::SingaRep& rep, const Args& args, const DimValues& dims,
                       bool fill_missing) {
  const auto& infos = rep.inputs();
  std::string names;
  for (const auto& v : infos) names += (names.empty() ? "" : ", ") + v.name;
  auto index_of = [&](const std::string& name) -> int {
    for (size_t i = 0; i < infos.size(); ++i)
      if (infos[i].name == name) return static_cast<int>(i);
    return -1;
  };
  TensorList values(infos.size());
  auto set = [&](int i, Tensor t, const std::string& from) {
    if (values[i].defined())
      throw UsageError("input '" + infos[i].name + "' is given twice (again by " + from + ")");
    values[i] = std::move(t);
  };
  size_t next_positional = 0;
  for (const std::string& spec : args.list("--input")) {
    std::string path = spec;
    int named = -1;
    const size_t eq = spec.find('=');
    if (eq != std::string::npos && !std::filesystem::exists(spec)) {
      named = index_of(spec.substr(0, eq));
      if (named < 0)
        throw UsageError("--input " + spec + ": the model has no input '" + spec.substr(0, eq) +
                         "' (inputs: " + names + ")");
      path = spec.substr(eq + 1);
    }
    if (path.ends_with(".npz")) {
      if (named >= 0) throw UsageError("--input " + spec + ": NAME= takes an .npy file");
      for (auto& [name, t] : ReadNpz(path)) {
        int i = index_of(name);
        // np.savez(a, b) names its arrays arr_0, arr_1, ...: input order.
        if (i < 0 && name.starts_with("arr_")) {
          try {
            i = static_cast<int>(ParseInt(name.substr(4), name));
          } catch (const UsageError&) {
          }
          if (i >= static_cast<int>(infos.size())) i = -1;
        }
        if (i < 0)
          throw UsageError("'" + path + "' has array '" + name +
                           "', which is not an input of the model (inputs: " + names + ")");
        set(i, t, "'" + path + "'");
      }
      continue;
    }
    Tensor t = ReadNpy(path);
    if (named < 0) {
      while (next_positional < infos.size() && values[next_positional].defined()) ++next_positional;
      if (next_positional >= infos.size())
        throw UsageError("--input " + spec + ": the model takes " + std::to_string(infos.size()) +
                         " input(s) (" + names + "), all given already");
      named = static_cast<int>(next_positional);
    }
    set(named, t, "'" + path + "'");
  }
  for (size_t i = 0; i < infos.size(); ++i) {
    if (values[i].defined()) continue;
    if (!fill_missing)
      throw UsageError("input " + Describe(infos[i]) + " is not given: pass --input " +
                       infos[i].name + "=FILE.npy");
    values[i] = GeneratedInput(infos[i], dims);
  }
  return values;
}

std::string Describe(const sonnx::ValueInfo& v) {
  if (v.dtype == DType::kUndefined && !v.has_shape) return v.name + ": (type not declared)";
  std::string s = v.name + ": " + (v.dtype == DType::kUndefined ? "?" : std::string(Name(v.dtype)));
  if (!v.has_shape) return s + "[shape not declared]";
  s += "[";
  for (size_t i = 0; i < v.dims.size(); ++i) {
    if (i) s += ",";
    s += v.dims[i] >= 0 ? std::to_string(v.dims[i])
                        : (v.dim_params[i].empty() ? std::string("?") : v.dim_params[i]);
  }
  return s + "]";
}

std::string Grouped(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return (n < 0 ? "-" : "") + out;
}

std::string Bytes(double b) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4) b /= 1024, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, u ? "%.1f %s" : "%.0f %s", b, kUnits[u]);
  return buf;
}

std::string Scaled(double v) {
  static const char* kUnits[] = {"", " K", " M", " G", " T", " P"};
  int u = 0;
  while (v >= 1000 && u < 5) v /= 1000, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, u ? "%.3g%s" : "%.0f%s", v, kUnits[u]);
  return buf;
}

std::string OneLine(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

void ApplyThreads(const Args& args) {
  if (args.has("--threads")) SetNumThreads(static_cast<int>(args.get_int("--threads", 0, 1)));
}

}  // namespace singa::cli
