// AffineGrid: the sampling grid of an affine transform, for GridSample.
// theta [N, 2, 3] with size = [N, C, H, W] gives grid [N, H, W, 2];
// theta [N, 3, 4] with size = [N, C, D, H, W] gives grid [N, D, H, W, 3].
// grid[n, ..., :] = theta[n] @ (x, y[, z], 1), where each of x (along W),
// y (along H), z (along D) runs over its axis' normalized positions: with
// align_corners i * 2 / (L - 1) - 1 (-1 when L == 1), else (2i + 1) / L - 1.
// Backward: dtheta[n] = sum over positions of dgrid (outer) (x, y[, z], 1).
// https://onnx.ai/onnx/operators/onnx__AffineGrid.html
#include "ops/common.h"

namespace singa {
namespace {

struct AffineGridAttrs {
  int64_t align_corners = 0;
};

// The spatial sizes (D, H, W or H, W) from `size`, checked against theta.
std::vector<int64_t> Spatial(const InferCtx& c) {
  const std::vector<int64_t> size = ops::ReadInts(c, 1);
  const Shape& th = c.shape(0);
  SINGA_CHECK(size.size() == 4 || size.size() == 5, ShapeError,
              c.where() << ": size must have 4 (2-D) or 5 (3-D) values, got "
                        << ToString(Shape(size)) << " (" << c.inputs_string() << ")");
  const int64_t nd = static_cast<int64_t>(size.size()) - 2;
  SINGA_CHECK(th.size() == 3 && th[0] == size[0] && th[1] == nd && th[2] == nd + 1, ShapeError,
              c.where() << ": theta must be [" << size[0] << ", " << nd << ", " << nd + 1
                        << "] for size " << ToString(Shape(size)) << " (" << c.inputs_string()
                        << ")");
  for (int64_t v : size)
    SINGA_CHECK(v >= 0, ShapeError,
                c.where() << ": size has a negative value (" << ToString(Shape(size)) << ")");
  return {size.begin() + 2, size.end()};
}

SpecList Infer(const InferCtx& c, const AffineGridAttrs&) {
  const std::vector<int64_t> sp = Spatial(c);
  Shape g = {c.shape(0)[0]};
  g.insert(g.end(), sp.begin(), sp.end());
  g.push_back(static_cast<int64_t>(sp.size()));
  return {{c.dtype(0), g}};
}

double Position(int64_t i, int64_t len, bool align) {
  if (align) return len == 1 ? -1.0 : static_cast<double>(i) * 2.0 / (len - 1) - 1.0;
  return (2.0 * i + 1.0) / len - 1.0;
}

// The homogeneous base coordinates (x, y[, z], 1) of every position, in the
// grid's row-major order: [positions, nd + 1].
std::vector<double> Base(const std::vector<int64_t>& sp, bool align) {
  const int64_t nd = static_cast<int64_t>(sp.size());
  int64_t points = 1;
  for (int64_t v : sp) points *= v;
  std::vector<double> base(points * (nd + 1));
  for (int64_t p = 0; p < points; ++p) {
    int64_t rest = p;
    // Axis nd-1 (W) is x, nd-2 (H) is y, nd-3 (D) is z.
    for (int64_t axis = nd - 1; axis >= 0; --axis) {
      const int64_t i = rest % sp[axis];
      rest /= sp[axis];
      base[p * (nd + 1) + (nd - 1 - axis)] = Position(i, sp[axis], align);
    }
    base[p * (nd + 1) + nd] = 1.0;
  }
  return base;
}

void Forward(KernelCtx& k, const AffineGridAttrs& a) {
  const Tensor& g = k.output(0);
  if (g.empty()) return;
  const int64_t nd = g.ndim() - 2, n_batch = g.dim(0);
  const std::vector<int64_t> sp(g.shape().begin() + 1, g.shape().end() - 1);
  const std::vector<double> base = Base(sp, a.align_corners != 0);
  const int64_t points = static_cast<int64_t>(base.size()) / (nd + 1);
  const std::vector<double> theta = k.input(0).ToVector<double>();
  VisitFloat(g.dtype(), [&]<class T>(Tag<T>) {
    T* pg = g.data<T>();
    ParallelFor(0, n_batch * points, 1024, [&](int64_t lo, int64_t hi) {
      for (int64_t np = lo; np < hi; ++np) {
        const int64_t n = np / points, p = np % points;
        const double* th = theta.data() + n * nd * (nd + 1);
        const double* b = base.data() + p * (nd + 1);
        for (int64_t r = 0; r < nd; ++r) {
          double v = 0;
          for (int64_t j = 0; j <= nd; ++j) v += th[r * (nd + 1) + j] * b[j];
          pg[np * nd + r] = static_cast<T>(v);
        }
      }
    });
  });
}

// dtheta[n] = dgrid[n]^T [points, nd] @ base [points, nd + 1], with framework ops.
TensorList Backward(const GradCtx& g, const AffineGridAttrs& a) {
  const Tensor& dgrid = g.grad_output(0);
  const Tensor& theta = g.input(0);
  const int64_t n_batch = theta.dim(0), nd = theta.dim(1);
  const std::vector<int64_t> sp(dgrid.shape().begin() + 1, dgrid.shape().end() - 1);
  const std::vector<double> base = Base(sp, a.align_corners != 0);
  const int64_t points = static_cast<int64_t>(base.size()) / (nd + 1);
  const Tensor b =
      Tensor::FromVector<double>({points, nd + 1}, base, theta.device()).AsType(theta.dtype());
  const Tensor dg = dgrid.Reshape({n_batch, points, nd});
  const Tensor dgt = Call1("Transpose", {dg}, {{"perm", std::vector<int64_t>{0, 2, 1}}});
  TensorList d(g.num_inputs());
  d[0] = Call1("MatMul", {dgt, b});
  return d;
}

}  // namespace

SINGA_REGISTER_OP(AffineGrid, AffineGridAttrs)
    .since_opset(20)
    .inputs({"theta", "size"})
    .outputs({"grid"})
    .attr("align_corners", &AffineGridAttrs::align_corners)
    .dtypes(dtypes::kFloats, {0})
    .dtypes({DType::kInt64}, {1})
    .infer(Infer)
    .kernel(Forward)
    .backward(Backward);

}  // namespace singa
