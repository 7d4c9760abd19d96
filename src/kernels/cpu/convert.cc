// ConvertCopy: the strided, converting copy behind Contiguous, CopyFrom,
// AsType and the Cast op. Tensor::CopyFrom and Tensor::Fill (declared in
// singa/core/tensor.h) are defined here, with the loops they run, so that the
// core includes nothing from the kernels.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include "kernels/cpu/loops.h"
#if SINGA_CUDA
#include "kernels/cuda/cuda.h"
#endif

namespace singa::cpu {

namespace {

// Numbers print as numpy's astype(str) does (the ONNX reference Cast), so a
// float reads back as the same value: "True"/"False", "nan", "inf", "-inf",
// shortest round-trip digits, positional with a ".0" for integral values when
// 1e-4 <= |x| < 1e16 (1e6 for float32 and narrower), else scientific ("1e-05").
template <class T>
std::string NumberToString(T v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v ? "True" : "False";
  } else if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, Half> ||
                       std::is_same_v<T, BFloat16>) {
    constexpr bool kDouble = std::is_same_v<T, double>;
    const double d = kDouble ? static_cast<double>(v) : static_cast<float>(v);
    if (std::isnan(d)) return "nan";
    if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
    const double a = std::fabs(d);
    const bool fixed = a == 0 || (a >= 1e-4 && a < (kDouble ? 1e16 : 1e6));
    const auto fmt = fixed ? std::chars_format::fixed : std::chars_format::scientific;
    char buf[64];
    auto [end, ec] = kDouble ? std::to_chars(buf, buf + 64, d, fmt)
                             : std::to_chars(buf, buf + 64, static_cast<float>(d), fmt);
    std::string s(buf, end);
    if (fixed && s.find('.') == std::string::npos) s += ".0";
    return s;
  } else {
    return std::to_string(v);
  }
}

template <class T>
T StringToNumber(const std::string& s) {
  if constexpr (std::is_same_v<T, bool>) {
    return !(s.empty() || s == "0" || s == "false" || s == "False");
  } else if constexpr (std::is_integral_v<T>) {
    T v{};
    std::from_chars(s.data(), s.data() + s.size(), v);
    return v;
  } else {
    // strtod understands "nan", "inf", "INF", "-INF", "1e-3".
    return ConvertValue<T>(std::strtod(s.c_str(), nullptr));
  }
}

}  // namespace

void ConvertCopy(const Tensor& src, const Tensor& dst) {
  const DType sd = src.dtype(), dd = dst.dtype();
  if (sd == DType::kString || dd == DType::kString) {
    if (sd == DType::kString && dd == DType::kString) {
      Unary<std::string, std::string>(src, dst, [](const std::string& s) { return s; });
    } else if (sd == DType::kString) {
      VisitDType(
          dd,
          [&]<class TO>(Tag<TO>) {
            Unary<std::string, TO>(src, dst,
                                   [](const std::string& s) { return StringToNumber<TO>(s); });
          },
          "Cast");
    } else {
      VisitDType(
          sd,
          [&]<class TI>(Tag<TI>) {
            Unary<TI, std::string>(src, dst, [](TI v) { return NumberToString(v); });
          },
          "Cast");
    }
    return;
  }
  if (sd == dd && src.is_contiguous() && dst.is_contiguous() && src.numel() == dst.numel()) {
    if (src.numel() > 0)
      std::memmove(dst.raw_data(), src.raw_data(), static_cast<size_t>(src.numel()) * SizeOf(sd));
    return;
  }
  if (sd == dd) {  // a plain (strided) copy by element size
    switch (SizeOf(sd)) {
      case 1:
        Unary<uint8_t, uint8_t>(src, dst, [](uint8_t v) { return v; });
        return;
      case 2:
        Unary<uint16_t, uint16_t>(src, dst, [](uint16_t v) { return v; });
        return;
      case 4:
        Unary<uint32_t, uint32_t>(src, dst, [](uint32_t v) { return v; });
        return;
      case 8:
        Unary<uint64_t, uint64_t>(src, dst, [](uint64_t v) { return v; });
        return;
      case 16: {
        struct V16 {
          uint64_t lo, hi;
        };
        Unary<V16, V16>(src, dst, [](V16 v) { return v; });
        return;
      }
      default:
        break;
    }
  }
  VisitDType(
      sd,
      [&]<class TI>(Tag<TI>) {
        VisitDType(
            dd,
            [&]<class TO>(Tag<TO>) {
              Unary<TI, TO>(src, dst, [](TI v) { return ConvertValue<TO>(v); });
            },
            "Cast");
      },
      "Cast");
}

}  // namespace singa::cpu

namespace singa {

void Tensor::CopyFrom(const Tensor& src) {
  SINGA_CHECK(src.shape_ == shape_ || BroadcastShapes(src.shape_, shape_, "CopyFrom") == shape_,
              ShapeError, "CopyFrom: source " << src.ToString() << " does not fit " << ToString());
  static constexpr auto copy = [](const Tensor& from, const Tensor& to) {
#if SINGA_CUDA
    if (to.device().type == DeviceType::kCuda || from.device().type == DeviceType::kCuda)
      return cuda::Copy(from, to);
#endif
    cpu::ConvertCopy(from, to);
  };
  // Run now, the copy needs no copies of the tensors for a recorded op (a
  // planned run copies its inputs in and its results out this way).
  if (!device_.graph_enabled()) {
    copy(src, *this);
    internal::TouchBlocks(std::span(this, 1));
    return;
  }
  const Tensor dst = *this;
  device_.Exec([src, dst] { copy(src, dst); }, std::span(&src, 1), std::span(&dst, 1));
}

void Tensor::Fill(double value) {
  Tensor dst = *this;
#if SINGA_CUDA
  if (device_.type == DeviceType::kCuda) {
    SINGA_CHECK(cuda::CopyDType(dtype_), DTypeError,
                "Fill: a GPU holds numeric and bool tensors, not " << Name(dtype_));
    device_.Exec([dst, value] { cuda::Fill(dst, value); }, {}, std::span(&dst, 1));
    return;
  }
#endif
  device_.Exec(
      [dst, value] {
        if (dst.dtype() == DType::kString) {
          cpu::ConvertCopy(Tensor::Scalar<double>(value), dst);
          return;
        }
        VisitDType(
            dst.dtype(),
            [&]<class T>(Tag<T>) {
              const T v = cpu::ConvertValue<T>(value);
              // Written without reading: a new tensor's memory may hold
              // anything (a bool that is neither 0 nor 1).
              if (dst.is_contiguous()) {
                std::fill_n(static_cast<T*>(dst.raw_data()), dst.numel(), v);
                return;
              }
              cpu::Unary<T, T>(dst, dst, [v](T) { return v; });
            },
            "Fill");
      },
      {}, std::span(&dst, 1));
}

}  // namespace singa
