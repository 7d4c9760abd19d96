#include "singa/core/random.h"

#include <random>
#include <vector>

namespace singa {
namespace {

// Draws numel() values from `dist` in row-major order into t's elements
// (t may be a strided view). Sequential on purpose: one generator stream
// makes the values independent of the thread count.
template <class T, class Dist>
void FillFrom(const Tensor& t, Dist dist, std::mt19937_64& rng) {
  T* p = static_cast<T*>(t.raw_data());
  const int64_t n = t.numel();
  if (t.is_contiguous()) {
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(dist(rng));
    return;
  }
  // A strided view: walk its multi-index like an odometer.
  const Shape& shape = t.shape();
  const Strides& strides = t.strides();
  std::vector<int64_t> index(shape.size(), 0);
  int64_t offset = 0;
  for (int64_t i = 0; i < n; ++i) {
    p[offset] = static_cast<T>(dist(rng));
    for (int64_t d = t.ndim() - 1; d >= 0; --d) {
      if (++index[d] < shape[d]) {
        offset += strides[d];
        break;
      }
      offset -= (shape[d] - 1) * strides[d];
      index[d] = 0;
    }
  }
}

template <class MakeDist>
void RandomFill(const Tensor& t, const char* what, bool floats_only, MakeDist make) {
  SINGA_CHECK(t.defined(), Error, what << ": the tensor is undefined");
  // A GPU tensor's values are drawn on the host, from the GPU's generator.
  auto run = [t = Tensor(t), what, floats_only, make]() mutable {
    const Tensor h = t.device().type == DeviceType::kCpu ? t : Tensor(t.shape(), t.dtype());
    std::mt19937_64& rng = t.device().rng();
    if (floats_only) {
      VisitFloat(
          t.dtype(), [&]<class T>(Tag<T>) { FillFrom<T>(h, make(), rng); }, what);
    } else {
      VisitDType(
          t.dtype(), [&]<class T>(Tag<T>) { FillFrom<T>(h, make(), rng); }, what);
    }
    if (h.block() != t.block()) t.CopyFrom(h);
  };
  // Check the dtype now, not when a recorded graph replays.
  if (floats_only) {
    SINGA_CHECK(IsFloat(t.dtype()), DTypeError,
                what << ": expects a float tensor, got " << t.ToString());
  } else {
    SINGA_CHECK(IsNumeric(t.dtype()) || t.dtype() == DType::kBool, DTypeError,
                what << ": expects a numeric or bool tensor, got " << t.ToString());
  }
  t.device().Exec(run, {}, std::span(&t, 1));
}

}  // namespace

void Uniform(const Tensor& t, double low, double high) {
  SINGA_CHECK(low <= high, ShapeError, "Uniform: low " << low << " > high " << high);
  RandomFill(t, "Uniform", true,
             [low, high] { return std::uniform_real_distribution<double>(low, high); });
}

void Gaussian(const Tensor& t, double mean, double stddev) {
  SINGA_CHECK(stddev >= 0, ShapeError, "Gaussian: negative standard deviation " << stddev);
  RandomFill(t, "Gaussian", true,
             [mean, stddev] { return std::normal_distribution<double>(mean, stddev); });
}

void Bernoulli(const Tensor& t, double p) {
  SINGA_CHECK(p >= 0 && p <= 1, ShapeError, "Bernoulli: probability " << p << " is outside [0, 1]");
  RandomFill(t, "Bernoulli", false, [p] { return std::bernoulli_distribution(p); });
}

}  // namespace singa
