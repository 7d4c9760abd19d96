// LinearAttention (opset 27): the recurrent form of linear attention, for
// decoding (T = 1) and prefill (T > 1). Per batch and KV head, a state S
// (d_k x d_v) runs over the tokens t:
//   linear:       S = S + k_t v_t^T
//   gated:        S = exp(g_t) S + k_t v_t^T
//   delta:        S = S + beta_t k_t (v_t - S^T k_t)^T
//   gated_delta:  S' = exp(g_t) S;  S = S' + beta_t k_t (v_t - S'^T k_t)^T
//   o_t = scale * q_t^T S        (each of the q_num_heads / kv_num_heads
//                                 query heads of a group reads its KV head's S)
// query/key/value/decay/beta are packed (B, T, heads * size); decay is per
// key dimension (B, T, H_kv * d_k) or per head (B, T, H_kv); beta is
// (B, T, H_kv) or (B, T, 1). past_state and present_state are (B, H_kv, d_k,
// d_v), in past_state's dtype (query's when absent). chunk_size is a tuning
// hint for chunked algorithms: the sequential recurrence ignores it.
// Backward: the internal op LinearAttentionGrad (a loop running the
// recurrence backwards; see below).
// NOTE: the state and the arithmetic are float (the types are float and
// 16-bit floats); outputs are rounded once.
// https://onnx.ai/onnx/operators/onnx__LinearAttention.html
#include <cmath>
#include <string>

#include "ops/common.h"

namespace singa {
namespace {

struct LinearAttentionAttrs {
  int64_t chunk_size = 64;
  int64_t kv_num_heads = 0;
  int64_t q_num_heads = 0;
  float scale = 0.0f;
  std::string update_rule = "gated_delta";
};

enum { kQuery, kKey, kValue, kPast, kDecay, kBeta };

struct Rule {
  bool gating = false, delta = false;
};

Rule GetRule(const InferCtx& c, const LinearAttentionAttrs& a) {
  const std::string& r = a.update_rule;
  SINGA_CHECK(
      r == "linear" || r == "gated" || r == "delta" || r == "gated_delta", ShapeError,
      c.where() << ": update_rule must be linear, gated, delta or gated_delta, got '" << r << "'");
  return {r == "gated" || r == "gated_delta", r == "delta" || r == "gated_delta"};
}

struct Dims {
  int64_t b, t, hq, hkv, dk, dv;
  bool decay_per_key = false;
  bool beta_per_head = false;
};

Dims GetDims(const InferCtx& c, const LinearAttentionAttrs& a) {
  const Rule rule = GetRule(c, a);
  SINGA_CHECK(
      a.q_num_heads > 0 && a.kv_num_heads > 0 && a.q_num_heads % a.kv_num_heads == 0, ShapeError,
      c.where() << ": q_num_heads (" << a.q_num_heads
                << ") must be a positive multiple of kv_num_heads (" << a.kv_num_heads << ")");
  for (int i : {kQuery, kKey, kValue})
    SINGA_CHECK(c.rank(i) == 3, ShapeError,
                c.where() << ": query, key and value must be 3-D (B, T, heads * size) ("
                          << c.inputs_string() << ")");
  const Shape &q = c.shape(kQuery), &k = c.shape(kKey), &v = c.shape(kValue);
  Dims d{q[0], q[1], a.q_num_heads, a.kv_num_heads, 0, 0};
  SINGA_CHECK(q[2] % d.hq == 0 && k[2] % d.hkv == 0 && v[2] % d.hkv == 0, ShapeError,
              c.where() << ": the last dimensions must divide by the head counts ("
                        << c.inputs_string() << ")");
  d.dk = q[2] / d.hq;
  d.dv = v[2] / d.hkv;
  SINGA_CHECK(k[0] == d.b && v[0] == d.b && k[1] == d.t && v[1] == d.t && k[2] / d.hkv == d.dk,
              ShapeError,
              c.where() << ": key must be (B, T, kv_num_heads * d_k) and value (B, T, "
                           "kv_num_heads * d_v) for query (B, T, q_num_heads * d_k) ("
                        << c.inputs_string() << ")");
  SINGA_CHECK(rule.gating == c.has_input(kDecay), ShapeError,
              c.where() << ": update_rule '" << a.update_rule
                        << (rule.gating ? "' requires" : "' forbids") << " the decay input");
  SINGA_CHECK(rule.delta == c.has_input(kBeta), ShapeError,
              c.where() << ": update_rule '" << a.update_rule
                        << (rule.delta ? "' requires" : "' forbids") << " the beta input");
  if (rule.gating) {
    const Shape& g = c.shape(kDecay);
    SINGA_CHECK(
        g.size() == 3 && g[0] == d.b && g[1] == d.t && (g[2] == d.hkv || g[2] == d.hkv * d.dk),
        ShapeError,
        c.where() << ": decay must be (B, T, kv_num_heads) or (B, T, kv_num_heads * d_k) ("
                  << c.inputs_string() << ")");
    d.decay_per_key = g[2] == d.hkv * d.dk && d.dk != 1;
  }
  if (rule.delta) {
    const Shape& be = c.shape(kBeta);
    SINGA_CHECK(be.size() == 3 && be[0] == d.b && be[1] == d.t && (be[2] == d.hkv || be[2] == 1),
                ShapeError,
                c.where() << ": beta must be (B, T, kv_num_heads) or (B, T, 1) ("
                          << c.inputs_string() << ")");
    d.beta_per_head = be[2] == d.hkv && d.hkv != 1;
  }
  if (c.has_input(kPast))
    SINGA_CHECK(c.shape(kPast) == (Shape{d.b, d.hkv, d.dk, d.dv}), ShapeError,
                c.where() << ": past_state must be (B, kv_num_heads, d_k, d_v) = (" << d.b << ", "
                          << d.hkv << ", " << d.dk << ", " << d.dv << ") (" << c.inputs_string()
                          << ")");
  return d;
}

SpecList Infer(const InferCtx& c, const LinearAttentionAttrs& a) {
  const Dims d = GetDims(c, a);
  const DType state = c.has_input(kPast) ? c.dtype(kPast) : c.dtype(kQuery);
  return {{c.dtype(kQuery), {d.b, d.t, d.hq * d.dv}}, {state, {d.b, d.hkv, d.dk, d.dv}}};
}

// Input i as contiguous float values (none when absent).
std::vector<float> Floats(const KernelCtx& k, int i) {
  return k.has_input(i) ? k.input(i).ToVector<float>() : std::vector<float>();
}

void Forward(KernelCtx& k, const LinearAttentionAttrs& a) {
  const Shape &qs = k.input(kQuery).shape(), &vs = k.input(kValue).shape();
  Dims d{
      qs[0], qs[1], a.q_num_heads, a.kv_num_heads, qs[2] / a.q_num_heads, vs[2] / a.kv_num_heads};
  const bool gating = k.has_input(kDecay), delta = k.has_input(kBeta);
  const int64_t decay_last = gating ? k.input(kDecay).shape()[2] : 0;
  const int64_t beta_last = delta ? k.input(kBeta).shape()[2] : 0;
  const std::vector<float> q = Floats(k, kQuery), key = Floats(k, kKey), v = Floats(k, kValue),
                           g = Floats(k, kDecay), beta = Floats(k, kBeta);
  std::vector<float> state =
      k.has_input(kPast) ? Floats(k, kPast) : std::vector<float>(d.b * d.hkv * d.dk * d.dv, 0.0f);
  std::vector<float> out(d.b * d.t * d.hq * d.dv, 0.0f);
  const float scale = a.scale != 0.0f ? a.scale : 1.0f / std::sqrt(static_cast<float>(d.dk));
  const int64_t group = d.hq / d.hkv;
  ParallelFor(0, d.b * d.hkv, 1, [&](int64_t lo, int64_t hi) {
    std::vector<float> retrieved(d.dv), vt(d.dv);
    for (int64_t bh = lo; bh < hi; ++bh) {
      const int64_t b = bh / d.hkv, h = bh % d.hkv;
      float* s = state.data() + bh * d.dk * d.dv;
      for (int64_t t = 0; t < d.t; ++t) {
        const int64_t row = b * d.t + t;
        const float* kt = key.data() + (row * d.hkv + h) * d.dk;
        const float* vrow = v.data() + (row * d.hkv + h) * d.dv;
        if (gating) {
          const float* gt = g.data() + row * decay_last;
          for (int64_t i = 0; i < d.dk; ++i) {
            const float e = std::exp(decay_last == d.hkv ? gt[h] : gt[h * d.dk + i]);
            for (int64_t j = 0; j < d.dv; ++j) s[i * d.dv + j] *= e;
          }
        }
        for (int64_t j = 0; j < d.dv; ++j) vt[j] = vrow[j];
        if (delta) {
          std::fill(retrieved.begin(), retrieved.end(), 0.0f);
          for (int64_t i = 0; i < d.dk; ++i)
            for (int64_t j = 0; j < d.dv; ++j) retrieved[j] += s[i * d.dv + j] * kt[i];
          const float bt = beta[row * beta_last + (beta_last == 1 ? 0 : h)];
          for (int64_t j = 0; j < d.dv; ++j) vt[j] = bt * (vt[j] - retrieved[j]);
        }
        for (int64_t i = 0; i < d.dk; ++i)
          for (int64_t j = 0; j < d.dv; ++j) s[i * d.dv + j] += kt[i] * vt[j];
        for (int64_t qh = h * group; qh < (h + 1) * group; ++qh) {
          const float* qt = q.data() + (row * d.hq + qh) * d.dk;
          float* o = out.data() + (row * d.hq + qh) * d.dv;
          for (int64_t i = 0; i < d.dk; ++i)
            for (int64_t j = 0; j < d.dv; ++j) o[j] += qt[i] * s[i * d.dv + j];
          for (int64_t j = 0; j < d.dv; ++j) o[j] *= scale;
        }
      }
    }
  });
  auto store = [](const std::vector<float>& src, Tensor dst) {
    if (dst.numel() == 0) return;
    dst.CopyFrom(Tensor::FromVector<float>(dst.shape(), src).AsType(dst.dtype()));
  };
  store(out, k.output(0));
  if (k.num_outputs() > 1) store(state, k.output(1));
}

// ---- backward ----------------------------------------------------------------
// LinearAttentionGrad (domain ai.singa): (d output, d present_state?, query,
// key, value, past_state?, decay?, beta?) -> (d query, d key, d value,
// d past_state, d decay, d beta); the last three are empty when the input is
// absent. The recurrence runs backwards from the last token with dS, the
// gradient of the state; the states before each token are kept from a
// forward pass. With S' = exp(g) S_prev, u = beta (v - S'^T k) (delta) or v,
// S = S' + k u^T and o = scale S^T q:
//   dq = scale S do;  dS += scale q do^T;  dk = dS u;  du = dS^T k
//   delta: dbeta = du . (v - S'^T k); dv = beta du; dS' = dS - beta k du^T;
//          dk -= beta S' du
//   gated: dg = sum over the state of dS' * S' (per key row, or all of it);
//          dS_prev = exp(g) dS'
enum { kGradOut, kGradState, kGQuery, kGKey, kGValue, kGPast, kGDecay, kGBeta };

SpecList GradInfer(const InferCtx& c, const LinearAttentionAttrs& a) {
  auto spec = [&](int i) {
    return c.has_input(i) ? TensorSpec{c.dtype(i), c.shape(i)}
                          : TensorSpec{c.dtype(kGQuery), Shape{0}};
  };
  return {spec(kGQuery), spec(kGKey), spec(kGValue), spec(kGPast), spec(kGDecay), spec(kGBeta)};
}

void GradLoop(KernelCtx& k, const LinearAttentionAttrs& a) {
  const Shape &qs = k.input(kGQuery).shape(), &vs = k.input(kGValue).shape();
  const int64_t nb = qs[0], nt = qs[1], hq = a.q_num_heads, hkv = a.kv_num_heads;
  const int64_t dk = qs[2] / hq, dv = vs[2] / hkv, group = hq / hkv;
  const bool gating = k.has_input(kGDecay), delta = k.has_input(kGBeta);
  const int64_t decay_last = gating ? k.input(kGDecay).shape()[2] : 0;
  const int64_t beta_last = delta ? k.input(kGBeta).shape()[2] : 0;
  const std::vector<float> dout = Floats(k, kGradOut), dstate = Floats(k, kGradState),
                           q = Floats(k, kGQuery), key = Floats(k, kGKey), v = Floats(k, kGValue),
                           past = Floats(k, kGPast), g = Floats(k, kGDecay),
                           beta = Floats(k, kGBeta);
  const float scale = a.scale != 0.0f ? a.scale : 1.0f / std::sqrt(static_cast<float>(dk));
  std::vector<float> dq(q.size(), 0.0f), dkey(key.size(), 0.0f), dvv(v.size(), 0.0f),
      dpast(nb * hkv * dk * dv, 0.0f), dg(g.size(), 0.0f), dbeta(beta.size(), 0.0f);
  const int64_t ss = dk * dv;
  // Batches in parallel: a (B, T, 1) beta is shared by the heads of one batch.
  ParallelFor(0, nb, 1, [&](int64_t lo, int64_t hi) {
    std::vector<float> states((nt + 1) * ss), sp(ss), ds(ss), u(dv), r(dv), du(dv), decay(dk);
    for (int64_t b = lo; b < hi; ++b) {
      for (int64_t h = 0; h < hkv; ++h) {
        const int64_t bh = b * hkv + h;
        auto decay_at = [&](int64_t t) {
          const float* gt = g.data() + (b * nt + t) * decay_last;
          for (int64_t i = 0; i < dk; ++i)
            decay[i] = std::exp(decay_last == hkv ? gt[h] : gt[h * dk + i]);
        };
        auto beta_at = [&](int64_t t) {
          return beta[(b * nt + t) * beta_last + (beta_last == 1 ? 0 : h)];
        };
        // S' and u of token t from the state before it (states[t]).
        auto step = [&](int64_t t) {
          const float* prev = states.data() + t * ss;
          const float* kt = key.data() + ((b * nt + t) * hkv + h) * dk;
          const float* vt = v.data() + ((b * nt + t) * hkv + h) * dv;
          if (gating) decay_at(t);
          for (int64_t i = 0; i < dk; ++i)
            for (int64_t j = 0; j < dv; ++j)
              sp[i * dv + j] = gating ? decay[i] * prev[i * dv + j] : prev[i * dv + j];
          for (int64_t j = 0; j < dv; ++j) {
            r[j] = 0.0f;
            for (int64_t i = 0; i < dk; ++i) r[j] += sp[i * dv + j] * kt[i];
            u[j] = delta ? beta_at(t) * (vt[j] - r[j]) : vt[j];
          }
        };
        if (!past.empty())
          std::copy(past.begin() + bh * ss, past.begin() + (bh + 1) * ss, states.begin());
        else
          std::fill(states.begin(), states.begin() + ss, 0.0f);
        for (int64_t t = 0; t < nt; ++t) {
          step(t);
          const float* kt = key.data() + ((b * nt + t) * hkv + h) * dk;
          float* next = states.data() + (t + 1) * ss;
          for (int64_t i = 0; i < dk; ++i)
            for (int64_t j = 0; j < dv; ++j) next[i * dv + j] = sp[i * dv + j] + kt[i] * u[j];
        }
        if (!dstate.empty())
          std::copy(dstate.begin() + bh * ss, dstate.begin() + (bh + 1) * ss, ds.begin());
        else
          std::fill(ds.begin(), ds.end(), 0.0f);
        for (int64_t t = nt - 1; t >= 0; --t) {
          step(t);
          const int64_t row = b * nt + t;
          const float* st = states.data() + (t + 1) * ss;
          const float* kt = key.data() + (row * hkv + h) * dk;
          const float* vt = v.data() + (row * hkv + h) * dv;
          for (int64_t qh = h * group; qh < (h + 1) * group; ++qh) {
            const float* qt = q.data() + (row * hq + qh) * dk;
            const float* dot = dout.data() + (row * hq + qh) * dv;
            float* dqt = dq.data() + (row * hq + qh) * dk;
            for (int64_t i = 0; i < dk; ++i)
              for (int64_t j = 0; j < dv; ++j) {
                dqt[i] += scale * st[i * dv + j] * dot[j];
                ds[i * dv + j] += scale * qt[i] * dot[j];
              }
          }
          float* dkt = dkey.data() + (row * hkv + h) * dk;
          float* dvt = dvv.data() + (row * hkv + h) * dv;
          for (int64_t j = 0; j < dv; ++j) {
            du[j] = 0.0f;
            for (int64_t i = 0; i < dk; ++i) du[j] += ds[i * dv + j] * kt[i];
          }
          for (int64_t i = 0; i < dk; ++i)
            for (int64_t j = 0; j < dv; ++j) dkt[i] += ds[i * dv + j] * u[j];
          if (delta) {
            const float bt = beta_at(t);
            float db = 0.0f;
            for (int64_t j = 0; j < dv; ++j) {
              db += du[j] * (vt[j] - r[j]);
              dvt[j] += bt * du[j];
            }
            dbeta[row * beta_last + (beta_last == 1 ? 0 : h)] += db;
            for (int64_t i = 0; i < dk; ++i)
              for (int64_t j = 0; j < dv; ++j) {
                dkt[i] -= bt * sp[i * dv + j] * du[j];
                ds[i * dv + j] -= bt * kt[i] * du[j];
              }
          } else {
            for (int64_t j = 0; j < dv; ++j) dvt[j] += du[j];
          }
          if (gating) {
            float* dgt = dg.data() + row * decay_last;
            for (int64_t i = 0; i < dk; ++i) {
              float sum = 0.0f;
              for (int64_t j = 0; j < dv; ++j) {
                sum += ds[i * dv + j] * sp[i * dv + j];
                ds[i * dv + j] *= decay[i];
              }
              (decay_last == hkv ? dgt[h] : dgt[h * dk + i]) += sum;
            }
          }
        }
        std::copy(ds.begin(), ds.end(), dpast.begin() + bh * ss);
      }
    }
  });
  auto store = [](const std::vector<float>& src, Tensor dst) {
    if (dst.numel() == 0) return;
    dst.CopyFrom(Tensor::FromVector<float>(dst.shape(), src).AsType(dst.dtype()));
  };
  store(dq, k.outputs[0]);
  store(dkey, k.outputs[1]);
  store(dvv, k.outputs[2]);
  store(dpast, k.outputs[3]);
  store(dg, k.outputs[4]);
  store(dbeta, k.outputs[5]);
}

TensorList Backward(const GradCtx& g, const LinearAttentionAttrs& a) {
  static const OpSchema& op = OpRegistry::Get("LinearAttentionGrad", kLatestOpset, "ai.singa");
  Tensor dout = g.grad_output(0);
  if (!dout.defined())
    dout = Tensor::Zeros(g.output(0).shape(), g.output(0).dtype(), g.output(0).device());
  const Tensor dstate =
      g.num_outputs() > 1 && g.grad_output(1).defined() ? g.grad_output(1) : Tensor();
  TensorList in = {dout, dstate};
  for (int i = 0; i < g.num_inputs(); ++i) in.push_back(g.input(i));
  const TensorList r = RunOp(op, in, a, 6);
  TensorList grads(g.num_inputs());
  for (int i = 0; i < g.num_inputs(); ++i)
    if (g.has_input(i)) grads[i] = r[i];
  return grads;
}

}  // namespace

SINGA_REGISTER_OP(LinearAttention, LinearAttentionAttrs)
    .since_opset(27)
    .inputs({"query", "key", "value", "past_state?", "decay?", "beta?"})
    .outputs({"output", "present_state?"})
    .attr("chunk_size", &LinearAttentionAttrs::chunk_size)
    .attr("kv_num_heads", &LinearAttentionAttrs::kv_num_heads, true)
    .attr("q_num_heads", &LinearAttentionAttrs::q_num_heads, true)
    .attr("scale", &LinearAttentionAttrs::scale)
    .attr("update_rule", &LinearAttentionAttrs::update_rule)
    .dtypes({DType::kFloat16, DType::kBFloat16, DType::kFloat32},
            {kQuery, kKey, kValue, kDecay, kBeta})
    .dtypes({DType::kFloat16, DType::kBFloat16, DType::kFloat32}, {kPast})
    .infer(Infer)
    .kernel(Forward)
    .backward(Backward);

// The internal op of LinearAttention's backward.
SINGA_REGISTER_OP(LinearAttentionGrad, LinearAttentionAttrs)
    .domain("ai.singa")
    .inputs({"d_output", "d_present_state?", "query", "key", "value", "past_state?", "decay?",
             "beta?"})
    .outputs({"d_query", "d_key", "d_value", "d_past_state", "d_decay", "d_beta"})
    .attr("chunk_size", &LinearAttentionAttrs::chunk_size)
    .attr("kv_num_heads", &LinearAttentionAttrs::kv_num_heads, true)
    .attr("q_num_heads", &LinearAttentionAttrs::q_num_heads, true)
    .attr("scale", &LinearAttentionAttrs::scale)
    .attr("update_rule", &LinearAttentionAttrs::update_rule)
    .infer(GradInfer)
    .kernel(GradLoop);

}  // namespace singa
