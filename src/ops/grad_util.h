// Shorthands for backward functions: each is one framework op (Call1), so a
// backward reads as its formula. Backward runs with grad mode off. Constants
// are made on the device of the tensor they pair with, so a backward runs
// where its inputs live.
#pragma once

#include <string_view>

#include "ops/common.h"

namespace singa::grad {

inline Tensor Add(const Tensor& a, const Tensor& b) { return Call1("Add", {a, b}); }
inline Tensor Sub(const Tensor& a, const Tensor& b) { return Call1("Sub", {a, b}); }
inline Tensor Mul(const Tensor& a, const Tensor& b) { return Call1("Mul", {a, b}); }
inline Tensor Div(const Tensor& a, const Tensor& b) { return Call1("Div", {a, b}); }
inline Tensor Greater(const Tensor& a, const Tensor& b) { return Call1("Greater", {a, b}); }
inline Tensor Less(const Tensor& a, const Tensor& b) { return Call1("Less", {a, b}); }
inline Tensor And(const Tensor& a, const Tensor& b) { return Call1("And", {a, b}); }
inline Tensor Not(const Tensor& a) { return Call1("Not", {a}); }
inline Tensor Where(const Tensor& c, const Tensor& a, const Tensor& b) {
  return Call1("Where", {c, a, b});
}
// A 0-d constant of `like`'s dtype on its device (broadcasts against anything).
inline Tensor Scalar(double v, const Tensor& like) {
  return Tensor::Full({}, v, like.dtype(), like.device());
}
// Zeros of `like`'s shape and dtype on its device.
inline Tensor ZerosLike(const Tensor& like) {
  return Tensor::Zeros(like.shape(), like.dtype(), like.device());
}
// dy where `mask`, else 0, with the shape of the broadcast of both.
inline Tensor Masked(const Tensor& mask, const Tensor& dy) {
  return Where(mask, dy, Scalar(0, dy));
}

}  // namespace singa::grad
