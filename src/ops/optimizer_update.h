// Helpers shared by the ai.onnx.preview.training optimizer ops (Adagrad,
// Adam, Momentum): inputs R (learning rate), T (update count), then `k`
// groups of n tensors (X1..Xn, G1..Gn, then the optimizer's states); outputs
// the n new X then the n new values of each state. Every tensor of a
// parameter has that parameter's shape.
#pragma once

#include <string>
#include <vector>

#include "ops/common.h"

namespace singa::ops {

// The number of parameters n, checking counts, scalars and shapes.
inline int64_t OptimizerParams(const InferCtx& c, int groups) {
  const int64_t rest = c.num_inputs() - 2;
  SINGA_CHECK(rest >= groups && rest % groups == 0, ShapeError,
              c.where() << ": expects R, T and " << groups << " tensors per parameter, got " << rest
                        << " tensors after R and T (" << c.inputs_string() << ")");
  SINGA_CHECK(c.input(0).numel() == 1 && c.input(1).numel() == 1, ShapeError,
              c.where() << ": R and T must be scalars (" << c.inputs_string() << ")");
  const int64_t n = rest / groups;
  for (int64_t i = 0; i < n; ++i)
    for (int g = 1; g < groups; ++g)
      SINGA_CHECK(c.shape(2 + g * n + i) == c.shape(2 + i), ShapeError,
                  c.where() << ": input " << 2 + g * n + i << " must have the shape of X" << i + 1
                            << " (input " << 2 + i << ") (" << c.inputs_string() << ")");
  return n;
}

// Output specs: X_new for each parameter, then each state's new values.
inline SpecList OptimizerSpecs(const InferCtx& c, int groups, int out_groups) {
  const int64_t n = OptimizerParams(c, groups);
  SINGA_CHECK(c.num_outputs() <= out_groups * n, ShapeError,
              c.where() << ": " << c.num_outputs() << " outputs requested; " << n
                        << " parameters give at most " << out_groups * n);
  SpecList s;
  for (int g = 0; g < out_groups; ++g)
    for (int64_t i = 0; i < n; ++i) s.push_back({c.dtype(2 + i), c.shape(2 + i)});
  return s;
}

// The parameter-major view of one parameter's tensors: contiguous inputs,
// and the outputs asked for (null where not).
template <class T>
struct ParamTensors {
  std::vector<Tensor> in;  // kept alive for the pointers below
  std::vector<const T*> inputs;
  std::vector<T*> outputs;
  int64_t size = 0;
};

template <class T>
ParamTensors<T> ParamOf(const KernelCtx& k, int64_t i, int groups, int out_groups) {
  const int64_t n = (k.num_inputs() - 2) / groups;
  ParamTensors<T> p;
  for (int g = 0; g < groups; ++g) {
    p.in.push_back(k.input(2 + g * n + i).Contiguous());
    p.inputs.push_back(p.in.back().template data<T>());
  }
  for (int g = 0; g < out_groups; ++g) {
    const int64_t o = g * n + i;
    T* out = nullptr;
    if (o < k.num_outputs()) out = k.output(o).template data<T>();
    p.outputs.push_back(out);
  }
  p.size = p.in[0].numel();
  return p;
}

}  // namespace singa::ops
