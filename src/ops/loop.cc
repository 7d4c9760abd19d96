// Loop: runs body(i, cond, v...) -> (cond, v..., scan outputs...) while
// i < M and cond; the results are the final loop-carried values, then each
// scan output stacked over the iterations. M and cond may both be absent
// (a loop that only its body's cond ends).
// https://onnx.ai/onnx/operators/onnx__Loop.html
#include <limits>

#include "ops/control_flow.h"

namespace singa {
namespace {

struct LoopAttrs {
  SubgraphPtr body;
};

ValueList Loop(const ValueCtx& c, const LoopAttrs& a) {
  using control_flow::Truth;
  const Subgraph& body = *a.body;
  SINGA_CHECK(!c.input(0).is_sequence(), DTypeError,
              c.where() << ": M must be a tensor, got " << c.input(0).ToString());
  const Tensor& trip = c.input(0).tensor();
  const int64_t max_trip =
      trip.defined() ? trip.Item<int64_t>() : std::numeric_limits<int64_t>::max();
  bool cond = c.has_input(1) ? Truth(c, c.input(1), "cond") : true;
  ValueList carried;
  for (int i = 2; i < c.num_inputs(); ++i) carried.push_back(c.input(i));
  const size_t n_scan = body.num_outputs() - 1 - carried.size();
  std::vector<ValueList> scans(n_scan);
  for (int64_t i = 0; i < max_trip && cond; ++i) {
    ValueList args = {Tensor::Scalar<int64_t>(i, c.device()),
                      Tensor::Scalar<bool>(cond, c.device())};
    args.insert(args.end(), carried.begin(), carried.end());
    ValueList out = c.RunGraph(body, args, "body");
    cond = Truth(c, out[0], "the body's cond output");
    for (size_t j = 0; j < carried.size(); ++j) carried[j] = out[1 + j];
    for (size_t k = 0; k < n_scan; ++k) scans[k].push_back(out[1 + carried.size() + k]);
  }
  ValueList result = carried;
  for (size_t k = 0; k < n_scan; ++k)
    result.push_back(control_flow::Stack(
        c, scans[k], 0, body.output_dtype(static_cast<int>(1 + carried.size() + k))));
  return result;
}

void Validate(int num_inputs, int, const LoopAttrs& a, const std::string& where) {
  const int carried = std::max(num_inputs - 2, 0);
  SINGA_CHECK(a.body->num_inputs() == carried + 2 && a.body->num_outputs() >= carried + 1,
              InvalidModel,
              where << ": the body takes " << a.body->num_inputs() << " inputs and gives "
                    << a.body->num_outputs() << " outputs; with " << carried
                    << " loop-carried values it must take " << carried + 2 << " and give at least "
                    << carried + 1);
}

}  // namespace

SINGA_REGISTER_OP(Loop, LoopAttrs)
    .since_opset(1)
    .inputs({"M?", "cond?", "v_initial?..."})
    .outputs({"v_final_and_scan_outputs?..."})
    .attr("body", &LoopAttrs::body, /*required=*/true)
    .validate(Validate)
    .value_kernel(Loop);

}  // namespace singa
