// libFuzzer target: states-file bytes -> load_states's reader (LoadTensors).
#include "fuzz_common.h"
#include "singa/nn/model.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  singa::fuzz::SetLimits();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static singa::fuzz::ScratchFile file;
  try {
    for (auto& [name, t] : singa::nn::LoadTensors(file.Write(singa::fuzz::Bytes(data, size))))
      t.Contiguous();
  } catch (const singa::Error&) {
  }
  return 0;
}
