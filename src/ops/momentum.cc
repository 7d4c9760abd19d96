// Momentum (ai.onnx.preview.training): one SGD-with-momentum step for each
// parameter, with b = T > 0 ? beta : 1 (the first step takes the whole
// gradient) and g = norm_coefficient * X + G:
//   V_new = alpha * V + b * g,
//   standard: X_new = X - R * V_new;  nesterov: X_new = X - R * (g + alpha * V_new).
// Inputs R, T, X1..Xn, G1..Gn, V1..Vn; outputs X1_new..Xn_new, V1_new..Vn_new.
// Computed in double, rounded to X's dtype once.
// https://onnx.ai/onnx/operators/onnx_aionnx_preview_training_Momentum.html
#include "ops/optimizer_update.h"

namespace singa {
namespace {

struct MomentumAttrs {
  float alpha = 0.0f;
  float beta = 0.0f;
  std::string mode;
  float norm_coefficient = 0.0f;
};

SpecList Infer(const InferCtx& c, const MomentumAttrs& a) {
  SINGA_CHECK(a.mode == "standard" || a.mode == "nesterov", ShapeError,
              c.where() << ": mode must be 'standard' or 'nesterov', got '" << a.mode << "'");
  return ops::OptimizerSpecs(c, 3, 2);
}

template <class T>
void Step(KernelCtx& k, const MomentumAttrs& a) {
  const double r = k.input(0).Item<double>(), alpha = a.alpha;
  const double b = k.input(1).Item<int64_t>() > 0 ? a.beta : 1.0;
  const bool nesterov = a.mode == "nesterov";
  const int64_t n = (k.num_inputs() - 2) / 3;
  for (int64_t i = 0; i < n; ++i) {
    const ops::ParamTensors<T> p = ops::ParamOf<T>(k, i, 3, 2);
    const T *x = p.inputs[0], *g = p.inputs[1], *v = p.inputs[2];
    T *x_new = p.outputs[0], *v_new = p.outputs[1];
    for (int64_t j = 0; j < p.size; ++j) {
      const double gr = a.norm_coefficient * static_cast<double>(x[j]) + g[j];
      const double vn = alpha * v[j] + b * gr;
      if (x_new) x_new[j] = static_cast<T>(x[j] - r * (nesterov ? gr + alpha * vn : vn));
      if (v_new) v_new[j] = static_cast<T>(vn);
    }
  }
}

void Forward(KernelCtx& k, const MomentumAttrs& a) {
  VisitFloat(
      k.input(2).dtype(), [&]<class T>(Tag<T>) { Step<T>(k, a); }, "Momentum");
}

const std::vector<DType> kFloatDouble = {DType::kFloat32, DType::kFloat64};

}  // namespace

SINGA_REGISTER_OP(Momentum, MomentumAttrs)
    .domain("ai.onnx.preview.training")
    .since_opset(1)
    .inputs({"R", "T", "inputs..."})
    .outputs({"outputs..."})
    .attr("alpha", &MomentumAttrs::alpha, true)
    .attr("beta", &MomentumAttrs::beta, true)
    .attr("mode", &MomentumAttrs::mode, true)
    .attr("norm_coefficient", &MomentumAttrs::norm_coefficient, true)
    .dtypes(kFloatDouble, {0})
    .dtypes({DType::kInt64}, {1})
    .dtypes(kFloatDouble, {2})
    .infer(Infer)
    .kernel(Forward);

}  // namespace singa
