// libFuzzer target: states-file bytes -> load_states's reader (LoadStatesFile).
#include "fuzz_common.h"
#include "singa/nn/model.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  singa::fuzz::SetLimits();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static singa::fuzz::ScratchFile file;
  try {
    const auto f = singa::nn::LoadStatesFile(file.Write(singa::fuzz::Bytes(data, size)));
    for (const auto* m : {&f.states, &f.aux})
      for (auto& [name, t] : *m) t.Contiguous();
  } catch (const singa::Error&) {
  }
  return 0;
}
