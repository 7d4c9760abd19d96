// C++ op-table rows for kernels that have a fast (oneDNN) and a plain-loop
// reference implementation. CheckRow runs a row for each of its dtypes and
// checks: fast == reference (within the row's tolerance), the same result
// with non-contiguous inputs and on a GPU (when there is one), and (for rows with a zero-sized
// dimension) an output of the inferred empty shape. Value correctness against an independent oracle
// is in tests/python/test_ops.py.
//
//   CheckRow({"Conv", {{1, 3, 8, 8}, {4, 3, 3, 3}}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}});
#pragma once

#include <string>
#include <vector>

#include "singa/ops/op.h"

namespace singa::testing {

struct OpRow {
  std::string op;
  std::vector<Shape> inputs;  // uniform random values in [-1, 1) of the swept dtype
  AttrMap attrs = {};
  std::vector<DType> dtypes = {DType::kFloat32};
  // Extra fixed inputs appended after the random ones (e.g. int64 shapes).
  std::vector<Tensor> fixed = {};
  // NOTE: fast and reference kernels sum in different orders; 1e-4 relative
  // covers float32 round-off over the reduction lengths used in the rows.
  double rtol = 1e-4, atol = 1e-5;
  int num_outputs = -1;
  std::string domain = "";  // "ai.singa" for singa's own ops
};

// Random tensor with values uniform in [lo, hi), seeded.
Tensor RandomTensor(const Shape& shape, DType dtype, uint64_t seed, double lo = -1, double hi = 1);
// Max |a - b| / (atol + rtol * |b|) over elements; <= 1 passes.
double CloseRatio(const Tensor& a, const Tensor& b, double rtol, double atol);
// CheckRow and CheckGrads also run every row on the first GPU, when the
// build has CUDA and the machine a GPU, and compare it with the CPU.
void CheckRow(const OpRow& row);
bool HasGpu();
// Outputs of a GPU run are on the GPU, of the CPU's dtypes, and close to them.
void ExpectSameOnGpu(const TensorList& gpu, const TensorList& cpu, double rtol, double atol,
                     const std::string& what);

// Gradients of sum(op(inputs)[0] * dy) for every input (undefined where none
// reaches it), with the fast or the reference kernels throughout.
TensorList Grads(const std::string& op, const TensorList& inputs, const AttrMap& attrs,
                 KernelVariant v, int num_outputs = -1, int opset = kLatestOpset);
// The fast backward matches the reference backward for every input (random
// float32 inputs of `shapes`; with positive_last the last one is in [0.1, 2),
// as a variance must be).
void CheckGrads(const std::string& op, const std::vector<Shape>& shapes, const AttrMap& attrs,
                double rtol = 1e-4, double atol = 1e-4, int num_outputs = -1,
                int opset = kLatestOpset, bool positive_last = false);

}  // namespace singa::testing
