// NonMaxSuppression: per batch and class, greedily selects boxes by
// decreasing score (ties: lower index first), dropping those at or below
// score_threshold and those whose IoU with an already selected box exceeds
// iou_threshold, up to max_output_boxes_per_class. Output: int64
// [selected, 3] rows of (batch, class, box), in selection order. Boxes are
// corners [y1, x1, y2, x2] in either order (center_point_box 0) or
// [x_center, y_center, width, height] (1). Arithmetic in float32, as the
// spec's reference, so IoUs at the threshold compare the same.
// https://onnx.ai/onnx/operators/onnx__NonMaxSuppression.html
//
// The output's shape depends on the values, so shape inference runs the
// selection.
#include <algorithm>
#include <numeric>

#include "ops/common.h"

namespace singa {
namespace {

struct NmsAttrs {
  int64_t center_point_box = 0;
};

struct Box {
  float x_min, x_max, y_min, y_max;
};

Box ReadBox(const float* b, bool center) {
  if (center) {
    const float w = b[2] / 2, h = b[3] / 2;
    return {b[0] - w, b[0] + w, b[1] - h, b[1] + h};
  }
  return {std::min(b[1], b[3]), std::max(b[1], b[3]), std::min(b[0], b[2]), std::max(b[0], b[2])};
}

// IoU(a, b) > threshold; boxes that do not overlap (or are empty) never
// suppress.
bool Suppresses(const Box& a, const Box& b, float threshold) {
  const float ix_min = std::max(a.x_min, b.x_min), ix_max = std::min(a.x_max, b.x_max);
  if (ix_max <= ix_min) return false;
  const float iy_min = std::max(a.y_min, b.y_min), iy_max = std::min(a.y_max, b.y_max);
  if (iy_max <= iy_min) return false;
  const float inter = (ix_max - ix_min) * (iy_max - iy_min);
  const float area_a = (a.x_max - a.x_min) * (a.y_max - a.y_min);
  const float area_b = (b.x_max - b.x_min) * (b.y_max - b.y_min);
  const float uni = area_a + area_b - inter;
  if (inter <= 0 || area_a <= 0 || area_b <= 0 || uni <= 0) return false;
  return inter / uni > threshold;
}

void CheckInputs(const InferCtx& c, const NmsAttrs& a) {
  const Shape& boxes = c.shape(0);
  const Shape& scores = c.shape(1);
  SINGA_CHECK(boxes.size() == 3 && boxes[2] == 4 && scores.size() == 3 && scores[0] == boxes[0] &&
                  scores[2] == boxes[1],
              ShapeError,
              c.where() << ": boxes must be [batch, boxes, 4] and scores [batch, classes, boxes], "
                        << "got " << c.inputs_string());
  for (int i = 2; i < 5; ++i)
    if (c.has_input(i))
      SINGA_CHECK(c.input(i).numel() <= 1, ShapeError,
                  c.where() << ": " << c.op().input_names[i] << " must be a scalar, got "
                            << c.inputs_string());
  SINGA_CHECK(a.center_point_box == 0 || a.center_point_box == 1, ShapeError,
              c.where() << ": center_point_box must be 0 or 1, got " << a.center_point_box);
}

// The selected (batch, class, box) triples.
std::vector<int64_t> Select(std::span<const Tensor> in, const NmsAttrs& a) {
  auto has = [&](size_t i) { return i < in.size() && in[i].defined() && in[i].numel() > 0; };
  const int64_t max_out = has(2) ? std::max<int64_t>(0, in[2].ToVector<int64_t>()[0]) : 0;
  const float iou = has(3) ? in[3].ToVector<float>()[0] : 0.0f;
  const bool use_score = has(4);
  const float score_min = use_score ? in[4].ToVector<float>()[0] : 0.0f;
  const Tensor boxes = in[0].Contiguous(), scores = in[1].Contiguous();
  const int64_t batches = boxes.dim(0), n = boxes.dim(1), classes = scores.dim(1);
  const float* pb = boxes.data<float>();
  const float* ps = scores.data<float>();
  std::vector<int64_t> out;
  std::vector<int64_t> order;
  std::vector<Box> kept;
  for (int64_t b = 0; b < batches; ++b) {
    std::vector<Box> bx(n);
    for (int64_t i = 0; i < n; ++i) bx[i] = ReadBox(pb + (b * n + i) * 4, a.center_point_box);
    for (int64_t c = 0; c < classes; ++c) {
      const float* s = ps + (b * classes + c) * n;
      order.clear();
      for (int64_t i = 0; i < n; ++i)
        if (!use_score || s[i] > score_min) order.push_back(i);
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t x, int64_t y) { return s[x] > s[y]; });
      kept.clear();
      for (int64_t i : order) {
        if (static_cast<int64_t>(kept.size()) >= max_out) break;
        bool ok = true;
        for (const Box& k : kept)
          if (Suppresses(bx[i], k, iou)) {
            ok = false;
            break;
          }
        if (!ok) continue;
        kept.push_back(bx[i]);
        out.insert(out.end(), {b, c, i});
      }
    }
  }
  return out;
}

SpecList NmsInfer(const InferCtx& c, const NmsAttrs& a) {
  CheckInputs(c, a);
  std::vector<Tensor> in;
  for (int i = 0; i < c.num_inputs(); ++i) in.push_back(c.has_input(i) ? c.value(i) : Tensor());
  return {{DType::kInt64, {static_cast<int64_t>(Select(in, a).size() / 3), 3}}};
}

void NmsForward(KernelCtx& k, const NmsAttrs& a) {
  const std::vector<int64_t> sel = Select(k.inputs, a);
  const Tensor& y = k.output(0);
  // The output was sized at inference; a replayed graph whose inputs changed
  // the selection cannot be served.
  SINGA_CHECK(static_cast<int64_t>(sel.size()) == y.numel(), ShapeError,
              "NonMaxSuppression: the inputs now select "
                  << sel.size() / 3 << " boxes, the output was sized for " << y.dim(0));
  std::copy(sel.begin(), sel.end(), y.data<int64_t>());
}

void Register(int opset) {
  OpBuilder<NmsAttrs>("NonMaxSuppression")
      .since_opset(opset)
      .inputs(
          {"boxes", "scores", "max_output_boxes_per_class?", "iou_threshold?", "score_threshold?"})
      .outputs({"selected_indices"})
      .attr("center_point_box", &NmsAttrs::center_point_box)
      .dtypes({DType::kFloat32}, {0, 1, 3, 4})
      .dtypes({DType::kInt64}, {2})
      .infer(NmsInfer)
      .kernel(NmsForward);
}

[[maybe_unused]] const bool kRegistered = [] {
  Register(10);
  Register(11);  // 11 only restated the spec's wording
  return true;
}();

}  // namespace
}  // namespace singa
