// One oneDNN eltwise primitive run forward on a tensor: y = f(x) for an
// algorithm such as relu, elu, logistic, gelu_erf or clip_v2, with oneDNN's
// alpha/beta parameters (see the oneDNN eltwise documentation for each
// algorithm's formula). Primitives are cached by algorithm, parameters, dtype
// and element count.
//
//   if (!cpu::DnnlEltwise(dnnl::algorithm::eltwise_relu, 0.01f, 0.f, x, y))
//     LoopKernel(x, y);  // oneDNN cannot run it: fall back
//
// x and y have the same shape and dtype (float32, bfloat16 or float16); y is
// dense, x may have any strides (it is made contiguous first) and y may be x
// itself (in place).
#pragma once

#include <dnnl.hpp>

#include "singa/core/tensor.h"

namespace singa::cpu {

// Runs the primitive and returns true, or returns false without touching y
// when oneDNN cannot: another dtype, an empty tensor, or no implementation of
// the algorithm for this dtype on this CPU.
bool DnnlEltwise(dnnl::algorithm alg, float alpha, float beta, const Tensor& x, const Tensor& y);

}  // namespace singa::cpu
