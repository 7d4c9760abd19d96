// DFT and STFT: discrete Fourier transforms of real ([..., 1]) or complex
// ([..., 2], real and imaginary interleaved) signals.
//   DFT: along one axis, zero-padded or truncated to dft_length; forward,
//        inverse (scaled by 1/n), one-sided forward (the n/2+1 unique bins of
//        a real signal) and one-sided inverse (a real signal from a
//        Hermitian half spectrum, numpy's irfft).
//   STFT: one-sided or full DFTs of the windowed frames of [batch, length, c].
// Computed in double. The fast kernel runs a radix-2 FFT when the length is a
// power of two and the direct sum (twiddles from one table) otherwise; the
// reference kernel always sums directly.
// https://onnx.ai/onnx/operators/onnx__DFT.html
// https://onnx.ai/onnx/operators/onnx__STFT.html
#include <complex>
#include <numbers>

#include "ops/common.h"

namespace singa {
namespace {

using Complex = std::complex<double>;

// Transforms `line` (length n) in place: X[k] = sum_j x[j] e^{-+2 pi i jk/n},
// divided by n when inverse.
void Transform(std::vector<Complex>& line, bool inverse, bool fast) {
  const size_t n = line.size();
  if (n == 0) return;
  const double sign = inverse ? 1.0 : -1.0;
  if (fast && (n & (n - 1)) == 0) {
    for (size_t i = 1, j = 0; i < n; ++i) {  // bit-reversal permutation
      size_t bit = n >> 1;
      for (; j & bit; bit >>= 1) j ^= bit;
      j ^= bit;
      if (i < j) std::swap(line[i], line[j]);
    }
    for (size_t len = 2; len <= n; len <<= 1) {
      const double ang = sign * 2 * std::numbers::pi / static_cast<double>(len);
      for (size_t i = 0; i < n; i += len)
        for (size_t k = 0; k < len / 2; ++k) {
          const Complex w = std::polar(1.0, ang * static_cast<double>(k));
          const Complex u = line[i + k], v = line[i + k + len / 2] * w;
          line[i + k] = u + v;
          line[i + k + len / 2] = u - v;
        }
    }
  } else {
    std::vector<Complex> tw(n), out(n);
    for (size_t k = 0; k < n; ++k)
      tw[k] = std::polar(
          1.0, sign * 2 * std::numbers::pi * static_cast<double>(k) / static_cast<double>(n));
    for (size_t k = 0; k < n; ++k) {
      Complex s = 0;
      for (size_t j = 0; j < n; ++j) s += line[j] * tw[(j * k) % n];
      out[k] = s;
    }
    line.swap(out);
  }
  if (inverse)
    for (Complex& v : line) v /= static_cast<double>(n);
}

// Reads a scalar (or one-element) int input.
int64_t ReadScalar(const Tensor& t, const std::string& where, const char* what) {
  SINGA_CHECK(t.numel() == 1 && (t.dtype() == DType::kInt64 || t.dtype() == DType::kInt32),
              ShapeError, where << ": " << what << " must be an int scalar, got " << t.ToString());
  return t.ToVector<int64_t>()[0];
}

// ---- DFT ------------------------------------------------------------------------

struct DftAttrs {
  int64_t axis = 1;  // opset 17 (an input from 20 on)
  bool inverse = false;
  bool onesided = false;
};

struct DftPlan {
  int64_t axis, n;  // signal axis in the input, transform length
  Shape out;
};

DftPlan Plan(const Shape& x, std::optional<int64_t> length, int64_t axis_in, const DftAttrs& a,
             const std::string& where, const std::string& inputs) {
  const int64_t rank = static_cast<int64_t>(x.size());
  SINGA_CHECK(
      rank >= 2 && (x.back() == 1 || x.back() == 2), ShapeError,
      where << ": the input must be [..., n, 1] (real) or [..., n, 2] (complex), got " << inputs);
  const int64_t axis = axis_in < 0 ? axis_in + rank : axis_in;
  SINGA_CHECK(axis >= 0 && axis < rank - 1, ShapeError,
              where << ": axis " << axis_in << " is out of range for " << inputs);
  SINGA_CHECK(!(a.onesided && !a.inverse && x.back() == 2), ShapeError,
              where << ": a one-sided forward DFT needs a real input, got " << inputs);
  const int64_t n = length ? *length : (a.inverse && a.onesided ? 2 * (x[axis] - 1) : x[axis]);
  SINGA_CHECK(n >= 1, ShapeError, where << ": dft_length must be >= 1, got " << n);
  Shape out = x;
  if (a.inverse && a.onesided) {
    out[axis] = n;
    out.back() = 1;
  } else {
    out[axis] = a.onesided ? n / 2 + 1 : n;
    out.back() = 2;
  }
  return {axis, n, out};
}

std::optional<int64_t> LengthInput(std::span<const Tensor> in, const std::string& where) {
  if (in.size() > 1 && in[1].defined()) return ReadScalar(in[1], where, "dft_length");
  return std::nullopt;
}

int64_t AxisInput(std::span<const Tensor> in, const DftAttrs& a, int opset,
                  const std::string& where) {
  if (opset < 20) return a.axis;
  if (in.size() > 2 && in[2].defined()) return ReadScalar(in[2], where, "axis");
  return -2;
}

SpecList DftInfer(const InferCtx& c, const DftAttrs& a, int opset) {
  // Reads dft_length and axis.
  std::vector<Tensor> in;
  for (int i = 0; i < c.num_inputs(); ++i)
    in.push_back(!c.has_input(i) ? Tensor() : i == 0 ? c.input(i) : c.value(i));
  const DftPlan p = Plan(c.shape(0), LengthInput(in, c.where()), AxisInput(in, a, opset, c.where()),
                         a, c.where(), c.inputs_string());
  return {{c.dtype(0), p.out}};
}

template <int kOpset, bool kFast>
void DftForward(KernelCtx& k, const DftAttrs& a) {
  const DftPlan p = Plan(k.input(0).shape(), LengthInput(k.inputs, "DFT"),
                         AxisInput(k.inputs, a, kOpset, "DFT"), a, "DFT", "");
  const Tensor x = k.input(0).AsType(DType::kFloat64).Contiguous();
  const Shape& xs = x.shape();
  const int64_t comp = xs.back(), len = xs[p.axis], n = p.n;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < p.axis; ++d) outer *= xs[d];
  for (size_t d = p.axis + 1; d + 1 < xs.size(); ++d) inner *= xs[d];
  const int64_t out_len = p.out[p.axis], out_comp = p.out.back();
  Tensor y(p.out, DType::kFloat64);
  const double* px = x.data<double>();
  double* py = y.data<double>();
  const bool irfft = a.inverse && a.onesided;
  std::vector<Complex> line(n);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t j) {
        const double* e = px + ((o * len + j) * inner + i) * comp;
        return Complex(e[0], comp == 2 ? e[1] : 0.0);
      };
      std::fill(line.begin(), line.end(), Complex(0));
      if (irfft) {
        // The Hermitian spectrum from its first n/2+1 bins; the imaginary
        // parts of the DC (and even n's Nyquist) bin do not exist in it.
        for (int64_t j = 0; j <= n / 2 && j < len; ++j) {
          Complex v = at(j);
          if (j == 0 || 2 * j == n) v = Complex(v.real(), 0);
          line[j] = v;
          if (j > 0) line[n - j] = std::conj(v);
        }
      } else {
        for (int64_t j = 0; j < std::min(len, n); ++j) line[j] = at(j);
      }
      Transform(line, a.inverse, kFast);
      for (int64_t j = 0; j < out_len; ++j) {
        double* e = py + ((o * out_len + j) * inner + i) * out_comp;
        e[0] = line[j].real();
        if (out_comp == 2) e[1] = line[j].imag();
      }
    }
  cpu::ConvertCopy(y, k.output(0));
}

// ---- STFT -----------------------------------------------------------------------

struct StftAttrs {
  bool onesided = true;
};

struct StftPlan {
  int64_t step, frame_length, frames;
  Shape out;
};

StftPlan PlanStft(std::span<const Tensor> in, const StftAttrs& a, const std::string& where,
                  const std::string& inputs) {
  const Shape& x = in[0].shape();
  SINGA_CHECK(x.size() == 3 && (x[2] == 1 || x[2] == 2), ShapeError,
              where << ": the signal must be [batch, length, 1 or 2], got " << inputs);
  SINGA_CHECK(!(a.onesided && x[2] == 2), ShapeError,
              where << ": a one-sided STFT needs a real signal, got " << inputs);
  StftPlan p;
  p.step = ReadScalar(in[1], where, "frame_step");
  SINGA_CHECK(p.step >= 1, ShapeError, where << ": frame_step must be >= 1, got " << p.step);
  const bool has_window = in.size() > 2 && in[2].defined();
  if (has_window)
    SINGA_CHECK(in[2].ndim() == 1, ShapeError, where << ": window must be 1-D, got " << inputs);
  if (in.size() > 3 && in[3].defined()) {
    p.frame_length = ReadScalar(in[3], where, "frame_length");
    SINGA_CHECK(!has_window || in[2].shape()[0] == p.frame_length, ShapeError,
                where << ": window and frame_length differ (" << inputs << ")");
  } else {
    SINGA_CHECK(has_window, ShapeError,
                where << ": needs a window or a frame_length (" << inputs << ")");
    p.frame_length = in[2].shape()[0];
  }
  SINGA_CHECK(p.frame_length >= 1 && p.frame_length <= x[1], ShapeError,
              where << ": frame_length " << p.frame_length << " must be in [1, " << x[1] << "] ("
                    << inputs << ")");
  p.frames = 1 + (x[1] - p.frame_length) / p.step;
  p.out = {x[0], p.frames, a.onesided ? p.frame_length / 2 + 1 : p.frame_length, 2};
  return p;
}

SpecList StftInfer(const InferCtx& c, const StftAttrs& a) {
  // Reads frame_step and frame_length.
  std::vector<Tensor> in;
  for (int i = 0; i < c.num_inputs(); ++i)
    in.push_back(!c.has_input(i) ? Tensor() : i == 1 || i == 3 ? c.value(i) : c.input(i));
  return {{c.dtype(0), PlanStft(in, a, c.where(), c.inputs_string()).out}};
}

template <bool kFast>
void StftForward(KernelCtx& k, const StftAttrs& a) {
  const StftPlan p = PlanStft(k.inputs, a, "STFT", "");
  const Tensor x = k.input(0).AsType(DType::kFloat64).Contiguous();
  const int64_t batch = x.shape()[0], len = x.shape()[1], comp = x.shape()[2];
  std::vector<double> window(p.frame_length, 1.0);
  if (k.has_input(2)) window = k.input(2).AsType(DType::kFloat64).ToVector<double>();
  const int64_t bins = p.out[2];
  Tensor y(p.out, DType::kFloat64);
  const double* px = x.data<double>();
  double* py = y.data<double>();
  std::vector<Complex> line(p.frame_length);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t f = 0; f < p.frames; ++f) {
      for (int64_t j = 0; j < p.frame_length; ++j) {
        const double* e = px + (b * len + f * p.step + j) * comp;
        line[j] = Complex(e[0], comp == 2 ? e[1] : 0.0) * window[j];
      }
      Transform(line, false, kFast);
      double* out = py + ((b * p.frames + f) * bins) * 2;
      for (int64_t j = 0; j < bins; ++j) {
        out[2 * j] = line[j].real();
        out[2 * j + 1] = line[j].imag();
      }
    }
  cpu::ConvertCopy(y, k.output(0));
}

template <int kOpset>
void RegisterDft() {
  OpBuilder<DftAttrs> b("DFT");
  b.since_opset(kOpset);
  if (kOpset >= 20) {
    b.inputs({"input", "dft_length?", "axis?"});
  } else {
    b.inputs({"input", "dft_length?"}).attr("axis", &DftAttrs::axis);
  }
  b.outputs({"output"})
      .attr("inverse", &DftAttrs::inverse)
      .attr("onesided", &DftAttrs::onesided)
      .dtypes(dtypes::kFloats, {0})
      .dtypes({DType::kInt32, DType::kInt64}, {1})
      .infer([](const InferCtx& c, const DftAttrs& a) { return DftInfer(c, a, kOpset); })
      .kernel(DftForward<kOpset, true>)
      .reference(DftForward<kOpset, false>);
  if (kOpset >= 20) b.dtypes({DType::kInt64}, {2});
}

[[maybe_unused]] const bool kRegistered = [] {
  RegisterDft<17>();
  RegisterDft<20>();  // axis became an input (default -2); inverse one-sided is irfft
  return true;
}();

}  // namespace

SINGA_REGISTER_OP(STFT, StftAttrs)
    .since_opset(17)
    .inputs({"signal", "frame_step", "window?", "frame_length?"})
    .outputs({"output"})
    .attr("onesided", &StftAttrs::onesided)
    .dtypes(dtypes::kFloats, {0, 2})
    .dtypes({DType::kInt32, DType::kInt64}, {1, 3})
    .infer(StftInfer)
    .kernel(StftForward<true>)
    .reference(StftForward<false>);

}  // namespace singa
