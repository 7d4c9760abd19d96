// Gradient (ai.onnx.preview.training 1): dy/dx for each x of xs, at the
// node's inputs (the values of xs, then of zs). The reader made the nodes
// that compute y from xs and zs the node's subgraph; here it runs on fresh
// tape leaves (the xs need gradients, the zs do not) and autograd walks back
// from y, seeded with ones. An x that y does not depend on gets zeros. The
// results carry no tape of their own: a Gradient of a Gradient's output is
// not differentiated.
#include <unordered_map>

#include "onnx/plan.h"
#include "singa/autograd/autograd.h"
#include "singa/ops/tape.h"

namespace singa::sonnx {

ValueList RunGradient(const Graph& g, const Node& node, const ValueList& in,
                      const ValueList& values) {
  const std::string where = g.Where(node);
  const Graph& f = *node.subgraphs[0];
  ValueList leaves;
  for (size_t i = 0; i < in.size(); ++i) {
    const std::string name = f.inputs[i].name;
    SINGA_CHECK(!in[i].is_sequence() && in[i].tensor().defined(), DTypeError,
                where << ": input " << i << " ('" << name << "') must be a tensor, got "
                      << in[i].ToString());
    Tensor leaf = in[i].tensor().Detach();
    if (static_cast<int>(i) < node.num_xs) {
      SINGA_CHECK(IsFloat(leaf.dtype()), DTypeError,
                  where << ": x '" << name << "' must be a float tensor to differentiate, got "
                        << leaf.ToString());
      leaf.set_stores_grad(true);
    }
    leaves.push_back(leaf);
  }
  Tensor y;
  {
    GradModeGuard record(true);
    ValueList out = RunSubgraph(f, leaves, values, node.outer_inputs[0], where + " y");
    SINGA_CHECK(!out[0].is_sequence() && out[0].tensor().defined(), DTypeError,
                where << ": y must be a tensor, got " << out[0].ToString());
    y = out[0].tensor();
  }
  SINGA_CHECK(IsFloat(y.dtype()), DTypeError,
              where << ": y must be a float tensor to differentiate, got " << y.ToString());
  std::unordered_map<const void*, Tensor> grads;
  for (auto& [param, grad] : autograd::Gradients(y)) grads.emplace(param.id(), grad);
  ValueList result;
  for (int i = 0; i < node.num_xs; ++i) {
    const Tensor& x = leaves[i].tensor();
    auto it = grads.find(x.id());
    result.push_back(it != grads.end() ? it->second
                                       : Tensor::Zeros(x.shape(), x.dtype(), g.device));
  }
  result.resize(node.outputs.size());
  return result;
}

}  // namespace singa::sonnx
