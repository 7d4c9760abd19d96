// libFuzzer target: the numpy files `singa run --input` reads (.npy and .npz).
#include "fuzz_common.h"
#include "npy.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  singa::fuzz::SetLimits();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes = singa::fuzz::Bytes(data, size);
  try {
    // A parsed array goes back out through the writer, as `singa run` does.
    singa::cli::NpyBytes(singa::cli::ParseNpy(bytes, "fuzz.npy"));
  } catch (const singa::Error&) {
  }
  try {
    for (auto& [name, t] : singa::cli::ParseNpz(bytes, "fuzz.npz")) singa::cli::NpyBytes(t);
  } catch (const singa::Error&) {
  }
  return 0;
}
