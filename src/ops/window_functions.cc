// HannWindow, HammingWindow, BlackmanWindow (periodic or symmetric) and
// MelWeightMatrix (the triangular filter bank that maps a one-sided spectrum
// to mel bins). Values are computed in double and cast to output_datatype.
// https://onnx.ai/onnx/operators/onnx__HannWindow.html
// https://onnx.ai/onnx/operators/onnx__HammingWindow.html
// https://onnx.ai/onnx/operators/onnx__BlackmanWindow.html
// https://onnx.ai/onnx/operators/onnx__MelWeightMatrix.html
#include <cmath>
#include <numbers>

#include "ops/common.h"

namespace singa {
namespace {

struct WindowAttrs {
  DType output_datatype = DType::kFloat32;
  bool periodic = true;
};

enum class Window { kHann, kHamming, kBlackman };

int64_t ReadScalar(const Tensor& t, const std::string& where, const char* what) {
  SINGA_CHECK(t.numel() == 1 && (t.dtype() == DType::kInt64 || t.dtype() == DType::kInt32),
              ShapeError, where << ": " << what << " must be an int scalar, got " << t.ToString());
  return t.ToVector<int64_t>()[0];
}

void CheckOutputType(DType dt, const std::string& where) {
  SINGA_CHECK(IsNumeric(dt), DTypeError,
              where << ": output_datatype must be numeric, got " << Name(dt));
}

SpecList WindowInfer(const InferCtx& c, const WindowAttrs& a) {
  CheckOutputType(a.output_datatype, c.where());
  const int64_t size = ReadScalar(c.value(0), c.where(), "size");
  SINGA_CHECK(size >= 0, ShapeError, c.where() << ": size must be >= 0, got " << size);
  return {{a.output_datatype, {size}}};
}

template <Window kWindow>
void WindowForward(KernelCtx& k, const WindowAttrs& a) {
  const int64_t size = k.output(0).numel();
  // A symmetric window of one point is 1 (N - 1 = 0 would divide by zero).
  const double n1 = static_cast<double>(a.periodic ? size : size - 1);
  Tensor w({size}, DType::kFloat64);
  double* p = w.data<double>();
  const double pi = std::numbers::pi;
  for (int64_t i = 0; i < size; ++i) {
    const double x = static_cast<double>(i);
    if (n1 == 0) {
      p[i] = 1.0;
    } else if (kWindow == Window::kHann) {
      const double s = std::sin(pi * x / n1);
      p[i] = s * s;
    } else if (kWindow == Window::kHamming) {
      const double alpha = 25.0 / 46.0;  // the spec's alpha; beta = 1 - alpha
      p[i] = alpha - (1 - alpha) * std::cos(2 * pi * x / n1);
    } else {
      p[i] = 0.42 - 0.5 * std::cos(2 * pi * x / n1) + 0.08 * std::cos(4 * pi * x / n1);
    }
  }
  cpu::ConvertCopy(w, k.output(0));
}

// ---- MelWeightMatrix -------------------------------------------------------------

struct MelAttrs {
  DType output_datatype = DType::kFloat32;
};

SpecList MelInfer(const InferCtx& c, const MelAttrs& a) {
  CheckOutputType(a.output_datatype, c.where());
  const int64_t mels = ReadScalar(c.value(0), c.where(), "num_mel_bins");
  const int64_t dft = ReadScalar(c.value(1), c.where(), "dft_length");
  const int64_t rate = ReadScalar(c.value(2), c.where(), "sample_rate");
  SINGA_CHECK(mels >= 0 && dft >= 1 && rate >= 1, ShapeError,
              c.where() << ": num_mel_bins must be >= 0, dft_length and sample_rate >= 1 ("
                        << c.inputs_string() << ")");
  SINGA_CHECK(c.input(3).numel() == 1 && c.input(4).numel() == 1, ShapeError,
              c.where() << ": the edge frequencies must be scalars (" << c.inputs_string() << ")");
  return {{a.output_datatype, {dft / 2 + 1, mels}}};
}

// The spec's construction: num_mel_bins + 2 points evenly spaced in mel
// between the edges, mapped to spectrogram bins, each filter a triangle over
// three consecutive points. The mel edges are computed in the edges' dtype
// (float for the 16-bit floats), as the spec's reference does: the bin
// indices are floors, so the rounding decides them.
template <class F>
void MelCompute(KernelCtx& k, int64_t mels, int64_t dft, int64_t rate) {
  const F lower = static_cast<F>(k.input(3).AsType(DType::kFloat64).ToVector<double>()[0]);
  const F upper = static_cast<F>(k.input(4).AsType(DType::kFloat64).ToVector<double>()[0]);
  const F log10 = static_cast<F>(std::log(10.0));
  const F low_mel = F(2595) * std::log1p(lower / F(700)) / log10;
  const F high_mel = F(2595) * std::log1p(upper / F(700)) / log10;
  const F step = (high_mel - low_mel) / static_cast<F>(mels + 2);
  std::vector<int64_t> bins(mels + 2);
  for (int64_t i = 0; i < mels + 2; ++i) {
    const double mel = static_cast<double>(i) * static_cast<double>(step) + low_mel;
    const double hz = 700 * std::expm1(mel / 2595 * std::log(10.0));
    bins[i] = static_cast<int64_t>(std::floor((dft + 1) * hz / static_cast<double>(rate)));
  }
  const int64_t rows = dft / 2 + 1;
  Tensor w = Tensor::Zeros({rows, mels}, DType::kFloat64);
  double* p = w.data<double>();
  auto set = [&](int64_t j, int64_t i, double v) {
    SINGA_CHECK(
        j >= 0 && j < rows, ShapeError,
        "MelWeightMatrix: the edge frequencies map outside the " << rows << " spectrogram bins");
    p[j * mels + i] = v;
  };
  for (int64_t i = 0; i < mels; ++i) {
    const int64_t lo = bins[i], center = bins[i + 1], hi = bins[i + 2];
    if (center == lo) {
      set(center, i, 1.0);
    } else {
      for (int64_t j = lo; j <= center; ++j)
        set(j, i, static_cast<double>(j - lo) / static_cast<double>(center - lo));
    }
    for (int64_t j = center; j < hi; ++j)
      set(j, i, static_cast<double>(hi - j) / static_cast<double>(hi - center));
  }
  cpu::ConvertCopy(w, k.output(0));
}

void MelForward(KernelCtx& k, const MelAttrs&) {
  const int64_t mels = ReadScalar(k.input(0), "MelWeightMatrix", "num_mel_bins");
  const int64_t dft = ReadScalar(k.input(1), "MelWeightMatrix", "dft_length");
  const int64_t rate = ReadScalar(k.input(2), "MelWeightMatrix", "sample_rate");
  if (k.input(3).dtype() == DType::kFloat64)
    MelCompute<double>(k, mels, dft, rate);
  else
    MelCompute<float>(k, mels, dft, rate);
}

template <Window kWindow>
void RegisterWindow(const char* name) {
  OpBuilder<WindowAttrs>(name)
      .since_opset(17)
      .inputs({"size"})
      .outputs({"output"})
      .attr("output_datatype", &WindowAttrs::output_datatype)
      .attr("periodic", &WindowAttrs::periodic)
      .dtypes({DType::kInt32, DType::kInt64}, {0})
      .infer(WindowInfer)
      .kernel(WindowForward<kWindow>);
}

[[maybe_unused]] const bool kRegistered = [] {
  RegisterWindow<Window::kHann>("HannWindow");
  RegisterWindow<Window::kHamming>("HammingWindow");
  RegisterWindow<Window::kBlackman>("BlackmanWindow");
  return true;
}();

}  // namespace

SINGA_REGISTER_OP(MelWeightMatrix, MelAttrs)
    .since_opset(17)
    .inputs({"num_mel_bins", "dft_length", "sample_rate", "lower_edge_hertz", "upper_edge_hertz"})
    .outputs({"output"})
    .attr("output_datatype", &MelAttrs::output_datatype)
    .dtypes({DType::kInt32, DType::kInt64}, {0, 1, 2})
    .dtypes(dtypes::kFloats, {3, 4})
    .infer(MelInfer)
    .kernel(MelForward);

}  // namespace singa
