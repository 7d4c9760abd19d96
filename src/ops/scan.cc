// Scan: runs body(states..., scan input slices...) -> (states..., scan output
// slices...) once per step along each scan input's axis, in its direction;
// the results are the final states, then each scan output stacked along its
// axis. Scan-8 has a leading batch axis on every state and scan input and a
// first input sequence_lens (per row; its scan outputs are zero past it).
// https://onnx.ai/onnx/operators/onnx__Scan.html
#include <algorithm>
#include <optional>

#include "ops/control_flow.h"

namespace singa {
namespace {

using control_flow::Stack;
using control_flow::TensorOf;

struct ScanAttrs {
  SubgraphPtr body;
  int64_t num_scan_inputs = 0;
  std::vector<int64_t> input_axes, input_directions, output_axes, output_directions;
};

// A Scan attribute's entry for input or output i (0 when the list is short).
int64_t At(const std::vector<int64_t>& v, int64_t i) {
  return i < static_cast<int64_t>(v.size()) ? v[i] : 0;
}

Tensor Index(const ValueCtx& c, int64_t i) { return Tensor::Scalar<int64_t>(i, c.device()); }

ValueList Scan9(const ValueCtx& c, const ScanAttrs& a) {
  const Subgraph& body = *a.body;
  const int64_t m = a.num_scan_inputs;
  const int64_t n_state = c.num_inputs() - m;
  int64_t steps = -1;
  std::vector<int64_t> axes(m);
  for (int64_t j = 0; j < m; ++j) {
    const Tensor& x = c.tensor(static_cast<int>(n_state + j));
    int64_t axis = At(a.input_axes, j);
    if (axis < 0) axis += x.ndim();
    SINGA_CHECK(
        axis >= 0 && axis < x.ndim(), ShapeError,
        c.where() << ": scan axis " << At(a.input_axes, j) << " for input " << x.ToString());
    axes[j] = axis;
    SINGA_CHECK(steps < 0 || x.dim(axis) == steps, ShapeError,
                c.where() << ": scan inputs have different lengths (" << steps << " and "
                          << x.dim(axis) << ")");
    steps = x.dim(axis);
  }
  ValueList states;
  for (int64_t j = 0; j < n_state; ++j) states.push_back(c.input(static_cast<int>(j)));
  const size_t n_scan = body.num_outputs() - n_state;
  std::vector<ValueList> scans(n_scan);
  for (int64_t t = 0; t < steps; ++t) {
    ValueList args = states;
    for (int64_t j = 0; j < m; ++j) {
      const int64_t i = At(a.input_directions, j) == 1 ? steps - 1 - t : t;
      args.push_back(Call1("Gather", {c.tensor(static_cast<int>(n_state + j)), Index(c, i)},
                           {{"axis", axes[j]}}));
    }
    ValueList out = c.RunGraph(body, args, "body");
    for (int64_t j = 0; j < n_state; ++j) states[j] = out[j];
    for (size_t k = 0; k < n_scan; ++k) scans[k].push_back(out[n_state + k]);
  }
  ValueList result = states;
  for (size_t k = 0; k < n_scan; ++k) {
    if (At(a.output_directions, k) == 1) std::reverse(scans[k].begin(), scans[k].end());
    result.push_back(
        Stack(c, scans[k], At(a.output_axes, k), body.output_dtype(static_cast<int>(n_state + k))));
  }
  return result;
}

// Scan-8: states [batch, ...] and scan inputs [batch, steps, ...]; batch row
// b scans the first sequence_lens[b] steps (all when absent) of its rows,
// and its scan outputs are zero past them.
ValueList Scan8(const ValueCtx& c, const ScanAttrs& a) {
  const Subgraph& body = *a.body;
  const int64_t m = a.num_scan_inputs;
  const int64_t n_state = c.num_inputs() - 1 - m;  // Validate checked >= 0
  TensorList x;
  for (int j = 1; j < c.num_inputs(); ++j) {
    const bool scanned = j > n_state;
    x.push_back(TensorOf(c, c.input(j), "input " + std::to_string(j)));
    SINGA_CHECK(x.back().defined() && x.back().ndim() >= (scanned ? 2 : 1), ShapeError,
                c.where() << ": input " << j << " needs a batch axis"
                          << (scanned ? " and a sequence axis" : "") << ", got "
                          << (x.back().defined() ? x.back().ToString() : std::string("none")));
    SINGA_CHECK(x.back().dim(0) == x[0].dim(0), ShapeError,
                c.where() << ": input " << j << " has batch " << x.back().dim(0) << ", input 1 "
                          << x[0].dim(0));
  }
  const int64_t batch = x[0].dim(0), steps = x[n_state].dim(1);
  for (int64_t j = n_state; j < n_state + m; ++j)
    SINGA_CHECK(x[j].dim(1) == steps, ShapeError,
                c.where() << ": scan inputs have different lengths (" << steps << " and "
                          << x[j].dim(1) << ")");
  std::vector<int64_t> lens(batch, steps);
  if (c.has_input(0)) {
    const Tensor& l = c.tensor(0);
    SINGA_CHECK(l.ndim() == 1 && l.dim(0) == batch && IsInteger(l.dtype()), ShapeError,
                c.where() << ": sequence_lens must be ints of shape [" << batch << "], got "
                          << l.ToString());
    lens = Call1("Cast", {l}, {{"to", int64_t(DType::kInt64)}}).ToVector<int64_t>();
  }
  const size_t n_scan = body.num_outputs() - n_state;
  std::vector<ValueList> state_rows(n_state), scan_rows(n_scan);
  std::vector<std::vector<ValueList>> steps_of(batch, std::vector<ValueList>(n_scan));
  std::vector<std::optional<Shape>> step_shape(n_scan);
  for (int64_t b = 0; b < batch; ++b) {
    SINGA_CHECK(lens[b] >= 0 && lens[b] <= steps, ShapeError,
                c.where() << ": sequence_lens[" << b << "] = " << lens[b] << " is outside [0, "
                          << steps << "]");
    const Tensor row = Index(c, b);
    ValueList states;
    for (int64_t j = 0; j < n_state; ++j) states.push_back(Call1("Gather", {x[j], row}));
    TensorList seqs;
    for (int64_t j = n_state; j < n_state + m; ++j) seqs.push_back(Call1("Gather", {x[j], row}));
    for (int64_t t = 0; t < lens[b]; ++t) {
      ValueList args = states;
      for (int64_t j = 0; j < m; ++j) {
        const int64_t i = At(a.input_directions, j) == 1 ? lens[b] - 1 - t : t;
        args.push_back(Call1("Gather", {seqs[j], Index(c, i)}));
      }
      ValueList out = c.RunGraph(body, args, "body");
      for (int64_t j = 0; j < n_state; ++j) states[j] = out[j];
      for (size_t k = 0; k < n_scan; ++k) {
        steps_of[b][k].push_back(out[n_state + k]);
        step_shape[k] = TensorOf(c, out[n_state + k], "a scan output").shape();
      }
    }
    for (int64_t j = 0; j < n_state; ++j) state_rows[j].push_back(states[j]);
  }
  ValueList result;
  for (int64_t j = 0; j < n_state; ++j)
    result.push_back(Stack(c, state_rows[j], 0, body.output_dtype(static_cast<int>(j))));
  for (size_t k = 0; k < n_scan; ++k) {
    const DType dtype = body.output_dtype(static_cast<int>(n_state + k));
    for (int64_t b = 0; b < batch; ++b) {
      ValueList& row = steps_of[b][k];
      SINGA_CHECK(static_cast<int64_t>(row.size()) == steps || step_shape[k], UnsupportedOp,
                  c.where() << ": every sequence_lens is 0, so scan output " << k
                            << " has no step to take its shape from");
      while (static_cast<int64_t>(row.size()) < steps)
        row.push_back(Tensor::Zeros(*step_shape[k], dtype, c.device()));
      scan_rows[k].push_back(Stack(c, row, 0, dtype));
    }
    result.push_back(Stack(c, scan_rows[k], 0, dtype));
  }
  return result;
}

// The state and scan inputs the body takes: all inputs but Scan-8's
// sequence_lens.
void Check(int body_inputs, const ScanAttrs& a, const std::string& where) {
  const int64_t m = a.num_scan_inputs;
  SINGA_CHECK(
      m >= 1 && m <= body_inputs, InvalidModel,
      where << ": num_scan_inputs " << m << " for " << body_inputs << " state and scan inputs");
  SINGA_CHECK(a.body->num_inputs() == body_inputs, InvalidModel,
              where << ": the body takes " << a.body->num_inputs() << " inputs, the node gives "
                    << body_inputs);
  SINGA_CHECK(a.body->num_outputs() >= body_inputs - m, InvalidModel,
              where << ": the body gives " << a.body->num_outputs() << " outputs, fewer than its "
                    << body_inputs - m << " states");
}

}  // namespace

[[maybe_unused]] static const bool kScan =
    RegisterVersions<ScanAttrs>("Scan", {8, 9}, [](OpBuilder<ScanAttrs>& b, int v) {
      const bool batched = v == 8;
      if (batched)
        b.inputs({"sequence_lens?", "initial_state_and_scan_inputs..."});
      else
        b.inputs({"initial_state_and_scan_inputs..."});
      b.outputs({"final_state_and_scan_outputs..."})
          .attr("body", &ScanAttrs::body, /*required=*/true)
          .attr("num_scan_inputs", &ScanAttrs::num_scan_inputs, /*required=*/true)
          .attr(batched ? "directions" : "scan_input_directions", &ScanAttrs::input_directions)
          .validate([batched](int num_inputs, int, const ScanAttrs& a, const std::string& where) {
            Check(num_inputs - (batched ? 1 : 0), a, where);
          })
          .value_kernel(batched ? Scan8 : Scan9);
      if (!batched)
        b.attr("scan_input_axes", &ScanAttrs::input_axes)
            .attr("scan_output_axes", &ScanAttrs::output_axes)
            .attr("scan_output_directions", &ScanAttrs::output_directions);
    });

}  // namespace singa
