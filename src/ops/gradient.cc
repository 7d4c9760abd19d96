// Gradient (ai.onnx.preview.training 1): dy/dx for each x of xs, at the
// node's inputs (the values of xs, then of zs). The importer cuts the nodes
// that compute y from xs and zs out of the enclosing graph as the node's
// graph attribute (OpSchema::CutGraph); here it runs on fresh tape leaves
// (the xs need gradients, the zs do not) and autograd walks back from y,
// seeded with ones (the engine, a layer above the ops, comes through the
// ValueCtx from the model). An x that y does not depend on gets zeros. The results
// carry no tape of their own: a Gradient of a Gradient's output is not
// differentiated.
// https://onnx.ai/onnx/operators/onnx_aionnxpreviewtraining_Gradient.html
#include <unordered_map>

#include "singa/ops/op.h"

namespace singa {
namespace {

struct GradientAttrs {
  std::vector<std::string> xs, zs;
  std::string y;
  SubgraphPtr graph;  // y from xs then zs
};

ValueList Gradient(const ValueCtx& c, const GradientAttrs& a) {
  const int num_xs = static_cast<int>(a.xs.size());
  ValueList leaves;
  for (int i = 0; i < c.num_inputs(); ++i) {
    const std::string& name = a.graph->input_name(i);
    SINGA_CHECK(!c.input(i).is_sequence() && c.input(i).tensor().defined(), DTypeError,
                c.where() << ": input " << i << " ('" << name << "') must be a tensor, got "
                          << c.input(i).ToString());
    Tensor leaf = c.input(i).tensor().Detach();
    if (i < num_xs) {
      SINGA_CHECK(IsFloat(leaf.dtype()), DTypeError,
                  c.where() << ": x '" << name << "' must be a float tensor to differentiate, got "
                            << leaf.ToString());
      leaf.set_stores_grad(true);
    }
    leaves.push_back(leaf);
  }
  Tensor y;
  {
    GradModeGuard record(true);
    ValueList out = c.RunGraph(*a.graph, leaves, "y");
    SINGA_CHECK(!out[0].is_sequence() && out[0].tensor().defined(), DTypeError,
                c.where() << ": y must be a tensor, got " << out[0].ToString());
    y = out[0].tensor();
  }
  SINGA_CHECK(IsFloat(y.dtype()), DTypeError,
              c.where() << ": y must be a float tensor to differentiate, got " << y.ToString());
  std::unordered_map<const void*, Tensor> grads;
  for (auto& [param, grad] : c.Gradients(y)) grads.emplace(param.id(), grad);
  ValueList result;
  for (int i = 0; i < num_xs; ++i) {
    const Tensor& x = leaves[i].tensor();
    auto it = grads.find(x.id());
    result.push_back(it != grads.end() ? it->second
                                       : Tensor::Zeros(x.shape(), x.dtype(), x.device()));
  }
  return result;
}

void Validate(int num_inputs, int num_outputs, const GradientAttrs& a, const std::string& where) {
  SINGA_CHECK(!a.xs.empty() && !a.y.empty(), InvalidModel,
              where << ": attributes 'xs' and 'y' are required");
  SINGA_CHECK(num_inputs == static_cast<int>(a.xs.size() + a.zs.size()), InvalidModel,
              where << ": takes one input per name of xs and zs (" << a.xs.size() + a.zs.size()
                    << "), the node has " << num_inputs);
  SINGA_CHECK(num_outputs <= static_cast<int>(a.xs.size()), InvalidModel,
              where << ": gives one output per name of xs (" << a.xs.size() << "), the node has "
                    << num_outputs);
}

}  // namespace

SINGA_REGISTER_OP(Gradient, GradientAttrs)
    .domain("ai.onnx.preview.training")
    .since_opset(1)
    .inputs({"Inputs..."})
    .outputs({"Outputs..."})
    .attr("xs", &GradientAttrs::xs, /*required=*/true)
    .attr("zs", &GradientAttrs::zs)
    .attr("y", &GradientAttrs::y, /*required=*/true)
    .cut_graph("graph", &GradientAttrs::graph, {"xs", "zs"}, "y")
    .validate(Validate)
    .value_kernel(Gradient);

}  // namespace singa
