// If: runs then_branch when cond is true, else else_branch; the node's
// outputs are the branch's. The branches read values of the enclosing graph.
// https://onnx.ai/onnx/operators/onnx__If.html
#include "ops/control_flow.h"

namespace singa {
namespace {

struct IfAttrs {
  SubgraphPtr then_branch, else_branch;
};

ValueList If(const ValueCtx& c, const IfAttrs& a) {
  const bool then = control_flow::Truth(c, c.input(0), "cond");
  return c.RunGraph(then ? *a.then_branch : *a.else_branch, {},
                    then ? "then_branch" : "else_branch");
}

void Validate(int, int num_outputs, const IfAttrs& a, const std::string& where) {
  for (const SubgraphPtr& branch : {a.then_branch, a.else_branch})
    SINGA_CHECK(branch->num_inputs() == 0 && branch->num_outputs() >= num_outputs, InvalidModel,
                where << ": a branch takes " << branch->num_inputs() << " inputs and gives "
                      << branch->num_outputs() << " outputs; it must take none and give "
                      << num_outputs);
}

}  // namespace

SINGA_REGISTER_OP(If, IfAttrs)
    .since_opset(1)
    .inputs({"cond"})
    .outputs({"outputs?..."})
    .attr("then_branch", &IfAttrs::then_branch, /*required=*/true)
    .attr("else_branch", &IfAttrs::else_branch, /*required=*/true)
    .validate(Validate)
    .value_kernel(If);

}  // namespace singa
