// Cast, CastLike: elementwise dtype conversion between every type the spec
// allows that singa holds (numeric, bool, string, float8 e4m3fn/e4m3fnuz/
// e5m2/e5m2fnuz/e8m0, int4, uint4, float4e2m1, int2, uint2). Floats to
// integers truncate; integers out of range wrap; numbers print as numpy
// does; float8 targets round to nearest even and saturate (or not) per
// `saturate`; float8e8m0 rounds per `round_mode`.
// https://onnx.ai/onnx/operators/onnx__Cast.html
// https://onnx.ai/onnx/operators/onnx__CastLike.html
#include <algorithm>

#include "kernels/cpu/float8.h"
#include "ops/common.h"

namespace singa {
namespace {

// round_mode only affects casts to float8e8m0.
struct CastAttrs {
  DType to = DType::kUndefined;
  bool saturate = true;
  std::string round_mode = "up";
};

const std::vector<DType>& CastTypes() {
  static const std::vector<DType> types = [] {
    std::vector<DType> t = dtypes::kAll;
    for (DType d : {DType::kFloat8E4M3FN, DType::kFloat8E4M3FNUZ, DType::kFloat8E5M2,
                    DType::kFloat8E5M2FNUZ, DType::kUInt4, DType::kInt4, DType::kFloat4E2M1,
                    DType::kFloat8E8M0, DType::kUInt2, DType::kInt2})
      t.push_back(d);
    return t;
  }();
  return types;
}

void CheckRoundMode(const InferCtx& c, const CastAttrs& a) {
  SINGA_CHECK(
      a.round_mode == "up" || a.round_mode == "down" || a.round_mode == "nearest", ShapeError,
      c.where() << ": round_mode must be 'up', 'down' or 'nearest', got '" << a.round_mode << "'");
}

SpecList CastInfer(const InferCtx& c, const CastAttrs& a) {
  const auto& types = CastTypes();
  SINGA_CHECK(std::find(types.begin(), types.end(), a.to) != types.end(), DTypeError,
              c.where() << ": cannot cast to " << Name(a.to) << " (" << c.inputs_string() << ")");
  CheckRoundMode(c, a);
  return {{a.to, c.shape(0)}};
}

SpecList CastLikeInfer(const InferCtx& c, const CastAttrs& a) {
  CheckRoundMode(c, a);
  return {{c.dtype(1), c.shape(0)}};
}

// The computable type a packed type is widened to on its way in or out:
// float for the small floats (exact), int64 for the 4- and 2-bit integers.
DType Wide(DType packed) { return cpu::IsSmallFloat(packed) ? DType::kFloat32 : DType::kInt64; }

cpu::E8M0Round RoundMode(const std::string& m) {
  if (m == "down") return cpu::E8M0Round::kDown;
  if (m == "nearest") return cpu::E8M0Round::kNearest;
  return cpu::E8M0Round::kUp;
}

void CastTensor(const Tensor& x, const Tensor& y, bool saturate, cpu::E8M0Round round) {
  const DType sd = x.dtype(), dd = y.dtype();
  // A saturating cast to the same small float still clamps (e5m2's infinities).
  if ((sd == dd && !(saturate && cpu::IsSmallFloat(dd))) ||
      (!cpu::IsPacked(sd) && !cpu::IsPacked(dd))) {
    cpu::ConvertCopy(x, y);
    return;
  }
  Tensor src = x;
  if (cpu::IsPacked(sd)) {  // decode to a computable type first
    src = Tensor(x.shape(), Wide(sd), x.device());
    if (cpu::IsSmallFloat(sd))
      cpu::Unary<uint8_t, float>(x, src, [sd](uint8_t b) { return cpu::DecodeFloat8(sd, b); });
    else
      cpu::Unary<uint8_t, int64_t>(x, src, [sd](uint8_t b) { return cpu::DecodeSmallInt(sd, b); });
    if (!cpu::IsPacked(dd)) {
      cpu::ConvertCopy(src, y);
      return;
    }
  }
  if (dd == DType::kFloat8E8M0) {
    // Through float32, as the spec's reference: its exponent field is the code.
    Tensor narrow(src.shape(), DType::kFloat32, src.device());
    cpu::ConvertCopy(src, narrow);
    cpu::Unary<float, uint8_t>(
        narrow, y, [saturate, round](float v) { return cpu::EncodeE8M0(v, saturate, round); });
  } else if (cpu::IsSmallFloat(dd)) {
    // Through double: every float32 and int32 is exact there, so the value
    // is rounded once, into the target.
    Tensor wide(src.shape(), DType::kFloat64, src.device());
    cpu::ConvertCopy(src, wide);
    cpu::Unary<double, uint8_t>(
        wide, y, [dd, saturate](double v) { return cpu::EncodeFloat8(dd, v, saturate); });
  } else {
    Tensor wide(src.shape(), DType::kInt64, src.device());
    cpu::ConvertCopy(src, wide);
    cpu::Unary<int64_t, uint8_t>(wide, y, [dd](int64_t v) { return cpu::EncodeSmallInt(dd, v); });
  }
}

void CastForward(KernelCtx& k, const CastAttrs& a) {
  CastTensor(k.input(0), k.output(0), a.saturate, RoundMode(a.round_mode));
}

#if SINGA_CUDA
// To a dtype a GPU holds, on the GPU; to others (strings, float8) on the host.
void CastCuda(KernelCtx& k, const CastAttrs& a) {
  Tensor y = k.output(0);
  if (cuda::CopyDType(y.dtype())) {
    cuda::Copy(k.input(0), y);
    return;
  }
  Tensor host(y.shape(), y.dtype());
  CastTensor(k.input(0).ToDevice(Device::Cpu()), host, a.saturate, RoundMode(a.round_mode));
  y.CopyFrom(host);
}
#endif

// Backward (Cast and CastLike): float to float casts the gradient back to the
// input's dtype; other casts are not differentiable, and CastLike's
// target_type only lends its dtype: neither gets a gradient.
TensorList CastBackward(const GradCtx& g, const CastAttrs&) {
  const Tensor& x = g.input(0);
  TensorList d(g.num_inputs());
  if (g.needs_grad(0) && IsFloat(x.dtype()) && IsFloat(g.output(0).dtype()))
    d[0] = Call1("CastLike", {g.grad_output(0), x});
  return d;
}

}  // namespace

// Cast-6 takes `to` as a dtype code (Cast-1 took a string); 19 adds
// saturate (float8), 24 round_mode (float8e8m0). The dtypes added in 9, 13,
// 21, 23, 24 and 25 change no meaning, so each registration claims every
// type.
// 19 added `saturate` (float8 targets), 24 `round_mode` (float8e8m0).
[[maybe_unused]] static const bool kCast =
    RegisterVersions<CastAttrs>("Cast", {6, 19, 24}, [](OpBuilder<CastAttrs>& b, int v) {
      b.inputs({"input"})
          .outputs({"output"})
          .attr("to", &CastAttrs::to, true)
          .dtypes(CastTypes())
          .infer(CastInfer)
          .kernel(CastForward) SINGA_CUDA_KERNEL(CastCuda, ops::kCudaCopy)
          .backward(CastBackward);
      if (v >= 19) b.attr("saturate", &CastAttrs::saturate);
      if (v >= 24) b.attr("round_mode", &CastAttrs::round_mode);
    });
[[maybe_unused]] static const bool kCastLike =
    RegisterVersions<CastAttrs>("CastLike", {15, 19, 24}, [](OpBuilder<CastAttrs>& b, int v) {
      b.inputs({"input", "target_type"})
          .outputs({"output"})
          .dtypes(CastTypes(), {0})
          .dtypes(CastTypes(), {1})
          .infer(CastLikeInfer)
          .kernel(CastForward) SINGA_CUDA_KERNEL(CastCuda, ops::kCudaCopy)
          .backward(CastBackward);
      if (v >= 19) b.attr("saturate", &CastAttrs::saturate);
      if (v >= 24) b.attr("round_mode", &CastAttrs::round_mode);
    });

}  // namespace singa
