// Pad: pads (or, with negative pads, crops) every axis by pads[i] before and
// pads[rank + i] after, with a constant, or by reflecting, repeating the edge
// or wrapping around. Opset 2 has pads and the constant (`value`) as attributes;
// opset 11 moved them to inputs; opset 18
// added `axes` (pads then cover only those axes); opset 19 added wrap mode.
// https://onnx.ai/onnx/operators/onnx__Pad.html
#include "ops/movement.h"
#include "ops/scatter_grad.h"

namespace singa {
namespace {

struct PadAttrs {
  std::string mode = "constant";
};
// Opset 2: pads and the constant are attributes.
struct Pad2Attrs {
  std::string mode = "constant";
  std::vector<int64_t> pads;
  float value = 0.0f;
};

// Pads before and after each axis (0 on axes not listed).
struct Pads {
  std::vector<int64_t> begin, end;
};

Pads Expand(int64_t rank, const std::vector<int64_t>& pads, const std::vector<int64_t>& axes) {
  Pads p{std::vector<int64_t>(rank, 0), std::vector<int64_t>(rank, 0)};
  for (size_t i = 0; i < axes.size(); ++i) {
    p.begin[axes[i]] = pads[i];
    p.end[axes[i]] = pads[axes.size() + i];
  }
  return p;
}

std::vector<int64_t> AllAxes(int64_t rank) {
  std::vector<int64_t> axes(rank);
  for (int64_t d = 0; d < rank; ++d) axes[d] = d;
  return axes;
}

// For the modes other than constant: the element of x that every output
// index of each axis reads.
std::vector<std::vector<int64_t>> SourceMaps(const std::string& mode, const Shape& in,
                                             const Shape& out, const Pads& p) {
  std::vector<std::vector<int64_t>> maps(in.size());
  for (size_t d = 0; d < in.size(); ++d) {
    const int64_t n = in[d];
    maps[d].resize(out[d]);
    for (int64_t o = 0; o < out[d]; ++o) {
      const int64_t i = o - p.begin[d];  // position in x's coordinates
      int64_t src;
      if (mode == "edge") {
        src = std::clamp<int64_t>(i, 0, n - 1);
      } else if (mode == "wrap") {
        src = ((i % n) + n) % n;
      } else if (n == 1) {  // reflect
        src = 0;
      } else {
        const int64_t period = 2 * (n - 1);
        const int64_t m = ((i % period) + period) % period;
        src = m < n ? m : period - m;
      }
      maps[d][o] = src;
    }
  }
  return maps;
}

SpecList InferPads(const InferCtx& c, const std::string& mode, bool wrap_ok,
                   const std::vector<int64_t>& pads, const std::vector<int64_t>& axes) {
  const int64_t rank = c.rank(0);
  const Shape& in = c.shape(0);
  SINGA_CHECK(
      mode == "constant" || mode == "reflect" || mode == "edge" || (wrap_ok && mode == "wrap"),
      ShapeError,
      c.where() << ": mode '" << mode << "' is not one of constant, reflect, edge"
                << (wrap_ok ? ", wrap" : "") << " (" << c.inputs_string() << ")");
  SINGA_CHECK(pads.size() == 2 * axes.size(), ShapeError,
              c.where() << ": pads " << ToString(pads) << " must have 2 entries per padded axis ("
                        << axes.size() << " axes; " << c.inputs_string() << ")");
  Pads p = Expand(rank, pads, axes);
  Shape out(rank);
  for (int64_t d = 0; d < rank; ++d) {
    out[d] = in[d] + p.begin[d] + p.end[d];
    SINGA_CHECK(out[d] >= 0, ShapeError,
                c.where() << ": pads " << ToString(pads) << " crop axis " << d << " below size 0 ("
                          << c.inputs_string() << ")");
    SINGA_CHECK(mode == "constant" || in[d] > 0 || out[d] == 0, ShapeError,
                c.where() << ": cannot pad the empty axis " << d << " in " << mode << " mode ("
                          << c.inputs_string() << ")");
  }
  return {{c.dtype(0), out}};
}

template <int kVersion>
SpecList Infer(const InferCtx& c, const PadAttrs& a) {
  const int64_t rank = c.rank(0);
  std::vector<int64_t> axes = AllAxes(rank);
  if (c.has_input(3)) {
    axes.clear();
    for (int64_t v : ops::ReadInts(c, 3)) axes.push_back(ops::CheckAxis(c, v, rank));
    ops::CheckDistinctAxes(c, axes);
  }
  if (c.has_input(2))
    SINGA_CHECK(
        c.input(2).numel() == 1, ShapeError,
        c.where() << ": constant_value must have one element (" << c.inputs_string() << ")");
  return InferPads(c, a.mode, kVersion >= 19, ops::ReadInts(c, 1), axes);
}

// The value padded with: constant_value, else 0 ("" for strings), as a 0-d tensor.
Tensor PadValue(const KernelCtx& k) {
  if (k.has_input(2)) return k.input(2).Reshape({});
  const DType dt = k.input(0).dtype();
  if (dt == DType::kString) return Tensor::FromVector<std::string>({}, {std::string()});
  // Zero bits are zero in every numeric format (float8, int4, ... included)
  // but float8e8m0, which has no zero: there they are 2^-127, its smallest.
  Tensor z({}, dt);
  std::memset(z.raw_data(), 0, SizeOf(dt));
  return z;
}

// Constant mode: y, filled with the value, gets the part of x that survives
// (negative pads crop) in its place. kCopy: cpu::ConvertCopy or cuda::Copy.
template <auto kCopy>
void PadConstant(const Tensor& x, const Tensor& y, const Pads& p, const Tensor& value) {
  if (y.numel() == 0) return;
  kCopy(value, y);
  Tensor src = x, dst = y;
  for (int64_t d = 0; d < x.ndim(); ++d) {
    const int64_t lo = std::max<int64_t>(0, -p.begin[d]);
    const int64_t hi = x.shape()[d] - std::max<int64_t>(0, -p.end[d]);
    if (hi <= lo) return;  // nothing of x is left
    src = src.Slice(d, lo, hi);
    const int64_t at = std::max<int64_t>(0, p.begin[d]);
    dst = dst.Slice(d, at, at + (hi - lo));
  }
  kCopy(src, dst);
}

void PadInto(const Tensor& x, const Tensor& y, const std::string& mode, const Pads& p,
             const Tensor& value) {
  if (mode == "constant") return PadConstant<cpu::ConvertCopy>(x, y, p, value);
  if (y.numel() == 0) return;
  ops::GatherAxes(x, y, SourceMaps(mode, x.shape(), y.shape(), p), "Pad");
}

// The pads of a kernel call (inputs pads and axes).
Pads KernelPads(const KernelCtx& k) {
  const int64_t rank = k.input(0).ndim();
  std::vector<int64_t> axes = AllAxes(rank);
  if (k.has_input(3)) {
    axes = k.input(3).ToVector<int64_t>();
    for (int64_t& d : axes)
      if (d < 0) d += rank;
  }
  return Expand(rank, k.input(1).ToVector<int64_t>(), axes);
}

void Forward(KernelCtx& k, const PadAttrs& a) {
  PadInto(k.input(0), k.output(0), a.mode, KernelPads(k), PadValue(k));
}

#if SINGA_CUDA
// Constant mode on the GPU: constant_value (or a zero) broadcast by cuda::Copy.
void ForwardCuda(KernelCtx& k, const PadAttrs&) {
  const Tensor& x = k.input(0);
  PadConstant<cuda::Copy>(
      x, k.output(0), KernelPads(k),
      k.has_input(2) ? k.input(2).Reshape({}) : Tensor::Zeros({}, x.dtype(), x.device()));
}
bool CudaTakes(const InferCtx&, const PadAttrs& a) { return a.mode == "constant"; }
#endif

// Input axes and pads of a call (the saved inputs of a recorded one).
Pads CallPads(const Tensor& x, const Tensor& pads, const Tensor* axes_input) {
  const int64_t rank = x.ndim();
  std::vector<int64_t> axes = AllAxes(rank);
  if (axes_input && axes_input->defined()) {
    axes = axes_input->ToVector<int64_t>();
    for (int64_t& d : axes)
      if (d < 0) d += rank;
  }
  return Expand(rank, pads.ToVector<int64_t>(), axes);
}

// Constant mode: the data's gradient is the output's gradient padded by the
// negated pads (cropping what was padded, zero-filling what was cropped); the
// constant's is the rest of the output's gradient. Other modes add the output's
// gradient back at its source positions, one axis at a time.
Tensor DataGrad(const Tensor& x, const Tensor& dy, const std::string& mode, const Pads& p) {
  const int64_t rank = x.ndim();
  if (mode == "constant") {
    std::vector<int64_t> neg;
    for (int64_t v : p.begin) neg.push_back(-v);
    for (int64_t v : p.end) neg.push_back(-v);
    const Tensor pads = Tensor::FromVector<int64_t>({2 * rank}, neg);
    return Call1("Pad", {dy, pads});
  }
  const auto maps = SourceMaps(mode, x.shape(), dy.shape(), p);
  Tensor dx = dy;
  for (int64_t axis = 0; axis < rank; ++axis)
    if (p.begin[axis] != 0 || p.end[axis] != 0)
      dx = ops::IndexAddAlong(dx, axis, maps[axis], x.shape()[axis]);
  return dx;
}

TensorList Backward(const GradCtx& g, const PadAttrs& a) {
  const Tensor& x = g.input(0);
  const Tensor& dy = g.grad_output(0);
  const Tensor* axes = g.has_input(3) ? &g.input(3) : nullptr;
  TensorList d(g.num_inputs());
  d[0] = DataGrad(x, dy, a.mode, CallPads(x, g.input(1), axes));
  if (a.mode == "constant") {
    if (g.needs_grad(2)) {
      const Tensor rest = Call1(
          "Sub", {Call1("ReduceSum", {dy}).Reshape({}), Call1("ReduceSum", {d[0]}).Reshape({})});
      d[2] = rest.Reshape(g.input(2).shape());
    }
  }
  return d;
}

// Opset 2: the same padding with the pads and the constant as attributes.
SpecList Infer2(const InferCtx& c, const Pad2Attrs& a) {
  return InferPads(c, a.mode, false, a.pads, AllAxes(c.rank(0)));
}
void Forward2(KernelCtx& k, const Pad2Attrs& a) {
  const Tensor& x = k.input(0);
  Tensor value({}, x.dtype());
  cpu::ConvertCopy(Tensor::FromVector<float>({}, {a.value}), value);
  PadInto(x, k.output(0), a.mode, Expand(x.ndim(), a.pads, AllAxes(x.ndim())), value);
}
TensorList Backward2(const GradCtx& g, const Pad2Attrs& a) {
  const Tensor& x = g.input(0);
  return {DataGrad(x, g.grad_output(0), a.mode, Expand(x.ndim(), a.pads, AllAxes(x.ndim())))};
}

}  // namespace

SINGA_REGISTER_OP(Pad, Pad2Attrs)
    .since_opset(2)
    .inputs({"data"})
    .outputs({"output"})
    .attr("mode", &Pad2Attrs::mode)
    .attr("pads", &Pad2Attrs::pads, /*required=*/true)
    .attr("value", &Pad2Attrs::value)
    .dtypes(dtypes::kFloats)
    .infer(Infer2)
    .kernel(Forward2)
    .backward(Backward2)
    .upgrade([](ExportCtx& c, const Pad2Attrs& a) {  // 11: pads and the value inputs
      AddWithInputs(c, {c.AddInts(a.pads, "pads"), c.AddScalarLike(a.value, 0, "value")},
                    {"pads", "value"});
    });
// 11: pads and constant_value inputs; 18 added axes, 19 the wrap mode.
[[maybe_unused]] static const bool kPad =
    RegisterVersions<PadAttrs>("Pad", {11, 18, 19}, [](OpBuilder<PadAttrs>& b, int v) {
      b.outputs({"output"})
          .attr("mode", &PadAttrs::mode)
          .dtypes(ops::AnyDType(), {0, 2})
          .dtypes({DType::kInt64}, {1})
          .host_inputs({1, 3})
          .infer(v >= 19   ? Infer<19>
                 : v >= 18 ? Infer<18>
                           : Infer<11>)
          .kernel(Forward) SINGA_CUDA_KERNEL(ForwardCuda, ops::kCudaCopy, CudaTakes)
          .backward(Backward);
      if (v >= 18)
        b.inputs({"data", "pads", "constant_value?", "axes?"})
            .dtypes({DType::kInt32, DType::kInt64}, {3});
      else
        b.inputs({"data", "pads", "constant_value?"});
    });

}  // namespace singa
