// numpy's .npy and .npz files, read into and written from singa Tensors, so
// that `singa run` and `singa check` exchange arrays with numpy, and zip
// archives (SINGA's checkpoints are zips of an .npz and a JSON file).
//
//   Tensor x = ReadNpy("x.npy");
//   auto arrays = ReadNpz("inputs.npz");           // {name, tensor} in file order
//   WriteNpz("out.npz", {{"logits", y}});          // np.load("out.npz")["logits"]
//
// .npy: format versions 1-3, little-endian or byte-sized types, C or Fortran
// order: bool, int8..int64, uint8..uint64, float16/32/64, complex64/128 and
// unicode strings ('<U'). .npz: a zip of .npy files, stored (np.savez) or
// deflated (np.savez_compressed). The writer stores entries uncompressed, as
// np.savez does. Types numpy lacks (bfloat16, float8, float4) are written as
// float32 and int4/uint4 as int8/uint8.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "singa/core/tensor.h"

namespace singa {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

// A whole file's bytes (IOError naming it when it cannot be read).
std::string ReadFile(const std::string& path);

// Errors are IOError naming the file (and the entry of an .npz).
Tensor ReadNpy(const std::string& path);
NamedTensors ReadNpz(const std::string& path);
void WriteNpy(const std::string& path, const Tensor& t);
void WriteNpz(const std::string& path, const NamedTensors& arrays);

// The in-memory forms (`what` names the source in error messages).
Tensor ParseNpy(std::string_view bytes, const std::string& what);
NamedTensors ParseNpz(std::string_view bytes, const std::string& what);
std::string NpyBytes(const Tensor& t);
std::string NpzBytes(const NamedTensors& arrays, const std::string& what);

// Zip archives: the entries {name, bytes} in file order (stored or deflated;
// zip64 followed), and an archive of stored entries. IOError names `what`.
using ZipEntries = std::vector<std::pair<std::string, std::string>>;
// `kind` says what the file should have been ("an .npz file").
ZipEntries ParseZip(std::string_view bytes, const std::string& what,
                    std::string_view kind = "a zip file");
std::string ZipBytes(const ZipEntries& entries, const std::string& what);

}  // namespace singa
