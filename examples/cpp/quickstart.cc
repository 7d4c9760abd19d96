// The C++ quick start of README.md, built and run by ctest.
#include "singa/singa.h"
using namespace singa;

int main() {
  Tensor x = Tensor::FromVector<float>({2, 3}, {0, 1, 2, 3, 4, 5});
  Tensor b = Tensor::FromVector<float>({3}, {10, 20, 30});
  Tensor y = Call1("Add", {x, b});  // ops are called by ONNX name
  Tensor z = Call1("Softmax", {y}, {{"axis", int64_t{1}}});
  return z.At<float>({0, 2}) > 0.5f ? 0 : 1;
}
