// Dropout: in inference (training_mode false or absent, and always in opsets
// 7 and 10, which have no training input) output = data and mask is all
// true. In training each element is kept with probability 1 - ratio and
// scaled by 1 / (1 - ratio); mask marks the kept ones.
// https://onnx.ai/onnx/operators/onnx__Dropout.html
//
// NOTE: the mask is drawn inside the kernel from the device's generator
// (Device::rng()), so a captured graph draws a new mask on every replay. With
// the `seed` attribute each execution draws from a generator seeded with it
// instead: the same seed gives the same mask, every time.
// The backward needs the mask, so it is registered as a backward output: the
// dispatcher computes and saves it whenever the op is recorded for autograd.
#include <cmath>
#include <optional>
#include <random>

#include "kernels/cpu/float8.h"
#include "ops/grad_util.h"
#include "ops/movement.h"
#include "singa/ops/export_ctx.h"

namespace singa {
namespace {

struct Dropout7Attrs {
  float ratio = 0.5f;
};
struct Dropout12Attrs {
  std::optional<int64_t> seed;
};

const std::vector<DType> kFloats3 = {DType::kFloat16, DType::kFloat32, DType::kFloat64};
const std::vector<DType>& FloatsAndFloat8() {
  static const std::vector<DType> v = [] {
    std::vector<DType> t = dtypes::kFloats;
    for (DType d :
         {DType::kFloat8E4M3FN, DType::kFloat8E4M3FNUZ, DType::kFloat8E5M2, DType::kFloat8E5M2FNUZ})
      t.push_back(d);
    return t;
  }();
  return v;
}

// The value of a one-element float (or float8) tensor, read directly: kernels
// must not launch other ops.
double ScalarValue(const Tensor& t) {
  if (cpu::IsSmallFloat(t.dtype()))
    return cpu::DecodeFloat8(t.dtype(), *static_cast<const uint8_t*>(t.raw_data()));
  return VisitFloat(
      t.dtype(), [&]<class T>(Tag<T>) { return static_cast<double>(*t.data<T>()); }, "Dropout");
}

// Checks that ratio and training_mode (when given) are scalars and ratio is
// in [0, 1).
void CheckScalars(const InferCtx& c) {
  for (int i : {1, 2}) {
    if (!c.has_input(i)) continue;
    SINGA_CHECK(c.input(i).numel() == 1, ShapeError,
                c.where() << ": input " << i << " must be a scalar (" << c.inputs_string() << ")");
  }
  if (c.has_input(1)) {
    const double r = ScalarValue(c.value(1));
    SINGA_CHECK(r >= 0 && r < 1, ShapeError,
                c.where() << ": ratio " << r << " is outside [0, 1) (" << c.inputs_string() << ")");
  }
}

SpecList Infer12(const InferCtx& c, const Dropout12Attrs&) {
  CheckScalars(c);
  return {{c.dtype(0), c.shape(0)}, {DType::kBool, c.shape(0)}};
}
SpecList Infer10(const InferCtx& c, const Dropout7Attrs& a) {
  SINGA_CHECK(a.ratio >= 0 && a.ratio < 1, ShapeError,
              c.where() << ": ratio " << a.ratio << " is outside [0, 1)");
  return {{c.dtype(0), c.shape(0)}, {DType::kBool, c.shape(0)}};
}
// Opset 7's mask has the data's type.
SpecList Infer7(const InferCtx& c, const Dropout7Attrs& a) {
  SpecList s = Infer10(c, a);
  s[1].dtype = c.dtype(0);
  return s;
}

// Inference: output = data, mask = all true (ones).
void Identity(KernelCtx& k) {
  cpu::ConvertCopy(k.input(0), k.output(0));
  if (k.num_outputs() > 1) {
    const Tensor& m = k.output(1);
    if (m.dtype() == DType::kBool)
      std::fill_n(m.data<bool>(), m.numel(), true);
    else
      VisitFloat(
          m.dtype(), [&]<class T>(Tag<T>) { std::fill_n(m.data<T>(), m.numel(), T(1)); },
          "Dropout");
  }
}

// Training: draws the mask (sequentially, so it does not depend on the
// thread count) and applies it in parallel.
void Train(KernelCtx& k, double ratio, std::optional<int64_t> seed) {
  const Tensor x = k.input(0).Contiguous();
  const Tensor& y = k.output(0);
  const int64_t n = x.numel();
  Tensor mask = k.num_outputs() > 1 ? k.output(1) : Tensor({n}, DType::kBool);
  bool* m = mask.data<bool>();
  {
    std::optional<std::mt19937_64> own;
    if (seed) own.emplace(static_cast<uint64_t>(*seed));
    std::mt19937_64& rng = own ? *own : x.device().rng();
    // 53 random bits as a uniform double in [0, 1): kept when >= ratio.
    for (int64_t i = 0; i < n; ++i) m[i] = static_cast<double>(rng() >> 11) * 0x1.0p-53 >= ratio;
  }
  const double scale = 1.0 / (1.0 - ratio);
  const DType dt = x.dtype();
  if (cpu::IsSmallFloat(dt)) {
    const uint8_t* px = static_cast<const uint8_t*>(x.raw_data());
    uint8_t* py = static_cast<uint8_t*>(y.raw_data());
    const uint8_t zero = cpu::EncodeFloat8(dt, 0.0, false);
    ParallelFor(0, n, cpu::kElementwiseGrain, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i)
        py[i] = m[i] ? cpu::EncodeFloat8(dt, cpu::DecodeFloat8(dt, px[i]) * scale, false) : zero;
    });
    return;
  }
  VisitFloat(
      dt,
      [&]<class T>(Tag<T>) {
        using A = Acc<T>;
        const T* px = x.data<T>();
        T* py = y.data<T>();
        const A s = static_cast<A>(scale);
        ParallelFor(0, n, cpu::kElementwiseGrain, [&](int64_t lo, int64_t hi) {
          for (int64_t i = lo; i < hi; ++i)
            py[i] = m[i] ? static_cast<T>(static_cast<A>(px[i]) * s) : T(0);
        });
      },
      "Dropout");
}

bool Training(const KernelCtx& k) {
  return k.has_input(2) && *static_cast<const bool*>(k.input(2).raw_data());
}
double Ratio(const KernelCtx& k) { return k.has_input(1) ? ScalarValue(k.input(1)) : 0.5; }

void Forward12(KernelCtx& k, const Dropout12Attrs& a) {
  if (!Training(k) || k.input(0).numel() == 0) return Identity(k);
  Train(k, Ratio(k), a.seed);
}
void Forward7(KernelCtx& k, const Dropout7Attrs&) { Identity(k); }

// dX = dY * mask * scale, the mask read from the saved output 1; in
// inference dX = dY. ratio and training_mode get no gradient.
TensorList Backward12(const GradCtx& g, const Dropout12Attrs&) {
  TensorList d(g.num_inputs());
  const Tensor& dy = g.grad_output(0);
  if (!g.needs_grad(0) || !dy.defined()) return d;
  const bool training = g.has_input(2) && g.input(2).Item<bool>();
  if (!training) {
    d[0] = dy;
    return d;
  }
  const double ratio = g.has_input(1) ? ScalarValue(g.input(1).Contiguous()) : 0.5;
  d[0] = grad::Masked(g.output(1), grad::Mul(dy, grad::Scalar(1.0 / (1.0 - ratio), dy)));
  return d;
}
TensorList Backward7(const GradCtx& g, const Dropout7Attrs&) { return {g.grad_output(0)}; }

// Exported in inference form unless the export keeps training ops: without
// the training_mode input Dropout passes its data through.
void Export12(ExportCtx& c, const Dropout12Attrs&) {
  if (c.training() || c.num_inputs() < 3 || c.input_name(2).empty()) return c.AddDefault();
  std::vector<std::string> out;
  for (int i = 0; i < c.num_outputs(); ++i) out.push_back(c.output_name(i));
  c.AddNode("Dropout", {c.input_name(0), c.input_name(1)}, out, c.attrs());
}

}  // namespace

// 7: ratio an attribute, mask an optional output; 10 made the mask bool.
[[maybe_unused]] static const bool kDropout7 =
    RegisterVersions<Dropout7Attrs>("Dropout", {7, 10}, [](OpBuilder<Dropout7Attrs>& b, int v) {
      b.inputs({"data"})
          .outputs({"output", "mask?"})
          .attr("ratio", &Dropout7Attrs::ratio)
          .dtypes(kFloats3, {0})
          .infer(v >= 10 ? Infer10 : Infer7)
          .kernel(Forward7)
          .nondeterministic()
          .backward(Backward7)
          .upgrade([](ExportCtx& c, const Dropout7Attrs& a) {  // 12: ratio an input
            if (c.opset() < 12) return AddWithInputs(c, {}, {});
            AddWithInputs(c, {c.AddScalarLike(a.ratio, 0, "ratio")}, {"ratio"});
          });
    });
// 12: ratio and training_mode inputs; 13 added bfloat16 data, 22 the float8
// types (data and ratio) and bfloat16 ratios.
[[maybe_unused]] static const bool kDropout12 = RegisterVersions<Dropout12Attrs>(
    "Dropout", {12, 13, 22}, [](OpBuilder<Dropout12Attrs>& b, int v) {
      b.inputs({"data", "ratio?", "training_mode?"})
          .outputs({"output", "mask?"})
          .attr("seed", &Dropout12Attrs::seed)
          .dtypes(v >= 22   ? FloatsAndFloat8()
                  : v >= 13 ? dtypes::kFloats
                            : kFloats3,
                  {0})
          .dtypes(v >= 22 ? FloatsAndFloat8() : kFloats3, {1})
          .dtypes({DType::kBool}, {2})
          .infer(Infer12)
          .kernel(Forward12)
          .nondeterministic()
          .backward_outputs(2)
          .backward(Backward12)
          .to_onnx(Export12);
    });

}  // namespace singa
