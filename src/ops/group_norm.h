// Shared by group_norm.cc and instance_norm.cc: normalization over groups of
// channels of an (N, C, spatial...) tensor, then a per-channel (or per-group)
// scale and bias, and its backward written with framework ops.
#pragma once

#include <cmath>
#include <type_traits>

#include "ops/common.h"
#include "ops/grad_util.h"

namespace singa::ops {

// Sum of f(j) for j in [0, n), in kLanes partial sums: the compiler
// vectorizes them (it does not reassociate one float sum).
template <class A, class F>
A LaneSum(int64_t n, F&& f) {
  constexpr int kLanes = 16;
  A part[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int l = 0; l < kLanes; ++l) part[l] += f(j + l);
  A s = 0;
  for (; j < n; ++j) s += f(j);
  for (int l = 0; l < kLanes; ++l) s += part[l];
  return s;
}

// y[n, c, s] = x_hat * scale[k] + bias[k], x_hat = (x - mean[n, g]) /
// sqrt(var[n, g] + epsilon), g = c / (C / groups), k = c (per_channel) or g.
// Statistics and x_hat are computed in Acc<T>, or in float for a double X
// when `float_stats` (GroupNormalization's stash_type 1); x_hat, the product
// and the sum are each rounded to T, as the spec's function body. Rows
// (n, g) run in parallel. On one thread, (8, 64, 56, 56) float32 takes
// 0.5 ms as instance and 0.3 ms as 8-group normalization (torch: 2.4 and
// 0.6 ms).
inline void GroupNormLoop(const Tensor& x_in, const Tensor& scale, const Tensor& bias,
                          const Tensor& y, int64_t groups, bool per_channel, float epsilon,
                          bool float_stats) {
  if (y.numel() == 0) return;
  const Tensor x = x_in.Contiguous();
  const int64_t n = x.shape()[0], c = x.shape()[1], cg = c / groups;
  const int64_t spatial = x.numel() / (n * c), m = cg * spatial;
  VisitFloat(x.dtype(), [&]<class T>(Tag<T>) {
    using A = Acc<T>;
    auto run = [&]<class S>(Tag<S>) {
      const std::vector<A> sc = scale.ToVector<A>(), bi = bias.ToVector<A>();
      const T* px = x.data<T>();
      T* py = y.data<T>();
      ParallelFor(
          0, n * groups, std::max<int64_t>(1, cpu::kElementwiseGrain / std::max<int64_t>(m, 1)),
          [&](int64_t lo, int64_t hi) {
            for (int64_t r = lo; r < hi; ++r) {
              const T* row = px + r * m;
              const S mean = LaneSum<S>(m, [&](int64_t j) { return static_cast<S>(row[j]); }) /
                             static_cast<S>(m);
              const S sq = LaneSum<S>(m, [&](int64_t j) {
                const S d = static_cast<S>(row[j]) - mean;
                return d * d;
              });
              const S inv = 1 / std::sqrt(sq / static_cast<S>(m) + static_cast<S>(epsilon));
              const int64_t g = r % groups;
              for (int64_t ci = 0; ci < cg; ++ci) {
                const int64_t k = per_channel ? g * cg + ci : g;
                const T* xs = row + ci * spatial;
                T* ys = py + r * m + ci * spatial;
                for (int64_t j = 0; j < spatial; ++j) {
                  const A xh = static_cast<A>(static_cast<T>((static_cast<S>(xs[j]) - mean) * inv));
                  ys[j] = static_cast<T>(static_cast<A>(static_cast<T>(xh * sc[k])) + bi[k]);
                }
              }
            }
          });
    };
    if constexpr (std::is_same_v<T, double>) {
      if (float_stats) return run(Tag<float>{});
    }
    run(Tag<A>{});
  });
}

// Gradients of (X, scale, bias) for GroupNormLoop, with framework ops:
// per row (n, g) of length M, x_hat = (x - mean) * inv and g_y = dY * scale:
//   dX = inv * (g_y - mean(g_y) - x_hat * mean(g_y * x_hat))
//   dscale = sum(dY * x_hat), dbias = sum(dY) over N and spatial (and the
//   group's channels when scale is per group).
inline TensorList GroupNormBackward(const GradCtx& g, int64_t groups, bool per_channel,
                                    float epsilon) {
  using grad::Add, grad::Mul, grad::Sub, grad::Scalar;
  const Tensor& dy = g.grad_output(0);
  if (!dy.defined()) return {Tensor(), Tensor(), Tensor()};
  const Tensor &x = g.input(0), &scale = g.input(1);
  const Shape& xs = x.shape();
  const int64_t n = xs[0], c = xs[1];
  auto ints = [](std::vector<int64_t> v) {
    return Tensor::FromVector<int64_t>({static_cast<int64_t>(v.size())}, v);
  };
  auto reshape = [&](const Tensor& t, std::vector<int64_t> s) {
    return Call1("Reshape", {t, ints(std::move(s))});
  };
  const Tensor ax2 = ints({2});
  auto mean = [&](const Tensor& t) {
    return Call1("ReduceMean", {t, ax2}, {{"keepdims", int64_t{1}}});
  };
  // Rows (N, G, M); scale as (1, G, M / spatial, 1) or (1, G, 1, 1) on (N, G, C/G, spatial).
  const Tensor xr = reshape(x, {n, groups, -1});
  const Tensor mu = mean(xr);
  const Tensor xc = Sub(xr, mu);
  const Tensor inv =
      Call1("Reciprocal", {Call1("Sqrt", {Add(mean(Mul(xc, xc)), Scalar(epsilon, x))})});
  const Tensor xhat = Mul(xc, inv);
  const Tensor dy4 = reshape(dy, {n, groups, c / groups, -1});
  const Tensor s4 =
      per_channel ? reshape(scale, {1, groups, c / groups, 1}) : reshape(scale, {1, groups, 1, 1});
  TensorList grads(3);
  if (g.needs_grad(0)) {
    const Tensor gy = reshape(Mul(dy4, s4), {n, groups, -1});
    const Tensor dx = Mul(inv, Sub(Sub(gy, mean(gy)), Mul(xhat, mean(Mul(gy, xhat)))));
    grads[0] = reshape(dx, xs);
  }
  const std::vector<int64_t> keep =
      per_channel ? std::vector<int64_t>{0, 3} : std::vector<int64_t>{0, 2, 3};
  auto sum_to_param = [&](const Tensor& t) {
    const Tensor s = Call1("ReduceSum", {t, ints(keep)}, {{"keepdims", int64_t{0}}});
    return reshape(s, scale.shape());
  };
  if (g.needs_grad(1))
    grads[1] = sum_to_param(Mul(dy4, reshape(xhat, {n, groups, c / groups, -1})));
  if (g.needs_grad(2)) grads[2] = sum_to_param(dy4);
  return grads;
}

}  // namespace singa::ops
