// Random fills: SINGA's Tensor::Uniform/Gaussian/Bernoulli. Values come from
// the tensor's device generator (Device::rng(), seeded by
// Device::SetRandSeed), so a seed reproduces every draw. The fill runs
// through Device::Exec: inside a captured graph it draws new values on every
// replay (as dropout masks must).
//
//   Device::Cpu().SetRandSeed(42);
//   Tensor w({64, 32});
//   Gaussian(w, 0.0, 0.02);          // w ~ N(0, 0.02^2)
//   Uniform(w, -1.0, 1.0);           // w ~ U[-1, 1)
//   Tensor mask({64}, DType::kBool);
//   Bernoulli(mask, 0.9);            // 1 with probability 0.9
#pragma once

#include "singa/core/tensor.h"

namespace singa {

// Float tensors only (float16/bfloat16/float32/float64); throws DTypeError.
void Uniform(const Tensor& t, double low, double high);
void Gaussian(const Tensor& t, double mean, double stddev);
// Any numeric or bool tensor: each element is 1 with probability p, else 0.
void Bernoulli(const Tensor& t, double p);

}  // namespace singa
