#include "kernels/cpu/matmul.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <string_view>

#include "kernels/cpu/dnnl_util.h"
#include "kernels/cpu/vec.h"
#include "singa/core/parallel.h"

namespace singa::cpu {

namespace {

// Strides oneDNN can take for t: positive for every dimension larger than 1
// (no broadcast or reversed views), one of the two matrix dimensions unit.
bool SimplyStrided(const Tensor& t) {
  const int64_t r = t.ndim();
  for (int64_t d = 0; d < r; ++d)
    if (t.shape()[d] > 1 && t.strides()[d] <= 0) return false;
  auto unit = [&](int64_t d) { return t.shape()[d] == 1 || t.strides()[d] == 1; };
  return unit(r - 1) || unit(r - 2);
}

// t's descriptor; strides of size-1 dimensions (which never step) are set
// past the rest so oneDNN sees a consistent layout.
dnnl::memory::desc OperandDesc(const Tensor& t) {
  Strides s = t.strides();
  int64_t extent = 1;
  for (int64_t d = t.ndim() - 1; d >= 0; --d) {
    if (t.shape()[d] == 1) s[d] = extent;
    extent = std::max(extent, s[d] * t.shape()[d]);
  }
  return dnnl::memory::desc(dnnl_util::Dims(t.shape()), dnnl_util::ToDnnl(t.dtype()),
                            dnnl_util::Dims(s));
}

struct MatMulPrim {
  dnnl::matmul prim;
  dnnl::memory::desc a, b, y;
};

// The cached primitive for these operands, or null when oneDNN would run a
// reference (slow) implementation or rejects the layout.
std::shared_ptr<MatMulPrim> GetPrim(const Tensor& a, const Tensor& b, const Tensor& y, float alpha,
                                    float beta) {
  std::string key = "MatMul;";
  dnnl_util::AppendKey(key, a);
  dnnl_util::AppendKey(key, b);
  dnnl_util::AppendKey(key, y);
  uint32_t bits[2];
  std::memcpy(&bits[0], &alpha, 4);
  std::memcpy(&bits[1], &beta, 4);
  key += std::to_string(bits[0]) + "," + std::to_string(bits[1]);
  return *dnnl_util::Cached<std::shared_ptr<MatMulPrim>>(key, [&]() -> std::shared_ptr<MatMulPrim> {
    try {
      auto p = std::make_shared<MatMulPrim>();
      p->a = OperandDesc(a);
      p->b = OperandDesc(b);
      p->y = dnnl_util::Desc(y);
      dnnl::post_ops ops;
      if (alpha != 1.0f) ops.append_eltwise(dnnl::algorithm::eltwise_linear, alpha, 0.0f);
      if (beta != 0.0f) ops.append_sum(beta);
      dnnl::primitive_attr attr = dnnl_util::UserScratchpad();
      attr.set_post_ops(ops);
      dnnl::matmul::primitive_desc pd(dnnl_util::Engine(), p->a, p->b, p->y, attr);
      if (std::string(pd.impl_info_str()).starts_with("ref")) return nullptr;
      p->prim = dnnl::matmul(pd);
      return p;
    } catch (const dnnl::error&) {
      return nullptr;
    }
  });
}

// oneDNN's sgemm for a single f32 matrix product of more than 2^24
// multiply-adds, where each operand has a unit stride along one matrix
// dimension. Returns false where it does not apply.
// NOTE: measured against the matmul primitive (brgemm) at 1024-2048 square on
// 2 threads, sgemm was 5-15% faster, and as fast or faster down to 2x8x8.
// But its first call in a process generates its kernels (22 ms), where a
// primitive costs about 0.1 ms a shape: a model's first run in a fresh
// process (a CRNN's 6 ms) would carry them.
bool Sgemm(const Tensor& a, const Tensor& b, const Tensor& y, float alpha, float beta) {
  if (y.dtype() != DType::kFloat32 || y.ndim() != 2 || a.ndim() != 2 || b.ndim() != 2 ||
      !y.is_contiguous())
    return false;
  const int64_t m = y.shape()[0], n = y.shape()[1], k = a.shape()[1];
  if (m * n * k <= (int64_t{1} << 24)) return false;
  auto layout = [](const Tensor& t, char& trans, int64_t& ld) {
    if (t.strides()[1] == 1 && t.strides()[0] >= t.shape()[1]) {
      trans = 'N';
      ld = t.strides()[0];
      return true;
    }
    if (t.strides()[0] == 1 && t.strides()[1] >= t.shape()[0]) {
      trans = 'T';
      ld = t.strides()[1];
      return true;
    }
    return false;
  };
  char ta, tb;
  int64_t lda, ldb;
  if (!layout(a, ta, lda) || !layout(b, tb, ldb)) return false;
  return dnnl_sgemm(ta, tb, m, n, k, alpha, static_cast<const float*>(a.raw_data()), lda,
                    static_cast<const float*>(b.raw_data()), ldb, beta,
                    static_cast<float*>(y.raw_data()), n) == dnnl_success;
}

}  // namespace

bool DnnlMatMul(const Tensor& a, const Tensor& b, const Tensor& y, float alpha, float beta) {
  DType dt = y.dtype();
  if (dt != DType::kFloat32 && dt != DType::kFloat16 && dt != DType::kBFloat16) return false;
  if (y.numel() == 0 || a.shape().back() == 0 || y.ndim() > 12) return false;
  if (Sgemm(a, b, y, alpha, beta)) return true;
  Tensor da = SimplyStrided(a) ? a : a.Contiguous();
  Tensor db = SimplyStrided(b) ? b : b.Contiguous();
  std::shared_ptr<MatMulPrim> p = GetPrim(da, db, y, alpha, beta);
  if (!p && !(da.is_contiguous() && db.is_contiguous())) {
    da = da.Contiguous();
    db = db.Contiguous();
    p = GetPrim(da, db, y, alpha, beta);
  }
  if (!p) return false;
  dnnl_util::Execute(p->prim, {{DNNL_ARG_SRC, dnnl_util::Mem(da, p->a)},
                               {DNNL_ARG_WEIGHTS, dnnl_util::Mem(db, p->b)},
                               {DNNL_ARG_DST, dnnl_util::Mem(y, p->y)}});
  return true;
}

namespace {

// PanelMatMul computes in vectors (vec.h), a panel four of them wide.
using vec::kLanes, vec::Vec, vec::Load, vec::Store;
constexpr int kPanelVectors = 4;
constexpr int64_t kPanel = kLanes * kPanelVectors;

// Rows [0, MR) of y's columns [0, cols) from one panel p [K, kPanel]:
// y[r][c] = bias[c] + sum_j a[r][j] * p[j][c]. One row alone takes two
// steps of K at a time, so that eight sums are in flight, as four rows are.
template <int MR>
void PanelRows(const float* a, int64_t k, const float* p, const float* bias, float* y, int64_t ldy,
               int64_t cols) {
  Vec acc[MR][kPanelVectors] = {}, acc2[MR][kPanelVectors] = {};
  int64_t j = 0;
  if constexpr (MR == 1) {
    for (; j + 2 <= k; j += 2, p += 2 * kPanel) {
      const float a0 = a[j], a1 = a[j + 1];
      for (int v = 0; v < kPanelVectors; ++v) {
        acc[0][v] += a0 * Load(p + kLanes * v);
        acc2[0][v] += a1 * Load(p + kPanel + kLanes * v);
      }
    }
  }
  for (; j < k; ++j, p += kPanel) {
    Vec w[kPanelVectors];
    for (int v = 0; v < kPanelVectors; ++v) w[v] = Load(p + kLanes * v);
    for (int r = 0; r < MR; ++r) {
      const float av = a[r * k + j];
      for (int v = 0; v < kPanelVectors; ++v) acc[r][v] += av * w[v];
    }
  }
  for (int r = 0; r < MR; ++r) {
    float* yr = y + r * ldy;
    if (cols == kPanel) {
      for (int v = 0; v < kPanelVectors; ++v)
        Store(yr + kLanes * v, acc[r][v] + acc2[r][v] + (bias ? Load(bias + kLanes * v) : Vec{}));
      continue;
    }
    float last[kPanel];
    for (int v = 0; v < kPanelVectors; ++v) Store(last + kLanes * v, acc[r][v] + acc2[r][v]);
    for (int64_t c = 0; c < cols; ++c) yr[c] = last[c] + (bias ? bias[c] : 0.0f);
  }
}

}  // namespace

const float* PanelWeights(const Tensor& w) {
  // The weights this thread asked for last, found again without
  // PackedWeights' keys, lock and memory objects (a recurrent step asks for
  // the same two on every call, at about 1 us each through PackedWeights).
  // A packed copy stays while its block lives at the version it was packed
  // at: PackedWeights packs it again only at a new version.
  struct Recent {
    std::weak_ptr<Block> block;
    const void* data = nullptr;
    uint64_t version = 0;
    Shape shape, strides;
    const float* packed = nullptr;
  };
  thread_local std::array<Recent, 8> recent;
  thread_local size_t next = 0;
  const std::shared_ptr<Block> block = internal::BlockOf(w);
  for (const Recent& r : recent)
    if (r.packed && r.data == w.raw_data() && r.version == block->version() &&
        r.block.lock() == block && r.shape == w.shape() && r.strides == w.strides())
      return r.packed;
  const int64_t n = w.dim(0), k = w.dim(1), panels = (n + kPanel - 1) / kPanel;
  const dnnl::memory::desc want({panels, k, kPanel}, dnnl::memory::data_type::f32,
                                dnnl::memory::format_tag::abc);
  const auto pack = [&](const dnnl::memory& to) {
    float* dst = static_cast<float*>(to.get_data_handle());
    std::fill(dst, dst + panels * k * kPanel, 0.0f);
    const float* src = static_cast<const float*>(w.raw_data());
    const int64_t sn = w.strides()[0], sk = w.strides()[1];
    for (int64_t c = 0; c < n; ++c)
      for (int64_t j = 0; j < k; ++j)
        dst[((c / kPanel) * k + j) * kPanel + c % kPanel] = src[c * sn + j * sk];
  };
  const auto* packed = static_cast<const float*>(
      dnnl_util::PackedWeights(w, dnnl_util::Desc(w), want, pack).get_data_handle());
  recent[next++ % recent.size()] = {block,     w.raw_data(), block->version(),
                                    w.shape(), w.strides(),  packed};
  return packed;
}

void PanelMatMul(const float* a, const float* panels, const float* bias, float* y, int64_t m,
                 int64_t k, int64_t n) {
  // A thread takes panels of at least 2^16 multiply-adds in all.
  const int64_t per_panel = std::max<int64_t>(1, m * k * kPanel);
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 16) / per_panel);
  ParallelFor(0, (n + kPanel - 1) / kPanel, grain, [&](int64_t lo, int64_t hi) {
    for (int64_t p = lo; p < hi; ++p) {
      const float* panel = panels + p * k * kPanel;
      const int64_t c0 = p * kPanel, cols = std::min(kPanel, n - c0);
      const float* b = bias ? bias + c0 : nullptr;
      int64_t i = 0;
      for (; i + 4 <= m; i += 4) PanelRows<4>(a + i * k, k, panel, b, y + i * n + c0, n, cols);
      if (m - i == 3) PanelRows<3>(a + i * k, k, panel, b, y + i * n + c0, n, cols);
      if (m - i == 2) PanelRows<2>(a + i * k, k, panel, b, y + i * n + c0, n, cols);
      if (m - i == 1) PanelRows<1>(a + i * k, k, panel, b, y + i * n + c0, n, cols);
    }
  });
}

bool DnnlLinear(const Tensor& a, const Tensor& w, const Tensor& bias, const Tensor& y) {
  const DType dt = y.dtype();
  if (dt != DType::kFloat32 && dt != DType::kFloat16 && dt != DType::kBFloat16) return false;
  if (a.ndim() != 2 || w.ndim() != 2 || y.ndim() != 2 || !y.is_contiguous() || a.dtype() != dt ||
      w.dtype() != dt || (bias.defined() && bias.dtype() != dt))
    return false;
  const int64_t m = y.dim(0), n = y.dim(1), k = a.dim(1);
  if (m == 0 || n == 0 || k == 0 || m * n * k > (int64_t{1} << 24)) return false;
  const Tensor da = a.is_contiguous() ? a : a.Contiguous();
  std::string key = "Linear;";
  dnnl_util::AppendKey(key, da);
  dnnl_util::AppendKey(key, w);
  key += bias.defined() ? "bias" : "";
  using dnnl::memory;
  struct Prim {
    dnnl::inner_product_forward prim;
    memory::desc weights;
  };
  const std::shared_ptr<Prim> p =
      *dnnl_util::Cached<std::shared_ptr<Prim>>(key, [&]() -> std::shared_ptr<Prim> {
        try {
          const memory::desc src = dnnl_util::Desc(da), dst = dnnl_util::Desc(y);
          const memory::desc wei(dnnl_util::Dims(w.shape()), dnnl_util::ToDnnl(dt),
                                 memory::format_tag::any);
          const auto prop = dnnl::prop_kind::forward_inference;
          const dnnl::primitive_attr attr = dnnl_util::UserScratchpad();
          auto pd = bias.defined() ? dnnl::inner_product_forward::primitive_desc(
                                         dnnl_util::Engine(), prop, src, wei,
                                         dnnl_util::PlainDesc({n}, dt), dst, attr)
                                   : dnnl::inner_product_forward::primitive_desc(
                                         dnnl_util::Engine(), prop, src, wei, dst, attr);
          if (std::string_view(pd.impl_info_str()).starts_with("ref")) return nullptr;
          return std::make_shared<Prim>(Prim{dnnl::inner_product_forward(pd), pd.weights_desc()});
        } catch (const dnnl::error&) {
          return nullptr;
        }
      });
  if (!p) return false;
  std::unordered_map<int, memory> args = {
      {DNNL_ARG_SRC, dnnl_util::Mem(da)},
      {DNNL_ARG_WEIGHTS, dnnl_util::PackedWeights(w, dnnl_util::Desc(w), p->weights, key + "|w")},
      {DNNL_ARG_DST, dnnl_util::Mem(y)}};
  Tensor b;
  if (bias.defined()) {
    b = bias.Contiguous();
    args[DNNL_ARG_BIAS] = dnnl_util::Mem(b, dnnl_util::PlainDesc({n}, dt));
  }
  dnnl_util::Execute(p->prim, args);
  return true;
}

namespace {

constexpr int64_t kGrain = 1 << 15;  // multiply-adds per task below which the loop stays serial

template <class T>
void Loops(const Tensor& a0, const Tensor& b0, const Tensor& y, double alpha, double beta,
           const Tensor& c0) {
  using A = Acc<T>;
  const Tensor a = a0.Contiguous(), b = b0.Contiguous();
  const Tensor c = c0.defined() ? c0.BroadcastTo(y.shape()) : Tensor();
  const int64_t r = y.ndim(), m_size = y.shape()[r - 2], n_size = y.shape()[r - 1],
                k_size = a.shape()[r - 1];
  int64_t nbatch = 1;
  for (int64_t d = 0; d + 2 < r; ++d) nbatch *= y.shape()[d];
  const T* pa = static_cast<const T*>(a.raw_data());
  const T* pb = static_cast<const T*>(b.raw_data());
  const T* pc = c.defined() ? static_cast<const T*>(c.raw_data()) : nullptr;
  T* py = static_cast<T*>(y.raw_data());
  const bool plain = !pc && alpha == 1.0;
  // Offset of batch `bi` in an operand whose batch dims are y's or 1.
  auto batch_offset = [&](const Tensor& t, int64_t bi) {
    int64_t off = 0;
    for (int64_t d = r - 3; d >= 0; --d) {
      int64_t size = y.shape()[d], i = bi % size;
      bi /= size;
      if (t.shape()[d] != 1) off += i * t.strides()[d];
    }
    return off;
  };
  const int64_t per_row = std::max<int64_t>(1, k_size * n_size);
  ParallelFor(0, nbatch * m_size, std::max<int64_t>(1, kGrain / per_row),
              [&](int64_t lo, int64_t hi) {
                std::vector<A> acc(n_size);
                for (int64_t t = lo; t < hi; ++t) {
                  const int64_t bi = t / m_size, m = t % m_size;
                  const T* arow = pa + batch_offset(a, bi) + m * k_size;
                  const T* bmat = pb + batch_offset(b, bi);
                  std::fill(acc.begin(), acc.end(), A(0));
                  for (int64_t k = 0; k < k_size; ++k) {
                    const A av = static_cast<A>(arow[k]);
                    const T* brow = bmat + k * n_size;
                    for (int64_t n = 0; n < n_size; ++n) acc[n] += av * static_cast<A>(brow[n]);
                  }
                  T* yrow = py + t * n_size;
                  if (plain) {
                    for (int64_t n = 0; n < n_size; ++n) yrow[n] = static_cast<T>(acc[n]);
                    continue;
                  }
                  int64_t coff = 0, cs = 0;
                  if (pc) {
                    coff = batch_offset(c, bi) + m * c.strides()[r - 2];
                    cs = c.strides()[r - 1];
                  }
                  for (int64_t n = 0; n < n_size; ++n) {
                    if constexpr (std::is_integral_v<T>) {
                      double v = static_cast<double>(acc[n]) * alpha;
                      if (pc) v += static_cast<double>(pc[coff + n * cs]) * beta;
                      yrow[n] = static_cast<T>(v);
                    } else {
                      A v = static_cast<A>(alpha) * acc[n];
                      if (pc) v += static_cast<A>(beta) * static_cast<A>(pc[coff + n * cs]);
                      yrow[n] = static_cast<T>(v);
                    }
                  }
                }
              });
}

}  // namespace

void MatMulLoops(const Tensor& a, const Tensor& b, const Tensor& y, double alpha, double beta,
                 const Tensor& c) {
  if (y.numel() == 0) return;
  VisitNumeric(
      y.dtype(),
      [&]<class T>(Tag<T>) {
        if constexpr (!std::is_same_v<T, bool>) Loops<T>(a, b, y, alpha, beta, c);
      },
      "MatMul");
}

}  // namespace singa::cpu
