// Attention (opset 23; 24 adds the nonpad_kv_seqlen input; 25 adds
// left/right_window_size): scaled dot-product attention with multi-head,
// grouped-query (Hq a multiple of Hkv: query head h reads KV head
// h / (Hq / Hkv)), an optional additive or boolean mask, causal and
// sliding-window masking, softcap, a KV cache (past_* concatenated before
// K and V into present_*) and the intermediate qk_matmul_output.
// Q, K, V are 4-D (batch, heads, seq, head_size) or 3-D (batch, seq,
// heads * head_size) with q_num_heads/kv_num_heads.
//
// Per query row (b, h, i), with P past keys and T = P + kv_seq keys:
//   s = sqrt(scale)                         (scale defaults to 1/sqrt(head_size))
//   qk_j = (s*q) . (s*k_j)                  qk = softcap * tanh(qk / softcap) if softcap > 0
//   bias_j = mask + causal + window + padding   (each 0 or -inf but the float mask)
//   p = softmax(qk + bias)                  (0 for a row whose bias is all -inf)
//   y = p V
// The causal and window frontiers are bottom-right aligned: query i sits
// at position i + offset, offset = P with a cache, nonpad_kv_seqlen[b] - q_seq
// with nonpad_kv_seqlen, else 0. A mask shorter than T is padded with -inf.
// qk_matmul_output_mode: 0 and 1 give qk (after softcap), 2 qk + bias,
// 3 the probabilities.
// Kernels: float32 runs both products as oneDNN batched matmuls; other
// dtypes accumulate the logits with the key index innermost; the reference
// takes one dot product per key. On one thread (B=1, 12 heads, seq 512,
// head 64) the float32 path takes 39 ms, the reference 189 ms, torch's
// scaled_dot_product_attention 18 ms.
// NOTE: intermediate values are rounded to the input dtype where the spec's
// function body rounds them (scaled Q and K, qk, the softcap steps, qk + bias,
// the probabilities); accumulation is in Acc<T> (float for 16-bit floats).
// The softmax runs in softmax_precision when given.
// Backward: framework ops (MatMul, Transpose, ReduceSum), see below.
// https://onnx.ai/onnx/operators/onnx__Attention.html
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <type_traits>

#include "kernels/cpu/matmul.h"
#include "ops/common.h"
#include "ops/grad_util.h"

namespace singa {
namespace {

struct AttentionAttrs {
  int64_t is_causal = 0;
  std::optional<int64_t> kv_num_heads, q_num_heads;
  int64_t qk_matmul_output_mode = 0;
  std::optional<float> scale;
  float softcap = 0.0f;
  std::optional<int64_t> softmax_precision;
  int64_t left_window_size = -1, right_window_size = -1;
};

enum { kQ, kK, kV, kMask, kPastKey, kPastValue, kNonpad };

// The problem's dimensions after 3-D inputs are viewed as 4-D.
struct Dims {
  int64_t batch = 0, hq = 0, hkv = 0, sq = 0, skv = 0, past = 0, d = 0, dv = 0;
  bool three_d = false;
  int64_t total() const { return past + skv; }
};

Dims GetDims(const InferCtx& c, const AttentionAttrs& a, int opset) {
  const int64_t rank = c.rank(kQ);
  SINGA_CHECK((rank == 3 || rank == 4) && c.rank(kK) == rank && c.rank(kV) == rank, ShapeError,
              c.where() << ": Q, K and V must all be 3-D or all 4-D (" << c.inputs_string() << ")");
  const Shape &q = c.shape(kQ), &k = c.shape(kK), &v = c.shape(kV);
  Dims d;
  d.batch = q[0];
  d.three_d = rank == 3;
  if (d.three_d) {
    SINGA_CHECK(a.q_num_heads && a.kv_num_heads && *a.q_num_heads > 0 && *a.kv_num_heads > 0,
                ShapeError,
                c.where() << ": 3-D inputs need positive q_num_heads and kv_num_heads ("
                          << c.inputs_string() << ")");
    d.hq = *a.q_num_heads;
    d.hkv = *a.kv_num_heads;
    SINGA_CHECK(q[2] % d.hq == 0 && k[2] % d.hkv == 0 && v[2] % d.hkv == 0, ShapeError,
                c.where() << ": hidden sizes must divide by the head counts (q_num_heads " << d.hq
                          << ", kv_num_heads " << d.hkv << "; " << c.inputs_string() << ")");
    d.sq = q[1];
    d.skv = k[1];
    d.d = q[2] / d.hq;
    SINGA_CHECK(k[2] / d.hkv == d.d, ShapeError,
                c.where() << ": Q and K head sizes differ (" << c.inputs_string() << ")");
    d.dv = v[2] / d.hkv;
    SINGA_CHECK(v[1] == d.skv, ShapeError,
                c.where() << ": K and V sequence lengths differ (" << c.inputs_string() << ")");
  } else {
    SINGA_CHECK(opset < 25 || (!a.q_num_heads && !a.kv_num_heads), ShapeError,
                c.where() << ": q_num_heads and kv_num_heads must not be set for 4-D inputs");
    d.hq = q[1];
    d.hkv = k[1];
    d.sq = q[2];
    d.skv = k[2];
    d.d = q[3];
    d.dv = v[3];
    SINGA_CHECK(k[3] == d.d && v[1] == d.hkv && v[2] == d.skv, ShapeError,
                c.where() << ": K must be (batch, kv_heads, kv_seq, head_size) and V (batch, "
                             "kv_heads, kv_seq, v_head_size) ("
                          << c.inputs_string() << ")");
  }
  SINGA_CHECK(k[0] == d.batch && v[0] == d.batch, ShapeError,
              c.where() << ": Q, K and V batch sizes differ (" << c.inputs_string() << ")");
  SINGA_CHECK(
      d.hkv > 0 ? d.hq % d.hkv == 0 : d.hq == 0, ShapeError,
      c.where() << ": q heads (" << d.hq << ") must be a multiple of kv heads (" << d.hkv << ")");
  const bool pk = c.has_input(kPastKey), pv = c.has_input(kPastValue);
  SINGA_CHECK(pk == pv, ShapeError,
              c.where() << ": past_key and past_value must be given together");
  if (pk) {
    const Shape &ps = c.shape(kPastKey), &pvs = c.shape(kPastValue);
    SINGA_CHECK(ps.size() == 4 && pvs.size() == 4 && ps[0] == d.batch && ps[1] == d.hkv &&
                    ps[3] == d.d && pvs[0] == d.batch && pvs[1] == d.hkv && pvs[2] == ps[2] &&
                    pvs[3] == d.dv,
                ShapeError,
                c.where() << ": past_key must be (batch, kv_heads, past, head_size) and "
                             "past_value (batch, kv_heads, past, v_head_size) ("
                          << c.inputs_string() << ")");
    d.past = ps[2];
  }
  if (c.has_input(kNonpad)) {
    SINGA_CHECK(!pk, ShapeError,
                c.where() << ": nonpad_kv_seqlen cannot be combined with past_key/past_value");
    SINGA_CHECK(c.shape(kNonpad) == Shape{d.batch}, ShapeError,
                c.where() << ": nonpad_kv_seqlen must be (batch,) (" << c.inputs_string() << ")");
  }
  if (c.has_input(kMask)) {
    const Shape& m = c.shape(kMask);
    const Shape full = {d.batch, d.hq, d.sq};
    bool ok = !m.empty() && m.size() <= 4 && m.back() <= d.total();
    for (size_t i = 0; ok && i + 1 < m.size(); ++i) {
      const int64_t want = full[4 - m.size() + i];
      ok = m[i] == 1 || m[i] == want;
    }
    SINGA_CHECK(ok, ShapeError,
                c.where() << ": attn_mask must broadcast to (batch, q_heads, q_seq, kv_total) = ("
                          << d.batch << ", " << d.hq << ", " << d.sq << ", " << d.total()
                          << ") with a last dimension of at most kv_total (" << c.inputs_string()
                          << ")");
  }
  SINGA_CHECK(a.qk_matmul_output_mode >= 0 && a.qk_matmul_output_mode <= 3, ShapeError,
              c.where() << ": qk_matmul_output_mode must be 0..3, got " << a.qk_matmul_output_mode);
  SINGA_CHECK(a.left_window_size >= -1 && a.right_window_size >= -1, ShapeError,
              c.where() << ": window sizes must be -1 or nonnegative, got left "
                        << a.left_window_size << ", right " << a.right_window_size);
  if (a.softmax_precision) {
    const auto p = static_cast<DType>(*a.softmax_precision);
    SINGA_CHECK(*a.softmax_precision > 0 && *a.softmax_precision < kNumDTypes && IsFloat(p),
                DTypeError,
                c.where() << ": softmax_precision must be a float dtype code, got "
                          << *a.softmax_precision);
  }
  return d;
}

template <int kOpset>
SpecList Infer(const InferCtx& c, const AttentionAttrs& a) {
  const Dims d = GetDims(c, a, kOpset);
  const DType t = c.dtype(kQ);
  const Shape y = d.three_d ? Shape{d.batch, d.sq, d.hq * d.dv} : Shape{d.batch, d.hq, d.sq, d.dv};
  return {{t, y},
          {t, {d.batch, d.hkv, d.total(), d.d}},
          {t, {d.batch, d.hkv, d.total(), d.dv}},
          {t, {d.batch, d.hq, d.sq, d.total()}}};
}

// A 3-D (batch, seq, heads * size) tensor as contiguous (batch, heads, seq, size).
Tensor As4d(const Tensor& t, int64_t heads, bool three_d) {
  if (!three_d) return t.Contiguous();
  const Shape& s = t.shape();
  return t.Reshape({s[0], s[1], heads, heads ? s[2] / heads : 0})
      .Permute({0, 2, 1, 3})
      .Contiguous();
}

// [past; x] along the sequence axis into `out` (batch, heads, past + seq, size).
void ConcatSeq(const Tensor& past, const Tensor& x, const Tensor& out) {
  if (out.numel() == 0) return;
  const int64_t bh = out.shape()[0] * out.shape()[1], size = out.shape()[3];
  const int64_t np = past.defined() ? past.shape()[2] * size : 0, nx = x.shape()[2] * size;
  const Tensor pc = past.defined() ? past.Contiguous() : past;
  const size_t es = SizeOf(out.dtype());
  auto* po = static_cast<char*>(out.raw_data());
  const auto* pp = np ? static_cast<const char*>(pc.raw_data()) : nullptr;
  const auto* px = nx ? static_cast<const char*>(x.raw_data()) : nullptr;
  for (int64_t i = 0; i < bh; ++i) {
    if (np) std::memcpy(po + i * (np + nx) * es, pp + i * np * es, np * es);
    if (nx) std::memcpy(po + (i * (np + nx) + np) * es, px + i * nx * es, nx * es);
  }
}

// The attention mask as additive values (bool: 0 / -inf), with 4-D
// broadcast strides over (batch, q_heads, q_seq, mask_len).
struct Mask {
  std::vector<double> values;
  int64_t stride[4] = {0, 0, 0, 0};
  int64_t len = 0;  // mask's last dimension; keys beyond it are masked
  bool is_bool = false;
  DType dtype = DType::kUndefined;
};

Mask ReadMask(const Tensor& m) {
  Mask r;
  const Tensor c = m.Contiguous();
  r.dtype = m.dtype();
  r.is_bool = m.dtype() == DType::kBool;
  r.values.resize(c.numel());
  VisitDType(m.dtype(), [&]<class M>(Tag<M>) {
    const M* p = c.numel() ? c.data<M>() : nullptr;
    constexpr double kNegInf = -std::numeric_limits<double>::infinity();
    for (int64_t i = 0; i < c.numel(); ++i) {
      if constexpr (std::is_same_v<M, bool>)
        r.values[i] = p[i] ? 0.0 : kNegInf;
      else
        r.values[i] = static_cast<double>(p[i]);
    }
  });
  const Shape& s = m.shape();
  const int64_t lead = 4 - static_cast<int64_t>(s.size());
  int64_t stride = 1;
  for (int64_t i = static_cast<int64_t>(s.size()) - 1; i >= 0; --i) {
    r.stride[lead + i] = s[i] == 1 && i + 1 < static_cast<int64_t>(s.size()) ? 0 : stride;
    stride *= s[i];
  }
  r.len = s.back();
  return r;
}

// kFast keeps the scaled K transposed, so that the logits of a query row
// accumulate with the key index innermost (vectorized, no reassociation);
// the reference takes one dot product per key.
template <class T, bool kFast>
void Run(KernelCtx& k, const AttentionAttrs& a, const Dims& d) {
  using A = Acc<T>;
  auto round = [](auto v) { return static_cast<A>(static_cast<T>(v)); };
  constexpr A kNegInf = -std::numeric_limits<A>::infinity();
  const Tensor q = As4d(k.input(kQ), d.hq, d.three_d);
  const Tensor kin = As4d(k.input(kK), d.hkv, d.three_d);
  const Tensor vin = As4d(k.input(kV), d.hkv, d.three_d);
  const int64_t total = d.total();
  const bool has_past = k.has_input(kPastKey);
  // present_key / present_value: the outputs when asked for, else scratch.
  auto present = [&](int out, const Tensor& past, const Tensor& x, int64_t size) {
    const bool asked = k.num_outputs() > out;
    if (!has_past) {
      if (asked && x.numel()) k.outputs[out].CopyFrom(x);
      return x;
    }
    Tensor p = asked ? k.outputs[out] : Tensor({d.batch, d.hkv, total, size}, x.dtype());
    ConcatSeq(past, x, p);
    return p;
  };
  const Tensor key = present(1, has_past ? k.input(kPastKey) : Tensor(), kin, d.d);
  const Tensor value = present(2, has_past ? k.input(kPastValue) : Tensor(), vin, d.dv);
  const Tensor& y = k.output(0);
  const bool want_qk = k.num_outputs() > 3;
  if (y.numel() == 0 && !(want_qk && k.output(3).numel())) return;

  // NOTE: the spec's reference takes the square root of a given scale in
  // float (the attribute's type) and of the default 1/sqrt(head_size) in double.
  const A s = a.scale ? round(std::sqrt(*a.scale)) : round(std::sqrt(1.0 / std::sqrt(double(d.d))));
  const Mask mask = k.has_input(kMask) ? ReadMask(k.input(kMask)) : Mask();
  const bool has_mask = k.has_input(kMask);
  // qk + bias is rounded to T unless a wider float mask promotes it.
  const bool round_bias =
      !has_mask || mask.is_bool || SizeOf(mask.dtype) <= sizeof(T) || !IsFloat(mask.dtype);
  std::vector<int64_t> nonpad;
  if (k.has_input(kNonpad)) nonpad = k.input(kNonpad).ToVector<int64_t>();
  const DType pdt = a.softmax_precision ? static_cast<DType>(*a.softmax_precision) : DTypeOf<T>();
  const bool window = a.left_window_size >= 0 || a.right_window_size >= 0;

  const T* pq = q.numel() ? q.data<T>() : nullptr;
  const T* pk = key.numel() ? key.data<T>() : nullptr;
  const T* pv = value.numel() ? value.data<T>() : nullptr;
  T* py = y.numel() ? y.data<T>() : nullptr;
  T* pqk = want_qk && k.output(3).numel() ? k.output(3).data<T>() : nullptr;
  const int64_t group = d.hkv ? d.hq / d.hkv : 1;

  // float32 fast path: both products as oneDNN batched matmuls. The query
  // heads of one KV head are consecutive, so (B, Hq, Sq, D) is (B, Hkv,
  // group * Sq, D) and GQA needs no copy of K or V. `scores` holds the raw
  // logits, then (row by row) the probabilities.
  Tensor scores;
  if constexpr (kFast && std::is_same_v<T, float>) {
    if (pdt == DType::kFloat32 && total > 0 && q.numel() > 0) {
      Tensor qs({d.batch, d.hkv, group * d.sq, d.d}, DType::kFloat32);
      Tensor ks({d.batch, d.hkv, total, d.d}, DType::kFloat32);
      cpu::Unary<float, float>(q, qs.Reshape(q.shape()), [s](float v) { return v * s; });
      cpu::Unary<float, float>(key, ks, [s](float v) { return v * s; });
      scores = Tensor({d.batch, d.hkv, group * d.sq, total}, DType::kFloat32);
      if (!cpu::DnnlMatMul(qs, ks.Permute({0, 1, 3, 2}), scores)) scores = Tensor();
    }
  }
  float* pscores = scores.defined() ? scores.data<float>() : nullptr;

  ParallelFor(0, d.batch * d.hq, 1, [&](int64_t lo, int64_t hi) {
    std::vector<A> ks(total * d.d), qs(d.d), qk(total), bias(total), prob(total), out(d.dv),
        dots(kFast ? total : 0);
    if (pscores) dots.resize(total);
    for (int64_t bh = lo; bh < hi; ++bh) {
      const int64_t b = bh / d.hq, h = bh % d.hq, hk = h / group;
      const T* kbase = pk + (b * d.hkv + hk) * total * d.d;
      const T* vbase = pv + (b * d.hkv + hk) * total * d.dv;
      if (!pscores) {
        if constexpr (kFast) {
          for (int64_t j = 0; j < total; ++j)
            for (int64_t e = 0; e < d.d; ++e)
              ks[e * total + j] = round(static_cast<A>(kbase[j * d.d + e]) * s);
        } else {
          for (int64_t j = 0; j < total * d.d; ++j) ks[j] = round(static_cast<A>(kbase[j]) * s);
        }
      }
      const int64_t offset = has_past ? d.past : !nonpad.empty() ? nonpad[b] - d.sq : 0;
      for (int64_t i = 0; i < d.sq; ++i) {
        const T* qrow = pq + (bh * d.sq + i) * d.d;
        for (int64_t e = 0; e < d.d; ++e) qs[e] = round(static_cast<A>(qrow[e]) * s);
        A* srow = pscores ? reinterpret_cast<A*>(pscores) + (bh * d.sq + i) * total : nullptr;
        if (srow) {
          std::copy(srow, srow + total, dots.begin());
        } else if constexpr (kFast) {
          std::fill(dots.begin(), dots.end(), A(0));
          for (int64_t e = 0; e < d.d; ++e) {
            const A qe = qs[e];
            const A* kr = ks.data() + e * total;
            for (int64_t j = 0; j < total; ++j) dots[j] += qe * kr[j];
          }
        }
        bool all_masked = total > 0;
        for (int64_t j = 0; j < total; ++j) {
          A bj = 0;
          if (has_mask) {
            if (j < mask.len) {
              const int64_t idx =
                  b * mask.stride[0] + h * mask.stride[1] + i * mask.stride[2] + j * mask.stride[3];
              bj = static_cast<A>(mask.values[idx]);
            } else {
              bj = kNegInf;
            }
          }
          const int64_t pos = i + offset;
          if (a.is_causal && j > pos) bj += kNegInf;
          if (window) {
            const int64_t diff = pos - j;
            if ((a.left_window_size >= 0 && diff > a.left_window_size) ||
                (a.right_window_size >= 0 && -diff > a.right_window_size))
              bj += kNegInf;
          }
          if (!nonpad.empty() && j >= nonpad[b]) bj += kNegInf;
          bias[j] = bj;
          all_masked = all_masked && bj == kNegInf;
          A dot = 0;
          if constexpr (kFast) {
            dot = dots[j];
          } else {
            const A* kr = ks.data() + j * d.d;
            for (int64_t e = 0; e < d.d; ++e) dot += qs[e] * kr[e];
          }
          A v = round(dot);
          if (a.softcap > 0) {
            const A cap = static_cast<A>(a.softcap);
            v = round(round(std::tanh(round(v / cap))) * cap);
          }
          qk[j] = v;
        }
        // Softmax in the precision dtype P, rounding as P would.
        VisitFloat(pdt, [&]<class P>(Tag<P>) {
          using PA = Acc<P>;
          auto pr = [](PA x) { return static_cast<PA>(static_cast<P>(x)); };
          PA m = -std::numeric_limits<PA>::infinity();
          bool nan = false;
          for (int64_t j = 0; j < total; ++j) {
            const A z = round_bias ? round(qk[j] + bias[j]) : qk[j] + bias[j];
            prob[j] = z;
            nan = nan || std::isnan(z);
            m = std::max(m, pr(static_cast<PA>(z)));
          }
          if (nan) m = std::numeric_limits<PA>::quiet_NaN();
          if (m == -std::numeric_limits<PA>::infinity()) {
            std::fill(prob.begin(), prob.end(), A(0));
            return;
          }
          PA sum = 0;
          for (int64_t j = 0; j < total; ++j) {
            const PA e = pr(std::exp(pr(static_cast<PA>(prob[j])) - m));
            prob[j] = static_cast<A>(e);
            sum += e;
          }
          sum = pr(sum);
          if (sum == 0) sum = 1;
          for (int64_t j = 0; j < total; ++j) prob[j] = static_cast<A>(pr(prob[j] / sum));
        });
        if (pqk) {
          T* row = pqk + (bh * d.sq + i) * total;
          for (int64_t j = 0; j < total; ++j) {
            A v = qk[j];
            if (a.qk_matmul_output_mode == 2)
              v = round_bias ? round(qk[j] + bias[j]) : qk[j] + bias[j];
            else if (a.qk_matmul_output_mode == 3)
              v = all_masked ? A(0) : prob[j];
            row[j] = static_cast<T>(v);
          }
        }
        if (srow) {  // P V runs as one matmul after the rows
          for (int64_t j = 0; j < total; ++j) srow[j] = all_masked ? A(0) : prob[j];
          continue;
        }
        std::fill(out.begin(), out.end(), A(0));
        for (int64_t j = 0; j < total; ++j) {
          const A p = all_masked ? A(0) : round(prob[j]);
          const T* vr = vbase + j * d.dv;
          for (int64_t e = 0; e < d.dv; ++e) out[e] += p * static_cast<A>(vr[e]);
        }
        T* yrow = d.three_d ? py + ((b * d.sq + i) * d.hq + h) * d.dv : py + (bh * d.sq + i) * d.dv;
        for (int64_t e = 0; e < d.dv; ++e) yrow[e] = static_cast<T>(out[e]);
      }
    }
  });
  if (pscores && y.numel()) {
    const Shape y4 = {d.batch, d.hkv, group * d.sq, d.dv};
    const Tensor dst = d.three_d ? Tensor(y4, DType::kFloat32) : y.Reshape(y4);
    if (!cpu::DnnlMatMul(scores, value, dst)) cpu::MatMulLoops(scores, value, dst);
    if (d.three_d)
      y.Reshape({d.batch, d.sq, d.hq, d.dv})
          .CopyFrom(dst.Reshape({d.batch, d.hq, d.sq, d.dv}).Permute({0, 2, 1, 3}));
  }
}

template <bool kFast>
void Forward(KernelCtx& k, const AttentionAttrs& a) {
  // The dimensions again (shape inference checked them).
  Dims d;
  const Shape &q = k.input(kQ).shape(), &ks = k.input(kK).shape(), &v = k.input(kV).shape();
  d.three_d = q.size() == 3;
  d.batch = q[0];
  if (d.three_d) {
    d.hq = *a.q_num_heads, d.hkv = *a.kv_num_heads;
    d.sq = q[1], d.skv = ks[1], d.d = q[2] / d.hq, d.dv = v[2] / d.hkv;
  } else {
    d.hq = q[1], d.hkv = ks[1], d.sq = q[2], d.skv = ks[2], d.d = q[3], d.dv = v[3];
  }
  if (k.has_input(kPastKey)) d.past = k.input(kPastKey).shape()[2];
  VisitFloat(k.input(kQ).dtype(), [&]<class T>(Tag<T>) { Run<T, kFast>(k, a, d); });
}

// ---- backward ----------------------------------------------------------------
// Framework ops on the 4-D views, with the query heads of a KV head grouped
// as rows (B, Hkv, G * Sq, .), P the probabilities (the op itself with
// qk_matmul_output_mode 3), c the softcapped logits and s2 = scale:
//   dV = P^T dY,  dP = dY V^T,  dS = P * (dP - rowsum(dP * P))
//   dR = dS * (1 - (c / softcap)^2)   (softcap > 0; else dR = dS)
//   dQ = dR K * s2,  dK = dR^T Q * s2,  d attn_mask = dS summed to its shape
// present_key/present_value gradients add to dK/dV before the past part is
// split off. qk_matmul_output passes no gradient back.

Tensor Reshape(const Tensor& t, std::vector<int64_t> shape) {
  return Call1("Reshape",
               {t, Tensor::FromVector<int64_t>({static_cast<int64_t>(shape.size())}, shape)});
}
Tensor Transpose(const Tensor& t, std::vector<int64_t> perm) {
  return Call1("Transpose", {t}, {{"perm", std::move(perm)}});
}
Tensor MatMul(const Tensor& a, const Tensor& b) { return Call1("MatMul", {a, b}); }
// t[..., lo:hi] along `axis`.
Tensor SliceAxis(const Tensor& t, int64_t axis, int64_t lo, int64_t hi) {
  auto one = [](int64_t v) { return Tensor::FromVector<int64_t>({1}, {v}); };
  return Call1("Slice", {t, one(lo), one(hi), one(axis)});
}

TensorList Backward(const GradCtx& g, const AttentionAttrs& a) {
  using grad::Add, grad::Mul, grad::Sub, grad::Scalar;
  const int n_in = g.num_inputs();
  TensorList grads(n_in);
  const Tensor &q = g.input(kQ), &k = g.input(kK), &v = g.input(kV);
  const bool three_d = q.ndim() == 3;
  const int64_t batch = q.shape()[0];
  const int64_t hq = three_d ? *a.q_num_heads : q.shape()[1];
  const int64_t hkv = three_d ? *a.kv_num_heads : k.shape()[1];
  const int64_t sq = three_d ? q.shape()[1] : q.shape()[2];
  const int64_t dk = three_d ? q.shape()[2] / hq : q.shape()[3];
  const int64_t dv = three_d ? v.shape()[2] / hkv : v.shape()[3];
  const int64_t skv = three_d ? k.shape()[1] : k.shape()[2];
  const int64_t past = g.has_input(kPastKey) ? g.input(kPastKey).shape()[2] : 0;
  const int64_t total = past + skv, group = hq / hkv;
  if (batch * hq * sq * total == 0) return grads;

  // P, present K and V, and the softcapped logits from the op itself.
  TensorList in;
  for (int i = 0; i < n_in; ++i) in.push_back(g.input(i));
  const int opset = g.op().since_version;
  AttrMap attrs = g.op().dump(&a);
  attrs["qk_matmul_output_mode"] = int64_t{3};
  const TensorList fw = CallOp("Attention", in, attrs, opset, 4);
  const Tensor &kall = fw[1], &vall = fw[2];
  const Tensor p = Reshape(fw[3], {batch, hkv, group * sq, total});

  auto to4 = [&](const Tensor& t, int64_t heads, int64_t size) {
    return three_d ? Transpose(Reshape(t, {batch, sq, heads, size}), {0, 2, 1, 3}) : t;
  };
  Tensor dy = g.grad_output(0);
  if (!dy.defined()) dy = Tensor::Zeros(g.output(0).shape(), q.dtype(), q.device());
  const Tensor dy4 = Reshape(to4(dy, hq, dv), {batch, hkv, group * sq, dv});
  Tensor dvall = MatMul(Transpose(p, {0, 1, 3, 2}), dy4);
  const Tensor dp = MatMul(dy4, Transpose(vall, {0, 1, 3, 2}));
  const Tensor ax = Tensor::FromVector<int64_t>({1}, {-1});
  const Tensor ds =
      Mul(p, Sub(dp, Call1("ReduceSum", {Mul(dp, p), ax}, {{"keepdims", int64_t{1}}})));
  Tensor dr = ds;
  if (a.softcap > 0) {
    attrs["qk_matmul_output_mode"] = int64_t{1};
    const Tensor c =
        Reshape(CallOp("Attention", in, attrs, opset, 4)[3], {batch, hkv, group * sq, total});
    const Tensor t = Mul(c, Scalar(1.0 / a.softcap, c));
    dr = Mul(ds, Sub(Scalar(1, t), Mul(t, t)));
  }
  const double scale = a.scale ? *a.scale : 1.0 / std::sqrt(static_cast<double>(dk));
  const Tensor q4 = Reshape(to4(q, hq, dk), {batch, hkv, group * sq, dk});
  Tensor dkall = Mul(MatMul(Transpose(dr, {0, 1, 3, 2}), q4), Scalar(scale, q));
  if (g.num_outputs() > 1 && g.grad_output(1).defined()) dkall = Add(dkall, g.grad_output(1));
  if (g.num_outputs() > 2 && g.grad_output(2).defined()) dvall = Add(dvall, g.grad_output(2));

  auto from4 = [&](const Tensor& t, int64_t heads, int64_t size) {
    return three_d ? Reshape(Transpose(t, {0, 2, 1, 3}), {batch, -1, heads * size}) : t;
  };
  if (g.needs_grad(kQ)) {
    const Tensor dq4 = Mul(MatMul(dr, Reshape(kall, {batch, hkv, total, dk})), Scalar(scale, q));
    grads[kQ] = from4(Reshape(dq4, {batch, hq, sq, dk}), hq, dk);
  }
  auto split = [&](const Tensor& t, int cur, int pst, int64_t size) {
    if (past == 0) {
      grads[cur] = from4(t, hkv, size);
      return;
    }
    grads[cur] = from4(SliceAxis(t, 2, past, total), hkv, size);
    grads[pst] = SliceAxis(t, 2, 0, past);
  };
  split(dkall, kK, kPastKey, dk);
  split(dvall, kV, kPastValue, dv);
  if (g.needs_grad(kMask) && IsFloat(g.input(kMask).dtype())) {
    const Tensor& m = g.input(kMask);
    const Tensor ds4 = SliceAxis(Reshape(ds, {batch, hq, sq, total}), 3, 0, m.shape().back());
    grads[kMask] = ops::SumToShape(ds4, m.shape());
  }
  return grads;
}

}  // namespace

// 24 added nonpad_kv_seqlen, 25 the sliding window.
[[maybe_unused]] static const bool kAttention = RegisterVersions<AttentionAttrs>(
    "Attention", {23, 24, 25}, [](OpBuilder<AttentionAttrs>& b, int v) {
      b.outputs({"Y", "present_key?", "present_value?", "qk_matmul_output?"})
          .attr("is_causal", &AttentionAttrs::is_causal)
          .attr("kv_num_heads", &AttentionAttrs::kv_num_heads)
          .attr("q_num_heads", &AttentionAttrs::q_num_heads)
          .attr("qk_matmul_output_mode", &AttentionAttrs::qk_matmul_output_mode)
          .attr("scale", &AttentionAttrs::scale)
          .attr("softcap", &AttentionAttrs::softcap)
          .attr("softmax_precision", &AttentionAttrs::softmax_precision)
          .dtypes(dtypes::kFloats, {kQ, kK, kV, kPastKey, kPastValue})
          .dtypes(dtypes::kAllButString, {kMask})
          .infer(v >= 25   ? Infer<25>
                 : v >= 24 ? Infer<24>
                           : Infer<23>)
          .kernel(Forward<true>)
          .reference(Forward<false>)
          .backward(Backward);
      if (v >= 24)
        b.inputs({"Q", "K", "V", "attn_mask?", "past_key?", "past_value?", "nonpad_kv_seqlen?"})
            .dtypes({DType::kInt64}, {kNonpad});
      else
        b.inputs({"Q", "K", "V", "attn_mask?", "past_key?", "past_value?"});
      if (v >= 25)
        b.attr("left_window_size", &AttentionAttrs::left_window_size)
            .attr("right_window_size", &AttentionAttrs::right_window_size);
    });

}  // namespace singa
