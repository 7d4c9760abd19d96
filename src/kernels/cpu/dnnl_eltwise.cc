#include "kernels/cpu/dnnl_eltwise.h"

#include <optional>
#include <string>

#include "kernels/cpu/dnnl_util.h"

namespace singa::cpu {
bool DnnlEltwise(dnnl::algorithm alg, float alpha, float beta, const Tensor& x, const Tensor& y) {
  const DType dt = x.dtype();
  if (dt != DType::kFloat32 && dt != DType::kBFloat16 && dt != DType::kFloat16) return false;
  if (y.dtype() != dt || y.numel() != x.numel() || !y.is_contiguous() || x.numel() == 0)
    return false;
  // Elementwise over dense memory: the shape does not matter, so every shape
  // with the same element count shares one primitive.
  const Shape flat = {x.numel()};
  std::string key = "eltwise:" + std::to_string(static_cast<int>(alg)) + ':' +
                    dnnl_util::Exact(alpha) + ':' + dnnl_util::Exact(beta) + ':' +
                    std::string(Name(dt)) + ToString(flat);
  using Prim = std::optional<dnnl::eltwise_forward>;
  const std::shared_ptr<Prim> cached = dnnl_util::Cached<Prim>(key, [&]() -> Prim {
    try {
      auto md = dnnl_util::PlainDesc(flat, dt);
      return dnnl::eltwise_forward(dnnl::eltwise_forward::primitive_desc(
          dnnl_util::Engine(), dnnl::prop_kind::forward_inference, alg, md, md, alpha, beta));
    } catch (const dnnl::error&) {
      return std::nullopt;  // unimplemented for this dtype/ISA: the caller's loop runs
    }
  });
  const Prim& prim = *cached;
  if (!prim) return false;
  const Tensor src = x.Contiguous();
  auto md = dnnl_util::PlainDesc(flat, dt);
  dnnl_util::Execute(
      *prim, {{DNNL_ARG_SRC, dnnl_util::Mem(src, md)}, {DNNL_ARG_DST, dnnl_util::Mem(y, md)}});
  return true;
}

}  // namespace singa::cpu
