// numpy's .npy and .npz files, read into and written from singa Tensors, so
// that `singa run` and `singa check` exchange arrays with numpy.
//
//   Tensor x = cli::ReadNpy("x.npy");
//   auto arrays = cli::ReadNpz("inputs.npz");           // {name, tensor} in file order
//   cli::WriteNpz("out.npz", {{"logits", y}});          // np.load("out.npz")["logits"]
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

namespace singa::cli {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

// Errors are IOError naming the file (and the entry of an .npz).
Tensor ReadNpy(const std::string& path);
NamedTensors ReadNpz(const std::string& path);
void WriteNpy(const std::string& path, const Tensor& t);
void WriteNpz(const std::string& path, const NamedTensors& arrays);

// The in-memory forms (`what` names the source in error messages).
Tensor ParseNpy(std::string_view bytes, const std::string& what);
NamedTensors ParseNpz(std::string_view bytes, const std::string& what);
std::string NpyBytes(const Tensor& t);

}  // namespace singa::cli
