// libFuzzer target: the numpy files `singa run --input` reads (.npy and .npz).
#include "fuzz_common.h"
#include "singa/core/npy.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  singa::fuzz::SetLimits();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes = singa::fuzz::Bytes(data, size);
  try {
    // A parsed array goes back out through the writer, as `singa run` does.
    singa::NpyBytes(singa::ParseNpy(bytes, "fuzz.npy"));
  } catch (const singa::Error&) {
  }
  try {
    for (auto& [name, t] : singa::ParseNpz(bytes, "fuzz.npz")) singa::NpyBytes(t);
  } catch (const singa::Error&) {
  }
  return 0;
}
