// Adam (ai.onnx.preview.training): one Adam step for each parameter,
//   g = norm_coefficient * X + G,
//   V_new = alpha * V + (1 - alpha) * g,  H_new = beta * H + (1 - beta) * g * g,
//   r = T > 0 ? R * sqrt(1 - beta^T) / (1 - alpha^T) : R   (bias correction),
//   X_new = (1 - norm_coefficient_post) * (X - r * V_new / (sqrt(H_new) + epsilon)).
// Inputs R, T, X1..Xn, G1..Gn, V1..Vn, H1..Hn; outputs X1_new..Xn_new,
// V1_new..Vn_new, H1_new..Hn_new. Computed in double, rounded to X's dtype once.
// https://onnx.ai/onnx/operators/onnx_aionnx_preview_training_Adam.html
#include <cmath>

#include "ops/optimizer_update.h"

namespace singa {
namespace {

struct AdamAttrs {
  float alpha = 0.9f;
  float beta = 0.999f;
  float epsilon = 1e-6f;
  float norm_coefficient = 0.0f;
  float norm_coefficient_post = 0.0f;
};

SpecList Infer(const InferCtx& c, const AdamAttrs&) { return ops::OptimizerSpecs(c, 4, 3); }

template <class T>
void Step(KernelCtx& k, const AdamAttrs& a) {
  const double alpha = a.alpha, beta = a.beta;
  // NOTE: 1 - alpha, 1 - beta and 1 - norm_coefficient_post are formed from
  // the float attributes in float, as onnx's reference does; the rest is double.
  const double keep_v = 1.0f - a.alpha, keep_h = 1.0f - a.beta;
  const double keep_x = 1.0f - a.norm_coefficient_post;
  const int64_t t = k.input(1).Item<int64_t>();
  const double r0 = k.input(0).Item<double>();
  const double r = t > 0 ? r0 * std::sqrt(1 - std::pow(beta, static_cast<double>(t))) /
                               (1 - std::pow(alpha, static_cast<double>(t)))
                         : r0;
  const int64_t n = (k.num_inputs() - 2) / 4;
  for (int64_t i = 0; i < n; ++i) {
    const ops::ParamTensors<T> p = ops::ParamOf<T>(k, i, 4, 3);
    const T *x = p.inputs[0], *g = p.inputs[1], *v = p.inputs[2], *h = p.inputs[3];
    T *x_new = p.outputs[0], *v_new = p.outputs[1], *h_new = p.outputs[2];
    for (int64_t j = 0; j < p.size; ++j) {
      const double gr = a.norm_coefficient * static_cast<double>(x[j]) + g[j];
      const double vn = alpha * v[j] + keep_v * gr;
      const double hn = beta * h[j] + keep_h * gr * gr;
      const double xn = x[j] - r * vn / (std::sqrt(hn) + a.epsilon);
      if (x_new) x_new[j] = static_cast<T>(keep_x * xn);
      if (v_new) v_new[j] = static_cast<T>(vn);
      if (h_new) h_new[j] = static_cast<T>(hn);
    }
  }
}

void Forward(KernelCtx& k, const AdamAttrs& a) {
  VisitFloat(
      k.input(2).dtype(), [&]<class T>(Tag<T>) { Step<T>(k, a); }, "Adam");
}

const std::vector<DType> kFloatDouble = {DType::kFloat32, DType::kFloat64};

}  // namespace

SINGA_REGISTER_OP(Adam, AdamAttrs)
    .domain("ai.onnx.preview.training")
    .since_opset(1)
    .inputs({"R", "T", "inputs..."})
    .outputs({"outputs..."})
    .attr("alpha", &AdamAttrs::alpha)
    .attr("beta", &AdamAttrs::beta)
    .attr("epsilon", &AdamAttrs::epsilon)
    .attr("norm_coefficient", &AdamAttrs::norm_coefficient)
    .attr("norm_coefficient_post", &AdamAttrs::norm_coefficient_post)
    .dtypes(kFloatDouble, {0})
    .dtypes({DType::kInt64}, {1})
    .dtypes(kFloatDouble, {2})
    .infer(Infer)
    .kernel(Forward);

}  // namespace singa
