// RandomUniformLike: a tensor of the input's shape drawn uniformly from
// [low, high), of dtype `dtype` (default: the input's). See random_state.h
// for the generator and what `seed` reproduces.
// https://onnx.ai/onnx/operators/onnx__RandomUniformLike.html
#include "ops/common.h"
#include "ops/random_state.h"

namespace singa {
namespace {

struct UniformAttrs {
  std::optional<DType> dtype;
  float high = 1.0f;
  float low = 0.0f;
  std::optional<float> seed;
};

SpecList UniformInfer(const InferCtx& c, const UniformAttrs& a) {
  const DType out = a.dtype ? *a.dtype : c.dtype(0);
  SINGA_CHECK(IsFloat(out), DTypeError,
              c.where() << ": the output dtype must be float, got " << Name(out) << " ("
                        << c.inputs_string() << ")");
  return {{out, c.shape(0)}};
}

void UniformForward(KernelCtx& k, const UniformAttrs& a) {
  const Tensor& y = k.output(0);
  ops::UniformSource src(a.seed, k.input(0).device());
  // Drawn in row-major order on one thread: the values do not depend on the
  // thread count. The reference scales in the output dtype.
  Tensor u({y.numel()}, DType::kFloat64);
  double* p = u.data<double>();
  for (int64_t i = 0; i < y.numel(); ++i) p[i] = src.Next();
  VisitFloat(y.dtype(), [&]<class T>(Tag<T>) {
    T* py = y.data<T>();
    const T span = static_cast<T>(static_cast<double>(a.high) - a.low), low = static_cast<T>(a.low);
    for (int64_t i = 0; i < y.numel(); ++i)
      py[i] = static_cast<T>(
          static_cast<Acc<T>>(static_cast<T>(static_cast<Acc<T>>(static_cast<T>(p[i])) * span)) +
          static_cast<Acc<T>>(low));
  });
}

void Register(int opset) {
  std::vector<DType> types = dtypes::kAll;
  OpBuilder<UniformAttrs>("RandomUniformLike")
      .since_opset(opset)
      .inputs({"input"})
      .outputs({"output"})
      .attr("dtype", &UniformAttrs::dtype)
      .attr("high", &UniformAttrs::high)
      .attr("low", &UniformAttrs::low)
      .attr("seed", &UniformAttrs::seed)
      .dtypes(opset >= 22 ? types : ops::kAllButBFloat16, {0})
      .infer(UniformInfer)
      .kernel(UniformForward)
      .nondeterministic();
}

[[maybe_unused]] const bool kRegistered = [] {
  Register(1);
  Register(22);  // bfloat16
  return true;
}();

}  // namespace
}  // namespace singa
