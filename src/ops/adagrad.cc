// Adagrad (ai.onnx.preview.training): one ADAGRAD step for each parameter,
//   r = R / (1 + T * decay_factor),  g = norm_coefficient * X + G,
//   H_new = H + g * g,  X_new = X - r * g / (sqrt(H_new) + epsilon).
// Inputs R, T, X1..Xn, G1..Gn, H1..Hn; outputs X1_new..Xn_new, H1_new..Hn_new.
// Computed in double, rounded to X's dtype once.
// https://onnx.ai/onnx/operators/onnx_aionnx_preview_training_Adagrad.html
#include <cmath>

#include "ops/optimizer_update.h"

namespace singa {
namespace {

struct AdagradAttrs {
  float decay_factor = 0.0f;
  float epsilon = 1e-6f;
  float norm_coefficient = 0.0f;
};

SpecList Infer(const InferCtx& c, const AdagradAttrs&) { return ops::OptimizerSpecs(c, 3, 2); }

template <class T>
void Step(KernelCtx& k, const AdagradAttrs& a) {
  const double r = k.input(0).Item<double>() /
                   (1 + static_cast<double>(k.input(1).Item<int64_t>()) * a.decay_factor);
  const int64_t n = (k.num_inputs() - 2) / 3;
  for (int64_t i = 0; i < n; ++i) {
    const ops::ParamTensors<T> p = ops::ParamOf<T>(k, i, 3, 2);
    const T *x = p.inputs[0], *g = p.inputs[1], *h = p.inputs[2];
    T *x_new = p.outputs[0], *h_new = p.outputs[1];
    for (int64_t j = 0; j < p.size; ++j) {
      const double gr = a.norm_coefficient * static_cast<double>(x[j]) + g[j];
      const double hn = h[j] + gr * gr;
      if (x_new) x_new[j] = static_cast<T>(x[j] - r * gr / (std::sqrt(hn) + a.epsilon));
      if (h_new) h_new[j] = static_cast<T>(hn);
    }
  }
}

void Forward(KernelCtx& k, const AdagradAttrs& a) {
  VisitFloat(
      k.input(2).dtype(), [&]<class T>(Tag<T>) { Step<T>(k, a); }, "Adagrad");
}

const std::vector<DType> kFloatDouble = {DType::kFloat32, DType::kFloat64};

}  // namespace

SINGA_REGISTER_OP(Adagrad, AdagradAttrs)
    .domain("ai.onnx.preview.training")
    .since_opset(1)
    .inputs({"R", "T", "inputs..."})
    .outputs({"outputs..."})
    .attr("decay_factor", &AdagradAttrs::decay_factor)
    .attr("epsilon", &AdagradAttrs::epsilon)
    .attr("norm_coefficient", &AdagradAttrs::norm_coefficient)
    .dtypes(kFloatDouble, {0})
    .dtypes({DType::kInt64}, {1})
    .dtypes(kFloatDouble, {2})
    .infer(Infer)
    .kernel(Forward);

}  // namespace singa
