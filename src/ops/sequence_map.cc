// SequenceMap: runs the body once per element of input_sequence; other
// sequence inputs give it their element at the same position, tensors give
// themselves. Each body output becomes a sequence.
// https://onnx.ai/onnx/operators/onnx__SequenceMap.html
#include "ops/control_flow.h"

namespace singa {
namespace {

struct SequenceMapAttrs {
  SubgraphPtr body;
};

ValueList SequenceMap(const ValueCtx& c, const SequenceMapAttrs& a) {
  const Subgraph& body = *a.body;
  const size_t n = c.sequence(0).size();
  for (int j = 1; j < c.num_inputs(); ++j)
    SINGA_CHECK(!c.input(j).is_sequence() || c.input(j).sequence().size() == n, ShapeError,
                c.where() << ": input " << j << " has " << c.input(j).sequence().size()
                          << " elements, input_sequence " << n);
  std::vector<TensorList> outs(body.num_outputs());
  for (size_t i = 0; i < n; ++i) {
    ValueList args;
    for (int j = 0; j < c.num_inputs(); ++j) {
      const Value& v = c.input(j);
      args.push_back(v.is_sequence() ? Value(v.sequence()[i]) : v);
    }
    ValueList out = c.RunGraph(body, args, "body");
    for (size_t k = 0; k < outs.size(); ++k)
      outs[k].push_back(control_flow::TensorOf(c, out[k], "a body output"));
  }
  ValueList result;
  for (size_t k = 0; k < outs.size(); ++k)
    result.push_back(Value::Sequence(std::move(outs[k]), body.output_dtype(static_cast<int>(k))));
  return result;
}

void Validate(int num_inputs, int num_outputs, const SequenceMapAttrs& a,
              const std::string& where) {
  SINGA_CHECK(a.body->num_inputs() == num_inputs && a.body->num_outputs() >= num_outputs,
              InvalidModel,
              where << ": the body takes " << a.body->num_inputs() << " inputs and gives "
                    << a.body->num_outputs() << " outputs; the node has " << num_inputs
                    << " inputs and " << num_outputs << " outputs");
}

}  // namespace

SINGA_REGISTER_OP(SequenceMap, SequenceMapAttrs)
    .since_opset(17)
    .inputs({"input_sequence", "additional_inputs?..."})
    .outputs({"out_sequence..."})
    .attr("body", &SequenceMapAttrs::body, /*required=*/true)
    .validate(Validate)
    .value_kernel(SequenceMap);

}  // namespace singa
